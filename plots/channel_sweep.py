#!/usr/bin/env python3
"""The slides' "Impact of pipelining chunk size on bandwidth" and the lazy
tail-update threshold: bandwidth (MB/s) against message size for
pipeline-bw at each chunk size (pipeline-bw is 16 KiB), and for
piggyback-bw at each lazy threshold (piggyback-bw is a quarter of the ring).

usage: channel_sweep.py DIR  ->  DIR/channel_sweep.png, .pdf, .data.csv
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402


def panel(ax, rows, base, pattern, key, title):
    names = sorted({r["variant"] for r in rows if re.fullmatch(pattern, r["variant"])},
                   key=lambda v: int(re.search(r"(\d+)k$", v).group(1)) if v[-1] == "k" else 16)
    names = [base] + [n for n in names if n != base] if base in {r["variant"] for r in rows} \
        else names
    xs_all = []
    for i, name in enumerate(names):
        sel = sorted((r for r in rows if r["variant"] == name and r["p50_us"]),
                     key=lambda r: r["bytes"])
        if not sel:
            continue
        param = ibcplot.extra_float(sel[0], key)
        label = "%s (%s %s)" % (name, key, ibcplot.size_label(int(param)) if param else "?")
        color, marker = ibcplot.style(i)
        xs = [r["bytes"] for r in sel]
        ibcplot.draw_series(ax, label, xs, [r["bytes"] / r["p50_us"] for r in sel],
                            [r["oversub"] == 1 for r in sel], color, marker)
        xs_all += xs
    if not xs_all:
        ibcplot.message(ax, "no %s rows" % base)
        ax.set_axis_off()
        return
    ibcplot.int_axis(ax, xs_all, log2=True, labels=ibcplot.size_label)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bandwidth (MB/s)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def main(argv):
    d, rows, meta = ibcplot.usage_dir("channel_sweep.py", argv, "channel")
    fig, axes = ibcplot.plt.subplots(1, 2, figsize=(14, 5.4))
    panel(axes[0], rows, "pipeline-bw", r"pipeline-bw(-c\d+k)?", "chunk",
          "pipeline: chunk size (the slides: ~16 KiB best)")
    panel(axes[1], rows, "piggyback-bw", r"piggyback-bw(-l\d+k)?", "lazy",
          "piggyback: lazy tail-update threshold")
    fig.suptitle("Channel sweeps\n%s" % ibcplot.title_suffix(meta, rows), fontsize=10)
    ibcplot.save(fig, d, "channel_sweep",
                 paper=("liu", '"impact of pipelining chunk size on bandwidth" and the lazy tail-update threshold'))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
