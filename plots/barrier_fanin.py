#!/usr/bin/env python3
"""RGM barrier latency vs maximum fan-in l of the gather tree, one line per
number of ranks N (Kini et al. §5 chose l = 7).

usage: barrier_fanin.py DIR  ->  DIR/barrier_fanin.png and .pdf
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402


def main(argv):
    d, rows, meta = ibcplot.usage_dir("barrier_fanin.py", argv, "barrier")
    rgm = [r for r in rows if r["variant"] == "rgm" and r["fanin"] is not None]
    fig, ax = ibcplot.plt.subplots(figsize=(9, 5.2))
    ax.set_title("RGM barrier latency vs gather fan-in\n%s"
                 % ibcplot.title_suffix(meta, rows), fontsize=10)
    if not rgm:
        ibcplot.message(ax, "no RGM rows with a fan-in in this run")
        ax.set_axis_off()
        ibcplot.save(fig, d, "barrier_fanin",
                     paper=("kini", "section 5: RGM latency against the gather tree's fan-in (the paper picks l = 7)"))
        return 0
    multi = len({(r["run_id"], r["xport"]) for r in rgm}) > 1
    series = ibcplot.group_series(
        rgm, xkey="fanin",
        keyfn=lambda r: "N=%d" % r["ranks"] + (" /%s [%s]" % (r["xport"], r["run_id"]) if multi else ""))
    any_over, xs_all, ys_all = False, [], []
    for i, (label, srows) in enumerate(sorted(series.items(), key=lambda kv: kv[1][0]["ranks"])):
        color, marker = ibcplot.style(i)
        xs = [r["fanin"] for r in srows]
        ys = [r["p50_us"] for r in srows]
        over = [r["oversub"] == 1 for r in srows]
        ibcplot.draw_series(ax, label, xs, ys, over, color, marker, yerr=ibcplot.yerr_ci(srows))
        any_over |= any(over)
        xs_all += xs
        ys_all += ys
    ibcplot.int_axis(ax, xs_all)
    ibcplot.auto_log_y(ax, ys_all)
    ax.set_xlabel("maximum fan-in l of the gather tree (l = 2^k - 1)")
    ax.set_ylabel("RGM latency, median of slowest rank (µs)")
    ax.grid(True, which="both", alpha=0.3)
    ibcplot.legend_with_oversub(ax, any_over)
    ibcplot.save(fig, d, "barrier_fanin",
                 paper=("kini", "section 5: RGM latency against the gather tree's fan-in (the paper picks l = 7)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
