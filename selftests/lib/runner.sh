#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM: sets up the two hosts, loads rrxe, runs every selftests/*.sh with a
# timeout and prints one KTAP document (each script's output as an indented subtest).
cd "$(dirname "$0")/.." || exit 1
. lib/ktap.sh
timeout_s=${RRXE_TEST_TIMEOUT:-240}
# RRXE_TESTS selects scripts (globs, comma-separated), e.g. RRXE_TESTS=rc-*.sh,atomics.sh
tests=(${RRXE_TESTS//,/ })
[ ${#tests[@]} -gt 0 ] || tests=(*.sh)
echo "KTAP version 1"
echo "1..${#tests[@]}"
hosts_up
modprobe rrxe || echo "# modprobe rrxe failed"
n=0
fail=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	echo "# selftests: rrxe: $t" | tee /dev/console
	start=$(date +%s)
	timeout -k 10 "$timeout_s" bash "$t" 2>&1 | tee /dev/console | sed 's/^/  /'
	rc=${PIPESTATUS[0]}
	took=$(($(date +%s) - start))
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		line="not ok $n selftests: rrxe: $t # TIMEOUT ${timeout_s}s"
		fail=1
	elif [ "$rc" = 4 ]; then
		line="ok $n selftests: rrxe: $t # SKIP"
	elif [ "$rc" = 0 ]; then
		line="ok $n selftests: rrxe: $t"
	else
		line="not ok $n selftests: rrxe: $t # exit=$rc"
		fail=1
	fi
	echo "$line # ${took}s" | tee /dev/console
	# Every script starts from the same state: hosts up, module loaded, no devices.
	devs_down >/dev/null 2>&1
	hosts_up >/dev/null 2>&1
	modprobe rrxe >/dev/null 2>&1
done
exit $fail
