#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma_cm end to end: the connection manager's MADs travel over rrxe's GSI QP (QP1, kernel
# verbs: kernel CQ, DMA MR, UD sends with address handles), then the tools' own RC QPs move
# data. rping -V verifies every ping, ucmatose exchanges messages on several connections,
# perftest connects with -R.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require rping ucmatose ib_write_bw ib_send_bw ib_read_bw mod:rdma_ucm
ktap_set_plan 8
hosts_up
devs_up
cm() { PAIR_NOADDR=1 pair 0 60 "$@"; }
ktap_check "rping -V, 50 verified pings of 4 KiB (IPv4)" \
	cm rping -s -a $IP1 -V -C 50 -S 4096 -- rping -c -a $IP1 -V -C 50 -S 4096
ktap_check "rping -V over IPv6" cm rping -s -a $IP61 -V -C 20 -S 1000 -- rping -c -a $IP61 -V -C 20 -S 1000
ktap_check "ucmatose, 1 connection" cm ucmatose -b $IP1 -- ucmatose -s $IP1
ktap_check "ucmatose, 4 connections, 50 messages each" \
	cm ucmatose -b $IP1 -c 4 -C 50 -- ucmatose -s $IP1 -c 4 -C 50
ktap_check "ib_write_bw -R (rdma_cm)" perftest_pair -R ib_write_bw -s 65536 -n 200
ktap_check "ib_send_bw -R" perftest_pair -R ib_send_bw -s 4096 -n 500
ktap_check "ib_read_bw -R, 2 QPs" perftest_pair -R ib_read_bw -s 65536 -n 100 -q 2
ktap_eq "GSI traffic left no malformed or dropped packets" "0 0 0" \
	"$(counter rrxe0 drop_malformed) $(counter rrxe0 drop_qpn) $(counter rrxe1 drop_qkey)"
devs_down
ktap_finished
