# SPDX-License-Identifier: GPL-2.0
# Helpers for rrxe selftests; a test script sources it after entering its own directory:
#     cd "$(dirname "$0")" && . lib/ktap.sh
#
# KTAP output comes from the kernel's own kselftest/ktap_helpers.sh (ktap_print_header,
# ktap_set_plan, ktap_test_pass, ktap_finished, ...). It is taken from KSFT_DIR if set,
# else from the kselftest directory next to this target (an installed kselftest tree,
# or tools/testing/selftests when the target is built inside a kernel tree), else from
# a kernel source tree; lib/ktap_helpers.sh, a minimal compatible stand-in, is used only
# when there is none.
#
# The two hosts: two network namespaces of the script's own joined by a veth pair, one
# rrxe device on each. The script checks what it needs first (rrxe_require: a skip, exit
# 4, if something is missing), then creates them (hosts_up, devs_up); the EXIT trap
# rrxe_require sets removes them again with anything the script left running, whether
# it passed, failed or was stopped by the runner's timeout, and reloads rrxe if the
# script changed its parameters. Nothing depends on the VM bench.

rrxe_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)	# logical: may be a symlink

. "$rrxe_dir/lib/ksft.sh"
KSFT_HELPERS=$(ksft_find ktap_helpers.sh) || KSFT_HELPERS=$rrxe_dir/lib/ktap_helpers.sh
. "$KSFT_HELPERS"

# ktap_check "description" command...: passes when the command exits 0.
ktap_check() {
	local desc=$1
	shift
	if "$@"; then ktap_test_pass "$desc"; else ktap_test_fail "$desc"; fi
}
# ktap_eq "description" expected actual
ktap_eq() {
	if [ "$2" = "$3" ]; then
		ktap_test_pass "$1"
	else
		ktap_print_msg "expected '$2', got '$3'"
		ktap_test_fail "$1"
	fi
}
# ktap_skip_rest "reason": every planned case not run yet is skipped.
ktap_skip_rest() {
	while [ $((KTAP_TESTNO - 1)) -lt "$KSFT_NUM_TESTS" ]; do ktap_test_skip "$1"; done
}
# rrxe_skip "reason": the whole script is skipped (call after ktap_print_header, before
# ktap_set_plan); exits with kselftest's skip code.
rrxe_skip() {
	rm -rf "$TMPD"
	ktap_skip_all "$*"
	exit "$KSFT_SKIP"
}

# Per-run names, so that nothing on the host is reused or removed by mistake.
NS0=rrxe-ns0-$$
NS1=rrxe-ns1-$$
IP0=10.0.0.1
IP1=10.0.0.2
IP60=fd00::1
IP61=fd00::2
in0() { ip netns exec "$NS0" "$@"; }
in1() { ip netns exec "$NS1" "$@"; }
TMPD=$(mktemp -d /tmp/rrxe-selftest.XXXXXX)
# How much slower this kernel runs rrxe: 4 on the debug kernel (KASAN, kmemleak and
# lockdep, make check-debug), 1 otherwise. Timeouts of the tools are multiplied by it and
# the longest streams divided by it; never a case's expectation.
SLOW=1
[ -e /sys/kernel/debug/kmemleak ] && SLOW=4
# rrxe-verify's Local ACK Timeout: 16.8 ms (12), 268 ms (16) on the debug kernel, where a
# responder can take longer than four times 16.8 ms to answer a window (the longest the
# transport timer stretches), and 7 retries of that fail the QP.
[ "$SLOW" -gt 1 ] && export RRXE_VERIFY_TIMEOUT=${RRXE_VERIFY_TIMEOUT:-16}
# rrxe-verify gives up on a completion after 60 s, SLOW times that here: on the debug
# kernel a sender that an unfair algorithm starves at a 1 Mbit/s bottleneck (cc-incast.sh)
# waited longer.
export RRXE_VERIFY_WAIT=${RRXE_VERIFY_WAIT:-$((60 * SLOW))}

