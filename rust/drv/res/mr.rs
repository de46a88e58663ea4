// SPDX-License-Identifier: GPL-2.0
//! Memory regions: registered user pages, kernel virtual addresses (a kernel PD's DMA
//! MR) or the pages a kernel consumer mapped into a fast-registration MR, with the key,
//! access and bounds checks every access goes through.

use super::access;
use crate::kabi::lock::{new_spinlock_irq, SpinLockIrq};
use crate::kabi::mem::{KernelVa, Umem};
use crate::proto::mr::{FastMr, KeyError, PageMap, Reg};
use crate::proto::verify::Alg;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

/// A memory region.
pub(crate) struct Mr {
    /// The key it was created with: its table entry (a fast-registration MR's current
    /// key is in its [`Fast`] state).
    pub(crate) key: u32,
    pub(crate) pd: usize,
    pub(crate) access: i32,
    pub(crate) iova: u64,
    pub(crate) len: u64,
    /// Memory windows bound to it (it cannot be deregistered or invalidated meanwhile).
    windows: AtomicU32,
    /// Deregistered: no access reaches its memory any more, although a QP may still
    /// hold it (a peer's WRITE in progress).
    gone: AtomicBool,
    mem: MrMem,
}

/// What an MR's addresses refer to.
enum MrMem {
    /// Pinned user pages; `first_off` is the start's offset in the first page.
    User { umem: Umem, first_off: usize },
    /// Kernel virtual addresses (the DMA MR of a kernel PD).
    Kernel,
    /// A fast-registration MR: registered and invalidated by work requests. Consumers
    /// map pages and post from any context, interrupts disabled included.
    Fast(Pin<KBox<SpinLockIrq<Fast>>>),
}

/// The state of a fast-registration MR.
struct Fast {
    /// Key, validity, access and region (the protocol core's rules).
    reg: FastMr,
    /// Page size of the last `ib_map_mr_sg`.
    page_size: u32,
    /// Kernel addresses of the pages mapped (capacity: the MR's `max_num_sg`, allocated
    /// with it; mapping never allocates).
    pages: KVec<u64>,
    /// Where the registered region's bytes lie in `pages`.
    map: Option<PageMap>,
}

impl Mr {
    pub(crate) fn new(
        key: u32,
        pd: usize,
        access: i32,
        start: u64,
        len: u64,
        iova: u64,
        umem: Umem,
    ) -> Result<Arc<Mr>> {
        let page = kernel::page::PAGE_SIZE as u64;
        let first_off = (start % page) as usize;
        Ok(Arc::new(
            Mr {
                key,
                pd,
                access,
                iova,
                len,
                windows: AtomicU32::new(0),
                gone: AtomicBool::new(false),
                mem: MrMem::User { umem, first_off },
            },
            GFP_KERNEL,
        )?)
    }

    /// The DMA MR of kernel PD `pd`: kernel virtual addresses with the access the
    /// consumer asked for. ib_core asks for local access only, unless the consumer
    /// allocated its PD with `IB_PD_UNSAFE_GLOBAL_RKEY` (then remote reads and writes
    /// reach all of kernel memory through its rkey, which is what that flag means).
    pub(crate) fn new_dma(key: u32, pd: usize, acc: i32) -> Result<Arc<Mr>> {
        Ok(Arc::new(
            Mr {
                key,
                pd,
                access: access::LOCAL_WRITE | (acc & access::SUPPORTED),
                iova: 0,
                len: u64::MAX,
                windows: AtomicU32::new(0),
                gone: AtomicBool::new(false),
                mem: MrMem::Kernel,
            },
            GFP_KERNEL,
        )?)
    }

    /// A fast-registration MR of PD `pd` for up to `max_pages` pages, free until an
    /// `IB_WR_REG_MR` registers it.
    pub(crate) fn new_fast(key: u32, pd: usize, max_pages: usize) -> Result<Arc<Mr>> {
        let fast = Fast {
            reg: FastMr::new(key),
            page_size: 0,
            pages: KVec::with_capacity(max_pages, GFP_KERNEL)?,
            map: None,
        };
        let fast = KBox::pin_init(new_spinlock_irq!(fast), GFP_KERNEL)?;
        Ok(Arc::new(
            Mr {
                key,
                pd,
                access: 0,
                iova: 0,
                len: 0,
                windows: AtomicU32::new(0),
                gone: AtomicBool::new(false),
                mem: MrMem::Fast(fast),
            },
            GFP_KERNEL,
        )?)
    }

    /// The MR was deregistered: later accesses through references still held fail.
    pub(crate) fn deregistered(&self) {
        self.gone.store(true, Ordering::Release);
    }

    fn gone(&self) -> bool {
        self.gone.load(Ordering::Acquire)
    }

