# SPDX-License-Identifier: GPL-2.0
# The kernel's own rdma_rxe selftests (tools/testing/selftests/rdma/rxe_*.sh of the
# kernel source) run against rrxe, for kernel-rdma.sh and kernel-netns.sh (sourced
# after lib/ktap.sh and rrxe_require ... exclusive, with $ksrc the selftests directory):
# each script is copied at run time with the link type changed from rxe to rrxe ("type
# rxe" -> "type rrxe", and the module they load and unload, rdma_rxe -> rrxe) and nothing
# else, then run; one case per script.

# What a script stopped by its timeout may leave: it started with no RDMA device
# ("exclusive"), so every link left is one of the scripts'. rxe_netns_names.sh also
# leaves its namespaces, its dummy netdevs and the RDMA netns mode at "exclusive", in
# which every later script would skip: the mode goes back to shared once the
# namespaces' devices have left them (EBUSY until then).
kr_cleanup() {
	local l end=$((SECONDS + 30 * SLOW))
	for l in $(rdma link show 2>/dev/null | awk '{ sub("/.*", "", $2); print $2 }'); do
		rdma link delete "$l" 2>/dev/null
	done
	for l in tun0 tun1 veth0 veth-b $(ip -o link show type dummy 2>/dev/null |
		awk -F': ' '$2 ~ /^rxn[0-9]+[ab]$/ { print $2 }'); do
		ip link del "$l" 2>/dev/null
	done
	for l in test1 net6 $(ip netns list | awk '$1 ~ /^rxe_netns_names_/ { print $1 }'); do
		ip netns del "$l" 2>/dev/null
	done
	while rdma system show 2>/dev/null | grep -q 'netns exclusive'; do
		rdma system set netns shared 2>/dev/null && break
		[ $SECONDS -lt $end ] || { echo "# RDMA netns mode left exclusive"; break; }
		sleep 0.1
	done
}

# kr_run <budget s> <script...>: runs each script (one KTAP case each) in at most
# <budget> seconds in all; with more than one, each may take at most 120 s (times SLOW)
# of what is left.
kr_run() {
	local budget=$1 t rc left start deadline
	shift
	trap 'kr_cleanup; rrxe_cleanup' EXIT
	ktap_set_plan $#
	# The copies sit in a kselftest-like tree: they source ../kselftest/ktap_helpers.sh.
	mkdir -p "$TMPD/st/rdma" "$TMPD/st/kselftest"
	cp "$KSFT_HELPERS" "$TMPD/st/kselftest/ktap_helpers.sh"
	for t; do
		sed -e 's/type rxe\b/type rrxe/g' -e 's/\brdma_rxe\b/rrxe/g' "$ksrc/rdma/$t" >"$TMPD/st/rdma/$t"
		chmod +x "$TMPD/st/rdma/$t"
		echo "# $t: $(diff "$ksrc/rdma/$t" "$TMPD/st/rdma/$t" | grep -c '^>') lines changed"
	done
	deadline=$((SECONDS + budget))
	for t; do
		# (A system with udev has /dev/net/tun whether or not tun is loaded, and opening
		# it loads the module; the test VM has no udev, and a script that unloads tun
		# when it ends would leave the next without.)
		modprobe tun
		left=$((deadline - SECONDS))
		[ $# -gt 1 ] && [ $left -gt $((120 * SLOW)) ] && left=$((120 * SLOW))
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
}
