#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job of `make bench`'s congestion table (RRXE_MODE=congestion): four ib_send_bw
# flows (64 KiB messages) with staggered starts and stops into the incast bottleneck of
# lib/incast.sh, once per congestion-control algorithm (rrxe: none, dcqcn, rate, delay;
# rdma_rxe: once), all in one boot. For each run it writes /tmp/out/cc-<name>.csv (every 200 ms: time, the
# bytes each flow brought to the router, the bottleneck's backlog: tools/ccsample.py) and
# /tmp/out/cc-<name>.txt ("metric value" lines: drops, marks, ib_write_lat p50/p99
# across the bottleneck while all four flows run, and when that probe ran on the
# sampler's clock: lat_from, lat_to). scripts/bench.sh turns them into the
# table and the plot. Never run by `make check`.
cd "$(dirname "$0")/.." || exit 1
. lib/ktap.sh
prov=${RRXE_PROVIDER:-rrxe}
CC_SENDERS=4
. lib/incast.sh
# Stagger (s): flow i starts at (i-1)*STEP and stops at TOTAL-(i-1)*STEP, plus the few
# seconds a perftest client takes to set up under TCG (STARTUP; the table finds the
# actual joins and leaves in the samples).
STEP=${RRXE_CC_STEP:-6}
TOTAL=$((8 * STEP))
STARTUP=5
modprobe ib_uverbs
[ "$prov" = rxe ] && modprobe rdma_rxe
trap 'cc_down' EXIT
cc_up "$prov" || { echo "congestion: topology failed"; exit 1; }
# Every tool's output, for when a flow reports nothing.
logs=/tmp/out/cc-logs
mkdir -p $logs

# cc_counters <name>: a counter summed over every device of the topology.
cc_counters() {
	local d
	for d in ccd $(for i in $SENDERS; do echo ccs$i; done); do counter $d "$1"; done |
		awk '{ n += $1 } END { print n + 0 }'
}

# run <name> <marking|plain>: one staggered run.
run() {
	local name=$1 csv=/tmp/out/cc-$1.csv txt=/tmp/out/cc-$1.txt i ns t0 pids=() d0 m0
	bottleneck "$2"
	d0=$(bn_dropped) m0=$(marked)
	local cnames="np_cnp_sent rp_cnp_handled rp_rate_dec rp_rate_inc rp_paced" c
	declare -A c0
	if [ "$prov" = rrxe ]; then
		for c in $cnames; do c0[$c]=$(cc_counters $c); done
	fi
	# (perftest's duration mode busy-polls, and four pollers starve the 2-vCPU guest of
	# the CPU the packets need: the flows wait for completion events and end when
	# `timeout` stops them.)
	for i in $SENDERS; do
		ip netns exec "$NSD" timeout $((TOTAL + STARTUP + 10)) ib_send_bw -d ccd -x 1 -F -e -s 65536 \
			-n 1000000 -p $((18700 + i)) >$logs/$name-srv$i 2>&1 &
	done
	ip netns exec "$NSD" timeout $((TOTAL + 60)) ib_write_lat -d ccd -x 1 -F -s 64 \
		-n 2000 -p 18710 >$logs/$name-latsrv 2>&1 &
	for i in $SENDERS 10; do
		wait_for "ip netns exec $NSD ss -ltn | grep -q ':$((18700 + i)) '" 30
	done
	ip netns exec "$NSR" python3 tools/ccsample.py "$csv" 0.2 $((TOTAL + STARTUP + 2)) &
	local sampler=$!
	# The flows start with the sampler's clock.
	wait_for "[ -s $csv ]" 20
	for i in $SENDERS; do
		(
			sleep $(((i - 1) * STEP))
			ns=$(ns_s $i)
			ip netns exec "$ns" timeout $((TOTAL - 2 * (i - 1) * STEP + STARTUP)) ib_send_bw -d ccs$i \
				-x 1 -F -e -s 65536 -n 1000000 -p $((18700 + i)) 10.9.0.1 >$logs/$name-cli$i 2>&1
		) &
		pids+=($!)
	done
	# Latency across the loaded bottleneck, while all four flows run.
	sleep $((3 * STEP + STEP / 2 + STARTUP))
	# (When, on the sampler's clock: its latest sample, at most one interval old. The
	# probe is one more QP from sender 1, and the table's convergence treats its start
	# and end as a join and a leave.)
	local lat_from lat_to
	lat_from=$(tail -1 "$csv" | cut -d' ' -f1)
	ip netns exec "$(ns_s 1)" timeout 60 ib_write_lat -d ccs1 -x 1 -F -s 64 -n 2000 \
		-p 18710 10.9.0.1 >$logs/$name-lat 2>&1
	lat_to=$(tail -1 "$csv" | cut -d' ' -f1)
	for i in "${pids[@]}"; do wait "$i"; done
	wait "$sampler"
	# The servers wait for messages that will not come.
	ip netns exec "$NSD" pkill -f "ib_send_bw -d ccd" 2>/dev/null
	ip netns exec "$NSR" tc -s -d qdisc show dev rd >$logs/$name-qdisc 2>&1
	ip netns exec "$NSR" tc -s -d class show dev rd >>$logs/$name-qdisc 2>&1
	{
		echo "drops $(($(bn_dropped) - d0))"
		echo "marks $(($(marked) - m0))"
		echo "lat_from $lat_from"
		echo "lat_to $lat_to"
		# (Either side times the same ping-pong; the client's clock read inf once.)
		cat $logs/$name-lat $logs/$name-latsrv |
			awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ / { print "lat_p50", $5; print "lat_p99", $8; exit }'
		if [ "$prov" = rrxe ]; then
			for c in $cnames; do echo "$c $(($(cc_counters $c) - ${c0[$c]}))"; done
		fi
	} >"$txt"
	echo "congestion: $name: $(tr '\n' ' ' <"$txt")"
	wait
}

# (Tuning: RRXE_CC_RUNS=rate,delay picks runs, RRXE_CC_KNOBS="name=value,..." sets
# knobs on every device after the algorithm; RRXE_CC_RED_BURST, RRXE_CC_RED_MIN and
# RRXE_CC_RED_MAX change the marking, see lib/incast.sh.)
if [ "$prov" = rrxe ]; then
	for a in none:0:marking dcqcn:1:marking rate:2:marking delay:3:plain; do
		name=$(echo "$a" | cut -d: -f1)
		case " $(echo "${RRXE_CC_RUNS:-$name}" | tr , ' ') " in *" $name "*) ;; *) continue ;; esac
		algo_all "$(echo "$a" | cut -d: -f2)"
		for kv in $(echo "${RRXE_CC_KNOBS:-}" | tr , ' '); do
			for d in ccd $(for i in $SENDERS; do echo ccs$i; done); do
				knob $d "${kv%%=*}" "${kv#*=}"
			done
		done
		run "$name" "$(echo "$a" | cut -d: -f3)"
	done
else
	run rdma_rxe marking
fi
exit 0
