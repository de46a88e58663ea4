#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Congestion control under incast (topology in lib/incast.sh): three senders in their
# own namespaces write, through a router namespace, to one receiver; the router's link to
# the receiver is a 100 Mbit/s bottleneck (tbf) with a 300 KB hard queue limit, and RED
# marks ECN-capable packets (Congestion Experienced) above 30 KB of backlog, or, for the
# delay-based algorithm, a plain FIFO does not mark at all. Each algorithm must keep every byte intact (rrxe-verify writes
# and reads back), and its counters must show the loop working: the receiver saw marks
# and sent CNPs, the senders handled them, lowered their rates and paced (and, under
# `rate` alone, each new QP's start window held it back until ACKs came); for `delay`,
# ACKs echoed timestamps (more than six per 64 KiB WRITE: the requester asks for an ACK
# every delay_ack_pkts = 8 packets, where it otherwise asks once per message) and the
# destination's rate fell. The knobs are debugfs files.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify mod:sch_tbf mod:sch_prio mod:cls_u32 mod:sch_red
ktap_set_plan 6

CC_SENDERS=3
# On the debug kernel (SLOW) the three senders are CPU-bound and a 100 Mbit/s bottleneck
# never queues: 1 Mbit/s there. (A 4 Mbit/s one marked 172 packets in one boot and none
# in another, whose senders' WRITEs made 1.7 Mbit/s together.)
# Each sender's run shrinks with it (at 150 x 64 KiB the six runs did not fit in 1200 s).
[ "$SLOW" -gt 1 ] && CC_BN_MBIT=${CC_BN_MBIT:-1}
CC_N=$((SLOW > 1 ? 40 : 150))
. lib/incast.sh


# incast <algo>: the three senders write and read back 64 KiB x CC_N each, at once.
# Succeeds if all three verified every byte. Leaves the counters' deltas in D_* variables.
incast() {
	local i pids=() rc=0 c
	local names="np_ecn_marked_roce_packets np_cnp_sent"
	local snames="rp_cnp_handled rp_cnp_ignored rp_rate_dec rp_rate_inc rp_paced rp_ts_samples rp_start_held"
	local -A rb ra sb sa
	counters_snap rb ccd
	counters_snap sb $(for i in $SENDERS; do echo ccs$i; done)
	for i in $SENDERS; do
		timeout $((150 * SLOW)) ip netns exec "$NSD" "$VERIFY" -d ccd -p $((18600 + i)) \
			-o write -s 65536 -n $CC_N -k 4 >"$TMPD/srv$i" 2>&1 &
		pids+=($!)
	done
	for i in $SENDERS; do
		wait_for "ip netns exec $NSD ss -ltn | grep -q ':$((18600 + i)) '" 30
	done
	for i in $SENDERS; do
		timeout $((150 * SLOW)) ip netns exec "$(ns_s $i)" "$VERIFY" -d ccs$i -p $((18600 + i)) \
			-o write -s 65536 -n $CC_N -k 4 10.9.0.1 >"$TMPD/cli$i" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	for i in $SENDERS; do echo "# $1 sender $i: $(tail -1 "$TMPD/cli$i")"; done
	counters_snap ra ccd
	counters_snap sa $(for i in $SENDERS; do echo ccs$i; done)
	for c in $names; do eval "D_$c=$(( ${ra[$c]:-0} - ${rb[$c]:-0} ))"; done
	for c in $snames; do eval "D_$c=$(( ${sa[$c]:-0} - ${sb[$c]:-0} ))"; done
	echo "# $1: marked $(marked) dropped $(bn_dropped) ecn_marked $D_np_ecn_marked_roce_packets" \
		"cnp_sent $D_np_cnp_sent cnp_handled $D_rp_cnp_handled ignored $D_rp_cnp_ignored" \
		"dec $D_rp_rate_dec inc $D_rp_rate_inc paced $D_rp_paced ts $D_rp_ts_samples" \
		"start_held $D_rp_start_held"
	if [ $rc -ne 0 ]; then
		for i in $SENDERS; do sed 's/^/# cli: /' "$TMPD/cli$i" | tail -3; done
	fi
	return $rc
}

