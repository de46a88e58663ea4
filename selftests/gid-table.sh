#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ib_core fills the GID table with RoCEv2 GIDs for the netdev's IPv4 and IPv6 addresses,
# and keeps it in step when addresses come and go.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require
ktap_set_plan 7
hosts_up
devs_up
gids() {
	local d=/sys/class/infiniband/rrxe0/ports/1 i
	for i in $(seq 0 15); do
		t=$(cat $d/gid_attrs/types/$i 2>/dev/null) || continue
		echo "$(cat $d/gids/$i) $t"
	done
}
has_gid() { gids | grep -q "^$1 RoCE v2$"; }
ktap_check "IPv4-mapped RoCEv2 GID for 10.0.0.1" wait_for "has_gid 0000:0000:0000:0000:0000:ffff:0a00:0001"
ktap_check "RoCEv2 GID for fd00::1" wait_for "has_gid fd00:0000:0000:0000:0000:0000:0000:0001"
has_linklocal() { gids | grep -q '^fe80:.* RoCE v2$'; }
no_v1() { [ -n "$(gids)" ] && ! gids | grep -q 'v1'; }
ktap_check "RoCEv2 link-local GID (fe80::)" has_linklocal
ktap_check "no RoCE v1 GIDs (rrxe is RoCEv2 only)" no_v1
ip -n $NS0 addr add 10.0.1.1/24 dev va
ktap_check "a new address adds its GID" wait_for "has_gid 0000:0000:0000:0000:0000:ffff:0a00:0101"
ip -n $NS0 addr del 10.0.1.1/24 dev va
ktap_check "a removed address removes its GID" wait_for "! has_gid 0000:0000:0000:0000:0000:ffff:0a00:0101"
ktap_check "ibv_devinfo -v shows the IPv4 GID" \
	bash -c "ibv_devinfo -v -d rrxe0 | grep -q '::ffff:10.0.0.1, RoCE v2'"
devs_down
ktap_finished
