#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernel's rxe_netns_names.sh (tools/testing/selftests/rdma) against rrxe, copied
# with the link type changed and nothing else (lib/kernel-rdma.sh): the same RDMA device
# name in two network namespaces, moves that conflict, move then rename, renames within
# a namespace, and a namespace's deletion returning its device to init_net under a new
# name. It runs some 400 short rdma and ip commands: about 20 s under TCG, and on the
# debug kernel, where each costs seconds, 781 s, so it has the runner's whole timeout to
# itself (RRXE_TEST_TIMEOUT, less a minute for the cleanup).
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
ksrc=$(ksrc_selftests rdma) || rrxe_skip "no kernel source with tools/testing/selftests/rdma (set KSRC)"
[ -f "$ksrc/rdma/rxe_netns_names.sh" ] || rrxe_skip "this kernel source has no rdma/rxe_netns_names.sh"
rrxe_require modinfo mod:dummy exclusive
. lib/kernel-rdma.sh
kr_run $((SLOW > 1 ? ${RRXE_TEST_TIMEOUT:-1200} - 60 : 225)) rxe_netns_names.sh
ktap_finished
