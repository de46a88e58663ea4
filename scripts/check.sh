#!/usr/bin/env bash
# `make check`: host tests of the protocol core, then the module, every VM selftest and
# the two-VM interoperability run against rdma_rxe.
# Prints each part's results, then one combined line "N passed, N failed, N skipped".
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"
cd "$here"

hp=0 hf=0 hs=0
echo "== host tests (cargo test, rust/proto)"
host_log=$(mktemp)
(cd rust/proto && cargo test --release 2>&1) | tee "$host_log"
host_rc=${PIPESTATUS[0]}
read -r hp hf hs < <(awk '/^test result:/ { for (i = 1; i <= NF; i++) {
		if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
	END { printf "%d %d %d\n", p, f, s }' "$host_log")
rm -f "$host_log"
[ "$host_rc" = 0 ] || [ "$hf" -gt 0 ] || hf=1

echo "== module"
vp=0 vf=0 vs=0
if bash scripts/module.sh; then
	echo "== VM selftests"
	vm_log=$(mktemp)
	bash selftests/lib/bench.sh check | tee "$vm_log"
	read -r vp vf vs < <(tail -1 "$vm_log" | awk '/passed,/ { gsub(",", ""); print $1, $3, $5 }')
	rm -f "$vm_log"
	[ -n "$vp" ] || { vp=0 vf=1 vs=0; }
	echo "== interoperability: rrxe and rdma_rxe in two VMs"
	io_log=$(mktemp)
	bash selftests/lib/bench.sh interop | tee "$io_log"
	read -r io_p io_f io_s < <(tail -1 "$io_log" | awk '/passed,/ { gsub(",", ""); print $1, $3, $5 }')
	rm -f "$io_log"
	[ -n "${io_p:-}" ] || { io_p=0 io_f=1 io_s=0; }
	vp=$((vp + io_p)) vf=$((vf + io_f)) vs=$((vs + io_s))
else
	echo "check: module build failed" >&2
	vf=1
fi
echo "== summary: host $hp passed, $hf failed, $hs skipped; VM $vp passed, $vf failed, $vs skipped"
echo "$((hp + vp)) passed, $((hf + vf)) failed, $((hs + vs)) skipped"
[ $((hf + vf)) -eq 0 ]
