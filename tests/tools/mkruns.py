#!/usr/bin/env python3
"""Synthetic results directories for tests/tools/compare.t, with known answers.

mkruns.py DIR [options]: writes DIR/results.csv, samples.csv and meta.csv holding
--runs R runs (run_ids PREFIX.1 .. PREFIX.R) of a fixed set of rows:

  barrier  rds, rpe, rgm (fanin 3)   N = 2..7, bytes 0          18 rows
  alltoall hrwg, de                  N = 2, 4; 1, 32, 4K, 128K  16 rows
  link     write-lat, read-lat       N = 2; 8 .. 64K (5)        10 rows
  probe    probe-cross, probe-same,  N = 2                       3 rows
           probe-write

A row's figure in run r is its base time x exp(N(0, s_row)) x exp(e_r) x SCALE, with
s_row the suite's row scatter (--noise SUITE=S, default 0.02) drawn for every run and
row, e_r the run's own effect on a whole suite (--suite-noise S, default 0.01), and
SCALE from --scale SEL=F (repeatable, the last match wins).  Each run keeps --samples
samples (default 200) of the figure x lognormal(0, 0.05), in iteration order.  Each
run's meta.csv names --cpu MODEL (cpu_model, default "Synthetic CPU"; an empty one is left
out) and --vm-host-cpu MODEL (vm_host_cpu, a guest's host; default none).
SEL is `all`, a suite, SUITE.VARIANT, or `first:K` (the first K rows of the list above,
probes excepted).  --oversub SEL marks rows oversubscribed; --kept SEL=K keeps K
samples; --probe-us SEL=V sets the rows' placement probe (probe_us, default 0.15).  The seed makes every number reproducible.

mkruns.py split SRC A B [--seed S]: the runs of SRC dealt at random into two
directories A and B, half each (two halves of one set of runs of one build).
"""
import argparse
import csv
import math
import os
import random
import sys

ROWS = []
for v, fanin in (("rds", ""), ("rpe", ""), ("rgm", "3")):
    for n in range(2, 8):
        ROWS.append(("barrier", v, "ibchar", "shm", n, 0, fanin, 2.0 + n * 0.7))
for v in ("hrwg", "de"):
    for n in (2, 4):
        for b in (1, 32, 4096, 131072):
            ROWS.append(("alltoall", v, "ibchar", "shm", n, b, "", 3.0 + n + b / 2000.0))
for v in ("write-lat", "read-lat"):
    for b in (8, 64, 512, 4096, 65536):
        ROWS.append(("link", v, "ibchar", "shm", 2, b, "", 1.0 + b / 5000.0))
for v in ("probe-cross", "probe-same", "probe-write"):
    ROWS.append(("probe", v, "ibchar", "shm", 2, 0, "", 2.0 if v == "probe-same" else 0.15))
FIRST_SEL = [r for r in ROWS if r[0] != "probe"]


def matches(sel, row):
    if sel == "all":
        return True
    if sel.startswith("first:"):
        return row in FIRST_SEL[: int(sel[6:])]
    if "." in sel:
        s, v = sel.split(".", 1)
        return row[0] == s and row[1] == v
    return row[0] == sel


def pairs(items):
    out = []
    for it in items or []:
        sel, val = it.rsplit("=", 1)
        out.append((sel, float(val)))
    return out


