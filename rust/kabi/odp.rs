// SPDX-License-Identifier: GPL-2.0
//! On-demand paging: the user pages behind an MR registered with `IB_ACCESS_ON_DEMAND`
//! are not pinned. The kernel may migrate, swap, merge or unmap them; before it does, it
//! calls the MR's interval notifier, which takes the pages out of rrxe's table. A work
//! item then faults the range back in (`hmm_range_fault` through ib_umem_odp), unless the
//! range is being unmapped. Registration faults the whole range in the same way.
//!
//! The packet path reaches the pages only through [`OdpPages::with_page`], which holds
//! the table's lock while it touches one page: an invalidation waits for that access
//! before the page can go, and an access finds either a present page or none. The engine
//! never sleeps (it holds a QP's spinlock), so a page that is not present fails the
//! access instead of faulting it in there.

use super::lock::{new_spinlock_irq, SpinLockIrq};
use super::mem::UmemCounts;
use super::work::{Work, WorkHandler};
use crate::sys as b;
use core::ffi::c_void;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

/// Access bits that make a umem writable (`ib_access_writable`): local and remote write,
/// remote atomic, memory-window bind.
const WRITABLE: i32 = 1 | 2 | 8 | 16;

/// Pages of an on-demand-paging umem and what keeps them present.
#[pin_data]
pub(crate) struct OdpPages {
    #[pin]
    table: SpinLockIrq<Table>,
    /// Faults invalidated pages back in.
    refault: Work<OdpPages>,
    /// The umem (set once it exists; the work item and faults use it).
    umem: AtomicPtr<b::ib_umem>,
    /// Address of the first page.
    base: u64,
    /// Faults ask for write access.
    write: bool,
    /// The device's counts (pages faulted in, pages invalidated).
    counts: Arc<UmemCounts>,
}

/// A page table entry: the page could not be faulted in (unmapped memory, a write to
/// read-only memory): accesses to it fail instead of waiting. (Page addresses are page
/// aligned, so neither this nor 0, "not present yet", is one.)
const FAILED: usize = 1;

/// Pages faulted in at a time once a range failed as a whole (2 MiB of 4 KiB pages).
const CHUNK: usize = 512;

/// Chunks tried page by page after they failed, per fault (about 8,000 pages at most).
const SPLIT_CHUNKS: usize = 16;

struct Table {
    /// Kernel address of each page; 0 while it is to be faulted in; [`FAILED`].
    addr: KVVec<usize>,
    /// Pages invalidated while the range stays mapped, to fault back in: `[lo, hi)`.
    want: Option<(usize, usize)>,
}

impl OdpPages {
    /// Calls `f` with the kernel address of page `i` while it cannot go away; `None` if
    /// it is not present (the work item then faults it in).
    pub(crate) fn with_page<R>(&self, i: usize, f: impl FnOnce(usize) -> R) -> Option<R> {
        let t = self.table.lock();
        match t.addr.get(i).copied() {
            Some(0) => {
                drop(t);
                // (Faulted in for the access's next attempt.)
                self.present(i, i + 1);
                None
            }
            Some(a) if a != FAILED => Some(f(a)),
            _ => None,
        }
    }

    /// Whether any of pages `[lo, hi)` could not be faulted in.
    pub(crate) fn failed(&self, lo: usize, hi: usize) -> bool {
        let t = self.table.lock();
        let hi = hi.min(t.addr.len());
        t.addr.get(lo..hi).is_some_and(|r| r.contains(&FAILED))
    }

    /// Whether none of pages `[lo, hi)` waits to be faulted in (a page that could not be
    /// faulted in does not: the access fails). If some do, the work item faults them in
    /// and the caller tries again later.
    pub(crate) fn present(&self, lo: usize, hi: usize) -> bool {
        let mut t = self.table.lock();
        let hi = hi.min(t.addr.len());
        let Some(first) = t
            .addr
            .get(lo..hi)
            .and_then(|r| r.iter().position(|a| *a == 0))
        else {
            return true;
        };
        let lo = lo + first;
        t.want = Some(match t.want {
            None => (lo, hi),
            Some((a, z)) => (a.min(lo), z.max(hi)),
        });
        drop(t);
        self.refault.queue();
        false
    }

    /// Faults pages `[lo, hi)` in and records them (process context, may sleep). A range
    /// that cannot be faulted in as a whole is tried in chunks of [`CHUNK`] pages, and the
    /// first [`SPLIT_CHUNKS`] chunks that fail page by page; the pages that cannot be are
    /// marked [`FAILED`] (and the rest of a chunk not tried page by page too). The bounds
    /// keep a registration over a large unmapped range from trying every page.
    fn fault(&self, lo: usize, hi: usize) {
        if self.fault_range(lo, hi).is_ok() {
            return;
        }
        let mut split = 0;
        let mut c = lo;
        while c < hi {
            let end = c.saturating_add(CHUNK).min(hi);
            if self.fault_range(c, end).is_err() {
                let single = split < SPLIT_CHUNKS;
                split += 1;
                for i in c..end {
                    if !single || self.fault_range(i, i + 1).is_err() {
                        let mut t = self.table.lock();
                        if let Some(e) = t.addr.get_mut(i).filter(|e| **e == 0) {
                            *e = FAILED;
                        }
                    }
                }
            }
            c = end;
        }
    }

