#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Verified RDMA WRITE under faults (see verified-write.sh for the mechanism): the fault
# injector (verify/fault_ppm) corrupts placed bytes at rrxe1; every corruption must be
# caught and repaired by a resend or completed with an error, never reported as success
# (rrxe-verify -o vwrite reads every successfully completed WRITE back); a corruption that
# persists ends in REM_OP_ERR after verify/retries resends; the skip policy
# (verify/skip_after). ATOMIC WRITE (IBTA 1.5) too: its values read back, under loss too,
# each executed once.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify tc
ktap_set_plan 4
hosts_up
devs_up
. lib/verify.sh

vknob rrxe0 enable 1
vknob rrxe1 enable 1
vknob rrxe0 retries 3

# The fault injector corrupts one placed byte of 30% of the WRITEs at rrxe1: each is
# caught, and resent (up to 3 times) or completed with an error; never a success with
# wrong bytes (rrxe-verify exits 1 on any).
vknob rrxe1 fault_ppm 300000
mark
verify -o vwrite -s 4096 -n 100 -k 1 >/dev/null
rc=$?
[ $rc = 1 ] && rc=$(grep -q 'completed with' $TMPD/pair.cli && echo 3 || echo 1)
show rrxe1.verify_faults rrxe1.verify_failed rrxe0.verify_resent rrxe0.verify_errors
f=$(delta rrxe1.verify_faults) x=$(delta rrxe1.verify_failed)
r=$(delta rrxe0.verify_resent) e=$(delta rrxe0.verify_errors)
echo "# client exit $rc (3: a WRITE completed with an error after its resends)"
ktap_check "faults injected: every one caught and resent or failed, no wrong success" \
	test "$f" -gt 0 -a "$f" = "$x" -a $((r + e)) = "$x" -a \( $rc = 0 -o $rc = 3 \) -a "$e" -le 1
# Every WRITE corrupted: after 2 resends the WRITE completes with a remote operational
# error.
vknob rrxe1 fault_ppm 1000000
vknob rrxe0 retries 2
mark
pair 18516 120 "$VERIFY" -d rrxe1 -o vwrite -- "$VERIFY" -d rrxe0 -o vwrite -s 4096 -n 1 -k 1
grep -q 'WRITE 0 completed with remote operation error' $TMPD/pair.cli ||
	grep -q 'WRITE 0 completed with .*(11)' $TMPD/pair.cli
found=$?
show rrxe1.verify_failed rrxe0.verify_resent rrxe0.verify_errors
ktap_eq "a corruption that persists: 3 checks fail, the WRITE completes with REM_OP_ERR" \
	"0 3 2 1" "$found $(delta rrxe1.verify_failed) $(delta rrxe0.verify_resent) $(delta rrxe0.verify_errors)"
vknob rrxe1 fault_ppm 0
vknob rrxe0 retries 3

# A QP with a clean history: after 10 clean checks only one WRITE in 8 is read back.
vknob rrxe1 skip_after 10
mark
verify -o vwrite -s 4096 -n 100 -k 4 >/dev/null
rc=$?
vknob rrxe1 skip_after 0
show rrxe1.verify_ok rrxe1.verify_skipped
o=$(delta rrxe1.verify_ok) k=$(delta rrxe1.verify_skipped)
ktap_check "skip_after 10: read-backs skipped after a clean streak, counted" \
	test $rc = 0 -a $((o + k)) = 100 -a "$k" -gt 50 -a "$o" -ge 16

# ATOMIC WRITE: 8 bytes stored as one, read back; under 5% loss the duplicates it brings
# are answered without executing again.
mark
ok=1
verify -o atomic-write -n 200 -k 4 || ok=0
in0 tc qdisc add dev va root netem loss 5%
in1 tc qdisc add dev vb root netem loss 5%
verify -o atomic-write -n 200 -k 4 || ok=0
in0 tc qdisc del dev va root
in1 tc qdisc del dev vb root
show rrxe1.atomic_write rrxe1.duplicates
ktap_check "ATOMIC WRITE x400 (200 under 5% loss): every value read back, executed once each" \
	test $ok = 1 -a "$(delta rrxe1.atomic_write)" = 400
devs_down
ktap_finished
