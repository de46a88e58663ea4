# Sourced by every rrxe script: where things live and which versions we pin.
# The cache lives outside the repository; override with RRXE_CACHE.
RRXE_CACHE=${RRXE_CACHE:-/var/cache/rrxe}
KMAJ=7.3
KSRC=$RRXE_CACHE/linux-source-$KMAJ
BINDGEN_VERSION=0.73.2
RRXE_BINDGEN=$RRXE_CACHE/cargo/bin/bindgen
LLVM_SUFFIX=-19
export LIBCLANG_PATH=/usr/lib/llvm-19/lib
export PATH="$RRXE_CACHE/cargo/bin:$HOME/.cargo/bin:$PATH"
