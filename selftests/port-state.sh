#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The port follows its netdev: DOWN/ACTIVE with port events when the link goes down and
# up, and the active MTU follows the netdev MTU.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require ibv_asyncwatch
ktap_set_plan 9
hosts_up
devs_up
ev=$TMPD/asyncwatch.$$
ibv_asyncwatch -d rrxe0 >"$ev" 2>&1 &
watch=$!
# Events reach it only once it has opened the device, which it reports first (a fixed
# second was not always enough on a loaded host).
wait_for "grep -q 'async event FD' $ev" 20
ip -n $NS0 link set va down
ktap_check "port DOWN after 'ip link set va down'" wait_for "[ \"\$(devinfo rrxe0 state)\" = 'PORT_DOWN (1)' ]"
ktap_eq "phys_state DISABLED while down" "DISABLED (3)" "$(devinfo rrxe0 phys_state)"
ktap_check "IBV_EVENT_PORT_ERR delivered" wait_for "grep -q IBV_EVENT_PORT_ERR $ev"
ip -n $NS0 link set va up
ktap_check "port ACTIVE after 'ip link set va up'" wait_for "[ \"\$(devinfo rrxe0 state)\" = 'PORT_ACTIVE (4)' ]"
ktap_check "IBV_EVENT_PORT_ACTIVE delivered" wait_for "grep -q IBV_EVENT_PORT_ACTIVE $ev"
kill $watch 2>/dev/null
wait $watch 2>/dev/null
ip -n $NS0 link set va mtu 9000
ip -n $NS1 link set vb mtu 9000
ktap_eq "active_mtu 4096 on a 9000-byte netdev" "4096 (5)" "$(devinfo rrxe0 active_mtu)"
ip -n $NS0 link set va mtu 2200
ktap_eq "active_mtu 2048 on a 2200-byte netdev" "2048 (4)" "$(devinfo rrxe0 active_mtu)"
ip -n $NS0 link set va mtu 1000
ktap_eq "active_mtu 512 on a 1000-byte netdev" "512 (2)" "$(devinfo rrxe0 active_mtu)"
ip -n $NS0 link set va mtu 1500
ip -n $NS1 link set vb mtu 1500
ktap_eq "active_mtu back to 1024" "1024 (3)" "$(devinfo rrxe0 active_mtu)"
rm -f "$ev"
devs_down
ktap_finished
