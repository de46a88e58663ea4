#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make run_tests` outside a kernel tree: runs the given test scripts (default: every
# *.sh) the way run_kselftest.sh runs an installed target, through the kernel's own
# kselftest/runner.sh (found like lib/ktap.sh finds ktap_helpers.sh), or through
# lib/kselftest_runner.sh, a minimal compatible stand-in, when there is none. The output
# is the same KTAP document: "selftests: rrxe: <script>" per script, the per-script
# timeout from ./settings, exit code 4 a skip.
# RRXE_TEST_TIMEOUT overrides the timeout (like run_kselftest.sh -o).
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(*.sh)

# The runner takes a test's collection name and its settings from the path below
# BASE_DIR: give it a kselftest-shaped tree, BASE_DIR/rrxe (this directory) next to
# BASE_DIR/kselftest.
base=$(mktemp -d /tmp/rrxe-kselftest.XXXXXX)
trap 'rm -rf "$base"' EXIT
ln -s "$here" "$base/rrxe"
rrxe_dir=$base/rrxe
. lib/ksft.sh
if runner=$(ksft_find runner.sh) && [ -f "${runner%/*}/ktap_helpers.sh" ]; then
	ln -s "${runner%/*}" "$base/kselftest"
else
	mkdir "$base/kselftest"
	ln -s "$here/lib/ktap_helpers.sh" "$base/kselftest/ktap_helpers.sh"
	ln -s "$here/lib/kselftest_runner.sh" "$base/kselftest/runner.sh"
fi
BASE_DIR=$base
. "$BASE_DIR/kselftest/runner.sh"
kselftest_override_timeout=${RRXE_TEST_TIMEOUT:-}
cd "$base/rrxe" || exit 1
ktap_print_header
ktap_set_plan ${#tests[@]}
run_many "${tests[@]}"
ktap_print_totals
[ "$KTAP_CNT_FAIL" -eq 0 ]
