#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Selective retransmission (XETH + SACK): the two rrxe devices negotiate it; under netem
# loss (0.1 % to 10 %), reordering, duplication and corruption every transfer completes
# with its data checked by rrxe-verify; the receiver keeps packets beyond the expected PSN
# and the sender resends about as many packets as the link lost; a tiny reassembly limit
# drops (and counts) what does not fit and still recovers; with the module parameter
# selective=0 the same loss is recovered by plain go-back-N.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require exclusive verify mod:sch_netem
ktap_set_plan 17
hosts_up
devs_up

# sum <counter>: the counter over both devices.
sum() { echo $(( $(counter rrxe0 "$1") + $(counter rrxe1 "$1") )); }
# netem <args...>: the same qdisc on both ends (both directions); none: remove it.
netem() {
	if [ "$1" = none ]; then
		in0 tc qdisc del dev va root 2>/dev/null
		in1 tc qdisc del dev vb root 2>/dev/null
		return 0
	fi
	in0 tc qdisc replace dev va root netem "$@" && in1 tc qdisc replace dev vb root netem "$@"
}
# verify_lossy <pct> <verify args...>: a data-checked run under <pct> loss.
verify_lossy() {
	local pct=$1
	shift
	netem loss "$pct%"
	verify "$@"
	local r=$?
	netem none
	return $r
}
# reload <parameters...>: the module again with these parameters, and both devices.
reload() { devs_down; rrxe_load "$@" && devs_up; }

ktap_check "WRITE+READ on a clean link" verify -o write -s 65536 -n 20 -k 4
ktap_eq "rrxe0 (requester) negotiated selective retransmission" 1 \
	"$([ "$(counter rrxe0 sel_negotiated)" -gt 0 ] && echo 1)"
ktap_eq "rrxe1 (responder) accepted the offer" 1 "$([ "$(counter rrxe1 sel_accepted)" -gt 0 ] && echo 1)"

# lossy <pct> <verify args...>: a data-checked run under <pct> loss both ways; then the
# receiver must have kept out-of-order packets, and the packets resent must stay within
# twice the packets lost plus the probes (go-back-N resends a whole window per loss).
lossy() {
	local pct=$1
	shift
	netem loss "$pct%"
	local -A b a
	counters_snap b rrxe0 rrxe1
	verify "$@" || { netem none; return 1; }
	counters_snap a rrxe0 rrxe1
	local lost
	lost=$(dropped)
	netem none
	d() { local v=0 k; for k; do v=$(( v + ${a[$k]:-0} - ${b[$k]:-0} )); done; echo $v; }
	local kept retx tlp
	kept=$(d ooo_kept) retx=$(d retx_packets) tlp=$(d tlp_sent)
	echo "# loss $pct%: lost $lost, resent $retx (probes $tlp), kept out of order $kept," \
		"SACKs $(d sack_sent) (spurious holes $(d sack_spurious), reported again $(d sack_again))," \
		"RNR NAKs $(d rnr_nak_sent), duplicates $(d duplicates)," \
		"dropped by the receiver $(d drop_rx_queue drop_reasm_limit), go-back-N $(d retransmits)"
	[ "$lost" -gt 0 ] && [ "$kept" -gt 0 ] && [ "$retx" -le $(( 2 * lost + tlp + 8 )) ]
}
ktap_check "SEND 64 KiB x300 under 0.1% loss" lossy 0.1 -o send -s 65536 -n 300 -k 8
ktap_check "SEND 64 KiB x200 under 1% loss" lossy 1 -o send -s 65536 -n 200 -k 8
again0=$(sum sack_again)
ktap_check "SEND 64 KiB x100 under 5% loss" lossy 5 -o send -s 65536 -n 100 -k 8
ktap_check "SEND 16 KiB x200 under 10% loss" lossy 10 -o send -s 16384 -n 200 -k 8
# (Some of the ~50 retransmissions netem drops in these two runs are followed by a later
# one of the same SACK: their holes are named again without waiting for a probe.)
ktap_eq "holes whose retransmission was lost were reported again" 1 \
	"$([ $(( $(sum sack_again) - again0 )) -gt 0 ] && echo 1)"
p0=$(sum ooo_placed)
ktap_check "WRITE+READ 64 KiB x50 under 1% loss" lossy 1 -o write -s 65536 -n 50 -k 4
ktap_eq "WRITE payload behind a hole went straight to its destination" 1 \
	"$([ $(( $(sum ooo_placed) - p0 )) -gt 0 ] && echo 1)"

# Reordering, duplication, corruption: data exact, and the mechanism was exercised.
netem delay 1ms reorder 75% 50%
k0=$(sum ooo_kept)
ktap_check "SEND 64 KiB x100 with reordering" verify -o send -s 65536 -n 100 -k 8
ktap_eq "reordered packets were kept, not dropped" 1 "$([ $(( $(sum ooo_kept) - k0 )) -gt 0 ] && echo 1)"
netem duplicate 5%
ktap_check "WRITE+READ 64 KiB x50 with 5% duplication" verify -o write -s 65536 -n 50 -k 4
c0=$(sum drop_icrc)
netem corrupt 2%
ktap_check "SEND 64 KiB x100 with 2% corruption" verify -o send -s 65536 -n 100 -k 8
ktap_eq "corrupted packets were dropped on their ICRC" 1 "$([ $(( $(sum drop_icrc) - c0 )) -gt 0 ] && echo 1)"
netem none

# A QP may keep only 16 KiB beyond its expected PSN: under loss the limit is hit, the
# packets over it are dropped and counted, and the transfer still completes exactly.
reload reasm_qp_kib=16
limit() {
	verify_lossy 2 -o send -s 65536 -n 50 -k 8 || return 1
	echo "# reassembly limit drops $(sum drop_reasm_limit), high-water $(sum reasm_high) bytes, in use $(sum reasm_bytes)"
	[ "$(sum drop_reasm_limit)" -gt 0 ] && [ "$(sum reasm_bytes)" -eq 0 ]
}
ktap_check "reasm_qp_kib=16: drops at the limit are counted and recovered" limit

# The administrator can switch it off: plain go-back-N, which still recovers.
reload selective=0
off() {
	verify_lossy 1 -o send -s 65536 -n 50 -k 8 || return 1
	[ "$(sum sel_negotiated)" -eq 0 ] && [ "$(sum ooo_kept)" -eq 0 ] && [ "$(sum retransmits)" -gt 0 ]
}
ktap_check "selective=0: 1% loss recovered by go-back-N, nothing negotiated" off
reload
devs_down
ktap_finished
