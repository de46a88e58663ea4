#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Churn: RRXE_CHURN_CYCLES (default 10,000, 2,000 on the debug kernel) cycles of two RC
# QPs created, connected to each other, a WRITE read back and compared, both destroyed;
# one QP pair reset and connected again four times, each connection starting its
# congestion control afresh;
# RRXE_LINK_CYCLES (default 200, 20 on the debug kernel) rdma link add/delete cycles;
# the net device taken down and up, and its MTU changed, while traffic runs in both
# directions. The device must move verified data afterwards, hold no kept packets, and
# the kernel must report nothing (the bench scans dmesg; on the debug kernel kmemleak
# scans after the script).
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require exclusive verify ib_write_bw ss
ktap_set_plan 7
hosts_up
devs_up
# On the debug kernel (SLOW) 10,000 QP cycles took 632 s in one boot and more than the
# script's 1,200 s in another, and an rdma link add with its delete takes seconds: the
# script runs a fifth of the QP cycles and a tenth of the link cycles there, so that its
# later cases get their turn (RRXE_CHURN_CYCLES=10000 runs them all).
cycles=${RRXE_CHURN_CYCLES:-$((SLOW > 1 ? 2000 : 10000))}
links=${RRXE_LINK_CYCLES:-$((SLOW > 1 ? 20 : 200))}
t0=$(date +%s)
ktap_check "$cycles QP create/connect/WRITE+READ/destroy cycles" \
	in1 "$VERIFY" -d rrxe1 -o churn -n "$cycles" -s 4096
echo "# $cycles cycles in $(($(date +%s) - t0)) s"

# Reconnection: one QP pair moved to RESET and connected again with new PSNs; each
# connection WRITEs 1 MiB (1,024 packets) read back and compared. Under `rate` (the
# default) a connection starts its congestion control afresh, so its start window of
# rate_init_win packets holds that WRITE at least once; a QP that kept its state from
# the connection before would find its window already opened (rp_start_held rises by 0).
# (Run from the initial namespace: there the device's own sysfs entry, with its
# hw_counters, is visible; a namespace sees a copy without them.)
out=$("$VERIFY" -d rrxe1 -o recon -n 4 -s 1048576)
rc=$?
echo "# $out"
held=$(echo "$out" | sed -n 's/.* held=\([-0-9,]*\) ok$/\1/p')
ok=0
[ "$rc" = 0 ] && [ -n "$held" ] && ! echo "$held" | tr ',' '\n' | grep -qvx '[1-9][0-9]*' && ok=1
ktap_eq "4 connections of one QP pair, reset between them: data intact, each starts its own window" 1 $ok

t0=$(date +%s)
ok=1
for ((i = 0; i < links; i++)); do
	rdma link delete rrxe0 || { ok=0; break; }
	in0 rdma link add rrxe0 type rrxe netdev va || { ok=0; break; }
done
wait_for "grep -q ffff:0a00 /sys/class/infiniband/rrxe0/ports/1/gids/1" 10 || ok=0
echo "# $i link cycles in $(($(date +%s) - t0)) s"
ktap_eq "$links rdma link delete/add cycles" 1 $ok

# WRITE streams both ways (two perftest pairs on their own ports), then the net devices
# go down and up and change MTU under them.
streams() {
	STREAMS=""
	ip netns exec $NS1 ib_write_bw -d rrxe1 -x 1 -F -s 65536 -D 12 -p 18601 >/dev/null 2>&1 &
	STREAMS="$STREAMS $!"
	ip netns exec $NS0 ib_write_bw -d rrxe0 -x 1 -F -s 65536 -D 12 -p 18602 >/dev/null 2>&1 &
	STREAMS="$STREAMS $!"
	wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18601 '" 30
	wait_for "ip netns exec $NS0 ss -ltn | grep -q ':18602 '" 30
	ip netns exec $NS0 ib_write_bw -d rrxe0 -x 1 -F -s 65536 -D 12 -p 18601 $IP1 >/dev/null 2>&1 &
	STREAMS="$STREAMS $!"
	ip netns exec $NS1 ib_write_bw -d rrxe1 -x 1 -F -s 65536 -D 12 -p 18602 $IP0 >/dev/null 2>&1 &
	STREAMS="$STREAMS $!"
	sleep 3
}
streams
for i in 1 2 3; do
	ip -n $NS1 link set vb down
	sleep 0.5
	ip -n $NS1 link set vb up
	ip -n $NS0 link set va mtu $((i % 2 ? 9000 : 1500))
	ip -n $NS1 link set vb mtu $((i % 2 ? 9000 : 1500))
	sleep 0.5
done
kill -9 $STREAMS 2>/dev/null
ktap_check "netdev down/up and MTU changes under traffic both ways: the tools exit" \
	wait_for "! kill -0 $STREAMS" 30
hosts_up
wait_for "grep -q ffff:0a00 /sys/class/infiniband/rrxe1/ports/1/gids/1" 10
ktap_check "... and the devices move verified data" verify -o write -s 65536 -n 50 -k 4
ktap_eq "nothing kept afterwards (reasm_bytes, both devices)" "0 0" \
	"$(counter rrxe0 reasm_bytes) $(counter rrxe1 reasm_bytes)"
devs_down
ktap_check "rrxe unloads" modprobe -r rrxe
ktap_finished
