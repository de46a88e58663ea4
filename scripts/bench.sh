#!/usr/bin/env bash
# `make bench`: the same perftest/iperf3 set on rrxe, rdma_rxe and siw, one boot each
# (rrxe and rdma_rxe never share a kernel), then one table with the ratios; then the
# congestion table: four staggered flows into one bottleneck under each of rrxe's
# congestion-control algorithms (one boot) and rdma_rxe (another), with a plot of every
# flow's rate over time (Documentation/rrxe/cc-rates.svg, or RRXE_CC_SVG).
# Then the transfer table: rrxe-xfer moving a 256 MiB file on each provider (one boot
# each) against socat over TCP and ib_write_bw on the same path, with CPU seconds.
# Then the verified-WRITE table: verified WRITE (CRC-32, CRC32C) against WRITE + READ + compare and against
# a plain WRITE, latency and bandwidth, at path MTU 1024 and 4096 (rrxe, one boot).
# RRXE_BENCH_ONLY=perf, =congestion, =xfer or =verify runs one of the four.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT
# RRXE_BENCH_CLOCK=icount: the guests count instructions instead of following the host's
# clock (single-threaded TCG, -icount shift=0: 1 ns per instruction, idle time skipped).
# Results then measure the CPU work per byte and per message, whatever the host's speed
# does meanwhile (it drifts by up to 3x within a boot here); they are not wall-clock
# figures and take about twice as long to collect.
if [ "${RRXE_BENCH_CLOCK:-}" = icount ]; then
	export RRXE_ACCEL="tcg,thread=single" RRXE_QEMU_EXTRA="-icount shift=0,sleep=off"
	export RRXE_VM_TIMEOUT=${RRXE_VM_TIMEOUT:-7200}
	echo "bench: instruction-counting guest clock (icount)" >&2
fi
only=${RRXE_BENCH_ONLY:-}
if [ -z "$only" ] || [ "$only" = perf ]; then
for p in rrxe rxe siw; do
	echo "== bench: $p" >&2
	RRXE_PROVIDER=$p RRXE_KEEP_OUT="$res/$p" bash "$here/selftests/lib/bench.sh" perf >"$res/$p.log" 2>&1 ||
		echo "bench: the $p run reported a problem (see below)" >&2
	grep -E '^[a-z0-9_.]+ ' "$res/$p/perf.txt" >&2 2>/dev/null || tail -20 "$res/$p.log" >&2
done
python3 - "$res" <<'PY'
import os, sys
res = sys.argv[1]
def load(p):
    d = {}
    try:
        for line in open(os.path.join(res, p, "perf.txt")):
            k, v = line.split()
            d[k] = v
    except OSError:
        pass
    return d
r, x, s = load("rrxe"), load("rxe"), load("siw")
# 4 QPs over 1 QP: how the bandwidth scales with parallel QPs.
for d in (r, x, s):
    for j in ("", "_j"):
        try:
            d["qp_scaling" + j] = "%.2f" % (float(d["write_bw_64k_4qp" + j]) / float(d["write_bw_64k_1qp" + j]))
        except (KeyError, ValueError, ZeroDivisionError):
            pass
rows = [("ib_write_bw 64 KiB, 1 QP (MB/s)", "write_bw_64k_1qp", True),
        ("ib_write_bw 64 KiB, 4 QPs (MB/s)", "write_bw_64k_4qp", True),
        ("  4 QPs over 1 QP", "qp_scaling", None),
        ("ib_read_bw 64 KiB (MB/s)", "read_bw_64k", True),
        ("ib_send_bw 4 KiB (MB/s)", "send_bw_4k", True),
        ("ib_write_lat 8 B, typical (us)", "write_lat_8b", False),
        ("ib_send_lat 8 B, typical (us)", "send_lat_8b", False),
        ("ib_read_lat 8 B, typical (us)", "read_lat_8b", False),
        ("iperf3 TCP over the same veth (MB/s)", "iperf3_tcp", True),
        ("MTU 9000 (path MTU 4096): ib_write_bw 64 KiB, 1 QP (MB/s)", "write_bw_64k_1qp_j", True),
        ("  ib_write_bw 64 KiB, 4 QPs (MB/s)", "write_bw_64k_4qp_j", True),
        ("  4 QPs over 1 QP", "qp_scaling_j", None),
        ("  ib_read_bw 64 KiB (MB/s)", "read_bw_64k_j", True),
        ("  ib_send_bw 64 KiB (MB/s)", "send_bw_64k_j", True),
        ("  iperf3 TCP over the same veth (MB/s)", "iperf3_tcp_j", True)]
for pct in ("0.1", "1", "5"):
    for op in ("write", "read"):
        rows += [("ib_%s_bw 64 KiB, %s%% loss (MB/s)" % (op, pct), "%s_bw_64k_loss_%s" % (op, pct), True),
                 ("  share of its own lossless bandwidth, paired runs (%)", "%s_share_%s" % (op, pct), None),
                 ("  share of its lossless bandwidth through netem loss 0% (%)", "%s_qshare_%s" % (op, pct), None),
                 ("  rrxe packets resent per packet lost", "%s_resent_per_lost_%s" % (op, pct), None),
                 ("  the same loss by a tc action, no qdisc (MB/s)", "%s_bw_64k_aloss_%s" % (op, pct), True),
                 ("  share of its lossless bandwidth, loss without a qdisc (%)", "%s_ashare_%s" % (op, pct), None),
                 ("  rrxe packets resent per packet lost, loss without a qdisc", "%s_aresent_per_lost_%s" % (op, pct), None)]
