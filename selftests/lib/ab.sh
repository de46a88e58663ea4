#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job of `make ab` (RRXE_MODE=ab): two rrxe builds in one boot, loaded in turn
# (RRXE_AB="a.ko,b.ko"), RRXE_AB_ROUNDS rounds (a b, then b a, ...) of ib_write_bw and
# ib_read_bw 64 KiB, lossless and through netem loss (RRXE_AB_LOSS percent, both ways).
# RRXE_AB_ONLY (e.g. read_loss1,write_loss0; also write4q_loss0, ib_write_bw over 4
# QPs, and writelat_loss0, sendlat_loss0 and readlat_loss0, the 8-byte latency tools in
# us) runs only those tests. Writes
# "<side> <test> <MB/s or FAIL>" lines to /tmp/out/ab.txt. Never run by make check.
cd "$(dirname "$0")/.." || exit 1
. lib/ktap.sh
IFS=, read -ra kos <<<"${RRXE_AB:-}"
[ ${#kos[@]} = 2 ] || { echo "ab: RRXE_AB must name two modules, a.ko,b.ko"; exit 2; }
dur=${RRXE_BENCH_SECONDS:-4}
rounds=${RRXE_AB_ROUNDS:-3}
pct=${RRXE_AB_LOSS:-1}
out=/tmp/out/ab.txt
: >"$out"
for m in ib_core ib_uverbs rdma_ucm udp_tunnel ip6_udp_tunnel sch_netem; do modprobe $m; done
hosts_up
# bw <tool> [args]: the MB/s of one 64 KiB run between rrxe0 and rrxe1 (for a latency
# tool, its typical latency in us with 8-byte messages), nothing if it failed.
bw() {
	local tool=$1 col=4 args=(-s 65536 -D "$dur")
	shift
	case $tool in *_lat) col=5 args=(-s 8 -n 2000) ;; esac
	ip netns exec $NS1 timeout 120 "$tool" -d rrxe1 -F -x 1 "${args[@]}" "$@" >/tmp/ab.srv 2>&1 &
	local srv=$!
	wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18515 '" 30
	ip netns exec $NS0 timeout 120 "$tool" -d rrxe0 -F -x 1 "${args[@]}" "$@" "$IP1" >/tmp/ab.cli 2>&1
	wait $srv
	awk -v c=$col '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ { print $c; exit }' /tmp/ab.cli
}
# loss <pct>: netem dropping <pct> percent both ways; 0: no qdisc.
loss() {
	in0 tc qdisc del dev va root 2>/dev/null
	in1 tc qdisc del dev vb root 2>/dev/null
	[ "$1" = 0 ] && return
	in0 tc qdisc add dev va root netem loss "$1%"
	in1 tc qdisc add dev vb root netem loss "$1%"
}
rc=0
for ((r = 0; r < rounds; r++)); do
	order="a b"
	[ $((r % 2)) = 1 ] && order="b a"
	for side in $order; do
		ko=${kos[0]}
		[ "$side" = b ] && ko=${kos[1]}
		if ! insmod "$ko" || ! devs_up; then
			echo "ab: $side: $ko did not load or make its devices" | tee -a "$out"
			rc=1
			rmmod rrxe 2>/dev/null
			continue
		fi
		for l in 0 "$pct"; do
			loss "$l"
			for op in write read write4q writelat sendlat readlat; do
				# (By default the first two; RRXE_AB_ONLY can also name write4q_loss0, over
				# 4 QPs, and writelat_loss0, sendlat_loss0, readlat_loss0 in us.)
				case ",${RRXE_AB_ONLY:-write_loss$l,read_loss$l}," in *",${op}_loss$l,"*) ;; *) continue ;; esac
				case $op in
				write4q) v=$(bw ib_write_bw -q 4) ;;
				*lat) v=$(bw "ib_${op%lat}_lat") ;;
				*) v=$(bw "ib_${op}_bw") ;;
				esac
				[ -n "$v" ] || rc=1
				echo "$side ${op}_loss$l ${v:-FAIL}" | tee -a "$out"
			done
		done
		loss 0
		devs_down
		rmmod rrxe || rc=1
	done
done
exit $rc
