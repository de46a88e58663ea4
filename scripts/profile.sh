#!/usr/bin/env bash
# `make profile`: a flame graph of rrxe's data path. Boots the test kernel (rrxe), runs
# one perftest under `perf record -a -g` in the guest (selftests/lib/profile.sh;
# PROFILE=write_bw, write_lat, or hostile: the hostile peer's packets; RRXE_KERNEL=debug
# for the debug test kernel) and folds the samples into an SVG with inferno
# (installed from crates.io on first use): $1, default /tmp/rrxe-flame-<what>.svg.
# RRXE_PROFILE_MTU=9000 runs it at path MTU 4096. Also prints the tool's result, both
# devices' non-zero counters and the hottest functions. Not a test.
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
# RRXE_KERNEL=debug: on the debug test kernel, with the module built there (in its copy
# of the tree); otherwise the module here, against the test kernel.
if [ "${RRXE_KERNEL:-}" = debug ]; then
	run=("$here/scripts/check-debug.sh" profile)
else
	bash "$here/scripts/module.sh" >&2 || exit 1
	run=("$here/selftests/lib/bench.sh" profile)
fi
RRXE_PROFILE=$what RRXE_KEEP_OUT="$out" bash "${run[@]}" >"$out/log" 2>&1 ||
	{ tail -20 "$out/log"; exit 1; }
[ -s "$out/perf.script" ] || { echo "profile: no samples"; tail -20 "$out/log"; exit 1; }
cat "$out/result.txt"
[ -s "$out/counters.txt" ] && cat "$out/counters.txt"
inferno-collapse-perf <"$out/perf.script" >"$out/folded" || exit 1
inferno-flamegraph --title "rrxe: $what" --width 1200 <"$out/folded" >"$svg" || exit 1
echo "profile: $svg"
# The functions with the most samples at the top of the stack (sed, not head: sort
# must not die of SIGPIPE, which pipefail would make the script's status, when a debug
# kernel's profile names more functions than a pipe holds).
awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); sub(/ +$/, "", f[k]); s[f[k]] += n; t += n }
	END { for (x in s) printf "%6.2f%% %s\n", 100 * s[x] / t, x }' "$out/folded" | sort -rn | sed -n 1,25p
