#!/usr/bin/env bash
# `make fuzz`: every fuzz target of the protocol core (rust/proto/fuzz) for $1 seconds
# each (default 60) under libFuzzer and AddressSanitizer, starting from the corpus kept
# in the tree (rust/proto/fuzz/seeds/<target>/; the scratch corpus it grows is
# fuzz/corpus/<target>/, not kept). `make check` runs it for a few seconds a target.
# FUZZ_UPDATE_SEEDS=1 merges what the run found into the kept corpus, minimized.
# Installs what it needs on first use: the nightly toolchain (cargo-fuzz builds with -Z
# flags) and a pinned cargo-fuzz. Fails if a target crashes: the input is left in
# rust/proto/fuzz/artifacts/<target>/; copied into fuzz/seeds/<target>/ it becomes a
# regression test of `cargo test` (tests/fuzz_corpus.rs). Last line: "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"
secs=${1:-60}
CARGO_FUZZ_VERSION=0.13.2
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal || exit 1
if ! command -v cargo-fuzz >/dev/null || ! cargo-fuzz --version | grep -q " $CARGO_FUZZ_VERSION"; then
	cargo install --locked --root "$RRXE_CACHE/cargo" cargo-fuzz --version "$CARGO_FUZZ_VERSION" || exit 1
fi
cd "$here/rust/proto"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
pass=0 fail=0
for t in $(cargo +nightly fuzz list); do
	echo "== fuzz: $t for ${secs}s"
	mkdir -p "fuzz/corpus/$t" "fuzz/seeds/$t"
	if cargo +nightly fuzz run "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
		-max_total_time="$secs" >"$log" 2>&1; then
		grep -E '^Done' "$log"
		pass=$((pass + 1))
	else
		tail -40 "$log"
		echo "fuzz: $t crashed (input in rust/proto/fuzz/artifacts/$t/)"
		fail=$((fail + 1))
		continue
	fi
	if [ -n "${FUZZ_UPDATE_SEEDS:-}" ]; then
		cp -n "fuzz/corpus/$t"/* "fuzz/seeds/$t"/ 2>/dev/null
		cargo +nightly fuzz cmin "$t" "fuzz/seeds/$t" >"$log" 2>&1 ||
			{ tail -20 "$log"; fail=$((fail + 1)); }
		echo "fuzz: $t: $(ls "fuzz/seeds/$t" | wc -l) inputs kept"
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
