#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RNBD (the RDMA network block device, over the RTRS transport) over rrxe, server and
# client on one device of one host (as blktests' rnbd group runs them): rnbd_server
# exports a loop device backed by a file on tmpfs, the client maps it through
# /sys/class/rnbd-client/ctl/map_device with a path to rrxe0's address, and I/O through
# /dev/rnbdN is checked: fio random writes 4k-128k with crc32c verification, then dd of
# random data with the checksums of the read-back bytes and of the backing file compared
# to the written ones. RTRS moves I/O through fast-registered MRs and invalidates them
# (rtrs_server's always_invalidate): rrxe's mr_reg and invalidation counters must move. Then the device is unmapped, the
# session closes, and the modules, rrxe included, unload.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require fio sha256sum losetup mod:loop mod:rnbd_server mod:rnbd_client exclusive
IF0=rrxe-rn0
IF1=rrxe-rn1
IP=10.0.10.1
IMG=$TMPD/rnbd.img
SESS=rrxe-selftest-$$
LOOP=
RNBD=

rnbd_cleanup() {
	[ -n "$RNBD" ] && [ -e /sys/block/$RNBD/rnbd/unmap_device ] &&
		echo force >/sys/block/$RNBD/rnbd/unmap_device 2>/dev/null
	modprobe -r rnbd_client rnbd_server 2>/dev/null
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	ip link del $IF0 2>/dev/null
}
trap 'rnbd_cleanup; rrxe_cleanup' EXIT

rnbd_blocks() { ls /sys/block 2>/dev/null | grep -E '^rnbd[0-9]+$'; }

map() {
	local before
	before=$(rnbd_blocks)
	echo "sessname=$SESS path=ip:$IP device_path=${LOOP#/dev/}" \
		>/sys/class/rnbd-client/ctl/map_device || return 1
	wait_for '[ -n "$(comm -13 <(echo "$before") <(rnbd_blocks))" ]' 20 || return 1
	RNBD=$(comm -13 <(echo "$before") <(rnbd_blocks) | head -1)
	wait_for "[ -b /dev/$RNBD ]" 10 || return 1
	echo "# mapped $LOOP as /dev/$RNBD ($(cat /sys/block/$RNBD/size) sectors)," \
		"state $(cat /sys/block/$RNBD/rnbd/state)"
	[ "$(cat /sys/block/$RNBD/rnbd/state)" = open ] &&
		[ "$(cat /sys/block/$RNBD/size)" = $((64 << 11)) ]
}

unmap() {
	echo normal >/sys/block/$RNBD/rnbd/unmap_device || return 1
	wait_for "[ ! -e /sys/block/$RNBD ]" 20
}

one_device_up $IF0 $IF1 $IP
truncate -s 64M "$IMG"
LOOP=$(losetup -f --show "$IMG") || rrxe_skip "no loop device"
modprobe -r rnbd_server
modprobe rnbd_server dev_search_path=/dev || rrxe_skip "rnbd_server does not load"
ktap_set_plan 8

dmesg_mark
fr_mark
attach_or_stop "rnbd map_device over rrxe0 (same device, same host): the device open" \
	'rnbd|rtrs|rdma' map
ktap_check "fio random writes 4k-128k, crc32c verified on read" \
	fio_verify /dev/$RNBD
ktap_check "dd of 8 MiB random data: checksums of read-back and backing file" \
	dd_verify /dev/$RNBD "$IMG"
ktap_check "RTRS fast-registered its buffers and invalidated them" fr_moved
ktap_check "unmap_device removes /dev/$RNBD" unmap
ktap_check "rnbd_client and rnbd_server unload (the RTRS session closes)" \
	modprobe -r rnbd_client rnbd_server rtrs_client rtrs_server
rdma link delete rrxe0
ktap_check "rrxe unloads afterwards" modprobe -r rrxe
ktap_check "no RTRS or RNBD errors in the kernel log" \
	eval '! dmesg_since | grep -iE "(rnbd|rtrs).*(error|fail)" | sed "s/^/# /" | grep .'
ktap_finished
