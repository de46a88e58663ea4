// SPDX-License-Identifier: GPL-2.0
//! Memory shared with userspace: pinned user memory (`ib_umem`) behind an MR, and
//! vmalloc'ed rings mapped into the process. Userspace may write either at any time, so
//! rrxe never forms Rust references to it: bytes move with `memcpy` and the ring indices
//! with acquire/release accesses.

use super::crc;
use super::odp;
use crate::proto::verify::Alg;
use crate::sys as b;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::Opaque;

/// What a device's user memory did, counted by the binding layer (the device reads
/// them into its counters).
#[derive(Default)]
pub(crate) struct UmemCounts {
    /// On-demand pages faulted in.
    pub(crate) faulted: AtomicU64,
    /// On-demand pages the kernel invalidated.
    pub(crate) invalidated: AtomicU64,
    /// Releases handed to the release work item (the last reference dropped where
    /// sleeping is not allowed).
    pub(crate) released_later: AtomicU64,
}

impl UmemCounts {
    /// A value of one of the counts.
    pub(crate) fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }

    pub(super) fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }
}

/// The user pages of a memory region: pinned, or kept present by on-demand paging.
pub(crate) struct Umem {
    umem: NonNull<b::ib_umem>,
    pages: Pages,
    /// Where the release goes if the last reference drops where sleeping is not
    /// allowed (allocated with the umem, so that dropping never allocates).
    later: Option<KBox<Later>>,
    /// The device's counts.
    counts: Arc<UmemCounts>,
}

/// A umem released by the release work item: the last reference on an MR can drop in
/// the receive softirq or under a QP's lock (a peer's WRITE still in progress when the
/// MR was deregistered), and releasing a umem sleeps (it unpins and dirties pages, or
/// removes an interval notifier).
struct Later {
    /// Next on the stack of pending releases.
    next: *mut Later,
    umem: *mut b::ib_umem,
    odp: Option<Pin<KBox<odp::OdpPages>>>,
}

/// Pending releases (a lock-free stack: pushed from any context, taken whole by the work).
static LATER: AtomicPtr<Later> = AtomicPtr::new(core::ptr::null_mut());

/// The work item that releases them (initialised at module load).
struct ReleaseWork(Opaque<b::work_struct>);
// SAFETY: the work item is only handed to the workqueue core, which serialises it.
unsafe impl Sync for ReleaseWork {}
static RELEASE_WORK: ReleaseWork = ReleaseWork(Opaque::zeroed());

/// Releases `umem` (and then the on-demand pages that are its notifier's owner).
fn release(umem: *mut b::ib_umem, odp: Option<Pin<KBox<odp::OdpPages>>>) {
    if let Some(o) = &odp {
        // No fault may start once the umem is released.
        o.shutdown();
    }
    // SAFETY: obtained from `ib_umem_get` or `ib_umem_odp_get` and released once, here,
    // in process context. For on-demand paging this removes the notifier and waits for
    // its callbacks, before the pages (their owner) drop.
    unsafe { b::ib_umem_release(umem) };
    drop(odp);
}

/// # Safety
///
/// Called by the workqueue core for [`RELEASE_WORK`] (process context).
unsafe extern "C" fn release_run(_w: *mut b::work_struct) {
    let mut p = LATER.swap(core::ptr::null_mut(), Ordering::AcqRel);
    while !p.is_null() {
        // SAFETY: every entry on the stack was leaked from a `KBox<Later>` by
        // `Umem::drop` and is taken back exactly once, here (the swap took the stack).
        let l = KBox::into_inner(unsafe { KBox::from_raw(p) });
        p = l.next;
        release(l.umem, l.odp);
    }
}

/// Sets the release work item up (module load, before any device exists).
pub(crate) fn init_releases() {
    // SAFETY: initialised once, before anything can queue it.
    unsafe { b::rrxe_work_init(RELEASE_WORK.0.get(), Some(release_run)) };
}

