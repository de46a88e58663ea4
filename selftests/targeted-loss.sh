#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Selective recovery from chosen losses, not random ones: a u32 filter steers every
# original packet of one opcode (resent and probe packets carry XF_RETX or XF_PROBE in
# the BTH's reserved byte and pass) into a netem band that drops them all. Each transfer
# then loses exactly one known packet per message, so the recovery can be counted: data
# exact, no go-back-N, every loss repaired by resending that one packet (or asking for
# that one READ response) and nothing else beyond what probes asked for, and the loss
# nothing follows (the last message's) found by the tail-loss probe.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify ss mod:sch_netem mod:sch_prio mod:cls_u32 mod:sch_ingress mod:act_gact
ktap_set_plan 6
hosts_up
devs_up

sum() { echo $(( $(counter rrxe0 "$1") + $(counter rrxe1 "$1") )); }
# target <in0|in1> <dev> <opcode>: drop every original packet with this BTH opcode that
# leaves <dev>. Offsets from the IPv4 header (20 bytes, no options): UDP destination port
# at 22, BTH opcode at 28, BTH byte 8 (AckReq and the extension flags) at 36.
target() {
	local ns=$1 dev=$2 op=$3
	$ns tc qdisc replace dev "$dev" root handle 1: prio bands 4 \
		priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 &&
	$ns tc qdisc add dev "$dev" parent 1:4 handle 40: netem loss 100% &&
	$ns tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff \
		match u8 "$op" 0xff at 28 match u8 0 0x06 at 36 flowid 1:4
}
# band_dropped <in0|in1> <dev>: packets the drop band took.
band_dropped() {
	$1 tc -s qdisc show dev "$2" |
		awk '/^qdisc netem 40:/ { f = 1 } f && /dropped/ { sub(",", "", $7); print $7; exit }'
}
untarget() { $1 tc qdisc del dev "$2" root 2>/dev/null; return 0; }

# verify2 <verify args..., ending with -k depth>: a verified run whose server posts twice
# the client's depth of receives (an RNR NAK sends whole messages again, unflagged: their
# packets would meet the filter again and go uncounted as resent).
verify2() {
	local k=${*: -1}
	pair 18516 120 "$VERIFY" -d rrxe1 "$@" -k $((2 * k)) -- "$VERIFY" -d rrxe0 "$@" || return 1
	echo "# $(tail -1 $TMPD/pair.cli)"
}

C="retx_packets rd_rereq tlp_sent retransmits timeouts sack_spurious rnr_nak_sent tx_errors tx_busy"
snap() { local c; for c in $C; do eval "s_$c=\$(sum $c)"; done; }
d() { eval "echo \$(( \$(sum $1) - s_$1 ))"; }

# lossy <in0|in1> <dev> <opcode> <messages> <what is resent: retx_packets|rd_rereq>
#       <verify args..., ending with -k depth>: one verified run with the filter. Then:
#       exactly one drop per message; at least that many repairs, and beyond them no
#       more than the depth per probe (a probe asks again for at most one hole per
#       message in flight); no go-back-N, no timeout; at least one probe (the last
#       message's loss has nothing after it to reveal it).
lossy() {
	local ns=$1 dev=$2 op=$3 n=$4 what=$5
	shift 5
	target "$ns" "$dev" "$op" || { untarget "$ns" "$dev"; return 1; }
	snap
	local k=${*: -1}
	verify2 "$@" || { untarget "$ns" "$dev"; return 1; }
	local lost rep tlp
	lost=$(band_dropped "$ns" "$dev")
	untarget "$ns" "$dev"
	rep=$(d "$what") tlp=$(d tlp_sent)
	echo "# dropped $lost (expected $n), $what $rep, probes $tlp, resent $(d retx_packets)," \
		"spurious holes $(d sack_spurious), RNR NAKs $(d rnr_nak_sent), go-back-N $(d retransmits)," \
		"timeouts $(d timeouts)"
	# (An RNR NAK, rare with twice the receives but seen, sends whole messages again,
	# unflagged and uncounted as resent: their last packets are dropped again.)
	if [ "$(d rnr_nak_sent)" = 0 ]; then
		[ "$lost" = "$n" ] && [ "$rep" -ge "$lost" ] || return 1
	else
		[ "$lost" -ge "$n" ] && [ "$rep" -ge "$n" ] || return 1
	fi
	[ "$rep" -le $(( lost + k * tlp )) ] && [ "$tlp" -ge 1 ] &&
		[ "$(d retransmits)" = 0 ] && [ "$(d timeouts)" = 0 ]
}

