#!/usr/bin/env python3
"""Link-level figures (perftest-style): write/read/send latency vs message
size, and write bandwidth vs message size, ibchar's variants beside
perftest's rows (impl=perftest) when the run has them.

usage: link_latency.py DIR  ->  DIR/link_latency.png and .pdf
Latency: p50 of the one-way time (µs), error bars the 95% CI of the median.
Bandwidth (write-bw-burst, write-bw-stream): the MBps value in `extra` when
present, else bytes / p50 (MB/s).
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

LAT = ("write-lat", "write-lat-lastbyte", "write-lat-imm", "read-lat", "send-lat")


def is_bw(r):
    return r["variant"].startswith("write-bw")


def main(argv):
    d, rows, meta = ibcplot.usage_dir("link_latency.py", argv, "link")
    fig, (ax, bx) = ibcplot.plt.subplots(1, 2, figsize=(12, 5))
    lat = [r for r in rows if not is_bw(r) and r["bytes"] is not None]
    bw = [r for r in rows if is_bw(r) and r["bytes"] is not None]

    any_over, xs_all, ys_all = False, [], []
    for i, (label, srows) in enumerate(sorted(ibcplot.group_series(lat, xkey="bytes").items())):
        color, marker = ibcplot.style(i)
        xs = [r["bytes"] for r in srows]
        ys = [r["p50_us"] for r in srows]
        over = [r["oversub"] == 1 for r in srows]
        ibcplot.draw_series(ax, label, xs, ys, over, color, marker, yerr=ibcplot.yerr_ci(srows))
        any_over |= any(over)
        xs_all += xs
        ys_all += ys
    if lat:
        ibcplot.int_axis(ax, [x for x in xs_all if x > 0] or xs_all, log2=min(xs_all) > 0,
                         labels=ibcplot.size_label)
        ibcplot.auto_log_y(ax, ys_all)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("one-way latency, median (µs)")
        ax.grid(True, which="both", alpha=0.3)
        ibcplot.legend_with_oversub(ax, any_over, loc="upper left", bbox_to_anchor=None)
    else:
        ibcplot.message(ax, "no latency rows (%s) in this run" % ", ".join(LAT))
        ax.set_axis_off()
    ax.set_title("latency vs message size", fontsize=10)

    series = {}
    for r in bw:
        mbps = ibcplot.extra_float(r, "MBps")
        if mbps is None and r["p50_us"]:
            mbps = r["bytes"] / r["p50_us"]
        if mbps is not None:
            series.setdefault(ibcplot.series_label(r), []).append((r["bytes"], mbps, r["oversub"] == 1))
    if series:
        xs_bw, bw_over = [], False
        for i, (label, pts) in enumerate(sorted(series.items())):
            pts.sort()
            xs, ys, over = zip(*pts)
            color, marker = ibcplot.style(i)
            ibcplot.draw_series(bx, label, xs, ys, over, color, marker,
                                linestyle="--" if "(" in label else "-")
            xs_bw += xs
            bw_over |= any(over)
        ibcplot.int_axis(bx, xs_bw, log2=min(xs_bw) > 0, labels=ibcplot.size_label)
        bx.set_yscale("log")
        bx.set_xlabel("message size (bytes)")
        bx.set_ylabel("RDMA write bandwidth (MB/s)")
        bx.grid(True, which="both", alpha=0.3)
        ibcplot.legend_with_oversub(bx, bw_over, loc="upper left", bbox_to_anchor=None)
    else:
        ibcplot.message(bx, "no write-bw-burst / write-bw-stream rows in this run")
        bx.set_axis_off()
    bx.set_title("bandwidth vs message size", fontsize=10)
    fig.suptitle("Link characterisation\n%s" % ibcplot.title_suffix(meta, rows), fontsize=10)
    ibcplot.save(fig, d, "link_latency")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
