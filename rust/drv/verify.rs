// SPDX-License-Identifier: GPL-2.0
//! Verified WRITE knobs a device's QPs share: one debugfs file each,
//! `rrxe-<dev>/verify/<name>` ([`crate::proto::verify::PARAMS`]); the default of
//! `enable` is the module parameter `verify`. The mechanism itself is the protocol
//! core's ([`crate::proto::verify`]) and the QP's (requester, completer, responder).

use crate::proto::verify::{clamp, idx, Alg, NPARAMS, PARAMS};
use kernel::debugfs::ScopedDir;
use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::atomic::{Atomic, Relaxed};

/// The device's verification knobs, in [`PARAMS`] order.
pub(crate) struct VerifyKnobs {
    v: [Atomic<u32>; NPARAMS],
}

/// A snapshot of the knobs, each within its range.
#[derive(Clone, Copy)]
pub(crate) struct VerifyParams([u32; NPARAMS]);

impl VerifyParams {
    fn get(&self, i: usize) -> u32 {
        clamp(i, self.0.get(i).copied().unwrap_or(0))
    }

    /// New connections offer verified WRITEs.
    pub(crate) fn enabled(&self) -> bool {
        self.get(idx::ENABLE) != 0
    }

    /// Resends of a WRITE whose check failed.
    pub(crate) fn retries(&self) -> u32 {
        self.get(idx::RETRIES)
    }

    /// Clean checks in a row after which read-backs are skipped (0: never).
    pub(crate) fn skip_after(&self) -> u32 {
        self.get(idx::SKIP_AFTER)
    }

    /// Fault injection, per million verified WRITEs.
    pub(crate) fn fault_ppm(&self) -> u32 {
        self.get(idx::FAULT_PPM)
    }

    /// The CRC this device's requesters send.
    pub(crate) fn alg(&self) -> Alg {
        u8::try_from(self.get(idx::CRC))
            .ok()
            .and_then(Alg::from_wire)
            .unwrap_or_default()
    }
}

impl VerifyKnobs {
    /// Knobs at the table's defaults, `enable` from the module parameter `verify`.
    pub(crate) fn new() -> VerifyKnobs {
        let m = crate::module_parameters::verify.value();
        VerifyKnobs {
            v: core::array::from_fn(|i| {
                let d = PARAMS.get(i).map_or(0, |p| p.default);
                Atomic::new(if i == idx::ENABLE { clamp(i, m) } else { d })
            }),
        }
    }

    /// The current values.
    pub(crate) fn params(&self) -> VerifyParams {
        VerifyParams(core::array::from_fn(|i| {
            self.v.get(i).map_or(0, |v| v.load(Relaxed))
        }))
    }

    /// One read-write file per knob in `dir/verify/`.
    pub(crate) fn populate<'d>(&'d self, dir: &ScopedDir<'d, '_>) {
        let sub = dir.dir(c"verify");
        for (info, v) in PARAMS.iter().zip(self.v.iter()) {
            if let Ok(n) = CString::try_from_fmt(fmt!("{}", info.name)) {
                sub.read_write_file(&n, v);
            }
        }
    }
}
