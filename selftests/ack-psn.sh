#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The PSN of the responder's plain ACKs. After a READ or an atomic, an ACK of "everything
# so far" must not carry the PSN of that READ's last response (or of the ATOMIC
# ACKNOWLEDGE): rdma_rxe's requester completes a READ it is still waiting for on such an
# ACK, without the data of the response that was lost (the interop test caught it: the
# last 1 KiB of a 64 KiB READ arrived as zeros, about once in 50 runs at 1% loss). With
# selective retransmission off (an IBTA peer's mode) and netem dropping 1%, pipelined
# verified WRITE+READ pairs and atomics run while tcpdump records what the responder
# sends; selftests/tools/ack_psn.py then checks that no plain ACK names the PSN of a READ
# response or atomic response on the same QP.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require exclusive verify tcpdump python3 mod:sch_netem
ktap_set_plan 4
hosts_up
rrxe_load selective=0 || ktap_print_msg "modprobe rrxe selective=0 failed"
devs_up
cap=$TMPD/ack-psn.pcap
# (Not through in1: $! must be tcpdump itself, or kill leaves it holding our stdout.)
ip netns exec $NS1 tcpdump -Z root -U -i vb -w $cap -s 64 udp port 4791 >/dev/null 2>&1 &
dump=$!
wait_for "[ -s $cap ]" 10
in0 tc qdisc replace dev va root netem loss 1%
in1 tc qdisc replace dev vb root netem loss 1%
ktap_check "verified WRITE+READ, 8 pairs in flight, under 1% loss (go-back-N)" \
	verify -o write -s 65536 -n 100 -k 8
ktap_check "verified atomics under 1% loss (go-back-N)" verify -o atomic -n 300 -k 8
in0 tc qdisc del dev va root
in1 tc qdisc del dev vb root
ktap_check "verified WRITE+READ without loss" verify -o write -s 16384 -n 300 -k 16
sleep 1
kill $dump
wait $dump
ktap_check "no plain ACK carries a response's PSN or one behind a response sent before it" \
	bash -c "python3 tools/ack_psn.py $cap $IP1 | sed 's/^/# /'; exit \${PIPESTATUS[0]}"
ktap_finished
