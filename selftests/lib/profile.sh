#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job of `make profile` (RRXE_MODE=profile, rrxe): one perftest run between the
# two namespaces (RRXE_PROFILE = write_bw: ib_write_bw 64 KiB, 1 QP; write_bw_4qp: the
# same over 4 QPs; write_bw_verified: 1 QP with verified WRITEs; write_lat: ib_write_lat
# 8 B; hostile: RRXE_HOSTILE_PACKETS, default 20,000, of selftests/tools/rrxe-hostile
# at rrxe1's live QPs, as hostile.sh sends them, from one injector) while `perf record
# -a -g` samples every CPU (software clock: TCG has no PMU); writes the samples as
# `perf script` text to /tmp/out/perf.script, the tool's result line to
# /tmp/out/result.txt and both devices' non-zero counters to /tmp/out/counters.txt.
# RRXE_PROFILE_MTU=9000 sets both veths' MTU first (path MTU 4096). Never run by
# `make check`.
cd "$(dirname "$0")/.." || exit 1
. lib/ktap.sh
what=${RRXE_PROFILE:-write_bw}
dur=${RRXE_BENCH_SECONDS:-5}
modprobe ib_uverbs
hosts_up
devs_up
# RRXE_PROFILE_MTU=9000: both veths at 9000 bytes (path MTU 4096: per-byte costs).
if [ -n "${RRXE_PROFILE_MTU:-}" ]; then
	ip -n $NS0 link set va mtu "$RRXE_PROFILE_MTU"
	ip -n $NS1 link set vb mtu "$RRXE_PROFILE_MTU"
	wait_for "ibv_devinfo -d rrxe0 | grep -Eq 'active_mtu:[[:space:]]+4096'" 10
fi
case $what in
write_bw) tool=ib_write_bw args="-s 65536 -D $dur" ;;
write_bw_4qp) tool=ib_write_bw args="-s 65536 -D $dur -q 4" ;;
write_bw_verified)
	# The same WRITEs, verified (verify/enable on both devices; negotiated per QP).
	for d in rrxe0 rrxe1; do echo 1 >/sys/kernel/debug/rrxe-$d/verify/enable; done
	tool=ib_write_bw args="-s 65536 -D $dur"
	;;
write_lat) tool=ib_write_lat args="-s 8 -n 100000" ;;
hostile)
	park_targets
	t0=$(date +%s)
	perf record -a -g -F 997 -o /tmp/perf.data -- \
		ip netns exec $NS0 "$HOSTILE" -s $IP0 -d $IP1 -n "${RRXE_HOSTILE_PACKETS:-20000}" -r 1 \
		-q "${targets},1:0" >/tmp/out/result.txt 2>/tmp/out/perf-record.log
	echo "hostile: $(($(date +%s) - t0)) s" >>/tmp/out/result.txt
	cat /tmp/out/result.txt
	exec 7>&-
	perf script -i /tmp/perf.data >/tmp/out/perf.script 2>/tmp/out/perf-script.log
	echo "profile: $(wc -l </tmp/out/perf.script) lines of samples"
	devs_down
	exit 0
	;;
*) echo "profile: unknown RRXE_PROFILE $what"; exit 2 ;;
esac
ip netns exec $NS1 timeout 120 $tool -d rrxe1 -F -x 1 $args >/tmp/p.srv 2>&1 &
srv=$!
wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18515 '" 30
# Samples are taken while the client runs (its connection setup included), so the idle
# share is that of the run, not of a fixed window around it.
perf record -a -g -F 997 -o /tmp/perf.data -- \
	ip netns exec $NS0 timeout 120 $tool -d rrxe0 -F -x 1 $args $IP1 >/tmp/p.cli 2>/tmp/out/perf-record.log
wait $srv
grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+' /tmp/p.cli | tee /tmp/out/result.txt
# Both devices' counters after the run, non-zero ones (for what limited it).
for d in rrxe0 rrxe1; do echo "$d: $(counters_nonzero $d)"; done >/tmp/out/counters.txt
perf script -i /tmp/perf.data >/tmp/out/perf.script 2>/tmp/out/perf-script.log
echo "profile: $(wc -l </tmp/out/perf.script) lines of samples"
devs_down
