# SPDX-License-Identifier: GPL-2.0
#
# rrxe top-level entry points. `make run` builds everything and runs the demo in a VM;
# `make check` runs the host tests and the VM selftests. Both set the machine up first.
#
# Inside Kbuild (make -C $(KDIR) M=$(PWD)) only the Kbuild file is read, so this Makefile
# is purely the developer front end.

SHELL := /bin/bash
REPO := $(CURDIR)
SETUP := scripts/setup.sh
ENV := source scripts/env.sh

.PHONY: all setup kernel module lint host-test vm-test interop check check-debug run paths clean fmt bench ab fuzz profile blktests

all: module

setup:
	@bash $(SETUP)

# Prints the cached kernel build dir, building it on first use.
kernel: setup
	@bash scripts/kernel.sh >/dev/null

module: kernel
	@bash scripts/module.sh

# The kernel's clippy lints on the module; any warning fails (part of `make check`).
lint: kernel
	@bash scripts/module.sh lint

host-test: setup
	cd rust/proto && cargo test --release 2>&1
	cd rust/proto && cargo clippy --release --all-targets -- -D warnings 2>&1
	cd tools/rrxe-xfer && cargo test --release --locked 2>&1
	cd tools/rrxe-xfer && cargo clippy --release --locked --all-targets -- -D warnings 2>&1

vm-test: module
	@bash selftests/lib/bench.sh check

# rrxe in one VM, rdma_rxe in another, every operation in both directions.
interop: module
	@bash selftests/lib/bench.sh interop

# Host tests, then every selftest in a VM. The last line is "N passed, N failed, N skipped".
check: setup
	@bash scripts/check.sh

# Every VM selftest on the debug kernel (KASAN, kmemleak, lockdep, UBSAN, debug objects,
# failslab), built and cached beside the fast one; fails on any report.
check-debug: setup
	@bash scripts/check-debug.sh

run: module
	@bash selftests/lib/bench.sh demo

# Not a test: rrxe, rdma_rxe and siw in one run, one boot each, one table with ratios.
bench: module
	@bash scripts/bench.sh

# Not part of `make check`: blktests' nvme group over rdma on rrxe, rdma_rxe and siw, one
# boot each, one table (blktests is a git tree on the host: RRXE_BLKTESTS, see the script).
blktests: module
	@bash scripts/blktests.sh

# Not a test: an A/B of two builds in one boot under the instruction-counting clock,
# e.g. `make ab A=HEAD~1` (A and B: git revisions or .ko files; B defaults to this tree).
ab: module
	@bash scripts/ab.sh "$(A)" $(B)

# Not part of `make check`: every parser's fuzz target for FUZZ_SECONDS each (default
# 60), with cargo-fuzz on the nightly toolchain (both installed on first use).
FUZZ_SECONDS ?= 60
fuzz: setup
	@bash scripts/fuzz.sh $(FUZZ_SECONDS)

# Not a test: a flame graph of the data path (PROFILE=write_bw, write_lat or hostile;
# RRXE_KERNEL=debug for the debug kernel), perf in the guest, folded with inferno;
# `make profile SVG=path`.
profile: setup
	@bash scripts/profile.sh $(SVG)

paths: setup
	@bash scripts/paths.sh

fmt:
	rustfmt --config-path .rustfmt.toml rust/rrxe_main.rs rust/proto/src/lib.rs rust/proto/tests/*.rs

clean:
	@bash scripts/module.sh clean
	cd rust/proto && cargo clean
	cd tools/rrxe-xfer && cargo clean