# Path of the data-verifying traffic tool: built into tools/ (make, scripts/module.sh),
# or installed next to the scripts (kselftest install flattens generated files).
VERIFY=$rrxe_dir/tools/rrxe-verify
[ -x "$VERIFY" ] || [ ! -x "$rrxe_dir/rrxe-verify" ] || VERIFY=$rrxe_dir/rrxe-verify
HOSTILE=$rrxe_dir/tools/rrxe-hostile
[ -x "$HOSTILE" ] || [ ! -x "$rrxe_dir/rrxe-hostile" ] || HOSTILE=$rrxe_dir/rrxe-hostile

# rrxe_require [command|verify|exclusive]...: skips the whole script (exit 4) unless it
# runs as root, rrxe can be loaded, no device is named rrxe0 or rrxe1 yet, the RDMA
# subsystem shares devices between network namespaces, and every named command exists.
# "verify": rrxe-verify is built. "xfer": rrxe-xfer is built and rdma_ucm loads. "mod:NAME": module NAME loads. "exclusive": the script unloads rrxe or needs the RDMA
# device list to itself, so no RDMA device may exist before it starts.
RRXE_MODS=
rrxe_require() {
	local c
	[ "$(id -u)" = 0 ] || rrxe_skip "must run as root"
	for c in ip rdma tc ss modprobe ibv_devinfo; do
		command -v "$c" >/dev/null || rrxe_skip "$c not installed"
	done
	grep -qs '^rrxe ' /proc/modules || modprobe rrxe 2>/dev/null || rrxe_skip "rrxe module not available"
	modprobe ib_uverbs 2>/dev/null || rrxe_skip "ib_uverbs not available (CONFIG_INFINIBAND_USER_ACCESS)"
	modprobe veth 2>/dev/null
	# A script the runner stopped at its timeout may still be cleaning up (its trap runs
	# once the tool it was waiting for exits): give its devices time to go.
	# (On the debug kernel a stopped selective.sh still held them after 60 s.)
	wait_for "[ ! -e /sys/class/infiniband/rrxe0 ] && [ ! -e /sys/class/infiniband/rrxe1 ]" $((60 * SLOW))
	[ -e /sys/class/infiniband/rrxe0 ] || [ -e /sys/class/infiniband/rrxe1 ] &&
		rrxe_skip "rrxe0 or rrxe1 exists already: this test creates its own"
	rdma system show 2>/dev/null | grep -q 'netns exclusive' &&
		rrxe_skip "RDMA netns mode is exclusive: the tests need 'rdma system set netns shared'"
	for c in "$@"; do
		case $c in
		verify) [ -x "$VERIFY" ] || rrxe_skip "rrxe-verify not built (make -C selftests)" ;;
		xfer) [ -n "$XFER" ] || rrxe_skip "rrxe-xfer not built (cargo build --release in tools/rrxe-xfer)"
			modprobe rdma_ucm 2>/dev/null || rrxe_skip "rdma_ucm not available" ;;
		hostile) [ -x "$HOSTILE" ] || rrxe_skip "rrxe-hostile not built (make -C selftests)" ;;
		mod:*)
			# (Remembered, newest first, for rrxe_cleanup to unload.)
			grep -qs "^${c#mod:} " /proc/modules || RRXE_MODS="${c#mod:} $RRXE_MODS"
			modprobe "${c#mod:}" 2>/dev/null || rrxe_skip "module ${c#mod:} not available (see config)" ;;
		exclusive)
			[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ] ||
				rrxe_skip "other RDMA devices exist: this test unloads rrxe or needs the device list to itself"
			modprobe --show-depends rrxe >/dev/null 2>&1 || rrxe_skip "rrxe is not installed for modprobe: this test reloads it" ;;
		*) command -v "$c" >/dev/null || rrxe_skip "$c not installed" ;;
		esac
	done
	RRXE_PARAMS_CHANGED=
	trap rrxe_cleanup EXIT
	trap 'exit 1' INT TERM HUP
}

