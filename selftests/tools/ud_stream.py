#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""UD datagrams from one RDMA device to another, in one process (python3-pyverbs).

    ud_stream.py SRC DST COUNT SIZE [IDLE_MS]

Creates a UD QP on each device (port 1, GID index 1), posts COUNT receives on DST's,
and sends COUNT datagrams of SIZE bytes from SRC's in rounds of 32, each carrying its
number and bytes derived from it. After each round it polls both CQs until the round's
datagrams have all arrived or IDLE_MS (default 100) pass without one: UD loses, and a
lost datagram is not waited for. Checks: every send completes successfully, every
receive completes successfully with SIZE + 40 bytes (the GRH area) whose payload is
exactly the bytes sent under its number, no number arrives twice, and both QPs are
still in RTS at the end. Prints "sent N received M" and exits 0 when every check holds
(M may be lower than N), 1 otherwise.
"""
import struct
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

QKEY = 0x11111111
GRH = 40
ROUND = 32
PORT = 1
GID = 1


def payload(i, size):
    head = struct.pack(">I", i)
    body = bytes((i * 7 + k) & 0xFF for k in range(max(size - 4, 0)))
    return (head + body)[:size]


class Side:
    def __init__(self, name, sends, recvs, size):
        self.ctx = Context(name=name)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, max(sends, recvs) + 1)
        cap = QPCap(max_send_wr=sends, max_recv_wr=max(recvs, 1), max_send_sge=1,
                    max_recv_sge=1)
        init = QPInitAttr(qp_type=e.IBV_QPT_UD, scq=self.cq, rcq=self.cq, cap=cap,
                          sq_sig_all=1)
        attr = QPAttr(port_num=PORT)
        attr.qkey = QKEY
        attr.pkey_index = 0
        # (pyverbs moves a UD QP created with attributes to RTS.)
        self.qp = QP(self.pd, init, attr)
        self.slot = size + GRH
        self.mr = MR(self.pd, self.slot * max(recvs, ROUND), e.IBV_ACCESS_LOCAL_WRITE)

    def rts(self):
        attr, _ = self.qp.query(e.IBV_QP_STATE)
        return attr.qp_state == e.IBV_QPS_RTS


def main():
    src, dst, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if size < 4:
        sys.exit("SIZE must be at least 4 (the datagram number)")
    idle = (int(sys.argv[5]) if len(sys.argv) > 5 else 100) / 1000
    s = Side(src, ROUND, 0, size)
    d = Side(dst, 0, count, size)
    for i in range(count):
        d.qp.post_recv(RecvWR(wr_id=i, num_sge=1,
                              sg=[SGE(d.mr.buf + i * d.slot, d.slot, d.mr.lkey)]))
    gr = GlobalRoute(dgid=d.ctx.query_gid(PORT, GID), sgid_index=GID)
    ah = AH(s.pd, attr=AHAttr(port_num=PORT, is_global=1, gr=gr))
    got = {}
    errors = []
    sent = 0
    while sent < count:
        n = min(ROUND, count - sent)
        for k in range(n):
            i = sent + k
            s.mr.write(payload(i, size), size, k * s.slot)
            wr = SendWR(wr_id=i, opcode=e.IBV_WR_SEND, num_sge=1,
                        sg=[SGE(s.mr.buf + k * s.slot, size, s.mr.lkey)])
            wr.set_wr_ud(ah, d.qp.qp_num, QKEY)
            s.qp.post_send(wr)
        done = 0
        deadline = time.monotonic() + 10
        while done < n:
            c, wcs = s.cq.poll(n - done)
            for wc in wcs:
                if wc.status != e.IBV_WC_SUCCESS:
                    errors.append(f"send {wc.wr_id}: status {wc.status}")
            done += c
            if c == 0 and time.monotonic() > deadline:
                errors.append(f"{n - done} send completions missing after 10 s")
                break
        sent += n
        last = time.monotonic()
        while len(got) < sent and time.monotonic() - last < idle:
            c, wcs = d.cq.poll(ROUND)
            if c:
                last = time.monotonic()
            for wc in wcs:
                i = wc.wr_id
                if wc.status != e.IBV_WC_SUCCESS:
                    errors.append(f"receive {i}: status {wc.status}")
                    continue
                if wc.byte_len != size + GRH:
                    errors.append(f"receive {i}: {wc.byte_len} bytes")
                    continue
                data = d.mr.read(size, i * d.slot + GRH)
                (num,) = struct.unpack(">I", data[:4])
                if data != payload(num, size):
                    errors.append(f"receive {i}: bytes differ from datagram {num}'s")
                elif num in got:
                    errors.append(f"datagram {num} arrived twice")
                got[num] = True
        if errors:
            break
    if not s.rts() or not d.rts():
        errors.append("a QP left RTS")
    print(f"sent {sent} received {len(got)}")
    for m in errors[:10]:
        print(m)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
