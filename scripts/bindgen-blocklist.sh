#!/usr/bin/env bash
# Prints a bindgen --blocklist-file regex that matches every header the kernel crate's own
# bindings (kernel::bindings) were generated from, so that rrxe's build-time bindings only
# contain what the kernel crate lacks and every shared type stays the kernel's own type.
# Usage: bindgen-blocklist.sh <kernel build dir> <kernel source dir>
set -euo pipefail
kb=$1
ksrc=$2
cmd=$kb/rust/bindings/.bindings_generated.rs.cmd
[ -f "$cmd" ] || { echo "bindgen-blocklist: $cmd missing (kernel built without CONFIG_RUST?)" >&2; exit 1; }
# Dependency lines look like "  /path/include/linux/foo.h \" or "  include/generated/x.h \".
sed -n 's/^[[:space:]]*\([^[:space:]$]*\.h\)[[:space:]]*\\\?$/\1/p' "$cmd" |
	sed -e "s#^$ksrc/##" -e "s#^$kb/##" |
	sort -u |
	sed -e 's/[.+]/\\&/g' |
	paste -sd'|' |
	sed -e 's/^/.*\/(/' -e 's/$/)/'
