#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stock perftest between the two hosts: WRITE, SEND and READ bandwidth and latency over the
# IPv4 GID, and WRITE bandwidth with 4 QPs and over the IPv6 GID. Each run must finish with
# a result line; bandwidth numbers are reported, never asserted (see make bench).
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require ib_write_bw ib_send_bw ib_read_bw ib_write_lat ib_send_lat ib_read_lat ss
ktap_set_plan 9
hosts_up
devs_up
ktap_check "ib_write_bw 64 KiB" perftest_pair ib_write_bw -x 1 -s 65536 -n 500
ktap_check "ib_write_bw 64 KiB, 4 QPs" perftest_pair ib_write_bw -x 1 -s 65536 -n 200 -q 4
ktap_check "ib_send_bw 4 KiB" perftest_pair ib_send_bw -x 1 -s 4096 -n 1000
ktap_check "ib_read_bw 64 KiB" perftest_pair ib_read_bw -x 1 -s 65536 -n 200
ktap_check "ib_write_lat 8 B" perftest_pair ib_write_lat -x 1 -s 8 -n 500
ktap_check "ib_send_lat 8 B" perftest_pair ib_send_lat -x 1 -s 8 -n 500
ktap_check "ib_read_lat 8 B" perftest_pair ib_read_lat -x 1 -s 8 -n 500
# -a runs every size from 2 B to 8 MiB: 20 iterations of each move 320 MiB, which the
# debug kernel's 0.4 MB/s could not in the tools' 480 s there; perftest's least, 5, move 80.
na=20
[ "$SLOW" -gt 1 ] && na=5
ktap_check "ib_write_bw all sizes (-a)" perftest_pair ib_write_bw -x 1 -a -n $na
ktap_check "ib_write_bw 64 KiB over the IPv6 GID" perftest_pair ib_write_bw -x 2 -s 65536 -n 200
devs_down
ktap_finished
