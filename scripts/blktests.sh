#!/usr/bin/env bash
# `make blktests`: blktests' nvme group with the rdma transport (nvme_trtype=rdma, target
# and host on one device of one host) on rrxe, rdma_rxe and siw, one boot each (rrxe and
# rdma_rxe never share a kernel), then one table: pass, skip ("not run") or fail per test
# and provider, and the reasons blktests gave for what it did not run.
#
# blktests is not packaged; it is a git tree on this host, RRXE_BLKTESTS (default
# $RRXE_CACHE/blktests), e.g.
#   git clone https://github.com/linux-blktests/blktests /var/cache/rrxe/blktests
# Its helper programs (src/) are built here with `make -C src`; nothing in it is changed.
# It is not part of `make check`: each boot takes 30 to 60 minutes under TCG.
# RRXE_BLK_PROVIDERS (default "rrxe rxe siw") and RRXE_BLK_TESTS (default "nvme", any
# ./check arguments) narrow a run; RRXE_BLK_KEEP=dir keeps every provider's results.
# Exit status: 0 when rrxe passes every test rdma_rxe passes and fails none that
# rdma_rxe does not fail too.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"
export RRXE_BLKTESTS=${RRXE_BLKTESTS:-$RRXE_CACHE/blktests}
[ -x "$RRXE_BLKTESTS/check" ] || {
	echo "blktests: no blktests tree at $RRXE_BLKTESTS (set RRXE_BLKTESTS; see scripts/blktests.sh)" >&2
	exit 2
}
make -s -C "$RRXE_BLKTESTS/src" >/dev/null || { echo "blktests: building $RRXE_BLKTESTS/src failed" >&2; exit 1; }
res=${RRXE_BLK_KEEP:-$(mktemp -d)}
[ -n "${RRXE_BLK_KEEP:-}" ] || trap 'rm -rf "$res"' EXIT
mkdir -p "$res"
provs=${RRXE_BLK_PROVIDERS:-rrxe rxe siw}
# (The guest gets it on the kernel command line, where a space would end it.)
[ -n "${RRXE_BLK_TESTS:-}" ] && export RRXE_BLK_TESTS=${RRXE_BLK_TESTS// /,}
for p in $provs; do
	echo "== blktests: $p" >&2
	start=$(date +%s)
	rm -rf "${res:?}/$p"
	RRXE_PROVIDER=$p RRXE_KEEP_OUT="$res/$p" RRXE_VM_TIMEOUT=${RRXE_VM_TIMEOUT:-5400} RRXE_VM_MEM=${RRXE_VM_MEM:-3G} \
		bash "$here/selftests/lib/bench.sh" blktests >"$res/$p.log" 2>&1 ||
		echo "blktests: the $p boot reported a problem (see $res/$p.log)" >&2
	echo "blktests: $p took $(($(date +%s) - start)) s" >&2
	grep -E '^blktests:' "$res/$p/blktests/check.log" "$res/$p.log" 2>/dev/null | sed 's/^[^:]*://' | sort -u >&2
done
python3 - "$res" $provs <<'PY'
import os, re, sys
res, provs = sys.argv[1], sys.argv[2:]
names = {"rrxe": "rrxe", "rxe": "rdma_rxe", "siw": "siw"}
# "nvme/010 (tr=rdma bd=file) (run data verification fio job) [passed]": one row per test
# and parameter set (less the transport, rdma in every row).
line = re.compile(r'^(\S+/\d+)(?: \(([a-z_]+=[^)]*)\))?.*\[(passed|not run|failed)\]')
short = {"passed": "pass", "not run": "skip", "failed": "FAIL"}
results, reasons = {}, {}
for p in provs:
    r = results[p] = {}
    try:
        text = open(os.path.join(res, p, "blktests", "check.log"), errors="replace").read()
    except OSError:
        continue
    last = None
    for l in re.sub(r'\x1b\[[0-9;]*[A-Za-z]', '', text).replace('\r', '\n').splitlines():
        m = line.match(l)
        if m:
            params = " ".join(x for x in (m.group(2) or "").split() if not x.startswith("tr="))
            last = (m.group(1) + " " + params).strip()
            r[last] = short[m.group(3)]
            continue
        # blktests indents the reasons for a skip and the details of a failure; of a
        # failure's diff against the expected output, the first changed line.
        if not (last and l.startswith("    ")) or r.get(last) == "pass":
            continue
        t = l.strip()
        if t.startswith(("runtime", "---", "+++", "@@")):
            continue
        mine = reasons.setdefault(last, {})
        if r.get(last) == "FAIL" and t[:1] in "+-" and not mine.get(p, "")[:1] in ("+", "-"):
            mine[p] = t
        else:
            mine.setdefault(p, t)
tests = sorted({t for r in results.values() for t in r}, key=lambda t: (t.split('/')[0], int(t.split('/')[1].split()[0]), t))
w = max([len(t) for t in tests] + [4])
print("%-*s  %s  %s" % (w, "test", "  ".join("%-8s" % names[p] for p in provs), "reason (first provider that did not pass)"))
for t in tests:
    why = next((reasons[t][p] for p in provs if p in reasons.get(t, {})), "")
    print("%-*s  %s  %s" % (w, t, "  ".join("%-8s" % results[p].get(t, "-") for p in provs), why[:70]))
print()
for p in provs:
    v = list(results[p].values())
    print("%-8s %d passed, %d failed, %d not run" % (names[p], v.count("pass"), v.count("FAIL"), v.count("skip")))
bad = []
if "rrxe" in provs:
    if not results["rrxe"]:
        bad.append("rrxe ran no test")
    # (A test that fails on rdma_rxe as well fails for the bench's sake, not rrxe's.)
    bad += ["rrxe fails " + t for t, s in results["rrxe"].items()
            if s == "FAIL" and results.get("rxe", {}).get(t) != "FAIL"]
    if "rxe" in provs:
        bad += ["rrxe does not pass %s, which rdma_rxe passes" % t
                for t, s in results["rxe"].items() if s == "pass" and results["rrxe"].get(t) != "pass"]
for b in bad:
    print("blktests: " + b)
sys.exit(1 if bad else 0)
PY
