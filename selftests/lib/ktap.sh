# SPDX-License-Identifier: GPL-2.0
# Helpers for rrxe selftests: KTAP output and the two-host bench (network namespaces
# ns0/ns1 joined by the veth pair va/vb). Source it from a test script.

KTAP_N=0
KTAP_FAIL=0
KTAP_PLANNED=0

ktap_header() { echo "TAP version 13"; }	# kselftest dialect of KTAP
ktap_plan() { KTAP_PLANNED=$1; echo "1..$1"; }
ktap_pass() { KTAP_N=$((KTAP_N + 1)); echo "ok $KTAP_N $*"; }
ktap_fail() { KTAP_N=$((KTAP_N + 1)); KTAP_FAIL=$((KTAP_FAIL + 1)); echo "not ok $KTAP_N $*"; }
ktap_skip() { KTAP_N=$((KTAP_N + 1)); echo "ok $KTAP_N $* # SKIP"; }
ktap_diag() { echo "# $*"; }
# ktap_check "description" command...: passes when the command exits 0.
ktap_check() {
	local desc=$1
	shift
	if "$@"; then ktap_pass "$desc"; else ktap_fail "$desc"; fi
}
# ktap_eq "description" expected actual
ktap_eq() {
	if [ "$2" = "$3" ]; then
		ktap_pass "$1"
	else
		ktap_diag "expected '$2', got '$3'"
		ktap_fail "$1"
	fi
}
ktap_finished() {
	while [ "$KTAP_N" -lt "$KTAP_PLANNED" ]; do ktap_fail "test did not run (script ended early)"; done
	[ "$KTAP_FAIL" -eq 0 ]
	exit $?
}

NS0=ns0
NS1=ns1
IP0=10.0.0.1
IP1=10.0.0.2
IP60=fd00::1
IP61=fd00::2
in0() { ip netns exec $NS0 "$@"; }
in1() { ip netns exec $NS1 "$@"; }

# Creates the two hosts if they are missing and restores their addresses, MTUs and link
# state (a test may have changed them; IPv6 addresses go away with the link).
hosts_up() {
	if ! ip netns list | grep -qw $NS0; then
		ip netns add $NS0
		ip netns add $NS1
		# Distinct interface indexes: soft-iWARP binds a wildcard listener to its
		# netdev's index, and in the shared RDMA namespace mode every siw device listens
		# in the server's namespace; with equal indexes the second bind is EADDRINUSE.
		ip -n $NS0 link add va index 10 type veth peer name vb index 11 netns $NS1
		ip -n $NS0 link set lo up
		ip -n $NS1 link set lo up
	fi
	ip -n $NS0 link set va mtu 1500 up
	ip -n $NS1 link set vb mtu 1500 up
	ip -n $NS0 addr replace $IP0/24 dev va
	ip -n $NS1 addr replace $IP1/24 dev vb
	ip -n $NS0 addr replace $IP60/64 dev va nodad
	ip -n $NS1 addr replace $IP61/64 dev vb nodad
	# NAPI mode: the veth peer then receives through one ring and one poller, in order,
	# like a NIC's receive queue. Without it a veth delivers each packet on the CPU that
	# sent it, and a flow sent from two CPUs is reordered whenever one of them defers its
	# receive softirq to ksoftirqd. (veth uses its ring only with GRO on, and, for skbs
	# not sent from a socket, only without TSO on the sending side.)
	in0 ethtool -K va gro on tso off >/dev/null 2>&1
	in1 ethtool -K vb gro on tso off >/dev/null 2>&1
	return 0
}

hosts_down() {
	ip netns del $NS0 2>/dev/null
	ip netns del $NS1 2>/dev/null
	while ip netns list | grep -qw "$NS0\|$NS1"; do sleep 0.1; done
}

# rrxe0 on va (ns0) and rrxe1 on vb (ns1).
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

# pair <tcp port> <timeout> <server cmd...> -- <client cmd...>: runs the server in ns1 and,
# once it listens on the port (port 0: after 2 s, for rdma_cm listeners), the client in ns0 (with $IP1 appended unless PAIR_NOADDR is
# set). Succeeds only if both exit 0; output is in /tmp/pair.srv and /tmp/pair.cli and is
# shown as diagnostics on failure.
pair() {
	local port=$1 t=$2 srv=() cli=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	timeout "$t" ip netns exec $NS1 "${srv[@]}" >/tmp/pair.srv 2>&1 &
	local pid=$!
	if [ "$port" = 0 ]; then
		sleep 2	# an rdma_cm listener: no TCP port to wait for
	else
		wait_for "ip netns exec $NS1 ss -ltn | grep -q ':$port '" 30
	fi
	if [ -n "${PAIR_NOADDR:-}" ]; then
		timeout "$t" ip netns exec $NS0 "${cli[@]}" >/tmp/pair.cli 2>&1
	else
		timeout "$t" ip netns exec $NS0 "${cli[@]}" $IP1 >/tmp/pair.cli 2>&1
	fi
	local c=$?
	wait $pid
	local s=$?
	if [ $c -ne 0 ] || [ $s -ne 0 ]; then
		echo "# ${cli[0]}: client rc=$c server rc=$s"
		sed 's/^/# cli: /' /tmp/pair.cli | tail -6
		sed 's/^/# srv: /' /tmp/pair.srv | tail -4
		return 1
	fi
}

# Path of the data-verifying traffic tool (built with the module).
VERIFY=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tools" && pwd)/rrxe-verify

# verify <args...>: rrxe-verify server on rrxe1, client on rrxe0; prints the result line.
verify() {
	pair 18516 120 "$VERIFY" -d rrxe1 "$@" -- "$VERIFY" -d rrxe0 "$@" || return 1
	echo "# $(tail -1 /tmp/pair.cli)"
}

# tc_dropped <in0|in1> <tc show arguments...>: the first "dropped" count tc prints (0 if
# none), e.g. tc_dropped in0 qdisc show dev va.
tc_dropped() {
	local n
	n=$("$1" tc -s "${@:2}" | awk '/dropped/ { sub(",", "", $7); print $7; exit }')
	echo "${n:-0}"
}
# act_drop <in0|in1> <dev> <n>: refuse 1 in <n> of the RoCEv2 packets leaving <dev> by a
# gact action on clsact egress, no qdisc (the stack returns NET_XMIT_DROP to the sender).
# UDP port 4791 only: a refused packet of the tools' TCP exchange would count too.
act_drop() {
	modprobe sch_ingress && modprobe cls_u32 && modprobe act_gact &&
	$1 tc qdisc add dev "$2" clsact &&
	$1 tc filter add dev "$2" egress protocol ip prio 1 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff \
		action gact pass random netrand drop "$3"
}
# dropped: packets the root qdiscs of both veth ends dropped since they were installed.
dropped() { echo $(( $(tc_dropped in0 qdisc show dev va) + $(tc_dropped in1 qdisc show dev vb) )); }

# counter <device> <name>: one rrxe counter of port 1.
counter() { rdma statistic show link "$1"/1 | tr ' ' '\n' | awk -v k="$2" 'p { print; exit } $0 == k { p = 1 }'; }