def num(d, k):
    try:
        return float(d.get(k, ""))
    except ValueError:
        return None
def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else "%.2f" % (a / b)
print("| test | rrxe | rdma_rxe | siw (-R) | rrxe/rdma_rxe | rrxe/siw |")
print("|---|---|---|---|---|---|")
for name, k, better in rows:
    # (Rows no provider measured, as the loss rows with RRXE_BENCH_LOSS=none, are left out.)
    if any((r, x, s)) and all(k not in d for d in (r, x, s)):
        continue
    a, b, c = num(r, k), num(x, k), num(s, k)
    # "-": not measured for that provider (loss rows: RoCE only); FAIL: it ran and failed
    # (or the provider's boot produced no results at all).
    f = lambda d, v: "%g" % v if v is not None else ("FAIL" if k in d or not d else "-")
    # (No ratio for the per-provider figures under a loss row.)
    rb, rc = (ratio(a, b), ratio(a, c)) if better is not None else ("-", "-")
    print("| %s | %s | %s | %s | %s | %s |" % (name, f(r, a), f(x, b), f(s, c), rb, rc))
PY
fi

if [ -z "$only" ] || [ "$only" = congestion ]; then
	step=${RRXE_CC_STEP:-6}
	for p in rrxe rxe; do
		echo "== bench: congestion, $p" >&2
		RRXE_PROVIDER=$p RRXE_CC_STEP=$step RRXE_KEEP_OUT="$res/cc/$p" \
			bash "$here/selftests/lib/bench.sh" congestion >"$res/cc-$p.log" 2>&1 ||
			{ echo "bench: the congestion run on $p reported a problem:" >&2; tail -20 "$res/cc-$p.log" >&2; }
		grep '^congestion:' "$res/cc/$p/console.log" >&2 2>/dev/null
	done
	echo
	echo "Congestion: four ib_send_bw flows (64 KiB) into one 100 Mbit/s bottleneck, flow i from $step*(i-1) s to $step*(9-i) s (+ set-up)"
	python3 "$here/scripts/cc-table.py" "$res/cc" 100 "${RRXE_CC_SVG:-$here/Documentation/rrxe/cc-rates.svg}"
fi

if [ -z "$only" ] || [ "$only" = xfer ]; then
	for p in rrxe rxe siw; do
		echo "== bench: rrxe-xfer, $p" >&2
		RRXE_PROVIDER=$p RRXE_KEEP_OUT="$res/xfer/$p" bash "$here/selftests/lib/bench.sh" xfer >"$res/xfer-$p.log" 2>&1 ||
			{ echo "bench: the rrxe-xfer run on $p reported a problem:" >&2; tail -20 "$res/xfer-$p.log" >&2; }
		cat "$res/xfer/$p/xfer.txt" >&2 2>/dev/null
	done
	echo
	echo "rrxe-xfer: a 256 MiB file between two namespaces (median of ${RRXE_BENCH_REPS:-3}; CPU: user+system seconds of each side's process)"
	python3 "$here/scripts/xfer-table.py" "$res/xfer"
fi
if [ -z "$only" ] || [ "$only" = verify ]; then
	echo "== bench: verified WRITE" >&2
	RRXE_PROVIDER=rrxe RRXE_KEEP_OUT="$res/vb" bash "$here/selftests/lib/bench.sh" vbench >"$res/vb.log" 2>&1 ||
		{ echo "bench: the verified-WRITE run reported a problem:" >&2; tail -20 "$res/vb.log" >&2; }
	echo
	echo "Verified WRITE (rrxe <-> rrxe): latency post to completion, p50 (us); bandwidth 64 KiB, 16 in flight (MB/s)"
	python3 - "$res/vb/perf.txt" <<'PY'
import sys
d = {}
try:
    for line in open(sys.argv[1]):
        p = line.split()
        if len(p) == 2:
            try:
                d[p[0]] = float(p[1])
            except ValueError:
                pass
except OSError:
    pass
def r(a, b):
    return "-" if a is None or b is None or b == 0 else "%.2f" % (a / b)
def f(v):
    return "FAIL" if v is None else "%g" % v
for x, what in (("", "median of the runs"), ("_best", "best run: TCG puts whole runs into slower modes at random")):
    print()
    print("%s:" % what)
    print("| path MTU | test | WRITE | WRITE+READ+compare | verified WRITE | verified/(WRITE+READ) | verified/WRITE | verified, CRC32C |")
    print("|---|---|---|---|---|---|---|---|")
    for m in (1024, 4096):
        for s in (8, 4096, 65536):
            w, wr, v, c = (d.get("lat_%s_%d_mtu%d%s%s" % (k, s, m, y, x))
                           for k, y in (("write", ""), ("write_read", ""), ("verified", ""), ("verified", "_crc32c")))
            print("| %d | latency %d B (us) | %s | %s | %s | %s | %s | %s |" % (m, s, f(w), f(wr), f(v), r(v, wr), r(v, w), f(c)))
        w, v, c = (d.get("bw_%s_65536_mtu%d%s%s" % (k, m, y, x)) for k, y in (("write", ""), ("verified", ""), ("verified", "_crc32c")))
        print("| %d | bandwidth 64 KiB (MB/s) | %s | - | %s | - | %s | %s |" % (m, f(w), f(v), r(v, w), f(c)))
PY
fi
