#!/usr/bin/env bash
# Builds rrxe.ko out of tree against the cached test kernel (scripts/kernel.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"
KB=$(bash "$here/scripts/kernel.sh")
args=(-C "$KB" M="$here" LLVM="$LLVM_SUFFIX" BINDGEN="$RRXE_BINDGEN")
if [ "${1:-}" = clean ]; then
	make "${args[@]}" clean >/dev/null
	make -C "$KB" M="$here/selftests/ktest" LLVM="$LLVM_SUFFIX" clean >/dev/null
	rm -f "$here/rust/sys/bindings_generated.rs" "$here/selftests/tools/rrxe-verify"
	exit 0
fi
make "${args[@]}" -j"$(nproc)" modules
echo "module: $here/rrxe.ko" >&2
# The kernel-consumer test module (selftests/kverbs.sh), against the same kernel.
make -C "$KB" M="$here/selftests/ktest" LLVM="$LLVM_SUFFIX" -j"$(nproc)" modules >/dev/null
# The selftests' data-verifying traffic tool (runs in the guest from the shared root).
t=$here/selftests/tools
if [ ! -x "$t/rrxe-verify" ] || [ "$t/rrxe-verify.c" -nt "$t/rrxe-verify" ]; then
	gcc -O2 -Wall -Wextra -o "$t/rrxe-verify" "$t/rrxe-verify.c" -libverbs
fi