    /// Whether `key` reaches this MR from PD `pd` with every access bit of `need`.
    pub(crate) fn admits(&self, key: u32, pd: usize, need: i32) -> bool {
        if self.pd != pd {
            return false;
        }
        match &self.mem {
            MrMem::Fast(f) => f.lock().reg.admits(key, need as u32),
            _ => self.key == key && self.access & need == need,
        }
    }

    /// A memory window was bound to the MR.
    pub(crate) fn window_bound(&self) {
        self.windows.fetch_add(1, Ordering::AcqRel);
    }

    /// A memory window bound to the MR was unbound, invalidated or deallocated.
    pub(crate) fn window_unbound(&self) {
        self.windows.fetch_sub(1, Ordering::AcqRel);
    }

    /// Memory windows are bound to the MR.
    pub(crate) fn has_windows(&self) -> bool {
        self.windows.load(Ordering::Acquire) != 0
    }

    /// `ib_map_mr_sg` begins: the page list is emptied for pages of `page_size` bytes.
    pub(crate) fn map_begin(&self, page_size: u32) -> Result {
        let MrMem::Fast(f) = &self.mem else {
            return Err(EINVAL);
        };
        let mut f = f.lock();
        f.pages.clear();
        f.page_size = page_size;
        Ok(())
    }

    /// `ib_map_mr_sg` maps the page at kernel address `addr` next.
    pub(crate) fn map_page(&self, addr: u64) -> Result {
        let MrMem::Fast(f) = &self.mem else {
            return Err(EINVAL);
        };
        let mut f = f.lock();
        if f.pages.len() >= f.pages.capacity() {
            return Err(ENOMEM);
        }
        // Within capacity: no allocation.
        f.pages.push(addr, GFP_ATOMIC)?;
        Ok(())
    }

    /// `IB_WR_REG_MR` from a QP of PD `pd`.
    pub(crate) fn register(&self, r: &Reg, pd: usize) -> core::result::Result<(), KeyError> {
        let MrMem::Fast(f) = &self.mem else {
            return Err(KeyError::NotFastReg);
        };
        let mut f = f.lock();
        let map = PageMap::new(f.page_size, r.iova, f.pages.len()).ok_or(KeyError::Range)?;
        f.reg.register(r, pd == self.pd, map.covered())?;
        f.map = Some(map);
        Ok(())
    }

    /// `IB_WR_LOCAL_INV`, or a SEND with invalidate, naming `key`.
    pub(crate) fn invalidate(&self, key: u32) -> core::result::Result<(), KeyError> {
        let MrMem::Fast(f) = &self.mem else {
            return Err(KeyError::NotFastReg);
        };
        f.lock()
            .reg
            .invalidate(key, self.windows.load(Ordering::Acquire))
    }

    /// Offset of `[va, va + n)` from the MR's start, if the range lies in the MR.
    fn offset(&self, va: u64, n: usize) -> Option<usize> {
        let rel = va.checked_sub(self.iova)?;
        let end = rel.checked_add(n as u64)?;
        if end > self.len {
            return None;
        }
        usize::try_from(rel).ok()
    }

    /// Calls `copy(kernel address, range of the caller's buffer)` for each page piece of
    /// `[va, va + n)` of a registered fast MR; `None` unless it is valid and the range
    /// lies in its region.
    fn fast_walk(
        f: &SpinLockIrq<Fast>,
        va: u64,
        n: usize,
        mut copy: impl FnMut(u64, core::ops::Range<usize>) -> Option<()>,
    ) -> Option<()> {
        let f = f.lock();
        if !f.reg.valid() {
            return None;
        }
        let (iova, len) = f.reg.region();
        let rel = va.checked_sub(iova)?;
        if rel.checked_add(n as u64)? > len {
            return None;
        }
        let map = f.map.as_ref()?;
        map.walk(rel, n, |p| {
            let base = f.pages.get(p.page).ok_or(())?;
            copy(
                base.checked_add(p.off as u64).ok_or(())?,
                p.at..p.at + p.len,
            )
            .ok_or(())
        })?
        .ok()
    }

    /// Copies `buf` into the MR at `va`.
    pub(crate) fn write(&self, va: u64, buf: &[u8]) -> Option<()> {
        if self.gone() {
            return None;
        }
        match &self.mem {
            MrMem::User { umem, first_off } => {
                let off = self.offset(va, buf.len())?;
                umem.copy_in(off.checked_add(*first_off)?, buf)
            }
            MrMem::Kernel => {
                self.offset(va, buf.len())?;
                KernelVa::write(va, buf)
            }
            MrMem::Fast(f) => {
                Self::fast_walk(f, va, buf.len(), |a, r| KernelVa::write(a, buf.get(r)?))
            }
        }
    }

