#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The SQ drain state (rrxe-verify -o sqd, two QPs of one device): after RTS->SQD with
# en_sqd_async_notify the SENDs already started complete, IBV_EVENT_SQ_DRAINED reaches
# the consumer, nothing else completes in SQD, ibv_query_qp reports SQD and no longer
# draining, and the SENDs not started (posted before or in SQD) run in order once the
# QP is back in RTS; also with packets lost while draining.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify mod:sch_netem
ktap_set_plan 5
hosts_up
devs_up
sqd() {
	ip netns exec $NS0 "$VERIFY" -d rrxe0 -o sqd "$@" >$TMPD/sqd.out 2>&1
	local r=$?
	sed 's/^/# /' $TMPD/sqd.out
	[ $r -eq 0 ] && grep -q "op=sqd .* ok" $TMPD/sqd.out
}
ktap_check "8 SENDs of 64 KiB: started ones drain, SQ_DRAINED, the rest wait for RTS" sqd -k 8 -s 65536
ktap_check "16 SENDs of 4 KiB over the IPv6 GID" sqd -k 16 -s 4096 -g 2
ktap_check "1 byte SENDs" sqd -k 4 -s 1
# Loopback packets go through ns0's lo: lose some of them while the SQ drains.
in0 tc qdisc replace dev lo root netem loss 5%
before=$(( $(counter rrxe0 retx_packets) + $(counter rrxe0 retransmits) ))
ktap_check "8 SENDs of 64 KiB drain with 5% of the packets lost" sqd -k 8 -s 65536
in0 tc qdisc del dev lo root
resent=$(( $(counter rrxe0 retx_packets) + $(counter rrxe0 retransmits) - before ))
echo "# packets resent while draining: $resent"
ktap_check "the losses were repaired while in SQD (resent > 0)" test "$resent" -gt 0
devs_down
ktap_finished
