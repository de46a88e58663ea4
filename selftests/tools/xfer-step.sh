#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One side of an rrxe-xfer step between two hosts (lib/interop.sh), in the
# "<tool> -p <port> ..." shape its steps use:
#   xfer-step.sh -p PORT serve SIZE      serve one connection (rdma_cm on PORT+100) from a
#                                        directory holding "f", SIZE pseudo-random bytes;
#                                        afterwards a received "up" must equal "f"
#   xfer-step.sh -p PORT get SIZE HOST   fetch "f" and compare it with the same bytes
#   xfer-step.sh -p PORT put SIZE HOST   send the same bytes as "up"
# The bytes come from a seeded generator, so both hosts make the same file.
here=$(cd "$(dirname "$0")" && pwd)
xfer=$here/../../tools/rrxe-xfer/target/release/rrxe-xfer
[ -x "$xfer" ] || xfer=$here/../rrxe-xfer
[ "$1" = -p ] || { echo "usage: $0 -p PORT serve|get|put SIZE [HOST]" >&2; exit 2; }
port=$2 mode=$3 size=$4 host=${5:-}
dir=$(mktemp -d /tmp/xfer-step.XXXXXX)
trap 'rm -rf "$dir"' EXIT
python3 -c "import random, sys; sys.stdout.buffer.write(random.Random($size).randbytes($size))" >"$dir/ref"
case $mode in
serve)
	mkdir "$dir/root"
	cp "$dir/ref" "$dir/root/f"
	"$xfer" serve --once -r "$dir/root" -l "0.0.0.0:$port" --cm-port $((port + 100)) || exit 1
	[ ! -e "$dir/root/up" ] || cmp "$dir/ref" "$dir/root/up" ;;
get)
	"$xfer" get -P "$port" "$host:f" "$dir/got" && cmp "$dir/ref" "$dir/got" ;;
put)
	"$xfer" put -P "$port" "$dir/ref" "$host:up" ;;
*) exit 2 ;;
esac
