#!/usr/bin/env python3
"""Figures 3 and 4 of Hoefler & Rehm (LoP): the round-trip time per peer
RTT(p) against the number of peers p addressed, send/receive (left) and
RDMA write (right), at the largest N of the run and its smallest message
size.  Markers: the 1:n kernel's min and mean and the n:1 kernel's min
(rtt-<op>-1n, rtt-<op>-n1; hollow: oversubscribed); lines: the fitted
t_rtt(p) = l1/(l2+p) + l3 + l4(1 - exp(l5(p - l6))) of fits.csv for the
1:n min and mean (R^2 in the legend; none where the fit's status is not
"ok"); grey dashed: the paper's fitted min functions (2005 Mellanox
hardware, about 10x this machine's times, hence the log axis).

usage: logp_rtt.py DIR  ->  DIR/logp_rtt.png, .pdf, .data.csv
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

PAPER_LABEL = "paper (Fig. 3/4, 2005 Mellanox, min)"
# the paper's t_rtt,min^{send,n} and t_rtt,min^{rdmaw,n} (section 4.7) as
# l1..l6 of the rtt model
PAPER = {"send": (22.4558, -0.0140, 9.1637, 0.0174, -0.0625, 101.3065),
         "write": (16.7937, 0.0058, 4.4642, 4.4751, -0.0642, 12.9209)}
PANELS = (("send", "send/receive RTT per peer (cf. Fig. 3)"),
          ("write", "RDMA write RTT per peer (cf. Fig. 4)"))
# (kernel suffix, statistic, results.csv column, colour, marker, fitted)
SERIES = (("1n", "min", "min_us", "tab:blue", "o", True),
          ("1n", "mean", "mean_us", "tab:orange", "s", True),
          ("n1", "min", "min_us", "tab:green", "^", False))
















def panel(ax, rows, fits, op, title, n, nbytes, pmax):
    ax.set_title(title, fontsize=10)
    any_over, notes, drawn = False, [], 0
    for suffix, stat, col, color, marker, fitted in SERIES:
        variant = "rtt-%s-%s" % (op, suffix)
        pts = {}
        for r in rows:
            if r["variant"] == variant and r["fanin"] is not None and r[col] is not None:
                pts[r["fanin"]] = r  # a repeated p keeps the later row
        sel = [pts[p] for p in sorted(pts)]
        label = "%s %s" % (variant, stat)
        if sel:
            over = [r["oversub"] == 1 for r in sel]
            ibcplot.draw_series(ax, label, [r["fanin"] for r in sel], [r[col] for r in sel],
                                over, color, marker, linestyle="none")
            any_over |= any(over)
            drawn += 1
        if not fitted:
            continue
        run_id = sel[0]["run_id"] if sel else None
        xport = sel[0]["xport"] if sel else None
        got, why = ibcplot.lop_fit(fits, run_id, xport, variant, nbytes, stat, n)
        if fits is None:
            why = "no fits.csv"
        if got is None:
            if sel:
                notes.append((label, why))
            continue
        lam, r2, fpmax = got
        xs, ys = ibcplot.lop_curve("rtt", lam, fpmax or pmax)
        ibcplot.draw_series(ax, "fit %s (R²=%s)" % (label, "%.5f" % r2 if r2 is not None else "?"),
                            xs, ys, [False] * len(xs), color, "")
    if not drawn:
        ibcplot.message(ax, "no rtt-%s-1n / rtt-%s-n1 rows at N = %d, %d B"
                        % (op, op, n, nbytes))
        ax.set_axis_off()
        return
    xs, ys = ibcplot.lop_curve("rtt", PAPER[op], pmax)
    ibcplot.draw_series(ax, PAPER_LABEL, xs, ys, [False] * len(xs), "gray",
                        "_" if len(xs) == 1 else "", linestyle="--")
    ax.set_yscale("log")
    ticks = list(range(1, pmax + 1)) if pmax <= 16 else \
        sorted({1 << k for k in range(pmax.bit_length()) if (1 << k) <= pmax} | {pmax})
    ibcplot.int_axis(ax, ticks)
    ax.set_xlabel("peers addressed p (1:n: one rank to p peers; n:1: p peers to one)")
    ax.set_ylabel("RTT(p) per peer (µs, log scale)")
    ax.grid(True, which="both", alpha=0.3)
    ibcplot.lop_legend(ax, any_over, notes)




def main(argv):
    d, rows, meta = ibcplot.usage_dir("logp_rtt.py", argv, "logp")
    run_id = rows[-1]["run_id"]
    rows = [r for r in rows if r["run_id"] == run_id]
    rtt = [r for r in rows if (r["variant"] or "").startswith("rtt-") and r["ranks"] is not None
           and r["bytes"] is not None]
    fig, axes = ibcplot.plt.subplots(1, 2, figsize=(17.5, 5.8))
    if not rtt:
        for ax in axes:
            ibcplot.message(ax, "no rtt-* rows in this run (kernel rtt of the logp suite)")
            ax.set_axis_off()
        head = "LoP RTT(p) per peer"
    else:
        rtt, n, nbytes, pmax = ibcplot.lop_select(rtt)
        fits = ibcplot.read_csv(os.path.join(d, "fits.csv"))
        for ax, (op, title) in zip(axes, PANELS):
            panel(ax, rtt, fits, op, title, n, nbytes, pmax)
        head = "LoP RTT(p) per peer at N = %d, %d B messages (cf. Hoefler & Rehm Figs. 3, 4)" \
            % (n, nbytes)
    fig.suptitle("%s\n%s" % (head, ibcplot.title_suffix(meta, rows)), fontsize=10)
    ibcplot.save(fig, d, "logp_rtt",
                 paper=("hoefler", "Figs. 3 and 4: the round-trip time per peer RTT(p)"))
    return 0


if __name__ == "__main__":
    ibcplot.run(main, "logp_rtt.py")