/// Waits until every umem release handed to the work item has finished (module exit,
/// after every device is gone: nothing queues it any more).
pub(crate) fn wait_releases() {
    // SAFETY: initialised at load; waits for the last queued run to return.
    unsafe { b::flush_work(RELEASE_WORK.0.get()) };
}

enum Pages {
    /// Kernel addresses of the pinned pages, in order.
    Pinned(KVec<usize>),
    /// Not pinned: present while the kernel does not invalidate them (see [`odp`]).
    Odp(Pin<KBox<odp::OdpPages>>),
}

// SAFETY: the umem stays valid until drop; pinned pages stay pinned, on-demand pages are
// reached only under their table's lock; addresses are plain integers.
unsafe impl Send for Umem {}
// SAFETY: shared access reads the pinned page table built at creation, or goes through
// the on-demand table's lock.
unsafe impl Sync for Umem {}

impl Umem {
    /// Registers `[start, start + len)` of the calling process for an MR (may sleep):
    /// pinned, or for on-demand paging (faulted in now) when `access` carries
    /// `IB_ACCESS_ON_DEMAND`. What it does is counted in `counts`.
    pub(crate) fn get(
        ib: *mut b::ib_device,
        start: u64,
        len: u64,
        access: i32,
        counts: &Arc<UmemCounts>,
    ) -> Result<Umem> {
        if access & b::ib_access_flags_IB_ACCESS_ON_DEMAND as i32 != 0 {
            let later = Later::new()?;
            let (umem, pages) = odp::get(ib, start, len, access, counts.clone())?;
            return Ok(Umem {
                umem,
                pages: Pages::Odp(pages),
                later: Some(later),
                counts: counts.clone(),
            });
        }
        // SAFETY: `ib` is our live device; the call pins user memory of the current task.
        let u = unsafe { b::rrxe_umem_get(ib, start, len, access) };
        kernel::error::from_err_ptr(u)?;
        let umem = NonNull::new(u).ok_or(EFAULT)?;
        // Owned from here on: an allocation failure below releases it in `drop`.
        let mut this = Umem {
            umem,
            pages: Pages::Pinned(KVec::new()),
            later: None,
            counts: counts.clone(),
        };
        this.later = Some(Later::new()?);
        // SAFETY: `umem` is valid until released.
        let n = unsafe { b::rrxe_umem_num_pages(umem.as_ptr()) };
        let mut raw: KVec<*mut b::page> = KVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            raw.push(core::ptr::null_mut(), GFP_KERNEL)?;
        }
        // SAFETY: `raw` has room for `n` page pointers.
        let got = unsafe { b::rrxe_umem_pages(umem.as_ptr(), raw.as_mut_ptr(), n) };
        let mut pages = KVec::with_capacity(got, GFP_KERNEL)?;
        for p in raw.iter().take(got) {
            // SAFETY: a pinned lowmem page has a permanent kernel mapping (no HIGHMEM on
            // the 64-bit targets rrxe supports).
            let a = unsafe { b::rrxe_page_address(*p) } as usize;
            pages.push(a, GFP_KERNEL)?;
        }
        this.pages = Pages::Pinned(pages);
        Ok(this)
    }

    /// The on-demand pages and the page range `[lo, hi)` that bytes `[off, off + len)`
    /// span (`None` for pinned memory).
    fn odp_span(&self, off: usize, len: usize) -> Option<(&odp::OdpPages, usize, usize)> {
        let Pages::Odp(o) = &self.pages else {
            return None;
        };
        let page = kernel::page::PAGE_SIZE;
        Some((o, off / page, off.saturating_add(len.max(1)).div_ceil(page)))
    }

    /// Whether the bytes `[off, off + len)` can be reached now: always for pinned memory;
    /// for on-demand paging, whether their pages are present (if not, they are faulted in
    /// by a work item and the caller tries again later).
    pub(crate) fn resident(&self, off: usize, len: usize) -> bool {
        self.odp_span(off, len)
            .is_none_or(|(o, lo, hi)| o.present(lo, hi))
    }

    /// Whether on-demand-paged bytes `[off, off + len)` include a page that could not be
    /// faulted in (an access there fails for good, it is not waiting for a fault).
    pub(crate) fn odp_failed(&self, off: usize, len: usize) -> bool {
        self.odp_span(off, len)
            .is_some_and(|(o, lo, hi)| o.failed(lo, hi))
    }

    /// Whether the memory is on-demand paged.
    pub(crate) fn is_odp(&self) -> bool {
        matches!(self.pages, Pages::Odp(_))
    }

    /// Calls `f(kernel address, range in the caller's buffer)` for each page-sized piece
    /// of `[off, off + len)` (`off` from the start of the first page), each while its page
    /// cannot go away. `None` if out of range or a page is not present.
    fn chunks(
        &self,
        off: usize,
        len: usize,
        mut f: impl FnMut(*mut u8, core::ops::Range<usize>),
    ) -> Option<()> {
        let page = kernel::page::PAGE_SIZE;
        let mut done = 0usize;
        while done < len {
            let pos = off.checked_add(done)?;
            let in_page = pos % page;
            let n = (page - in_page).min(len - done);
            let r = done..done + n;
            match &self.pages {
                Pages::Pinned(p) => f((*p.get(pos / page)? + in_page) as *mut u8, r),
                Pages::Odp(o) => o.with_page(pos / page, |a| f((a + in_page) as *mut u8, r))?,
            }
            done += n;
        }
        Some(())
    }

    /// Copies from the region at byte offset `off` into `buf`. `None` if out of range.
    pub(crate) fn copy_out(&self, off: usize, buf: &mut [u8]) -> Option<()> {
        let len = buf.len();
        self.chunks(off, len, |mem, r| {
            if let Some(chunk) = buf.get_mut(r) {
                // SAFETY: `mem .. mem + chunk.len()` lies inside one page that stays
                // mapped meanwhile (see `chunks`); C memcpy because userspace may write
                // the page concurrently.
                unsafe { b::rrxe_memcpy(chunk.as_mut_ptr().cast(), mem.cast(), chunk.len()) };
            }
        })
    }

    /// Continues the CRC `crc` of algorithm `alg` over the region's bytes
    /// `[off, off + len)`, where they are (no copy). `None` if out of range.
    pub(crate) fn crc(&self, alg: Alg, off: usize, len: usize, crc: u32) -> Option<u32> {
        let mut c = crc;
        self.chunks(off, len, |mem, r| {
            // SAFETY: `mem .. mem + r.len()` lies inside one page that stays mapped
            // meanwhile. C reads it (userspace may write it concurrently; the CRC then
            // simply differs).
            c = unsafe { crc::raw(alg, c, mem.cast_const().cast(), r.len()) };
        })?;
        Some(c)
    }

    /// Stores `v` (host byte order) as one 8-byte access at byte offset `off`, which
    /// must be 8-byte aligned in its page. `None` if out of range or misaligned.
    pub(crate) fn store8(&self, off: usize, v: u64) -> Option<()> {
        if off % 8 != 0 {
            return None;
        }
        // (An 8-byte aligned offset does not straddle a page: one piece.)
        self.chunks(off, 8, |mem, r| {
            if r.len() == 8 {
                // SAFETY: `mem .. mem + 8` lies in one page that stays mapped meanwhile
                // and is 8-byte aligned (page-aligned start plus an aligned offset).
                unsafe { b::rrxe_write_once64(mem.cast(), v) };
            }
        })
    }

    /// Copies `src` into the region at byte offset `off`. `None` if out of range.
    pub(crate) fn copy_in(&self, off: usize, src: &[u8]) -> Option<()> {
        self.chunks(off, src.len(), |mem, r| {
            if let Some(chunk) = src.get(r) {
                // SAFETY: as in `copy_out`, in the other direction.
                unsafe { b::rrxe_memcpy(mem.cast(), chunk.as_ptr().cast(), chunk.len()) };
            }
        })
    }
}

