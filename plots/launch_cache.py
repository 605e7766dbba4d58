#!/usr/bin/env python3
"""Node-level caches (the thesis, Figs. 3.3 and 3.4): time per stage of the
1:2 ring exchange (one put, two gets) and of the 1:p all-gather exchange (one
put, p gets) under ibchar-launch against the job size n x c, one line per
policy (HCS, HCMA, HCMAB, HCMAB-LRU) and processes per host c; and the messages into the root (the
launcher) per stage, from the stage-count sweep.

usage: launch_cache.py DIR  ->  DIR/launch_cache.png, .pdf, .data.csv
Reads DIR/results.csv (suite launch, kind=cache rows: p50 over trials and
stages; root_msgs_per_stage in extra).
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

POLICIES = ["hcs", "hcma", "hcmab", "hcmab-lru"]


def main(argv):
    d, rows, meta = ibcplot.usage_dir("launch_cache.py", argv, "launch")
    cr = [r for r in rows if r["extra"].get("kind") == "cache" and r["p50_us"] is not None
          and r["extra"].get("mult", "1") == "1"]
    fig, axes = ibcplot.plt.subplots(1, 3, figsize=(18, 5.4))
    panels = ((axes[0], "ring", "p50_us", "1:2 ring: time per stage (Fig. 3.3)", "ms per stage"),
              (axes[1], "allgather", "p50_us", "1:p all-gather: time per stage (Fig. 3.4)", "ms per stage"),
              (axes[2], "allgather", "root_msgs_per_stage",
               "1:p all-gather: messages into the root per stage", "messages"))
    for ax, pat, key, title, ylabel in panels:
        ax.set_title(title, fontsize=10)
        cs = sorted({r["ppn"] for r in cr})
        for i, pol in enumerate(POLICIES):
            for j, c in enumerate(cs):
                sel = sorted((r for r in cr if r["extra"].get("policy") == pol and r["ppn"] == c
                              and r["extra"].get("pattern") == pat), key=lambda r: r["ranks"])
                pts = []
                for r in sel:
                    y = r["p50_us"] / 1e3 if key == "p50_us" else ibcplot.extra_float(r, key)
                    if y is not None:
                        pts.append((r["ranks"], y))
                if not pts:
                    continue
                color, marker = ibcplot.style(i)
                ibcplot.draw_series(ax, "%s c=%d" % (pol, c), [p[0] for p in pts], [p[1] for p in pts],
                                    [False] * len(pts), color, marker,
                                    linestyle=["-", "--", ":", "-."][j % 4])
        ax.set_xscale("log", base=2)
        ax.set_xlabel("processes (n hosts x c per host)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8)
        else:
            ibcplot.message(ax, "no cache rows (--caches none?)")
    fig.suptitle("Node-level caches of ibchar-launch\n%s" % ibcplot.title_suffix(meta, rows),
                 fontsize=10)
    ibcplot.save(fig, d, "launch_cache",
                 paper=("sridhar", "Figs. 3.3 and 3.4: time per exchange stage with node-level caches"))
    return 0


if __name__ == "__main__":
    ibcplot.run(main, "launch_cache.py")
