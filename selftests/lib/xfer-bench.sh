#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job of `make bench` (RRXE_MODE=xfer): one provider per boot (RRXE_PROVIDER = rrxe,
# rxe or siw), two namespaces over veth. A 256 MiB file from the second namespace to the
# first with rrxe-xfer get (its defaults, one QP, and each way of waiting for
# completions), the same file over TCP with socat on the same veth, and
# ib_write_bw 64 KiB for reference; for the RoCE providers also rrxe-xfer at 1% loss both
# ways (netem). Writes "metric value" lines to /tmp/out/xfer.txt: MB/s and the CPU
# seconds (user + system) of each side's process. Never run by `make check`.
cd "$(dirname "$0")/.." || exit 1
. lib/ktap.sh
prov=${RRXE_PROVIDER:-rrxe}
reps=${RRXE_BENCH_REPS:-3}
out=/tmp/out/xfer.txt
: >"$out"
modprobe ib_uverbs
modprobe rdma_ucm
hosts_up
provider_up "$prov"
S=/tmp/xb-srv C=/tmp/xb-cli
mkdir -p $S $C
head -c $((256 << 20)) /dev/urandom >$S/f
# cputime <file> <cmd...>: runs the command, writes its user+system CPU seconds to <file>.
cputime() {
	local f=$1
	shift
	/usr/bin/time -f '%U %S' -o "$f.t" "$@"
	local rc=$?
	awk '{ printf "%.2f\n", $1 + $2 }' "$f.t" >"$f"
	return $rc
}
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
# xfer_once <poll mode> [get options...]: one transfer of the file into $C/f, both sides
# waiting for completions the same way; prints "MB/s client-CPU server-CPU" (nothing on
# failure).
xfer_once() {
	local poll=$1
	shift
	rm -f $C/f $C/f.rrxe-part
	cputime /tmp/xb.scpu ip netns exec $NS1 "$XFER" serve --poll $poll --once -r $S -l $IP1:18700 >/tmp/xb.srv 2>&1 &
	local sp=$! t0 t1
	wait_for "in1 ss -ltn | grep -q ':18700 '" 30
	t0=$(date +%s.%N)
	cputime /tmp/xb.ccpu ip netns exec $NS0 "$XFER" get --quiet --poll $poll "$@" $IP1:f $C/f >/tmp/xb.cli 2>&1
	local rc=$?
	t1=$(date +%s.%N)
	wait $sp
	if [ $rc -ne 0 ] || ! cmp -s $S/f $C/f; then
		# (kept with the results: RRXE_KEEP_OUT)
		# With the devices' non-zero counters (rdma_rxe fails a QP when the IP stack
		# refuses one of its packets, and counts it in send_err).
		{
			echo "== rrxe-xfer get --poll $poll $* exit $rc"
			tail -5 /tmp/xb.cli
			tail -5 /tmp/xb.srv
			grep -H . /sys/class/infiniband/$d0/ports/1/hw_counters/* \
				/sys/class/infiniband/$d1/ports/1/hw_counters/* 2>/dev/null | grep -v ':0$'
		} | tee -a /tmp/out/xfer-failures.txt >&2
		return
	fi
	echo "$(python3 -c "print(round(($((256 << 20)) / ($t1 - $t0)) / 1e6, 1))") $(cat /tmp/xb.ccpu) $(cat /tmp/xb.scpu)"
}
tcp_once() {
	rm -f $C/f
	cputime /tmp/xb.scpu ip netns exec $NS1 socat -u -b 1048576 OPEN:$S/f,rdonly TCP-LISTEN:18800,reuseaddr &
	local sp=$! t0 t1
	wait_for "in1 ss -ltn | grep -q ':18800 '" 30
	t0=$(date +%s.%N)
	cputime /tmp/xb.ccpu ip netns exec $NS0 socat -u -b 1048576 TCP:$IP1:18800 CREATE:$C/f
	t1=$(date +%s.%N)
	wait $sp
	cmp -s $S/f $C/f || return
	echo "$(python3 -c "print(round(($((256 << 20)) / ($t1 - $t0)) / 1e6, 1))") $(cat /tmp/xb.ccpu) $(cat /tmp/xb.scpu)"
}
wbw_once() {
	in1 timeout 120 ib_write_bw -d $d1 -F $opt -s 65536 -D 5 >/tmp/xb.wsrv 2>&1 &
	local sp=$!
	if [ "$prov" = siw ]; then sleep 3; else wait_for "in1 ss -ltn | grep -q ':18515 '" 30; fi
	in0 timeout 120 ib_write_bw -d $d0 -F $opt -s 65536 -D 5 $IP1 >/tmp/xb.wcli 2>&1
	wait $sp
	awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ { print $4; exit }' /tmp/xb.wcli
}
# series <metric> <function> <args...>: $reps runs; medians of rate and both CPU times.
series() {
	local m=$1 r c s i v
	shift
	r=() c=() s=()
	for ((i = 0; i < reps; i++)); do
		v=$("$@")
		[ -n "$v" ] || { echo "${m} FAIL" | tee -a $out; return; }
		read -r a b d <<<"$v"
		r+=("$a") c+=("$b") s+=("$d")
	done
	echo "${m}_runs $(echo "${r[@]}" | tr ' ' ',')" >>$out
	echo "$m $(median "${r[@]}")" | tee -a $out
	echo "${m}_cpu_client $(median "${c[@]}")" | tee -a $out
	echo "${m}_cpu_server $(median "${s[@]}")" | tee -a $out
}
# The defaults (adaptive polling, 4 QPs), then one QP, then the other two ways to wait.
series xfer xfer_once adaptive
series xfer_1qp xfer_once adaptive -q 1
series xfer_busy xfer_once busy
series xfer_events xfer_once events
series tcp tcp_once
w=()
for ((i = 0; i < reps; i++)); do w+=("$(wbw_once)"); done
echo "write_bw_64k $(median ${w[@]})" | tee -a $out
if [ "$prov" != siw ]; then
	modprobe sch_netem
	in0 tc qdisc add dev va root netem loss 1%
	in1 tc qdisc add dev vb root netem loss 1%
	series xfer_loss1 xfer_once adaptive
	in0 tc qdisc del dev va root
	in1 tc qdisc del dev vb root
fi
rm -rf $S $C
