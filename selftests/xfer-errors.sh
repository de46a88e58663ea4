#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rrxe-xfer failures: a missing file, paths that leave the served directory ('..', a
# symlink out, an absolute symlink) and a client killed in the middle of a transfer each
# give a clear error and a non-zero exit, and the server goes on serving; the killed
# transfer resumes from its partial file; a file truncated while the server sends it
# fails that transfer cleanly; and the server holds no MR afterwards.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require xfer cmp
ktap_set_plan 10
hosts_up
devs_up
S=$TMPD/srv C=$TMPD/cli
mkdir -p "$S/d" "$C"
echo secret >"$TMPD/secret"
ln -s ../secret "$S/out"
ln -s /etc "$S/etc"
head -c 4096 /dev/urandom >"$S/d/ok"
xfer_serve "$S"
ktap_check "a missing file: 'not found', exit 1" xfer_fails "not found" get $IP1:nosuch "$C/x"
ktap_check "'..': refused" xfer_fails "refused" get $IP1:../secret "$C/x"
ktap_check "a symlink out of the root: refused" xfer_fails "refused" get $IP1:out "$C/x"
ktap_check "put through an absolute symlink: refused" xfer_fails "refused" put "$S/d/ok" $IP1:etc/evil
ktap_eq "nothing was written outside the root" "no" "$([ -e /etc/evil ] || [ -e /etc/evil.rrxe-part ] && echo yes || echo no)"
served() { xfer_ok get --quiet $IP1:d/ok "$C/ok" && same "$S/d/ok" "$C/ok"; }
head -c $((192 << 20)) /dev/urandom >"$S/big"
# slow_get <name> <log> <bytes> [options...]: a slow get of <name> (64 KiB chunks, one
# in flight) into $C in the background, the client's pid in SLOW_GET; returns once more
# than <bytes> are in its partial file.
slow_get() {
	local name=$1 log=$2 min=$3
	shift 3
	# (ip netns exec execs the tool: $! is the client itself.)
	ip netns exec $NS0 "$XFER" get "$@" -c 64 -s 1 -P $XPORT $IP1:$name "$C/$name" >"$log" 2>&1 &
	SLOW_GET=$!
	wait_for "[ \$(stat -c %s '$C/$name.rrxe-part' 2>/dev/null || echo 0) -gt $min ]" 100
}
killed() {
	# A slow transfer, killed after it has begun.
	slow_get big "$TMPD/kill.out" 4000000 --quiet
	local p=$SLOW_GET
	kill -9 $p
	wait $p 2>/dev/null
	local have
	have=$(stat -c %s "$C/big.rrxe-part")
	echo "# killed with $have bytes of $((192 << 20)) in the partial file"
	[ "$have" -gt 0 ] && [ "$have" -lt $((192 << 20)) ] && served
}
ktap_check "a client killed mid-transfer: the server serves the next one" killed
wait_for "grep -q 'connection ended' '$TMPD/xfer.srv'" 40
ktap_eq "the server logged the vanished client" "1" "$(grep -c 'connection ended' "$TMPD/xfer.srv")"
resume() {
	local part
	part=$(stat -c %s "$C/big.rrxe-part")
	xfer_ok get --resume $IP1:big "$C/big" || return 1
	echo "# $(grep 'bytes in' "$TMPD/xfer.out")"
	grep -q " $(( (192 << 20) - part )) bytes in" "$TMPD/xfer.out" && same "$S/big" "$C/big"
}
ktap_check "get --resume moves only the missing bytes" resume
shrunk() {
	# A file truncated on the server under a slow transfer: that transfer fails with a
	# clear error, and the server serves the next.
	head -c $((64 << 20)) /dev/urandom >"$S/shrink"
	slow_get shrink "$TMPD/shrink.out" 1000000
	local p=$SLOW_GET rc
	truncate -s 65536 "$S/shrink"
	wait $p
	rc=$?
	echo "# client exit $rc: $(grep -m1 'rrxe-xfer:' "$TMPD/shrink.out")"
	[ $rc = 1 ] && grep -q "shrank while being sent" "$TMPD/shrink.out" &&
		kill -0 $XFER_SRV && served
}
ktap_check "a file truncated while being sent: a clear error, the server serves on" shrunk
mrs() { rdma resource show mr 2>/dev/null | grep -c 'comm rrxe-xfer'; }
wait_for "[ \$(rdma resource show mr 2>/dev/null | grep -c 'comm rrxe-xfer') = 0 ]" 10
ktap_eq "no MR of rrxe-xfer left registered" 0 "$(mrs)"
devs_down
ktap_finished
