# SPDX-License-Identifier: GPL-2.0
# An incast topology in one guest, for congestion control (sourced after lib/ktap.sh by
# cc-incast.sh and by the congestion bench, lib/congestion.sh): CC_SENDERS senders (3
# unless set), each in its own namespace at 10.9.i.1, a router namespace, and one
# receiver namespace at 10.9.0.1 behind the router's link rd. RDMA devices: ccs<i> on
# each sender, ccd on the receiver. The bottleneck is the router's egress on rd.

NSR=rrxe-ccr-$$
NSD=rrxe-ccd-$$
SENDERS=$(seq 1 "${CC_SENDERS:-3}")
ns_s() { echo "rrxe-ccs$1-$$"; }
DBG=/sys/kernel/debug
# Bottleneck rate (Mbit/s) and the queue: a hard limit, and RED's marking thresholds.
BN_MBIT=${CC_BN_MBIT:-100}
BN_LIMIT=300000
BN_MIN=${RRXE_CC_RED_MIN:-30000}
BN_MAX=${RRXE_CC_RED_MAX:-90000}

cc_down() {
	local i
	# The tools first: one stopped by the runner's timeout keeps its device (and so its
	# namespace) alive, and the next exclusive script would skip.
	netns_kill "$NSD"
	for i in $SENDERS; do netns_kill "$(ns_s $i)"; done
	netns_kill "$NSR"
	ip netns del "$NSD" 2>/dev/null
	for i in $SENDERS; do ip netns del "$(ns_s $i)" 2>/dev/null; done
	ip netns del "$NSR" 2>/dev/null
	# The devices go with their netdevs.
	wait_for "! ls /sys/class/infiniband 2>/dev/null | grep -q '^cc[sd]'" 30
}

# cc_up <rrxe|rxe>: the namespaces, links, routes and one RDMA device per host.
cc_up() {
	local prov=$1 i ns d
	mountpoint -q $DBG || mount -t debugfs none $DBG
	ip netns add "$NSR" && ip netns add "$NSD" || return 1
	ip -n "$NSR" link set lo up
	ip netns exec "$NSR" sysctl -qw net.ipv4.ip_forward=1
	ip -n "$NSR" link add rd type veth peer name dv netns "$NSD"
	ip -n "$NSR" addr add 10.9.0.254/24 dev rd
	ip -n "$NSR" link set rd up
	ip -n "$NSD" link set lo up
	ip -n "$NSD" addr add 10.9.0.1/24 dev dv
	ip -n "$NSD" link set dv up
	ip -n "$NSD" route add default via 10.9.0.254
	# NAPI mode on the veths (as hosts_up): packets of a flow arrive in order.
	ip netns exec "$NSD" ethtool -K dv gro on tso off >/dev/null 2>&1
	for i in $SENDERS; do
		ns=$(ns_s $i)
		ip netns add "$ns" || return 1
		ip -n "$ns" link set lo up
		ip -n "$NSR" link add r$i type veth peer name sv netns "$ns"
		ip -n "$NSR" addr add 10.9.$i.254/24 dev r$i
		ip -n "$NSR" link set r$i up
		ip -n "$ns" addr add 10.9.$i.1/24 dev sv
		ip -n "$ns" link set sv up
		ip -n "$ns" route add default via 10.9.$i.254
		ip netns exec "$ns" ethtool -K sv gro on tso off >/dev/null 2>&1
		ip netns exec "$ns" rdma link add ccs$i type "$prov" netdev sv || return 1
	done
	ip netns exec "$NSD" rdma link add ccd type "$prov" netdev dv || return 1
	for d in ccd $(for i in $SENDERS; do echo ccs$i; done); do
		wait_for "grep -q ffff:0a09 /sys/class/infiniband/$d/ports/1/gids/1" 10 || return 1
	done
}

# bottleneck <marking|plain>: BN_MBIT towards the receiver (tbf), then the RoCEv2 packets
# (UDP 4791) into RED, marking ECN-capable packets from BN_MIN bytes of backlog (all of
# them from BN_MAX; drops only at the BN_LIMIT hard limit), or into a plain BN_LIMIT-byte
# FIFO that never marks. RED judges the instantaneous queue, as the ECN marking of a
# DCQCN fabric's switches does: with "burst 31" tc gives its average a weight of 1/4 (it
# follows the queue within a few packets), where burst 55 gave 1/32 and marking lagged
# the queue by some 32 packets (RRXE_CC_RED_BURST, RRXE_CC_RED_MIN and RRXE_CC_RED_MAX
# override them).
# Everything else (the tools' TCP set-up) goes ahead in its own band: RED drops packets
# that are not ECN-capable early, and a TCP handshake stuck behind the RoCE queue kept
# later flows from starting for many seconds. (htb let about
# 165 Mbit/s through at "rate 100mbit" in the TCG guest; tbf holds the rate. Its bucket
# holds 64 KB, 5 ms at 100 Mbit/s: the guest's timers fire late under TCG, and with
# 16 KB the tokens lost meanwhile held even a full queue to 88% of the rate.)
bottleneck() {
	local r=(ip netns exec "$NSR" tc)
	"${r[@]}" qdisc del dev rd root 2>/dev/null
	"${r[@]}" qdisc add dev rd root handle 1: tbf rate ${BN_MBIT}mbit burst ${RRXE_CC_BURST:-64kb} latency 1s &&
	"${r[@]}" qdisc add dev rd parent 1:1 handle 2: prio bands 2 \
		priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 &&
	"${r[@]}" filter add dev rd parent 2: protocol ip prio 1 u32 match ip protocol 17 0xff \
		match ip dport 4791 0xffff flowid 2:2 || return 1
	if [ "$1" = marking ]; then
		"${r[@]}" qdisc add dev rd parent 2:2 handle 10: red limit $BN_LIMIT \
			min $BN_MIN max $BN_MAX avpkt 1000 burst ${RRXE_CC_RED_BURST:-31} probability 1.0 \
			bandwidth ${BN_MBIT}mbit ecn
	else
		"${r[@]}" qdisc add dev rd parent 2:2 handle 10: bfifo limit $BN_LIMIT
	fi
}
# marked, bn_dropped, backlog: the bottleneck's marks, drops and current backlog (bytes).
bn_stat() {
	ip netns exec "$NSR" tc -s qdisc show dev rd |
		awk -v k="$1" '/^qdisc (red|bfifo) 10:/ { f = 1 } f { for (i = 1; i <= NF; i++) if ($i == k || $i == "(" k) { v = $(i + 1); sub(/[,b]$/, "", v); print v; exit } }'
}
marked() { local v; v=$(bn_stat marked); echo "${v:-0}"; }
bn_dropped() { local v; v=$(bn_stat dropped); echo "${v:-0}"; }
backlog() { local v; v=$(bn_stat backlog); echo "${v:-0}"; }

# knob <device> <name> [value]: reads, or writes, an rrxe congestion-control knob.
knob() {
	local f=$DBG/rrxe-$1/cc_params/$2
	if [ $# -gt 2 ]; then echo "$3" >"$f"; else cat "$f"; fi
}
# algo_all <n>: every device of the topology runs algorithm n.
algo_all() {
	local d
	for d in ccd $(for i in $SENDERS; do echo ccs$i; done); do knob $d algo "$1" || return 1; done
}
