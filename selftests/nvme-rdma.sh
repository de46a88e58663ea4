#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics over rrxe, target and host on one device of one host (as blktests
# runs them): nvmet with an rdma port on rrxe0's address (the namespace is a file on
# tmpfs), `nvme connect -t rdma` to it over the same device, fio writing and verifying
# crc32c checksums, then dd of random data through the namespace with checksums compared
# on the way back and in the backing file itself. The host's MRs are fast-registered and
# the target invalidates them remotely (rrxe's mr_reg and mr_inv_remote counters must
# move). Then disconnect. The round runs twice: with nvme_rdma's default (every data
# transfer through a fast-registered MR) and with register_always=N (single-segment I/O
# through the PD's unsafe global rkey). Last, the target is torn down and the modules,
# rrxe included, unload.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require nvme fio sha256sum mod:nvmet mod:nvmet_rdma mod:nvme_rdma exclusive
ktap_set_plan 11

IF0=rrxe-nv0
IF1=rrxe-nv1
IP=10.0.9.1
NQN=nqn.2026-01.org.rrxe:selftest-$$
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:6b7a8c3e-2f1d-4c5e-9a0b-1c2d3e4f5a6b
HOSTID=6b7a8c3e-2f1d-4c5e-9a0b-1c2d3e4f5a6b
CFG=/sys/kernel/config/nvmet
IMG=$TMPD/ns.img
PORT=4420

nvme_cleanup() {
	nvme disconnect -n "$NQN" >/dev/null 2>&1
	target_down
	ip link del $IF0 2>/dev/null
}
trap 'nvme_cleanup; rrxe_cleanup' EXIT

target_down() {
	rm -f $CFG/ports/1/subsystems/$NQN 2>/dev/null
	rmdir $CFG/ports/1 2>/dev/null
	[ -e $CFG/subsystems/$NQN/namespaces/1/enable ] &&
		echo 0 >$CFG/subsystems/$NQN/namespaces/1/enable
	rmdir $CFG/subsystems/$NQN/namespaces/1 2>/dev/null
	rmdir $CFG/subsystems/$NQN 2>/dev/null
	return 0
}

target_up() {
	mkdir $CFG/subsystems/$NQN &&
	echo 1 >$CFG/subsystems/$NQN/attr_allow_any_host &&
	mkdir $CFG/subsystems/$NQN/namespaces/1 &&
	echo "$IMG" >$CFG/subsystems/$NQN/namespaces/1/device_path &&
	echo 1 >$CFG/subsystems/$NQN/namespaces/1/buffered_io &&
	echo 1 >$CFG/subsystems/$NQN/namespaces/1/enable &&
	mkdir $CFG/ports/1 &&
	echo rdma >$CFG/ports/1/addr_trtype &&
	echo ipv4 >$CFG/ports/1/addr_adrfam &&
	echo $IP >$CFG/ports/1/addr_traddr &&
	echo $PORT >$CFG/ports/1/addr_trsvcid &&
	ln -s $CFG/subsystems/$NQN $CFG/ports/1/subsystems/$NQN
}

nvme_blocks() { ls /sys/block 2>/dev/null | grep -E '^nvme[0-9]+n[0-9]+$'; }
new_block() { comm -13 <(echo "$BEFORE") <(nvme_blocks) | head -1; }

# connect: the namespace's block device in $BDEV (the one that was not there before).
connect() {
	local i
	BEFORE=$(nvme_blocks)
	for i in 1 2 3; do
		nvme connect -t rdma -a $IP -s $PORT -n "$NQN" --hostnqn=$HOSTNQN --hostid=$HOSTID \
			--nr-io-queues=2 --queue-size=32 >$TMPD/connect.log 2>&1 && break
		sleep 2
	done
	sed 's/^/# /' $TMPD/connect.log
	wait_for '[ -n "$(new_block)" ]' 20 || return 1
	BDEV=/dev/$(new_block)
	wait_for "[ -b $BDEV ]" 10 || return 1
	echo "# namespace: $BDEV ($(cat /sys/block/${BDEV#/dev/}/size) sectors)"
}

disconnect() {
	nvme disconnect -n "$NQN" | sed 's/^/# /'
	wait_for "[ ! -b $BDEV ]" 20
}

# round <label> [nvme_rdma parameters...]
round() {
	local label=$1 reg0 inv0 reg1 inv1
	shift
	modprobe -r nvme_rdma 2>/dev/null
	modprobe nvme_rdma "$@" || { ktap_skip_rest "nvme_rdma $* does not load"; return; }
	target_up || echo "# target set-up failed"
	reg0=$(counter rrxe0 mr_reg)
	inv0=$(counter rrxe0 mr_inv_remote)
	if ! connect; then
		ktap_test_fail "$label: nvme connect -t rdma over rrxe0 (same device, same host)"
		dmesg | grep -iE 'nvme|rdma' | tail -8 | sed 's/^/# /'
		return
	fi
	ktap_test_pass "$label: nvme connect -t rdma over rrxe0 (same device, same host)"
	ktap_check "$label: fio random writes 4k-128k, crc32c verified on read" \
		fio_verify "$BDEV"
	ktap_check "$label: dd of 8 MiB random data: checksums of read-back and backing file" \
		dd_verify "$BDEV" "$IMG"
	reg1=$(counter rrxe0 mr_reg)
	inv1=$(counter rrxe0 mr_inv_remote)
	echo "# fast registrations: $((reg1 - reg0)), remote invalidations: $((inv1 - inv0))"
	if [ -z "$*" ]; then
		ktap_check "$label: the host fast-registered its buffers, the target invalidated them" \
			test $((reg1 - reg0)) -gt 0 -a $((inv1 - inv0)) -gt 0
	fi
	ktap_check "$label: nvme disconnect removes the namespace" disconnect
	target_down
}

mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
one_device_up $IF0 $IF1 $IP
truncate -s 64M "$IMG"

dmesg_mark
round "fast registration"
round "register_always=N" register_always=N

ktap_check "nvme_rdma, nvmet_rdma and nvmet unload" modprobe -r nvme_rdma nvmet_rdma nvmet
rdma link delete rrxe0
ktap_check "rrxe unloads afterwards" modprobe -r rrxe
if dmesg_since | grep -qiE 'nvme.*(error|failed)|rdma.*error'; then
	dmesg_since | grep -iE 'nvme.*(error|failed)|rdma.*error' | head -5 | sed 's/^/# /'
fi
ktap_finished
