#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kernel consumers: rrxe_ktest.ko (selftests/ktest) drives rrxe0 the way an in-kernel ULP
# does (kernel PD, CQ polled from a workqueue, kernel SRQ, two kernel RC QPs connected to
# each other, fast-registration MRs, local and remote invalidation, key generations,
# ATOMIC WRITE and FLUSH) and
# logs one KTAP line per case; each becomes a case here. Its load fails
# unless every case passed, and the device must carry traffic afterwards.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify insmod
ko=ktest/rrxe_ktest.ko
[ -f $ko ] || rrxe_skip "$ko not built (make -C selftests with KDIR set to the running kernel's build tree)"
cases=14 # NCASES in ktest/rrxe_ktest.c
ktap_set_plan $((cases + 2))
hosts_up
devs_up
dmesg_mark
insmod $ko dev=rrxe0
rc=$?
dmesg_since | sed -n 's/.*rrxe_ktest: //p' >$TMPD/kt.log
grep '^#' $TMPD/kt.log
for i in $(seq $cases); do
	line=$(grep -E "^(not )?ok $i " $TMPD/kt.log)
	name=${line#* $i }
	case $line in
	ok*) ktap_test_pass "$name" ;;
	*) ktap_test_fail "${name:-case $i of rrxe_ktest: no result}" ;;
	esac
done
ktap_eq "rrxe_ktest loads only when all its cases pass (exit code)" 0 "$rc"
ktap_check "rrxe0 still moves verified data afterwards (WRITE+READ)" verify -o write -s 65536 -n 20 -k 4
rmmod rrxe_ktest 2>/dev/null
devs_down
ktap_finished