# rrxe_load [parameters...]: rrxe again with these module parameters (no devices may
# exist); the EXIT trap loads it back without them.
rrxe_load() {
	RRXE_PARAMS_CHANGED=1
	modprobe -r rrxe 2>/dev/null
	modprobe rrxe "$@"
}

# Everything the script made: its background processes, its devices, its namespaces
# (their veths and qdiscs go with them), module parameters, its temporary files.
rrxe_cleanup() {
	local p
	for p in $(jobs -p); do kill -9 "$p" 2>/dev/null; done
	# (Reaped here, bash reports the killed jobs ("Killed") to this wait's stderr.)
	wait 2>/dev/null
	# Tools run under timeout(1), which puts them in a process group of their own: a
	# killed job leaves its tool running, and a tool stopped by the runner's timeout
	# keeps its device open. Whatever still runs in the two namespaces goes too.
	for p in "$NS0" "$NS1"; do netns_kill "$p"; done
	wait 2>/dev/null
	devs_down >/dev/null 2>&1
	hosts_down >/dev/null 2>&1
	if [ -n "$RRXE_PARAMS_CHANGED" ]; then
		modprobe -r rrxe 2>/dev/null
		modprobe rrxe 2>/dev/null
	fi
	# Loaded, as it was before (rrxe_require), even if the script unloaded it.
	grep -qs '^rrxe ' /proc/modules || modprobe rrxe 2>/dev/null
	# The kernel-consumer test module, if the script loaded it.
	grep -q '^rrxe_ktest ' /proc/modules && rmmod rrxe_ktest 2>/dev/null
	# Modules rrxe_require loaded, and only those. They can outlive the script in ways
	# the next one notices: rds_rdma keeps rdma_cm listeners on every address, and a
	# soft-iWARP device added later fails to take them over, so rdma_cm drops the device
	# and binds to its address fail with ENODEV.
	for p in $RRXE_MODS; do rmmod "$p" 2>/dev/null; done
	rm -rf "$TMPD"
	kmemleak_scan
	return 0
}

# On a kernel with kmemleak (make check-debug): a scan once the script's objects are old
# enough to be reported (5 s), then every suspected leak whose allocation trace names
# rrxe is appended to the results share's kmemleak.txt (the bench fails on it) and the
# list is cleared for the next script.
kmemleak_scan() {
	local f=/sys/kernel/debug/kmemleak
	[ -w $f ] || return 0
	sleep 6
	echo scan >$f 2>/dev/null
	if [ -d /tmp/out ]; then
		awk -v s="${0##*/}" '/^unreferenced object/ { if (e ~ /rrxe/) print e; e = "# " s ": " $0 "\n"; next }
			{ e = e $0 "\n" } END { if (e ~ /rrxe/) print e }' $f >>/tmp/out/kmemleak.txt
	fi
	echo clear >$f 2>/dev/null
	return 0
}

netns_exists() { ip netns list | awk '{ print $1 }' | grep -qx "$1"; }

# Kills whatever runs in namespace $1. A tool that outlives its script keeps its RDMA
# device open, and the namespace (with its netdev and device) outlives "ip netns del".
netns_kill() { netns_exists "$1" && ip netns pids "$1" 2>/dev/null | xargs -r kill -9 2>/dev/null; }