impl Later {
    fn new() -> Result<KBox<Later>> {
        Ok(KBox::new(
            Later {
                next: core::ptr::null_mut(),
                umem: core::ptr::null_mut(),
                odp: None,
            },
            GFP_KERNEL,
        )?)
    }
}

impl Drop for Umem {
    fn drop(&mut self) {
        let odp = match core::mem::replace(&mut self.pages, Pages::Pinned(KVec::new())) {
            Pages::Odp(o) => Some(o),
            Pages::Pinned(_) => None,
        };
        // SAFETY: no preconditions.
        let may_sleep = unsafe { b::rrxe_may_sleep() };
        match self.later.take() {
            Some(mut l) if !may_sleep => {
                l.umem = self.umem.as_ptr();
                l.odp = odp;
                UmemCounts::add(&self.counts.released_later, 1);
                let raw = KBox::into_raw(l);
                let mut head = LATER.load(Ordering::Acquire);
                loop {
                    // SAFETY: `raw` is ours until the push below publishes it.
                    unsafe { (*raw).next = head };
                    match LATER.compare_exchange_weak(
                        head,
                        raw,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => break,
                        Err(h) => head = h,
                    }
                }
                // SAFETY: initialised at module load.
                unsafe { b::rrxe_work_queue(RELEASE_WORK.0.get()) };
            }
            _ => release(self.umem.as_ptr(), odp),
        }
    }
}

