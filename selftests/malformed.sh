#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Malformed RoCEv2 input from the peer namespace (raw socket, correct ICRCs where the test
# is about the parser): every kind is dropped and counted, nothing crashes or WARNs (the
# bench scans dmesg), and an RC QP exchanging data alongside keeps working.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require exclusive ibv_rc_pingpong python3 ss
ktap_set_plan 8
hosts_up
devs_up
ktap_check "rdma statistic shows rrxe counters" bash -c "rdma statistic show link rrxe0/1 | grep -q rx_packets"
timeout $((120 * SLOW)) ip netns exec $NS1 ibv_rc_pingpong -d rrxe1 -g 1 -c -n 3000 -s 4096 >$TMPD/mf.srv 2>&1 &
srv=$!
wait_for "ip netns exec $NS1 ss -ltn | grep -q ':18515 '" 30
timeout $((120 * SLOW)) ip netns exec $NS0 ibv_rc_pingpong -d rrxe0 -g 1 -c -n 3000 -s 4096 "$IP1" >$TMPD/mf.cli 2>&1 &
cli=$!
declare -A before
for c in drop_icrc drop_qpn drop_opcode drop_malformed; do before[$c]=$(counter rrxe0 $c); done
inject() { ip netns exec $NS1 python3 tools/inject.py "$IP1" "$IP0" "$1" 50; }
inject bad_icrc
inject unknown_qpn
inject unknown_opcode
inject truncated
inject pad_underflow
inject bad_tver
sleep 1
delta() { echo $(($(counter rrxe0 "$1") - ${before[$1]:-0})); }
ktap_check "bad ICRC counted (drop_icrc +50)" wait_for "[ \$(delta drop_icrc) -ge 50 ]" 10
ktap_check "unknown QPN counted (drop_qpn +50)" wait_for "[ \$(delta drop_qpn) -ge 50 ]" 10
ktap_check "unknown opcode counted (drop_opcode +50)" wait_for "[ \$(delta drop_opcode) -ge 50 ]" 10
ktap_check "truncated, pad underflow and bad TVer counted (drop_malformed +150)" \
	wait_for "[ \$(delta drop_malformed) -ge 150 ]" 10
wait $cli
c=$?
wait $srv
s=$?
echo "# ibv_rc_pingpong: client rc=$c server rc=$s (124: timed out after $((120 * SLOW)) s)"
tail -3 $TMPD/mf.cli | sed 's/^/# cli: /'
tail -3 $TMPD/mf.srv | sed 's/^/# srv: /'
ktap_check "the RC QP alongside completed its 3000 exchanges" \
	bash -c "[ $c -eq 0 ] && [ $s -eq 0 ] && grep -q '3000 iters' $TMPD/mf.cli"
ktap_check "rrxe0 is still ACTIVE" bash -c "[ \"\$(ibv_devinfo -d rrxe0 | awk '/state:/ {print \$2; exit}')\" = PORT_ACTIVE ]"
ktap_check "the module unloads cleanly afterwards" bash -c "rdma link delete rrxe0 && rdma link delete rrxe1 && modprobe -r rrxe"
modprobe rrxe
ktap_finished