# RC opcodes (IBTA): SEND_LAST_WITH_IMMEDIATE 0x03, RDMA_READ_REQUEST 0x0c,
# RDMA_READ_RESPONSE_LAST 0x0f. rrxe-verify's SENDs carry an immediate; its WRITE+READ
# pairs read back 64 KiB, 64 responses at the 1024-byte path MTU.
ktap_check "SEND: each message's last packet lost once, resent once (SACK or probe)" \
	lossy in0 va 0x03 100 retx_packets -o send -s 65536 -n 100 -k 8
ktap_check "READ: each READ's last response lost once, asked for once" \
	lossy in1 vb 0x0f 50 retx_packets -o write -s 65536 -n 50 -k 4
ktap_check "READ: each READ request lost once, asked for again once" \
	lossy in0 va 0x0c 50 rd_rereq -o write -s 65536 -n 50 -k 4

# refused_run <verify args...>: the verify run (its status) with the counters snapped
# before it, behind the refusing filters on va's clsact egress, which it then removes;
# REFUSED: the packets they refused.
refused_run() {
	local r
	snap
	verify2 "$@"
	r=$?
	REFUSED=$(tc_dropped_sum in0 filter show dev va egress)
	in0 tc qdisc del dev va clsact
	return $r
}

# refused <verify args..., ending with -k depth>: 1% of the packets leaving va are refused
# by the stack itself (a gact drop on clsact egress returns NET_XMIT_DROP to the sender;
# rdma_rxe moves its QP to the error state on the first one): each counted in tx_errors,
# the data exact, no go-back-N, and each sent again: a new data packet at once, on the
# requester's next run, as TCP does (tx_busy), any other (a resend, an ACK) by loss
# recovery (retx_packets), unless an RNR NAK sent whole messages again, unflagged (a
# server that falls more than a depth behind runs out of receives even with twice the
# client's depth posted).
refused() {
	act_drop in0 va 100 || { in0 tc qdisc del dev va clsact 2>/dev/null; return 1; }
	local r n
	refused_run "$@"
	r=$? n=$REFUSED
	echo "# refused $n, tx_errors $(d tx_errors), sent again at once $(d tx_busy)," \
		"resent $(d retx_packets), probes $(d tlp_sent), RNR NAKs $(d rnr_nak_sent)," \
		"go-back-N $(d retransmits)"
	[ $r = 0 ] && [ "$n" -gt 0 ] && [ "$(d tx_errors)" = "$n" ] && [ "$(d retransmits)" = 0 ] &&
		[ "$(d tx_busy)" -gt 0 ] &&
		{ [ "$(d rnr_nak_sent)" != 0 ] || [ $(($(d tx_busy) + $(d retx_packets))) -ge "$n" ]; }
}
ktap_check "SEND: packets the stack refuses to send are counted and recovered" \
	refused -o send -s 65536 -n 100 -k 8

# refused_op <opcode>... -- <verify args..., ending with -k depth>: every other original
# packet with one of these BTH opcodes that leaves va is refused by the stack (u32 on the
# opcode and on XF_RETX/XF_PROBE clear, gact drop every second match). A READ request or
# an atomic the stack refuses on its first send is a new request that never left: the
# requester starts it again on its next run (tx_busy), with no go-back-N, no timeout and
# nothing resent or asked for again beyond one packet per tail-loss probe (a probe fires
# at times without a loss in a loaded 2-vCPU guest). The atomics' results prove each
# executed once (every FETCH_ADD's original value is the sum so far).
refused_op() {
	local ops=() op r n
	while [ "$1" != -- ]; do ops+=("$1"); shift; done
	shift
	clsact_add in0 va || return 1
	for op in "${ops[@]}"; do
		roce_refuse in0 va determ 2 match u8 "$op" 0xff at 28 match u8 0 0x06 at 36 ||
			{ in0 tc qdisc del dev va clsact; return 1; }
	done
	refused_run "$@"
	r=$? n=$REFUSED
	echo "# refused $n, tx_errors $(d tx_errors), started again $(d tx_busy)," \
		"resent $(d retx_packets), READs asked again $(d rd_rereq), probes $(d tlp_sent)," \
		"go-back-N $(d retransmits), timeouts $(d timeouts)"
	[ $r = 0 ] && [ "$n" -gt 0 ] && [ "$(d tx_errors)" = "$n" ] &&
		[ "$(d tx_busy)" -ge "$n" ] && [ $(($(d retx_packets) + $(d rd_rereq))) -le "$(d tlp_sent)" ] &&
		[ "$(d retransmits)" = 0 ] && [ "$(d timeouts)" = 0 ]
}
# (RDMA_READ_REQUEST 0x0c; COMPARE_SWAP 0x13, FETCH_ADD 0x14.)
ktap_check "READ: requests the stack refuses are started again on the next run" \
	refused_op 0x0c -- -o write -s 65536 -n 50 -k 4
ktap_check "atomics: requests the stack refuses are started again, each executed once" \
	refused_op 0x13 0x14 -- -o atomic -n 200 -k 4
ktap_finished
