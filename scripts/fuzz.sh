#!/usr/bin/env bash
# `make fuzz`: every fuzz target of the protocol core (rust/proto/fuzz) for $1 seconds
# each (default 60) under libFuzzer and AddressSanitizer. Installs what it needs on first
# use: the nightly toolchain (cargo-fuzz builds with -Z flags) and a pinned cargo-fuzz.
# Fails if a target crashes; the input is left in rust/proto/fuzz/artifacts/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"
secs=${1:-60}
CARGO_FUZZ_VERSION=0.13.2
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
if ! command -v cargo-fuzz >/dev/null || ! cargo-fuzz --version | grep -q " $CARGO_FUZZ_VERSION"; then
	cargo install --locked --root "$RRXE_CACHE/cargo" cargo-fuzz --version "$CARGO_FUZZ_VERSION"
fi
cd "$here/rust/proto"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in $(cargo +nightly fuzz list); do
	echo "== fuzz: $t for ${secs}s"
	if ! cargo +nightly fuzz run "$t" -- -max_total_time="$secs" >"$log" 2>&1; then
		tail -40 "$log"
		echo "fuzz: $t crashed (input in rust/proto/fuzz/artifacts/$t/)"
		exit 1
	fi
	grep -E '^Done' "$log"
done
echo "fuzz: no crash"
