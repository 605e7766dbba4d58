#!/usr/bin/env python3
"""The channel's designs against their floor (Liu et al.).  Left: one-way
latency, back to back (b2b_p50_us; the median p50 where a row has none),
of the floor probe-write, raw RDMA writes, the four designs and the host
MPI at each message size, each bar labelled with its ratio to the floor
(probe-write up to 64 bytes, where it is drawn; above them rdma-write).  Right: bandwidth (bytes / time per message)
of the -bw variants at each size from 4 KiB up (and zcopy-bw-staged, the
paper's zero copy, where zcopy-bw splits a rendezvous over two cores), labelled with the ratio of
its bandwidth to the host MPI's mpi-bw (else to rdma-write-bw).  The paper's own numbers
(InfiniHost MT23108, PCI-X) are drawn as dotted lines: basic 18.6 us,
optimized 7.4 us; basic 230 MB/s, optimized 520 MB/s, zero copy 857 MB/s.

usage: channel_floor.py DIR  ->  DIR/channel_floor.png, .pdf, .data.csv
"""
import os
import sys

sys.dont_write_bytecode = True  # keep plots/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibcplot  # noqa: E402

LAT = ["probe-write", "rdma-write", "basic", "piggyback", "pipeline", "zcopy", "mpi"]
BW = ["rdma-write-bw", "basic-bw", "piggyback-bw", "pipeline-bw", "zcopy-bw", "zcopy-bw-staged",
      "mpi-bw"]
PAPER_LAT = [("paper: basic 18.6 µs", 18.6), ("paper: optimized 7.4 µs", 7.4)]
PAPER_BW = [("paper: basic 230 MB/s", 230.0), ("paper: optimized 520 MB/s", 520.0),
            ("paper: zero copy 857 MB/s", 857.0)]


def latency(r):
    v = ibcplot.extra_float(r, "b2b_p50_us")
    return v if v is not None and v > 0 else r["p50_us"]


def pick(rows, names, value, min_bytes=0):
    """{(variant, bytes): value} of the last row of each, and the sizes."""
    got = {}
    for r in rows:
        if r["variant"] in names and r["bytes"] is not None and r["bytes"] >= min_bytes and \
                (r["variant"] != "probe-write" or r["bytes"] <= 64):
            v = value(r)
            if v is not None and v > 0:
                got[(r["variant"], r["bytes"])] = v
    return got, sorted({b for (_, b) in got})


def bars(ax, got, sizes, names, ref_names, unit):
    present = [n for n in names if any((n, b) in got for b in sizes)]
    width = 0.8 / max(len(present), 1)
    for i, n in enumerate(present):
        # one colour per design in both panels; the paper's staged form hatched
        staged = n.endswith("-staged")
        base = n[:-len("-staged")] if staged else n
        base = base[:-3] if base.endswith("-bw") else base
        color, _ = ibcplot.style(LAT.index(base) if base in LAT else i, base)
        xs, ys = [], []
        for k, b in enumerate(sizes):
            if (n, b) not in got:
                continue
            x = k + (i - (len(present) - 1) / 2) * width
            y = got[(n, b)]
            ax.bar(x, y, width * 0.9, color=color, hatch="//" if staged else None,
                   edgecolor="white" if staged else None, label=n if not xs else None)
            ref = next((got[(m, b)] for m in ref_names(b) if (m, b) in got), None)
            if ref:
                ax.text(x, y, "%.2f" % (y / ref), ha="center", va="bottom", fontsize=6,
                        rotation=90)
            xs.append(b)
            ys.append(y)
        # the numbers behind the bars, as draw_series records a line's
        ibcplot._DRAWN.append((ax, n, xs, ys))
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([ibcplot.size_label(b) for b in sizes])
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(unit)
    ax.set_yscale("log")
    ax.grid(True, axis="y", which="both", alpha=0.3)


def paper_lines(ax, lines):
    for label, y in lines:
        ax.axhline(y, color="gray", linestyle=":", linewidth=1)
        ax.text(0.01, y, label, transform=ax.get_yaxis_transform(), fontsize=7,
                color="dimgray", va="bottom")


def panel(ax, rows, names, value, min_bytes, refs, unit, lines, empty, title):
    """One panel: the bars of names (value of a row) from min_bytes up, labelled
    over refs(bytes), the paper's lines; the set title drawn either way."""
    got, sizes = pick(rows, names, value, min_bytes)
    if sizes:
        bars(ax, got, sizes, names, refs, unit)
        paper_lines(ax, lines)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    else:
        ibcplot.message(ax, empty)
    ax.set_title(title, fontsize=10)


def main(argv):
    d, rows, meta = ibcplot.usage_dir("channel_floor.py", argv, "channel")
    fig, axes = ibcplot.plt.subplots(1, 2, figsize=(16, 5.6))
    # the cache line is the floor of a short message; a long one's is the raw
    # write's copy
    panel(axes[0], rows, LAT, latency, 0,
          lambda b: ["probe-write", "rdma-write"] if b <= 64 else ["rdma-write"],
          "one-way latency, back to back (µs)", PAPER_LAT, "no latency rows",
          "latency against the floor (label: x probe-write up to 64 B, else x rdma-write)")
    panel(axes[1], rows, BW, lambda r: r["bytes"] / r["p50_us"] if r["p50_us"] else None, 4096,
          lambda b: ["mpi-bw", "rdma-write-bw"], "bandwidth (MB/s)", PAPER_BW,
          "no bandwidth rows of 4 KiB or more",
          "bandwidth against the host MPI (label: x mpi-bw, else x rdma-write-bw)")
    fig.suptitle("The MPICH2 RDMA channel against its floor\n%s" % ibcplot.title_suffix(meta, rows),
                 fontsize=10)
    ibcplot.save(fig, d, "channel_floor",
                 paper=("liu", "the latency and bandwidth numbers of the four channel designs"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
