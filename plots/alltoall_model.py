#!/usr/bin/env python3
"""Sur et al.'s analysis, closed into a loop: the cost models against the
measurement (left: each variant's back-to-back time per call, measured (the
loop's median, or its mean in a run from before the median: the rows'
measured_as, in the legend and on the axis), and
ibchar's model (dashed) and the paper's equation as printed (dotted), at the
largest N of the run), and Fig. 20's extrapolation (right: DE against the
direct ring with rendezvous at 4 KiB per pair up to p = 4096, from the
parameters the run measured, buffers reused).

usage: alltoall_model.py DIR  ->  DIR/alltoall_model.png, .pdf, .data.csv
Needs the impl=model rows and DIR/alltoall_extrapolation.csv that the
all-to-all bench writes (not with --no-model).
"""
import csv
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

ORDER = ["hrwg", "hrwg-multi", "de", "hypercube", "bruck", "pairwise", "direct"]
# what a model row's measured_b2b_us is (its measured_as); a run before that
# key measured the loop's mean
AS_NAME = {"b2b_p50_us": "median", "paper_us": "mean"}


def measured_as(row):
    return AS_NAME.get(row["extra"].get("measured_as", "paper_us"), "?")


def left(ax, rows):
    models = [r for r in rows if r["impl"] == "model" and r["ranks"] is not None]
    if not models:
        ibcplot.message(ax, "no impl=model rows in this run\n(measured with --no-model, "
                        "or every N oversubscribed?)")
        ax.set_axis_off()
        return
    n = max(r["ranks"] for r in models)
    models = [r for r in models if r["ranks"] == n]
    variants = [v for v in ORDER if any(r["variant"] == v for r in models)]
    xs_all, ys_all = [], []
    bases = sorted({measured_as(r) for r in models})
    for i, v in enumerate(variants):
        pts = sorted((r["bytes"], ibcplot.extra_float(r, "measured_b2b_us"), r["p50_us"],
                      ibcplot.extra_float(r, "literal_us")) for r in models if r["variant"] == v)
        color, marker = ibcplot.style(i, v)
        xs = [p[0] for p in pts]
        meas, pred, lit = [p[1] for p in pts], [p[2] for p in pts], [p[3] for p in pts]
        base = "/".join(sorted({measured_as(r) for r in models if r["variant"] == v}))
        ibcplot.draw_series(ax, "%s measured (%s)" % (v, base), xs, meas, [False] * len(xs),
                            color, marker)
        ibcplot.draw_series(ax, "%s model" % v, xs, pred, [False] * len(xs), color, "",
                            linestyle="--")
        if v in ("hrwg", "de"):
            ibcplot.draw_series(ax, "%s eq. as printed" % v, xs,
                                [max(y or 0, 1e-3) for y in lit], [False] * len(xs), color, "",
                                linestyle=":")
        xs_all += xs
        ys_all += [y for y in meas + pred if y]
    ibcplot.int_axis(ax, xs_all, log2=True, labels=ibcplot.size_label)
    ax.set_yscale("log")
    ax.set_xlabel("bytes per pair")
    ax.set_ylabel("time per call, back to back: the loop's %s (µs)" % " or ".join(bases))
    ax.set_title("model against measurement, N = %d" % n, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)


def right(ax, d):
    path = os.path.join(d, "alltoall_extrapolation.csv")
    try:
        rows = list(csv.DictReader(open(path)))
    except OSError:
        rows = []
    rows = [r for r in rows if r["what"].startswith("de-vs-direct") and r["reuse"] == "1"]
    if not rows:
        ibcplot.message(ax, "no %s" % os.path.basename(path))
        ax.set_axis_off()
        return
    n = max(int(r["ranks_measured"]) for r in rows)
    rows = [r for r in rows if int(r["ranks_measured"]) == n]
    xs = []
    for i, (what, label) in enumerate((("de-vs-direct-eq3-eq4", "eq. 3 and 4 as printed"),
                                       ("de-vs-direct-ibchar", "ibchar's model"))):
        # no prediction (written empty; <= 0 in a run before that): not drawn
        sel = sorted((int(r["p"]), float(r["direct_us"]), float(r["de_us"]), r["gain_pct"])
                     for r in rows if r["what"] == what and r["direct_us"] and r["de_us"]
                     and float(r["direct_us"]) > 0 and float(r["de_us"]) > 0)
        if not sel:
            continue
        xs = [s[0] for s in sel]
        ls = "-" if i else ":"
        ibcplot.draw_series(ax, "direct ring, rendezvous (%s)" % label, xs, [s[1] for s in sel],
                            [False] * len(xs), "tab:pink", "*", linestyle=ls)
        ibcplot.draw_series(ax, "DE (%s)" % label, xs, [s[2] for s in sel],
                            [False] * len(xs), "tab:green", "D", linestyle=ls)
        g = [s for s in sel if s[0] == 1024]
        if g:
            ax.annotate("gain at p = 1024: %s%%" % g[0][3], xy=(1024, g[0][2]), fontsize=8,
                        xytext=(-120, 12 + 14 * i), textcoords="offset points")
    if not xs:
        ibcplot.message(ax, "no prediction > 0 in %s" % os.path.basename(path))
        ax.set_axis_off()
        return
    ibcplot.int_axis(ax, xs, log2=True)
    ax.set_yscale("log")
    ax.set_xlabel("processes p")
    ax.set_ylabel("predicted time per call at 4 KiB per pair (µs)")
    ax.set_title("extrapolation (cf. Fig. 20; the paper: 77%% gain at 1K), "
                 "parameters from N = %d" % n, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def main(argv):
    d, rows, meta = ibcplot.usage_dir("alltoall_model.py", argv, "alltoall")
    fig, axes = ibcplot.plt.subplots(1, 2, figsize=(15, 5.6))
    left(axes[0], rows)
    right(axes[1], d)
    fig.suptitle("All-to-all cost models (Sur et al. eq. 1-4)\n%s"
                 % ibcplot.title_suffix(meta, rows), fontsize=10)
    ibcplot.save(fig, d, "alltoall_model",
                 paper=("sur", "the analysis (Eqs. 1-4) and Fig. 20's extrapolation"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
