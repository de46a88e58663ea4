#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Allocation failures (debug kernel: CONFIG_FAILSLAB, /proc/thread-self/fail-nth): every
# verb a user calls (PD, CQ, MR, SRQ, RC and UD QP create, QP modify, CQ resize) has its
# 1st, 2nd, ... slab allocation fail in turn until it makes no more; each attempt must
# succeed or return an errno, and the device must move data afterwards, after being
# deleted and added again. Device add (the netlink request `rdma link add` sends) has its
# n-th allocation fail, n = 1 to 16 and then a quarter further each time (hundreds of
# allocations at about 13 s per add and delete here): each attempt adds the device or
# fails with an errno and leaves none. The bench scans dmesg, and on the debug kernel
# kmemleak runs after the script: no warning and no leak is allowed.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify exclusive
F=/sys/kernel/debug/failslab
[ -e /proc/self/fail-nth ] && [ -d $F ] || rrxe_skip "no fault injection (failslab, fail-nth): the debug kernel has it"
ktap_set_plan 4
hosts_up
devs_up
# The markers tell the bench's log scan that allocation-failure reports (vmalloc's
# warn_alloc stack dump) in between were injected.
echo "rrxe-selftest: fault injection on" >/dev/kmsg
failslab_off() {
	echo 0 >$F/probability
	echo N >$F/task-filter
	echo "rrxe-selftest: fault injection off" >/dev/kmsg
}
trap 'failslab_off; rrxe_cleanup' EXIT
# Sleeping allocations too (GFP_KERNEL: every verb's), not only atomic ones.
echo N >$F/ignore-gfp-wait
echo 0 >$F/verbose
ktap_check "every allocation of every verb fails once: clean errnos, device usable" \
	in1 "$VERIFY" -d rrxe1 -o failnth
devs_down
# The faults go into the netlink request alone (the helper sends it itself, with its
# pages locked): random failures in a process that loads ip and rdma from the guest's
# 9p root break the 9p client for every process.
ktap_check "device add with its n-th allocation failing: clean errnos, no half-made device" \
	in1 "$VERIFY" -o failadd -d rrxefa vb
ktap_check "a device added afterwards comes up" devs_up
ktap_check "... moving verified data" verify -o write -s 65536 -n 20 -k 4
devs_down
ktap_finished
