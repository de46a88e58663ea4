#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The XF_SOLO hint: a message of at most 16 KiB that its application awaits (one at a
# time) is flagged, and its receiver processes its packets in the receive softirq
# (counter rx_solo); the responses to a flagged READ are flagged too. Every rrxe-verify
# transfer is data-checked. A stream that signals one WQE in many (perftest), a message
# over 16 KiB and a peer that did not negotiate selective retransmission get no flag,
# and their packets still go through the QP's work item.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify ib_write_bw ss
ktap_set_plan 5
hosts_up
devs_up

# counted <command...>: runs the command, then sets S0 and S1 to how much rx_solo grew on
# rrxe0 (requester: READ responses) and rrxe1 (responder: SEND and WRITE packets).
counted() {
	local a0 a1
	a0=$(counter rrxe0 rx_solo) a1=$(counter rrxe1 rx_solo)
	"$@" || return 1
	S0=$(($(counter rrxe0 rx_solo) - a0)) S1=$(($(counter rrxe1 rx_solo) - a1))
	echo "# rx_solo: rrxe0 +$S0, rrxe1 +$S1"
}

# One 4 KiB WRITE at a time, each read back once complete: 4 packets of 1 KiB each way
# per iteration, 200 iterations; 15 in 16 flagged, and a few may find the QP busy.
solo_write() { counted verify -o vwrite -s 4096 -n 200 -k 1 && [ $S1 -ge 200 ] && [ $S0 -ge 200 ]; }
ktap_check "4 KiB WRITE then READ, one at a time: both directions flagged" solo_write

solo_send() { counted verify -o send -s 16384 -n 100 -k 1 && [ $S1 -ge 100 ]; }
ktap_check "16 KiB SEND, one at a time: flagged" solo_send

big() { counted verify -o vwrite -s 65536 -n 20 -k 1 && [ $S1 -eq 0 ] && [ $S0 -eq 0 ]; }
ktap_check "64 KiB WRITE and READ, one at a time: over the limit, not flagged" big

# perftest's stream: 4 KiB WRITEs, one WQE in 100 signaled: never awaited, never flagged
# (an unsignaled WQE ends the run, the signaled one after it is the unflagged probe).
write_bw() {
	ip netns exec $NS1 timeout 60 ib_write_bw -d rrxe1 -F -x 1 -s 4096 -n 2000 >$TMPD/bw.srv 2>&1 &
	wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18515 '" 30 || return 1
	ip netns exec $NS0 timeout 60 ib_write_bw -d rrxe0 -F -x 1 -s 4096 -n 2000 $IP1 >$TMPD/bw.cli 2>&1 || return 1
	wait $!
}
stream() {
	local w0=$(counter rrxe1 rx_bytes)
	counted write_bw || return 1
	echo "# rx_bytes +$(($(counter rrxe1 rx_bytes) - w0))"
	# (At least the 2000 WRITEs' payload arrived.)
	[ $S1 -eq 0 ] && [ $(($(counter rrxe1 rx_bytes) - w0)) -ge 8192000 ]
}
ktap_check "ib_write_bw 4 KiB (one WQE in 100 signaled): the stream is not flagged" stream

# Towards a peer that does not take selective retransmission (as rdma_rxe), no flag.
devs_down
rrxe_load selective=0 && devs_up
off() {
	counted verify -o vwrite -s 4096 -n 50 -k 1 || return 1
	echo "# sel_negotiated $(counter rrxe0 sel_negotiated)"
	[ $S1 -eq 0 ] && [ $S0 -eq 0 ] && [ "$(counter rrxe0 sel_negotiated)" -eq 0 ]
}
ktap_check "selective=0: nothing negotiated, nothing flagged" off
devs_down
rrxe_load
ktap_finished
