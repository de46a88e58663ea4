#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RC SEND/RECV with data checking: stock ibv_rc_pingpong between the two hosts, over the
# IPv4 and IPv6 GIDs, several message sizes and path MTUs, polling and with events.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require ibv_rc_pingpong ss
ktap_set_plan 8
hosts_up
devs_up
pp() { pingpong ibv_rc_pingpong "$@"; }
ktap_check "4 KiB messages, MTU 1024, IPv4 GID" pp 1 -n 200 -s 4096
ktap_check "1 byte messages" pp 1 -n 200 -s 1
ktap_check "64 KiB messages (64 packets each)" pp 1 -n 50 -s 65536
ktap_check "odd size 3001 bytes, MTU 256" pp 1 -n 100 -s 3001 -m 256
ip -n $NS0 link set va mtu 9000
ip -n $NS1 link set vb mtu 9000
ktap_check "MTU 4096 on a 9000-byte link" pp 1 -n 100 -s 16384 -m 4096
ip -n $NS0 link set va mtu 1500
ip -n $NS1 link set vb mtu 1500
ktap_check "completion events (-e)" pp 1 -n 200 -s 4096 -e
ktap_check "IPv6 GID (fd00::)" pp 2 -n 200 -s 4096
# The driver logs no drops, it counts them: every run above was clean, so neither device
# may have dropped a packet for its ICRC, its headers or its opcode (a counter that is
# missing fails too).
drops() {
	local d c v n=0
	for d in rrxe0 rrxe1; do
		for c in drop_icrc drop_malformed drop_opcode; do
			v=$(counter $d $c)
			[ -n "$v" ] || { echo "no $c on $d"; return; }
			n=$((n + v))
		done
	done
	echo $n
}
ktap_eq "no ICRC, malformed or unknown-opcode drops on either device" 0 "$(drops)"
devs_down
ktap_finished