trap 'cc_down; rrxe_cleanup' EXIT
if ! cc_up rrxe; then
	ktap_test_fail "incast topology up"
	ktap_skip_rest "no topology"
	ktap_finished
fi

# The knobs: one file each, clamped on use, default algorithm "rate" (2).
ok=1
[ "$(knob ccs1 algo)" = 2 ] || { echo "# algo default: $(knob ccs1 algo)"; ok=0; }
[ "$(knob ccs1 rate_init_win)" = 16 ] || { echo "# rate_init_win default: $(knob ccs1 rate_init_win)"; ok=0; }
[ "$(knob ccs1 pacer_burst)" = 1024 ] || { echo "# pacer_burst default: $(knob ccs1 pacer_burst)"; ok=0; }
for k in rp_ai_rate rp_hai_rate rp_time_reset rp_min_rate rp_dce_tcp_g \
	rp_initial_alpha_value np_min_time_between_cnps; do
	[ -r "$DBG/rrxe-ccs1/cc_params/$k" ] || { echo "# no knob $k"; ok=0; }
done
knob ccs1 rp_ai_rate 7 && [ "$(knob ccs1 rp_ai_rate)" = 7 ] || { echo "# rp_ai_rate not writable"; ok=0; }
knob ccs1 rp_ai_rate 5
echo x >"$DBG/rrxe-ccs1/cc_params/algo" 2>/dev/null && { echo "# algo took a non-number"; ok=0; }
ktap_test_result "knobs are debugfs files with the documented defaults" test $ok = 1

# check <run name> <algo> "<description>" <counter conditions...>: one incast run with every
# device on <algo>; passes if the data was intact and every condition on the counters'
# deltas (D_<counter>) holds.
check() {
	local name=$1 algo=$2 desc=$3 cond
	shift 3
	algo_all "$algo"
	if ! incast "$name"; then
		ktap_test_fail "$desc"
		return
	fi
	for cond in "$@"; do
		eval "[ $cond ]" || { echo "# $name: not true: $cond"; ktap_test_fail "$desc"; return; }
	done
	ktap_test_pass "$desc"
}

bottleneck marking
check rate 2 "rate: data intact, marks answered with CNPs, rates set, paced and recovered" \
	'$D_np_ecn_marked_roce_packets -gt 0' '$D_np_cnp_sent -gt 0' '$D_rp_cnp_handled -gt 0' \
	'$D_rp_rate_dec -gt 0' '$D_rp_rate_inc -gt 0' '$D_rp_paced -gt 0' '$D_rp_start_held -gt 0'
# (Only `rate` starts a QP with a window of rate_init_win packets.)
check dcqcn 1 "dcqcn: data intact, CNPs cut rates, recovery raises them" \
	'$D_np_cnp_sent -gt 0' '$D_rp_cnp_handled -gt 0' '$D_rp_rate_dec -gt 0' \
	'$D_rp_rate_inc -gt 0' '$D_rp_paced -gt 0' '$D_rp_start_held = 0'
# `none` reads the marks and sends CNPs, but the senders ignore them.
check none 0 "none: data intact, CNPs ignored, nothing paced" \
	'$D_np_cnp_sent -gt 0' '$D_rp_cnp_ignored -gt 0' '$D_rp_cnp_handled = 0' '$D_rp_paced = 0'
bottleneck plain
check delay 3 "delay: data intact without marks, echoed timestamps cut the rate" \
	'$D_np_ecn_marked_roce_packets = 0' '$D_rp_ts_samples -gt $((6 * CC_SENDERS * CC_N))' \
	'$D_rp_rate_dec -gt 0' '$D_rp_paced -gt 0'

# Out-of-range knobs are clamped, not trusted: a zero rate floor and an absurd increase
# still move data.
knob ccs1 rp_min_rate 0
knob ccs1 rp_ai_rate 4294967295
bottleneck marking
check clamped 2 "out-of-range knobs are clamped: data intact" '$D_np_cnp_sent -gt 0'
ktap_finished
