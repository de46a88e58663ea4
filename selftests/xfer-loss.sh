#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rrxe-xfer under 1% packet loss both ways (netem): get and put of 32 MiB arrive intact.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require xfer cmp mod:sch_netem
ktap_set_plan 2
hosts_up
devs_up
S=$TMPD/srv C=$TMPD/cli
mkdir -p "$S" "$C"
head -c $((32 << 20)) /dev/urandom >"$S/f"
xfer_serve "$S"
in0 tc qdisc add dev va root netem loss 1%
in1 tc qdisc add dev vb root netem loss 1%
get1() {
	xfer_ok get $IP1:f "$C/f" || return 1
	echo "# $(grep 'bytes in' "$TMPD/xfer.out"), $(dropped) packets dropped"
	same "$S/f" "$C/f"
}
ktap_check "get 32 MiB at 1% loss" get1
put1() {
	xfer_ok put "$C/f" $IP1:g || return 1
	echo "# $(grep 'bytes in' "$TMPD/xfer.out"), $(dropped) packets dropped"
	same "$C/f" "$S/g"
}
ktap_check "put 32 MiB at 1% loss" put1
devs_down
ktap_finished
