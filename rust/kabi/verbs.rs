// SPDX-License-Identifier: GPL-2.0
//! Verbs objects: the ib_core-allocated shells (PD, CQ, QP, ucontext) that carry an
//! `Arc` of the driver's state, the driver-allocated MR shell, provider udata, queue
//! mmap entries and the completion-handler hook.

use crate::kabi::mem::UserBuf;
use crate::sys as b;
use core::ptr::NonNull;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::Opaque;

/// An ib_core object (`C` = `ib_pd`, `ib_cq`, ...) followed by the driver's state.
/// ib_core zero-allocates it with our size (`size_ib_*`) and frees it with `kfree`
/// after `destroy`, so `data` starts as `None` and `destroy` takes it back out.
#[repr(C)]
pub(crate) struct Shell<C, T> {
    ib: Opaque<C>,
    data: Option<Arc<T>>,
}

impl<C, T> Shell<C, T> {
    /// # Safety
    ///
    /// `p` must point to a live shell of this type allocated by ib_core with our size.
    pub(crate) unsafe fn from_raw<'a>(p: *mut C) -> &'a Self {
        // SAFETY: `Shell` is `repr(C)` with the C object at offset 0 (guaranteed by the
        // caller's allocation with `size_of::<Shell<C, T>>()`).
        unsafe { &*p.cast::<Self>() }
    }

    /// # Safety
    ///
    /// As [`Shell::from_raw`], and no other reference to the shell's data may exist
    /// (create and destroy are serialised against every other op by ib_core).
    pub(crate) unsafe fn set(p: *mut C, v: Option<Arc<T>>) -> Option<Arc<T>> {
        // SAFETY: per the function's contract.
        unsafe { core::mem::replace(&mut (*p.cast::<Self>()).data, v) }
    }

    /// The driver state, if the object was created.
    pub(crate) fn data(&self) -> Option<&Arc<T>> {
        self.data.as_ref()
    }
}

/// The provider-specific part of a uverbs command.
pub(crate) struct Udata(NonNull<b::ib_udata>);

impl Udata {
    /// # Safety
    ///
    /// `p` must be NULL or the udata ib_core passed to the current op.
    pub(crate) unsafe fn from_raw(p: *mut b::ib_udata) -> Option<Udata> {
        NonNull::new(p).map(Udata)
    }

    /// Length of the request tail.
    pub(crate) fn in_len(&self) -> usize {
        // SAFETY: valid for the op.
        unsafe { (*self.0.as_ptr()).inlen }
    }

    /// Length of the response tail.
    pub(crate) fn out_len(&self) -> usize {
        // SAFETY: valid for the op.
        unsafe { (*self.0.as_ptr()).outlen }
    }

    /// Copies the response tail (`copy_to_user`).
    pub(crate) fn respond(&self, bytes: &[u8]) -> Result {
        // SAFETY: valid udata; the shim bounds the copy by `bytes.len()`.
        kernel::error::to_result(unsafe {
            b::rrxe_udata_copy_to(self.0.as_ptr(), bytes.as_ptr().cast(), bytes.len())
        })
    }

    /// The calling process's ucontext.
    pub(crate) fn ucontext(&self) -> *mut b::ib_ucontext {
        // SAFETY: a driver udata is always embedded in a uverbs attribute bundle.
        unsafe { b::rrxe_udata_ucontext(self.0.as_ptr()) }
    }
}

#[repr(C)]
struct MmapEntry {
    entry: Opaque<b::rdma_user_mmap_entry>,
    buf: Arc<UserBuf>,
}

/// A ring published to a ucontext for `mmap`. Dropping it removes the entry; ib_core frees
/// it (and drops its buffer reference) once no mapping uses it.
pub(crate) struct Mmap(NonNull<MmapEntry>);

// SAFETY: the entry is owned by ib_core's refcount; we only call remove on it.
unsafe impl Send for Mmap {}
// SAFETY: `&Mmap` only reads the offset.
unsafe impl Sync for Mmap {}

