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
import csv
import math
import os
import sys
import textwrap

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

PAPER_LABEL = r"paper $t_{srov}^{rdmaw}(p)$ (Fig. 5, 2005 Mellanox)"
PAPER_WRITE = (0.5557, 0.2103, -0.7728)  # l1, l2, l3 of the ov model
# (variant pattern, colour, marker); %s is the op
KINDS = (("os-%s", "tab:blue", "o"), ("os-%s-list", "tab:orange", "s"),
         ("os-%s-inline", "tab:green", "D"), ("os-%s-list-inline", "tab:red", "^"))
RECV = (("or", "tab:purple", "v"), ("or-list", "tab:brown", "P"))
PANELS = (("send", "send/receive: o_s(p) and o_r(p) per request"),
          ("write", "RDMA write: o_s(p) per request (cf. Fig. 5)"))


def read_csv(path):
    """The rows of path as dicts, or None when it is missing or unreadable."""
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except (OSError, csv.Error, UnicodeDecodeError):
        return None


def strip_no_fit(why):
    """The status of a fit without its "no fit: " prefix."""
    why = why.strip()
    return why[len("no fit:"):].strip() if why.startswith("no fit:") else why


def group_notes(missing):
    """[(series, why)] -> one line per reason: "no fit for a, b: why"."""
    by = {}
    for name, why in missing:
        by.setdefault(strip_no_fit(why), []).append(name)
    return ["no fit for %s: %s" % (", ".join(names), why) for why, names in by.items()]


def fnum(text):
    """A finite float, or None (empty, NaN, garbage, missing)."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def ov_curve(lam, pmax):
    """(p, t) of l1 + l2/(l3 + p) over 1..pmax; NaN where t is not positive
    (log axis) or where l3 + p changes sign (a pole in the range)."""
    n = max(1, min(400, int(round(8 * (pmax - 1)))))
    ps = [1.0 + (pmax - 1.0) * i / n for i in range(n + 1)] if pmax > 1 else [1.0]
    ys, prev = [], None
    for p in ps:
        try:
            t = lam[0] + lam[1] / (lam[2] + p)
        except ZeroDivisionError:
            t = float("nan")
        side = (lam[2] + p) > 0
        if prev is not None and side != prev:
            t = float("nan")
        prev = side
        ys.append(t if math.isfinite(t) and t > 0 else float("nan"))
    return ps, ys


def fit_for(fits, run_id, xport, variant, nbytes, stat, ranks):
    """((l1, l2, l3), r2, pmax) of the "ok" ov fit of this data set, or
    (None, why)."""
    if fits is None:
        return None, "no fits.csv"
    hit = None
    for f in fits:
        if (f.get("variant") == variant and f.get("stat") == stat
                and fnum(f.get("bytes")) == nbytes and fnum(f.get("ranks")) == ranks
                and f.get("xport", xport) == xport
                and (not f.get("run_id") or f.get("run_id") == run_id)):
            hit = f
    if hit is None:
        return None, "no fits.csv row"
    status = (hit.get("status") or "").strip()
    if status != "ok":
        return None, status or "no status"
    lam = [fnum(hit.get("l%d" % k)) for k in (1, 2, 3)]
    if None in lam:
        return None, "parameters missing"
    return (lam, fnum(hit.get("r2")), fnum(hit.get("pmax"))), None


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
        got, why = fit_for(fits, sel[0]["run_id"], sel[0]["xport"], variant, nbytes, "p50", n)
        if got is None:
            notes.append(("%s p50" % variant, why))
            continue
        lam, r2, fpmax = got
        xs, ys = ov_curve(lam, fpmax or pmax)
        ibcplot.draw_series(ax, "fit %s p50 (R²=%s)"
                            % (variant, "%.3f" % r2 if r2 is not None else "?"),
                            xs, ys, [False] * len(xs), color, "")
    if not drawn:
        ibcplot.message(ax, "no os-%s* rows at N = %d, %d B" % (op, n, nbytes))
        ax.set_axis_off()
        return
    if op == "write":
        xs, ys = ov_curve(PAPER_WRITE, pmax)
        ibcplot.draw_series(ax, PAPER_LABEL, xs, ys, [False] * len(xs), "gray",
                            "_" if len(xs) == 1 else "", linestyle="--")
    ax.set_yscale("log")
    ticks = list(range(1, pmax + 1)) if pmax <= 16 else \
        sorted({1 << k for k in range(pmax.bit_length()) if (1 << k) <= pmax} | {pmax})
    ibcplot.int_axis(ax, ticks)
    ax.set_xlabel("requests posted p (one per peer)")
    ax.set_ylabel("overhead per request, median (µs, log scale)")
    ax.grid(True, which="both", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if any_over:
        handles.append(Line2D([], [], marker="o", color="gray", markerfacecolor="white",
                              linestyle="none"))
        labels.append(ibcplot.OVERSUB_NOTE)
    for t in group_notes(notes):
        handles.append(Line2D([], [], linestyle="none"))
        labels.append(textwrap.fill(t, 44))
    ax.legend(handles, labels, fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0)


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
        n = max(r["ranks"] for r in ov)
        nbytes = min(r["bytes"] for r in ov if r["ranks"] == n)
        ov = [r for r in ov if r["ranks"] == n and r["bytes"] == nbytes]
        xport = ov[-1]["xport"]
        ov = [r for r in ov if r["xport"] == xport]
        pmax = max([r["fanin"] for r in ov if r["fanin"] is not None] or [max(1, n - 1)])
        fits = read_csv(os.path.join(d, "fits.csv"))
        for ax, (op, title) in zip(axes, PANELS):
            panel(ax, ov, fits, op, title, n, nbytes, pmax)
        head = "LoP overheads o_s(p), o_r(p) at N = %d, %d B messages (cf. Hoefler & Rehm Fig. 5)" \
            % (n, nbytes)
    fig.suptitle("%s\n%s" % (head, ibcplot.title_suffix(meta, rows)), fontsize=10)
    ibcplot.save(fig, d, "logp_os")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except SystemExit:
        raise
    except Exception as e:  # anything unexpected: exit 1 with the reason
        ibcplot.die("logp_os.py", "%s: %s" % (type(e).__name__, e), 1)
