#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Shared receive queues: stock ibv_srq_pingpong (many RC QPs receiving from one SRQ) with
# data checking, at several sizes, QP counts and with completion events; the SRQ limit
# event, with both QPs on one device (loopback).
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require ibv_srq_pingpong ss verify
ktap_set_plan 7
hosts_up
devs_up
srq() {
	pair 18515 120 ibv_srq_pingpong -d rrxe1 -g 1 -c "$@" -- ibv_srq_pingpong -d rrxe0 -g 1 -c "$@" || return 1
	grep -q "iters in" $TMPD/pair.cli && echo "# $(grep 'iters in' $TMPD/pair.cli | head -1)"
}
ktap_check "16 QPs on one SRQ, 4 KiB" srq -s 4096 -n 200
ktap_check "4 QPs, 64 KiB messages" srq -q 4 -s 65536 -n 50
ktap_check "1 QP, 1-byte messages" srq -q 1 -s 1 -n 300
ktap_check "completion events (-e)" srq -q 8 -s 2048 -n 200 -e
ktap_check "small SRQ (-r 16) shared by 16 QPs" srq -r 16 -s 1024 -n 200
lim() {
	ip netns exec $NS0 "$VERIFY" -d rrxe0 -o srq-limit "$@" >$TMPD/lim.out 2>&1
	local r=$?
	sed 's/^/# /' $TMPD/lim.out
	return $r
}
ktap_check "IBV_EVENT_SRQ_LIMIT_REACHED once below the limit, then disarmed; LAST_WQE_REACHED on ERR" lim -k 16
ktap_check "SRQ limit event with a 2-entry SRQ" lim -k 2
devs_down
ktap_finished
