#!/usr/bin/env bash
# Prints where the build artefacts are, one KEY=value per line (builds the kernel if needed).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/env.sh"
echo "KDIR=$(bash "$here/scripts/kernel.sh")"
echo "MODULE=$here/rrxe.ko"
