# SPDX-License-Identifier: GPL-2.0
# Helpers of the verified-WRITE selftests (sourced after lib/ktap.sh).
DBG=/sys/kernel/debug
vknob() { # vknob <device> <name> [value]
	local f=$DBG/rrxe-$1/verify/$2
	if [ $# -gt 2 ]; then echo "$3" >"$f"; else cat "$f"; fi
}
# snap: every verify counter of both devices, as "dev.name=value" words.
snap() {
	local d c
	for d in rrxe0 rrxe1; do
		for c in verify_hello verify_negotiated verify_unnegotiated verify_sent verify_ok \
			verify_failed verify_skipped verify_faults verify_resent verify_errors \
			atomic_write duplicates; do
			echo "$d.$c=$(counter $d $c)"
		done
	done
}
# delta <dev.name>: how much a counter grew since the last `mark`.
mark() { BEFORE=$(snap); }
delta() {
	local now was
	now=$(snap | awk -F= -v k="$1" '$1 == k { print $2 }')
	was=$(echo "$BEFORE" | awk -F= -v k="$1" '$1 == k { print $2 }')
	echo $((now - was))
}
show() { echo "# $*: $(for k in "$@"; do printf '%s=%s ' "$k" "$(delta "$k")"; done)"; }

