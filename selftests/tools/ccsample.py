#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Samples an incast run from inside the router namespace (selftests/lib/congestion.sh).

usage: ccsample.py OUT.csv INTERVAL_S DURATION_S

Every INTERVAL_S seconds for DURATION_S: the time since start, the bytes received so
far on the router's links from senders 1..4 (r1..r4, /proc/net/dev: what each flow
brought to the bottleneck), the bytes the bottleneck link (rd) sent, and the
bottleneck's backlog in bytes (tc, every fifth
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


def backlog():
    try:
        out = subprocess.run(["tc", "-s", "qdisc", "show", "dev", "rd"],
                             capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    leaf = False
    for line in out.splitlines():
        if line.startswith("qdisc "):
            leaf = " 10: " in line
        if leaf and "backlog" in line:
            v = line.split("backlog", 1)[1].split()[0].rstrip("b")
            mult = {"K": 1000, "M": 1000000}.get(v[-1:], 1)
            return int(float(v[:-1] if mult != 1 else v) * mult)
    return 0


def main():
    out, step, dur = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    t0 = time.monotonic()
    bl, n = 0, 0
    with open(out, "w") as f:
        f.write("t b1 b2 b3 b4 out backlog\n")
        while True:
            # The time and the counters together; the slow tc call after them.
            t = time.monotonic() - t0
            b = link_bytes()
            if t > dur:
                break
            f.write("%.3f %s %d\n" % (t, " ".join(str(x) for x in b), bl))
            f.flush()
            if n % 5 == 0:
                bl = backlog()
            n += 1
            time.sleep(max(0.0, t0 + n * step - time.monotonic()))


if __name__ == "__main__":
    main()