    /// Copies from the MR at `va` into `buf`.
    pub(crate) fn read(&self, va: u64, buf: &mut [u8]) -> Option<()> {
        if self.gone() {
            return None;
        }
        match &self.mem {
            MrMem::User { umem, first_off } => {
                let off = self.offset(va, buf.len())?;
                umem.copy_out(off.checked_add(*first_off)?, buf)
            }
            MrMem::Kernel => {
                self.offset(va, buf.len())?;
                KernelVa::read(va, buf)
            }
            MrMem::Fast(f) => {
                Self::fast_walk(f, va, buf.len(), |a, r| KernelVa::read(a, buf.get_mut(r)?))
            }
        }
    }

    /// The CRC (algorithm `alg`) of the MR's bytes `[va, va + n)`, read where they are.
    /// `None` if the range is not in the MR.
    pub(crate) fn crc(&self, alg: Alg, va: u64, n: u32) -> Option<u32> {
        use crate::proto::verify::{crc_finish, CRC_INIT};
        let n = n as usize;
        if self.gone() {
            return None;
        }
        let raw = match &self.mem {
            MrMem::User { umem, first_off } => {
                let off = self.offset(va, n)?;
                umem.crc(alg, off.checked_add(*first_off)?, n, CRC_INIT)
            }
            MrMem::Kernel => {
                self.offset(va, n)?;
                KernelVa::crc(alg, va, n, CRC_INIT)
            }
            MrMem::Fast(f) => {
                let mut crc = CRC_INIT;
                Self::fast_walk(f, va, n, |a, r| {
                    crc = KernelVa::crc(alg, a, r.len(), crc)?;
                    Some(())
                })
                .map(|()| crc)
            }
        }?;
        Some(crc_finish(raw))
    }

    /// ATOMIC WRITE: stores the 8 bytes `v` at `va` as one access (IBTA A19.4.2: no
    /// reader sees half of it). `None` if out of range or not 8-byte aligned.
    pub(crate) fn store8(&self, va: u64, v: [u8; 8]) -> Option<()> {
        let v = u64::from_ne_bytes(v);
        if self.gone() {
            return None;
        }
        match &self.mem {
            MrMem::User { umem, first_off } => {
                let off = self.offset(va, 8)?;
                umem.store8(off.checked_add(*first_off)?, v)
            }
            MrMem::Kernel => {
                self.offset(va, 8)?;
                KernelVa::store8(va, v)
            }
            // (An 8-byte aligned address never straddles two of the MR's pages.)
            MrMem::Fast(f) => Self::fast_walk(f, va, 8, |a, r| {
                (r.len() == 8).then_some(())?;
                KernelVa::store8(a, v)
            }),
        }
    }

    /// Fault injection: flips the bits of one byte of `[va, va + n)` chosen by `r`.
    pub(crate) fn corrupt(&self, va: u64, n: u32, r: u32) -> Option<()> {
        if n == 0 {
            return Some(());
        }
        let at = va.checked_add(u64::from(r % n))?;
        let mut b = [0u8];
        self.read(at, &mut b)?;
        let [x] = b;
        self.write(at, &[!x])
    }

    /// Whether `[va, va + n)` can be reached without waiting: `false` only for pages of
    /// an on-demand-paged MR that are not present (a work item is faulting them in, and
    /// the access should be tried again later). Bounds are the access's own check.
    pub(crate) fn resident(&self, va: u64, n: usize) -> bool {
        match &self.mem {
            MrMem::User { umem, first_off } => self
                .offset(va, n)
                .and_then(|off| off.checked_add(*first_off))
                .is_none_or(|off| umem.resident(off, n)),
            _ => true,
        }
    }

    /// Whether an access to `[va, va + n)` that failed failed only because on-demand-paged
    /// pages were being faulted in: the MR is on-demand paged, still registered, the range
    /// lies in it and none of its pages could not be faulted in. (Not a second look at
    /// the pages, which the fault may have brought in meanwhile.)
    pub(crate) fn odp_miss(&self, va: u64, n: usize) -> bool {
        if self.gone() {
            return false;
        }
        match &self.mem {
            MrMem::User { umem, first_off } if umem.is_odp() => self
                .offset(va, n)
                .and_then(|off| off.checked_add(*first_off))
                .is_some_and(|off| !umem.odp_failed(off, n)),
            _ => false,
        }
    }

    /// Whether the MR's memory is on-demand paged.
    pub(crate) fn is_odp(&self) -> bool {
        matches!(&self.mem, MrMem::User { umem, .. } if umem.is_odp())
    }

    /// Whether `[va, va + n)` lies in the MR.
    pub(crate) fn covers(&self, va: u64, n: u64) -> bool {
        if let MrMem::Fast(f) = &self.mem {
            let f = f.lock();
            let (iova, len) = f.reg.region();
            return f.reg.valid()
                && va
                    .checked_sub(iova)
                    .and_then(|rel| rel.checked_add(n))
                    .is_some_and(|end| end <= len);
        }
        usize::try_from(n)
            .ok()
            .and_then(|n| self.offset(va, n))
            .is_some()
    }
}