/// Orders every store before it ahead of every store after it, for other CPUs and
/// devices (a FLUSH to global visibility).
pub(crate) fn write_barrier() {
    // SAFETY: a barrier; no preconditions.
    unsafe { b::rrxe_wmb() }
}

/// A zeroed, page-aligned vmalloc buffer that userspace maps (a queue ring).
pub(crate) struct UserBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer is plain memory accessed only through the volatile/atomic helpers.
unsafe impl Send for UserBuf {}
// SAFETY: as above.
unsafe impl Sync for UserBuf {}

impl UserBuf {
    /// Allocates `len` zeroed bytes (rounded up to pages by vmalloc).
    pub(crate) fn new(len: usize) -> Result<UserBuf> {
        // SAFETY: plain allocation; NULL on failure.
        let p = unsafe { b::rrxe_vmalloc_user(len) };
        Ok(UserBuf {
            ptr: NonNull::new(p.cast()).ok_or(ENOMEM)?,
            len,
        })
    }

    /// Length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn at(&self, off: usize, n: usize) -> Option<*mut u8> {
        (off.checked_add(n)? <= self.len).then(|| self.ptr.as_ptr().wrapping_add(off))
    }

    /// Acquire-load of the 32-bit word at `off` (4-byte aligned).
    pub(crate) fn load_acquire(&self, off: usize) -> u32 {
        match self.at(off, 4) {
            // SAFETY: in bounds and 4-byte aligned (header offsets are constants).
            Some(p) if off % 4 == 0 => unsafe { b::rrxe_load_acquire32(p.cast()) },
            _ => 0,
        }
    }

    /// Release-store of the 32-bit word at `off`.
    pub(crate) fn store_release(&self, off: usize, v: u32) {
        if let Some(p) = self.at(off, 4) {
            if off % 4 == 0 {
                // SAFETY: in bounds and aligned.
                unsafe { b::rrxe_store_release32(p.cast(), v) }
            }
        }
    }

    /// Copies `dst.len()` bytes out of the buffer at `off`.
    pub(crate) fn read(&self, off: usize, dst: &mut [u8]) -> Option<()> {
        let p = self.at(off, dst.len())?;
        // SAFETY: in bounds; C memcpy because userspace writes concurrently.
        unsafe { b::rrxe_memcpy(dst.as_mut_ptr().cast(), p.cast(), dst.len()) };
        Some(())
    }

    /// Copies `src` into the buffer at `off`.
    pub(crate) fn write(&self, off: usize, src: &[u8]) -> Option<()> {
        let p = self.at(off, src.len())?;
        // SAFETY: in bounds.
        unsafe { b::rrxe_memcpy(p.cast(), src.as_ptr().cast(), src.len()) };
        Some(())
    }

    /// Maps the buffer into `vma` (from the uverbs mmap handler).
    pub(crate) fn remap(&self, vma: *mut b::vm_area_struct) -> Result {
        // SAFETY: `vma` is the VMA under construction handed to `mmap`; the buffer came
        // from vmalloc_user, which remap_vmalloc_range requires.
        kernel::error::to_result(unsafe {
            b::remap_vmalloc_range(vma, self.ptr.as_ptr().cast(), 0)
        })
    }
}