def split(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    tables = {}
    for name in ("results.csv", "samples.csv", "meta.csv"):
        with open(os.path.join(a.src, name), newline="") as f:
            tables[name] = list(csv.reader(f))
    runs = sorted({row[1] for row in tables["meta.csv"][1:] if row[0] == "run_id"})
    random.Random(a.seed).shuffle(runs)
    half = {a.a: set(runs[: len(runs) // 2]), a.b: set(runs[len(runs) // 2:])}
    for d, mine in half.items():
        os.makedirs(d, exist_ok=True)
        for name in ("results.csv", "samples.csv"):
            with open(os.path.join(d, name), "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(tables[name][0])
                w.writerows(r for r in tables[name][1:] if r[0] in mine)
        with open(os.path.join(d, "meta.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(tables["meta.csv"][0])
            keep = False
            for r in tables["meta.csv"][1:]:
                if r[0] == "run_id":
                    keep = r[1] in mine
                if keep:
                    w.writerow(r)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "split":
        split(sys.argv[2:])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--prefix", default="run")
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--noise", action="append")
    ap.add_argument("--suite-noise", type=float, default=0.01)
    ap.add_argument("--scale", action="append")
    ap.add_argument("--oversub", action="append", default=[])
    ap.add_argument("--kept", action="append")
    ap.add_argument("--probe-us", action="append")
    ap.add_argument("--cpu", default="Synthetic CPU")
    ap.add_argument("--vm-host-cpu", default="")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    noise = dict(pairs(a.noise))
    scales = pairs(a.scale)
    kept = pairs(a.kept)
    probes = pairs(a.probe_us)
    os.makedirs(a.dir, exist_ok=True)
    rcols = ["run_id", "suite", "variant", "impl", "xport", "launcher", "nodes", "ppn", "ranks", "bytes",
             "fanin", "iters", "warmup", "min_us", "p50_us", "mean_us", "p99_us", "max_us", "stdev_us",
             "ci_lo_us", "ci_hi_us", "skew_us", "wait", "oversub", "probe_us", "extra"]
    with open(os.path.join(a.dir, "results.csv"), "w", newline="") as fr, \
            open(os.path.join(a.dir, "samples.csv"), "w", newline="") as fs, \
            open(os.path.join(a.dir, "meta.csv"), "w", newline="") as fm:
        wr, ws, wm = csv.writer(fr), csv.writer(fs), csv.writer(fm)
        wr.writerow(rcols)
        ws.writerow(["run_id", "suite", "variant", "impl", "xport", "ranks", "bytes", "fanin", "n", "samples_us"])
        wm.writerow(["key", "value"])
        for r in range(1, a.runs + 1):
            run_id = "%s.%d" % (a.prefix, r)
            wm.writerow(["run_id", run_id])
            wm.writerow(["host", "synthetic"])
            if a.cpu:
                wm.writerow(["cpu_model", a.cpu])
            if a.vm_host_cpu:
                wm.writerow(["vm_host_cpu", a.vm_host_cpu])
            effect = {s: rnd.gauss(0, a.suite_noise) for s in ("barrier", "alltoall", "link", "probe")}
            for row in ROWS:
                suite, variant, impl, xport, n, b, fanin, t = row
                scale = 1.0
                for sel, f in scales:
                    if matches(sel, row):
                        scale = f
                k = a.samples
                for sel, f in kept:
                    if matches(sel, row):
                        k = int(f)
                fig = t * math.exp(rnd.gauss(0, noise.get(suite, 0.02)) + effect[suite]) * scale
                v = [fig * rnd.lognormvariate(0, 0.05) for _ in range(k)]
                s = sorted(v)
                over = 1 if any(matches(sel, row) for sel in a.oversub) else 0
                probe = 0.15
                for sel, f in probes:
                    if matches(sel, row):
                        probe = f
                p50 = s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2
                wr.writerow([run_id, suite, variant, impl, xport, "fork", 1, n, n, b, fanin, k, 10,
                             "%.4f" % s[0], "%.4f" % p50, "%.4f" % (sum(s) / k), "%.4f" % s[-1],
                             "%.4f" % s[-1], "0.1", "%.4f" % p50, "%.4f" % p50, "0", "spin", over,
                             "%.4f" % probe, "sync=window"])
                ws.writerow([run_id, suite, variant, impl, xport, n, b, fanin, k, " ".join("%.4f" % x for x in v)])


if __name__ == "__main__":
    main()
