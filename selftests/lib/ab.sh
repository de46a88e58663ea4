#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job of `make ab` (RRXE_MODE=ab): two rrxe builds in one boot, loaded in turn
# (RRXE_AB="a.ko,b.ko"), RRXE_AB_ROUNDS rounds (a b, then b a, ...) of ib_write_bw and
# ib_read_bw 64 KiB, lossless and through netem loss (RRXE_AB_LOSS percent, both ways).
# RRXE_AB_ONLY (e.g. read_loss1,write_loss0) runs only those tests. Writes
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
# bw <tool>: the MB/s of one 64 KiB run between rrxe0 and rrxe1, nothing if it failed.
bw() {
	ip netns exec $NS1 timeout 120 "$1" -d rrxe1 -F -x 1 -s 65536 -D "$dur" >/tmp/ab.srv 2>&1 &
	local srv=$!
	wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18515 '" 30
	ip netns exec $NS0 timeout 120 "$1" -d rrxe0 -F -x 1 -s 65536 -D "$dur" "$IP1" >/tmp/ab.cli 2>&1
	wait $srv
	awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ { print $4; exit }' /tmp/ab.cli
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
			for op in write read; do
				case ",${RRXE_AB_ONLY:-${op}_loss$l}," in *",${op}_loss$l,"*) ;; *) continue ;; esac
				v=$(bw "ib_${op}_bw")
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
