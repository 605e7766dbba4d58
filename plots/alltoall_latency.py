#!/usr/bin/env python3
"""Figures 14-19 of Sur et al.: all-to-all latency against the block size
per pair at the largest N of the run (left), and against N at the sizes of
the paper's scalability figures (32 B, 4 KiB, 128 KiB; the nearest measured
sizes), one line per variant, the host MPI's dashed.

usage: alltoall_latency.py DIR  ->  DIR/alltoall_latency.png, .pdf, .data.csv
y: median over iterations of the slowest rank's time (p50_us), error bars the
95% confidence interval of the median; hollow markers: oversubscribed.
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

ORDER = ["hrwg", "hrwg-multi", "de", "hypercube", "bruck", "pairwise", "direct",
         "mpi", "mpi-pairwise"]
PAPER_SIZES = (32, 4096, 131072)


def sort_key(item):
    v = item[1][0]["variant"]
    return (ORDER.index(v) if v in ORDER else len(ORDER), item[0])


def draw(ax, rows, xkey):
    series = sorted(ibcplot.group_series(rows, xkey=xkey).items(), key=sort_key)
    xs_all, ys_all = [], []
    any_over = False
    for i, (label, srows) in enumerate(series):
        color, marker = ibcplot.style(i, srows[0]["variant"])
        xs = [r[xkey] for r in srows]
        ys = [r["p50_us"] for r in srows]
        over = [r["oversub"] == 1 for r in srows]
        dashed = srows[0]["impl"] not in ("ibchar", "", None)
        ibcplot.draw_series(ax, label, xs, ys, over, color, marker,
                            yerr=ibcplot.yerr_ci(srows), linestyle="--" if dashed else "-")
        xs_all += xs
        ys_all += ys
        any_over |= any(over)
    return xs_all, ys_all, any_over


def main(argv):
    d, rows, meta = ibcplot.usage_dir("alltoall_latency.py", argv, "alltoall")
    # measured rows only: the model's are alltoall_model.py's
    rows = [r for r in rows if r["bytes"] is not None and r["ranks"] is not None
            and r["impl"] != "model"]
    ranks = sorted({r["ranks"] for r in rows})
    sizes = sorted({r["bytes"] for r in rows})
    pick = []
    for s in PAPER_SIZES:
        near = min(sizes, key=lambda b: abs(b - s))
        if near not in pick:
            pick.append(near)
    fig, axes = ibcplot.plt.subplots(1, 1 + len(pick), figsize=(6 + 4.2 * len(pick), 5.2),
                                     squeeze=False)
    axes = axes[0]
    n = ranks[-1]
    xs, ys, over = draw(axes[0], [r for r in rows if r["ranks"] == n], "bytes")
    ibcplot.int_axis(axes[0], xs, log2=True, labels=ibcplot.size_label)
    ibcplot.auto_log_y(axes[0], ys)
    axes[0].set_xlabel("bytes per pair")
    axes[0].set_ylabel("all-to-all latency, median of slowest rank (µs)")
    axes[0].set_title("latency vs size at N = %d" % n, fontsize=10)
    axes[0].grid(True, which="both", alpha=0.3)
    for ax, s in zip(axes[1:], pick):
        xs, ys, o = draw(ax, [r for r in rows if r["bytes"] == s], "ranks")
        over |= o
        ibcplot.int_axis(ax, xs)
        ibcplot.auto_log_y(ax, ys)
        ibcplot.pus_line(ax, meta)
        ax.set_xlabel("number of ranks N")
        ax.set_title("scalability at %s per pair" % ibcplot.size_label(s), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    ibcplot.legend_with_oversub(axes[-1], over)
    fig.suptitle("All-to-all (cf. Sur et al. Figs. 14-19)\n%s" % ibcplot.title_suffix(meta, rows),
                 fontsize=10)
    ibcplot.save(fig, d, "alltoall_latency",
                 paper=("sur", "Figs. 14-19: all-to-all latency against the block size, and scalability"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
