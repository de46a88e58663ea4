#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# PID 1 of the rrxe test VM. The host's root file system is mounted read-only over 9p;
# this script makes the writable bits, installs the test kernel's modules plus rrxe.ko,
# then runs the job named by RRXE_MODE (check | demo | capture | perf | xfer | ab | blktests | interop | probe)
# and powers off.
# Results go to the 9p share "rrxeout" (the host reads them after the VM exits).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C LC_ALL=C

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# (devtmpfs has no /dev/fd or /dev/std*: udev makes them on a normal system, and
# kselftest's runner writes each test's output to /dev/stdout.)
ln -sfn /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# The repository or the cache may live under the host's /tmp (a fresh clone in CI): keep
# that reachable under /run/host-tmp before /tmp becomes the guest's own tmpfs.
mkdir -p /run/host-tmp
mount --bind /tmp /run/host-tmp
mount -t tmpfs tmpfs /tmp
case "$RRXE_REPO" in /tmp/*) RRXE_REPO=/run/host-tmp/${RRXE_REPO#/tmp/} ;; esac
case "$RRXE_KB" in /tmp/*) RRXE_KB=/run/host-tmp/${RRXE_KB#/tmp/} ;; esac
case "${RRXE_BLKTESTS:-}" in /tmp/*) RRXE_BLKTESTS=/run/host-tmp/${RRXE_BLKTESTS#/tmp/} ;; esac
mount -t tmpfs tmpfs /var/tmp
mount -t tmpfs tmpfs /var/log 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /tmp/out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 rrxeout /tmp/out
exec </dev/null >/dev/console 2>&1

poweroff_now() {
	sync
	echo o >/proc/sysrq-trigger
	# (The power-off may already have taken the 9p root away: no "Input/output error".)
	sleep 5 2>/dev/null
	echo b >/proc/sysrq-trigger
}

if [ "$RRXE_MODE" = probe ]; then
	echo ok >/tmp/out/probe
	poweroff_now
fi

# The host's root has no /lib/modules for this kernel and is read-only: install the test
# kernel's modules and rrxe.ko into a tmpfs root and make every modprobe (ours and the
# kernel's request_module) use it through a wrapper.
kver=$(uname -r)
modroot=/tmp/modroot
mkdir -p $modroot/lib/modules /tmp/bin
cp -a "$RRXE_KB/modroot/lib/modules/$kver" $modroot/lib/modules/
mkdir -p "$modroot/lib/modules/$kver/extra"
[ -f "$RRXE_REPO/rrxe.ko" ] && cp "$RRXE_REPO/rrxe.ko" "$modroot/lib/modules/$kver/extra/"
depmod -b $modroot "$kver"
printf '#!/bin/sh\nexec /usr/sbin/modprobe -d %s "$@"\n' $modroot >/tmp/bin/modprobe
# (modinfo too: the kernel's own selftests ask it whether a module exists.)
printf '#!/bin/sh\nexec /usr/sbin/modinfo -b %s "$@"\n' $modroot >/tmp/bin/modinfo
chmod +x /tmp/bin/modprobe /tmp/bin/modinfo
echo /tmp/bin/modprobe >/proc/sys/kernel/modprobe
export PATH=/tmp/bin:$PATH
# rdma_rxe and rrxe both report the rxe driver id: never let rdma_rxe load next to rrxe.
mkdir -p /run/modprobe.d
if [ "${RRXE_PROVIDER:-rrxe}" = rrxe ]; then
	printf 'blacklist rdma_rxe\ninstall rdma_rxe /bin/false\n' >/run/modprobe.d/rrxe.conf
fi
ip link set lo up
hostname rrxe-vm 2>/dev/null

cd "$RRXE_REPO" || { echo "init: cannot enter $RRXE_REPO"; poweroff_now; }
rc=0
case "$RRXE_MODE" in
check)
	# The selftests, installed by the host (lib/ksft-install.sh) and run by the kernel's
	# run_kselftest.sh, or with RRXE_RUNNER=make by `make run_tests` in the repository.
	# RRXE_TESTS (globs, comma-separated) selects scripts; RRXE_TEST_TIMEOUT overrides
	# the timeout of ./settings.
	sel=$(cd selftests && for g in ${RRXE_TESTS//,/ }; do ls -d $g; done)
	if [ "${RRXE_RUNNER:-}" = make ]; then
		make -s -C selftests run_tests ${sel:+TEST_PROGS="$(echo $sel)"}
	else
		args=()
		for t in $sel; do args+=(-t "rrxe:$t"); done
		[ -n "${RRXE_TEST_TIMEOUT:-}" ] && args+=(-o "$RRXE_TEST_TIMEOUT")
		/tmp/out/kselftest/run_kselftest.sh "${args[@]}"
	fi 2>&1 | {
		# After each script's result line, the seconds since the previous one (a
		# diagnostic line): CI has a time limit, and this shows where the VM run goes.
		t0=$SECONDS
		while IFS= read -r l; do
			printf '%s\n' "$l"
			case $l in
			*ok\ [0-9]*\ selftests:*)
				s=${l##*selftests: }; s=${s#* }
				echo "# ${s%% *} took $((SECONDS - t0)) s"
				t0=$SECONDS ;;
			esac
		done
	} | tee /tmp/out/results.tap
	rc=${PIPESTATUS[0]} ;;
demo) bash selftests/lib/demo.sh; rc=$? ;;
capture) bash selftests/lib/capture-rxe.sh; rc=$? ;;
perf) bash selftests/lib/perf.sh; rc=$? ;;
xfer) bash selftests/lib/xfer-bench.sh; rc=$? ;;
congestion) bash selftests/lib/congestion.sh; rc=$? ;;
vbench) bash selftests/lib/vbench.sh; rc=$? ;;
profile) bash selftests/lib/profile.sh; rc=$? ;;
ab) bash selftests/lib/ab.sh; rc=$? ;;
blktests) bash selftests/lib/blktests.sh; rc=$? ;;
interop) bash selftests/lib/interop.sh >/tmp/out/results.tap; rc=$? ;;
*) echo "init: unknown RRXE_MODE '$RRXE_MODE'"; rc=2 ;;
esac
dmesg >/tmp/out/dmesg.txt
echo "$rc" >/tmp/out/exit-code
poweroff_now
