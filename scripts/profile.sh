#!/usr/bin/env bash
# `make profile`: a flame graph of rrxe's data path. Boots the test kernel (rrxe), runs
# one perftest under `perf record -a -g` in the guest (selftests/lib/profile.sh;
# PROFILE=write_bw or write_lat) and folds the samples into an SVG with inferno
# (installed from crates.io on first use): $1, default /tmp/rrxe-flame-<what>.svg.
# Also prints the tool's result and the hottest functions. Not a test.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"
what=${PROFILE:-write_bw}
svg=${1:-/tmp/rrxe-flame-$what.svg}
INFERNO_VERSION=0.12.3
if ! command -v inferno-flamegraph >/dev/null; then
	cargo install --locked --root "$RRXE_CACHE/cargo" inferno --version "$INFERNO_VERSION" || exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
RRXE_PROFILE=$what RRXE_KEEP_OUT="$out" bash "$here/selftests/lib/bench.sh" profile >"$out/log" 2>&1 ||
	{ tail -20 "$out/log"; exit 1; }
[ -s "$out/perf.script" ] || { echo "profile: no samples"; tail -20 "$out/log"; exit 1; }
cat "$out/result.txt"
inferno-collapse-perf <"$out/perf.script" >"$out/folded" || exit 1
inferno-flamegraph --title "rrxe: $what" --width 1200 <"$out/folded" >"$svg" || exit 1
echo "profile: $svg"
# The functions with the most samples at the top of the stack.
awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); sub(/ +$/, "", f[k]); s[f[k]] += n; t += n }
	END { for (x in s) printf "%6.2f%% %s\n", 100 * s[x] / t, x }' "$out/folded" | sort -rn | head -25
