#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rrxe-xfer message data: echo (short, and larger than the receive buffer so that it
# moves in several chunks), the server's info, a directory listing and a stat, each
# deserialized by the client's message dispatcher and checked.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require xfer
ktap_set_plan 7
hosts_up
devs_up
S=$TMPD/srv
mkdir -p "$S/dir/sub"
printf 'hello' >"$S/dir/a"
head -c 12345 /dev/zero >"$S/dir/b"
xfer_serve "$S"
out() { cat "$TMPD/xfer.out"; }
xfer_ok msg $IP1 echo "hello over RDMA"
ktap_eq "echo: a short text comes back" "hello over RDMA" "$(out)"
long=$(head -c 45000 /dev/urandom | base64 -w0)
xfer_ok msg -c 4 $IP1 echo "$long"
ktap_eq "echo: 60 KB through a 4 KiB buffer (15 chunks)" "$(echo "$long" | sha256sum)" "$(out | sha256sum)"
xfer_ok msg $IP1 info
ktap_eq "info: the server's root and limits" "root: $S|max_qps: 8" \
	"$(grep -E '^(root|max_qps):' "$TMPD/xfer.out" | paste -sd'|')"
xfer_ok msg $IP1 ls dir
ktap_eq "ls: three entries with kinds and sizes" "f 5 a|f 12345 b|d sub" \
	"$(awk '{ print $1, ($1 == "d" ? "" : $3 " ") $4 }' "$TMPD/xfer.out" | sed 's/  / /' | paste -sd'|')"
xfer_ok msg $IP1 stat dir/b
ktap_eq "stat: one file" "f 12345 dir/b" "$(awk '{ print $1, $3, $4 }' "$TMPD/xfer.out")"
xfer_fails "argument over 65535 bytes" msg $IP1 echo "$long$long"
ktap_eq "an echo over the request's limit is refused by the client" 0 $?
xfer msg $IP1 nosuch
ktap_eq "an unknown message kind is a usage error (exit 2)" "2 1" "$? $(grep -c "expected 'echo TEXT'" "$TMPD/xfer.out")"
devs_down
ktap_finished
