#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The rrxe-xfer table of `make bench`: xfer.txt of each provider's boot (rrxe, rxe, siw)
below the given directory, as one reStructuredText-ready table."""
import os
import sys


def load(d, p):
    v = {}
    try:
        for line in open(os.path.join(d, p, "xfer.txt")):
            k, _, x = line.strip().partition(" ")
            v[k] = x
    except OSError:
        pass
    return v


def num(v, k):
    try:
        return float(v[k])
    except (KeyError, ValueError):
        return None


def main():
    d = sys.argv[1]
    names = {"rrxe": "rrxe", "rxe": "rdma_rxe", "siw": "siw"}
    rows = []
    for p in ("rrxe", "rxe", "siw"):
        v = load(d, p)
        for key, what in (("xfer", "rrxe-xfer get (defaults)"), ("xfer_1qp", "rrxe-xfer get, 1 QP"),
                          ("xfer_busy", "rrxe-xfer get, busy-poll"),
                          ("xfer_events", "rrxe-xfer get, events"),
                          ("xfer_loss1", "rrxe-xfer get, 1% loss"), ("tcp", "socat over TCP")):
            r = num(v, key)
            if r is None and key not in v:
                continue
            wbw = num(v, "write_bw_64k")
            rel = ""
            if r is not None and key.startswith("xfer") and wbw:
                rel = "%d%%" % round(100 * r / wbw)
            if key == "xfer_loss1" and r is not None and num(v, "xfer"):
                rel = "%d%% of lossless" % round(100 * r / num(v, "xfer"))
            rows.append((names[p], what, v.get(key, "-"), v.get(key + "_cpu_client", "-"),
                         v.get(key + "_cpu_server", "-"), rel))
        if "write_bw_64k" in v:
            rows.append((names[p], "ib_write_bw 64 KiB", v["write_bw_64k"], "-", "-", ""))
    head = ("provider", "transfer", "MB/s", "CPU s client", "CPU s server", "of ib_write_bw")
    w = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    line = "  ".join("=" * x for x in w)
    print(line)
    print("  ".join(str(h).ljust(x) for h, x in zip(head, w)).rstrip())
    print(line)
    for r in rows:
        print("  ".join(str(c).ljust(x) for c, x in zip(r, w)).rstrip())
    print(line)


if __name__ == "__main__":
    main()
