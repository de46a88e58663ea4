#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SRP (the SCSI RDMA Protocol) over rrxe, initiator and target on one device of one host
# (as blktests' srp group runs them over rdma_rxe): the LIO target's SRP fabric
# (ib_srpt) exports a loop device backed by a file on tmpfs through an iblock backstore
# and listens on rdma_cm port 5000; the initiator (ib_srp) logs in with add_target
# ("dest=<address>:5000", RDMA/CM instead of the IB CM) and a SCSI disk appears. I/O
# through it is checked: fio random writes 4k-128k with crc32c verification, then dd of
# random data with the checksums of the read-back bytes and of the backing file compared
# to the written ones. The initiator maps every I/O with a fast-registered MR and
# invalidates it afterwards: rrxe's mr_reg and invalidation counters must move. Then the
# remote port is deleted, the target torn down through configfs, and the modules, rrxe
# included, unload.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require fio sha256sum losetup mod:loop mod:ib_srp mod:ib_srpt mod:target_core_iblock \
	mod:sd_mod exclusive
IF0=rrxe-sr0
IF1=rrxe-sr1
IP=10.0.10.1
PORT=5000
IMG=$TMPD/srp.img
T=/sys/kernel/config/target
LOOP=
DISK=
TP=

srp_cleanup() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] && echo 1 >"$p/delete" 2>/dev/null
	done
	modprobe -r ib_srp 2>/dev/null
	target_down
	modprobe -r ib_srpt target_core_iblock target_core_mod 2>/dev/null
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	ip link del $IF0 2>/dev/null
}
trap 'srp_cleanup; rrxe_cleanup' EXIT

# target_up: an iblock backstore over $LOOP, the SRP target port of rrxe0 (named after
# its GUID) with one LUN, an ACL for the session (ib_srpt names an RDMA/CM session after
# the address it arrived at) and the rdma_cm listener.
target_up() {
	local gid guid acl
	gid=$(cat /sys/class/infiniband/rrxe0/ports/1/gids/0) || return 1
	guid=${gid#fe80:0000:0000:0000:}
	TP=$T/srpt/$guid/tpgt_1
	acl=$TP/acls/$IP
	mkdir -p $T/core/iblock_0/rrxe && echo "udev_path=$LOOP" >$T/core/iblock_0/rrxe/control &&
		echo 1 >$T/core/iblock_0/rrxe/enable || return 1
	mkdir -p $T/srpt && echo $PORT >$T/srpt/discovery_auth/rdma_cm_port || return 1
	mkdir -p $TP/lun/lun_0 && ln -s $T/core/iblock_0/rrxe $TP/lun/lun_0/rrxe &&
		mkdir -p $acl/lun_0 && ln -s $TP/lun/lun_0 $acl/lun_0/lun_0 &&
		echo 1 >$TP/enable || return 1
	echo "# target port $guid, LUN 0 = $LOOP, ACL $IP, rdma_cm port" \
		"$(cat $T/srpt/discovery_auth/rdma_cm_port)"
}

# target_down: the configfs objects of target_up, in reverse order.
target_down() {
	[ -d $T/srpt ] || return 0
	if [ -n "$TP" ] && [ -d "$TP" ]; then
		echo 0 >$TP/enable 2>/dev/null
		rm -f $TP/acls/$IP/lun_0/lun_0 $TP/lun/lun_0/rrxe
		rmdir $TP/acls/$IP/lun_0 $TP/acls/$IP $TP/lun/lun_0 $TP "${TP%/tpgt_1}" 2>/dev/null
	fi
	echo 0 >$T/srpt/discovery_auth/rdma_cm_port 2>/dev/null
	rmdir $T/srpt 2>/dev/null
	if [ -d $T/core/iblock_0/rrxe ]; then
		rmdir $T/core/iblock_0/rrxe $T/core/iblock_0 2>/dev/null
	fi
	[ ! -d $T/srpt ] && [ ! -d $T/core/iblock_0 ]
}

disks() { ls /sys/block 2>/dev/null | grep -E '^sd[a-z]+$'; }

# login: add_target over RDMA/CM; the target port ID is the target's service GUID twice
# (ib_srpt refuses any other), and the new SCSI disk must be LIO's.
login() {
	local before svc
	before=$(disks)
	svc=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid) || return 1
	svc=${svc#0x}
	echo "id_ext=$svc,ioc_guid=$svc,dest=$IP:$PORT" \
		>/sys/class/infiniband_srp/srp-rrxe0-1/add_target || return 1
	wait_for '[ -n "$(comm -13 <(echo "$before") <(disks))" ]' 30 || return 1
	DISK=$(comm -13 <(echo "$before") <(disks) | head -1)
	wait_for "[ -b /dev/$DISK ] && [ \$(cat /sys/block/$DISK/size) -gt 0 ]" 20 || return 1
	echo "# /dev/$DISK: $(cat /sys/block/$DISK/device/vendor) $(cat /sys/block/$DISK/device/model)," \
		"$(cat /sys/block/$DISK/size) sectors"
	[ "$(cat /sys/block/$DISK/device/vendor | tr -d ' ')" = LIO-ORG ] &&
		[ "$(cat /sys/block/$DISK/size)" = $((64 << 11)) ]
}

# logout: delete the SRP remote port; the disk goes with it.
logout() {
	local p n=0
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] || continue
		echo 1 >"$p/delete" && n=$((n + 1))
	done
	[ $n = 1 ] && wait_for "[ ! -e /sys/block/$DISK ]" 20
}

one_device_up $IF0 $IF1 $IP
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
truncate -s 64M "$IMG"
LOOP=$(losetup -f --show "$IMG") || rrxe_skip "no loop device"
modprobe ib_srpt && modprobe target_core_iblock && modprobe ib_srp ||
	rrxe_skip "ib_srpt, target_core_iblock or ib_srp does not load"
ktap_set_plan 9

dmesg_mark
ktap_check "LIO target: iblock backstore, SRP port of rrxe0, LUN, ACL, rdma_cm listener" \
	target_up
fr_mark
attach_or_stop "ib_srp add_target over RDMA/CM on rrxe0 (same device): a LIO-ORG disk" \
	'srp|scsi|target|rdma' login
ktap_check "fio random writes 4k-128k, crc32c verified on read" \
	fio_verify /dev/$DISK
ktap_check "dd of 8 MiB random data: checksums of read-back and backing file" \
	dd_verify /dev/$DISK "$IMG"
ktap_check "the initiator fast-registered its buffers and invalidated them" fr_moved
ktap_check "deleting the SRP remote port removes /dev/$DISK" logout
ktap_check "the target's configfs objects go, ib_srp and ib_srpt unload" \
	eval 'target_down && modprobe -r ib_srp ib_srpt target_core_iblock target_core_mod'
rdma link delete rrxe0
ktap_check "rrxe unloads afterwards" modprobe -r rrxe
# (When a channel closes, ib_srpt logs each of its flushed receives as "receiving failed
# ... with status 5", IB_WC_WR_FLUSH_ERR: that is how a closing QP returns its receive
# WQEs, not an error.)
flushed=$(dmesg_since | grep -c "ib_srpt receiving failed for ioctx .* with status 5$")
echo "# receives flushed as the channels closed (ib_srpt's log, rate-limited): $flushed"
ktap_check "no SRP errors in the kernel log" \
	eval '! dmesg_since | grep -iE "(srp|srpt).*(error|fail|reject)" |
		grep -v "receiving failed for ioctx .* with status 5$" | sed "s/^/# /" | grep .'
ktap_finished
