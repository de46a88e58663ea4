#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The `make run` demo (inside the VM): two hosts joined by veth, one rrxe device on each,
# shown with stock rdma-core tools.
cd "$(dirname "$0")/.." || exit 1
. lib/ktap.sh
hosts_up
devs_up || { echo "demo: could not create the devices"; exit 1; }
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
	if [ -n "$t" ]; then echo "  gid[$i] $g ($t)"; fi
done
echo "=== ib_write_bw 64 KiB between rrxe0 (ns0) and rrxe1 (ns1), IPv4 GID"
ip netns exec $NS1 ib_write_bw -d rrxe1 -x 1 -F -s 65536 -n 2000 >/tmp/bw.srv 2>&1 &
srv=$!
wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18515 '" 30
ip netns exec $NS0 ib_write_bw -d rrxe0 -x 1 -F -s 65536 -n 2000 "$IP1" || { echo "demo: ib_write_bw failed"; exit 1; }
wait $srv || { echo "demo: ib_write_bw server failed"; exit 1; }
echo "demo: OK"
