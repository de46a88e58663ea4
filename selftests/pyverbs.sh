#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core's own test suite (python3-pyverbs; the tests ship compressed under
# /usr/share/doc/rdma-core/tests) against one rrxe device, rrxe0 on the first
# namespace's veth: no test may fail or error, except those named in PYVERBS_XFAIL (for
# an operation not implemented yet whose test does not check for it first; none today),
# and at least PYVERBS_MIN_PASS must pass (Documentation/rrxe/consumers.rst has the
# numbers against rrxe and rdma_rxe). The tests that fail are named in the diagnostics.
#
# RRXE_PYVERBS_LINK=rxe runs the same suite against rdma_rxe instead, for the comparison
# (the VM bench with RRXE_PROVIDER=rxe, a boot without rrxe, does so by itself).
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
LINK=${RRXE_PYVERBS_LINK:-${RRXE_PROVIDER:-rrxe}}
# (rrxe's floor; a comparison run against rdma_rxe only needs some to pass.)
if [ "$LINK" = rrxe ]; then
	PYVERBS_MIN_PASS=${PYVERBS_MIN_PASS:-94}
else
	PYVERBS_MIN_PASS=${PYVERBS_MIN_PASS:-1}
fi
PYVERBS_XFAIL=${PYVERBS_XFAIL:-}
src=/usr/share/doc/rdma-core/tests
[ -f $src/run_tests.py ] || rrxe_skip "rdma-core's tests not installed (python3-pyverbs)"
python3 -c 'import pyverbs.device' 2>/dev/null || rrxe_skip "python3-pyverbs not installed"
if [ "$LINK" = rrxe ]; then
	rrxe_require exclusive
else
	[ "$(id -u)" = 0 ] || rrxe_skip "must run as root"
	modprobe rdma_rxe 2>/dev/null || rrxe_skip "rdma_rxe not available"
	modprobe ib_uverbs
	trap 'rdma link delete rrxe0 2>/dev/null; hosts_down; rm -rf "$TMPD"' EXIT
fi
ktap_set_plan 3

mkdir -p "$TMPD/pv"
cp -r $src "$TMPD/pv/tests"
find "$TMPD/pv/tests" -name '*.gz' -exec gunzip -f {} +
hosts_up
in0 rdma link add rrxe0 type "$LINK" netdev va
wait_for "grep -q ffff:0a00 /sys/class/infiniband/rrxe0/ports/1/gids/1" 10
ktap_check "rrxe0 ($LINK) is up with its IPv4 GID" grep -q ffff:0a00 /sys/class/infiniband/rrxe0/ports/1/gids/1

t0=$(date +%s)
(cd "$TMPD/pv" && timeout 600 ip netns exec "$NS0" python3 tests/run_tests.py --dev rrxe0 -v) \
	>"$TMPD/pv.log" 2>&1
rc=$?
ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in.*/\1/p' "$TMPD/pv.log")
count() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" "$TMPD/pv.log" | tail -1; }
failures=$(count failures)
errors=$(count errors)
skipped=$(count skipped)
ran=${ran:-0} failures=${failures:-0} errors=${errors:-0} skipped=${skipped:-0}
passed=$((ran - failures - errors - skipped))
echo "# pyverbs on $LINK: $ran run, $passed passed, $skipped skipped, $failures failed, $errors errors ($(($(date +%s) - t0)) s, exit code $rc)"
[ "$ran" -gt 0 ] || tail -20 "$TMPD/pv.log" | sed 's/^/# /'
# Which tests passed, on one line (for comparing providers): unittest -v prints
# "test_x (module.Class.test_x)", with the docstring's first line after it if any,
# and "... ok" at the end of the last of those lines.
echo "# passed on $LINK: $(awk '/^test_/ { t = $1 } / \.\.\. ok$/ { print t }' "$TMPD/pv.log" |
	sort | tr '\n' ' ')"
# The failing tests, from unittest's report ("ERROR: test_x (module.Class.test_x)"),
# other than the expected ones.
bad=$(sed -n 's/^\(ERROR\|FAIL\): \(test_[^ ]*\) .*/\2/p' "$TMPD/pv.log" | sort -u)
unexpected=0
for t in $bad; do
	case " $PYVERBS_XFAIL " in
	*" $t "*) echo "# $t: fails as expected (not implemented)" ;;
	*)
		echo "# $t: FAILS"
		unexpected=$((unexpected + 1))
		;;
	esac
done
for t in $PYVERBS_XFAIL; do
	echo "$bad" | grep -qx "$t" || echo "# $t did not fail: take it off PYVERBS_XFAIL"
done
ktap_check "pyverbs: no test fails or errors ($(echo $PYVERBS_XFAIL | wc -w) expected to)" \
	test "$ran" -gt 0 -a "$unexpected" = 0
ktap_check "pyverbs: at least $PYVERBS_MIN_PASS tests pass" test "$passed" -ge "$PYVERBS_MIN_PASS"
in0 rdma link delete rrxe0
ktap_finished
