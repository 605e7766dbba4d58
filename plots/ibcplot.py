"""Shared loading and drawing helpers for the ibchar plot scripts.

Every script reads only a results directory (results.csv in the long format
of DESIGN.md, meta.csv as key,value) and writes <suite>_<figure>.png/.pdf
into that same directory.  Exit status: 0 ok, 2 bad directory or no rows of
the script's suite, 1 anything else.
"""
import csv
import math
import os
import sys
import textwrap

EXIT_USAGE = 2

# matplotlib may live only in the system python (Debian python3-matplotlib)
# while "python3" on PATH is another interpreter: re-run under the system one.
try:
    import matplotlib
except ImportError:
    _SYS = "/usr/bin/python3"
    if (os.environ.get("IBC_PLOT_REEXEC") != "1" and os.path.exists(_SYS)
            and os.path.realpath(sys.executable) != os.path.realpath(_SYS)):
        os.environ["IBC_PLOT_REEXEC"] = "1"
        sys.stderr.write("ibcplot: matplotlib not importable by %s, re-running under %s\n"
                         % (sys.executable, _SYS))
        os.execv(_SYS, [_SYS] + sys.argv)
    sys.stderr.write("ibcplot: matplotlib is not installed for %s "
                     "(apt-get install python3-matplotlib)\n" % sys.executable)
    sys.exit(1)
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

FLOAT_COLS = ("min_us", "p50_us", "mean_us", "p99_us", "max_us", "stdev_us",
              "ci_lo_us", "ci_hi_us", "skew_us", "probe_us")
INT_COLS = ("nodes", "ppn", "ranks", "bytes", "fanin", "iters", "warmup", "oversub")

OVERSUB_NOTE = "hollow marker:\noversubscribed\n(ranks > PUs, spin-yield)"


def die(prog, msg, code=EXIT_USAGE):
    sys.stderr.write("%s: %s\n" % (prog, msg))
    sys.exit(code)


def _num(text, conv):
    if text is None or text.strip() == "":
        return None
    try:
        return conv(text)
    except ValueError:
        try:
            return conv(float(text))
        except (ValueError, OverflowError):  # int("inf") -> OverflowError
            return None


def parse_extra(text):
    """'k=v;k=v' -> dict of strings."""
    out = {}
    for item in (text or "").split(";"):
        if "=" in item:
            k, v = item.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def extra_float(row, key):
    return _num(row["extra"].get(key), float)


