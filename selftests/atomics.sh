#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RC atomics: fetch-and-add and compare-and-swap with every returned original value and the
# final remote word checked (rrxe-verify), and stock ib_atomic_bw/ib_atomic_lat.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify ib_atomic_bw ib_atomic_lat
ktap_set_plan 6
hosts_up
devs_up
ktap_check "FETCH_ADD x500 then CMP_SWAP x500, 1 outstanding, values checked" \
	verify -o atomic -n 500 -k 1
ktap_check "FETCH_ADD/CMP_SWAP with 16 outstanding, values checked" verify -o atomic -n 2000 -k 16
ktap_check "atomics over the IPv6 GID" verify -o atomic -n 200 -k 4 -g 2
ktap_check "ib_atomic_bw (FETCH_ADD)" perftest_pair ib_atomic_bw -x 1 -n 1000
ktap_check "ib_atomic_bw (CMP_AND_SWAP), 4 QPs" perftest_pair ib_atomic_bw -x 1 -n 500 -A CMP_AND_SWAP -q 4
echo "# rrxe0 so far: $(counters_nonzero rrxe0)"
ktap_check "ib_atomic_lat" perftest_pair ib_atomic_lat -x 1 -n 500
devs_down
ktap_finished
