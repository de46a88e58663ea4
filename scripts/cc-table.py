#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The congestion table of `make bench` (scripts/bench.sh), from the guest's samples.

usage: cc-table.py RESULTS_DIR BOTTLENECK_MBIT [SVG]

RESULTS_DIR holds rrxe/ and rxe/, each with cc-<run>.csv (every 200 ms: time, the bytes
each of four flows brought to the bottleneck so far, the bytes it delivered, its backlog
in bytes and its drops so far; selftests/tools/ccsample.py) and cc-<run>.txt ("metric
value" lines) from
selftests/lib/congestion.sh. Prints one Markdown table; writes a plot of every flow's
rate over time to SVG if given.
"""
import os
import sys

RUNS = [("none", "rrxe"), ("dcqcn", "rrxe"), ("rate", "rrxe"), ("delay", "rrxe"),
        ("rdma_rxe", "rxe")]
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
SMOOTH = 5          # samples (1 s) in the moving average the convergence test uses
BAND = 0.10         # convergence: every active flow within +-10% of its fair share
ACTIVE = 1.0        # Mbit/s: a flow moving less is not running


def num(x):
    """A number as tc prints it (125K, 1.2M: powers of 1000 for bytes)."""
    mult = {"K": 1e3, "M": 1e6, "G": 1e9}.get(x[-1:], 1)
    return float(x[:-1] if mult != 1 else x) * mult


def load(d, run):
    rows, kv = [], {}
    try:
        with open(os.path.join(d, "cc-%s.csv" % run)) as f:
            next(f)
            for line in f:
                v = line.split()
                if len(v) >= 7:
                    rows.append([num(x) for x in v[:7]])
        with open(os.path.join(d, "cc-%s.txt" % run)) as f:
            for line in f:
                v = line.split()
                if len(v) >= 2:
                    kv[v[0]] = v[1]
    except (OSError, ValueError, StopIteration):
        return None, {}
    return rows, kv


def rates(rows):
    """(t, [Mbit/s of flow 1..4], delivered Mbit/s, backlog, first row, last row) per
    interval."""
    out = []
    for a, b in zip(rows, rows[1:]):
        dt = b[0] - a[0]
        if dt <= 0:
            continue
        mbit = [(b[i] - a[i]) * 8 / dt / 1e6 for i in range(1, 6)]
        out.append((b[0], mbit[:4], mbit[4], b[6], a, b))
    return out


def smooth(r, k, start=0):
    """Over the SMOOTH intervals up to interval k, but none before interval start, each
    flow's rate and what the bottleneck delivered (five values, Mbit/s): bytes over their
    time. (Not the mean of the intervals' rates: the sampler is late at times and then
    takes two samples a few ms apart, whose interval's rates are mostly rounding.)"""
    lo = max(start, k - SMOOTH + 1)
    a, b = r[lo][4], r[k][5]
    return [(b[i] - a[i]) * 8 / (b[0] - a[0]) / 1e6 for i in range(1, 6)]


def pct(v, p):
    if not v:
        return None
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def metrics(rows, kv, bn):
    """The table's figures. Joins and leaves are found in the samples (a perftest client
    takes seconds to set up under TCG): a flow is active while it moves more than
    ACTIVE Mbit/s."""
    r = rates(rows)
    m = {}
    on = [[x[1][i] > ACTIVE for i in range(4)] for x in r]
    first = [next((k for k in range(len(r)) if on[k][i]), None) for i in range(4)]
    last = [max((k for k in range(len(r)) if on[k][i]), default=None) for i in range(4)]
    m["joins"] = [r[k][0] for k in first if k is not None]
    # All four: from 1 s after the last join to the first leave.
    if all(k is not None for k in first):
        t0 = max(r[k][0] for k in first) + 1
        t1 = min(r[k][0] for k in last)
        # Means from the counters at the window's ends (the samples' own intervals vary).
        win = [row for row in rows if t0 <= row[0] <= t1]
        if len(win) >= 2 and win[-1][0] > win[0][0]:
            dt = win[-1][0] - win[0][0]
            means = [(win[-1][i] - win[0][i]) * 8 / dt / 1e6 for i in range(1, 5)]
            m["flows"] = means
            m["jain"] = sum(means) ** 2 / (4 * sum(v * v for v in means)) if any(means) else 0
            m["util"] = 100 * (win[-1][5] - win[0][5]) * 8 / dt / 1e6 / bn
    busy = [x[3] for k, x in enumerate(r) if any(on[k])]
    m["backlog_p50"] = pct(busy, 50)
    m["backlog_p99"] = pct(busy, 99)
    # Convergence after each join: from the join, the first time from which every active
    # flow's smoothed rate stays within BAND of an equal share of what the bottleneck
    # delivered over the same second, until the next join or leave. (Of what it
    # delivered, not of its nominal rate: when the guest stalls, the router's output
    # stalls with it and every flow dips alike, which is no unfairness. A leaving flow's
    # last interval, in which it stopped, ends the segment.) The average starts after the
    # join's interval, the first in which the joining flow moved: it joined somewhere
    # within it, so that interval holds the flow's first milliseconds and the others'
    # last ones alone, and an average over it would be off by as much until the window
    # no longer held it, one second later, whatever the algorithm did; one over the
    # second before the join would be off the same way. The time is counted from the end
    # of the join's interval, so the first sample it can show is 0.2 s. The
    # latency probe's start and end are events too: it is one more QP from sender 1,
    # whose ping-pong brings its destination an echo every round trip.
    events = set(k for k in first + last if k is not None)
    for key in ("lat_from", "lat_to"):
        try:
            t = float(kv.get(key, ""))
        except ValueError:
            continue
        k = next((k for k in range(len(r)) if r[k][0] >= t), None)
        if k is not None:
            events.add(k)
    events = sorted(events)
    conv = []
    for j in sorted(k for k in first if k is not None)[1:]:
        nxt = min((e for e in events if e > j), default=len(r))
        seg = range(j + 1, nxt)
        n = sum(on[j])
        ok = []
        for k in seg:
            a = smooth(r, k, j + 1)
            fair = a[4] / max(n, 1)
            ok.append(all(abs(a[i] - fair) <= BAND * fair for i in range(4) if on[k][i]))
        t = next((r[k][0] - r[j][0] for idx, k in enumerate(seg) if all(ok[idx:])), None)
        conv.append(t)
    m["conv"] = conv
    for k in ("drops", "marks", "lat_p50", "lat_p99"):
        m[k] = kv.get(k)
    return m, r


def fmt(v, f="%.0f"):
    return "-" if v is None else f % v


def svg(plots, bn, path):
    w, ml, mt, ph, gap = 720, 60, 20, 150, 40
    h = mt + len(plots) * (ph + gap)
    total = max((x[0] for _, r in plots for x in r), default=1)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>']
    pw = w - ml - 20
    ymax = bn * 1.5
    for p, (name, r) in enumerate(plots):
        y0 = mt + p * (ph + gap)
        out.append('<text x="%d" y="%d" font-weight="bold">%s: Mbit/s per flow (colours),'
                   ' delivered (grey)</text>' % (ml, y0 - 4, name))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>'
                   % (ml, y0, pw, ph))
        for v in (0, bn / 4, bn / 2, bn):
            y = y0 + ph - v / ymax * ph
            out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (ml - 4, y + 4, v))
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                       % (ml, ml + pw, y, y))
        series = [(COLORS[i], [x[1][i] for x in r]) for i in range(4)]
        series.append(("#999", [x[2] for x in r]))
        for color, ys in series:
            pts = ["%.1f,%.1f" % (ml + x[0] / total * pw, y0 + ph - min(v, ymax) / ymax * ph)
                   for x, v in zip(r, ys)]
            out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.2"/>'
                       % (" ".join(pts), color))
        for t in range(0, int(total) + 1, 10):
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%d s</text>'
                       % (ml + t / total * pw, y0 + ph + 13, t))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    res, bn = sys.argv[1], float(sys.argv[2])
    plots = []
    print("| run | flows offered (Mbit/s, all four running) | Jain | utilisation | drops | marks |"
          " backlog p50/p99 (KB) | ib_write_lat p50/p99 (us) | convergence after joins (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for run, prov in RUNS:
        rows, kv = load(os.path.join(res, prov), run)
        name = run if prov == "rrxe" else run + " (no cc)"
        if not rows:
            print("| %s | FAIL | | | | | | | |" % name)
            continue
        m, r = metrics(rows, kv, bn)
        plots.append((name, r))
        flows = " / ".join("%.1f" % v for v in m.get("flows", []))
        conv = " / ".join(fmt(c, "%.1f") if c is not None else "never" for c in m["conv"])
        print("| %s | %s | %s | %s%% | %s | %s | %s / %s | %s / %s | %s |" % (
            name, flows or "-", fmt(m.get("jain"), "%.3f"), fmt(m.get("util")),
            m["drops"] or "-", m["marks"] or "-",
            fmt(m["backlog_p50"] and m["backlog_p50"] / 1000, "%.1f"),
            fmt(m["backlog_p99"] and m["backlog_p99"] / 1000, "%.1f"),
            m["lat_p50"] or "-", m["lat_p99"] or "-", conv))
    if len(sys.argv) > 3 and plots:
        svg(plots, bn, sys.argv[3])


if __name__ == "__main__":
    main()
