#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RC loss recovery between two rrxe devices (selective retransmission, negotiated by
# default; go-back-N is covered by selective.sh with selective=0 and by the interop
# test): with netem dropping 2% of the packets in both directions, WRITE, SEND and READ
# transfers and a data-checked pingpong complete, and the counters show the recovery.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require ib_write_bw ib_send_bw ib_read_bw ibv_rc_pingpong ss mod:sch_netem
ktap_set_plan 6
hosts_up
devs_up
pt() { # pt <tool> <args...>
	local tool=$1
	shift
	ip netns exec $NS1 timeout 120 "$tool" -d rrxe1 -F -x 1 "$@" >$TMPD/lr.srv 2>&1 &
	local srv=$!
	wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18515 '" 30
	ip netns exec $NS0 timeout 120 "$tool" -d rrxe0 -F -x 1 "$@" "$IP1" >$TMPD/lr.cli 2>&1
	local c=$?
	wait $srv
	local s=$?
	if [ $c -ne 0 ] || [ $s -ne 0 ]; then
		echo "# $tool client rc=$c server rc=$s"
		grep -i -E "error|fail" $TMPD/lr.cli | head -3 | sed 's/^/# cli: /'
		return 1
	fi
	echo "# $tool $*: $(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ { print $4 " MB/s"; exit }' $TMPD/lr.cli)"
}
ip netns exec $NS0 tc qdisc replace dev va root netem loss 2%
ip netns exec $NS1 tc qdisc replace dev vb root netem loss 2%
resent() {
	local d n=0
	for d in rrxe0 rrxe1; do
		n=$(( n + $(counter $d retransmits) + $(counter $d retx_packets) ))
	done
	echo $n
}
before=$(resent)
ktap_check "ib_write_bw 64 KiB under 2% loss" pt ib_write_bw -s 65536 -n 100
ktap_check "ib_send_bw 64 KiB under 2% loss" pt ib_send_bw -s 65536 -n 100
ktap_check "ib_read_bw 64 KiB, 16 outstanding, under 2% loss" pt ib_read_bw -s 65536 -n 100 --outs 16
# A tool's error lines and last lines, once each, as KTAP diagnostics prefixed "<tag>:".
tool_errors() {
	{ grep -i "fail\|error\|status\|couldn" "$1"; tail -3 "$1"; } | awk '!s[$0]++' | sed "s/^/# $2: /"
}
pp_ok() {
	ip netns exec $NS1 timeout 120 ibv_rc_pingpong -d rrxe1 -g 1 -c -n 300 -s 16384 >$TMPD/lr.pps 2>&1 &
	local srv=$!
	wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18515 '" 30
	ip netns exec $NS0 timeout 120 ibv_rc_pingpong -d rrxe0 -g 1 -c -n 300 -s 16384 "$IP1" >$TMPD/lr.ppc 2>&1
	local c=$?
	wait $srv
	local s=$?
	[ $c -eq 0 ] && [ $s -eq 0 ] && grep -q "300 iters" $TMPD/lr.ppc && return 0
	echo "# ibv_rc_pingpong client rc=$c server rc=$s"
	tool_errors $TMPD/lr.ppc cli
	tool_errors $TMPD/lr.pps srv
	echo "# $(rdma statistic show link rrxe0/1 | grep -o 'timeouts [0-9]*\|tlp_sent [0-9]*\|rnr_nak_rcvd [0-9]*\|local_errors [0-9]*' | tr '\n' ' ')"
	return 1
}
ktap_check "ibv_rc_pingpong -c (data checked) under 2% loss" pp_ok
after=$(resent)
echo "# retransmits: $((after - before))"
ktap_check "the loss was recovered by retransmission (counter moved)" test $((after - before)) -gt 0
ip netns exec $NS0 tc qdisc del dev va root
ip netns exec $NS1 tc qdisc del dev vb root
ktap_check "both ports are ACTIVE after the lossy runs" \
	bash -c "ibv_devinfo -d rrxe0 | grep -q PORT_ACTIVE && ibv_devinfo -d rrxe1 | grep -q PORT_ACTIVE"
devs_down
ktap_finished
