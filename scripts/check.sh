#!/usr/bin/env bash
# `make check`: host tests of the protocol core, the reStructuredText check of
# Documentation/, then the module, every VM selftest and the two-VM interoperability
# run against rdma_rxe.
# Prints each part's results, then one combined line "N passed, N failed, N skipped".
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"
cd "$here"

hp=0 hf=0 hs=0
# What failed, from every part, for the summary (CI shows the end of the output).
fails=$(mktemp)
trap 'rm -f "$fails"' EXIT
# failed_lines <log>: a log's failing tests (cargo's and KTAP's), skips left out.
failed_lines() {
	grep -aE '^test .* FAILED$|not ok ' "$1" | grep -v '# SKIP' >>"$fails"
}
echo "== host tests (cargo test, rust/proto)"
host_log=$(mktemp)
(cd rust/proto && cargo test --release 2>&1) | tee "$host_log"
host_rc=${PIPESTATUS[0]}
failed_lines "$host_log"
read -r hp hf hs < <(awk '/^test result:/ { for (i = 1; i <= NF; i++) {
		if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
	END { printf "%d %d %d\n", p, f, s }' "$host_log")
rm -f "$host_log"
[ "$host_rc" = 0 ] || [ "$hf" -gt 0 ] || hf=1

echo "== host tests (cargo test, tools/rrxe-xfer)"
xfer_log=$(mktemp)
(cd tools/rrxe-xfer && cargo test --release --locked 2>&1) | tee "$xfer_log"
xfer_rc=${PIPESTATUS[0]}
failed_lines "$xfer_log"
read -r xp xf < <(awk '/^test result:/ { for (i = 1; i <= NF; i++) {
		if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
	END { printf "%d %d\n", p, f }' "$xfer_log")
rm -f "$xfer_log"
[ "$xfer_rc" = 0 ] || [ "$xf" -gt 0 ] || xf=1
hp=$((hp + xp)) hf=$((hf + xf))

echo "== documentation (reStructuredText, docutils)"
# (Debian's python3: setup.sh installs python3-docutils for it.)
doc_log=$(mktemp)
/usr/bin/python3 scripts/rstcheck.py Documentation/rrxe/*.rst | tee "$doc_log"
failed_lines "$doc_log"
read -r dp df < <(tail -1 "$doc_log" | awk '/passed,/ { gsub(",", ""); print $1, $3 }')
rm -f "$doc_log"
[ -n "${dp:-}" ] || { dp=0 df=1; }
hp=$((hp + dp)) hf=$((hf + df))

echo "== lint (kernel clippy lints on the module)"
if bash scripts/module.sh lint; then hp=$((hp + 1)); else hf=$((hf + 1)); fi

echo "== lint (clippy on the protocol core's host crate and its tests, the crate's own lints)"
if (cd rust/proto && cargo clippy --release --all-targets -- -D warnings 2>&1); then
	hp=$((hp + 1))
else
	hf=$((hf + 1))
fi

echo "== fuzz (every parser's fuzz target for ${RRXE_CI_FUZZ_SECONDS:=10} s, from the corpus in the tree)"
fz_log=$(mktemp)
bash scripts/fuzz.sh "$RRXE_CI_FUZZ_SECONDS" 2>&1 | tee "$fz_log"
read -r fp ff < <(tail -1 "$fz_log" | awk '/passed,/ { gsub(",", ""); print $1, $3 }')
rm -f "$fz_log"
[ -n "${fp:-}" ] || { fp=0 ff=1; }
hp=$((hp + fp)) hf=$((hf + ff))
echo "== lint (rustfmt and clippy on tools/rrxe-xfer)"
if (cd tools/rrxe-xfer && cargo fmt --check && cargo clippy --release --locked --all-targets -- -D warnings 2>&1); then
	hp=$((hp + 1))
else
	hf=$((hf + 1))
fi

echo "== module"
vp=0 vf=0 vs=0
# vm_part <title> <bench mode>: runs one bench job and adds its last-line counts.
vm_part() {
	echo "== $1"
	local log p f k
	log=$(mktemp)
	bash selftests/lib/bench.sh "$2" | tee "$log"
	failed_lines "$log"
	read -r p f k < <(tail -1 "$log" | awk '/passed,/ { gsub(",", ""); print $1, $3, $5 }')
	rm -f "$log"
	[ -n "${p:-}" ] || { p=0 f=1 k=0; }
	vp=$((vp + p)) vf=$((vf + f)) vs=$((vs + k))
}
if bash scripts/module.sh; then
	vm_part "VM selftests" check
	vm_part "interoperability: rrxe and rdma_rxe in two VMs" interop
else
	echo "check: module build failed" >&2
	vf=1
fi
if [ -s "$fails" ]; then
	echo "== failed ($(wc -l <"$fails") lines; the first 12):"
	head -12 "$fails"
fi
echo "== summary: host $hp passed, $hf failed, $hs skipped; VM $vp passed, $vf failed, $vs skipped"
echo "$((hp + vp)) passed, $((hf + vf)) failed, $((hs + vs)) skipped"
[ $((hf + vf)) -eq 0 ]
