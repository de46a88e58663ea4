#!/usr/bin/env bash
# Build (once) the test kernel: tinyconfig + the merged fragment, LLVM=-19, Rust enabled.
# The merged fragment is .config.fragment (the guest's base, the bench's providers and
# debugging aids) followed by selftests/config (every option the selftests need, the
# kselftest target's own config), so the test kernel cannot drift from what the tests ask
# for. The build directory is cached outside the repository under a key made of the
# kernel version, the merged fragment's hash and the toolchain versions; a changed
# fragment rebuilds.
# Prints the build directory on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"

# RRXE_KERNEL=debug: the debug test kernel (make check-debug), .config.debug on top,
# cached under its own key beside the fast one.
variant=${RRXE_KERNEL:-test}
case $variant in
test) extra=() ;;
debug) extra=("$here/.config.debug") ;;
*) echo "kernel: RRXE_KERNEL must be test or debug" >&2; exit 1 ;;
esac
# merged: the fragment the kernel is configured with (base, then the selftests' config,
# then the debug options for the debug kernel).
merged() { cat "$here/.config.fragment" "$here/selftests/config" ${extra[@]+"${extra[@]}"}; }
# An option in both would make one of them silently lose: refuse it.
dup=$(merged | sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=.*/\1/p' -e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set/\1/p' | sort | uniq -d)
if [ -n "$dup" ]; then
	echo "kernel: set in both .config.fragment and selftests/config:" $dup >&2
	exit 1
fi

kver=$(sed -n -e 's/^VERSION = //p' -e 's/^PATCHLEVEL = //p' -e 's/^SUBLEVEL = //p' "$KSRC/Makefile" | paste -sd.)
key=$( { merged; rustc --version; "$RRXE_BINDGEN" --version; clang$LLVM_SUFFIX --version | head -1; } | sha256sum | cut -c1-12)
KB=$RRXE_CACHE/kbuild-$kver-$key

# RRXE_KDIR pins an existing build (development only).
if [ -n "${RRXE_KDIR:-}" ]; then
	echo "$RRXE_KDIR"
	exit 0
fi
if [ -f "$KB/.rrxe-done" ]; then
	echo "$KB"
	exit 0
fi

log() { printf 'kernel: %s\n' "$*" >&2; }
mk() { make -C "$KSRC" O="$KB" LLVM="$LLVM_SUFFIX" BINDGEN="$RRXE_BINDGEN" "$@"; }

log "building the $variant Linux $kver in $KB (about 11 minutes on 2 cores)"
rm -rf "$KB"
mkdir -p "$KB"
{
	mk tinyconfig
	merged >"$KB/rrxe.config"
	"$KSRC/scripts/kconfig/merge_config.sh" -m -O "$KB" "$KB/.config" "$KB/rrxe.config"
	mk olddefconfig
} >"$KB/config.log" 2>&1 || { tail -30 "$KB/config.log" >&2; exit 1; }

# Kconfig silently drops options whose dependencies are missing; the ones we cannot live
# without (every option selftests/config turns on, and the bench's) are checked here so
# the failure is explicit.
for opt in $(sed -n 's/^CONFIG_\([A-Za-z0-9_]*\)=[ym]$/\1/p' "$here/selftests/config" ${extra[@]+"${extra[@]}"}) \
	RDMA_RXE RDMA_SIW NET_CLS_MATCHALL NET_9P_VIRTIO 9P_FS; do
	if ! grep -Eq "^CONFIG_${opt}=(y|m)" "$KB/.config"; then
		echo "kernel: CONFIG_$opt did not survive configuration (see $KB/config.log)." >&2
		[ "$opt" = RUST ] && echo "kernel: run 'make LLVM=$LLVM_SUFFIX rustavailable' in $KSRC to see why." >&2
		exit 1
	fi
done

if ! mk -j"$(nproc)" bzImage modules >"$KB/build.log" 2>&1; then
	tail -40 "$KB/build.log" >&2
	exit 1
fi
mk INSTALL_MOD_PATH="$KB/modroot" modules_install >>"$KB/build.log" 2>&1
touch "$KB/.rrxe-done"
log "done"
echo "$KB"
