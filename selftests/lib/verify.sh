# SPDX-License-Identifier: GPL-2.0
# Helpers of the verified-WRITE selftests (sourced after lib/ktap.sh).
DBG=/sys/kernel/debug
vknob() { # vknob <device> <name> [value]
	local f=$DBG/rrxe-$1/verify/$2
	if [ $# -gt 2 ]; then echo "$3" >"$f"; else cat "$f"; fi
}
# snap: every verify counter of both devices, as "dev.name=value" words (one
# `rdma statistic` per device: each run costs a fraction of a second under TCG).
snap() {
	local d
	for d in rrxe0 rrxe1; do
		rdma statistic show link "$d"/1 | tr ' ' '\n' | awk -v d="$d" '
			BEGIN { split("verify_hello verify_negotiated verify_unnegotiated verify_sent " \
				"verify_ok verify_failed verify_skipped verify_faults verify_resent " \
				"verify_errors atomic_write duplicates", ks, " "); for (i in ks) want[ks[i]] = 1 }
			p { print d "." k "=" $0; p = 0; next }
			$0 in want { k = $0; p = 1 }'
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

