# SPDX-License-Identifier: GPL-2.0
# Stand-in for the kernel's tools/testing/selftests/kselftest/ktap_helpers.sh, used by
# lib/ktap.sh only when no kernel tree or kselftest install provides it: the same
# function names, variables, output and exit codes, for the functions the rrxe tests use.

KTAP_TESTNO=1
KTAP_CNT_PASS=0
KTAP_CNT_FAIL=0
KTAP_CNT_XFAIL=0
KTAP_CNT_SKIP=0
KSFT_PASS=0
KSFT_FAIL=1
KSFT_XFAIL=2
KSFT_XPASS=3
KSFT_SKIP=4
KSFT_NUM_TESTS=0

ktap_print_header() { echo "TAP version 13"; }
ktap_print_msg() { echo "# $*"; }
ktap_set_plan() { KSFT_NUM_TESTS=$1; echo "1..$1"; }
ktap_skip_all() { echo "1..0 # SKIP $*"; }

# __ktap_line <ok|not ok> <description> [directive]
__ktap_line() {
	echo "$1 $KTAP_TESTNO $2${3:+ # $3}"
	KTAP_TESTNO=$((KTAP_TESTNO + 1))
}
ktap_test_pass() { __ktap_line ok "$1"; KTAP_CNT_PASS=$((KTAP_CNT_PASS + 1)); }
ktap_test_skip() { __ktap_line ok "$1" SKIP; KTAP_CNT_SKIP=$((KTAP_CNT_SKIP + 1)); }
ktap_test_xfail() { __ktap_line ok "$1" XFAIL; KTAP_CNT_XFAIL=$((KTAP_CNT_XFAIL + 1)); }
ktap_test_fail() { __ktap_line "not ok" "$1"; KTAP_CNT_FAIL=$((KTAP_CNT_FAIL + 1)); }
ktap_test_result() {
	local d=$1
	shift
	if "$@"; then ktap_test_pass "$d"; else ktap_test_fail "$d"; fi
}

ktap_print_totals() {
	[ "$KTAP_CNT_SKIP" -gt 0 ] && echo "# $KTAP_CNT_SKIP skipped test(s) detected."
	echo "# Totals: pass:$KTAP_CNT_PASS fail:$KTAP_CNT_FAIL xfail:$KTAP_CNT_XFAIL xpass:0 skip:$KTAP_CNT_SKIP error:0"
}
ktap_exit_fail_msg() {
	echo "Bail out! $*"
	ktap_print_totals
	exit "$KSFT_FAIL"
}
# Passes only if every planned case passed, was skipped or failed as expected.
ktap_finished() {
	ktap_print_totals
	[ $((KTAP_CNT_PASS + KTAP_CNT_SKIP + KTAP_CNT_XFAIL)) -eq "$KSFT_NUM_TESTS" ]
	exit $(($? == 0 ? KSFT_PASS : KSFT_FAIL))
}
