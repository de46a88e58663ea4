#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Samples an incast run from inside the router namespace (selftests/lib/congestion.sh).

usage: ccsample.py OUT.csv INTERVAL_S DURATION_S

Every INTERVAL_S seconds for DURATION_S: the time since start, the bytes received so
far on the router's links from senders 1..4 (r1..r4, /proc/net/dev: what each flow
brought to the bottleneck), the bytes the bottleneck link (rd) sent, the
bottleneck's backlog in bytes and the packets it dropped so far (the qdisc with handle
10: on rd, asked over rtnetlink: running tc for it took long enough under TCG that it
could be afforded only every fifth sample).
"""
import socket
import struct
import sys
import time

RTM_GETQDISC = 38
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
TCA_STATS2 = 7
TCA_STATS_QUEUE = 3
LEAF = 0x10 << 16   # handle 10: (tc reads handles in hex)


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


def attrs(buf, off, end):
    """(type, payload offset, payload end) of each rtnetlink attribute in buf[off:end]."""
    while off + 4 <= end:
        alen, atype = struct.unpack_from("=HH", buf, off)
        if alen < 4:
            return
        yield atype & 0x3fff, off + 4, min(off + alen, end)
        off += (alen + 3) & ~3


def queue(sock, ifindex):
    """The bottleneck queue's backlog (bytes) and drops so far (packets), or None."""
    tcm = struct.pack("=BxxxiIII", socket.AF_UNSPEC, 0, 0, 0, 0)
    found = None
    try:
        sock.send(struct.pack("=IHHII", 16 + len(tcm), RTM_GETQDISC,
                              NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + tcm)
    except OSError:
        return None
    while True:
        try:
            buf = sock.recv(65536)
        except OSError:
            return found
        off = 0
        while off + 16 <= len(buf):
            mlen, mtype = struct.unpack_from("=IH", buf, off)
            if mlen < 16:
                return found
            if mtype in (NLMSG_DONE, NLMSG_ERROR):
                return found
            body = off + 16
            _, idx, handle, _, _ = struct.unpack_from("=BxxxiIII", buf, body)
            if idx == ifindex and handle == LEAF:
                for t, a, e in attrs(buf, body + 20, off + mlen):
                    if t != TCA_STATS2:
                        continue
                    for t2, a2, e2 in attrs(buf, a, e):
                        if t2 == TCA_STATS_QUEUE and e2 - a2 >= 12:
                            _, backlog, drops = struct.unpack_from("=III", buf, a2)
                            found = (backlog, drops)
            off += (mlen + 3) & ~3


def main():
    out, step, dur = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    t0 = time.monotonic()
    bl, dropped, n = 0, 0, 0
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)  # NETLINK_ROUTE
    ifindex = socket.if_nametoindex("rd")
    with open(out, "w") as f:
        f.write("t b1 b2 b3 b4 out backlog dropped\n")
        while True:
            t = time.monotonic() - t0
            b = link_bytes()
            if t > dur:
                break
            bl, dropped = queue(sock, ifindex) or (bl, dropped)
            f.write("%.3f %s %d %d\n" % (t, " ".join(str(x) for x in b), bl, dropped))
            f.flush()
            n += 1
            time.sleep(max(0.0, t0 + n * step - time.monotonic()))


if __name__ == "__main__":
    main()
