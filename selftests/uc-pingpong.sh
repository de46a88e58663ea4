#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# UC SEND/RECV with data checking: stock ibv_uc_pingpong between the two hosts (one
# packet and many-packet messages, MTU 256, IPv6, completion events); on a lossless link
# no packet may be dropped out of sequence, and no ACK may be sent for UC traffic.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require ibv_uc_pingpong ss
ktap_set_plan 6
hosts_up
devs_up
pp() { pingpong ibv_uc_pingpong "$@"; }
sent0=$(counter rrxe1 tx_packets)
ktap_check "4 KiB messages (4 packets at MTU 1024), IPv4 GID" pp 1 -n 200 -s 4096
ktap_check "1 byte messages" pp 1 -n 200 -s 1
ktap_check "odd size 3001 bytes, MTU 256 (12 packets)" pp 1 -n 100 -s 3001 -m 256
ktap_check "IPv6 GID with completion events" pp 2 -n 200 -s 4096 -e
# Each side sent exactly its messages' packets: 200*4 + 200 + 100*12 + 200*4 data
# packets, and the connection exchange goes over TCP.
ktap_eq "the server side sent data packets only (no ACKs)" 3000 \
	$(($(counter rrxe1 tx_packets) - sent0))
ktap_eq "no packet dropped out of sequence" "0 0" "$(counter rrxe0 out_of_seq) $(counter rrxe1 out_of_seq)"
devs_down
ktap_finished
