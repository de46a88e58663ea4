#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Deregistering a memory region under a peer's RDMA WRITEs: rrxe-verify streams WRITEs of
# 1124 bytes (two packets at path MTU 1024, the second small enough for the receive
# softirq to process at once) into the server's MR, and the server deregisters it after
# 200 ms. The client must get a remote access error, and the server's buffer must not
# change after ibv_dereg_mr returned: a WRITE in progress must not go on into memory that
# is no longer registered. Pinned and on-demand-paged MRs.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify
ktap_set_plan 2
hosts_up
devs_up
d0=$(counter rrxe1 mr_release_later)
ktap_check "pinned MR deregistered under WRITEs: access error, buffer unchanged" \
	verify -o dereg -s 1124 -n 1000000 -k 8 -m 1024
ktap_check "on-demand-paged MR deregistered under WRITEs: access error, buffer unchanged" \
	verify -O -o dereg -s 1124 -n 1000000 -k 8 -m 1024
echo "# user memory releases handed to a work item (the last reference went where" \
	"sleeping is not allowed): $(($(counter rrxe1 mr_release_later) - d0))"
devs_down
ktap_finished
