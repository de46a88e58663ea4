#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Allocation failures (debug kernel: CONFIG_FAILSLAB, /proc/thread-self/fail-nth): every
# verb a user calls (PD, CQ, MR, SRQ, RC and UD QP create, QP modify, CQ resize) has its
# 1st, 2nd, ... slab allocation fail in turn until it makes no more; each attempt must
# succeed or return an errno, and the device must move data afterwards. Then device add
# with allocations failing at random (failslab, this script's processes only): each
# attempt succeeds or fails with an error, and the device added last works. The bench
# scans dmesg, and on the debug kernel kmemleak runs after the script: no warning and
# no leak is allowed.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify exclusive
F=/sys/kernel/debug/failslab
[ -e /proc/self/fail-nth ] && [ -d $F ] || rrxe_skip "no fault injection (failslab, fail-nth): the debug kernel has it"
ktap_set_plan 4
hosts_up
devs_up
failslab_off() {
	echo 0 >$F/probability
	echo N >$F/task-filter
}
trap 'failslab_off; rrxe_cleanup' EXIT
# Sleeping allocations too (GFP_KERNEL: every verb's), not only atomic ones.
echo N >$F/ignore-gfp-wait
echo 0 >$F/verbose
ktap_check "every allocation of every verb fails once: clean errnos, device usable" \
	in1 "$VERIFY" -d rrxe1 -o failnth
# rdma link add with 10% of this shell's allocations failing, 30 attempts.
echo Y >$F/task-filter
echo 10 >$F/probability
echo 0 >$F/interval
echo -1 >$F/times
ok=0 fail=0
for i in $(seq 30); do
	if sh -c 'echo 1 >/proc/self/make-it-fail; exec ip netns exec '"$NS0"' rdma link add rrxe0 type rrxe netdev va' 2>/dev/null; then
		ok=$((ok + 1))
		rdma link delete rrxe0 2>/dev/null
	else
		fail=$((fail + 1))
		# A failed add leaves no device behind (or one that can be deleted).
		[ -e /sys/class/infiniband/rrxe0 ] && rdma link delete rrxe0
	fi
done
failslab_off
echo "# rdma link add under failslab: $ok succeeded, $fail failed"
# (Each attempt returned: none hung. The faults took effect: some attempts failed.)
ktap_check "device add under random allocation failures: every attempt returns, faults bite" \
	test "$fail" -gt 0
ktap_check "... and a device added afterwards comes up" devs_up
ktap_check "... moving verified data" verify -o write -s 65536 -n 20 -k 4
devs_down
ktap_finished
