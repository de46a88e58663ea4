#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rrxe-xfer over soft-iWARP (siw): the same tool, connected through rdma_cm over TCP,
# gets and puts 16 MiB byte-exactly and answers a message. No rrxe device is created, so
# that rdma_cm binds the siw devices.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require xfer cmp mod:siw
ktap_set_plan 3
hosts_up
# (siw cannot disassociate a device from a process: the server, which keeps its device
# open, must be gone before the links can be deleted.)
siw_down() {
	[ -n "${XFER_SRV:-}" ] && kill "$XFER_SRV" 2>/dev/null && wait "$XFER_SRV" 2>/dev/null
	rdma link delete siw0 2>/dev/null
	rdma link delete siw1 2>/dev/null
}
trap 'siw_down; rrxe_cleanup' EXIT
provider_up siw
wait_for "[ -e /sys/class/infiniband/siw0 ] && [ -e /sys/class/infiniband/siw1 ]" 10
# What rdma_cm matches a bound address against: each siw device's first GID entry and
# its net device's index.
for d in 0 1; do
	echo "# siw$d: gid0 $(cat /sys/class/infiniband/siw$d/ports/1/gids/0 2>&1)," \
		"ndev $(cat /sys/class/infiniband/siw$d/ports/1/gid_attrs/ndevs/0 2>&1)"
done
echo "# va: $(in0 cat /sys/class/net/va/ifindex /sys/class/net/va/address | tr '\n' ' ')" \
	"vb: $(in1 cat /sys/class/net/vb/ifindex /sys/class/net/vb/address | tr '\n' ' ')"
rdma link show | sed 's/^/# /'
S=$TMPD/srv C=$TMPD/cli
mkdir -p "$S" "$C"
head -c $((16 << 20)) /dev/urandom >"$S/f"
xfer_serve "$S"
get1() {
	xfer_ok get $IP1:f "$C/f" || return 1
	echo "# $(grep 'bytes in' "$TMPD/xfer.out")"
	same "$S/f" "$C/f"
}
ktap_check "get 16 MiB over siw" get1
put1() { xfer_ok put --quiet -q 2 "$C/f" $IP1:g && same "$C/f" "$S/g"; }
ktap_check "put 16 MiB over siw, two QPs" put1
xfer_ok msg $IP1 echo siw
ktap_eq "echo over siw" "siw" "$(cat "$TMPD/xfer.out")"
siw_down
ktap_finished
