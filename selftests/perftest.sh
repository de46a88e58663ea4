#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stock perftest between the two hosts: WRITE, SEND and READ bandwidth and latency over the
# IPv4 GID, and WRITE bandwidth with 4 QPs and over the IPv6 GID. Each run must finish with
# a result line; bandwidth numbers are reported, never asserted (see make bench).
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require ib_write_bw ib_send_bw ib_read_bw ib_write_lat ib_send_lat ib_read_lat ss
ktap_set_plan 9
hosts_up
devs_up
pt() { # pt <tool> <args...>: server in ns1, client in ns0
	local tool=$1
	shift
	timeout $((120 * SLOW)) ip netns exec $NS1 "$tool" -d rrxe1 -F "$@" >$TMPD/pt.srv 2>&1 &
	local srv=$!
	wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18515 '" 30
	timeout $((120 * SLOW)) ip netns exec $NS0 "$tool" -d rrxe0 -F "$@" "$IP1" >$TMPD/pt.cli 2>&1
	local c=$?
	wait $srv
	local s=$?
	local res
	res=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ { print; exit }' $TMPD/pt.cli)
	if [ $c -ne 0 ] || [ $s -ne 0 ] || [ -z "$res" ]; then
		echo "# $tool client rc=$c server rc=$s"
		sed 's/^/# cli: /' $TMPD/pt.cli | tail -6
		sed 's/^/# srv: /' $TMPD/pt.srv | tail -4
		counters_dump
		dmesg | tail -5 | sed 's/^/# dmesg: /'
		return 1
	fi
	echo "# $tool $*: $res"
}
ktap_check "ib_write_bw 64 KiB" pt ib_write_bw -x 1 -s 65536 -n 500
ktap_check "ib_write_bw 64 KiB, 4 QPs" pt ib_write_bw -x 1 -s 65536 -n 200 -q 4
ktap_check "ib_send_bw 4 KiB" pt ib_send_bw -x 1 -s 4096 -n 1000
ktap_check "ib_read_bw 64 KiB" pt ib_read_bw -x 1 -s 65536 -n 200
ktap_check "ib_write_lat 8 B" pt ib_write_lat -x 1 -s 8 -n 500
ktap_check "ib_send_lat 8 B" pt ib_send_lat -x 1 -s 8 -n 500
ktap_check "ib_read_lat 8 B" pt ib_read_lat -x 1 -s 8 -n 500
# -a runs every size from 2 B to 8 MiB: 20 iterations of each move 320 MiB, which the
# debug kernel's 0.4 MB/s could not in the tools' 480 s there; perftest's least, 5, move 80.
na=20
[ "$SLOW" -gt 1 ] && na=5
ktap_check "ib_write_bw all sizes (-a)" pt ib_write_bw -x 1 -a -n $na
ktap_check "ib_write_bw 64 KiB over the IPv6 GID" pt ib_write_bw -x 2 -s 65536 -n 200
devs_down
ktap_finished
