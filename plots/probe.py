#!/usr/bin/env python3
"""Placement probe: one-way cache-line ping-pong latency between two
processes on different PUs (probe-cross) and on the same PU (probe-same).

usage: probe.py DIR  ->  DIR/probe.png and .pdf
Bars: p50 (µs) with the 95% CI of the median; a tick marks p99.
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402


def main(argv):
    d, rows, meta = ibcplot.usage_dir("probe.py", argv, "probe")
    rows = [r for r in rows if r["p50_us"] is not None]
    variants = sorted({r["variant"] for r in rows})
    sizes = sorted({r["bytes"] or 0 for r in rows})
    fig, ax = ibcplot.plt.subplots(figsize=(8, 4.8))
    width = 0.8 / max(1, len(variants))
    for i, v in enumerate(variants):
        color, _ = ibcplot.style(i)
        for j, b in enumerate(sizes):
            rs = [r for r in rows if r["variant"] == v and (r["bytes"] or 0) == b]
            if not rs:
                continue
            r = rs[-1]
            x = j + (i - (len(variants) - 1) / 2) * width
            err = ibcplot.yerr_ci([r])
            ax.bar(x, r["p50_us"], width, color=color, yerr=err, capsize=3,
                   hatch="//" if r["oversub"] == 1 else None,
                   label=v if j == 0 else None)
            if r["p99_us"] is not None:
                ax.plot([x - width / 3, x + width / 3], [r["p99_us"]] * 2, color="black",
                        linewidth=1)
            ax.annotate("%.3g" % r["p50_us"], xy=(x, r["p50_us"]), xytext=(0, 2),
                        textcoords="offset points", ha="center", fontsize=7)
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([ibcplot.size_label(b) for b in sizes])
    ax.set_xlabel("bytes (row's message size; the probe moves one cache line)")
    ax.set_ylabel("one-way latency, median (µs); black tick: p99")
    ax.set_yscale("log")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8, title="hatched: oversubscribed" if any(r["oversub"] == 1 for r in rows)
              else None)
    ax.set_title("Placement probe (cache-line ping-pong)\n%s"
                 % ibcplot.title_suffix(meta, rows), fontsize=10)
    ibcplot.save(fig, d, "probe")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
