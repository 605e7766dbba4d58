#!/usr/bin/env python3
"""The send overhead o_s(p) of the LoP model (Hoefler & Rehm, Fig. 5 left):
the time per request to post p send requests, one at a time or as one
list, with and without inline data, for send/receive (left, with the
receive overhead o_r(p) of posting p receive requests, single and list)
and RDMA write (right), at the largest N of the run and its smallest
message size (inline only where the size fits).  Markers: the rows' p50
(hollow: oversubscribed); lines: the fitted p50 curve
t_ov(p) = l1 + l2/(l3 + p) of fits.csv (R^2 in the legend; none where the
fit's status is not "ok"); grey dashed, right: the paper's
t_srov^rdmaw(p) = 0.5557 + 0.2103/(-0.7728 + p).

usage: logp_os.py DIR  ->  DIR/logp_os.png, .pdf, .data.csv
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

PAPER_LABEL = r"paper $t_{srov}^{rdmaw}(p)$ (Fig. 5, 2005 Mellanox)"
PAPER_WRITE = (0.5557, 0.2103, -0.7728)  # l1, l2, l3 of the ov model
# (variant pattern, colour, marker); %s is the op
KINDS = (("os-%s", "tab:blue", "o"), ("os-%s-list", "tab:orange", "s"),
         ("os-%s-inline", "tab:green", "D"), ("os-%s-list-inline", "tab:red", "^"))
RECV = (("or", "tab:purple", "v"), ("or-list", "tab:brown", "P"))
PANELS = (("send", "send/receive: o_s(p) and o_r(p) per request"),
          ("write", "RDMA write: o_s(p) per request (cf. Fig. 5)"))










def panel(ax, rows, fits, op, title, n, nbytes, pmax):
    ax.set_title(title, fontsize=10)
    kinds = [(k % op, c, m) for k, c, m in KINDS] + (list(RECV) if op == "send" else [])
    any_over, notes, drawn = False, [], 0
    for variant, color, marker in kinds:
        pts = {}
        for r in rows:
            if r["variant"] == variant and r["fanin"] is not None and r["p50_us"] is not None:
                pts[r["fanin"]] = r  # a repeated p keeps the later row
        sel = [pts[p] for p in sorted(pts)]
        if not sel:
            continue
        over = [r["oversub"] == 1 for r in sel]
        ibcplot.draw_series(ax, "%s p50" % variant, [r["fanin"] for r in sel],
                            [r["p50_us"] for r in sel], over, color, marker, linestyle="none")
        any_over |= any(over)
        drawn += 1
        got, why = ibcplot.lop_fit(fits, sel[0]["run_id"], sel[0]["xport"], variant, nbytes, "p50", n)
        if got is None:
            notes.append(("%s p50" % variant, why))
            continue
        lam, r2, fpmax = got
        xs, ys = ibcplot.lop_curve("ov", lam, fpmax or pmax)
        ibcplot.draw_series(ax, "fit %s p50 (R²=%s)"
                            % (variant, "%.3f" % r2 if r2 is not None else "?"),
                            xs, ys, [False] * len(xs), color, "")
    if not drawn:
        ibcplot.message(ax, "no os-%s* rows at N = %d, %d B" % (op, n, nbytes))
        ax.set_axis_off()
        return
    if op == "write":
        xs, ys = ibcplot.lop_curve("ov", PAPER_WRITE, pmax)
        ibcplot.draw_series(ax, PAPER_LABEL, xs, ys, [False] * len(xs), "gray",
                            "_" if len(xs) == 1 else "", linestyle="--")
    ax.set_yscale("log")
    ticks = list(range(1, pmax + 1)) if pmax <= 16 else \
        sorted({1 << k for k in range(pmax.bit_length()) if (1 << k) <= pmax} | {pmax})
    ibcplot.int_axis(ax, ticks)
    ax.set_xlabel("requests posted p (one per peer)")
    ax.set_ylabel("overhead per request, median (µs, log scale)")
    ax.grid(True, which="both", alpha=0.3)
    ibcplot.lop_legend(ax, any_over, notes, fontsize=7.5)


def main(argv):
    d, rows, meta = ibcplot.usage_dir("logp_os.py", argv, "logp")
    run_id = rows[-1]["run_id"]
    rows = [r for r in rows if r["run_id"] == run_id]
    ov = [r for r in rows if (r["variant"] or "").startswith(("os-", "or"))
          and r["ranks"] is not None and r["bytes"] is not None]
    fig, axes = ibcplot.plt.subplots(1, 2, figsize=(17.5, 6.2))
    if not ov:
        for ax in axes:
            ibcplot.message(ax, "no os-* / or* rows in this run\n"
                            "(kernels os and or of the logp suite)")
            ax.set_axis_off()
        head = "LoP overheads o_s(p), o_r(p)"
    else:
        ov, n, nbytes, pmax = ibcplot.lop_select(ov)
        fits = ibcplot.read_csv(os.path.join(d, "fits.csv"))
        for ax, (op, title) in zip(axes, PANELS):
            panel(ax, ov, fits, op, title, n, nbytes, pmax)
        head = "LoP overheads o_s(p), o_r(p) at N = %d, %d B messages (cf. Hoefler & Rehm Fig. 5)" \
            % (n, nbytes)
    fig.suptitle("%s\n%s" % (head, ibcplot.title_suffix(meta, rows)), fontsize=10)
    ibcplot.save(fig, d, "logp_os",
                 paper=("hoefler", "Fig. 5 (left): the send and receive overheads o_s(p), o_r(p)"))
    return 0


if __name__ == "__main__":
    ibcplot.run(main, "logp_os.py")
