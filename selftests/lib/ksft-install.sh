#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ksft-install.sh <dir>: installs this kselftest target into <dir> with the kernel's own
# kselftest_install.sh, the way a kernel tree would: a scratch tools/testing/selftests
# whose Makefile, lib.mk, kselftest/ and scripts are links to $KSRC's (scripts/ too, for
# the Makefile's includes), with a copy of selftests/ as its rrxe directory. KDIR (the
# kernel ktest/ is built against) and LLVM pass through the environment.
# <dir>/run_kselftest.sh then runs the installed tests (-c rrxe, -t rrxe:<script>).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/scripts/env.sh"
# (The kernel's lib.mk installs with rsync.)
command -v rsync >/dev/null || { echo "ksft-install: rsync is needed (apt-get install rsync)" >&2; exit 1; }
mkdir -p "$1"
dest=$(cd "$1" && pwd)
tree=$(mktemp -d /tmp/rrxe-ksft-tree.XXXXXX)
trap 'rm -rf "$tree"' EXIT
st=$tree/tools/testing/selftests
mkdir -p "$st"
ln -s "$KSRC/scripts" "$tree/scripts"
for f in Makefile lib.mk kselftest kselftest_install.sh run_kselftest.sh; do
	ln -s "$KSRC/tools/testing/selftests/$f" "$st/$f"
done
cp -a "$here/selftests" "$st/rrxe"
cd "$st"
# (kselftest_install.sh runs `make install`; the target list comes through MAKEFLAGS,
# where a variable counts as given on the command line.)
MAKEFLAGS="TARGETS=rrxe" ./kselftest_install.sh "$dest"
