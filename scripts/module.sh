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
	rm -f "$here/rust/sys/bindings_generated.rs" "$here/selftests/tools/rrxe-verify" \
		"$here/selftests/tools/rrxe-hostile"
	(cd "$here/tools/rrxe-xfer" && cargo clean)
	exit 0
fi
if [ "${1:-}" = lint ]; then
	# The kernel's clippy lints (CLIPPY=1: clippy-driver with the kernel's lint set);
	# any warning fails. The objects it leaves are rebuilt by the plain build below.
	command -v clippy-driver >/dev/null || rustup component add clippy
	log=$(mktemp)
	touch "$here/rust/rrxe_main.rs"
	rc=0
	make "${args[@]}" CLIPPY=1 -j"$(nproc)" modules >"$log" 2>&1 || rc=$?
	n=$(grep -c -E '^(warning|error)' "$log" || true)
	grep -E -A6 '^(warning|error)' "$log" | head -60 || true
	rm -f "$log"
	echo "lint: clippy: $n warnings or errors (make exit $rc)"
	[ "$rc" = 0 ] && [ "$n" = 0 ]
	exit $?
fi
make "${args[@]}" -j"$(nproc)" modules
echo "module: $here/rrxe.ko" >&2
# The kernel-consumer test module (selftests/kverbs.sh), against the same kernel.
make -C "$KB" M="$here/selftests/ktest" LLVM="$LLVM_SUFFIX" -j"$(nproc)" modules >/dev/null
# The selftests' data-verifying traffic tool (runs in the guest from the shared root).
t=$here/selftests/tools
if [ ! -x "$t/rrxe-verify" ] || [ "$t/rrxe-verify.c" -nt "$t/rrxe-verify" ]; then
	gcc -O2 -Wall -Wextra -o "$t/rrxe-verify" "$t/rrxe-verify.c" -libverbs -pthread
fi
# The transfer tool (selftests/xfer-*.sh, make bench), a cargo crate of its own.
(cd "$here/tools/rrxe-xfer" && cargo build --release --locked -q)
# The hostile peer (selftests/hostile.sh).
if [ ! -x "$t/rrxe-hostile" ] || [ "$t/rrxe-hostile.c" -nt "$t/rrxe-hostile" ]; then
	gcc -O2 -Wall -Wextra -o "$t/rrxe-hostile" "$t/rrxe-hostile.c"
fi
