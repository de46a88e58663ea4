// SPDX-License-Identifier: GPL-2.0
//! Device state the QPs and the packet path share: the network namespace, counters, the
//! MR and address-handle tables, the reassembly budget, the atomic lock and the records
//! of recently destroyed QPs. (The QP table is the device's own: see `device`.)

use super::cc::{Dests, Knobs};
use super::fault::FaultPoint;
use super::limits::{AH_TABLE, CLOSED_MAX, MR_TABLE, MW_TABLE, REASM_DEV_MAX};
use super::res::{Ah, Mr, Mw};
use super::stats::Stats;
use super::tx::{self, Path, Payload, TxPkt};
use super::verify::{VerifyKnobs, VerifyParams};
use crate::kabi::lock::{new_spinlock_bh, new_spinlock_irq, SpinLockBh, SpinLockIrq};
use crate::kabi::mem::UmemCounts;
use crate::kabi::netdev::NetNs;
use crate::kabi::timer::Deadline;
use crate::proto::bth::Bth;
use crate::proto::cc::params::Params;
use crate::proto::cc::share::Port;
use crate::proto::mr::{self, KeyError};
use crate::proto::mw;
use crate::proto::packet::Ext;
use crate::proto::psn::Psn;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::debugfs::Scope;
use kernel::prelude::*;
use kernel::str::CString;
use kernel::sync::Arc;

/// How far before a destroyed QP's expected PSN a request may be (a peer has far fewer
/// requests in flight).
const CLOSED_PSNS: i32 = 1 << 16;

/// Objects named by keys (`index << 8 | generation`): MRs from index 1, memory windows
/// from [`mw::FIRST_INDEX`] on, so that a key says which table it names.
struct KeyTable<T> {
    slots: KVec<Option<Arc<T>>>,
    used: KVec<bool>,
    /// The index of slot 0.
    base: u32,
}

impl<T> KeyTable<T> {
    /// `n` slots for indices from `base`; `first_unused` keeps slot 0 unused (index 0
    /// would give key 0x000000xx, and lkey 0 must never resolve).
    fn new(n: usize, base: u32, first_unused: bool) -> Result<Self> {
        let mut used = filled(n, false)?;
        if first_unused {
            if let Some(u) = used.first_mut() {
                *u = true;
            }
        }
        Ok(KeyTable {
            slots: filled(n, None)?,
            used,
            base,
        })
    }

    /// Reserves a free slot; returns it and its key at generation `gen`.
    fn reserve(&mut self, gen: u8) -> Option<(usize, u32)> {
        let i = self.used.iter().position(|u| !u)?;
        *self.used.get_mut(i)? = true;
        Some((i, mr::make_key(self.base + i as u32, gen)))
    }

    fn slot(&self, key: u32) -> Option<usize> {
        mr::index(key).checked_sub(self.base).map(|i| i as usize)
    }

    fn get(&self, key: u32) -> Option<Arc<T>> {
        self.slots.get(self.slot(key)?)?.clone()
    }

    /// Empties the slot `key` names if `is` holds for what it holds.
    fn take(&mut self, key: u32, is: impl Fn(&T) -> bool) -> Option<Arc<T>> {
        let i = self.slot(key)?;
        let old = self.slots.get_mut(i).and_then(|s| {
            if s.as_deref().is_some_and(&is) {
                s.take()
            } else {
                None
            }
        });
        if old.is_some() {
            if let Some(u) = self.used.get_mut(i) {
                *u = false;
            }
        }
        old
    }
}

struct Tables {
    mrs: KeyTable<Mr>,
    mws: KeyTable<Mw>,
    key_gen: u8,
    /// Recently destroyed RC QPs (see [`Closed`]), reused round-robin from `closed_next`.
    closed: KVec<Option<Closed>>,
    closed_next: usize,
}

/// An RC QP destroyed while connected: enough to acknowledge its peer's retransmissions
/// of requests it had executed, for `CLOSED_US`. A peer whose last ACK was lost would
/// otherwise retry into a QPN that no longer answers: `ibv_rc_pingpong`'s server exits
/// right after its last receive, and under loss its client then failed or, with
/// `retry_cnt` 7 (unlimited in rdma_rxe and rrxe), retried until killed.
#[derive(Clone)]
pub(crate) struct Closed {
    pub(crate) qpn: u32,
    pub(crate) dest_qpn: u32,
    /// Requests before this PSN were executed (the ACK names the one before it).
    pub(crate) resp_psn: Psn,
    pub(crate) msn: u32,
    pub(crate) path: Arc<Path>,
    pub(crate) until: Deadline,
}

