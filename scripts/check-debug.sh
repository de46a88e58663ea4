#!/usr/bin/env bash
# `make check-debug`: every VM selftest on the debug test kernel (.config.debug: KASAN,
# kmemleak, lockdep, UBSAN, debug objects for timers and work, failslab). Fails on any
# failed case and on any report: the guest's dmesg is scanned for KASAN, lockdep, UBSAN,
# WARN, BUG and Rust panics, and each script ends with a kmemleak scan whose leaks with
# rrxe in their allocation trace are collected (selftests/lib/ktap.sh).
# The module is built against the debug kernel in a copy of the tree
# ($RRXE_CACHE/debug-src), so the fast kernel's build stays as it is.
# Last line: "N passed, N failed, N skipped".
# `check-debug.sh profile` runs the bench's profile job there instead (scripts/profile.sh
# with RRXE_KERNEL=debug: where a debug kernel's time goes).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"
bash "$here/scripts/setup.sh" || exit 1
KB=$(RRXE_KERNEL=debug bash "$here/scripts/kernel.sh") || exit 1
src=$RRXE_CACHE/debug-src
mkdir -p "$src"
# Build products stay out of the copy, the bindings above all: generated against the fast
# kernel, whose structures are smaller (no lockdep or KASAN fields), they would pass
# Kbuild's timestamp check and give ib_core a device smaller than its struct ib_device.
rsync -a --delete --exclude .git --exclude target --exclude '*.o' --exclude '*.ko' \
	--exclude '.*.cmd' --exclude /rust/sys/bindings_generated.rs "$here"/ "$src"/ || exit 1
export RRXE_KDIR=$KB
bash "$src/scripts/module.sh" || exit 1
# KASAN and lockdep slow the guest down about threefold (the selftests scale their
# tools' timeouts by 4 there). hostile.sh sends its million packets here too: about
# 1.3 ms each from two injectors, some 25 minutes (RRXE_HOSTILE_PACKETS for fewer).
# Each script may run 2400 s: verified-write.sh, with its debug-kernel counts, took
# between 720 and 1200 s there (its 100-WRITE cases alone take minutes), and churn.sh
# 1638 s on a slow day (its 20 rdma link cycles alone 687 s). The whole run takes some
# nine hours: the VM's limit is twelve unless RRXE_VM_TIMEOUT says.
# no5lvl: with 5-level paging (QEMU's "max" CPU has LA57), an interrupt that arrives
# while identify_cpu() rebuilds the boot CPU's feature bits sees pgtable_l5_enabled()
# false for a moment; KASAN then takes the per-CPU data its entry path reads for wild
# accesses, and the boot opens with a KASAN report (about one boot in three).
# kasan_multi_shot: KASAN prints only its first report otherwise, and one report would
# leave the rest of the boot unwatched.
export RRXE_KERNEL_ARGS="no5lvl kasan_multi_shot ${RRXE_KERNEL_ARGS:-}"
RRXE_VM_TIMEOUT=${RRXE_VM_TIMEOUT:-43200} RRXE_TEST_TIMEOUT=${RRXE_TEST_TIMEOUT:-2400} \
	bash "$src/selftests/lib/bench.sh" "${1:-check}"
