#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sends hand-made RoCEv2 packets (IPv4, raw socket) for the malformed-input selftest.

usage: inject.py SRC DST KIND COUNT [QPN PSN]
KIND: bad_icrc | unknown_qpn | unknown_opcode | truncated | pad_underflow | bad_tver |
      send (an RC SEND ONLY to QPN with PSN: a well-formed request, e.g. a peer's
      retransmission) |
      cnp (a standard RoCEv2 CNP to QPN: BECN, 16 zero reserved bytes; PSN ignored) |
      cnp_rrxe (a CNP whose reserved bytes carry an rrxe receiver's rates: PSN is the
      rate in KB/s for the QP and the port, one active QP) |
      cnp_short (a CNP without its reserved bytes) |
      send_lines (COUNT ignored: one SEND per line "QPN PSN" read from standard input,
      "sent" printed after each; the interpreter starts before the moment that matters)
Every packet except bad_icrc/truncated carries a correct ICRC, so the receiver's parser,
not its CRC check, has to reject it.
"""
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791


def bth(opcode, dqpn, psn, pad=0, tver=0, becn=False):
    return struct.pack(">BBHII", opcode, (pad << 4) | tver, 0xFFFF,
                       (0x40 << 24 if becn else 0) | (dqpn & 0xFFFFFF),
                       (1 << 31) | (psn & 0xFFFFFF))


def cnp_info(kbps):
    """rrxe's CNP payload: magic 'rr', version 1, QP and port rate (KB/s), active QPs,
    meter interval (16 us units)."""
    return struct.pack(">HBBIIHH", 0x7272, 1, 0, kbps, kbps, 1, 1000 // 16)


def icrc(ip, udp, payload):
    ip = bytearray(ip)
    udp = bytearray(udp)
    bt = bytearray(payload)
    ip[1] = 0xFF                 # TOS
    ip[8] = 0xFF                 # TTL
    ip[10:12] = b"\xff\xff"      # header checksum
    udp[6:8] = b"\xff\xff"       # UDP checksum
    bt[4] = 0xFF                 # BTH FECN/BECN/resv6
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(bt)))


def packet(src, dst, payload, ident, good_crc=True):
    total = 20 + 8 + len(payload) + 4
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total, ident, 0x4000, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    udp = struct.pack(">HHHH", 0xC123, ROCE_PORT, 8 + len(payload) + 4, 0)
    crc = icrc(ip, udp, payload)
    if not good_crc:
        crc = bytes(b ^ 0x5A for b in crc)
    return ip + udp + payload + crc


def main():
    src, dst, kind, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    if kind == "send_lines":
        for i, line in enumerate(sys.stdin):
            qpn, psn = (int(w, 0) for w in line.split()[:2])
            s.sendto(packet(src, dst, bth(0x04, qpn, psn) + b"abcd", 0x2000 + i), (dst, 0))
            print("sent", flush=True)
        return
    for i in range(count):
        ident = 0x1000 + i
        if kind == "bad_icrc":
            p = packet(src, dst, bth(0x04, 0x11, i) + b"abcd", ident, good_crc=False)
        elif kind == "unknown_qpn":
            p = packet(src, dst, bth(0x04, 0xABCDEF, i) + b"abcd", ident)
        elif kind == "unknown_opcode":
            p = packet(src, dst, bth(0x15, 0x11, i) + b"abcd", ident)
        elif kind == "pad_underflow":
            p = packet(src, dst, bth(0x04, 0x11, i, pad=3), ident)
        elif kind == "bad_tver":
            p = packet(src, dst, bth(0x04, 0x11, i, tver=1) + b"abcd", ident)
        elif kind == "send":
            qpn, psn = int(sys.argv[5], 0), int(sys.argv[6], 0)
            p = packet(src, dst, bth(0x04, qpn, psn) + b"abcd", ident)
        elif kind in ("cnp", "cnp_rrxe", "cnp_short"):
            qpn = int(sys.argv[5], 0)
            if kind == "cnp_rrxe":
                rest = cnp_info(int(sys.argv[6], 0))
            else:
                rest = bytes(16) if kind == "cnp" else b""
            # (A CNP's AckReq bit and PSN are zero.)
            h = bytearray(bth(0x81, qpn, 0, becn=True))
            h[8:12] = b"\0\0\0\0"
            p = packet(src, dst, bytes(h) + rest, ident)
        elif kind == "truncated":
            ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + 8 + 6, ident, 0x4000, 64, 17, 0,
                             socket.inet_aton(src), socket.inet_aton(dst))
            p = ip + struct.pack(">HHHH", 0xC123, ROCE_PORT, 14, 0) + b"\x04\x00\xff\xff\x00\x00"
        else:
            sys.exit("unknown kind " + kind)
        s.sendto(p, (dst, 0))
        if kind.startswith("cnp"):
            time.sleep(0.02)    # (beyond DCQCN's rate-reduction monitor period)


if __name__ == "__main__":
    main()
