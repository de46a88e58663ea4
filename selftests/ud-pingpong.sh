#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# UD SEND/RECV with address handles and the 40-byte GRH area: stock ibv_ud_pingpong with
# data checking (-c) over the IPv4 and IPv6 GIDs, at several sizes and path MTUs.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require ibv_ud_pingpong ss
ktap_set_plan 7
hosts_up
devs_up
ud() { # ud <gid index> <args...>
	local g=$1
	shift
	pair 18515 90 ibv_ud_pingpong -d rrxe1 -g "$g" -c "$@" -- ibv_ud_pingpong -d rrxe0 -g "$g" -c "$@" || return 1
	grep -q "iters in" $TMPD/pair.cli && echo "# $(grep 'iters in' $TMPD/pair.cli)"
}
ktap_check "1024-byte datagrams (the port MTU), IPv4 GID" ud 1 -s 1024 -n 500
ktap_check "1-byte datagrams" ud 1 -s 1 -n 500
ktap_check "completion events (-e)" ud 1 -s 512 -n 300 -e
ktap_check "IPv6 GID" ud 2 -s 1024 -n 300
ip -n $NS0 link set va mtu 9000
ip -n $NS1 link set vb mtu 9000
ktap_check "4096-byte datagrams on a 9000-byte link" ud 1 -s 4096 -n 300
ip -n $NS0 link set va mtu 1500
ip -n $NS1 link set vb mtu 1500
# A datagram larger than the port MTU is refused by the provider before it reaches us;
# one at the MTU must still fit the 40-byte GRH area plus payload at the receiver.
ktap_eq "no datagram dropped for a bad Q_Key or a missing receive" "0 0" \
	"$(counter rrxe1 drop_qkey) $(counter rrxe1 drop_no_recv)"
ktap_eq "no malformed or ICRC drops" "0 0" "$(counter rrxe1 drop_malformed) $(counter rrxe1 drop_icrc)"
devs_down
ktap_finished