impl Mmap {
    /// Publishes `buf` in `uctx`; returns the handle and the mmap offset for userspace.
    pub(crate) fn insert(uctx: *mut b::ib_ucontext, buf: Arc<UserBuf>) -> Result<(Mmap, u64)> {
        let len = buf.len();
        let e = KBox::new(
            MmapEntry {
                entry: Opaque::zeroed(),
                buf,
            },
            GFP_KERNEL,
        )?;
        let p = KBox::into_raw(e);
        // SAFETY: `p` is a fresh, zeroed entry; ib_core takes the first reference.
        let r = unsafe { b::rdma_user_mmap_entry_insert(uctx, (*p).entry.get(), len) };
        if r != 0 {
            // SAFETY: insertion failed, so we still own the allocation.
            drop(unsafe { KBox::from_raw(p) });
            return Err(Error::from_errno(r));
        }
        // SAFETY: inserted; the offset field is set.
        let off = unsafe { b::rrxe_mmap_entry_offset((*p).entry.get()) };
        // SAFETY: `p` is non-null (from KBox).
        Ok((Mmap(unsafe { NonNull::new_unchecked(p) }), off))
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: inserted by `insert`; removal drops ib_core's insert reference.
        unsafe { b::rdma_user_mmap_entry_remove((*self.0.as_ptr()).entry.get()) }
    }
}

/// `ops.mmap`: maps the ring registered at the VMA's offset.
pub(crate) unsafe extern "C" fn mmap(
    uctx: *mut b::ib_ucontext,
    vma: *mut b::vm_area_struct,
) -> c_int {
    // SAFETY: ib_core passes the calling context and the VMA under construction.
    let e = unsafe { b::rdma_user_mmap_entry_get(uctx, vma) };
    if e.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: every entry in our contexts is the first field of an `MmapEntry`.
    let me = unsafe { &*e.cast::<MmapEntry>() };
    let r = me.buf.remap(vma);
    // SAFETY: drops the reference taken by `_get`.
    unsafe { b::rdma_user_mmap_entry_put(e) };
    match r {
        Ok(()) => 0,
        Err(err) => err.to_errno(),
    }
}

/// `ops.mmap_free`: the last reference on an entry went away.
pub(crate) unsafe extern "C" fn mmap_free(e: *mut b::rdma_user_mmap_entry) {
    // SAFETY: allocated by `Mmap::insert` as a `KBox<MmapEntry>` with the entry first.
    drop(unsafe { KBox::from_raw(e.cast::<MmapEntry>()) });
}

/// The C side of a CQ, for completion and error notifications.
#[derive(Clone, Copy)]
pub(crate) struct CqHandle(NonNull<b::ib_cq>);

// SAFETY: the handle is only used while the CQ exists (the driver marks its CQ dead in
// destroy_cq under the same lock it holds while notifying).
unsafe impl Send for CqHandle {}
// SAFETY: as above.
unsafe impl Sync for CqHandle {}

impl CqHandle {
    /// # Safety
    ///
    /// `cq` must be a live CQ that outlives every use of the handle.
    pub(crate) unsafe fn new(cq: *mut b::ib_cq) -> Option<CqHandle> {
        NonNull::new(cq).map(CqHandle)
    }

    /// Calls the consumer's completion handler (completion channel), if any.
    pub(crate) fn notify(&self) {
        // SAFETY: per `new`'s contract the CQ is live.
        unsafe { b::rrxe_cq_comp_handler(self.0.as_ptr()) }
    }

    /// Reports a CQ overrun.
    pub(crate) fn overrun(&self) {
        // SAFETY: as above.
        unsafe { b::rrxe_cq_event(self.0.as_ptr(), b::ib_event_type_IB_EVENT_CQ_ERR as i32) }
    }
}

/// The C side of an SRQ, for the limit event.
#[derive(Clone, Copy)]
pub(crate) struct SrqHandle(NonNull<b::ib_srq>);

// SAFETY: used only while the SRQ exists (destroy_srq stops the driver's users first).
unsafe impl Send for SrqHandle {}
// SAFETY: as above.
unsafe impl Sync for SrqHandle {}

impl SrqHandle {
    /// # Safety
    ///
    /// `srq` must be a live SRQ that outlives every use of the handle.
    pub(crate) unsafe fn new(srq: *mut b::ib_srq) -> Option<SrqHandle> {
        NonNull::new(srq).map(SrqHandle)
    }

