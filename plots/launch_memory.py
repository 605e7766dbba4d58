#!/usr/bin/env python3
"""Node-level cache memory (the thesis, Table 3.1): measured, the largest
cache of any node agent against the number of exchange stages, per policy
(1:p all-gather, the largest job measured); computed, Table 3.1 for 64 to
65 536 processes and 16 published pairs per process from the measured bytes
per entry (hcmab-lru bounded), drawn and printed as a table.

usage: launch_memory.py DIR  ->  DIR/launch_memory.png, .pdf, .data.csv
Reads DIR/launch-cache.csv and DIR/launch-memory.csv.
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

POLICIES = ["hcs", "hcma", "hcmab", "hcmab-lru"]
PAIRS = "16"


def main(argv):
    d, rows, meta = ibcplot.usage_dir("launch_memory.py", argv, "launch")
    cache = ibcplot.read_csv(os.path.join(d, "launch-cache.csv")) or []
    mem = ibcplot.read_csv(os.path.join(d, "launch-memory.csv")) or []
    fig, axes = ibcplot.plt.subplots(1, 2, figsize=(15, 5.6))
    ax = axes[0]
    ag = [r for r in cache if r["pattern"] == "allgather" and r["mult"] == "1"]
    if ag:
        top = max(int(r["ranks"]) for r in ag)
        sel = [r for r in ag if int(r["ranks"]) == top]
        ax.set_title("measured: largest agent cache against stages (1:p, %d processes)" % top,
                     fontsize=10)
        for i, pol in enumerate(POLICIES):
            pts = sorted((int(r["stages"]), float(r["nla_mem_max"]) / 1024) for r in sel
                         if r["policy"] == pol)
            if pts:
                color, marker = ibcplot.style(i)
                ibcplot.draw_series(ax, pol, [p[0] for p in pts], [p[1] for p in pts],
                                    [False] * len(pts), color, marker)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("stages (pairs published per process)")
        ax.set_ylabel("KiB (cache memory high-water, largest node agent)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    else:
        ax.set_title("measured", fontsize=10)
        ibcplot.message(ax, "no launch-cache.csv")
        ax.set_axis_off()
    ax = axes[1]
    tab = [r for r in mem if r["pairs"] == PAIRS]
    if tab:
        sizes = sorted({int(r["ranks"]) for r in tab})
        ax.set_title("computed: Table 3.1, %s pairs per process, KiB per node agent" % PAIRS,
                     fontsize=10)
        cells = []
        for pol in POLICIES:
            vals = {int(r["ranks"]): float(r["bytes_per_nla"]) / 1024 for r in tab if r["policy"] == pol}
            ys = [vals.get(p) for p in sizes]
            ibcplot._DRAWN.append((ax, pol, sizes, ys))
            cells.append(["%.0f" % v if v is not None else "-" for v in ys])
        ax.set_axis_off()
        t = ax.table(cellText=cells, rowLabels=POLICIES, colLabels=[str(p) for p in sizes],
                     loc="center")
        t.scale(1, 1.8)
        entry = tab[0].get("entry_bytes", "?")
        ax.text(0.5, 0.1, "from %s bytes per cached entry, measured; hcmab-lru bounded to two stages"
                % entry, ha="center", transform=ax.transAxes, fontsize=8)
    else:
        ax.set_title("computed", fontsize=10)
        ibcplot.message(ax, "no launch-memory.csv")
        ax.set_axis_off()
    fig.suptitle("Node-level cache memory\n%s" % ibcplot.title_suffix(meta, rows), fontsize=10)
    ibcplot.save(fig, d, "launch_memory",
                 paper=("sridhar", "Table 3.1: node-level cache memory"))
    return 0


if __name__ == "__main__":
    ibcplot.run(main, "launch_memory.py")
