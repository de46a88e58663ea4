#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ECN and CNPs between two hosts, one packet at a time: rrxe's packets leave
# ECN-capable (ECT(0)), requests and ACKs without payload too, and only CNPs do not; a
# receiver reads Congestion Experienced over IPv6 too (netem marks instead of dropping)
# and answers with CNPs; while a verified WRITE
# stream runs, CNPs injected from the peer's address reach the requester: a standard one
# (16 zero reserved bytes, as every NIC sends) gets the DCQCN reaction even though the
# device runs "rate", an rrxe one that carries a low measured rate sets the QP's rate
# from it, one without its reserved bytes is still a standard CNP, and one for a QP
# that does not exist is dropped and counted. The data stays intact throughout.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify python3 mod:sch_netem mod:sch_prio mod:cls_u32 mod:sch_ingress mod:act_gact
ktap_set_plan 6
hosts_up
devs_up

# ECT(0) (TOS low bits 10) on the RoCEv2 packets leaving va, counted by two filters:
# one for ECT(0), one for not-ECT.
in0 tc qdisc add dev va clsact
in0 tc filter add dev va egress protocol ip prio 1 u32 match ip protocol 17 0xff \
	match ip dport 4791 0xffff match ip tos 0x02 0x03 action gact pass
in0 tc filter add dev va egress protocol ip prio 2 u32 match ip protocol 17 0xff \
	match ip dport 4791 0xffff match ip tos 0x00 0x03 action gact pass
pkts() { in0 tc -s filter show dev va egress prio "$1" | awk '/Sent [0-9]+ bytes/ { print $4; exit }'; }
verify -o write -s 65536 -n 50 -k 4 >/dev/null
ect=$(pkts 1) plain=$(pkts 2)
echo "# IPv4 RoCEv2 packets leaving va: ECT(0) ${ect:-0}, not-ECT ${plain:-0}"
# (WRITE data, READ requests and ACKs: all ECT(0).)
ktap_test_result "data packets, requests and ACKs leave ECT(0)" \
	test "${ect:-0}" -gt 100 -a "${plain:-1}" = 0
in0 tc qdisc del dev va clsact

# netem marks 5% of the ECT packets leaving va CE (and drops nothing): over IPv6. On the
# way back only the CNPs are not-ECT (counted on vb, traffic class low bits 00).
# Only RoCEv2 (UDP 4791) goes through netem: its "ecn" drops the non-ECT packets it
# picks, and a lost neighbour advertisement failed the QP's move to RTR ("Connection
# timed out") in one run of many.
in0 ping -6 -c 1 -W 2 $IP61 >/dev/null 2>&1
in0 tc qdisc add dev va root handle 1: prio bands 4 priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
in0 tc qdisc add dev va parent 1:4 handle 40: netem loss 5% ecn
in0 tc filter add dev va parent 1: protocol ipv6 prio 1 u32 match ip6 protocol 17 0xff \
	match ip6 dport 4791 0xffff flowid 1:4
in1 tc qdisc add dev vb clsact
in1 tc filter add dev vb egress protocol ipv6 prio 1 u32 match ip6 protocol 17 0xff \
	match ip6 dport 4791 0xffff match ip6 priority 0x00 0x03 action gact pass
m0=$(counter rrxe1 np_ecn_marked_roce_packets) c0=$(counter rrxe1 np_cnp_sent)
h0=$(counter rrxe0 rp_cnp_handled)
verify -o write -s 65536 -n 100 -k 4 -g 2
ok=$?
m=$(($(counter rrxe1 np_ecn_marked_roce_packets) - m0)) c=$(($(counter rrxe1 np_cnp_sent) - c0))
h=$(($(counter rrxe0 rp_cnp_handled) - h0))
n6=$(in1 tc -s filter show dev vb egress prio 1 | awk '/Sent [0-9]+ bytes/ { print $4; exit }')
echo "# IPv6: CE marks read $m, CNPs sent $c (not-ECT packets leaving vb ${n6:-none}), handled $h, netem dropped $(tc_dropped in0 qdisc show dev va)"
ktap_test_result "IPv6: CE read, CNPs sent not-ECT and handled, data intact" \
	test $ok = 0 -a "$m" -gt 0 -a "$c" -gt 0 -a "$h" -gt 0 -a "${n6:-0}" = "$c"
in1 tc qdisc del dev vb clsact
in0 tc qdisc del dev va root

