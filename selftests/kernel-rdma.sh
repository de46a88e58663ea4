#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernel's own rdma_rxe selftests (tools/testing/selftests/rdma/rxe_*.sh of the
# kernel source) run against rrxe: each script is copied at run time with the link
# type changed from rxe to rrxe ("type rxe" -> "type rrxe", and the module they load
# and unload, rdma_rxe -> rrxe) and nothing else, then run; one case per script. They
# check the UDP socket per network namespace, IPv6, NETDEV_UNREGISTER, rping between
# namespaces, the port_xmit_data/port_rcv_data counters and device names across
# namespaces.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
ksrc=$(ksrc_selftests rdma) || rrxe_skip "no kernel source with tools/testing/selftests/rdma (set KSRC)"
rrxe_require rping ping ss modinfo mod:tun mod:dummy exclusive
# What a script stopped by its timeout may leave: it started with no RDMA device
# ("exclusive"), so every link left is one of the scripts'.
kr_cleanup() {
	local l
	for l in $(rdma link show 2>/dev/null | awk '{ sub("/.*", "", $2); print $2 }'); do
		rdma link delete "$l" 2>/dev/null
	done
	for l in tun0 tun1 veth0 veth-b; do ip link del "$l" 2>/dev/null; done
	for l in test1 net6; do ip netns del "$l" 2>/dev/null; done
}
trap 'kr_cleanup; rrxe_cleanup' EXIT
tests=$(cd "$ksrc/rdma" && ls rxe_*.sh)
ktap_set_plan $(echo "$tests" | wc -w)

# The copies sit in a kselftest-like tree: they source ../kselftest/ktap_helpers.sh.
mkdir -p "$TMPD/st/rdma" "$TMPD/st/kselftest"
cp "$KSFT_HELPERS" "$TMPD/st/kselftest/ktap_helpers.sh"
for t in $tests; do
	sed -e 's/type rxe\b/type rrxe/g' -e 's/\brdma_rxe\b/rrxe/g' "$ksrc/rdma/$t" >"$TMPD/st/rdma/$t"
	chmod +x "$TMPD/st/rdma/$t"
	echo "# $t: $(diff "$ksrc/rdma/$t" "$TMPD/st/rdma/$t" | grep -c '^>') lines changed"
done

# The runner gives this script 240 s; the six share 225 of them. rxe_netns_names.sh alone
# runs some 400 short rdma and ip commands (about 40 s under TCG), the others a few
# seconds each: each may take up to 120 s of what is left. On the debug kernel (SLOW)
# every command costs several times as much, and the runner allows 1200 s.
deadline=$((SECONDS + 225 * SLOW))
for t in $tests; do
	# (A system with udev has /dev/net/tun whether or not tun is loaded, and opening
	# it loads the module; the test VM has no udev, and a script that unloads tun when
	# it ends would leave the next without.)
	modprobe tun
	left=$((deadline - SECONDS))
	[ $left -gt $((120 * SLOW)) ] && left=$((120 * SLOW))
	start=$SECONDS
	if [ $left -lt 5 ]; then
		echo "# $t: no time left of the runner's"
		rc=124
	else
		timeout $left "$TMPD/st/rdma/$t" >"$TMPD/$t.log" 2>&1
		rc=$?
	fi
	echo "# $t: exit code $rc after $((SECONDS - start)) s"
	# (The scripts send their stdout to /dev/null; what is left is stderr and KTAP.)
	tail -5 "$TMPD/$t.log" | sed 's/^/# /'
	case $rc in
	0) ktap_test_pass "$t" ;;
	4) ktap_test_skip "$t" ;;
	*) ktap_test_fail "$t" ;;
	esac
	[ $rc = 124 ] && kr_cleanup
	# Each script unloads the module when it ends.
	grep -qs '^rrxe ' /proc/modules || modprobe rrxe
done
ktap_finished
