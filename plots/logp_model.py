#!/usr/bin/env python3
"""The LoP model (Hoefler & Rehm) and LogGP against the collectives the
run measured, and beyond.  Left: predicted against measured time for every
row of DIR/lop-model.csv (barrier and all-to-all variants, every N and
size), log-log, with the line y = x and a +-15% band; circles LoP (§4.4
as printed), squares LoP-RTT (k RTT(k)/2 per round), triangles LogGP, one
colour per algorithm, hollow: the measurement was
oversubscribed.  Right: DIR/lop-extrapolation.csv, the predicted time
against N (1024 to 65536, log2 axis) per algorithm at its smallest size
(RGM at fan-in 7, or the largest present), LoP solid, LoP-RTT dotted,
LogGP dashed.

usage: logp_model.py DIR  ->  DIR/logp_model.png, .pdf, .data.csv
Both CSVs are written by `ibchar model DIR` or by `ibchar run logp barrier
alltoall`; without lop-model.csv the figure says so (exit 0).
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

NO_MODEL = "no lop-model.csv: run `ibchar model DIR` or `ibchar run logp barrier alltoall`"
ORDER = ["barrier/rpe", "barrier/rds", "barrier/rgm", "barrier/pe", "barrier/ds",
         "alltoall/hrwg", "alltoall/hrwg-multi", "alltoall/de", "alltoall/hypercube",
         "alltoall/bruck", "alltoall/pairwise", "alltoall/direct"]
# the barrier colours of ibcplot (RGM: its fan-in shades), distinct ones
# for the all-to-all algorithms, tab20 for anything else
COLORS = {"alltoall/hrwg": "tab:red", "alltoall/hrwg-multi": "tab:pink",
          "alltoall/de": "tab:olive", "alltoall/hypercube": "tab:cyan",
          "alltoall/bruck": "tab:gray", "alltoall/pairwise": "navy",
          "alltoall/direct": "goldenrod"}
MODELS = (("LoP", "lop_us", "o", "-"), ("LoP-RTT", "lop_rtt_us", "s", ":"),
          ("LogGP", "loggp_us", "^", "--"))
BAND = 0.15






def algo(r):
    """(key, label, variant, fan-in) of a row: suite/variant, RGM per fan-in."""
    suite, variant = r.get("suite") or "?", r.get("variant") or "?"
    fanin = ibcplot.fnum(r.get("fanin"))
    fanin = int(fanin) if fanin is not None else None
    key = "%s/%s" % (suite, variant)
    label = "%s %s" % (suite, variant)
    if variant == "rgm" and fanin is not None:
        key += " l=%d" % fanin
        label += " l=%d" % fanin
    return key, label, variant, fanin


class Palette:
    """One colour per algorithm key, the same in both panels."""

    def __init__(self):
        self.colors, self.extra = {}, 0

    def get(self, key, variant, fanin):
        if key not in self.colors:
            base = key.split(" ")[0]
            if variant == "rgm":
                c, _ = ibcplot.style(0, "rgm", fanin)
            elif base in COLORS:
                c = COLORS[base]
            elif variant in ibcplot.BASE_COLORS:
                c = ibcplot.BASE_COLORS[variant]
            else:
                c = ibcplot.plt.get_cmap("tab20")((2 * self.extra + 1) % 20)
                self.extra += 1
            self.colors[key] = c
        return self.colors[key]


def sort_key(key):
    base = key.split(" ")[0]
    fan = int(key.split("l=")[1]) if "l=" in key else 0
    return (ORDER.index(base) if base in ORDER else len(ORDER), base, fan)


def left(ax, d, pal, labels):
    rows = ibcplot.read_csv(os.path.join(d, "lop-model.csv"))
    if rows is None:
        ax.set_title("predicted against measured", fontsize=10)
        ibcplot.message(ax, NO_MODEL)
        ax.set_axis_off()
        return False
    groups, skipped = {}, []
    for r in rows:
        meas = ibcplot.fnum(r.get("measured_us"))
        key, label, variant, fanin = algo(r)
        for name, col, _, _ in MODELS:
            pred = ibcplot.fnum(r.get(col))
            if meas is None or pred is None or meas <= 0 or pred <= 0:
                skipped.append("%s %s N=%s %s B: measured %s, predicted %s"
                               % (name, label, r.get("ranks"), r.get("bytes"),
                                  r.get("measured_us") or "-", r.get(col) or "-"))
                continue
            over = ibcplot.fnum(r.get("oversub")) == 1
            groups.setdefault((key, name), []).append((meas, pred, over))
            labels.setdefault(key, (label, variant, fanin))
    if not groups:
        ax.set_title("predicted against measured", fontsize=10)
        ibcplot.message(ax, "lop-model.csv has no row with a measured and a predicted time")
        ax.set_axis_off()
        return False
    stats = []
    for name, _, _, _ in MODELS:
        errs = sorted(p / m - 1.0 for (_, nm), pts in groups.items() if nm == name
                      for m, p, _ in pts)
        if errs:
            inside = sum(1 for e in errs if abs(e) <= BAND)
            stats.append("%s: %d/%d within ±%d%%, median error %+.0f%%"
                         % (name, inside, len(errs), BAND * 100, 100 * errs[len(errs) // 2]))
    ax.set_title("predicted against measured, every row of lop-model.csv\n%s"
                 % "\n".join(stats), fontsize=9)
    allv = []
    any_over = False
    for (key, name) in sorted(groups, key=lambda kn: (sort_key(kn[0]), kn[1])):
        pts = sorted(groups[(key, name)])
        _, _, marker, _ = [m for m in MODELS if m[0] == name][0]
        label, variant, fanin = labels[key]
        color = pal.get(key, variant, fanin)
        over = [o for _, _, o in pts]
        any_over |= any(over)
        ibcplot.draw_series(ax, "%s %s" % (name, label), [m for m, _, _ in pts],
                            [p for _, p, _ in pts], over, color, marker, linestyle="none")
        allv += [v for m, p, _ in pts for v in (m, p)]
    lo, hi = min(allv) / 1.6, max(allv) * 1.6
    xs = [lo * (hi / lo) ** (i / 50.0) for i in range(51)]
    ax.fill_between(xs, [x * (1 - BAND) for x in xs], [x * (1 + BAND) for x in xs],
                    color="gray", alpha=0.35, linewidth=0, zorder=0)
    for f in (1 - BAND, 1 + BAND):
        ax.plot(xs, [x * f for x in xs], color="gray", linewidth=0.6, linestyle=":", zorder=1)
    ax.plot(xs, xs, color="black", linewidth=0.9, zorder=1)
    ax.annotate("y = x (±%d%% shaded)" % (BAND * 100), xy=(xs[38], xs[38] * (1 + BAND)),
                xytext=(-4, 4), textcoords="offset points", rotation=0, fontsize=8,
                ha="right", va="bottom", color="black")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("measured (µs, lop-model.csv measured_us)")
    ax.set_ylabel("predicted (µs)")
    ax.grid(True, which="both", alpha=0.25)
    if skipped:
        more = " (and %d more)" % (len(skipped) - 3) if len(skipped) > 3 else ""
        ax.text(0.98, 0.02, "not on the log axes (a value <= 0 or missing):\n%s%s"
                % ("\n".join(skipped[:3]), more), transform=ax.transAxes, fontsize=7,
                ha="right", va="bottom", color="dimgray")
    return any_over


def right(ax, d, pal, labels, same):
    ax.set_title("extrapolation, lop-extrapolation.csv", fontsize=10)
    rows = ibcplot.read_csv(os.path.join(d, "lop-extrapolation.csv"))
    if not rows:
        ibcplot.message(ax, "no lop-extrapolation.csv" if rows is None
                        else "lop-extrapolation.csv has no rows")
        ax.set_axis_off()
        return
    # per suite/variant: the smallest size; RGM: fan-in 7, else the largest
    by = {}
    for r in rows:
        n, b = ibcplot.fnum(r.get("ranks")), ibcplot.fnum(r.get("bytes"))
        if n is None or n <= 0:
            continue
        by.setdefault("%s/%s" % (r.get("suite") or "?", r.get("variant") or "?"), []).append(
            (b if b is not None else 0.0, r))
    picked = {}
    for base, lst in by.items():
        small = min(b for b, _ in lst)
        sel = [r for b, r in lst if b == small]
        fans = sorted({int(ibcplot.fnum(r.get("fanin"))) for r in sel if ibcplot.fnum(r.get("fanin")) is not None})
        if fans:
            fan = 7 if 7 in fans else fans[-1]
            sel = [r for r in sel if ibcplot.fnum(r.get("fanin")) == fan]
        picked[base] = (small, sel)
    xs_all, sizes, drawn, seen = [], {}, 0, {}
    for base in sorted(picked, key=sort_key):
        small, sel = picked[base]
        key, label, variant, fanin = algo(sel[0])
        labels.setdefault(key, (label, variant, fanin))
        color = pal.get(key, variant, fanin)
        sizes.setdefault(base.split("/")[0], small)
        sig = []
        for name, col, marker, ls in MODELS:
            pts = {}
            for r in sel:
                v = ibcplot.fnum(r.get(col))
                if v is not None and v > 0:
                    pts[int(ibcplot.fnum(r.get("ranks")))] = v
            if not pts:
                continue
            xs = sorted(pts)
            ibcplot.draw_series(ax, "%s %s" % (name, label), xs, [pts[x] for x in xs],
                                [False] * len(xs), color, marker, linestyle=ls)
            xs_all += xs
            drawn += 1
            sig.append((name, tuple((x, pts[x]) for x in xs)))
        # the same predictions as an algorithm drawn before: its lines hide
        # under this one's; the legend says so
        sig = tuple(sig)
        if sig and sig in seen:
            same[key] = seen[sig]
        else:
            seen.setdefault(sig, label)
    if not drawn:
        ibcplot.message(ax, "lop-extrapolation.csv has no positive prediction")
        ax.set_axis_off()
        return
    ibcplot.int_axis(ax, xs_all, log2=True)
    ax.set_yscale("log")
    ax.set_xlabel("processes N")
    ax.set_ylabel("predicted time (µs)")
    ax.set_title("extrapolation, lop-extrapolation.csv (%s; RGM fan-in 7 or the largest)"
                 % ", ".join("%s %d B" % (s, b) for s, b in sorted(sizes.items())), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)


def legend(ax, pal, labels, same, any_over):
    """One legend right of ax: the algorithms' colours, then the two
    models' marker and line styles (and the hollow-marker note)."""
    if not pal.colors:
        return  # nothing drawn: no key to explain
    handles, texts = [], []
    for key in sorted(pal.colors, key=sort_key):
        handles.append(Line2D([], [], color=pal.colors[key], linewidth=6))
        texts.append(labels.get(key, (key,))[0]
                     + ("\n  (right: the same as %s)" % same[key] if key in same else ""))
    for name, _, marker, ls in MODELS:
        handles.append(Line2D([], [], color="black", marker=marker, linestyle=ls))
        texts.append("%s (left: marker; right: %s line)"
                     % (name, {"-": "solid", ":": "dotted"}.get(ls, "dashed")))
    if any_over:
        handles.append(Line2D([], [], marker="o", color="gray", markerfacecolor="white",
                              linestyle="none"))
        texts.append(ibcplot.OVERSUB_NOTE)
    ax.legend(handles, texts, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0),
              borderaxespad=0, handlelength=2.4)


def main(argv):
    d, rows, meta = ibcplot.usage_dir("logp_model.py", argv, "logp")
    fig, axes = ibcplot.plt.subplots(1, 2, figsize=(17, 7.2))
    pal, labels, same = Palette(), {}, {}
    any_over = left(axes[0], d, pal, labels)
    if os.path.exists(os.path.join(d, "lop-model.csv")) or \
            os.path.exists(os.path.join(d, "lop-extrapolation.csv")):
        right(axes[1], d, pal, labels, same)
    else:
        axes[1].set_title("extrapolation", fontsize=10)
        ibcplot.message(axes[1], NO_MODEL.replace("lop-model.csv", "lop-extrapolation.csv"))
        axes[1].set_axis_off()
    legend(axes[1], pal, labels, same, any_over)
    fig.suptitle("The collectives by LoP (Hoefler & Rehm; L(p), o_s(p) of this run) and by LogGP "
                 "(PRTT)\n%s" % ibcplot.title_suffix(meta, rows), fontsize=10)
    ibcplot.save(fig, d, "logp_model",
                 paper=("hoefler", "the LoP model against measured collectives (section 4.4)"))
    return 0


if __name__ == "__main__":
    ibcplot.run(main, "logp_model.py")