/// The device's run-time knobs (debugfs `rrxe-<dev>/`): congestion control in
/// `cc_params/`, verified WRITEs in `verify/`, fault points for tests in `fault/`.
pub(crate) struct DevKnobs {
    cc: Knobs,
    verify: VerifyKnobs,
    /// Fault points for tests (allocation failures, a held QP).
    pub(crate) fault: FaultPoint,
}

impl DevKnobs {
    /// Congestion-control knobs.
    pub(crate) fn params(&self) -> Params {
        self.cc.params()
    }

    /// Verified-WRITE knobs.
    pub(crate) fn verify(&self) -> VerifyParams {
        self.verify.params()
    }

    fn populate<'d>(&'d self, dir: &kernel::debugfs::ScopedDir<'d, '_>) {
        self.cc.populate(dir);
        self.verify.populate(dir);
        self.fault.populate(dir);
    }
}

/// Device state shared with QPs and the packet path.
#[pin_data]
pub(crate) struct DevShared {
    pub(crate) net: NetNs,
    pub(crate) stats: Stats,
    #[pin]
    tables: SpinLockBh<Tables>,
    /// Serialises the responder's atomic operations (atomicity among this device's
    /// atomics, as `IB_ATOMIC_HCA` promises).
    #[pin]
    pub(crate) atomic: SpinLockBh<()>,
    /// Address handles by number. Kernel consumers create and destroy AHs with
    /// interrupts disabled (the CM does, under its own locks).
    #[pin]
    ahs: SpinLockIrq<KVec<Option<Arc<Ah>>>>,
    /// Congestion-control and verification knobs, with their debugfs files.
    #[pin]
    pub(crate) knobs: Scope<DevKnobs>,
    /// Receiver: bytes and active QPs of the port (what CNPs to rrxe senders carry).
    #[pin]
    pub(crate) port: SpinLockBh<Port>,
    /// Sender: the delay-based algorithm's destinations.
    #[pin]
    pub(crate) dests: SpinLockBh<Dests>,
    /// On-demand-paged MRs registered: while there are none, the engine skips the
    /// residency checks (see [`Mr::resident`]).
    odp_mrs: AtomicU32,
    /// What the binding layer counts of this device's user memory.
    pub(crate) umem: Arc<UmemCounts>,
}

/// A vector of `n` copies of `v`.
pub(crate) fn filled<T: Clone>(n: usize, v: T) -> Result<KVec<T>> {
    let mut k = KVec::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        k.push(v.clone(), GFP_KERNEL)?;
    }
    Ok(k)
}

impl DevShared {
    /// Device state for the device `name` (its debugfs directory is `rrxe-<name>`), with
    /// congestion-control knobs at `cc`.
    pub(crate) fn new(net: NetNs, name: &CStr, cc: &Params) -> Result<Arc<DevShared>> {
        let dir = CString::try_from_fmt(fmt!("rrxe-{}", name.to_str().unwrap_or("?")))?;
        let dests = Dests::new()?;
        let mrs = KeyTable::new(MR_TABLE, 0, true)?;
        let mws = KeyTable::new(MW_TABLE, mw::FIRST_INDEX, false)?;
        let ah_table = filled(AH_TABLE, None)?;
        let closed = filled(CLOSED_MAX, None)?;
        let umem = Arc::new(UmemCounts::default(), GFP_KERNEL)?;
        Arc::pin_init(
            try_pin_init!(DevShared {
                net,
                stats: Stats::new(),
                tables <- new_spinlock_bh!(Tables {
                    mrs,
                    mws,
                    key_gen: 0,
                    closed,
                    closed_next: 0
                }),
                atomic <- new_spinlock_bh!(()),
                ahs <- new_spinlock_irq!(ah_table),
                knobs <- Scope::dir(
                    DevKnobs {
                        cc: Knobs::new(cc),
                        verify: VerifyKnobs::new(),
                        fault: FaultPoint::new(),
                    },
                    &dir,
                    |k, d| k.populate(d)
                ),
                port <- new_spinlock_bh!(Port::new()),
                dests <- new_spinlock_bh!(dests),
                odp_mrs: AtomicU32::new(0),
                umem,
            }),
            GFP_KERNEL,
        )
    }

