#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad rdma link requests fail with the right errno and change nothing: a second device on
# the same netdev (EEXIST), a missing netdev (ENODEV), a duplicate device name.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require
ktap_set_plan 7
hosts_up
devs_up
count() { ls /sys/class/infiniband | wc -l; }
before=$(count)
dmesg_mark
err=$(in0 rdma link add rrxe9 type rrxe netdev va 2>&1)
rc=$?
ktap_check "second device on va is refused" test $rc -ne 0
ktap_check "... with EEXIST" grep -q "File exists" <<<"$err"
err=$(in0 rdma link add rrxe9 type rrxe netdev nosuchif 2>&1)
rc=$?
ktap_check "device on a missing netdev is refused" test $rc -ne 0
ktap_check "... with ENODEV" grep -q "No such device" <<<"$err"
ip -n $NS0 link add dummy0 type dummy 2>/dev/null || ip -n $NS0 link add dummy0 type veth peer name dummy1
err=$(in0 rdma link add rrxe1 type rrxe netdev dummy0 2>&1)
rc=$?
ktap_check "a duplicate device name is refused" test $rc -ne 0
ktap_eq "no device was created by the failed requests" "$before" "$(count)"
ktap_check "dmesg names the netdev that already has a device" \
	grep -q 'rrxe: va already has device rrxe0' <<<"$(dmesg_since)"
ip -n $NS0 link del dummy0 2>/dev/null
devs_down
ktap_finished
