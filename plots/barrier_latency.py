#!/usr/bin/env python3
"""Figure 3 of Kini et al.: barrier latency vs number of ranks, one line per
variant (RGM once per fan-in, the host-MPI variants when present).

usage: barrier_latency.py DIR  ->  DIR/barrier_latency.png and .pdf
y: median over iterations of the slowest rank's time (p50_us), error bars
the 95% confidence interval of the median (ci_lo_us..ci_hi_us).
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

# paper's order first, then baselines, then host MPI
ORDER = ["rpe", "rds", "rgm", "pe", "ds", "mpi", "mpi-pe", "mpi-ds"]


def sort_key(item):
    label, rows = item
    v = rows[0]["variant"]
    return (ORDER.index(v) if v in ORDER else len(ORDER), rows[0]["fanin"] or 0, label)


def main(argv):
    prog = "barrier_latency.py"
    d, rows, meta = ibcplot.usage_dir(prog, argv, "barrier")
    series = sorted(ibcplot.group_series(rows).items(), key=sort_key)
    fig, ax = ibcplot.plt.subplots(figsize=(9.5, 5.2))
    any_over, ys_all, xs_all = False, [], []
    for i, (label, srows) in enumerate(series):
        color, marker = ibcplot.style(i, srows[0]["variant"], srows[0]["fanin"])
        xs = [r["ranks"] for r in srows]
        ys = [r["p50_us"] for r in srows]
        over = [r["oversub"] == 1 for r in srows]
        dashed = srows[0]["impl"] not in ("ibchar", "", None)
        ibcplot.draw_series(ax, label, xs, ys, over, color, marker,
                            yerr=ibcplot.yerr_ci(srows), linestyle="--" if dashed else "-")
        any_over |= any(over)
        ys_all += ys
        xs_all += xs
    ibcplot.int_axis(ax, xs_all)
    ibcplot.auto_log_y(ax, ys_all)
    ibcplot.pus_line(ax, meta)
    ax.set_xlabel("number of ranks (group size N)")
    ax.set_ylabel("barrier latency, median of slowest rank (µs)")
    ax.set_title("Barrier latency vs group size (cf. Kini et al. Fig. 3)\n%s"
                 % ibcplot.title_suffix(meta, rows), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ibcplot.legend_with_oversub(ax, any_over)
    ibcplot.save(fig, d, "barrier_latency",
                 paper=("kini", "Fig. 3: barrier latency against the number of ranks"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