# Creates the two hosts if they are missing and restores their addresses, MTUs and link
# state (a test may have changed them; IPv6 addresses go away with the link).
hosts_up() {
	if ! netns_exists "$NS0"; then
		ip netns add "$NS0"
		ip netns add "$NS1"
		# Distinct interface indexes: soft-iWARP binds a wildcard listener to its
		# netdev's index, and in the shared RDMA namespace mode every siw device listens
		# in the server's namespace; with equal indexes the second bind is EADDRINUSE.
		ip -n "$NS0" link add va index 10 type veth peer name vb index 11 netns "$NS1"
		ip -n "$NS0" link set lo up
		ip -n "$NS1" link set lo up
	fi
	ip -n "$NS0" link set va mtu 1500 up
	ip -n "$NS1" link set vb mtu 1500 up
	ip -n "$NS0" addr replace $IP0/24 dev va
	ip -n "$NS1" addr replace $IP1/24 dev vb
	ip -n "$NS0" addr replace $IP60/64 dev va nodad
	ip -n "$NS1" addr replace $IP61/64 dev vb nodad
	# NAPI mode: the veth peer then receives through one ring and one poller, in order,
	# like a NIC's receive queue. Without it a veth delivers each packet on the CPU that
	# sent it, and a flow sent from two CPUs is reordered whenever one of them defers its
	# receive softirq to ksoftirqd. (veth uses its ring only with GRO on, and, for skbs
	# not sent from a socket, only without TSO on the sending side.)
	in0 ethtool -K va gro on tso off >/dev/null 2>&1
	in1 ethtool -K vb gro on tso off >/dev/null 2>&1
	# Neighbour discovery both ways, IPv4 and IPv6: a QP's move to RTR resolves the
	# peer's MAC through it, and under TCG a first IPv6 solicitation can outlast that
	# resolution ("Failed to modify QP to RTR" for ibv_uc_pingpong's IPv6 GID once).
	in0 ping -c 1 -W 2 $IP1 >/dev/null 2>&1
	in1 ping -c 1 -W 2 $IP0 >/dev/null 2>&1
	in0 ping -6 -c 1 -W 2 $IP61 >/dev/null 2>&1
	in1 ping -6 -c 1 -W 2 $IP60 >/dev/null 2>&1
	return 0
}

hosts_down() {
	ip netns del "$NS0" 2>/dev/null
	ip netns del "$NS1" 2>/dev/null
	while netns_exists "$NS0" || netns_exists "$NS1"; do sleep 0.1; done
}

# rrxe0 on va (first namespace) and rrxe1 on vb (second).
devs_up() {
	modprobe rrxe && modprobe ib_uverbs || return 1
	[ -e /sys/class/infiniband/rrxe0 ] || in0 rdma link add rrxe0 type rrxe netdev va || return 1
	[ -e /sys/class/infiniband/rrxe1 ] || in1 rdma link add rrxe1 type rrxe netdev vb || return 1
	# ib_core fills the GID tables asynchronously: wait for the IPv4 and IPv6 GIDs.
	local d
	for d in rrxe0 rrxe1; do
		wait_for "grep -q ffff:0a00 /sys/class/infiniband/$d/ports/1/gids/1" 10 || return 1
		wait_for "grep -q ^fd00 /sys/class/infiniband/$d/ports/1/gids/2" 10 || return 1
	done
}

devs_down() {
	[ -e /sys/class/infiniband/rrxe0 ] && rdma link delete rrxe0
	[ -e /sys/class/infiniband/rrxe1 ] && rdma link delete rrxe1
	return 0
}

# Value of "key:" in ibv_devinfo -v output for a device (first match).
devinfo() {
	ibv_devinfo -v -d "$1" 2>/dev/null | awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ +/, ""); print; exit }'
}

# Waits up to $2 seconds (default 5) for a command to succeed.
wait_for() {
	local cmd=$1 t=${2:-5} i=0
	while ! eval "$cmd" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt $((t * 10)) ] && return 1
		sleep 0.1
	done
}

