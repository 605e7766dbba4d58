#!/usr/bin/env python3
"""The slides' latency and bandwidth charts (Liu et al.): left, one-way
latency against message size for the four designs, raw RDMA writes and the
host MPI (ping-pong, RTT/2, median); right, bandwidth (MB/s = bytes / time
per message) of the -bw variants, and the bi-directional ones dashed.

usage: channel_latency.py DIR  ->  DIR/channel_latency.png, .pdf, .data.csv
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

DESIGNS = ["basic", "piggyback", "pipeline", "zcopy", "rdma-write", "mpi"]


def panel(ax, rows, suffix, ylabel, bw):
    xs_all, ys_all = [], []
    for i, d in enumerate(DESIGNS):
        for k, suf in enumerate(suffix):
            name = d + suf
            sel = sorted((r for r in rows if r["variant"] == name and r["p50_us"]),
                         key=lambda r: r["bytes"])
            if not sel:
                continue
            color, marker = ibcplot.style(i, d)
            xs = [r["bytes"] for r in sel]
            ys = [r["bytes"] / r["p50_us"] if bw else r["p50_us"] for r in sel]
            label = name + ("" if sel[0]["impl"] in ("ibchar", None) else " (%s)" % sel[0]["impl"])
            ibcplot.draw_series(ax, label, xs, ys, [r["oversub"] == 1 for r in sel], color,
                                marker, linestyle="--" if k else "-")
            xs_all += xs
            ys_all += ys
    if not xs_all:
        ibcplot.message(ax, "no rows")
        ax.set_axis_off()
        return
    ibcplot.int_axis(ax, xs_all, log2=True, labels=ibcplot.size_label)
    ibcplot.auto_log_y(ax, ys_all)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def main(argv):
    d, rows, meta = ibcplot.usage_dir("channel_latency.py", argv, "channel")
    fig, axes = ibcplot.plt.subplots(1, 2, figsize=(14, 5.4))
    panel(axes[0], rows, [""], "one-way latency, median (µs)", False)
    axes[0].set_title("latency (cf. the slides: basic 18.6 µs, optimized 7.4 µs)", fontsize=10)
    panel(axes[1], rows, ["-bw", "-bibw"], "bandwidth (MB/s); bi-directional dashed", True)
    axes[1].set_title("bandwidth (cf. basic 230, optimized 520, zero copy 857 MB/s)",
                      fontsize=10)
    fig.suptitle("The MPICH2 RDMA channel\n%s" % ibcplot.title_suffix(meta, rows), fontsize=10)
    ibcplot.save(fig, d, "channel_latency",
                 paper=("liu", "the latency and bandwidth charts of the four channel designs"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
