#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rrxe-xfer -r: a tree of 1,000 small files (0 to 3 KB, ten directories of seven each,
# and an empty directory) fetched with get -r and sent back with put -r, both compared
# with diff -r.
cd "$(dirname "$0")" && . lib/ktap.sh
ktap_print_header
rrxe_require xfer diff python3
ktap_set_plan 3
hosts_up
devs_up
S=$TMPD/srv C=$TMPD/cli
mkdir -p "$S" "$C"
python3 - "$S/tree" <<'PY'
import os, random, sys
r = random.Random(25)
for i in range(1000):
    d = os.path.join(sys.argv[1], "d%d" % (i % 10), "e%d" % (i % 7))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "file%d" % i), "wb") as f:
        f.write(r.randbytes(i * 37 % 3000))
os.makedirs(os.path.join(sys.argv[1], "empty"))
PY
xfer_serve "$S"
get_tree() {
	xfer_ok get -r $IP1:tree "$C/" || return 1
	echo "# $(grep 'bytes in' "$TMPD/xfer.out")"
	diff -r "$S/tree" "$C/tree" >/dev/null && [ -d "$C/tree/empty" ]
}
ktap_check "get -r a tree of 1,000 small files" get_tree
put_tree() {
	xfer_ok put -r "$C/tree" $IP1:back/ || return 1
	echo "# $(grep 'bytes in' "$TMPD/xfer.out")"
	diff -r "$S/tree" "$S/back/tree" >/dev/null && [ -d "$S/back/tree/empty" ]
}
ktap_check "put -r the tree back" put_tree
ktap_eq "1,000 files arrived each way" "1000 1000" \
	"$(find "$C/tree" -type f | wc -l) $(find "$S/back/tree" -type f | wc -l)"
devs_down
ktap_finished
