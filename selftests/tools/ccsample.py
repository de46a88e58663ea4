#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Samples an incast run from inside the router namespace (selftests/lib/congestion.sh).

usage: ccsample.py OUT.csv INTERVAL_S DURATION_S

Every INTERVAL_S seconds for DURATION_S: the time since start, the bytes received so
far on the router's links from senders 1..4 (r1..r4, /proc/net/dev: what each flow
brought to the bottleneck), the bytes the bottleneck link (rd) sent, the
bottleneck's backlog in bytes and the packets it dropped so far (tc, every fifth
sample: one process instead of a fork per counter, so sampling does not starve the
flows of CPU under TCG).
"""
import subprocess
import sys
import time


def link_bytes():
    rx, tx = {}, {}
    with open("/proc/net/dev") as f:
        for line in f:
            if ":" not in line:
                continue
            name, rest = line.split(":", 1)
            v = rest.split()
            rx[name.strip()] = int(v[0])
            tx[name.strip()] = int(v[8])
    return [rx.get("r%d" % i, 0) for i in (1, 2, 3, 4)] + [tx.get("rd", 0)]


def queue():
    """The bottleneck queue's backlog (bytes) and drops so far (packets)."""
    try:
        out = subprocess.run(["tc", "-s", "qdisc", "show", "dev", "rd"],
                             capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    leaf, dropped = False, 0
    for line in out.splitlines():
        if line.startswith("qdisc "):
            leaf = " 10: " in line
        if leaf and "(dropped" in line:
            dropped = int(line.split("(dropped", 1)[1].split(",")[0])
        if leaf and "backlog" in line:
            v = line.split("backlog", 1)[1].split()[0].rstrip("b")
            mult = {"K": 1000, "M": 1000000}.get(v[-1:], 1)
            return int(float(v[:-1] if mult != 1 else v) * mult), dropped
    return None


def main():
    out, step, dur = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    t0 = time.monotonic()
    bl, dropped, n = 0, 0, 0
    with open(out, "w") as f:
        f.write("t b1 b2 b3 b4 out backlog dropped\n")
        while True:
            # The time and the counters together; the slow tc call after them.
            t = time.monotonic() - t0
            b = link_bytes()
            if t > dur:
                break
            f.write("%.3f %s %d %d\n" % (t, " ".join(str(x) for x in b), bl, dropped))
            f.flush()
            if n % 5 == 0:
                bl, dropped = queue() or (bl, dropped)
            n += 1
            time.sleep(max(0.0, t0 + n * step - time.monotonic()))


if __name__ == "__main__":
    main()
