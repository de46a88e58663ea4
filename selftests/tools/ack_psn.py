#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks a responder's acknowledgements in a capture (libpcap, Ethernet, IPv4).

usage: ack_psn.py <capture> <responder IPv4 address>

Among the RoCEv2 packets the responder sent, a plain ACK (RC ACKNOWLEDGE whose AETH
syndrome is an ACK, without rrxe's SACK) must never carry the PSN of a READ response or
of an ATOMIC ACKNOWLEDGE it sent on the same QP, and never a PSN at or before a response
it sent earlier on that QP. rdma_rxe, still receiving that READ, completes it on the
first without the data it lost; on the second it completes it early and moves the QP to
the error state.

Prints the counts and the first offending PSNs; exit status 0 only if there were READ
responses, atomic responses and ACKs, and no ACK broke either rule.
"""
import socket
import struct
import sys

READ_RESP = range(0x0D, 0x11)
RC_ACK = 0x11
ATOMIC_ACK = 0x12
XF_EXT = 0x01  # BTH byte 8: an rrxe SACK follows (sent only to an rrxe requester)


def packets(path):
    """Yields (src, udp payload) of every UDP packet to port 4791 in the capture."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            return
        endian = "<" if head[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            incl = struct.unpack(endian + "IIII", rec)[2]
            frame = f.read(incl)
            if len(frame) < 14 + 20 + 8 or frame[12:14] != b"\x08\x00":
                continue
            ip = frame[14:]
            ihl = (ip[0] & 0x0F) * 4
            if ip[9] != 17 or len(ip) < ihl + 8:
                continue
            dport = struct.unpack(">H", ip[ihl + 2:ihl + 4])[0]
            if dport == 4791:
                yield socket.inet_ntoa(ip[12:16]), ip[ihl + 8:]


def after(a, b):
    """PSN a is after PSN b (24-bit serial arithmetic)."""
    return 0 < (a - b) % (1 << 24) < (1 << 23)


def main():
    cap, responder = sys.argv[1], sys.argv[2]
    resp, acks, high, behind = {}, {}, {}, []
    reads = atomics = 0
    for src, bth in packets(cap):
        if src != responder or len(bth) < 12:
            continue
        opcode = bth[0]
        key = (int.from_bytes(bth[5:8], "big"), int.from_bytes(bth[9:12], "big"))
        if opcode in READ_RESP or opcode == ATOMIC_ACK:
            resp[key] = opcode
            if key[0] not in high or after(key[1], high[key[0]]):
                high[key[0]] = key[1]
            reads += opcode != ATOMIC_ACK
            atomics += opcode == ATOMIC_ACK
        elif opcode == RC_ACK and len(bth) >= 13 and bth[12] >> 5 == 0 and not bth[8] & XF_EXT:
            acks[key] = acks.get(key, 0) + 1
            if key[0] in high and not after(key[1], high[key[0]]):
                behind.append((key, high[key[0]]))
    bad = sorted(k for k in acks if k in resp)
    print(f"{reads} READ responses, {atomics} atomic responses, "
          f"{sum(acks.values())} ACKs, {len(bad)} ACK PSNs that name a response, "
          f"{len(behind)} ACKs at or behind a response sent before them")
    for qpn, psn in bad[:5]:
        print(f"  QP {qpn:#x}: ACK with PSN {psn:#x}, the PSN of opcode {resp[(qpn, psn)]:#x}")
    for (qpn, psn), h in behind[:5]:
        print(f"  QP {qpn:#x}: ACK with PSN {psn:#x} after a response with PSN {h:#x}")
    return 0 if reads and atomics and acks and not bad and not behind else 1


if __name__ == "__main__":
    sys.exit(main())
