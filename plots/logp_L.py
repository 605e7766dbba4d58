#!/usr/bin/env python3
"""The latency L(p) of the LoP model (Hoefler & Rehm, section 4.4 and
Fig. 5 right) for send/receive (left) and RDMA write (right), at the
largest N of the run and its smallest message size, from
DIR/logp-derived.csv (stat min):
  L(p)      = RTT(p)/2 - (o_s(p) + o_s(1))      single posts
  L_list(p) = RTT(p)/2 - (p o_s(p) + o_s(1))    a list of p requests
Markers: the values from the measured rows (hollow: oversubscribed);
lines: the same formulas on the fitted curves (source "fit"); grey dashed,
left: the paper's L_min^send(p) =
  4.58 + 11.23/(-0.01+p) + 0.01(1 - exp(-0.06(p - 101.31)))
  - (0.52 + 0.84/(-0.12+1)) - (0.52 + 0.84/(-0.12+p)).
Where o_s is not small against RTT/2 (a fast machine, shm) the formula
goes below 0; logp-derived.csv leaves such a value empty ("not physical",
its status column), so it is not drawn.  The axis is linear, with a line
at 0.

usage: logp_L.py DIR  ->  DIR/logp_L.png, .pdf, .data.csv
"""
import math
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

PAPER_LABEL = r"paper $L_{min}^{send}(p)$ (Fig. 5, 2005 Mellanox)"
PANELS = (("send", "send/receive: L(p) and L_list(p), min"),
          ("write", "RDMA write: L(p) and L_list(p), min"))
QUANT = (("L", "L(p)", "tab:blue", "o"), ("L_list", "L_list(p)", "tab:orange", "s"))






def paper_L(p):
    try:
        return (4.58 + 11.23 / (-0.01 + p) + 0.01 * (1.0 - math.exp(-0.06 * (p - 101.31)))
                - (0.52 + 0.84 / (-0.12 + 1)) - (0.52 + 0.84 / (-0.12 + p)))
    except (ZeroDivisionError, OverflowError):
        return float("nan")


def oversub_of(rows, op, p):
    """oversub of the rtt-<op>-1n row at p (the rows are of one N and size),
    else of any of the rows."""
    for r in rows:
        if r["variant"] == "rtt-%s-1n" % op and r["fanin"] == p and r["oversub"] is not None:
            return r["oversub"] == 1
    return any(r["oversub"] == 1 for r in rows)


def panel(ax, der, rows, op, title, pmax):
    ax.set_title(title, fontsize=10)
    any_over, drawn, notes = False, 0, []
    for q, name, color, marker in QUANT:
        got = set()
        for source in ("measured", "fit"):
            pts = {}
            for r in der:
                if r.get("quantity") == q and r.get("op") == op and r.get("source") == source:
                    p, v = ibcplot.fnum(r.get("p")), ibcplot.fnum(r.get("value_us"))
                    if p is not None and v is not None:
                        pts[int(p)] = v  # a repeated p keeps the later row
            if not pts:
                continue
            xs = sorted(pts)
            ys = [pts[p] for p in xs]
            got.add(source)
            if source == "measured":
                over = [oversub_of(rows, op, p) for p in xs]
                any_over |= any(over)
                ibcplot.draw_series(ax, "%s measured" % name, xs, ys, over, color, marker,
                                    linestyle="none")
                drawn += 1
            else:
                ibcplot.draw_series(ax, "%s from the fits" % name, xs, ys, [False] * len(xs),
                                    color, "")
        if got == {"measured"}:
            notes.append("%s: no fit values (a fit of the\nRTT or o_s it needs failed: fits.csv)"
                         % name)
    if not drawn:
        ibcplot.message(ax, "no L / L_list values for %s (stat min) in logp-derived.csv" % op)
        ax.set_axis_off()
        return
    if op == "send":
        n = max(1, min(400, 8 * (pmax - 1)))
        xs = [1.0 + (pmax - 1.0) * i / n for i in range(n + 1)] if pmax > 1 else [1.0]
        ys = [paper_L(p) for p in xs]
        ibcplot.draw_series(ax, PAPER_LABEL, xs, ys, [False] * len(xs), "gray",
                            "_" if len(xs) == 1 else "", linestyle="--")
    ax.axhline(0.0, color="black", linewidth=0.8)
    ticks = list(range(1, pmax + 1)) if pmax <= 16 else \
        sorted({1 << k for k in range(pmax.bit_length()) if (1 << k) <= pmax} | {pmax})
    ibcplot.int_axis(ax, ticks)
    ax.set_xlabel("peers addressed p")
    ax.set_ylabel("L(p), min (µs)")
    ax.grid(True, alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if any_over:
        handles.append(Line2D([], [], marker="o", color="gray", markerfacecolor="white",
                              linestyle="none"))
        labels.append(ibcplot.OVERSUB_NOTE)
    for t in notes:
        handles.append(Line2D([], [], linestyle="none"))
        labels.append(t)
    if op != "send":
        handles.append(Line2D([], [], linestyle="none"))
        labels.append("(the paper gives L_min\nfor send/receive only)")
    ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0)


