#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On-demand paging: memory regions registered with IBV_ACCESS_ON_DEMAND are not pinned;
# the kernel invalidates their pages whenever it changes a mapping, and rrxe faults them
# back in. rrxe-verify moves checked data through such MRs on both sides while each
# process forks every few milliseconds (every fork write-protects the process's pages
# for copy-on-write: an invalidation of every on-demand page, and the next write to a
# page copies it). The data must arrive intact, and the counters must show pages
# invalidated and faulted back in; also for SENDs into a shared receive queue, whose
# WQEs are taken from the queue at a message's first packet. A WRITE into a page the
# server unmapped must fail with a remote access error instead of waiting for a fault
# that cannot happen.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify
ktap_set_plan 8
hosts_up
devs_up
# nonzero: the counters of both devices that are not zero (diagnostics).
nonzero() {
	local d
	for d in rrxe0 rrxe1; do
		echo "# $d: $(rdma statistic show link $d/1 | tr -s ' \n' '\n\n' |
			awk 'n++ >= 2 { if (k == "") k = $0; else { if ($0 != 0) printf "%s=%s ", k, $0; k = "" } }')"
	done
}
# both <counter>: the sum over the two devices (each counts its own MRs' pages).
both() { echo $(( $(counter rrxe0 "$1") + $(counter rrxe1 "$1") )); }
odp_caps() { in0 ibv_devinfo -d rrxe0 -v | grep -A1 general_odp_caps | grep -qw ODP_SUPPORT; }
ktap_check "device advertises on-demand paging" odp_caps
f0=$(both odp_faulted) i0=$(both odp_invalidated)
ktap_check "WRITE+READ 64 KiB x200 through ODP MRs" verify -O -o write -s 65536 -n 200 -k 4
f1=$(both odp_faulted)
echo "# pages faulted in: $((f1 - f0))"
ktap_check "registration faults the pages in" test "$f1" -gt "$f0"
ktap_check "WRITE+READ 16 KiB x1000, both sides forking every 5 ms" \
	verify -O -F 5 -o write -s 16384 -n 1000 -k 8
nonzero
f2=$(both odp_faulted) i2=$(both odp_invalidated)
echo "# pages invalidated: $((i2 - i0)), faulted in: $((f2 - f1))," \
	"RNR NAKs for pages being faulted in: $(both odp_rnr)," \
	"waits: $(both odp_wait)"
ktap_check "forks invalidated pages, which were faulted back in" \
	test $((i2 - i0)) -gt 0 -a $((f2 - f1)) -gt 0
ktap_check "SEND 4 KiB x1000 through ODP MRs, forking every 5 ms" \
	verify -O -F 5 -o send -s 4096 -n 1000 -k 16
ktap_check "SEND 16 KiB x500 into an SRQ through ODP MRs, forking every 5 ms" \
	verify -O -F 5 -Q -o send -s 16384 -n 500 -k 16
ktap_check "a WRITE into an unmapped page of an ODP MR gets a remote access error" \
	verify -O -o hole -s 4096 -n 1 -k 2
devs_down
ktap_finished
