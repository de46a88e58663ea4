# SPDX-License-Identifier: GPL-2.0
# Stand-in for the kernel's tools/testing/selftests/kselftest/runner.sh, used by
# lib/runner.sh only when no kernel tree or kselftest install provides it: run_many runs
# each test of the current directory ($BASE_DIR/<collection>) with the timeout from
# ./settings (or kselftest_override_timeout), prefixes its output with "# " and prints
# one result line per test, as the kernel's runner does.
. "$BASE_DIR/kselftest/ktap_helpers.sh"

kselftest_default_timeout=45
kselftest_override_timeout=

run_many() {
	local dir=${PWD#"$BASE_DIR"/} t rc timeout field value
	for t in "$@"; do
		timeout=$kselftest_default_timeout
		if [ -r settings ]; then
			while IFS='=' read -r field value; do
				[ "$field" = timeout ] && timeout=$value
			done < <(grep -v '^#' settings)
		fi
		[ -n "$kselftest_override_timeout" ] && timeout=$kselftest_override_timeout
		ktap_print_msg "timeout set to $timeout"
		echo "# selftests: $dir: $t"
		timeout --foreground "$timeout" timeout "$timeout" "./$t" 2>&1 | sed -u 's/^/# /'
		rc=${PIPESTATUS[0]}
		case $rc in
		"$KSFT_PASS") ktap_test_pass "selftests: $dir: $t" ;;
		"$KSFT_SKIP") ktap_test_skip "selftests: $dir: $t" ;;
		"$KSFT_XFAIL") ktap_test_xfail "selftests: $dir: $t" ;;
		124) ktap_test_fail "selftests: $dir: $t # TIMEOUT $timeout seconds" ;;
		*) ktap_test_fail "selftests: $dir: $t # exit=$rc" ;;
		esac
	done
}
