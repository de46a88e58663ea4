#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A hostile peer: rrxe-hostile sends RRXE_HOSTILE_PACKETS (default 1,000,000) hand-made
# RoCEv2 packets to rrxe1, from rrxe0's address: random bytes, every opcode with
# truncated, over-long and inconsistent headers, PSNs far ahead and behind, RETH,
# AtomicETH, FETH, XETH, SACK, CNP, timestamp and verified-WRITE fields pointing
# anywhere, wrong QPNs, P_Keys and Q_Keys, nearly all with a correct ICRC, one in 16 with
# a bad one. Half of them go to live QPs of every type and state (rrxe-verify -o park:
# RC in RESET, INIT, RTR, RTS, on an SRQ and in ERR, UD in RTS, and QP1), the first half
# alone, the second half while a verified WRITE stream runs between the two devices,
# which must complete byte-exact. Afterwards every packet is counted (rx_packets),
# nothing is kept (reasm_bytes back to 0), the kernel logged no warning (the bench
# scans dmesg), and the module unloads and loads again.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify hostile exclusive
ktap_set_plan 6
hosts_up
devs_up
total=${RRXE_HOSTILE_PACKETS:-1000000}
half=$((total / 2))
# Over-long packets (beyond path MTU 4096) arrive only over a 9000-byte link.
ip -n $NS0 link set va mtu 9000
ip -n $NS1 link set vb mtu 9000
# Live targets on rrxe1 (their peer address is rrxe0's, which the injector forges).
mkfifo $TMPD/park.in
in1 "$VERIFY" -d rrxe1 -o park $IP0 <$TMPD/park.in >$TMPD/park.out 2>&1 &
exec 7>$TMPD/park.in
wait_for "grep -q '^park:' $TMPD/park.out" 30
targets=$(sed -n 's/^park: //p' $TMPD/park.out)
echo "# live QPs on rrxe1 (qpn:expected psn): $targets QP1"
ktap_check "live target QPs of every type and state" test -n "$targets"

c() { counter rrxe1 "$1"; }
names="rx_packets drop_malformed drop_opcode drop_icrc drop_qpn drop_state out_of_seq duplicates drop_qkey drop_no_recv drop_rx_queue cnp_rcvd rnr_nak_sent nak_sent"
snap() { for k in $names; do echo "$k $(c $k)"; done; }
# hostile <count> <seed>: the injector from the first namespace; its last line.
hostile() {
	in0 "$HOSTILE" -s $IP0 -d $IP1 -n "$1" -r "$2" -q "${targets},1:0" >$TMPD/h.out 2>&1
	local rc=$?
	sed 's/^/# /' $TMPD/h.out
	return $rc
}
t0=$(date +%s)
before=$(snap)
hostile $half 1 || echo "# injector failed"
sleep 2
after=$(snap)
sent=$(sed -n 's/^rrxe-hostile: sent \([0-9]*\).*/\1/p' $TMPD/h.out)
rx=$(($(echo "$after" | awk '$1 == "rx_packets" { print $2 }') - $(echo "$before" | awk '$1 == "rx_packets" { print $2 }')))
echo "# counters at rrxe1 (delta):"
paste <(echo "$before") <(echo "$after") | awk '{ if ($4 - $2) printf "#   %s %d\n", $1, $4 - $2 }'
echo "# $((half)) packets generated, $sent sent, rx_packets grew by $rx in $(($(date +%s) - t0)) s"
ktap_eq "every packet sent reached rrxe1 and was counted (rx_packets)" "$sent" "$rx"

# The second half while a verified WRITE stream runs (QPs the injector never targets).
for d in rrxe0 rrxe1; do echo 1 >/sys/kernel/debug/rrxe-$d/verify/enable; done
nv=$((600 / SLOW))
verify -o vwrite -s 65536 -n $nv -k 4 >$TMPD/v.out 2>&1 &
vpid=$!
hostile $half 2 || echo "# injector failed"
wait $vpid
vrc=$?
cat $TMPD/v.out
ok=$(counter rrxe1 verify_ok)
ktap_check "a verified WRITE stream beside the injector: byte-exact, every WRITE verified" \
	test $vrc = 0 -a "${ok:-0}" -ge $nv
for d in rrxe0 rrxe1; do echo 0 >/sys/kernel/debug/rrxe-$d/verify/enable; done

exec 7>&-
wait_for "! pgrep -f 'rrxe-verify -d rrxe1 -o park'" 20
sleep 1
kept=$(counter rrxe1 reasm_bytes)
ktap_eq "nothing kept once the QPs are gone (reasm_bytes)" 0 "$kept"
ktap_check "the device still moves verified data" verify -o write -s 65536 -n 50 -k 4
devs_down
ktap_check "rrxe unloads and loads again" sh -c 'modprobe -r rrxe && modprobe rrxe'
ktap_finished