    /// Sends a packet without payload (requests, acknowledgements); a failure is like a
    /// loss on the wire, which the protocol recovers.
    pub(crate) fn xmit_hdr(&self, path: &Path, bth: Bth, ext: Ext) {
        let _ = self.xmit(
            path,
            &TxPkt {
                bth,
                ext,
                payload: Payload::None,
            },
        );
    }

    /// Builds and sends one packet on `path` (see [`tx::xmit`]); one the stack refused
    /// is lost, as on the wire, and the protocol recovers it.
    pub(crate) fn xmit(&self, path: &Path, p: &TxPkt<'_>) -> core::result::Result<(), u32> {
        self.xmit_or_busy(path, p).map(|_| ())
    }

    /// As [`DevShared::xmit`], but `Ok(false)` when the stack refused the packet at once
    /// (see [`tx::xmit`]).
    pub(crate) fn xmit_or_busy(
        &self,
        path: &Path,
        p: &TxPkt<'_>,
    ) -> core::result::Result<bool, u32> {
        tx::xmit(&self.stats, self.alloc_fails(), path, p)
    }

    /// Whether the fault point fails the packet-path allocation about to be made (each
    /// injected failure counted in `fault_alloc`).
    pub(crate) fn alloc_fails(&self) -> bool {
        let fail = self.knobs.fault.fail();
        if fail {
            self.stats.fault_alloc.inc();
        }
        fail
    }

    /// Reserves `n` bytes of the device's reassembly budget.
    pub(crate) fn reasm_reserve(&self, n: usize) -> bool {
        let n = n as u64;
        let now = self.stats.reasm_bytes.add(n);
        if now > REASM_DEV_MAX {
            self.stats.reasm_bytes.sub(n);
            return false;
        }
        self.stats.reasm_high.raise(now);
        true
    }

    /// Returns `n` bytes to the device's reassembly budget.
    pub(crate) fn reasm_release(&self, n: usize) {
        self.stats.reasm_bytes.sub(n as u64);
    }

    /// Remembers a destroyed QP (replacing an older record of the same QPN, else the
    /// oldest slot).
    pub(crate) fn remember_closed(&self, c: Closed) {
        let old = {
            let mut t = self.tables.lock();
            let at = t
                .closed
                .iter()
                .position(|e| e.as_ref().is_some_and(|e| e.qpn == c.qpn));
            let i = at.unwrap_or(t.closed_next);
            if at.is_none() {
                t.closed_next = (t.closed_next + 1) % CLOSED_MAX;
            }
            t.closed.get_mut(i).and_then(|e| e.replace(c))
        };
        // (The old record's route is released outside the lock.)
        drop(old);
    }

    /// The record of destroyed QP `qpn` if it is recent and `psn` names a request it
    /// executed: its path, peer QPN, ACK PSN and MSN.
    pub(crate) fn closed_for(&self, qpn: u32, psn: Psn) -> Option<(Arc<Path>, u32, Psn, u32)> {
        let t = self.tables.lock();
        t.closed
            .iter()
            .flatten()
            .find(|e| {
                e.qpn == qpn
                    && e.until.pending()
                    && (1..=CLOSED_PSNS).contains(&e.resp_psn.diff(psn))
            })
            .map(|e| (e.path.clone(), e.dest_qpn, e.resp_psn.sub(1), e.msn))
    }

    /// Reserves an index and key in the table `table` picks, builds the object with
    /// `make(key)` and publishes it.
    fn insert<T>(
        &self,
        table: impl Fn(&mut Tables) -> &mut KeyTable<T>,
        make: impl FnOnce(u32) -> Result<Arc<T>>,
    ) -> Result<(Arc<T>, u32)> {
        let (i, key) = {
            let mut t = self.tables.lock();
            t.key_gen = t.key_gen.wrapping_add(1);
            let gen = t.key_gen;
            table(&mut t).reserve(gen).ok_or(ENOMEM)?
        };
        let obj = make(key);
        let mut t = self.tables.lock();
        let tab = table(&mut t);
        match &obj {
            Ok(o) => {
                if let Some(s) = tab.slots.get_mut(i) {
                    *s = Some(o.clone());
                }
            }
            Err(_) => {
                if let Some(u) = tab.used.get_mut(i) {
                    *u = false;
                }
            }
        }
        drop(t);
        Ok((obj?, key))
    }

