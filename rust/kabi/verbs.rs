// SPDX-License-Identifier: GPL-2.0
//! Verbs objects: the ib_core-allocated shells (PD, CQ, QP, ucontext) that carry an
//! `Arc` of the driver's state, the driver-allocated MR shell, provider udata, queue
//! mmap entries and the completion-handler hook.

use crate::kabi::mem::UserBuf;
use crate::proto::uapi::{self, Cqe, Payload, RecvWqe, SendWqe, Sge, MAX_SGE};
use crate::sys as b;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, Ordering};
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

/// A ring's [`Mmap`], removed once through a shared reference by its owner's destroy
/// verb.
///
/// Removal takes a mutex of ib_core and must come before the ucontext goes away, so it
/// belongs in the destroy verb (process context). The owner itself may outlive that
/// verb and go away in softirq, when a packet drops the last reference to its QP: by
/// then the slot is empty and dropping it does nothing. (Removing there slept in atomic
/// context and, once the process had closed its uverbs file, read the freed ucontext.)
pub(crate) struct MmapSlot(AtomicPtr<MmapEntry>);

impl MmapSlot {
    /// A slot holding `m` (or nothing: a kernel consumer's ring is not mapped).
    pub(crate) fn new(m: Option<Mmap>) -> MmapSlot {
        let p = m.map_or(core::ptr::null_mut(), |m| {
            let p = m.0.as_ptr();
            // The slot owns the entry's insert reference from here on.
            core::mem::forget(m);
            p
        });
        MmapSlot(AtomicPtr::new(p))
    }

    /// Removes the entry, if the slot still holds it. Process context only.
    pub(crate) fn remove(&self) {
        let p = self.0.swap(core::ptr::null_mut(), Ordering::AcqRel);
        // The swap hands the pointer to one caller only; `Mmap`'s drop removes it.
        drop(NonNull::new(p).map(Mmap));
    }
}

impl Drop for MmapSlot {
    fn drop(&mut self) {
        // Empty after the destroy verb; only a failed create drops a full slot, and that
        // runs in process context.
        self.remove();
    }
}