impl Drop for UserBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with vmalloc_user; pages still mapped by a process keep their
        // own references (inserted by remap_vmalloc_range).
        unsafe { b::vfree(self.ptr.as_ptr().cast()) }
    }
}

/// Kernel virtual addresses handed to rrxe by kernel ULPs. rrxe has no DMA device
/// (`ib_uses_virt_dma`), so `ib_dma_map_*` returns the buffer's kernel virtual address:
/// the SGEs of kernel work requests against a DMA MR carry such addresses, and so do the
/// pages a consumer maps into a fast-registration MR (`ib_map_mr_sg`).
///
/// Only kernel consumers create the MRs these addresses are reached through: a DMA MR
/// (local access, or remote access when the consumer asked for the unsafe global rkey)
/// and fast-registration MRs (`alloc_mr` has no user path). The consumer keeps a buffer
/// mapped while a work request names it, and a registered MR's pages while the
/// registration is valid (it invalidates before it unmaps).
pub(crate) struct KernelVa;

impl KernelVa {
    /// Copies `dst.len()` bytes from kernel address `va`.
    pub(crate) fn read(va: u64, dst: &mut [u8]) -> Option<()> {
        if va == 0 || va.checked_add(dst.len() as u64).is_none() {
            return None;
        }
        // SAFETY: `va` lies in memory a kernel consumer handed to the device (see the
        // type's documentation), which stays mapped while the request or registration
        // that names it is outstanding.
        unsafe { b::rrxe_memcpy(dst.as_mut_ptr().cast(), va as usize as *const _, dst.len()) };
        Some(())
    }

    /// Continues the CRC `crc` of algorithm `alg` over `len` bytes at kernel address `va`.
    pub(crate) fn crc(alg: Alg, va: u64, len: usize, crc: u32) -> Option<u32> {
        if va == 0 || va.checked_add(len as u64).is_none() {
            return None;
        }
        // SAFETY: as in `read`: the consumer's buffer, mapped while its request is
        // outstanding.
        Some(unsafe { crc::raw(alg, crc, va as usize as *const _, len) })
    }

    /// Stores `v` as one 8-byte access at kernel address `va` (8-byte aligned).
    pub(crate) fn store8(va: u64, v: u64) -> Option<()> {
        if va == 0 || va % 8 != 0 {
            return None;
        }
        // SAFETY: as in `write`; aligned.
        unsafe { b::rrxe_write_once64(va as usize as *mut u64, v) };
        Some(())
    }

    /// Copies `src` to kernel address `va`.
    pub(crate) fn write(va: u64, src: &[u8]) -> Option<()> {
        if va == 0 || va.checked_add(src.len() as u64).is_none() {
            return None;
        }
        // SAFETY: as in `read`; the consumer posted the buffer for receiving.
        unsafe { b::rrxe_memcpy(va as usize as *mut _, src.as_ptr().cast(), src.len()) };
        Some(())
    }
}
