#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host side of the rrxe test bench: boots the cached test kernel under QEMU with the host's
# root file system (read-only, 9p) and runs a job in the guest (selftests/lib/init.sh).
#   bench.sh check   run every selftests/*.sh as an installed kselftest target
#                    (lib/ksft-install.sh, then the kernel's run_kselftest.sh in the
#                    guest; RRXE_RUNNER=make: `make -C selftests run_tests` instead);
#                    last line "N passed, N failed, N skipped"
#   bench.sh demo    create two devices and show them (make run)
#   bench.sh capture record rdma_rxe packets (RRXE_PROVIDER=rxe RRXE_KEEP_OUT=dir)
#   bench.sh ab      two rrxe modules in one boot, loaded in turn (scripts/ab.sh)
#   bench.sh blktests  blktests' nvme group over rdma (scripts/blktests.sh)
#   bench.sh interop two VMs on a virtual link, rrxe in one and rdma_rxe in the other;
#                    last line "N passed, N failed, N skipped" (selftests/lib/interop.sh)
# Fails loudly if a test fails, the guest WARNs/oopses (dmesg scan) or the VM times out.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/scripts/env.sh"
mode=${1:-check}
KB=$(bash "$here/scripts/kernel.sh") || exit 1
[ -f "$here/rrxe.ko" ] || [ "$mode" = capture ] || [ "${RRXE_PROVIDER:-rrxe}" != rrxe ] || { echo "bench: $here/rrxe.ko missing (make module)" >&2; exit 1; }

