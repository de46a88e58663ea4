#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernel's own rdma_rxe selftests (tools/testing/selftests/rdma/rxe_*.sh of the
# kernel source) against rrxe, each copied with the link type changed and nothing else
# (lib/kernel-rdma.sh), one case per script: the UDP socket per network namespace, IPv6,
# NETDEV_UNREGISTER, rping between namespaces and the port_xmit_data/port_rcv_data
# counters. rxe_netns_names.sh (device names across namespaces) runs in
# kernel-netns.sh, with the runner's whole timeout to itself.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
ksrc=$(ksrc_selftests rdma) || rrxe_skip "no kernel source with tools/testing/selftests/rdma (set KSRC)"
rrxe_require rping ping ss modinfo mod:tun mod:dummy exclusive
. lib/kernel-rdma.sh
# The runner gives this script 240 s; the scripts share 225 of them, 2 to 6 s each under
# TCG. On the debug kernel (SLOW) every command costs many times as much (rxe_ipv6.sh:
# 83 s, rxe_socket_with_netns.sh: 81 s), and the runner allows 1200 s.
kr_run $((225 * SLOW)) $(cd "$ksrc/rdma" && ls rxe_*.sh | grep -vx rxe_netns_names.sh)
ktap_finished
