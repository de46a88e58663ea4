#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job of `make bench` (RRXE_MODE=perf): one provider per boot (RRXE_PROVIDER = rrxe,
# rxe or siw), two namespaces over veth, perftest and iperf3. Writes "metric value" lines
# to /tmp/out/perf.txt. Never run by `make check`.
cd "$(dirname "$0")/.." || exit 1
. lib/ktap.sh
prov=${RRXE_PROVIDER:-rrxe}
dur=${RRXE_BENCH_SECONDS:-5}
out=/tmp/out/perf.txt
: >"$out"
modprobe ib_uverbs
hosts_up
provider_up "$prov"
[ "$prov" = rxe ] || modprobe rdma_ucm 2>/dev/null
reps=${RRXE_BENCH_REPS:-3}
# once <tool> <args...>: one client/server run; prints the result (MB/s, or us for
# latency tools), nothing if it failed.
once1() {
	local tool=$1 srv v
	shift
	ip netns exec $NS1 timeout 120 "$tool" -d $d1 -F $opt "$@" >/tmp/b.srv 2>&1 &
	srv=$!
	if [ "$prov" = siw ]; then
		sleep 3 # rdma_cm listens without a TCP socket ss could see
	else
		wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18515 '" 30
	fi
	ip netns exec $NS0 timeout 120 "$tool" -d $d0 -F $opt "$@" "$IP1" >/tmp/b.cli 2>&1
	wait $srv
	case $tool in
	*_lat) v=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ { print $5; exit }' /tmp/b.cli) ;;
	*) v=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ { print $4; exit }' /tmp/b.cli) ;;
	esac
	[ -n "$v" ] || tail -5 /tmp/b.cli >&2
	echo "$v"
}
# once, again if perftest's CPU-frequency calibration failed (it then reports 0.00 or
# nothing after "Correlation coefficient ... < 0.9"; seen under the icount clock).
once() {
	local v i
	for i in 1 2 3; do
		v=$(once1 "$@")
		grep -q "Correlation coefficient" /tmp/b.cli || break
		case $v in "" | 0 | 0.00) echo "perf: $1: CPU calibration failed, again" >&2 ;; *) break ;; esac
	done
	echo "$v"
}
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
# report <metric> <failed> <values...>: records the single runs and prints the median,
# FAIL if any run failed.
report() {
	local metric=$1 failed=$2 v
	shift 2
	[ $# = 0 ] || echo "${metric}_runs $(echo "$@" | tr ' ' ',')" >>"$out"
	v=$(median "$@")
	[ "$failed" = 0 ] || v=""
	echo "$metric ${v:-FAIL}" | tee -a "$out"
}
# run <metric> <tool> <args...>: the median of $reps runs (boot-to-boot and run-to-run
# noise under TCG is tens of percent); FAIL if any run fails.
run() {
	local metric=$1 vals="" failed=0 i v
	shift
	for ((i = 0; i < reps; i++)); do
		v=$(once "$@")
		if [ -n "$v" ]; then vals="$vals $v"; else failed=1; fi
	done
	report "$metric" $failed $vals
}
run write_bw_64k_1qp ib_write_bw -s 65536 -D "$dur"
run write_bw_64k_4qp ib_write_bw -s 65536 -D "$dur" -q 4
run read_bw_64k ib_read_bw -s 65536 -D "$dur"
run send_bw_4k ib_send_bw -s 4096 -D "$dur"
run write_lat_8b ib_write_lat -s 8 -n 2000
run send_lat_8b ib_send_lat -s 8 -n 2000
run read_lat_8b ib_read_lat -s 8 -n 2000
# Loss rows: netem drops <pct> of the packets in both directions. Each lossy run follows
# a lossless run of the same tool, and the share of lossless bandwidth is the median of
# those pairs' ratios: the host's speed drifts by tens of percent over a boot, so dividing
# by the lossless rows measured minutes earlier mixes that drift into the share.
# Between the two, a run through netem with "loss 0%": the qdisc alone costs 10-30% at
# 100 MB/s, so the second share (lossy run over that one) is what the loss itself costs.
# Last, the same loss without any qdisc: a gact action on clsact egress drops 1 in
# 100/<pct> packets at random, the root staying noqueue; its share (over the lossless run)
# is the loss's cost without netem's.
# For rrxe also the packets it resent (selective retransmissions, READ re-requests,
# probes) per packet netem dropped, over the netem runs.
# no_qdisc: back to the veths' default (noqueue, no filters).
no_qdisc() {
	in0 tc qdisc del dev va root 2>/dev/null
	in1 tc qdisc del dev vb root 2>/dev/null
	in0 tc qdisc del dev va clsact 2>/dev/null
	in1 tc qdisc del dev vb clsact 2>/dev/null
}
# act_loss <loss>: drop <loss> percent of the RoCEv2 packets both ways with a tc action, no
# qdisc.
act_loss() {
	local n
	n=$(python3 -c "print(round(100 / $1))")
	no_qdisc
	act_drop in0 va "$n" && act_drop in1 vb "$n"
}
# netem <loss>: a fresh netem qdisc dropping <loss> both ways (its drop count starts at 0).
netem() {
	no_qdisc
	in0 tc qdisc add dev va root netem loss "$1"
	in1 tc qdisc add dev vb root netem loss "$1"
}
# act_dropped: packets the gact actions dropped (their counts start with act_loss).
act_dropped() {
	local a b
	a=$(tc_dropped in0 filter show dev va egress) b=$(tc_dropped in1 filter show dev vb egress)
	echo $((a + b))
}
resent() { echo $(( $(counter ${d0} retx_packets) + $(counter ${d1} retx_packets) )); }
modprobe sch_netem
# (Loss rows compare the RoCE providers; siw runs over TCP, which has its own recovery.)
# RRXE_BENCH_LOSS: the loss percentages, comma-separated (default 0.1,1,5; "none": the
# lossless rows only).
losses=${RRXE_BENCH_LOSS:-0.1,1,5}
[ "$losses" = none ] && losses=""
[ "$prov" = siw ] || for pct in ${losses//,/ }; do
	for op in write read; do
		vals="" shares="" qshares="" avals="" ashares="" failed=0 afailed=0 lost=0 res=0
		alost=0 ares=0
		for ((i = 0; i < reps; i++)); do
			base=$(once "ib_${op}_bw" -s 65536 -D "$dur")
			netem "0%"
			qbase=$(once "ib_${op}_bw" -s 65536 -D "$dur")
			netem "$pct%"
			[ "$prov" = rrxe ] && r0=$(resent)
			v=$(once "ib_${op}_bw" -s 65536 -D "$dur")
			lost=$((lost + $(dropped)))
			[ "$prov" = rrxe ] && res=$((res + $(resent) - r0))
			# (rdma_rxe fails the QP on the first packet the stack refuses to send, its
			# send_err counter: these rows are FAIL for it, the netem ones stand.)
			act_loss "$pct" || afailed=1
			[ "$prov" = rrxe ] && r0=$(resent)
			av=$(once "ib_${op}_bw" -s 65536 -D "$dur")
			alost=$((alost + $(act_dropped)))
			[ "$prov" = rrxe ] && ares=$((ares + $(resent) - r0))
			no_qdisc
			if [ -z "$base" ] || [ -z "$av" ]; then
				afailed=1
			else
				avals="$avals $av"
				ashares="$ashares $(python3 -c "print(round(100 * $av / $base))")"
			fi
			if [ -z "$v" ] || [ -z "$base" ] || [ -z "$qbase" ]; then
				failed=1
				continue
			fi
			vals="$vals $v"
			shares="$shares $(python3 -c "print(round(100 * $v / $base))")"
			qshares="$qshares $(python3 -c "print(round(100 * $v / $qbase))")"
		done
		report "${op}_bw_64k_loss_$pct" $failed $vals
		report "${op}_share_$pct" $failed $shares
		report "${op}_qshare_$pct" $failed $qshares
		report "${op}_bw_64k_aloss_$pct" $afailed $avals
		report "${op}_ashare_$pct" $afailed $ashares
		if [ "$prov" = rrxe ] && [ "$lost" -gt 0 ]; then
			echo "${op}_resent_per_lost_$pct $(python3 -c "print(round($res / $lost, 2))")" | tee -a "$out"
		fi
		if [ "$prov" = rrxe ] && [ "$alost" -gt 0 ]; then
			echo "${op}_aresent_per_lost_$pct $(python3 -c "print(round($ares / $alost, 2))")" | tee -a "$out"
		fi
	done
done
# iperf3 <metric>: TCP over the same veth, one run.
iperf3_row() {
	local v
	ip netns exec $NS1 iperf3 -s -1 >/dev/null 2>&1 &
	wait_for "ip netns exec $NS1 ss -ltn | grep -q ':5201 '" 10
	v=$(ip netns exec $NS0 iperf3 -c "$IP1" -t "$dur" -J 2>/dev/null |
		python3 -c 'import json,sys; print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/8e6, 1))' 2>/dev/null)
	echo "$1 ${v:-FAIL}" | tee -a "$out"
}
iperf3_row iperf3_tcp
# Jumbo frames (RRXE_BENCH_JUMBO=0 skips them): both veths at MTU 9000, where the RoCE
# providers' active MTU, and so perftest's path MTU, is 4096. At 1500 (path MTU 1024)
# per-packet costs dominate, here per-byte costs: a lead at one can vanish at the other.
# A row is FAIL if the port did not report 4096.
if [ "${RRXE_BENCH_JUMBO:-1}" != 0 ]; then
	no_qdisc
	ip -n $NS0 link set va mtu 9000
	ip -n $NS1 link set vb mtu 9000
	jumbo=1
	[ "$prov" = siw ] || wait_for "ibv_devinfo -d $d0 | grep -Eq 'active_mtu:[[:space:]]+4096'" 10 || jumbo=0
	echo "perf: $d0 at netdev MTU 9000: $(ibv_devinfo -d $d0 2>/dev/null | grep -m1 active_mtu)" >&2
	# jrun <metric> <tool> <args...>: as run, FAIL without the 4096 path MTU.
	jrun() { if [ $jumbo = 1 ]; then run "$@"; else report "$1" 1; fi; }
	jrun write_bw_64k_1qp_j ib_write_bw -s 65536 -D "$dur"
	jrun write_bw_64k_4qp_j ib_write_bw -s 65536 -D "$dur" -q 4
	jrun read_bw_64k_j ib_read_bw -s 65536 -D "$dur"
	jrun send_bw_64k_j ib_send_bw -s 65536 -D "$dur"
	iperf3_row iperf3_tcp_j
fi
