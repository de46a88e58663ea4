#!/usr/bin/env bash
# Builds rrxe.ko out of tree against the cached test kernel (scripts/kernel.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"
KB=$(bash "$here/scripts/kernel.sh")
args=(-C "$KB" M="$here" LLVM="$LLVM_SUFFIX" BINDGEN="$RRXE_BINDGEN")
if [ "${1:-}" = clean ]; then
	make "${args[@]}" clean >/dev/null
	rm -f "$here/rust/sys/bindings_generated.rs"
	exit 0
fi
make "${args[@]}" -j"$(nproc)" modules
echo "module: $here/rrxe.ko" >&2
