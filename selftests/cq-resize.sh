#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ibv_resize_cq on rrxe: completions pending in the CQ survive a resize and come out in
# order with the ones that arrive after it; a resize below the pending count is refused
# and loses nothing (rrxe-verify -o resize, two QPs of one device).
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify
ktap_set_plan 2
hosts_up
devs_up
rs() {
	ip netns exec $NS0 "$VERIFY" -d rrxe0 -o resize "$@" >$TMPD/rs.out 2>&1
	local r=$?
	sed 's/^/# /' $TMPD/rs.out
	return $r
}
ktap_check "grow with 6 pending, 16 in order, shrink below pending refused (IPv4 GID)" rs
ktap_check "the same over the IPv6 GID" rs -g 2
devs_down
ktap_finished