    /// Faults pages `[lo, hi)` in as one range.
    fn fault_range(&self, lo: usize, hi: usize) -> Result {
        let u = self.umem.load(Ordering::Acquire);
        if u.is_null() || lo >= hi {
            return Err(EINVAL);
        }
        let page = kernel::page::PAGE_SIZE as u64;
        let va = self.base.checked_add(lo as u64 * page).ok_or(EINVAL)?;
        let len = (hi - lo) as u64 * page;
        // SAFETY: `u` is this object's umem; the owner shuts the work item down before it
        // releases the umem, and registration faults before handing the umem out.
        let r = unsafe { b::rrxe_odp_fault_lock(u, va, len, self.write) };
        if r < 0 {
            return Err(Error::from_errno(r));
        }
        {
            let mut t = self.table.lock();
            for i in lo..hi {
                // SAFETY: umem_mutex is held (the fault succeeded); `i` is checked by C.
                let a = unsafe { b::rrxe_odp_page(u, i) } as usize;
                if let Some(e) = t.addr.get_mut(i) {
                    *e = if a == 0 { FAILED } else { a };
                }
            }
        }
        UmemCounts::add(&self.counts.faulted, (hi - lo) as u64);
        // SAFETY: held since `rrxe_odp_fault_lock` succeeded.
        unsafe { b::rrxe_odp_unlock(u) };
        Ok(())
    }

    /// The notifier: `[start, end)` is about to change.
    fn invalidated(&self, start: u64, end: u64, refault: bool) {
        let page = kernel::page::PAGE_SIZE as u64;
        let lo = usize::try_from(start.saturating_sub(self.base) / page).unwrap_or(usize::MAX);
        let hi =
            usize::try_from(end.saturating_sub(self.base).div_ceil(page)).unwrap_or(usize::MAX);
        let mut t = self.table.lock();
        let hi = hi.min(t.addr.len());
        if lo >= hi {
            return;
        }
        // (Being unmapped: accesses fail from now on instead of waiting.)
        let v = if refault { 0 } else { FAILED };
        for e in t.addr.get_mut(lo..hi).into_iter().flatten() {
            *e = v;
        }
        UmemCounts::add(&self.counts.invalidated, (hi - lo) as u64);
        if refault {
            t.want = Some(match t.want {
                None => (lo, hi),
                Some((a, z)) => (a.min(lo), z.max(hi)),
            });
            drop(t);
            self.refault.queue();
        }
    }
}

impl WorkHandler for OdpPages {
    fn work_run(&self) {
        let want = self.table.lock().want.take();
        if let Some((lo, hi)) = want {
            self.fault(lo, hi);
        }
    }
}

/// # Safety
///
/// Called by the shim's interval notifier with the `owner` given to `rrxe_odp_get`: an
/// [`OdpPages`] that stays alive until `ib_umem_release` returned, which removes the
/// notifier and waits for running callbacks.
unsafe extern "C" fn invalidate(owner: *mut c_void, start: u64, end: u64, refault: bool) {
    // SAFETY: see the function's safety section.
    let p = unsafe { &*owner.cast_const().cast::<OdpPages>() };
    p.invalidated(start, end, refault);
}

/// Whether the kernel was built with on-demand paging.
pub(crate) fn enabled() -> bool {
    // SAFETY: no preconditions.
    unsafe { b::rrxe_odp_enabled() }
}

/// Registers `[start, start + len)` of the calling process for on-demand paging and
/// faults it in (may sleep). The caller owns the umem: it calls [`OdpPages::shutdown`],
/// then releases the umem with `ib_umem_release`, then drops the pages.
pub(crate) fn get(
    ib: *mut b::ib_device,
    start: u64,
    len: u64,
    access: i32,
    counts: Arc<UmemCounts>,
) -> Result<(NonNull<b::ib_umem>, Pin<KBox<OdpPages>>)> {
    let page = kernel::page::PAGE_SIZE as u64;
    let base = start & !(page - 1);
    let end = start
        .checked_add(len)
        .and_then(|e| e.checked_add(page - 1))
        .ok_or(EINVAL)?
        & !(page - 1);
    let n = usize::try_from((end - base) / page).map_err(|_| EINVAL)?;
    let mut addr = KVVec::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        addr.push(0usize, GFP_KERNEL)?;
    }
    let refault = Work::new()?;
    let pages = KBox::pin_init(
        pin_init!(OdpPages {
            table <- new_spinlock_irq!(Table { addr, want: None }),
            refault,
            umem: AtomicPtr::new(core::ptr::null_mut()),
            base,
            write: access & WRITABLE != 0,
            counts,
        }),
        GFP_KERNEL,
    )?;
    pages.refault.bind(&pages);
    let owner = core::ptr::from_ref::<OdpPages>(&pages)
        .cast_mut()
        .cast::<c_void>();
    // SAFETY: `ib` is our live device; the call registers an interval notifier on the
    // current process's memory whose callbacks get `owner`, which the caller keeps alive
    // until it has released the umem (see above).
    let u = unsafe { b::rrxe_odp_get(ib, start, len, access, Some(invalidate), owner) };
    kernel::error::from_err_ptr(u)?;
    let umem = NonNull::new(u).ok_or(EFAULT)?;
    pages.umem.store(u, Ordering::Release);
    // SAFETY: `u` is a live ODP umem.
    let (first, count) = unsafe { (b::rrxe_odp_start(u), b::rrxe_odp_num_pages(u)) };
    if first != base || count != n {
        pages.shutdown();
        // SAFETY: released once, here, before `pages` drops.
        unsafe { b::ib_umem_release(u) };
        return Err(EINVAL);
    }
    if n > 0 {
        // (Pages not mapped yet are marked failed: accesses to them fail until an
        // invalidation of the range has them faulted in again.)
        pages.fault(0, n);
    }
    Ok((umem, pages))
}

impl OdpPages {
    /// Stops the refault work for good (process context); before the umem is released.
    pub(crate) fn shutdown(&self) {
        self.refault.shutdown();
    }
}
