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

run_fio() {
	fio --name=rrxe --filename="$BDEV" --direct=1 --ioengine=libaio --iodepth=8 \
		--rw=randwrite --bsrange=4k-128k --size=24M --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --randrepeat=0 --output=$TMPD/fio.log >/dev/null 2>&1
	local rc=$?
	grep -E 'err=|WRITE:|READ:|verify' $TMPD/fio.log | sed 's/^ */# /' | head -6
	return $rc
}

# dd_check: 8 MiB of random data at 40 MiB into the namespace and back, direct I/O: the
# checksum read back and the one of the backing file's bytes equal the written one.
dd_check() {
	head -c $((8 << 20)) /dev/urandom >$TMPD/data
	local want got back
	want=$(sha256sum <$TMPD/data | cut -d' ' -f1)
	dd if=$TMPD/data of="$BDEV" bs=1M seek=40 oflag=direct conv=fsync status=none || return 1
	got=$(dd if="$BDEV" bs=1M skip=40 count=8 iflag=direct status=none | sha256sum | cut -d' ' -f1)
	back=$(dd if="$IMG" bs=1M skip=40 count=8 status=none | sha256sum | cut -d' ' -f1)
	echo "# written $want, read back $got, backing file $back"
	[ "$want" = "$got" ] && [ "$want" = "$back" ]
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
	ktap_check "$label: fio random writes 4k-128k, crc32c verified on read" run_fio
	ktap_check "$label: dd of 8 MiB random data: checksums of read-back and backing file" dd_check
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
ip link add $IF0 type veth peer name $IF1
ip link set $IF1 up
ip link set $IF0 up
ip addr add $IP/24 dev $IF0
rdma link add rrxe0 type rrxe netdev $IF0
wait_for "grep -q ffff:0a00:0901 /sys/class/infiniband/rrxe0/ports/1/gids/1" 10
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