def load_results(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            for c in FLOAT_COLS:
                r[c] = _num(r.get(c), float)
            for c in INT_COLS:
                r[c] = _num(r.get(c), int)
            r["extra"] = parse_extra(r.get("extra"))
            rows.append(r)
    return rows


def load_meta(path):
    """meta.csv holds key,value lines; a key may repeat (one block per launch).
    Returns key -> list of distinct values in file order."""
    meta = {}
    if not os.path.exists(path):
        return meta
    with open(path, newline="") as f:
        for rec in csv.reader(f):
            if len(rec) < 2 or rec[0] == "key":
                continue
            vals = meta.setdefault(rec[0], [])
            if rec[1] not in vals:
                vals.append(rec[1])
    return meta


def meta_str(meta, key, default="?"):
    vals = meta.get(key)
    return "/".join(vals) if vals else default


def usage_dir(prog, argv, suite):
    """Parses 'script DIR' and returns (dir, rows of the suite, meta)."""
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        msg = "usage: %s DIR\n  DIR: an ibchar results directory (results.csv, meta.csv)" % prog
        if len(argv) == 2:
            print(msg)
            sys.exit(0)
        die(prog, msg)
    d = argv[1]
    res = os.path.join(d, "results.csv")
    if not os.path.isfile(res):
        die(prog, "%s: no results.csv in this directory" % d)
    try:
        rows = [r for r in load_results(res) if r.get("suite") == suite]
    except (OSError, csv.Error) as e:
        die(prog, "%s: cannot read: %s" % (res, e))
    if not rows:
        die(prog, "%s: no %s rows" % (res, suite))
    return d, rows, load_meta(os.path.join(d, "meta.csv"))


def title_suffix(meta, rows):
    xp = meta_str(meta, "xport", None) or "/".join(sorted({r["xport"] for r in rows}))
    dev = meta_str(meta, "device", None)
    if dev and dev != xp:
        xp += " (%s)" % dev
    runs = sorted({r["run_id"] for r in rows})
    return "xport %s, host %s, run %s" % (xp, meta_str(meta, "host"), ",".join(runs))


def series_label(r, multi_run=False, multi_xport=False):
    lab = r["variant"]
    if r["variant"] == "rgm" and r["fanin"] is not None:
        lab += " l=%d" % r["fanin"]
    if r["impl"] and r["impl"] != "ibchar":
        lab += " (%s)" % r["impl"]
    if multi_xport:
        lab += " /%s" % r["xport"]
    if multi_run:
        lab += " [%s]" % r["run_id"]
    return lab


def group_series(rows, xkey="ranks", keyfn=None):
    """Groups rows by keyfn(row) -> {label: sorted list of rows by xkey}.
    A repeated x in one series keeps the last row (and says so)."""
    multi_run = len({r["run_id"] for r in rows}) > 1
    multi_xport = len({r["xport"] for r in rows}) > 1
    if keyfn is None:
        def keyfn(r):
            return series_label(r, multi_run, multi_xport)
    series = {}
    for r in rows:
        if r[xkey] is None or r["p50_us"] is None:
            continue
        s = series.setdefault(keyfn(r), {})
        if r[xkey] in s:
            sys.stderr.write("ibcplot: %s: two rows at %s=%s, keeping the later\n"
                             % (keyfn(r), xkey, r[xkey]))
        s[r[xkey]] = r
    return {k: [v[x] for x in sorted(v)] for k, v in series.items()}


def yerr_ci(rows, ykey="p50_us"):
    lo, hi = [], []
    for r in rows:
        y = r[ykey]
        a, b = r.get("ci_lo_us"), r.get("ci_hi_us")
        lo.append(max(0.0, y - a) if a is not None else 0.0)
        hi.append(max(0.0, b - y) if b is not None else 0.0)
    return [lo, hi]


# every series drawn, for the figure's data file (see save)
_DRAWN = []


def draw_series(ax, label, xs, ys, oversub, color, marker, yerr=None, linestyle="-"):
    """A line with error bars; markers filled for normal points and hollow
    for oversubscribed ones.  The points also go to the figure's data file."""
    _DRAWN.append((ax, label, list(xs), list(ys)))
    ax.errorbar(xs, ys, yerr=yerr, color=color, linestyle=linestyle, linewidth=1.4,
                capsize=3, elinewidth=0.9, marker=marker, markersize=6.5,
                markeredgewidth=1.3, label=label)
    for x, y, o in zip(xs, ys, oversub):
        if o:
            ax.plot([x], [y], marker=marker, markersize=6.5, color=color,
                    markerfacecolor="white", markeredgewidth=1.3, linestyle="none",
                    zorder=5)


MARKERS = "osD^vP*Xph<>"
# one colour per variant family; RGM fan-ins take shades of green
BASE_COLORS = {"rpe": "tab:blue", "rds": "tab:orange", "pe": "tab:purple", "ds": "tab:brown",
               "mpi": "tab:gray", "mpi-pe": "tab:red", "mpi-ds": "tab:pink"}
RGM_SHADES = ["#a1d99b", "#74c476", "#41ab5d", "#238b45", "#006d2c", "#00441b"]
FANIN_ORDER = [1, 3, 7, 15, 31, 63]


def style(i, variant=None, fanin=None):
    """(colour, marker) for the i-th series; stable per variant when given."""
    if variant == "rgm":
        k = FANIN_ORDER.index(fanin) if fanin in FANIN_ORDER else i
        return RGM_SHADES[k % len(RGM_SHADES)], MARKERS[(2 + k) % len(MARKERS)]
    if variant in BASE_COLORS:
        return BASE_COLORS[variant], MARKERS[list(BASE_COLORS).index(variant) % len(MARKERS)]
    cmap = plt.get_cmap("tab10")
    return cmap(i % 10), MARKERS[i % len(MARKERS)]


def legend_with_oversub(ax, any_oversub, **kw):
    handles, labels = ax.get_legend_handles_labels()
    if any_oversub:
        handles.append(Line2D([], [], marker="o", color="gray", markerfacecolor="white",
                              linestyle="none"))
        labels.append(OVERSUB_NOTE)
    kw.setdefault("loc", "upper left")
    kw.setdefault("bbox_to_anchor", (1.01, 1.0))
    ax.legend(handles, labels, fontsize=8, borderaxespad=0, **kw)


def pus_line(ax, meta):
    """A dotted vertical line at the PU count: right of it ranks oversubscribe."""
    vals = meta.get("pus") or meta.get("cores")
    try:
        n = int(vals[0])
    except (TypeError, ValueError, IndexError):
        return
    ax.axvline(n, color="gray", linestyle=":", linewidth=1)
    ax.annotate("PUs=%d" % n, xy=(n, 1), xycoords=("data", "axes fraction"),
                xytext=(3, -12), textcoords="offset points", fontsize=8, color="gray")


def size_label(n):
    """1024 -> '1K', 4194304 -> '4M'."""
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return "%d%s" % (n // scale, unit)
    return str(n)


def int_axis(ax, values, log2=None, labels=str):
    values = sorted(set(values))
    if not values:
        return
    if log2 is None:
        log2 = values[0] > 0 and values[-1] / values[0] > 16
    if log2:
        ax.set_xscale("log", base=2)
    ax.set_xticks(values)
    ax.set_xticklabels([labels(v) for v in values])
    if log2:
        ax.minorticks_off()


def auto_log_y(ax, ys):
    ys = [y for y in ys if y is not None and y > 0]
    if ys and max(ys) / min(ys) > 30:
        ax.set_yscale("log")


def message(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes,
            fontsize=10, wrap=True, bbox=dict(boxstyle="round", fc="#fff3cd", ec="#c9a227"))


def save_data(fig, d, name):
    """Writes name.data.csv: every point drawn by draw_series on fig's axes as
    panel (the axes' title, first line), series (the legend label), x, y -
    the numbers behind the figure, so they can be checked against
    results.csv or quoted."""
    p = os.path.join(d, "%s.data.csv" % name)
    with open(p, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["panel", "series", "x", "y"])
        for ax, label, xs, ys in _DRAWN:
            if ax.figure is not fig:
                continue
            panel = ax.get_title().split("\n")[0]
            for x, y in zip(xs, ys):
                w.writerow([panel, label, x, repr(float(y))])
    _DRAWN[:] = [e for e in _DRAWN if e[0].figure is not fig]
    return p


# The papers' testbeds and how they measured, for the captions of reproduced
# figures (what differs from the run is said by `ibchar report`, which reads
# the run's meta.csv; the claims the run reproduces or not are judged by
# `ibchar claims` from results/claims/).
PAPERS = {
    "kini": ("Kini et al. (barriers with RDMA and multicast)",
             "8 and 16 nodes, dual 2.4 GHz Xeon, Mellanox InfiniHost MT23108 and Topspin "
             "4X InfiniBand HCAs, Linux 2.4 (2003)",
             "MPI_Barrier called 1000 times back to back, the latency averaged over the nodes: "
             "ibchar's paper_us. The figures here plot the median of the slowest rank per "
             "iteration (p50_us) unless their axis says otherwise"),
    "sur": ("Sur et al. (all-to-all personalized exchange)",
            "16 nodes, dual 2.4 and 3.0 GHz Xeon, Mellanox InfiniHost MT23108 4X HCAs, "
            "InfiniScale 24-port switch, Linux 2.4",
            "MPI_Alltoall called 1000 times on the same buffer with an MPI_Barrier before "
            "every call, each node's mean averaged over the nodes. That is not paper_us (back "
            "to back, no barrier between calls) nor p50_us (the slowest rank per iteration); "
            "the closest here is rank_mean_us of rows started at a barrier (--sync barrier)"),
    "liu": ("Liu et al. (the MPICH2 RDMA channel)",
            "8 nodes, 2.4 GHz Xeon, Mellanox InfiniHost MT23108 4X HCAs, InfiniScale "
            "MT43132 switch",
            "not stated on the slides"),
    "hoefler": ("Hoefler and Rehm (the LoP model)",
                "64 nodes, 3 GHz Xeon, Mellanox MTPB 23108 HCAs, MTS 9600 switch",
                "RDTSC around each post call (o_s, o_r) and around ping-pongs (RTT), the "
                "minimum and the average over the repetitions"),
    "sridhar": ("Sridhar's thesis (ScELA job start-up)",
                "64 nodes x 8 cores (2.33 GHz Xeon Clovertown), Gigabit Ethernet for "
                "launching; TACC Ranger for the largest runs",
                "an MPI micro-benchmark's launch: the spawn phase and MPI_Init, per "
                "launcher and cluster size"),
}


def save_caption(d, name, paper):
    """Writes name.caption.txt (figure=..., testbed=..., method=...): the
    paper's figure that name reproduces, the paper's testbed and how the
    paper measured."""
    key, what = paper
    cite, testbed, method = PAPERS[key]
    p = os.path.join(d, "%s.caption.txt" % name)
    with open(p, "w") as f:
        f.write("figure=%s, %s\ntestbed=%s\nmethod=%s\n" % (cite, what, testbed, method))
    return p


def save(fig, d, name, paper=None):
    """Writes name.png, name.pdf and name.data.csv (save_data) into d and
    prints the paths of the figures on stdout.  paper = (a key of PAPERS,
    which figure it reproduces) also writes name.caption.txt."""
    fig.tight_layout()
    save_data(fig, d, name)
    if paper is not None:
        save_caption(d, name, paper)
    out = []
    for ext in ("png", "pdf"):
        p = os.path.join(d, "%s.%s" % (name, ext))
        fig.savefig(p, dpi=120)
        out.append(p)
    plt.close(fig)
    for p in out:
        print(p)
    return out


# ------------------------------------------ files beside results.csv -----

def read_csv(path):
    """The rows of path as dicts, or None when it is missing or unreadable."""
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except (OSError, csv.Error, UnicodeDecodeError):
        return None


def fnum(text):
    """A finite float, or None (empty, NaN, garbage, missing)."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def run(main, prog):
    """sys.exit(main(sys.argv)); anything unexpected exits 1 with the reason."""
    try:
        sys.exit(main(sys.argv))
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        die(prog, "%s: %s" % (type(e).__name__, e), 1)


# ------------------------------------------------ the LoP fits (logp) -----
# fits.csv of the logp suite: rtt t(p) = l1/(l2 + p) + l3 + l4 (1 - e^(l5 (p - l6))),
# ov t(p) = l1 + l2/(l3 + p)

LOP_NPAR = {"rtt": 6, "ov": 3}
LOP_POLE = {"rtt": 1, "ov": 2}  # the index of the pole parameter


def lop_eval(model, lam, p):
    try:
        if model == "rtt":
            l1, l2, l3, l4, l5, l6 = lam
            return l1 / (l2 + p) + l3 + l4 * (1.0 - math.exp(l5 * (p - l6)))
        return lam[0] + lam[1] / (lam[2] + p)
    except (ZeroDivisionError, OverflowError):
        return float("nan")


def lop_curve(model, lam, pmax):
    """(p, t) on a grid over 1..pmax; NaN where t is not a positive finite
    value (log axis) or where the pole parameter + p changes sign."""
    n = max(1, min(400, int(round(8 * (pmax - 1)))))
    ps = [1.0 + (pmax - 1.0) * i / n for i in range(n + 1)] if pmax > 1 else [1.0]
    ys, prev = [], None
    for p in ps:
        t = lop_eval(model, lam, p)
        side = (lam[LOP_POLE[model]] + p) > 0
        if prev is not None and side != prev:
            t = float("nan")
        prev = side
        ys.append(t if math.isfinite(t) and t > 0 else float("nan"))
    return ps, ys


def lop_fit(fits, run_id, xport, variant, nbytes, stat, ranks):
    """((lambdas, r2, pmax), None) of the "ok" fits.csv row of this data set
    (the last when repeated), or (None, why)."""
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
    lam = [fnum(hit.get("l%d" % k)) for k in range(1, LOP_NPAR.get(hit.get("model"), 3) + 1)]
    if None in lam:
        return None, "parameters missing"
    return (lam, fnum(hit.get("r2")), fnum(hit.get("pmax"))), None


def lop_no_fit_notes(missing):
    """[(series, why)] -> one line per reason: "no fit for a, b: why"."""
    by = {}
    for name, why in missing:
        why = why.strip()
        why = why[len("no fit:"):].strip() if why.startswith("no fit:") else why
        by.setdefault(why, []).append(name)
    return ["no fit for %s: %s" % (", ".join(names), why) for why, names in by.items()]


def lop_select(rows):
    """The kernel rows of one figure: the largest N, its smallest size and
    one transport; (rows, N, bytes, pmax)."""
    n = max(r["ranks"] for r in rows)
    nbytes = min(r["bytes"] for r in rows if r["ranks"] == n)
    rows = [r for r in rows if r["ranks"] == n and r["bytes"] == nbytes]
    xport = rows[-1]["xport"]
    rows = [r for r in rows if r["xport"] == xport]
    pmax = max([r["fanin"] for r in rows if r["fanin"] is not None] or [max(1, n - 1)])
    return rows, n, nbytes, pmax


def lop_legend(ax, any_over, notes, fontsize=8):
    """The house legend right of the axes (hollow-marker note included),
    with one text-only entry per fit not drawn and why."""
    handles, labels = ax.get_legend_handles_labels()
    if any_over:
        handles.append(Line2D([], [], marker="o", color="gray", markerfacecolor="white",
                              linestyle="none"))
        labels.append(OVERSUB_NOTE)
    for t in lop_no_fit_notes(notes):
        handles.append(Line2D([], [], linestyle="none"))
        labels.append(textwrap.fill(t, 44))
    ax.legend(handles, labels, fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0)
