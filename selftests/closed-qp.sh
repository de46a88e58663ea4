#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A destroyed RC QP still acknowledges, for 20 s, the requests it executed. The server of
# ibv_rc_pingpong exits as soon as its last receive and send complete; when the ACK of the
# client's last SEND was lost, the client then retried into a QPN that no longer answered
# and (retry_cnt 7 is unlimited in rdma_rxe and rrxe) never finished. After a clean
# ibv_rc_pingpong -n 1, SENDs are injected from the client's address to the server's
# destroyed QP (tools/inject.py): the PSN the client's SEND had gets an ACK (closed_acks,
# and the ACK reaches the client's device, whose QP is gone too: drop_qpn there), a PSN
# the QP never executed does not, and neither does anything once the 20 s are over or
# for a QPN never used. A new QP does not get the destroyed one's number (QPNs are
# handed out cyclically), so the record is not hidden by a new connection.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require ibv_rc_pingpong python3 ss
ktap_set_plan 6
hosts_up
devs_up
# pingpong <port>: one clean ibv_rc_pingpong -n 1 (client output in $TMPD/cq.cli); sets
# c and s to the client's and the server's exit codes.
pingpong() {
	in1 timeout 60 ibv_rc_pingpong -d rrxe1 -g 1 -n 1 -s 4096 -p "$1" >$TMPD/cq.srv 2>&1 &
	local srv=$!
	wait_for "in1 ss -ltn | grep -q ':$1 '" 30
	in0 timeout 60 ibv_rc_pingpong -d rrxe0 -g 1 -n 1 -s 4096 -p "$1" "$IP1" >$TMPD/cq.cli 2>&1
	c=$?
	tc_end=$(date +%s%N)
	wait $srv
	s=$?
}
server_qpn() { awk -F'QPN ' '/remote address/ { split($2, a, ","); print a[1] }' $TMPD/cq.cli; }
# Baselines first: the record lasts 20 s from the end of the exchange, and on the debug
# kernel one counter read takes seconds. (A clean exchange drops nothing and is not
# answered from a record.)
a0=$(counter rrxe1 closed_acks) q0=$(counter rrxe0 drop_qpn)
u0=$(counter rrxe1 duplicates) d0=$(counter rrxe1 drop_qpn)
# The resent SENDs come from one injector started now: on the debug kernel starting
# Python takes seconds, and the record lasts 20 s.
mkfifo $TMPD/inj.in
in0 python3 tools/inject.py "$IP0" "$IP1" send_lines 0 <$TMPD/inj.in >$TMPD/inj.out 2>&1 &
injp=$!
exec 8>$TMPD/inj.in
pingpong 18520
tq=$(date +%s%N)
# "local address:  LID 0x0000, QPN 0x000011, PSN 0x12ab34, GID ..." and "remote address: ..."
psn=$(awk -F'PSN ' '/local address/ { split($2, a, /[,:]/); print a[1] }' $TMPD/cq.cli)
qpn=$(server_qpn)
# The first try at once, before anything else costs time.
ms1=$((($(date +%s%N) - tq) / 1000000))
[ -n "$qpn" ] && [ -n "$psn" ] && echo "$qpn $psn" >&8
ktap_check "ibv_rc_pingpong -n 1 finished on both sides (server QPN $qpn, client PSN $psn)" \
	bash -c "[ $c -eq 0 ] && [ $s -eq 0 ] && [ -n '$qpn' ] && [ -n '$psn' ]"
inject() { in0 python3 tools/inject.py "$IP0" "$IP1" "$@"; }
# Resent until the record answers: the server's QP may take a moment to be destroyed
# after its process exited (before that, the live QP answers a duplicate). Each try
# says when it was sent (ms after the server exited) and what rrxe1 counted: a duplicate
# is the live QP's answer, a closed ACK the record's, a drop_qpn neither.
resent_acked() {
	local i ms acked=0 a u d
	echo "# the server exited $(((tq - tc_end) / 1000000)) ms after the client"
	for i in $(seq 10); do
		if [ $i = 1 ]; then
			ms=$ms1
		else
			ms=$((($(date +%s%N) - tq) / 1000000))
			echo "$qpn $psn" >&8
		fi
		sleep 0.5
		# One counter read per try (seconds each on the debug kernel).
		read -r a u d < <(rdma statistic show link rrxe1/1 | tr ' ' '\n' | awk '
			p { v[k] = $0; p = 0; next } /^(closed_acks|duplicates|drop_qpn)$/ { k = $0; p = 1 }
			END { print v["closed_acks"], v["duplicates"], v["drop_qpn"] }')
		echo "# try $i sent at +$ms ms: rrxe1 closed_acks +$((a - a0)), duplicates +$((u - u0))," \
			"drop_qpn +$((d - d0))"
		[ $((a - a0)) -ge 1 ] && acked=1 && break
	done
	[ $acked = 1 ] || return 1
	wait_for "[ \$(( \$(counter rrxe0 drop_qpn) - $q0 )) -ge 1 ]" 5 && return 0
	echo "# the ACK did not reach rrxe0"
	return 1
}
ktap_check "a resent SEND the destroyed QP executed is acknowledged (closed_acks, ACK on the wire)" \
	resent_acked
exec 8>&-
wait $injp
t0=$(date +%s)
pingpong 18521
qpn2=$(server_qpn)
ktap_check "the next server QP gets a new QPN ($qpn2, not $qpn)" \
	bash -c "[ $c -eq 0 ] && [ $s -eq 0 ] && [ -n '$qpn2' ] && [ '$qpn2' != '$qpn' ]"
a0=$(counter rrxe1 closed_acks) q0=$(counter rrxe1 drop_qpn)
inject send 3 "$qpn" $((psn + 1000))
ktap_check "a SEND it never executed is dropped (drop_qpn +3, no ACK)" \
	wait_for "[ \$(( \$(counter rrxe1 drop_qpn) - $q0 )) -eq 3 ] && [ \$(counter rrxe1 closed_acks) = $a0 ]" 5
# The record was made before t0 and lasts 20 s.
d=$((t0 + 21 - $(date +%s)))
[ $d -gt 0 ] && sleep $d
a0=$(counter rrxe1 closed_acks) q0=$(counter rrxe1 drop_qpn)
inject send 3 "$qpn" "$psn"
ktap_check "after 20 s the record is gone (drop_qpn +3, no ACK)" \
	wait_for "[ \$(( \$(counter rrxe1 drop_qpn) - $q0 )) -eq 3 ] && [ \$(counter rrxe1 closed_acks) = $a0 ]" 5
a0=$(counter rrxe1 closed_acks) q0=$(counter rrxe1 drop_qpn)
inject unknown_qpn 3
ktap_check "a SEND for a QPN never used is dropped (drop_qpn +3, no ACK)" \
	wait_for "[ \$(( \$(counter rrxe1 drop_qpn) - $q0 )) -eq 3 ] && [ \$(counter rrxe1 closed_acks) = $a0 ]" 5
devs_down
ktap_finished