# pair <tcp port> <timeout> <server cmd...> -- <client cmd...>: runs the server in the
# second namespace and, once it listens on the port (port 0: an rdma_cm listener), the
# client in the first (with $IP1 appended unless PAIR_NOADDR is set).
# Succeeds only if both exit 0; output is in $TMPD/pair.srv and $TMPD/pair.cli and is
# shown as diagnostics on failure.
pair() {
	local port=$1 t=$(($2 * SLOW)) srv=() cli=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	timeout "$t" ip netns exec "$NS1" "${srv[@]}" >"$TMPD/pair.srv" 2>&1 &
	local pid=$!
	if [ "$port" = 0 ]; then
		# An rdma_cm listener has no TCP port: wait for its listening cm_id (a fixed
		# two-second sleep let the client be rejected on a loaded host), else as before.
		wait_for "rdma resource show cm_id 2>/dev/null | grep -q LISTEN" 15 || sleep 2
	else
		wait_for "in1 ss -ltn | grep -q ':$port '" 30
	fi
	if [ -n "${PAIR_NOADDR:-}" ]; then
		timeout "$t" ip netns exec "$NS0" "${cli[@]}" >"$TMPD/pair.cli" 2>&1
	else
		timeout "$t" ip netns exec "$NS0" "${cli[@]}" $IP1 >"$TMPD/pair.cli" 2>&1
	fi
	local c=$?
	wait $pid
	local s=$?
	if [ $c -ne 0 ] || [ $s -ne 0 ]; then
		echo "# ${cli[0]}: client rc=$c server rc=$s"
		sed 's/^/# cli: /' "$TMPD/pair.cli" | tail -6
		sed 's/^/# srv: /' "$TMPD/pair.srv" | tail -4
		counters_dump
		dmesg | tail -5 | sed 's/^/# dmesg: /'
		return 1
	fi
}

# perftest_pair [-R] <tool> <args...>: a perftest tool's server on rrxe1 and client on
# rrxe0 (see pair; -R: connected by rdma_cm); fails unless both exit 0 and the client
# printed a result line, which it shows. On the debug kernel the QPs' Local ACK Timeout
# is 1.07 s (-u 18), not perftest's 67 ms: four QPs of 128 atomics there wait up to
# about a second for their answers, longer than the transport timer stretches (four
# times the attribute), and each timeout sends a whole window of atomics again.
perftest_pair() {
	[ "$SLOW" -gt 1 ] && set -- "$@" -u 18
	if [ "$1" = -R ]; then
		shift
		pair 0 60 "$@" -d rrxe1 -R -F -- "$@" -d rrxe0 -R -F || return 1
	else
		pair 18515 120 "$@" -d rrxe1 -F -- "$@" -d rrxe0 -F || return 1
	fi
	local res
	res=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ { print; exit }' "$TMPD/pair.cli")
	if [ -z "$res" ]; then
		echo "# $1: no result line"
		sed 's/^/# cli: /' "$TMPD/pair.cli" | tail -6
		return 1
	fi
	echo "# $*: $res"
}

# verify <args...>: rrxe-verify server on rrxe1, client on rrxe0; prints the result line.
verify() {
	pair 18516 120 "$VERIFY" -d rrxe1 "$@" -- "$VERIFY" -d rrxe0 "$@" || return 1
	echo "# $(tail -1 "$TMPD/pair.cli")"
}

