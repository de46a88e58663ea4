# SPDX-License-Identifier: GPL-2.0
# Where the kernel's kselftest helpers are (kselftest/ktap_helpers.sh, kselftest/runner.sh).
# Sourced by lib/ktap.sh and lib/runner.sh with rrxe_dir set to this target's directory
# (as reached, symlinks kept).

# ksft_dirs: candidate kselftest directories (tools/testing/selftests, or an install).
ksft_dirs() {
	[ -n "${KSFT_DIR:-}" ] && echo "$KSFT_DIR"
	# The directory above this target: an installed kselftest tree, or
	# tools/testing/selftests when the target sits inside a kernel tree.
	echo "${rrxe_dir%/*}"
	[ -n "${KSRC:-}" ] && echo "$KSRC/tools/testing/selftests"
	echo "/lib/modules/$(uname -r)/source/tools/testing/selftests"
	echo "/lib/modules/$(uname -r)/build/tools/testing/selftests"
	# The repository's own kernel tree (scripts/env.sh), when run from a checkout.
	[ -f "$rrxe_dir/../scripts/env.sh" ] &&
		(. "$rrxe_dir/../scripts/env.sh" >/dev/null 2>&1 && echo "$KSRC/tools/testing/selftests")
	return 0
}
# ksft_find <file under kselftest/>: the first candidate's copy of it.
ksft_find() {
	local d
	while read -r d; do
		[ -f "$d/kselftest/$1" ] && { echo "$d/kselftest/$1"; return 0; }
	done < <(ksft_dirs)
	return 1
}
# ksrc_selftests <dir>: the kernel source's tools/testing/selftests that holds <dir>
# (e.g. rdma, net/rds): from KSRC, the test VM's kernel build (RRXE_KB), the running
# kernel's source or build tree, or the repository's kernel tree.
ksrc_selftests() {
	local d
	while read -r d; do
		[ -d "$d/$1" ] && { echo "$d"; return 0; }
	done < <(ksft_dirs; [ -n "${RRXE_KB:-}" ] && echo "$RRXE_KB/source/tools/testing/selftests")
	return 1
}
