#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Teardown while traffic is in flight: the processes are killed (their QPs, MRs and CQs are
# destroyed mid-transfer), the device is deleted under running tools, the net device goes
# away, and the module is unloaded with the devices busy. Each time the tools stop, the
# command returns promptly, the kernel reports nothing (the bench scans dmesg for WARN,
# BUG and oops) and a new device moves verified data afterwards.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require exclusive verify ib_write_bw ss
ktap_set_plan 10
hosts_up
devs_up
# A long WRITE stream between the hosts, in the background; prints nothing.
# (ip netns exec executes the tool itself: $! is the tool's PID, in STREAM. The tools
# leave the job table, so that bash does not report them "Killed"; rrxe_cleanup kills
# what still runs in the namespaces.)
stream() {
	ip netns exec $NS1 ib_write_bw -d rrxe1 -x 1 -F -s 65536 -D 15 >/dev/null 2>&1 &
	STREAM=$!
	disown $!
	wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18515 '" 30
	ip netns exec $NS0 ib_write_bw -d rrxe0 -x 1 -F -s 65536 -D 15 $IP1 >/dev/null 2>&1 &
	STREAM="$STREAM $!"
	disown $!
	sleep 3	# well into the transfer
}
# Only this script's tools: never another ib_write_bw on the host.
kill_stream() { kill -9 $STREAM 2>/dev/null; }
tools_gone() { wait_for "! kill -0 $STREAM" "${1:-20}"; }
works() { verify -o write -s 65536 -n 20 -k 4; }

stream
kill_stream
ktap_check "killing both ends mid-transfer: the processes exit" tools_gone
ktap_check "... and new traffic is verified" works

stream
ktap_check "rdma link delete rrxe1 under traffic returns within 20 s" timeout 20 rdma link delete rrxe1
ktap_check "... the tools on the deleted device stop" tools_gone 40
devs_up
ktap_check "... a re-created device moves verified data" works

stream
ip -n $NS1 link del vb
ktap_check "deleting the net device under traffic removes both rrxe devices" \
	wait_for "[ -z \"\$(ls /sys/class/infiniband)\" ]" 30
# The tools' own TCP connection died with the link: they wait on it forever unless killed.
kill_stream
ktap_check "... and the tools exit when killed (nothing stuck in the driver)" tools_gone 20
hosts_down
hosts_up
devs_up

stream
ktap_check "rmmod rrxe under traffic returns within 30 s" timeout 30 modprobe -r rrxe
kill_stream
tools_gone 30
# If the module was still in use, it must unload now that its users are gone.
grep -q '^rrxe ' /proc/modules && modprobe -r rrxe
ktap_check "... the module is gone" bash -c "! grep -q '^rrxe ' /proc/modules"
devs_up
ktap_check "... reloaded, it moves verified data" works
devs_down
ktap_finished
