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
import csv
import math
import os
import sys
import textwrap

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

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


def rtt_model(lam, p):
    l1, l2, l3, l4, l5, l6 = lam
    try:
        return l1 / (l2 + p) + l3 + l4 * (1.0 - math.exp(l5 * (p - l6)))
    except (ZeroDivisionError, OverflowError):
        return float("nan")


def curve(lam, pmax):
    """(p, t) on a grid over 1..pmax; NaN where t is not a positive finite
    value (log axis) or where l2 + p changes sign (a pole in the range)."""
    n = max(1, min(400, int(round(8 * (pmax - 1)))))
    ps = [1.0 + (pmax - 1.0) * i / n for i in range(n + 1)] if pmax > 1 else [1.0]
    ys, prev = [], None
    for p in ps:
        t = rtt_model(lam, p)
        side = (lam[1] + p) > 0
        if prev is not None and side != prev:
            t = float("nan")
        prev = side
        ys.append(t if math.isfinite(t) and t > 0 else float("nan"))
    return ps, ys


def find_fit(fits, run_id, xport, variant, nbytes, stat, ranks):
    """The fits.csv row of this data set (the last when repeated), or None."""
    hit = None
    for f in fits or []:
        if (f.get("variant") == variant and f.get("stat") == stat
                and fnum(f.get("bytes")) == nbytes and fnum(f.get("ranks")) == ranks
                and f.get("xport", xport) == xport
                and (not f.get("run_id") or f.get("run_id") == run_id)):
            hit = f
    return hit


def fit_params(f):
    """(l1..l6, r2, pmax) of an "ok" rtt fit row, or (None, why)."""
    if f is None:
        return None, "no fits.csv row"
    status = (f.get("status") or "").strip()
    if status != "ok":
        return None, status or "no status"
    lam = [fnum(f.get("l%d" % k)) for k in range(1, 7)]
    if None in lam:
        return None, "parameters missing"
    return (lam, fnum(f.get("r2")), fnum(f.get("pmax"))), None


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
        got, why = fit_params(find_fit(fits, run_id, xport, variant, nbytes, stat, n))
        if fits is None:
            why = "no fits.csv"
        if got is None:
            if sel:
                notes.append((label, why))
            continue
        lam, r2, fpmax = got
        xs, ys = curve(lam, fpmax or pmax)
        ibcplot.draw_series(ax, "fit %s (R²=%s)" % (label, "%.5f" % r2 if r2 is not None else "?"),
                            xs, ys, [False] * len(xs), color, "")
    if not drawn:
        ibcplot.message(ax, "no rtt-%s-1n / rtt-%s-n1 rows at N = %d, %d B"
                        % (op, op, n, nbytes))
        ax.set_axis_off()
        return
    xs, ys = curve(PAPER[op], pmax)
    ibcplot.draw_series(ax, PAPER_LABEL, xs, ys, [False] * len(xs), "gray",
                        "_" if len(xs) == 1 else "", linestyle="--")
    ax.set_yscale("log")
    ticks = list(range(1, pmax + 1)) if pmax <= 16 else \
        sorted({1 << k for k in range(pmax.bit_length()) if (1 << k) <= pmax} | {pmax})
    ibcplot.int_axis(ax, ticks)
    ax.set_xlabel("peers addressed p (1:n: one rank to p peers; n:1: p peers to one)")
    ax.set_ylabel("RTT(p) per peer (µs, log scale)")
    ax.grid(True, which="both", alpha=0.3)
    legend(ax, any_over, notes)


def legend(ax, any_over, notes):
    """The house legend right of the axes (hollow-marker note included),
    with one text-only entry per curve not drawn and why."""
    handles, labels = ax.get_legend_handles_labels()
    if any_over:
        handles.append(Line2D([], [], marker="o", color="gray", markerfacecolor="white",
                              linestyle="none"))
        labels.append(ibcplot.OVERSUB_NOTE)
    for t in group_notes(notes):
        handles.append(Line2D([], [], linestyle="none"))
        labels.append(textwrap.fill(t, 44))
    ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0)


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
        n = max(r["ranks"] for r in rtt)
        nbytes = min(r["bytes"] for r in rtt if r["ranks"] == n)
        rtt = [r for r in rtt if r["ranks"] == n and r["bytes"] == nbytes]
        xport = rtt[-1]["xport"]
        rtt = [r for r in rtt if r["xport"] == xport]
        pmax = max([r["fanin"] for r in rtt if r["fanin"] is not None] or [max(1, n - 1)])
        fits = read_csv(os.path.join(d, "fits.csv"))
        for ax, (op, title) in zip(axes, PANELS):
            panel(ax, rtt, fits, op, title, n, nbytes, pmax)
        head = "LoP RTT(p) per peer at N = %d, %d B messages (cf. Hoefler & Rehm Figs. 3, 4)" \
            % (n, nbytes)
    fig.suptitle("%s\n%s" % (head, ibcplot.title_suffix(meta, rows)), fontsize=10)
    ibcplot.save(fig, d, "logp_rtt")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except SystemExit:
        raise
    except Exception as e:  # anything unexpected: exit 1 with the reason
        ibcplot.die("logp_rtt.py", "%s: %s" % (type(e).__name__, e), 1)