/// `ops.mmap`: maps the ring registered at the VMA's offset.
///
/// # Safety
///
/// Called by ib_core for `mmap()` on a uverbs file of our device: `uctx` is the caller's
/// live ucontext, whose entries were all inserted by [`Mmap::insert`], and `vma` the VMA
/// being set up.
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
///
/// # Safety
///
/// Called by ib_core once, after the last reference on `e` went away; `e` was inserted by
/// [`Mmap::insert`] (first field of a leaked `KBox<MmapEntry>`) and is never used again.
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

    /// The driver state of a live MR.
    ///
    /// # Safety
    ///
    /// `mr` must come from [`MrShell::alloc`] and stay live for `'a`.
    pub(crate) unsafe fn data_of<'a>(mr: *mut b::ib_mr) -> &'a Arc<T> {
        // SAFETY: per the contract, `mr` is the first field of a live `MrShell<T>`.
        unsafe { &(*mr.cast::<MrShell<T>>()).data }
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

/// The C side of a QP (kernel completions name it in `ib_wc.qp`).
#[derive(Clone, Copy)]
pub(crate) struct QpHandle(NonNull<b::ib_qp>);

// SAFETY: only carried as a value while the QP exists (destroy_qp removes the QP from every
// table a completion lookup uses before ib_core frees the shell).
unsafe impl Send for QpHandle {}
// SAFETY: as above.
unsafe impl Sync for QpHandle {}

impl QpHandle {
    /// # Safety
    ///
    /// `qp` must be the QP being created, live until the driver's destroy returns.
    pub(crate) unsafe fn new(qp: *mut b::ib_qp) -> Option<QpHandle> {
        NonNull::new(qp).map(QpHandle)
    }

    /// Reports `IB_EVENT_SQ_DRAINED` to the consumer.
    pub(crate) fn sq_drained(&self) {
        self.event(b::ib_event_type_IB_EVENT_SQ_DRAINED);
    }

    /// Reports `IB_EVENT_QP_LAST_WQE_REACHED` (a QP on an SRQ entered the error state).
    pub(crate) fn last_wqe_reached(&self) {
        self.event(b::ib_event_type_IB_EVENT_QP_LAST_WQE_REACHED);
    }

    fn event(&self, event: b::ib_event_type) {
        // SAFETY: per `new`'s contract the QP is live.
        unsafe { b::rrxe_qp_event(self.0.as_ptr(), event as i32) }
    }
}

// Kernel work requests keep their opcode in rrxe's WQE form.
const _: () = assert!(uapi::wr::REG_MR == b::ib_wr_opcode_IB_WR_REG_MR);
const _: () = assert!(uapi::wr::LOCAL_INV == b::ib_wr_opcode_IB_WR_LOCAL_INV);
const _: () = assert!(uapi::wr::SEND_WITH_INV == b::ib_wr_opcode_IB_WR_SEND_WITH_INV);

/// Reads a kernel scatter list.
///
/// # Safety
///
/// `list` must point to `num` valid `ib_sge`s (or be unused when `num` is 0).
unsafe fn sges(list: *const b::ib_sge, num: c_int) -> Result<([Sge; MAX_SGE], usize)> {
    let n = usize::try_from(num).map_err(|_| EINVAL)?;
    if n > MAX_SGE {
        return Err(EINVAL);
    }
    let mut out = [Sge::default(); MAX_SGE];
    for (i, s) in out.iter_mut().enumerate().take(n) {
        // SAFETY: per the contract, `list[i]` is valid.
        let k = unsafe { &*list.add(i) };
        *s = Sge {
            addr: k.addr,
            length: k.length,
            lkey: k.lkey,
        };
    }
    Ok((out, n))
}

/// A kernel consumer's send work request in rrxe's WQE form. `ah_num` maps the UD
/// request's address handle to its number.
///
/// # Safety
///
/// `wr` must be a valid work request of the type its opcode implies on a QP of type
/// `qp_type` (ib_core's contract for `post_send`).
pub(crate) unsafe fn kernel_send_wr(
    wr: *const b::ib_send_wr,
    qp_type: u32,
    ah_num: impl Fn(*mut b::ib_ah) -> Option<u32>,
) -> Result<SendWqe> {
    // SAFETY: valid per the contract.
    let w = unsafe { &*wr };
    if w.send_flags as u32 & uapi::send_flags::INLINE != 0 {
        return Err(EINVAL);
    }
    // SAFETY: per the contract, `sg_list` holds `num_sge` entries.
    let (sge, num) = unsafe { sges(w.sg_list, w.num_sge)? };
    let length = sge
        .iter()
        .take(num)
        .try_fold(0u32, |a, s| a.checked_add(s.length))
        .ok_or(EINVAL)?;
    // SAFETY: both unions start at their field offsets and are at least 8/4 bytes.
    let (wr_id, ex) = unsafe {
        (
            core::ptr::read_unaligned(core::ptr::addr_of!(w.__bindgen_anon_1).cast::<u64>()),
            core::ptr::read_unaligned(core::ptr::addr_of!(w.ex).cast::<u32>()),
        )
    };
    let mut out = SendWqe {
        wr_id,
        opcode: w.opcode,
        flags: w.send_flags as u32,
        // The kernel's imm_data is already big-endian in memory, like userspace's.
        ex,
        length,
        payload: Payload::Sges { sge, num },
        ..SendWqe::EMPTY
    };
    let ud = qp_type == b::ib_qp_type_IB_QPT_UD || qp_type == b::ib_qp_type_IB_QPT_GSI;
    if ud {
        // SAFETY: UD requests are `ib_ud_wr`s with the generic request first.
        let u = unsafe { &*wr.cast::<b::ib_ud_wr>() };
        out.remote_qpn = u.remote_qpn;
        out.remote_qkey = u.remote_qkey;
        out.ah_num = ah_num(u.ah).ok_or(EINVAL)?;
    } else if matches!(
        w.opcode,
        b::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP | b::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD
    ) {
        // SAFETY: atomic requests are `ib_atomic_wr`s.
        let a = unsafe { &*wr.cast::<b::ib_atomic_wr>() };
        out.remote_addr = a.remote_addr;
        out.rkey = a.rkey;
        out.compare_add = a.compare_add;
        out.swap = a.swap;
    } else if w.opcode == b::ib_wr_opcode_IB_WR_REG_MR {
        // SAFETY: registration requests are `ib_reg_wr`s naming a live MR of the QP's
        // device (the consumer keeps it until the request completes).
        let (r, mr) = unsafe {
            let r = &*wr.cast::<b::ib_reg_wr>();
            (r, &*r.mr)
        };
        // The `reg` variant in the layout of librxe's `mw` one (see `SendWqe::bind`):
        // the MR by its lkey (only the index counts: the consumer may already have moved
        // the key on), the key it takes, its access and region.
        out.remote_addr = mr.iova;
        out.compare_add = mr.length;
        out.swap = u64::from(mr.lkey);
        out.rkey = r.key;
        out.access = r.access as u32;
    } else if matches!(
        w.opcode,
        b::ib_wr_opcode_IB_WR_RDMA_WRITE
            | b::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM
            | b::ib_wr_opcode_IB_WR_RDMA_READ
            | b::ib_wr_opcode_IB_WR_ATOMIC_WRITE
            | b::ib_wr_opcode_IB_WR_FLUSH
    ) {
        // SAFETY: RDMA requests are `ib_rdma_wr`s; so are ATOMIC WRITE (its 8 bytes in
        // the SGE list) and FLUSH (the range's length is the SGE list's total, no
        // memory of its own), which the kernel API gives no request type of their own.
        let r = unsafe { &*wr.cast::<b::ib_rdma_wr>() };
        out.remote_addr = r.remote_addr;
        out.rkey = r.rkey;
        if w.opcode == b::ib_wr_opcode_IB_WR_FLUSH {
            out.flush_type = b::ib_placement_type_IB_FLUSH_GLOBAL as u8;
            out.flush_level = if length > 0 {
                b::ib_selectivity_level_IB_FLUSH_RANGE as u8
            } else {
                b::ib_selectivity_level_IB_FLUSH_MR as u8
            };
        }
    }
    Ok(out)
}

/// A kernel consumer's receive work request in rrxe's WQE form.
///
/// # Safety
///
/// `wr` must be a valid receive work request.
pub(crate) unsafe fn kernel_recv_wr(wr: *const b::ib_recv_wr) -> Result<RecvWqe> {
    // SAFETY: valid per the contract.
    let w = unsafe { &*wr };
    // SAFETY: per the contract, `sg_list` holds `num_sge` entries.
    let (sge, num) = unsafe { sges(w.sg_list, w.num_sge)? };
    // SAFETY: the id union is 8 bytes at its field offset.
    let wr_id =
        unsafe { core::ptr::read_unaligned(core::ptr::addr_of!(w.__bindgen_anon_1).cast::<u64>()) };
    Ok(RecvWqe {
        wr_id,
        sge,
        num,
        length: sge
            .iter()
            .take(num)
            .fold(0u32, |a, s| a.saturating_add(s.length)),
    })
}

/// Fills a kernel work completion from a CQE of QP `qp`.
pub(crate) fn fill_wc(wc: &mut b::ib_wc, c: &Cqe, qp: QpHandle) {
    let mut flags = 0;
    let map = [
        (uapi::wc_flags::GRH, b::ib_wc_flags_IB_WC_GRH),
        (uapi::wc_flags::WITH_IMM, b::ib_wc_flags_IB_WC_WITH_IMM),
        (
            uapi::wc_flags::WITH_INV,
            b::ib_wc_flags_IB_WC_WITH_INVALIDATE,
        ),
    ];
    for (u, k) in map {
        if c.wc_flags & u != 0 {
            flags |= k;
        }
    }
    if c.net_type != 0 {
        flags |= b::ib_wc_flags_IB_WC_WITH_NETWORK_HDR_TYPE;
    }
    // SAFETY: `ib_wc` is plain C data for which all-zero bytes are valid; then the 8-byte id
    // union and the 4-byte ex union are written at their offsets.
    unsafe {
        core::ptr::write_bytes(core::ptr::from_mut(wc), 0, 1);
        core::ptr::write_unaligned(
            core::ptr::addr_of_mut!(wc.__bindgen_anon_1).cast::<u64>(),
            c.wr_id,
        );
        core::ptr::write_unaligned(core::ptr::addr_of_mut!(wc.ex).cast::<u32>(), c.ex);
    }
    wc.status = c.status;
    wc.opcode = c.opcode;
    wc.byte_len = c.byte_len;
    wc.qp = qp.0.as_ptr();
    wc.src_qp = c.src_qp;
    wc.wc_flags = flags as c_int;
    wc.port_num = u32::from(c.port_num);
    wc.network_hdr_type = c.net_type;
}
