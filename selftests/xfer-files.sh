#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rrxe-xfer get and put between the two hosts: files of 0 B, 1 B, the RoCE MTU +-1,
# 1 MiB+1, 256 MiB (over two QPs), 64 MiB, and transfers with completion-channel events
# and with busy polling (the default polls adaptively); every file byte-compared with
# its source. On the debug kernel (SLOW), where rrxe-xfer moves about 1 MB/s, the large
# file is 64 MiB.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require xfer cmp
ktap_set_plan 8
BIG=$((SLOW > 1 ? 64 : 256))
hosts_up
devs_up
S=$TMPD/srv C=$TMPD/cli
mkdir -p "$S" "$C"
for n in 0 1 1023 1025 1048577; do head -c $n /dev/urandom >"$S/f$n"; done
xfer_serve "$S"
small() {
	local n
	for n in 0 1 1023 1025 1048577; do
		xfer_ok get --quiet $IP1:f$n "$C/" && same "$S/f$n" "$C/f$n" || return 1
	done
	rm -f "$C"/f*
	xfer_ok get --quiet $IP1:f0 $IP1:f1 $IP1:f1023 $IP1:f1025 $IP1:f1048577 "$C" || return 1
	for n in 0 1 1023 1025 1048577; do same "$S/f$n" "$C/f$n" || return 1; done
}
ktap_check "get 0 B, 1 B, 1023 B, 1025 B, 1 MiB+1 (one by one and in one session)" small
ktap_eq "no partial files left" "" "$(ls "$C" | grep rrxe-part)"
put_small() {
	local n
	mkdir -p "$S/up"
	xfer_ok put --quiet "$C/f0" "$C/f1" "$C/f1023" "$C/f1025" "$C/f1048577" $IP1:up/ || return 1
	for n in 0 1 1023 1025 1048577; do same "$C/f$n" "$S/up/f$n" || return 1; done
}
ktap_check "put the same five files into a directory" put_small
big() {
	head -c $((BIG << 20)) /dev/urandom >"$S/big"
	xfer_ok get -q 2 $IP1:big "$C/big" || return 1
	echo "# $(grep 'bytes in' "$TMPD/xfer.out")"
	same "$S/big" "$C/big"
	local rc=$?
	rm -f "$C/big"
	return $rc
}
ktap_check "get $BIG MiB over two QPs" big
put_big() {
	head -c $((64 << 20)) /dev/urandom >"$C/p64"
	xfer_ok put -c 256 -s 32 "$C/p64" $IP1:p64 || return 1
	echo "# $(grep 'bytes in' "$TMPD/xfer.out")"
	same "$C/p64" "$S/p64"
}
ktap_check "put 64 MiB, 256 KiB chunks, 32 in flight" put_big
rm -f "$S/big" "$S/p64" "$C/p64"
events() {
	head -c $((8 << 20)) /dev/urandom >"$S/ev"
	xfer_ok get --events -q 3 -c 64 $IP1:ev "$C/ev" && same "$S/ev" "$C/ev"
}
ktap_check "get with completion events, 3 QPs, 64 KiB chunks" events
busy() {
	head -c $((8 << 20)) /dev/urandom >"$S/bp"
	xfer_ok get --poll busy -q 1 $IP1:bp "$C/bp" || return 1
	grep -q "1 QP(s), busy-polled" "$TMPD/xfer.out" && same "$S/bp" "$C/bp"
}
ktap_check "get busy-polling, 1 QP" busy
ktap_eq "the server is still serving" "yes" "$(kill -0 $XFER_SRV 2>/dev/null && echo yes)"
devs_down
ktap_finished