# tc_dropped <in0|in1> <tc show arguments...>: the first "dropped" count tc prints (0 if
# none), e.g. tc_dropped in0 qdisc show dev va.
tc_dropped() {
	local n
	n=$("$1" tc -s "${@:2}" | awk '/dropped/ { sub(",", "", $7); print $7; exit }')
	echo "${n:-0}"
}
# tc_dropped_sum <in0|in1> <tc show arguments...>: every "dropped" count tc prints, summed
# (e.g. over several filters).
tc_dropped_sum() {
	"$1" tc -s "${@:2}" | awk '/dropped/ { sub(",", "", $7); n += $7 } END { print n + 0 }'
}
# clsact_add <in0|in1> <dev>: a clsact qdisc on <dev>, for roce_refuse's filters.
clsact_add() {
	modprobe sch_ingress && modprobe cls_u32 && modprobe act_gact &&
		$1 tc qdisc add dev "$2" clsact
}
# roce_refuse <in0|in1> <dev> <netrand|determ> <n> [u32 match...]: a u32 filter on the
# clsact egress of <dev> whose gact action refuses 1 in <n> (at random, or every <n>-th)
# of the RoCEv2 packets leaving <dev> that also meet the matches given (the stack returns
# NET_XMIT_DROP to the sender). UDP port 4791 only: a refused packet of the tools' TCP
# exchange would count too.
roce_refuse() {
	local ns=$1 dev=$2 how=$3 n=$4
	shift 4
	$ns tc filter add dev "$dev" egress protocol ip prio 1 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff "$@" \
		action gact pass random "$how" drop "$n"
}
# act_drop <in0|in1> <dev> <n>: refuse 1 in <n> of the RoCEv2 packets leaving <dev> at
# random, by a gact action on clsact egress, no qdisc.
act_drop() { clsact_add "$1" "$2" && roce_refuse "$1" "$2" netrand "$3"; }
# dropped: packets the root qdiscs of both veth ends dropped since they were installed.
dropped() { echo $(( $(tc_dropped in0 qdisc show dev va) + $(tc_dropped in1 qdisc show dev vb) )); }

# dmesg_mark: remembers where the kernel log ends; dmesg_since: what was logged after it
# (the log is the host's: never cleared, and older lines are not taken for new ones).
dmesg_mark() { DMESG_MARK=$(dmesg | wc -l); }
dmesg_since() { dmesg | tail -n +$((DMESG_MARK + 1)); }

# one_device_up <if0> <if1> <ipv4>: a veth pair with the address on <if0> and rrxe0 on
# it (target and host of a storage protocol share one device); waits for the address's
# IPv4-mapped GID.
one_device_up() {
	local o
	IFS=. read -ra o <<<"$3"
	ip link add "$1" type veth peer name "$2" && ip link set "$2" up && ip link set "$1" up &&
		ip addr add "$3"/24 dev "$1" && rdma link add rrxe0 type rrxe netdev "$1" &&
		wait_for "grep -q $(printf 'ffff:%02x%02x:%02x%02x' "${o[@]}") /sys/class/infiniband/rrxe0/ports/1/gids/1" 10
}

# Block-device checks of the storage consumers (nvme-rdma.sh, rnbd-rdma.sh).
# fio_verify <block device>: fio random writes 4k-128k over 24 MiB, direct I/O, every
# block read back and checked against its crc32c.
fio_verify() {
	fio --name=rrxe --filename="$1" --direct=1 --ioengine=libaio --iodepth=8 \
		--rw=randwrite --bsrange=4k-128k --size=24M --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --randrepeat=0 --output=$TMPD/fio.log >/dev/null 2>&1
	local rc=$?
	grep -E 'err=|WRITE:|READ:|verify' $TMPD/fio.log | sed 's/^ */# /' | head -6
	return $rc
}

# dd_verify <block device> <backing file>: 8 MiB of random data at 40 MiB into the
# device and back, direct I/O: the checksums of the bytes read back and of the backing
# file's bytes equal the written one.
dd_verify() {
	head -c $((8 << 20)) /dev/urandom >$TMPD/data
	local want got back
	want=$(sha256sum <$TMPD/data | cut -d' ' -f1)
	dd if=$TMPD/data of="$1" bs=1M seek=40 oflag=direct conv=fsync status=none || return 1
	got=$(dd if="$1" bs=1M skip=40 count=8 iflag=direct status=none | sha256sum | cut -d' ' -f1)
	back=$(dd if="$2" bs=1M skip=40 count=8 status=none | sha256sum | cut -d' ' -f1)
	echo "# written $want, read back $got, backing file $back"
	[ "$want" = "$got" ] && [ "$want" = "$back" ]
}

