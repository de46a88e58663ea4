#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job of `make blktests` (RRXE_MODE=blktests): blktests' nvme group with the rdma
# transport, target and host on one soft-RDMA device of one host, as blktests runs it.
# One provider per boot (RRXE_PROVIDER = rrxe, rxe or siw); blktests itself is a tree on
# the host (RRXE_BLKTESTS, its src/ built there), run unmodified with its results
# written to the results share (/tmp/out/blktests).
#
# blktests knows two soft-RDMA drivers: siw, and rdma_rxe when USE_RXE is set. For rrxe
# its rdma_rxe setup is pointed at rrxe by two small shims and nothing else:
#   - a modprobe alias, rdma_rxe -> rrxe, so `modprobe rdma_rxe` loads rrxe;
#   - an `rdma` command first in PATH that turns `rdma link add NAME type rxe ...` into
#     `... type rrxe ...` and runs the real one.
# The netdev blktests binds to is a dummy interface with an IPv4 address (the VM has
# no NIC); the test kernel's config is put where blktests looks for it (/boot).
prov=${RRXE_PROVIDER:-rrxe}
blk=${RRXE_BLKTESTS:?RRXE_BLKTESTS: where blktests is}
out=/tmp/out/blktests
mkdir -p "$out"

mount -t tmpfs tmpfs /boot
cp "$RRXE_KB/.config" "/boot/config-$(uname -r)"
mount -t configfs configfs /sys/kernel/config 2>/dev/null

case $prov in
rrxe)
	export USE_RXE=1
	# (init.sh blacklists rdma_rxe for rrxe's boots; an alias replaces that here.)
	echo 'alias rdma_rxe rrxe' >/run/modprobe.d/rrxe.conf
	mkdir -p /tmp/blk-bin
	real=$(command -v rdma)
	cat >/tmp/blk-bin/rdma <<-EOF
	#!/bin/bash
	# rdma(8) with the link type rxe read as rrxe (blktests' rdma_rxe setup on rrxe).
	args=()
	prev=
	for a in "\$@"; do
		[ "\$prev" = type ] && [ "\$a" = rxe ] && a=rrxe
		args+=("\$a")
		prev=\$a
	done
	exec $real "\${args[@]}"
	EOF
	chmod +x /tmp/blk-bin/rdma
	export PATH=/tmp/blk-bin:$PATH ;;
rxe) export USE_RXE=1 ;;
siw) unset USE_RXE ;;
*) echo "blktests: unknown provider $prov"; exit 2 ;;
esac

modprobe dummy || exit 1
ip link add blk0 type dummy &&
	ip addr add 10.0.12.1/24 dev blk0 &&
	ip link set blk0 up || exit 1

echo "blktests: $(cd "$blk" && git describe --always 2>/dev/null || echo "tree $blk"), provider $prov"
cd "$blk" || exit 1
# The namespace files live in the guest's tmpfs: 350 MiB is the largest size a test of
# the group asks for. TIMEOUT bounds the fio runs of the tests that honour it.
export nvme_trtype=rdma NVME_IMG_SIZE=${RRXE_BLK_IMG_SIZE:-350m} TIMEOUT=${RRXE_BLK_TIMEOUT:-30}
start=$SECONDS
tests=${RRXE_BLK_TESTS:-nvme}
# A watchdog: when ./check prints nothing for RRXE_BLK_STALL seconds (default 300), the
# kernel lists its blocked tasks (sysrq w), once, and the kernel log and the process list
# (state, wait channel) go to blktests/stall-dmesg.txt and stall-ps.txt in the results,
# so that a hang leaves more than the VM's timeout behind.
(
	last=0 still=0
	while sleep 10; do
		n=$(wc -c <"$out/check.log" 2>/dev/null || echo 0)
		if [ "$n" != "$last" ]; then
			last=$n still=0
			continue
		fi
		still=$((still + 10))
		if [ $still -ge "${RRXE_BLK_STALL:-300}" ]; then
			echo "blktests: no output for $still s: blocked tasks follow"
			echo w >/proc/sysrq-trigger
			sleep 2
			dmesg >"$out/stall-dmesg.txt"
			ps -eo pid,ppid,stat,wchan:32,etime,args >"$out/stall-ps.txt"
			break
		fi
	done
) &
watchdog=$!
./check -o "$out" ${tests//,/ } 2>&1 | tee "$out/check.log"
rc=${PIPESTATUS[0]}
kill $watchdog 2>/dev/null
echo "blktests: ./check exited $rc after $((SECONDS - start)) s"
# A failed test is a result, not a failure of the job: the host makes the table.
exit 0
