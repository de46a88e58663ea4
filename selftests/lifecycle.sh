#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Device lifetime: rdma link delete, netdev removal and module unload each remove the
# devices; rdma link add autoloads the module through its alias.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require exclusive
ktap_set_plan 9
hosts_up
devs_up
rdma link delete rrxe0
ktap_check "rdma link delete removes rrxe0" bash -c "! ls /sys/class/infiniband | grep -qx rrxe0"
ktap_check "... and leaves rrxe1" test -e /sys/class/infiniband/rrxe1
ktap_check "a device can be re-created after delete" in0 rdma link add rrxe0 type rrxe netdev va
ip -n $NS0 link del va
ktap_check "deleting the veth pair removes both devices" \
	wait_for "[ -z \"\$(ls /sys/class/infiniband)\" ]"
hosts_down
hosts_up
devs_up
ibv_devinfo -d rrxe0 >/dev/null 2>&1
ktap_check "rmmod rrxe with devices present succeeds" modprobe -r rrxe
ktap_check "... and removes them" bash -c "[ -z \"\$(ls /sys/class/infiniband)\" ]"
ktap_check "... and the module is gone" bash -c "! grep -q '^rrxe ' /proc/modules"
ktap_check "rdma link add autoloads rrxe (rdma-link-rrxe alias)" in0 rdma link add rrxe0 type rrxe netdev va
ktap_check "... and the module is loaded" grep -q '^rrxe ' /proc/modules
devs_down
ktap_finished
