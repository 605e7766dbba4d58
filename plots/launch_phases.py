#!/usr/bin/env python3
"""Job start-up (the thesis, Figs. 2.5 and 2.6): spawn, init and total time of
an MPI hello (MPI_Init + MPI_Finalize; else ibchar's PMI exchange, else
`true`, whichever the run has) against the job size n x c, one line per launcher and
processes per host; and the growth of the spawn phase of `true` with the
number of node agents, with the log n and linear fits of launch-growth.csv.

usage: launch_phases.py DIR  ->  DIR/launch_phases.png, .pdf, .data.csv
Reads DIR/results.csv (suite launch, kind=phase rows: p50 of the trials) and
DIR/launch-growth.csv.
"""
import math
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

ORDER = ["tree", "tree-k2", "flat", "mpich", "openmpi", "srun", "srun-pmix"]


def lorder(name):
    return (ORDER.index(name) if name in ORDER else len(ORDER), name)


def main(argv):
    d, rows, meta = ibcplot.usage_dir("launch_phases.py", argv, "launch")
    ph = [r for r in rows if r["extra"].get("kind") == "phase" and r["p50_us"] is not None]
    progs = {r["extra"].get("program") for r in ph}
    prog = next((p for p in ("hello", "pmi", "true") if p in progs), "hello")
    fig, axes = ibcplot.plt.subplots(1, 4, figsize=(22, 5.6))
    launchers = sorted({r["extra"]["launcher"] for r in ph}, key=lorder)
    # a line per launcher along the longer sweep: over c at each host count
    # (label n=HOSTS), or over the host counts at each c (label c=C)
    nh = len({r["extra"].get("hosts") for r in ph})
    nc = len({r["ppn"] for r in ph})
    over_c = nc >= nh

    def key(r):
        return r["extra"].get("hosts") if over_c else r["ppn"]

    for ax, phase in zip(axes[:3], ("spawn", "init", "total")):
        ax.set_title("%s: %s (p50 of the trials)" % (prog, phase), fontsize=10)
        for li, lname in enumerate(launchers):
            sel_all = [r for r in ph if r["extra"]["launcher"] == lname
                       and r["extra"].get("program") == prog and r["extra"].get("phase") == phase]
            groups = sorted({(key(r), r["extra"].get("mult", "1")) for r in sel_all},
                            key=lambda g: (int(g[0]), int(g[1])))
            for gi, (k, mult) in enumerate(groups):
                sel = sorted((r for r in sel_all if key(r) == k and r["extra"].get("mult", "1") == mult),
                             key=lambda r: r["ranks"])
                color, marker = ibcplot.style(li)
                lab = "%s %s=%s%s" % (lname, "n" if over_c else "c", k,
                                      "" if mult == "1" else " x%s agents" % mult)
                ibcplot.draw_series(ax, lab, [r["ranks"] for r in sel],
                                    [r["p50_us"] / 1e3 for r in sel], [False] * len(sel), color,
                                    marker, linestyle=["-", "--", ":", "-."][gi % 4])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("processes (n hosts x c per host)")
        ax.set_ylabel("ms")
        ax.grid(True, which="both", alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=6, ncol=2)
        else:
            ibcplot.message(ax, "no %s rows" % phase)
    ax = axes[3]
    ax.set_title("true: spawn against node agents, with the growth fits", fontsize=10)
    growth = ibcplot.read_csv(os.path.join(d, "launch-growth.csv")) or []
    cmin = min((r["ppn"] for r in ph), default=1)
    for lname in launchers:
        sel = sorted((r for r in ph if r["extra"]["launcher"] == lname and r["ppn"] == cmin
                      and r["extra"].get("program") == "true" and r["extra"].get("phase") == "spawn"
                      and r["extra"].get("mult", "1") == "1"), key=lambda r: r["nodes"])
        if not sel:
            continue
        color, marker = ibcplot.style(launchers.index(lname))
        xs = [r["nodes"] for r in sel]
        ibcplot.draw_series(ax, "%s c=%d" % (lname, cmin), xs, [r["p50_us"] / 1e3 for r in sel],
                            [False] * len(sel), color, marker)
        for g in growth:
            if g["variant"] == "%s:true:spawn" % lname and g["ppn"] == str(cmin) and g["mult"] == "1":
                a, b = ibcplot.fnum(g["log_a_us"]), ibcplot.fnum(g["log_b_us"])
                if a is not None and b is not None and len(xs) > 1:
                    fx = [xs[0] * (xs[-1] / xs[0]) ** (k / 20) for k in range(21)]
                    ax.plot(fx, [(a + b * math.log2(x)) / 1e3 for x in fx], color=color, alpha=0.4,
                            linewidth=3, label="%s: a + b log2 n (R2 %s; linear %s)"
                            % (lname, g["log_r2"], g["lin_r2"]))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("node agents n (hosts x multiplier)")
    ax.set_ylabel("ms")
    ax.grid(True, which="both", alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=6)
    else:
        ibcplot.message(ax, "no `true` rows")
    fig.suptitle("Job start-up: spawn, init, total (thesis Figs. 2.5/2.6)\n%s"
                 % ibcplot.title_suffix(meta, rows), fontsize=10)
    ibcplot.save(fig, d, "launch_phases",
                 paper=("sridhar", "Figs. 2.5 and 2.6: job start-up time, spawn and init phases"))
    return 0


if __name__ == "__main__":
    ibcplot.run(main, "launch_phases.py")
