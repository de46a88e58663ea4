#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `bench.sh interop`: one of two VMs joined by a virtual Ethernet link, VM "a"
# with rrxe and VM "b" with rdma_rxe (never both in one kernel). Both run the same list of
# steps; in each step one VM is the server and the other the client, so every operation is
# tested in both directions. Each VM reports its side of every step as KTAP.
cd "$(dirname "$0")/.." || exit 1
. lib/ktap.sh
role=${RRXE_ROLE:?}
if [ "$role" = a ]; then
	me=10.1.0.1 peer=10.1.0.2 prov=rrxe dev=rrxe0
else
	me=10.1.0.2 peer=10.1.0.1 prov=rxe dev=rxe0
fi
nic=$(ls /sys/class/net | grep -v -E '^(lo|sit|tunl|ip6tnl)' | head -1)
ip link set "$nic" up
ip addr add $me/24 dev "$nic"
modprobe "rdma_$prov" 2>/dev/null || modprobe "$prov"
modprobe ib_uverbs
modprobe rdma_ucm
rdma link add $dev type $prov netdev "$nic" || echo "# rdma link add failed"
wait_for "grep -q ffff:0a01 /sys/class/infiniband/$dev/ports/1/gids/*" 20
# The IPv4-mapped RoCEv2 GID's index (the table order differs between providers).
gid=$(grep -l ffff:0a01 /sys/class/infiniband/$dev/ports/1/gids/* | head -1 | xargs basename)

# rrxe offers verified WRITEs: towards rdma_rxe, which never accepts, WRITEs stay plain.
[ "$role" = a ] && echo 1 >/sys/kernel/debug/rrxe-$dev/verify/enable
ktap_print_header
steps=28
[ "$role" = a ] && steps=30
ktap_set_plan $steps
# step <name> <server role> <server cmd...> -- <client cmd...>: both commands get
# "-p <port>", a TCP (or rdma_cm) port of this step's own, and the client gets the peer's
# address appended. The client is retried while the server is not listening yet (a fast
# failure, or one that says nothing listens); with a port per step a retry can only reach this step's server, never the
# next one's (a client that failed against this step's server once and then ran against
# the next step's server hid the failure and desynchronised the two VMs). Every failed
# attempt is reported.
port=18600
# What each client prints when nothing listens on the step's port yet.
NOT_LISTENING="Connection refused|cannot connect to|Couldn't connect to"
# What a client prints once it ran against a server: a completion in error, wrong data.
# Such a failure is the step's even when it came fast (a retry would only find the server
# gone and hide the first attempt's message behind 30 "cannot connect").
RAN="wr_id [0-9]|completion|differs|read back"
step() {
	local name=$1 srole=$2 srv=() cli=()
	shift 2
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	port=$((port + 1))
	srv=("${srv[0]}" -p $port "${srv[@]:1}")
	cli=("${cli[0]}" -p $port "${cli[@]:1}")
	local side rc
	if [ "$srole" = "$role" ]; then
		side="server on $prov"
		timeout 90 "${srv[@]}" >/tmp/step.out 2>&1
		rc=$?
	else
		side="client on $prov"
		local t0 i
		for i in $(seq 30); do
			t0=$(date +%s)
			timeout 90 "${cli[@]}" $peer >/tmp/step.out 2>&1
			rc=$?
			[ $rc = 0 ] || { echo "# attempt $i: rc=$rc after $(($(date +%s) - t0)) s"; tail -4 /tmp/step.out | sed 's/^/#   /'; }
			[ $rc = 0 ] && break
			grep -qiE "$RAN" /tmp/step.out && break
			# Not a fast failure, and not the server missing: the step failed. (On a
			# loaded host a client may take more than 3 s to find that nothing listens.)
			[ $(($(date +%s) - t0)) -gt 3 ] &&
				! grep -qE "$NOT_LISTENING" /tmp/step.out && break
			sleep 1
		done
	fi
	if [ $rc = 0 ]; then
		ktap_test_pass "$name ($side)"
	else
		tail -4 /tmp/step.out | sed 's/^/# /'
		ktap_test_fail "$name ($side) rc=$rc"
	fi
	sleep 1
}
V=$PWD/tools/rrxe-verify
X=$PWD/tools/xfer-step.sh
for s in a b; do
	if [ $s = a ]; then who="rrxe serves"; else who="rdma_rxe serves"; fi
	step "$who: ibv_rc_pingpong -c 4 KiB" $s ibv_rc_pingpong -d $dev -g $gid -c -n 100 -s 4096 -- \
		ibv_rc_pingpong -d $dev -g $gid -c -n 100 -s 4096
	step "$who: RDMA WRITE+READ 64 KiB verified" $s $V -d $dev -g $gid -o write -s 65536 -n 50 -- \
		$V -d $dev -g $gid -o write -s 65536 -n 50
	step "$who: SEND with immediate verified" $s $V -d $dev -g $gid -o send -s 4096 -n 300 -k 8 -- \
		$V -d $dev -g $gid -o send -s 4096 -n 300 -k 8
	step "$who: atomics verified" $s $V -d $dev -g $gid -o atomic -n 200 -k 4 -- \
		$V -d $dev -g $gid -o atomic -n 200 -k 4
	step "$who: ibv_uc_pingpong -c 4 KiB" $s ibv_uc_pingpong -d $dev -g $gid -c -n 100 -s 4096 -- \
		ibv_uc_pingpong -d $dev -g $gid -c -n 100 -s 4096
	step "$who: ibv_ud_pingpong -c" $s ibv_ud_pingpong -d $dev -g $gid -c -n 100 -s 1024 -- \
		ibv_ud_pingpong -d $dev -g $gid -c -n 100 -s 1024
	step "$who: ib_write_bw 64 KiB" $s ib_write_bw -d $dev -x $gid -F -s 65536 -n 200 -- \
		ib_write_bw -d $dev -x $gid -F -s 65536 -n 200
	step "$who: rping -V (rdma_cm over QP1)" $s rping -s -a $me -V -C 20 -S 2000 -- \
		rping -c -V -C 20 -S 2000 -a
	step "$who: rrxe-xfer get 8 MiB, byte-compared" $s $X serve 8388609 -- $X get 8388609
	step "$who: rrxe-xfer put 8 MiB, byte-compared" $s $X serve 8388609 -- $X put 8388609
	step "$who: WRITEs with verify on at rrxe, each read back" $s $V -d $dev -g $gid -o vwrite -s 65536 -n 50 -- \
		$V -d $dev -g $gid -o vwrite -s 65536 -n 50
	step "$who: ATOMIC WRITE, each read back" $s $V -d $dev -g $gid -o atomic-write -n 200 -k 4 -- \
		$V -d $dev -g $gid -o atomic-write -n 200 -k 4
done
# 1% loss both ways (each VM drops 1% of what it sends): rrxe offered selective
# retransmission, rdma_rxe ignored the offer, and both fall back to IBTA go-back-N.
modprobe sch_netem
tc qdisc add dev "$nic" root netem loss 1%
for s in a b; do
	if [ $s = a ]; then who="rrxe serves"; else who="rdma_rxe serves"; fi
	step "$who, 1% loss: RDMA WRITE+READ 64 KiB verified" $s $V -d $dev -g $gid -o write -s 65536 -n 30 -- \
		$V -d $dev -g $gid -o write -s 65536 -n 30
	step "$who, 1% loss: SEND verified" $s $V -d $dev -g $gid -o send -s 16384 -n 200 -k 8 -- \
		$V -d $dev -g $gid -o send -s 16384 -n 200 -k 8
done
tc qdisc del dev "$nic" root
if [ "$role" = a ]; then
	neg=$(counter $dev sel_negotiated) fb=$(counter $dev sel_fallback) kept=$(counter $dev ooo_kept)
	ktap_print_msg "rrxe towards rdma_rxe: negotiated $neg, fell back $fb, kept out of order $kept"
	ktap_eq "rrxe fell back to go-back-N with rdma_rxe (nothing negotiated, nothing kept)" \
		"0 yes 0" "$neg $([ "$fb" -gt 0 ] && echo yes) $kept"
	vn=$(counter $dev verify_negotiated) vs=$(counter $dev verify_sent) vh=$(counter $dev verify_hello)
	ktap_print_msg "rrxe towards rdma_rxe with verify on: hellos $vh, negotiated $vn, verified WRITEs sent $vs"
	ktap_eq "verify on towards rdma_rxe: never negotiated, every WRITE plain" "0 0" "$vn $vs"
fi
ktap_finished