# park_targets: live QPs of every type and state on rrxe1 for rrxe-hostile to aim at
# (rrxe-verify -o park, its peer address IP0's), kept until `exec 7>&-`; sets $targets
# to their "qpn:expected psn" list.
park_targets() {
	mkfifo $TMPD/park.in
	in1 "$VERIFY" -d rrxe1 -o park $IP0 <$TMPD/park.in >$TMPD/park.out 2>&1 &
	exec 7>$TMPD/park.in
	wait_for "grep -q '^park:' $TMPD/park.out" 60
	targets=$(sed -n 's/^park: //p' $TMPD/park.out)
}

# counter_lines <device>: port 1's counters, one "name value" line each (one run of
# rdma(8)).
counter_lines() {
	rdma statistic show link "$1"/1 | tr ' ' '\n' | paste - - |
		grep -E '^[a-z][a-z0-9_]*\s+[0-9]+$'
}

# counters_nonzero <device>: port 1's non-zero counters on one line, name=value.
counters_nonzero() {
	counter_lines "$1" | awk '$2 != 0 { printf "%s=%s ", $1, $2 }'
}

# counters_dump: both rrxe devices' non-zero counters as KTAP comments (what a failed
# tool run left behind), if the devices exist.
counters_dump() {
	local d
	for d in rrxe0 rrxe1; do
		[ -e /sys/class/infiniband/$d ] && echo "# $d: $(counters_nonzero $d)"
	done
	return 0
}

# counter <device> <name>: one rrxe counter of port 1.
counter() { rdma statistic show link "$1"/1 | tr ' ' '\n' | awk -v k="$2" 'p { print; exit } $0 == k { p = 1 }'; }

# counters_snap <array> <device...>: every counter of the devices, summed over them, into
# an associative array: one run of rdma(8) per device. Reading counters one at a time
# costs a run each, seconds apiece on the debug kernel.
counters_snap() {
	local -n into=$1
	local k v
	shift
	into=()
	while read -r k v; do
		into[$k]=$(( ${into[$k]:-0} + v ))
	done < <(for dev; do counter_lines "$dev"; done)
}

# attach_or_stop <description> <log pattern> <command...>: the case that gives a storage
# test its block device; if the command fails, the kernel log's lines that match the
# pattern are shown, every later case is skipped and the script ends.
attach_or_stop() {
	local desc=$1 pat=$2
	shift 2
	if "$@"; then
		ktap_test_pass "$desc"
		return
	fi
	ktap_test_fail "$desc"
	dmesg_since | grep -iE "$pat" | tail -10 | sed 's/^/# /'
	ktap_skip_rest "no block device"
	ktap_finished
}

# Fast registration by a storage consumer (rnbd-rdma.sh, srp-rdma.sh): fr_mark takes
# rrxe0's mr_reg and invalidation (local and remote) counters; fr_moved prints how far
# each moved since and succeeds if both did.
fr_inv() { echo $(($(counter rrxe0 mr_inv_local) + $(counter rrxe0 mr_inv_remote))); }
fr_mark() {
	FR_REG=$(counter rrxe0 mr_reg)
	FR_INV=$(fr_inv)
}
fr_moved() {
	local reg=$(($(counter rrxe0 mr_reg) - FR_REG)) inv=$(($(fr_inv) - FR_INV))
	echo "# fast registrations: $reg, invalidations (local and remote): $inv"
	[ $reg -gt 0 ] && [ $inv -gt 0 ]
}

# pingpong <ibv_*_pingpong> <gid index> <args...>: the stock pingpong tool, server on rrxe1
# in the second namespace, client on rrxe0 in the first; both must succeed.
pingpong() {
	local t=$1 g=$2
	shift 2
	timeout 90 ip netns exec $NS1 "$t" -d rrxe1 -g "$g" -c "$@" >$TMPD/pp.srv 2>&1 &
	local srv=$!
	wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18515 '" 30
	timeout 90 ip netns exec $NS0 "$t" -d rrxe0 -g "$g" -c "$@" $IP1 >$TMPD/pp.cli 2>&1
	local c=$?
	wait $srv
	local s=$?
	if [ $c -ne 0 ] || [ $s -ne 0 ] || ! grep -q "iters in" $TMPD/pp.cli; then
		echo "# client rc=$c server rc=$s"
		sed 's/^/# cli: /' $TMPD/pp.cli | tail -5
		sed 's/^/# srv: /' $TMPD/pp.srv | tail -5
		return 1
	fi
}

