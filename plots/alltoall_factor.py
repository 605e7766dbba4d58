#!/usr/bin/env python3
"""Sur et al. Figs. 14 and 16-17 as factors: the factor of improvement of each
ibchar variant over MPI_Alltoall (the `mpi` variant of the same run and N)
against the block size, one panel per N.

usage: alltoall_factor.py DIR  ->  DIR/alltoall_factor.png, .pdf, .data.csv
factor = p50(mpi) / p50(variant) (the row's factor_vs_mpi when present);
> 1 means the variant is faster.  Without mpi rows the panel says so.
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

ORDER = ["hrwg", "hrwg-multi", "de", "hypercube", "bruck", "pairwise", "direct", "mpi-pairwise"]


def main(argv):
    d, rows, meta = ibcplot.usage_dir("alltoall_factor.py", argv, "alltoall")
    ranks = sorted({r["ranks"] for r in rows if r["ranks"] is not None})
    fig, axes = ibcplot.plt.subplots(1, len(ranks), figsize=(4.6 * len(ranks) + 2, 5),
                                     squeeze=False)
    axes = axes[0]
    any_over = False
    for ax, n in zip(axes, ranks):
        base = {(r["run_id"], r["bytes"]): r["p50_us"] for r in rows
                if r["variant"] == "mpi" and r["ranks"] == n and r["p50_us"]}
        pts = []
        for r in rows:
            if r["ranks"] != n or r["variant"] not in ORDER or not r["p50_us"] \
                    or r["impl"] == "model":
                continue
            f = ibcplot.extra_float(r, "factor_vs_mpi")
            if f is None and (r["run_id"], r["bytes"]) in base:
                f = base[(r["run_id"], r["bytes"])] / r["p50_us"]
            if f is not None:
                q = dict(r)
                q["p50_us"] = f
                q["ci_lo_us"] = q["ci_hi_us"] = None
                pts.append(q)
        ax.set_title("factor over MPI_Alltoall, N = %d" % n, fontsize=10)
        if not pts:
            ibcplot.message(ax, "no mpi rows at N = %d:\nrun the -<mpi> build (--mpi)" % n)
            ax.set_axis_off()
            continue
        series = sorted(ibcplot.group_series(pts, xkey="bytes").items(),
                        key=lambda it: ORDER.index(it[1][0]["variant"]))
        xs_all = []
        for i, (label, srows) in enumerate(series):
            color, marker = ibcplot.style(i, srows[0]["variant"])
            xs = [r["bytes"] for r in srows]
            over = [r["oversub"] == 1 for r in srows]
            ibcplot.draw_series(ax, label, xs, [r["p50_us"] for r in srows], over, color,
                                marker)
            xs_all += xs
            any_over |= any(over)
        ax.axhline(1.0, color="gray", linewidth=1)
        ibcplot.int_axis(ax, xs_all, log2=True, labels=ibcplot.size_label)
        ax.set_xlabel("bytes per pair")
        ax.set_ylabel("factor of improvement (> 1: faster than MPI_Alltoall)")
        ax.grid(True, which="both", alpha=0.3)
    ibcplot.legend_with_oversub(axes[-1], any_over)
    fig.suptitle("All-to-all factor over MPI_Alltoall\n%s" % ibcplot.title_suffix(meta, rows),
                 fontsize=10)
    ibcplot.save(fig, d, "alltoall_factor",
                 paper=("sur", "Figs. 14 and 16-17, as factors of improvement over the baselines"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