    /// Reports `IB_EVENT_SRQ_LIMIT_REACHED` to the consumer.
    pub(crate) fn limit_reached(&self) {
        // SAFETY: per `new`'s contract the SRQ is live.
        unsafe {
            b::rrxe_srq_event(
                self.0.as_ptr(),
                b::ib_event_type_IB_EVENT_SRQ_LIMIT_REACHED as i32,
            )
        }
    }
}

/// The address vector of a connected QP or AH, read from an `rdma_ah_attr` whose source
/// GID attribute ib_core resolved and holds.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Av {
    /// RoCEv2 over IPv6 (else IPv4).
    pub(crate) v6: bool,
    /// Source GID.
    pub(crate) sgid: [u8; 16],
    /// Destination GID.
    pub(crate) dgid: [u8; 16],
    /// Hop limit / TTL.
    pub(crate) hop_limit: u8,
    /// Traffic class / TOS.
    pub(crate) tclass: u8,
    /// Interface index of the source GID's netdev.
    pub(crate) ifindex: i32,
}

impl Av {
    /// Reads a RoCE address vector; `None` if it has no GRH or a non-RoCEv2 source GID.
    pub(crate) fn from_attr(a: &b::rdma_ah_attr) -> Option<Av> {
        if a.type_ != b::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE {
            return None;
        }
        let g = &a.grh;
        if g.sgid_attr.is_null() {
            return None;
        }
        // SAFETY: ib_core resolved and holds the source GID attribute for this call.
        let sa = unsafe { &*g.sgid_attr };
        if sa.gid_type != b::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP {
            return None;
        }
        // SAFETY: `ib_gid` is a 16-byte union; `raw` views every variant's bytes.
        let (sgid, dgid) = unsafe { (*sa.gid.raw.as_ref(), *g.dgid.raw.as_ref()) };
        let v4 = |x: &[u8; 16]| x[..10].iter().all(|&c| c == 0) && x[10] == 0xff && x[11] == 0xff;
        // SAFETY: the netdev of a held GID attribute is RCU-protected; reading the ifindex
        // field of the pointer the attribute carries is what rdma_read_gid_attr_ndev_rcu does.
        let ndev = unsafe { core::ptr::read_volatile(&sa.ndev) };
        let ifindex = if ndev.is_null() {
            0
        } else {
            crate::kabi::netdev::ifindex_of(ndev)
        };
        Some(Av {
            v6: !v4(&sgid),
            sgid,
            dgid,
            hop_limit: g.hop_limit,
            tclass: g.traffic_class,
            ifindex,
        })
    }
}

/// Checks a QP state transition and attribute mask against the IBTA table.
pub(crate) fn modify_qp_is_ok(cur: u32, next: u32, qp_type: u32, mask: u32) -> bool {
    // SAFETY: pure table lookup.
    unsafe { b::ib_modify_qp_is_ok(cur, next, qp_type, mask) }
}

/// A driver-allocated `ib_mr` followed by the driver's state.
#[repr(C)]
pub(crate) struct MrShell<T> {
    ib: Opaque<b::ib_mr>,
    data: Arc<T>,
}

impl<T> MrShell<T> {
    /// Allocates a shell around `data` with the given keys; ownership passes to ib_core
    /// until `dereg_mr` hands it back to [`MrShell::free`].
    pub(crate) fn alloc(
        data: Arc<T>,
        lkey: u32,
        rkey: u32,
        iova: u64,
        len: u64,
    ) -> Result<*mut b::ib_mr> {
        let s = KBox::new(
            MrShell {
                ib: Opaque::zeroed(),
                data,
            },
            GFP_KERNEL,
        )?;
        let p = KBox::into_raw(s);
        // SAFETY: fresh allocation, exclusively ours until returned.
        unsafe {
            let mr = (*p).ib.get();
            (*mr).lkey = lkey;
            (*mr).rkey = rkey;
            (*mr).iova = iova;
            (*mr).length = len;
            Ok(mr)
        }
    }

    /// # Safety
    ///
    /// `mr` must come from [`MrShell::alloc`] and not be used afterwards.
    pub(crate) unsafe fn free(mr: *mut b::ib_mr) -> Arc<T> {
        // SAFETY: per the contract, `mr` is the first field of a `KBox<MrShell<T>>`.
        let s = unsafe { KBox::from_raw(mr.cast::<MrShell<T>>()) };
        let data = s.data.clone();
        drop(s);
        data
    }
}
