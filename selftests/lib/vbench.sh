#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job of `make bench` (RRXE_MODE=vbench, rrxe only): verified WRITE against what an
# application does without it (RDMA WRITE, then RDMA READ of the same range and a
# compare) and against a plain WRITE, in one boot, at path MTU 1024 (veth MTU 1500) and
# 4096 (veth MTU 9000). rrxe-verify measures: -o wonly -k 1, a WRITE alone (plain, or
# verified when verify/enable is set: its completion is the verdict), post to
# completion; -o write -k 1, WRITE + READ + compare; -o wonly -k 16, WRITE bandwidth.
# Plain, verified (CRC-32, the default) and verified with CRC32C (verify/crc 0) runs
# alternate; medians of RRXE_BENCH_REPS (3). Writes "metric value" lines to
# /tmp/out/perf.txt. Never run by `make check`.
cd "$(dirname "$0")/.." || exit 1
. lib/ktap.sh
out=/tmp/out/perf.txt
: >"$out"
reps=${RRXE_BENCH_REPS:-3}
modprobe ib_uverbs
hosts_up
devs_up
vknob() { for d in rrxe0 rrxe1; do echo "$2" >/sys/kernel/debug/rrxe-$d/verify/$1; done; }
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
# best <lat|bw> <values...>: the best run (lowest latency, highest bandwidth).
best() {
	local k=$1
	shift
	printf '%s\n' "$@" | sort -g | if [ "$k" = lat ]; then head -1; else tail -1; fi
}
# report <name> <values...>: "<name> <median>", "<name>_best <best run>" and the runs.
report() {
	local n=$1
	shift
	echo "${n}_runs $(echo "$@" | tr ' ' ',')" >>"$out"
	echo "$n $(median "$@")" | tee -a "$out"
	echo "${n}_best $(best "${n%%_*}" "$@")" | tee -a "$out"
}
# one <key> <rrxe-verify args...>: one run; the value of "key=" on its result line.
one() {
	local key=$1
	shift
	if ! verify "$@" >/tmp/vb.out; then
		echo "vbench: rrxe-verify $* failed" >&2
		return
	fi
	tr ' ' '\n' </tmp/vb.out | sed -n "s|^$key=||p"
}
# alternate <plain name> <verified name> <key> <rrxe-verify args...>: the same run with
# verify/enable 0, 1 and 1 with CRC32C, alternating, RRXE_BENCH_REPS times; the three
# medians (the last named <verified name>_crc32c).
alternate() {
	local np=$1 nv=$2 key=$3 p="" v="" c="" i
	shift 3
	for ((i = 0; i < reps; i++)); do
		vknob enable 0
		p="$p $(one "$key" "$@")"
		vknob enable 1
		v="$v $(one "$key" "$@")"
		vknob crc 0
		c="$c $(one "$key" "$@")"
		vknob crc 1
	done
	report "$np" $p
	report "$nv" $v
	report "${nv}_crc32c" $c
}
for mtu in 1500 9000; do
	ip -n $NS0 link set va mtu $mtu
	ip -n $NS1 link set vb mtu $mtu
	m=$([ $mtu = 1500 ] && echo 1024 || echo 4096)
	for size in 8 4096 65536; do
		n=$([ $size = 65536 ] && echo 300 || echo 1000)
		alternate lat_write_${size}_mtu$m lat_verified_${size}_mtu$m lat_us_p50 \
			-o wonly -s $size -n $n -k 1 -m $m
		vknob enable 0
		wr=""
		for ((i = 0; i < reps; i++)); do
			wr="$wr $(one lat_us_p50 -o write -s $size -n $n -k 1 -m $m)"
		done
		report "lat_write_read_${size}_mtu$m" $wr
	done
	alternate bw_write_65536_mtu$m bw_verified_65536_mtu$m MB/s -o wonly -s 65536 -n 2000 -k 16 -m $m
done
echo "verify counters: ok $(counter rrxe1 verify_ok) failed $(counter rrxe1 verify_failed) sent $(counter rrxe0 verify_sent) unnegotiated $(counter rrxe0 verify_unnegotiated)" | tee -a "$out"
devs_down
