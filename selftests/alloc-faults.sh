#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Allocation failures in the packet paths (rrxe's fault point, debugfs
# rrxe-DEV/fault/interval: every n-th allocation they make fails): the skbs of data,
# ACKs and READ responses, the records of WRITE payload placed early, slots in a QP's
# receive queue. Each failure is a lost packet, counted in nomem, that the protocol
# recovers: WRITE+READ, SEND and verified-WRITE streams complete byte-exact with both
# devices failing allocations, no work request fails, reassembly memory goes back to
# zero, and once the point is off the device runs clean. UD has nothing to recover: its
# sends complete successfully, the datagrams whose allocation failed are lost, and every
# one that arrives is intact (tools/ud_stream.py, python3-pyverbs). (The verbs' own
# allocations: failslab.sh, on the debug kernel.)
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify
ktap_set_plan 10
hosts_up
devs_up
. lib/verify.sh

# interval <n>: arm both devices' fault point (0: off).
interval() { echo "$1" >$DBG/rrxe-rrxe0/fault/interval && echo "$1" >$DBG/rrxe-rrxe1/fault/interval; }
# both <name>: "<rrxe0's> <rrxe1's>" value of a counter.
both() { echo "$(counter rrxe0 "$1") $(counter rrxe1 "$1")"; }
# faulty <n> <command...>: a data-checked run (verify, ud) with every n-th allocation
# failing on both devices; then each device must have injected failures and counted them
# as nomem.
faulty() {
	local n=$1
	shift
	local -A a0 b0 a1 b1
	counters_snap a0 rrxe0
	counters_snap b0 rrxe1
	interval "$n"
	"$@"
	local rc=$?
	interval 0
	counters_snap a1 rrxe0
	counters_snap b1 rrxe1
	# d <array after> <array before> <counter>: the counter's change.
	d() { local -n x=$1 y=$2; echo $(( ${x[$3]:-0} - ${y[$3]:-0} )); }
	local fa fb ma mb
	fa=$(d a1 a0 fault_alloc) fb=$(d b1 b0 fault_alloc) ma=$(d a1 a0 nomem) mb=$(d b1 b0 nomem)
	echo "# every ${n}th: injected $fa (rrxe0) and $fb (rrxe1), nomem $ma and $mb," \
		"resent $(( $(d a1 a0 retx_packets) + $(d b1 b0 retx_packets) ))"
	[ $rc = 0 ] && [ $fa -gt 0 ] && [ $fb -gt 0 ] && [ $ma -ge $fa ] && [ $mb -ge $fb ]
}

ok=1
for d in rrxe0 rrxe1; do
	[ "$(cat $DBG/rrxe-$d/fault/interval 2>/dev/null)" = 0 ] || { echo "# $d: no fault/interval at 0"; ok=0; }
done
ktap_eq "fault/interval in debugfs, off by default" 1 $ok

ktap_check "WRITE+READ 64 KiB x100, every 50th allocation failing" faulty 50 verify -o write -s 65536 -n 100 -k 4
ktap_check "SEND 4 KiB x1000, every 10th allocation failing" faulty 10 verify -o send -s 4096 -n 1000 -k 16
ip -n $NS0 link set va mtu 9000
ip -n $NS1 link set vb mtu 9000
ktap_check "WRITE+READ 1 MiB x10 at MTU 4096, every 7th allocation failing" \
	faulty 7 verify -o write -s 1048576 -n 10 -k 2 -m 4096
ip -n $NS0 link set va mtu 1500
ip -n $NS1 link set vb mtu 1500

# A verified WRITE's CRC covers the payload of a packet that was never allocated: its
# bytes are still gathered, so every WRITE checks out the first time.
vknob rrxe0 enable 1
vknob rrxe1 enable 1
mark
ktap_check "verified WRITE 16 KiB x200, every 20th allocation failing" faulty 20 verify -o vwrite -s 16384 -n 200 -k 4
show rrxe0.verify_sent rrxe1.verify_ok rrxe1.verify_failed rrxe0.verify_resent
ktap_eq "every verified WRITE checked once, none failed" "200 200 0 0" \
	"$(delta rrxe0.verify_sent) $(delta rrxe1.verify_ok) $(delta rrxe1.verify_failed) $(delta rrxe0.verify_resent)"
vknob rrxe0 enable 0
vknob rrxe1 enable 0

# ud <count>: UD SENDs of 1 KiB from rrxe0 to rrxe1 (ud_stream.py's checks); its summary
# line goes to the log and to $TMPD/ud.out.
ud() {
	timeout $((120 * SLOW)) python3 tools/ud_stream.py rrxe0 rrxe1 "$1" 1024 $((100 * SLOW)) >$TMPD/ud.out 2>&1
	local rc=$?
	sed 's/^/# /' $TMPD/ud.out
	return $rc
}
# ud_faulty <n>: 1000 datagrams under faulty <n>; some must be lost.
ud_faulty() {
	faulty "$1" ud 1000 || return 1
	local got
	got=$(awk '/^sent/ { print $4 }' $TMPD/ud.out)
	[ "${got:-1000}" -lt 1000 ]
}
if python3 -c 'import pyverbs.device' 2>/dev/null; then
	ktap_check "UD SEND 1 KiB x1000, every 10th allocation failing: sends succeed, losses only" ud_faulty 10
	ktap_check "UD with the point off: 2000 of 2000 datagrams arrive intact" \
		eval 'ud 2000 && grep -qx "sent 2000 received 2000" $TMPD/ud.out'
else
	ktap_test_skip "UD under allocation failures (python3-pyverbs not installed)"
	ktap_test_skip "UD with the point off (python3-pyverbs not installed)"
fi

ktap_eq "no reassembly memory held afterwards (reasm_bytes)" "0 0" "$(both reasm_bytes)"
f0=$(both fault_alloc)
ok=1
verify -o write -s 65536 -n 50 -k 4 || ok=0
[ "$(both fault_alloc)" = "$f0" ] || { echo "# fault_alloc grew with the point off"; ok=0; }
ktap_eq "with the point off: a clean WRITE+READ stream, nothing injected" 1 $ok
devs_down
ktap_finished
