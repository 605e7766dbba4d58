#!/usr/bin/env python3
"""Connection scaling (the thesis, ch. 4, Table 4.1): QPs (left) and the
memory of their queues (right) per process against the job size, RC to
every peer, RC connected on demand (a ring; a dissemination barrier) and
XRC (one connection per node), at 8 and 64 cores per node; the row measured
by the run is marked.

usage: channel_conn.py DIR  ->  DIR/channel_conn.png, .pdf, .data.csv
Reads DIR/channel-conn.csv (written by the channel bench).
"""
import csv
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

SCHEMES = ["rc-all", "rc-ondemand-diss", "rc-ondemand-ring", "xrc"]


def main(argv):
    d, rows, meta = ibcplot.usage_dir("channel_conn.py", argv, "channel")
    path = os.path.join(d, "channel-conn.csv")
    try:
        conn = list(csv.DictReader(open(path)))
    except OSError:
        conn = []
    fig, axes = ibcplot.plt.subplots(1, 2, figsize=(14, 5.4))
    if not conn:
        for ax in axes:
            ibcplot.message(ax, "no %s" % os.path.basename(path))
            ax.set_axis_off()
        ibcplot.save(fig, d, "channel_conn",
                     paper=("sridhar", "ch. 4, Table 4.1: QPs and queue memory per process, RC against XRC"))
        return 0
    for ax, key, scale, ylabel in ((axes[0], "qps_per_process", 1, "QPs per process"),
                                   (axes[1], "bytes_per_process", 1 / 2**20,
                                    "queue memory per process (MiB)")):
        i = 0
        for cores, ls in (("8", "-"), ("64", "--")):
            for s in SCHEMES:
                sel = sorted((r for r in conn if r["source"] == "computed" and r["scheme"] == s
                              and r["cores"] == cores), key=lambda r: int(r["job_size"]))
                if not sel:
                    continue
                color, marker = ibcplot.style(SCHEMES.index(s))
                xs = [int(r["job_size"]) for r in sel]
                ys = [max(float(r[key]) * scale, 1e-3) for r in sel]
                ibcplot.draw_series(ax, "%s, %s cores/node" % (s, cores), xs, ys,
                                    [False] * len(xs), color, marker if ls == "-" else "",
                                    linestyle=ls)
                i += 1
        for r in conn:
            if r["source"] == "measured":
                ax.plot([int(r["job_size"])], [max(float(r[key]) * scale, 1e-3)], marker="*",
                        markersize=14, color="black", linestyle="none",
                        label="measured (%s)" % r["xport"])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("job size (processes)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_title("connections per process (Table 4.1: RC n c - 1, XRC n)", fontsize=10)
    axes[1].set_title("memory of the queues per process", fontsize=10)
    fig.suptitle("Connection scaling, RC against XRC\n%s" % ibcplot.title_suffix(meta, rows),
                 fontsize=10)
    ibcplot.save(fig, d, "channel_conn",
                 paper=("sridhar", "ch. 4, Table 4.1: QPs and queue memory per process, RC against XRC"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
