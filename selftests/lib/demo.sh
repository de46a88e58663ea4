#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The `make run` demo (inside the VM): two hosts joined by veth, one rrxe device on each,
# shown with stock rdma-core tools.
cd "$(dirname "$0")/.." || exit 1
. lib/ktap.sh
set -e
hosts_up
devs_up
echo "=== rdma link show"
rdma link show
echo "=== ibv_devices"
ibv_devices
for d in rrxe0 rrxe1; do
	echo "=== ibv_devinfo -d $d"
	ibv_devinfo -d $d
done
echo "=== GID table of rrxe0"
for i in 0 1 2 3; do
	g=$(cat /sys/class/infiniband/rrxe0/ports/1/gids/$i 2>/dev/null)
	t=$(cat /sys/class/infiniband/rrxe0/ports/1/gid_attrs/types/$i 2>/dev/null)
	[ -n "$t" ] && echo "  gid[$i] $g ($t)"
done
echo "demo: OK"
