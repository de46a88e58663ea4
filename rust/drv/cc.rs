// SPDX-License-Identifier: GPL-2.0
//! Congestion control state a device shares among its QPs: the knobs (one debugfs file
//! each, `rrxe-<dev>/cc_params/<name>`), the receiver's port statistics (total bytes and
//! active QPs, which CNPs to rrxe senders carry) and the delay-based algorithm's
//! per-destination registers, each with the rate limiter every QP to that destination
//! shares. The algorithms themselves are the protocol core's ([`crate::proto::cc`]).

use super::limits::CC_DESTS;
use crate::proto::cc::delay::{self, Case, DelayCc};
use crate::proto::cc::pacer::Pacer;
use crate::proto::cc::params::{idx, Params, NPARAMS, PARAMS};
use crate::proto::cc::Change;
use kernel::debugfs::ScopedDir;
use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::atomic::{Atomic, Relaxed};

/// The knobs of a new device: the table's defaults, the algorithm from the module
/// parameter `cc_algo`.
pub(crate) fn defaults() -> Params {
    let d = Params::DEFAULT;
    let mut v = [0u32; NPARAMS];
    for (i, o) in v.iter_mut().enumerate() {
        *o = d.get(i);
    }
    if let Some(a) = v.get_mut(idx::ALGO) {
        *a = crate::module_parameters::cc_algo.value();
    }
    Params::from_values(&v)
}

/// The device's congestion-control knobs, in [`PARAMS`] order. Userspace writes them at
/// any time; every reader clamps them ([`Params::from_values`]).
pub(crate) struct Knobs {
    v: [Atomic<u32>; NPARAMS],
}

impl Knobs {
    /// Knobs at `defaults`.
    pub(crate) fn new(defaults: &Params) -> Knobs {
        Knobs {
            v: core::array::from_fn(|i| Atomic::new(defaults.get(i))),
        }
    }

    /// The current values.
    pub(crate) fn params(&self) -> Params {
        let mut a = [0u32; NPARAMS];
        for (o, v) in a.iter_mut().zip(self.v.iter()) {
            *o = v.load(Relaxed);
        }
        Params::from_values(&a)
    }

    /// One read-write file per knob in `dir/cc_params/`. (Without memory for a name the
    /// knob keeps its value and has no file.)
    pub(crate) fn populate<'d>(&'d self, dir: &ScopedDir<'d, '_>) {
        let sub = dir.dir(c"cc_params");
        for (info, v) in PARAMS.iter().zip(self.v.iter()) {
            if let Ok(n) = CString::try_from_fmt(fmt!("{}", info.name)) {
                sub.read_write_file(&n, v);
            }
        }
    }
}

/// One destination of the delay-based algorithm: its address, the QPs attached, the
/// register of one-way delays and the rate limiter they share.
struct Dest {
    addr: [u8; 16],
    qps: u32,
    cc: DelayCc,
    pacer: Pacer,
}

/// The per-destination table (a fixed number of entries, allocated with the device).
pub(crate) struct Dests {
    e: KVec<Option<Dest>>,
}

impl Dests {
    /// An empty table.
    pub(crate) fn new() -> Result<Dests> {
        let mut e = KVec::with_capacity(CC_DESTS, GFP_KERNEL)?;
        for _ in 0..CC_DESTS {
            e.push(None, GFP_KERNEL)?;
        }
        Ok(Dests { e })
    }

    fn active(&self) -> u32 {
        self.e.iter().flatten().filter(|d| d.qps != 0).count() as u32
    }

    /// A QP to `addr` starts sending: its destination's index (a new destination's share
    /// is an even split of the line rate over the active destinations, which it reaches
    /// by slow start: [`DelayCc::new`]). `None` when
    /// the table is full: that QP is not paced.
    pub(crate) fn attach(&mut self, addr: &[u8; 16], now: u64, p: &Params) -> Option<usize> {
        if let Some(i) = self
            .e
            .iter()
            .position(|d| d.as_ref().is_some_and(|d| d.addr == *addr))
        {
            if let Some(Some(d)) = self.e.get_mut(i) {
                d.qps = d.qps.saturating_add(1);
            }
            return Some(i);
        }
        let split = delay::split(p.max_rate(), self.active().saturating_add(1));
        let i = self
            .e
            .iter()
            .position(|d| d.as_ref().is_none_or(|d| d.qps == 0))?;
        let cc = DelayCc::new(now, split, p);
        let mut pacer = Pacer::new(p.pacer_burst());
        pacer.set_rate(now, cc.rate());
        *self.e.get_mut(i)? = Some(Dest {
            addr: *addr,
            qps: 1,
            cc,
            pacer,
        });
        Some(i)
    }

    /// A QP attached to destination `i` stops (reset, destroy).
    pub(crate) fn detach(&mut self, i: usize) {
        if let Some(Some(d)) = self.e.get_mut(i) {
            d.qps = d.qps.saturating_sub(1);
        }
    }

    /// Admits `bytes` to destination `i` now, or says how long to wait.
    pub(crate) fn take(&mut self, i: usize, now: u64, bytes: u32, p: &Params) -> Result<(), u64> {
        match self.e.get_mut(i) {
            Some(Some(d)) => {
                d.pacer.set_burst(p.pacer_burst());
                d.pacer.take(now, bytes)
            }
            _ => Ok(()),
        }
    }

    /// One timestamp echo from destination `i`: the four-case rule sets its rate.
    pub(crate) fn sample(
        &mut self,
        i: usize,
        now: u64,
        fwd_us: i32,
        rev_us: i32,
        p: &Params,
    ) -> (Case, Change) {
        let Some(Some(d)) = self.e.get_mut(i) else {
            return (Case::Hold, Change::Same);
        };
        let r = d.cc.on_sample(now, fwd_us, rev_us, p);
        d.pacer.set_rate(now, d.cc.rate());
        r
    }

    /// Destination `i`'s current rate (bytes per second; 0 for no entry).
    pub(crate) fn rate(&self, i: usize) -> u64 {
        match self.e.get(i) {
            Some(Some(d)) => d.cc.rate(),
            _ => 0,
        }
    }
}
