#!/usr/bin/env bash
# One-command, idempotent set-up of everything rrxe needs on a Debian bookworm host:
# Debian packages (bookworm only, plus trixie-backports pinned low for the kernel source),
# rust-src, bindgen-cli at a fixed version and the Linux 7.3 source tree.
# Every make target that needs a tool depends on this script; a second run is a no-op.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"

stamp="$RRXE_CACHE/setup.stamp"
# Bump when the list below changes, so a warm cache re-runs the set-up.
setup_rev=7
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$setup_rev" ] && [ -z "${RRXE_FORCE_SETUP:-}" ]; then
	exit 0
fi
mkdir -p "$RRXE_CACHE"

log() { printf 'setup: %s\n' "$*" >&2; }

export DEBIAN_FRONTEND=noninteractive

# --- apt sources: trixie-backports for linux-source-7.3, pinned low so that nothing from it
# is ever installed implicitly (an unpinned newer suite once upgraded libc and broke apt).
if [ ! -f /etc/apt/sources.list.d/rrxe-backports.sources ]; then
	log "adding bookworm-backports and trixie-backports (pinned to priority 100)"
	cat >/etc/apt/preferences.d/rrxe-pin-low <<'PIN'
# rrxe: never take anything from a suite newer than bookworm unless named explicitly.
Package: *
Pin: release n=trixie-backports
Pin-Priority: 100

Package: *
Pin: release n=trixie
Pin-Priority: 100

Package: *
Pin: release n=bookworm-backports
Pin-Priority: 100
PIN
	rm -f /etc/apt/sources.list.d/rrxe-trixie-backports.sources
	cat >/etc/apt/sources.list.d/rrxe-backports.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	apt-get update -q
elif [ ! -d /var/lib/apt/lists ] || [ -z "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -m1 Packages)" ]; then
	apt-get update -q
fi

pkgs=(clang-19 lld-19 llvm-19 libclang-19-dev bc bison flex libelf-dev libssl-dev cpio kmod
	rdma-core ibverbs-providers ibverbs-utils perftest rdmacm-utils gcc libibverbs-dev
	iproute2 iperf3 make python3 python3-docutils python3-yaml busybox-static ethtool tcpdump xz-utils
	rsync nvme-cli fio gawk strace python3-pyverbs iputils-ping cmake socat time)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	apt-get install -y -q --no-install-recommends "${missing[@]}" || {
		apt-get update -q
		apt-get install -y -q --no-install-recommends "${missing[@]}"
	}
fi
# QEMU: the image's qemu-utils comes from bookworm-backports and Breaks bookworm's older
# qemu-system-common, so take qemu-system-x86 from bookworm-backports too (built for bookworm).
if ! command -v qemu-system-x86_64 >/dev/null; then
	log "installing qemu-system-x86 from bookworm-backports"
	apt-get install -y -q --no-install-recommends -t bookworm-backports qemu-system-x86
fi
# The host must stay on bookworm's libc.
if ! dpkg-query -W -f='${Version}' libc6 | grep -q '^2\.36'; then
	echo "setup: libc6 is no longer bookworm's 2.36: refusing to go on" >&2
	exit 1
fi

# --- Rust: the machine's rustup toolchain, plus rust-src and a pinned bindgen-cli.
if ! rustc --print sysroot >/dev/null 2>&1; then
	echo "setup: no rustc on PATH (rustup toolchain expected)" >&2
	exit 1
fi
if [ ! -f "$(rustc --print sysroot)/lib/rustlib/src/rust/library/core/src/lib.rs" ]; then
	log "adding rust-src"
	rustup component add rust-src
fi
if ! "$RRXE_BINDGEN" --version 2>/dev/null | grep -q "bindgen $BINDGEN_VERSION"; then
	log "installing bindgen-cli $BINDGEN_VERSION"
	cargo install --locked --root "$RRXE_CACHE/cargo" bindgen-cli --version "=$BINDGEN_VERSION"
fi

# --- Kernel source: linux-source-7.3 from trixie-backports, unpacked without installing.
if [ ! -f "$KSRC/Makefile" ]; then
	log "fetching linux-source-$KMAJ"
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get download -q "linux-source-$KMAJ")
	deb=$(ls "$tmp"/linux-source-"$KMAJ"_*.deb)
	mkdir -p "$tmp/x"
	dpkg-deb -x "$deb" "$tmp/x"
	rm -rf "$KSRC.tmp" && mkdir -p "$KSRC.tmp"
	tar -xJf "$tmp/x/usr/src/linux-source-$KMAJ.tar.xz" -C "$KSRC.tmp" --strip-components=1
	mv "$KSRC.tmp" "$KSRC"
	rm -rf "$tmp"
fi

echo "$setup_rev" >"$stamp"
log "done"