# provider_up <rrxe|rxe|siw>: one device of that provider on each host's veth (the bench's
# boots, one provider each); sets d0 and d1 to their names and opt to perftest's option
# for connecting them (-x 1: the IPv4-mapped RoCEv2 GID; -R: rdma_cm).
provider_up() {
	case $1 in
	rrxe) devs_up; d0=rrxe0 d1=rrxe1 opt="-x 1" ;;
	rxe)
		modprobe rdma_rxe
		in0 rdma link add rxe0 type rxe netdev va
		in1 rdma link add rxe1 type rxe netdev vb
		d0=rxe0 d1=rxe1 opt="-x 1"
		sleep 2 ;;
	siw)
		modprobe siw
		modprobe rdma_ucm
		in0 rdma link add siw0 type siw netdev va
		in1 rdma link add siw1 type siw netdev vb
		# (siw cannot move to another RDMA namespace, no disassociate: both devices stay
		# visible in both namespaces, see hosts_up on interface indexes.)
		d0=siw0 d1=siw1 opt="-R"
		sleep 2 ;;
	esac
}

# The rrxe-xfer tool (tools/rrxe-xfer, a cargo crate): installed next to the scripts, or
# built in the repository (the scripts' parent or RRXE_REPO in the test VM).
XFER=
for x in "$rrxe_dir/rrxe-xfer" "$rrxe_dir/../tools/rrxe-xfer/target/release/rrxe-xfer" \
	"${RRXE_REPO:-/nonexistent}/tools/rrxe-xfer/target/release/rrxe-xfer"; do
	[ -x "$x" ] && { XFER=$x; break; }
done
XPORT=18700
# xfer_serve <root> [options...]: rrxe-xfer serve in the second namespace, in the
# background (its log in $TMPD/xfer.srv); waits until it listens.
xfer_serve() {
	local root=$1
	shift
	# (Not through in1: a function runs in a subshell, and the EXIT trap's kill of that
	# subshell would leave the server running, holding the test's output open.)
	ip netns exec "$NS1" "$XFER" serve -r "$root" -l "$IP1:$XPORT" "$@" >>"$TMPD/xfer.srv" 2>&1 &
	XFER_SRV=$!
	wait_for "in1 ss -ltn | grep -q ':$XPORT '" 30
}
# xfer <args...>: the client in the first namespace; its output in $TMPD/xfer.out.
xfer() { timeout $((200 * SLOW)) ip netns exec "$NS0" "$XFER" "$@" -P $XPORT >"$TMPD/xfer.out" 2>&1; }
# xfer_ok <args...>: the client must succeed (its output is shown if not).
xfer_ok() {
	xfer "$@" && return 0
	echo "# rrxe-xfer $* failed:"
	sed 's/^/#   /' "$TMPD/xfer.out" | tail -5
	echo "# server:"
	sed 's/^/#   /' "$TMPD/xfer.srv" | tail -5
	return 1
}
# xfer_fails <pattern> <args...>: the client must fail (exit 1) with a message matching.
xfer_fails() {
	local pat=$1 rc
	shift
	xfer "$@"
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q -- "$pat" "$TMPD/xfer.out"; then
		echo "# rrxe-xfer $*: exit $rc, expected 1 and '$pat':"
		sed 's/^/#   /' "$TMPD/xfer.out" | tail -5
		return 1
	fi
}
# same <file> <file>: byte-identical.
same() { cmp -s "$1" "$2" || { echo "# $1 and $2 differ"; cmp "$1" "$2" | head -2 | sed 's/^/# /'; return 1; }; }
