#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job (RRXE_MODE=capture, RRXE_PROVIDER=rxe): records RoCEv2 packets that the
# kernel's rdma_rxe puts on the wire (IPv4 and IPv6 GIDs), for the protocol core's ICRC
# and parser test vectors. Writes /tmp/out/rxe-v4.pcap and rxe-v6.pcap.
cd "$(dirname "$0")/.." || exit 1
. lib/ktap.sh
hosts_up
modprobe rdma_rxe && modprobe ib_uverbs || exit 1
in0 rdma link add rxe0 type rxe netdev va
in1 rdma link add rxe1 type rxe netdev vb
sleep 1
cap() { # cap <file> <gid index> <pingpong args>
	local f=$1 g=$2
	shift 2
	in0 tcpdump -Z root -U -i va -w "/tmp/$f" -s 0 udp port 4791 2>/dev/null &
	local tp=$!
	sleep 1
	in1 ibv_rc_pingpong -d rxe1 -g "$g" "$@" &
	local sp=$!
	sleep 1
	in0 ibv_rc_pingpong -d rxe0 -g "$g" "$@" "$IP1"
	wait $sp
	sleep 1
	kill $tp
	wait $tp
	cp "/tmp/$f" /tmp/out/
}
cap rxe-v4.pcap 1 -n 2 -s 100
cap rxe-v6.pcap 2 -n 2 -s 1500 -m 1024
in0 ip -6 addr show dev va
cat /sys/class/infiniband/rxe0/ports/1/gids/{0,1,2,3} 2>/dev/null
ls -la /tmp/out
