#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end data checks with rrxe-verify: pipelined RDMA WRITEs each read back with RDMA
# READ and compared, and SEND-with-immediate streams checked message by message, across
# message sizes, path MTUs and pipeline depths.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require verify
ktap_set_plan 6
hosts_up
devs_up
ktap_check "WRITE+READ 64 KiB x200, 4 in flight, MTU 1024" verify -o write -s 65536 -n 200 -k 4
ktap_check "WRITE+READ 3001 B x300, 8 in flight, MTU 256" verify -o write -s 3001 -n 300 -k 8 -m 256
ktap_check "SEND 4 KiB x1000, 16 in flight" verify -o send -s 4096 -n 1000 -k 16
ktap_check "SEND 1 B x500" verify -o send -s 1 -n 500 -k 4
ip -n $NS0 link set va mtu 9000
ip -n $NS1 link set vb mtu 9000
ktap_check "WRITE+READ 1 MiB x20, MTU 4096" verify -o write -s 1048576 -n 20 -k 2 -m 4096
ip -n $NS0 link set va mtu 1500
ip -n $NS1 link set vb mtu 1500
ktap_check "WRITE+READ over the IPv6 GID" verify -o write -s 65536 -n 100 -k 4 -g 2
devs_down
ktap_finished