vm_timeout=${RRXE_VM_TIMEOUT:-3600}
cpus=${RRXE_VM_CPUS:-2}
mem=${RRXE_VM_MEM:-2G}
out=$(mktemp -d /tmp/rrxe-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT

qemu_run() { # qemu_run <accel> <timeout> <mode> <outdir> [extra env...]
	local accel=$1 t=$2 m=$3 o=$4
	shift 4
	# TCG emulates REP MOVSB one byte per step, about six times slower than the unrolled
	# copy loop; a CPU that advertises ERMS/FSRM makes the kernel's (and glibc's) memcpy
	# and user copies use it, so per-byte costs would dwarf everything else.
	local cpu=max,-erms,-fsrm
	[ "$accel" = kvm ] && cpu=host
	# The root is the host's, read-only, and nothing changes it while a guest runs:
	# cache=loose keeps what the guest has read (binaries, libraries, directories) in its
	# page and dentry caches. Without it every exec reads its binary and libraries over
	# 9p again: a program start cost 0.3 s instead of 0.08 s, and the tests start tens
	# of thousands.
	# tsc=reliable: the guest calibrates its TSC against the emulated HPET, under TCG a
	# few tenths of a percent off, and in some boots the clocksource watchdog then
	# marked the TSC unstable and switched to the HPET, where every clock read (each
	# ktime_get, each timer, each gettimeofday) is an emulated device access: 2.6-3.1 us
	# against 0.15-0.2 us from the TSC. A boot's figures then depended on which it got.
	timeout --foreground -k 10 "$t" qemu-system-x86_64 \
		-machine q35 -accel "$accel" -cpu "$cpu" -smp "$cpus" -m "$mem" \
		-nographic -no-reboot -nic none \
		-kernel "$KB/arch/x86/boot/bzImage" \
		-append "console=ttyS0 loglevel=4 panic=-1 tsc=reliable root=rootfs rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro init=$here/selftests/lib/init.sh ${RRXE_KERNEL_ARGS:-} RRXE_MODE=$m RRXE_REPO=$here RRXE_KB=$KB $*" \
		-fsdev local,id=rootfs,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=rootfs,mount_tag=rootfs \
		-fsdev local,id=out,path="$o",security_model=none,multidevs=remap \
		-device virtio-9p-pci,fsdev=out,mount_tag=rrxeout ${qemu_extra[@]+"${qemu_extra[@]}"}
}
# RRXE_KERNEL_ARGS: more kernel parameters (check-debug sets some). RRXE_QEMU_EXTRA: more
# QEMU options, e.g. "-icount shift=0,sleep=off" with RRXE_ACCEL=tcg,thread=single (a
# guest clock that counts instructions: timings that do not depend on the host's speed,
# for A/B comparisons).
read -ra qemu_extra <<<"${RRXE_QEMU_EXTRA:-}"

# Problems the guest kernel reported in a dmesg dump (WARN, BUG, oops, ...). While a
# selftest injects allocation failures (it logs "rrxe-selftest: fault injection on" and
# "... off"), the kernel's own report of a failed allocation (warn_alloc: the message,
# then a stack trace up to </TASK>) is what the injection asked for, not a problem.
dmesg_problems() {
	[ -f "$1" ] && awk '
		/rrxe-selftest: fault injection on/ { inj = 1 }
		/rrxe-selftest: fault injection off/ { inj = 0 }
		inj && /vmalloc error:|page allocation failure:/ { skip = 1 }
		skip { if (/<\/TASK>/) skip = 0; next }
		/WARNING:|BUG:|Oops|Call Trace|Kernel panic|UBSAN|ODEBUG|panicked at|refcount_t:|general protection/
	' "$1"
}

# KVM on this kind of machine is a nested hypervisor that cannot boot a stock kernel; use
# it only if a short boot probe succeeds (result cached per kernel build).
pick_accel() {
	local cache="$KB/.rrxe-accel"
	if [ -n "${RRXE_ACCEL:-}" ]; then echo "$RRXE_ACCEL"; return; fi
	if [ -f "$cache" ]; then cat "$cache"; return; fi
	local accel=tcg
	if [ -w /dev/kvm ]; then
		local p
		p=$(mktemp -d)
		qemu_run kvm 25 probe "$p" >"$p/console.log" 2>&1 </dev/null
		[ -f "$p/probe" ] && accel=kvm
		rm -rf "$p"
	fi
	echo "bench: accelerator: $accel (KVM boot probe $([ $accel = kvm ] && echo passed || echo failed or unavailable))" >&2
	echo "$accel" >"$cache"
	echo "$accel"
}

accel=$(pick_accel)

if [ "$mode" = interop ]; then
	# Two single-vCPU guests joined by a QEMU socket link (one listens, one connects).
	cpus=1
	port=$((20000 + RANDOM % 20000))
	mkdir -p "$out/a" "$out/b"
	echo "bench: booting two VMs ($accel, 1 vCPU each): rrxe <-> rdma_rxe over 127.0.0.1:$port" >&2
	start=$(date +%s)
	qemu_extra=(-netdev "socket,id=n1,listen=127.0.0.1:$port" -device virtio-net-pci,netdev=n1,mac=52:54:00:00:00:01)
	qemu_run "$accel" "$vm_timeout" interop "$out/a" RRXE_PROVIDER=rrxe RRXE_ROLE=a </dev/null >"$out/a.console" 2>&1 &
	pa=$!
	sleep 2
	qemu_extra=(-netdev "socket,id=n1,connect=127.0.0.1:$port" -device virtio-net-pci,netdev=n1,mac=52:54:00:00:00:02)
	qemu_run "$accel" "$vm_timeout" interop "$out/b" RRXE_PROVIDER=rxe RRXE_ROLE=b </dev/null >"$out/b.console" 2>&1 &
	pb=$!
	wait $pa
	wait $pb
	echo "bench: VMs ran $(($(date +%s) - start))s" >&2
	pass=0 fail=0
	for v in a b; do
		if [ -f "$out/$v/results.tap" ]; then
			sed "s/^/[$v] /" "$out/$v/results.tap"
			pass=$((pass + $(grep -c '^ok ' "$out/$v/results.tap")))
			fail=$((fail + $(grep -c '^not ok ' "$out/$v/results.tap")))
		else
			echo "bench: FAIL: VM $v produced no results; its console:" >&2
			tail -20 "$out/$v.console" >&2
			fail=$((fail + 1))
		fi
		bad=$(dmesg_problems "$out/$v/dmesg.txt")
		if [ -n "$bad" ]; then
			echo "bench: FAIL: VM $v's kernel reported problems:" >&2
			echo "$bad" | head -20 >&2
			fail=$((fail + 1))
		fi
	done
	[ -n "${RRXE_KEEP_OUT:-}" ] && mkdir -p "$RRXE_KEEP_OUT" && cp -r "$out"/. "$RRXE_KEEP_OUT"/
	echo "$pass passed, $fail failed, 0 skipped"
	[ "$fail" = 0 ]
	exit $?
fi

if [ "$mode" = check ] && [ "${RRXE_RUNNER:-}" != make ]; then
	# The guest runs the installed target from the results share (/tmp/out/kselftest).
	echo "bench: installing the selftests with kselftest_install.sh" >&2
	if ! KDIR=$KB LLVM=$LLVM_SUFFIX bash "$here/selftests/lib/ksft-install.sh" "$out/kselftest" \
		>"$out/ksft-install.log" 2>&1; then
		tail -20 "$out/ksft-install.log" >&2
		echo "bench: FAIL: kselftest_install.sh failed" >&2
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
fi

echo "bench: booting $KB ($accel, $cpus vCPUs, $mem) for '$mode'" >&2
start=$(date +%s)
qemu_run "$accel" "$vm_timeout" "$mode" "$out" "RRXE_PROVIDER=${RRXE_PROVIDER:-rrxe}" ${RRXE_TESTS:+"RRXE_TESTS=$RRXE_TESTS"} ${RRXE_RUNNER:+"RRXE_RUNNER=$RRXE_RUNNER"} ${RRXE_BENCH_SECONDS:+"RRXE_BENCH_SECONDS=$RRXE_BENCH_SECONDS"} ${RRXE_TEST_TIMEOUT:+"RRXE_TEST_TIMEOUT=$RRXE_TEST_TIMEOUT"} ${RRXE_AB:+"RRXE_AB=$RRXE_AB"} ${RRXE_AB_ROUNDS:+"RRXE_AB_ROUNDS=$RRXE_AB_ROUNDS"} ${RRXE_AB_LOSS:+"RRXE_AB_LOSS=$RRXE_AB_LOSS"} ${RRXE_AB_ONLY:+"RRXE_AB_ONLY=$RRXE_AB_ONLY"} ${RRXE_CC_STEP:+"RRXE_CC_STEP=$RRXE_CC_STEP"} ${RRXE_CC_RUNS:+"RRXE_CC_RUNS=$RRXE_CC_RUNS"} ${RRXE_CC_KNOBS:+"RRXE_CC_KNOBS=$RRXE_CC_KNOBS"} ${RRXE_CC_BURST:+"RRXE_CC_BURST=$RRXE_CC_BURST"} ${RRXE_CC_RED_BURST:+"RRXE_CC_RED_BURST=$RRXE_CC_RED_BURST"} ${RRXE_CC_RED_MIN:+"RRXE_CC_RED_MIN=$RRXE_CC_RED_MIN"} ${RRXE_CC_RED_MAX:+"RRXE_CC_RED_MAX=$RRXE_CC_RED_MAX"} ${RRXE_PROFILE:+"RRXE_PROFILE=$RRXE_PROFILE"} ${RRXE_PROFILE_MTU:+"RRXE_PROFILE_MTU=$RRXE_PROFILE_MTU"} ${RRXE_BENCH_REPS:+"RRXE_BENCH_REPS=$RRXE_BENCH_REPS"} ${RRXE_BENCH_LOSS:+"RRXE_BENCH_LOSS=$RRXE_BENCH_LOSS"} ${RRXE_RDS_IMPAIRED:+"RRXE_RDS_IMPAIRED=$RRXE_RDS_IMPAIRED"} ${RRXE_HOSTILE_PACKETS:+"RRXE_HOSTILE_PACKETS=$RRXE_HOSTILE_PACKETS"} ${RRXE_BLKTESTS:+"RRXE_BLKTESTS=$RRXE_BLKTESTS"} ${RRXE_BLK_TESTS:+"RRXE_BLK_TESTS=$RRXE_BLK_TESTS"} </dev/null 2>&1 | tee "$out/console.log" |
	sed -u -e 's/\x1b\[[0-9;?]*[a-zA-Z]//g' -e 's/\x1bc//g' -e 's/\r$//' | grep --line-buffered -v -E '^\s*$'
qrc=${PIPESTATUS[0]}
took=$(($(date +%s) - start))
echo "bench: VM ran ${took}s" >&2

problems=0
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "bench: FAIL: the VM timed out after ${vm_timeout}s" >&2
	problems=1
fi
if [ ! -f "$out/exit-code" ]; then
	echo "bench: FAIL: the guest did not finish (no exit code; see the console above)" >&2
	problems=1
fi
if [ -f "$out/dmesg.txt" ]; then
	bad=$(dmesg_problems "$out/dmesg.txt")
	if [ -n "$bad" ]; then
		echo "bench: FAIL: the guest kernel reported problems:" >&2
		echo "$bad" | head -40 >&2
		problems=1
	fi
fi
if [ -s "$out/kmemleak.txt" ]; then
	echo "bench: FAIL: kmemleak found leaks allocated by rrxe:" >&2
	head -40 "$out/kmemleak.txt" >&2
	problems=1
fi
# RRXE_KEEP_OUT=dir keeps everything the guest wrote (results, dmesg, captures).
[ -n "${RRXE_KEEP_OUT:-}" ] && mkdir -p "$RRXE_KEEP_OUT" && cp -r "$out"/. "$RRXE_KEEP_OUT"/

if [ "$mode" = check ]; then
	[ -f "$out/results.tap" ] && cp "$out/results.tap" "${RRXE_RESULTS:-/tmp/rrxe-results.tap}"
	# kselftest's runner prefixes each script's own KTAP with "# ": its cases are the
	# "# ok N" and "# not ok N" lines, then comes the script's line "ok N selftests: ...".
	# That line may follow a message the dying script left without a newline (bash's
	# "Aborting..." when the runner's timeout kills it), so it is matched anywhere.
	counts=$(awk '
		/^# (not )?ok [0-9]+ / { n++; if ($0 ~ /# SKIP/) s++; else if ($2 == "not") { f++; sf++ } else p++; next }
		/ok [0-9]+ selftests:/ {
			if ($0 ~ /not ok [0-9]+ selftests:/) { if (sf == 0) f++ }	# failed without a failing case (timeout, crash)
			else if (n == 0 && $0 ~ /# SKIP/) s++;	# skipped as a whole
			sf = 0; n = 0; next }
		END { printf "%d %d %d\n", p, f, s }' "$out/results.tap" 2>/dev/null || echo "0 0 0")
	read -r pass fail skip <<<"$counts"
	[ "$problems" = 0 ] || fail=$((fail + 1))
	[ -f "$out/results.tap" ] || fail=$((fail + 1))
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" = 0 ]
	exit $?
fi
rc=$(cat "$out/exit-code" 2>/dev/null || echo 1)
[ "$problems" = 0 ] && [ "$rc" = 0 ]
