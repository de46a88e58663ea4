#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma link add creates a device that stock rdma-core binds (rxe provider, ABI 2) and that
# reports honest, rxe-compatible attributes: Ethernet link layer, port ACTIVE, MTUs.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require ibv_devices
ktap_set_plan 17
hosts_up
ktap_check "rdma link add rrxe0 (ns0/va) and rrxe1 (ns1/vb)" devs_up
ktap_check "rdma link show (in ns0) lists rrxe0 on va" \
	bash -c "ip netns exec $NS0 rdma link show rrxe0/1 | grep -q 'netdev va'"
list=$(ibv_devices 2>&1)
ktap_check "ibv_devices lists both devices" \
	bash -c "grep -qw rrxe0 <<<'$list' && grep -qw rrxe1 <<<'$list'"
ktap_eq "uverbs ABI version 2" 2 "$(cat /sys/class/infiniband_verbs/uverbs*/abi_version 2>/dev/null | sort -u | head -1)"
ktap_check "ibv_devinfo -d rrxe0 succeeds (librxe bound by driver id)" \
	bash -c "ibv_devinfo -d rrxe0 >/dev/null"
ktap_eq "transport is InfiniBand (rxe provider)" "InfiniBand (0)" "$(devinfo rrxe0 transport)"
ktap_eq "vendor_id 0xffffff" 0xffffff "$(devinfo rrxe0 vendor_id)"
ktap_eq "link_layer Ethernet" Ethernet "$(devinfo rrxe0 link_layer)"
ktap_eq "port state ACTIVE" "PORT_ACTIVE (4)" "$(devinfo rrxe0 state)"
ktap_eq "active_mtu 1024 on a 1500-byte netdev" "1024 (3)" "$(devinfo rrxe0 active_mtu)"
ktap_eq "max_mtu 4096" "4096 (5)" "$(devinfo rrxe0 max_mtu)"
ktap_eq "max_qp_rd_atom 128 (perftest read depth)" 128 "$(devinfo rrxe0 max_qp_rd_atom)"
mac=$(in0 cat /sys/class/net/va/address)
guid=$(printf '%02x%s:%sff:fe%s:%s%s' $((0x${mac:0:2} ^ 2)) "${mac:3:2}" "${mac:6:2}" \
	"${mac:9:2}" "${mac:12:2}" "${mac:15:2}")
ktap_eq "node_guid is the EUI-64 of va's MAC" "$guid" "$(devinfo rrxe0 node_guid)"
ktap_check "ibv_devinfo -v exits 0" bash -c "ibv_devinfo -v -d rrxe0 >/dev/null 2>&1"
ktap_check "ibv_devinfo -v on rrxe1 exits 0" bash -c "ibv_devinfo -v -d rrxe1 >/dev/null 2>&1"
ktap_eq "phys_port_cnt 1" 1 "$(devinfo rrxe0 phys_port_cnt)"
# Every counter the documentation's table names reaches rdma statistic (ib_core takes a
# driver's list only up to the length the driver gives it).
doc=
for d in "$rrxe_dir/../Documentation/rrxe/index.rst" "${RRXE_REPO:-/nonexistent}/Documentation/rrxe/index.rst"; do
	[ -f "$d" ] && { doc=$d; break; }
done
counters_documented() {
	local shown want missing=
	shown=" $(in0 rdma statistic show link rrxe0/1 | tr '\n' ' ') "
	want=$(sed -n '/^Counters$/,/^Limits$/p' "$doc" | sed -n 's/^\([a-z][a-z0-9_]*\)  .*/\1/p')
	[ -n "$want" ] || return 1
	for c in $want; do
		grep -q " $c [0-9]" <<<"$shown" || missing="$missing $c"
	done
	echo "# $(wc -w <<<"$want") documented counters${missing:+, missing:$missing}"
	[ -z "$missing" ]
}
if [ -n "$doc" ]; then
	ktap_check "every documented counter is in rdma statistic" counters_documented
else
	ktap_test_skip "every documented counter is in rdma statistic (no Documentation/)"
fi
devs_down
ktap_finished