    /// Reserves an MR index and key, builds the MR with `make(key)` and publishes it.
    pub(crate) fn insert_mr(
        &self,
        make: impl FnOnce(u32) -> Result<Arc<Mr>>,
    ) -> Result<(Arc<Mr>, u32)> {
        self.insert(|t| &mut t.mrs, make)
    }

    /// Whether any on-demand-paged MR is registered.
    pub(crate) fn has_odp(&self) -> bool {
        self.odp_mrs.load(Ordering::Relaxed) != 0
    }

    /// An on-demand-paged MR was registered (`true`) or deregistered.
    pub(crate) fn odp_mr(&self, added: bool) {
        if added {
            self.odp_mrs.fetch_add(1, Ordering::Relaxed);
        } else {
            self.odp_mrs.fetch_sub(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn remove_mr(&self, key: u32) {
        let old = self.tables.lock().mrs.take(key, |m| m.key == key);
        // (Released outside the lock: the last reference may unpin user memory.)
        drop(old);
    }

    /// Reserves a memory-window index and key, builds the window with `make(key)` and
    /// publishes it.
    pub(crate) fn insert_mw(
        &self,
        make: impl FnOnce(u32) -> Result<Arc<Mw>>,
    ) -> Result<(Arc<Mw>, u32)> {
        self.insert(|t| &mut t.mws, make)
    }

    /// Removes the window allocated with key `key`.
    pub(crate) fn remove_mw(&self, key: u32) {
        let old = self.tables.lock().mws.take(key, |w| w.key == key);
        drop(old);
    }

    /// The MR and the address in it that a peer's access with `rkey` to `n` bytes at
    /// `va`, needing `need`, reaches through QP `qpn` of PD `pd` (directly, or through
    /// a memory window).
    pub(crate) fn remote(
        &self,
        rkey: u32,
        pd: usize,
        qpn: u32,
        need: i32,
        va: u64,
        n: u64,
    ) -> Option<(Arc<Mr>, u64)> {
        let (mr, at) = if mw::is_mw(rkey) {
            let w = self.tables.lock().mws.get(rkey)?;
            w.target(rkey, pd, qpn, need as u32, va, n)?
        } else {
            (self.lookup_mr(rkey, pd, need)?, va)
        };
        mr.covers(at, n).then_some((mr, at))
    }

    /// The MR for `key` if it belongs to PD `pd` and allows every bit of `need`.
    pub(crate) fn lookup_mr(&self, key: u32, pd: usize, need: i32) -> Option<Arc<Mr>> {
        let mr = self.mr_at(key)?;
        mr.admits(key, pd, need).then_some(mr)
    }

    /// The MR in the table entry `key` names (whatever its current key).
    pub(crate) fn mr_at(&self, key: u32) -> Option<Arc<Mr>> {
        self.tables.lock().mrs.get(key)
    }

    /// The memory window in the table entry `key` names.
    pub(crate) fn mw_at(&self, key: u32) -> Option<Arc<Mw>> {
        self.tables.lock().mws.get(key)
    }

    /// `IB_WR_LOCAL_INV` or a SEND with invalidate from a QP of PD `pd`: invalidates
    /// the fast-registration MR or the type 2 memory window whose current key is `key`.
    pub(crate) fn invalidate(&self, key: u32, pd: usize) -> core::result::Result<(), KeyError> {
        if mw::is_mw(key) {
            let w = self.mw_at(key).ok_or(KeyError::Stale)?;
            if w.pd != pd {
                return Err(KeyError::WrongPd);
            }
            return w.invalidate(key).map_err(|_| KeyError::Stale);
        }
        let mr = self.mr_at(key).ok_or(KeyError::Stale)?;
        if mr.pd != pd {
            return Err(KeyError::WrongPd);
        }
        mr.invalidate(key)
    }

    /// Stores an AH; returns its number (1..AH_TABLE).
    pub(crate) fn insert_ah(&self, ah: Arc<Ah>) -> Result<u32> {
        let mut t = self.ahs.lock();
        let (i, e) = t
            .iter_mut()
            .enumerate()
            .skip(1)
            .find(|(_, e)| e.is_none())
            .ok_or(ENOMEM)?;
        *e = Some(ah);
        Ok(i as u32)
    }

    pub(crate) fn remove_ah(&self, num: u32) {
        if let Some(e) = self.ahs.lock().get_mut(num as usize) {
            *e = None;
        }
    }

    /// The AH with number `num`.
    pub(crate) fn ah(&self, num: u32) -> Option<Arc<Ah>> {
        self.ahs.lock().get(num as usize)?.clone()
    }
}
