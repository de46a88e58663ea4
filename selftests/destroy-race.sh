#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A QP destroyed while a received packet still holds it. The packet's reference is then
# the QP's last, and the QP (with its rings, and the CQ and SRQ it holds) goes away in
# the receive softirq, after the process that owned it closed its device file. Nothing
# that sleeps or needs that file may run there: the rings leave mmap in the destroy
# verbs. By chance this takes a packet that finds the QP moments before the close (the
# debug kernel once caught it in srq-pingpong.sh: a sleeping function in softirq and a
# use after free of the closed file's mmap entries); here the fault point
# rrxe-DEV/fault/rx_hold_ms makes the next packet keep its QP for 2 s (10 s on the
# debug kernel), and the owner (rrxe-verify -o park) exits meanwhile. Checked: the
# packet was held, the QP was destroyed (it left `rdma resource show qp`) during the
# hold, the kernel logged nothing (without the destroy verbs' withdrawal of the rings:
# "BUG: sleeping function called from invalid context"), and the device works
# afterwards. Once with an RC QP on its own receive queue, once with one on an SRQ.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify python3
ktap_set_plan 3
hosts_up
devs_up
# The hold: long enough for the owner's exit to destroy its QPs (about 0.3 s here, over
# 4 s on the debug kernel, where each `rdma resource show` takes a second or more too).
HOLD=$((SLOW > 1 ? 10000 : 2000))
knob=/sys/kernel/debug/rrxe-rrxe1/fault/rx_hold_ms

# race <field>: park QPs of every kind on rrxe1, hold the next packet to the QP in
# <field> of park's list (4: RTS, 5: RTS on the SRQ) for $HOLD ms, and let park exit
# meanwhile.
race() {
	local f=$1
	rm -f $TMPD/park.in
	mkfifo $TMPD/park.in
	in1 "$VERIFY" -d rrxe1 -o park $IP0 <$TMPD/park.in >$TMPD/park.out 2>&1 &
	local park=$!
	exec 7>$TMPD/park.in
	wait_for "grep -q '^park:' $TMPD/park.out" $((30 * SLOW)) || { echo "# park did not start"; exec 7>&-; return 1; }
	local t qpn psn
	t=$(sed -n 's/^park: //p' $TMPD/park.out | cut -d, -f"$f")
	qpn=${t%%:*} psn=${t##*:}
	dmesg_mark
	echo $HOLD >$knob
	# (Not holding the owner's stdin open: its end is the owner's signal to exit.)
	in0 python3 tools/inject.py "$IP0" "$IP1" send 1 "$qpn" "$psn" 7>&- &
	local inj=$!
	# The hold has begun when the file reads 0 again.
	wait_for "[ \$(cat $knob) = 0 ]" $((10 * SLOW)) || { echo "# the packet was not held"; exec 7>&-; return 1; }
	rdma resource show qp link rrxe1 | grep -qw "lqpn $qpn" ||
		{ echo "# QP $qpn is not listed by rdma resource"; exec 7>&-; return 1; }
	local t0 t1 gone=0 during=0
	t0=$(date +%s%N)
	exec 7>&-
	# The QP leaves the resource table when it is destroyed: that must happen while the
	# packet still holds it (its sender, blocked in the receive softirq, still runs).
	for _ in $(seq $((HOLD / 100))); do
		if ! rdma resource show qp link rrxe1 | grep -qw "lqpn $qpn"; then
			gone=1
			kill -0 $inj 2>/dev/null && during=1
			break
		fi
		sleep 0.1
	done
	t1=$(date +%s%N)
	wait $park
	wait $inj
	echo "# QP $qpn: destroyed $(((t1 - t0) / 1000000)) ms after its owner was told to exit," \
		"$([ $during = 1 ] && echo "while" || echo "NOT while") the packet held it"
	local log
	log=$(dmesg_since | grep -E 'BUG|WARNING|KASAN|Oops|lockdep|sleeping function' | head -5)
	[ -n "$log" ] && echo "$log" | sed 's/^/# /'
	[ $gone = 1 ] && [ $during = 1 ] && [ -z "$log" ]
}
ktap_check "an RC QP's last reference dropped by a held packet after its owner exited" race 4
ktap_check "the same for an RC QP on an SRQ" race 5
ktap_check "the device still moves verified data" verify -o write -s 65536 -n 20 -k 4
devs_down
ktap_finished
