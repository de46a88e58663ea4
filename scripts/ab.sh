#!/usr/bin/env bash
# `make ab A=<ref or .ko> [B=<ref or .ko>]`: an A/B of two rrxe builds in one boot, loaded
# in turn, under the instruction-counting guest clock (the host's speed does not move the
# figures). A and B are module files or git revisions (built here against the test
# kernel); B defaults to the working tree's rrxe.ko. Prints one table: each side's runs,
# medians and B/A. RRXE_AB_ROUNDS (3), RRXE_AB_LOSS (1 %), RRXE_BENCH_SECONDS (4),
# RRXE_AB_ONLY (a comma-separated subset of the tests, e.g. read_loss1; also
# write4q_loss0, over 4 QPs, and writelat_loss0, sendlat_loss0 and readlat_loss0, the
# 8-byte latency tools in us).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"
KB=$(bash "$here/scripts/kernel.sh") || exit 1
# (Under the repository: the guest sees the host's root, but has its own /tmp.)
tmp=$(mktemp -d "$here/.ab.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# module <side> <ref or .ko>: prints the path of that side's module.
module() {
	local side=$1 src=$2
	if [ -f "$src" ]; then
		cp "$src" "$tmp/$side.ko"
	else
		mkdir -p "$tmp/src-$side"
		git -C "$here" archive "$src" | tar -x -C "$tmp/src-$side" || return 1
		make -C "$KB" M="$tmp/src-$side" LLVM="$LLVM_SUFFIX" BINDGEN="$RRXE_BINDGEN" \
			-j"$(nproc)" modules >"$tmp/build-$side.log" 2>&1 ||
			{ tail -20 "$tmp/build-$side.log" >&2; return 1; }
		cp "$tmp/src-$side/rrxe.ko" "$tmp/$side.ko"
	fi
	echo "$tmp/$side.ko"
}
[ -n "${1:-}" ] || { echo "usage: make ab A=<git ref or .ko> [B=<git ref or .ko>]" >&2; exit 2; }
a=$(module a "$1") || exit 1
b=$(module b "${2:-$here/rrxe.ko}") || exit 1
if [ "${RRXE_BENCH_CLOCK:-icount}" = icount ]; then
	export RRXE_ACCEL="tcg,thread=single" RRXE_QEMU_EXTRA="-icount shift=0,sleep=off"
	export RRXE_VM_TIMEOUT=${RRXE_VM_TIMEOUT:-7200}
fi
echo "ab: A = $1, B = ${2:-working tree}" >&2
RRXE_AB="$a,$b" RRXE_KEEP_OUT="$tmp/out" bash "$here/selftests/lib/bench.sh" ab >"$tmp/vm.log" 2>&1
vmrc=$?
[ -f "$tmp/out/ab.txt" ] || { echo "ab: no results; the VM's log:" >&2; tail -30 "$tmp/vm.log" >&2; exit 1; }
python3 - "$tmp/out/ab.txt" <<'PY'
import sys, statistics
runs = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 3:
        runs.setdefault(p[1], {}).setdefault(p[0], []).append(p[2])
def med(v):
    n = [float(x) for x in v if x != "FAIL"]
    return statistics.median(n) if n and len(n) == len(v) else None
print("| test (MB/s; the lat rows: us) | A runs | B runs | A median | B median | B/A |")
print("|---|---|---|---|---|---|")
for t, s in runs.items():
    a, b = med(s.get("a", [])), med(s.get("b", []))
    f = lambda v: "%.2f" % v if v is not None else "FAIL"
    r = "%.3f" % (b / a) if a and b else "-"
    print("| %s | %s | %s | %s | %s | %s |" % (t, " ".join(s.get("a", [])), " ".join(s.get("b", [])), f(a), f(b), r))
PY
exit $vmrc
