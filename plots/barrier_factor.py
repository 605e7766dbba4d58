#!/usr/bin/env python3
"""Figure 4 (and 3b) of Kini et al.: factor of improvement of RPE, RDS and RGM
over MPI-PE (left) and over MPI-DS (right) vs number of ranks.

usage: barrier_factor.py DIR  ->  DIR/barrier_factor.png and .pdf
factor = p50(baseline) / p50(variant), both from the same run (run_id) and N;
> 1 means the ibchar variant is faster.  The factor_vs_mpi_pe/_ds values in
`extra` are used when present.  Without MPI rows the factors are taken over
ibchar's two-sided PE/DS instead, and the panel says so.
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

VARIANTS = ("rpe", "rds", "rgm")
# (panel, extra key, MPI baseline variant, two-sided fallback)
PANELS = (("MPI-PE", "factor_vs_mpi_pe", "mpi-pe", "pe"),
          ("MPI-DS", "factor_vs_mpi_ds", "mpi-ds", "ds"))


def baselines(rows, variant):
    """(run_id, ranks) -> p50 of `variant`."""
    out = {}
    for r in rows:
        if r["variant"] == variant and r["p50_us"]:
            out.setdefault((r["run_id"], r["ranks"]), r["p50_us"])
    return out


def panel(ax, rows, name, key, mpi_var, fallback, meta):
    base_mpi = baselines(rows, mpi_var)
    base_fb = baselines(rows, fallback)
    has_extra = any(key in r["extra"] for r in rows if r["variant"] in VARIANTS)
    if has_extra or base_mpi:
        base, bname, note = base_mpi, name, ""
    elif base_fb:
        base, bname = base_fb, "two-sided %s" % fallback.upper()
        note = "no %s rows in this run:\nfactor over ibchar's two-sided %s instead" \
            % (name, fallback.upper())
    else:
        ibcplot.message(ax, "no %s (nor two-sided %s) rows in this run:\nno factor to show"
                        % (name, fallback.upper()))
        ax.set_title("factor of improvement over %s" % name, fontsize=10)
        ax.set_axis_off()
        return False
    pts = []
    for r in rows:
        if r["variant"] not in VARIANTS or not r["p50_us"]:
            continue
        f = ibcplot.extra_float(r, key) if bname == name else None
        if f is None:
            b = base.get((r["run_id"], r["ranks"]))
            if b is None:
                continue
            f = b / r["p50_us"]
        pts.append((r, f))
    series = ibcplot.group_series([r for r, _ in pts])
    fac = {id(r): f for r, f in pts}
    any_over, xs_all = False, []
    for i, (label, srows) in enumerate(sorted(series.items(),
                                              key=lambda kv: (VARIANTS.index(kv[1][0]["variant"]),
                                                              kv[1][0]["fanin"] or 0))):
        color, marker = ibcplot.style(i, srows[0]["variant"], srows[0]["fanin"])
        xs = [r["ranks"] for r in srows]
        ys = [fac[id(r)] for r in srows]
        over = [r["oversub"] == 1 for r in srows]
        ibcplot.draw_series(ax, label, xs, ys, over, color, marker)
        any_over |= any(over)
        xs_all += xs
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.annotate("parity with %s" % bname, xy=(1, 1.0), xycoords=("axes fraction", "data"),
                xytext=(-4, 3), textcoords="offset points", fontsize=8, ha="right")
    ibcplot.int_axis(ax, xs_all)
    ibcplot.pus_line(ax, meta)
    ax.set_xlabel("number of ranks (group size N)")
    ax.set_ylabel("factor of improvement = p50(%s) / p50(variant)  (×)" % bname)
    ax.set_title("factor of improvement over %s" % bname, fontsize=10)
    ax.grid(True, alpha=0.3)
    if note:
        ax.text(0.02, 0.02, note, transform=ax.transAxes, fontsize=8, va="bottom",
                bbox=dict(boxstyle="round", fc="#fff3cd", ec="#c9a227"))
    ibcplot.legend_with_oversub(ax, any_over, loc="best", bbox_to_anchor=None)
    return True


def main(argv):
    d, rows, meta = ibcplot.usage_dir("barrier_factor.py", argv, "barrier")
    fig, axes = ibcplot.plt.subplots(1, 2, figsize=(12, 5.2))
    for ax, (name, key, mpi_var, fb) in zip(axes, PANELS):
        panel(ax, rows, name, key, mpi_var, fb, meta)
    fig.suptitle("Factor of improvement of RPE/RDS/RGM (cf. Kini et al. Figs. 3b, 4)\n%s"
                 % ibcplot.title_suffix(meta, rows), fontsize=10)
    ibcplot.save(fig, d, "barrier_factor",
                 paper=("kini", "Figs. 3b and 4: factor of improvement of RPE, RDS and RGM"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