def main(argv):
    d, rows, meta = ibcplot.usage_dir("logp_L.py", argv, "logp")
    run_id = rows[-1]["run_id"]
    rows = [r for r in rows if r["run_id"] == run_id]
    fig, axes = ibcplot.plt.subplots(1, 2, figsize=(16, 5.6))
    head = "LoP latency L(p)"
    der = ibcplot.read_csv(os.path.join(d, "logp-derived.csv"))
    if der is not None:
        der = [r for r in der if r.get("quantity") in ("L", "L_list") and r.get("stat") == "min"
               and (not r.get("run_id") or r.get("run_id") == run_id)]
    if not der:
        why = "no logp-derived.csv" if der is None else \
            "no L / L_list rows (stat min) of this run in logp-derived.csv"
        for ax in axes:
            ibcplot.message(ax, why + "\n(written by `ibchar run logp`)")
            ax.set_axis_off()
    else:
        nvals = [ibcplot.fnum(r.get("ranks")) for r in der]
        n = max(v for v in nvals if v is not None) if any(v is not None for v in nvals) else None
        if n is not None:
            der = [r for r in der if ibcplot.fnum(r.get("ranks")) == n]
        sizes = [ibcplot.fnum(r.get("bytes")) for r in der if ibcplot.fnum(r.get("bytes")) is not None]
        nbytes = min(sizes) if sizes else None
        if nbytes is not None:
            der = [r for r in der if ibcplot.fnum(r.get("bytes")) == nbytes]
        xports = [r.get("xport") for r in der if r.get("xport")]
        if xports:
            der = [r for r in der if r.get("xport") == xports[-1]]
        sel = [r for r in rows if (n is None or r["ranks"] == n)
               and (nbytes is None or r["bytes"] == nbytes)]
        ps = [int(ibcplot.fnum(r.get("p"))) for r in der if ibcplot.fnum(r.get("p")) is not None]
        pmax = max(ps) if ps else 1
        for ax, (op, title) in zip(axes, PANELS):
            panel(ax, der, sel, op, title, pmax)
        head = "LoP latency L(p) at N = %s, %s B messages (cf. Hoefler & Rehm Fig. 5, right)" % (
            "%d" % n if n is not None else "?",
            "%d" % nbytes if nbytes is not None else "?")
    fig.suptitle("%s\n%s" % (head, ibcplot.title_suffix(meta, rows)), fontsize=10)
    ibcplot.save(fig, d, "logp_L",
                 paper=("hoefler", "Fig. 5 (right): the latency L(p)"))
    return 0


if __name__ == "__main__":
    ibcplot.run(main, "logp_L.py")