# A long verified stream from rrxe0, its QP number from rdma resource. However long the
# injections below take (on the debug kernel, where the stream moves 0.4 MB/s, 1,000
# WRITEs once ended before them), it runs until SIGUSR1 after the last one: the client
# then checks the WRITEs in flight and reports how many it ran.
nlong=1000000
in1 "$VERIFY" -d rrxe1 -o write -s 65536 -n $nlong -k 4 >"$TMPD/srv" 2>&1 &
srv=$!
wait_for "in1 ss -ltn | grep -q ':18516 '" 30
in0 "$VERIFY" -d rrxe0 -o write -s 65536 -n $nlong -k 4 $IP1 >"$TMPD/cli" 2>&1 &
cli=$!
qpn=
wait_for "rdma resource show qp link rrxe0/1 | grep -q 'type RC'" 30 &&
	qpn=$(rdma resource show qp link rrxe0/1 | awk '/type RC/ { for (i = 1; i <= NF; i++) if ($i == "lqpn") { print $(i + 1); exit } }')
echo "# requester QP $qpn"

inject() { in1 python3 tools/inject.py "$IP1" "$IP0" "$@"; }
snap() { for c in rp_cnp_handled rp_rate_dec rp_paced drop_qpn; do echo "$c $(counter rrxe0 $c)"; done; }
delta() { # delta <before> <after> <counter>
	echo $(($(echo "$2" | awk -v k="$3" '$1 == k { print $2 }') - $(echo "$1" | awk -v k="$3" '$1 == k { print $2 }')))
}

# Standard CNPs (the injector spaces them beyond DCQCN's 4 us monitor period).
b=$(snap)
inject cnp 5 "$qpn"
sleep 0.2
a=$(snap)
echo "# standard CNPs: handled $(delta "$b" "$a" rp_cnp_handled), rate cuts $(delta "$b" "$a" rp_rate_dec), paced $(delta "$b" "$a" rp_paced)"
ktap_test_result "a standard CNP gets DCQCN's reaction: the rate falls, packets are paced" \
	test -n "$qpn" -a "$(delta "$b" "$a" rp_cnp_handled)" -ge 5 -a "$(delta "$b" "$a" rp_rate_dec)" -ge 1

# An rrxe CNP saying the receiver measured 2 MB/s for this QP.
b=$(snap)
inject cnp_rrxe 3 "$qpn" 2000
sleep 0.2
a=$(snap)
echo "# rrxe CNPs: handled $(delta "$b" "$a" rp_cnp_handled), rate cuts $(delta "$b" "$a" rp_rate_dec), paced $(delta "$b" "$a" rp_paced)"
# The QP's paced rate, as rdma resource shows it (driver attributes).
res=$(rdma -dd resource show qp link rrxe0/1 lqpn "$qpn" 2>&1)
echo "$res" | sed 's/^/# /'
rate=$(echo "$res" | grep -o 'cc_rate_mbps [0-9]*' | awk '{ print $2 }')
algo=$(echo "$res" | grep -o 'cc_algo [0-9]*' | awk '{ print $2 }')
ktap_test_result "an rrxe CNP sets the rate from the receiver's measured rate" \
	test "$(delta "$b" "$a" rp_cnp_handled)" -ge 3 -a "$(delta "$b" "$a" rp_paced)" -ge 1 \
	-a "${algo:-x}" = 2 -a "${rate:-0}" -gt 0

# A CNP without reserved bytes, and one for a QP that does not exist.
b=$(snap)
inject cnp_short 3 "$qpn"
inject cnp 4 0xabcde
sleep 0.2
a=$(snap)
echo "# short CNPs handled $(delta "$b" "$a" rp_cnp_handled), unknown-QP CNPs dropped $(delta "$b" "$a" drop_qpn)"
ktap_test_result "a CNP without reserved bytes is standard; one for no QP is dropped" \
	test "$(delta "$b" "$a" rp_cnp_handled)" -ge 3 -a "$(delta "$b" "$a" drop_qpn)" -ge 4

pkill -USR1 -f "rrxe-verify -d rrxe0 -o write -s 65536 -n $nlong"
wait $cli
c=$?
wait $srv
s=$?
echo "# $(tail -1 "$TMPD/cli")"
ran=$(tail -1 "$TMPD/cli" | grep -o 'iters=[0-9]*' | cut -d= -f2)
ktap_test_result "the stream the CNPs slowed down verified every byte" \
	test $c = 0 -a $s = 0 -a "${ran:-0}" -gt 0
devs_down
ktap_finished
