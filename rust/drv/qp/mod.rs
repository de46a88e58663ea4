// SPDX-License-Identifier: GPL-2.0
//! Queue pairs. This file holds the QP object and its verbs (create, modify, query,
//! destroy, posting, the doorbell) and the completion of send WQEs; the engine runs in
//! the files beside it, each carrying out one protocol-core machine's decisions under
//! the QP's BH lock:
//!
//! - `req.rs`: the requester ([`rc::req`]): segmentation, transmission, retransmission;
//! - `comp.rs`: the completer ([`rc::comp`]): ACKs, NAKs, READ responses, atomic ACKs;
//! - `local.rs`: local operations (MR registration, invalidation);
//! - `resp.rs`: the responder ([`rc::resp`]): executing requests, ACK/NAK, READ answers;
//! - `reasm.rs`: packets kept beyond the expected PSN (selective retransmission);
//! - `ud.rs`: UD and GSI datagrams;
//! - `uc.rs`: unreliable connected QPs;
//! - `mem.rs`: the decoded-WQE cache, gather and scatter;
//! - `sched.rs`: where the engine runs: the receive queue, the work item, the timer.

mod cc;
mod comp;
mod local;
mod mem;
mod reasm;
mod req;
mod resp;
mod sched;
mod uc;
mod ud;

use super::limits::{MAX_QP_RD_ATOM, REASM_QP_KIB};
use super::res::{access, Cq, Mr, Ring, Srq};
use super::shared::{Closed, DevShared};
use super::tx::Path;
use crate::kabi::lock::{new_spinlock_bh, new_spinlock_irq, SpinLockBh, SpinLockIrq};
use crate::kabi::timer::{Deadline, Timer};
use crate::kabi::verbs::{Av, QpHandle, Udata};
use crate::kabi::work::Work;
use crate::proto::psn::Psn;
use crate::proto::rc::req::{Requester, Slot};
use crate::proto::rc::resp::{Responder, REPLAY};
use crate::proto::rc::sack::{Keeper, SackTx};
use crate::proto::rc::{self, QpState, Retry};
use crate::proto::rdrep::ReadRepair;
use crate::proto::sel::{ProbeDelay, SoloHint, RX_SPAN};
use crate::proto::uapi::{self, send_flags, wc_opcode, wc_status, Cqe, RecvWqe, SendWqe};
use crate::proto::uc::UcResponder;
use crate::proto::verify::CheckPolicy;
use crate::sys as b;
use cc::QpCc;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use mem::WqeCache;
use reasm::Kept;
use sched::RxQueue;

/// How many later PSNs must arrive before the responder reports a hole: the bounds of
/// the adaptation (doubled when a reported hole is then filled by the original packet,
/// eased back by one when a retransmission fills it). The maximum stays below half the
/// requester's window, so a hole is always reported before the window closes.
const REORDER_MAX: u32 = 48;
/// The same bound for READ responses: they do not hold the requester's PSN window, and
/// two READs answered from two CPUs interleave by up to a whole READ (64 packets of 64 KiB
/// at MTU 1024).
const RD_REORDER_MAX: u32 = 256;
/// Confirmed reports needed to lower a reordering threshold by one.
const REORDER_DECAY: u32 = 8;

/// The QP's timers, as their expiries reach [`crate::kabi::timer::TimerHandler`].
/// Retransmission (go-back-N timeout, tail-loss probe, end of an RNR wait).
const TIMER_RETX: u8 = 0;
/// Congestion control: the pacer admits the next packet.
const TIMER_PACE: u8 = 1;
/// Congestion control: check whether the responder side went idle.
const TIMER_IDLE: u8 = 2;

/// Selective-retransmission mode (module parameter `selective`).
pub(crate) mod selmode {
    /// Plain IBTA go-back-N: never offer, never accept.
    pub(crate) const OFF: u32 = 0;
    /// Offer on every request, use it once the peer accepts (default).
    pub(crate) const AUTO: u32 = 1;
    /// Use it from the first packet (both ends must be rrxe).
    pub(crate) const FORCE: u32 = 2;
}

/// Responder context of a multi-packet SEND. The receive WQE (about 530 bytes) is
/// allocated with the QP and decoded into in place, never moved.
struct RecvCtx {
    /// A SEND is in progress and `wqe` is its receive WQE.
    active: bool,
    /// `wqe`, taken from the SRQ, waits for the SEND's first packet to come again (it got
    /// an RNR NAK for on-demand-paged pages being faulted in).
    held: bool,
    wqe: KBox<RecvWqe>,
    offset: u32,
    /// XETH WQE sequence number of the SEND (selective peers).
    seq: Option<u32>,
}

/// Responder context of a multi-packet WRITE.
struct WriteCtx {
    mr: Option<Arc<Mr>>,
    va: u64,
    resid: u32,
    len: u32,
    /// First byte of the WRITE (`va` moves on as packets arrive in order).
    start: u64,
    /// XETH WQE sequence number of the WRITE (selective peers).
    seq: Option<u32>,
    /// PSN of the WRITE's first packet (where a failed check sends the requester back).
    first_psn: Psn,
}

/// Everything of a QP that changes, under its BH lock.
struct State {
    state: QpState,
    /// UD: the Q_Key of the QP.
    qkey: u32,
    access: i32,
    mtu: u32,
    mtu_enum: u32,
    dest_qpn: u32,
    path: Option<Path>,
    av: Option<Av>,
    timeout: u8,
    min_rnr_timer: u8,
    max_rd_atomic: u8,
    max_dest_rd_atomic: u8,
    /// SQD: WQEs from this SQ slot on are not started until the QP is back in RTS; the
    /// ones before it (posted and started before the drain) complete.
    sqd_stop: u32,
    /// SQD: report `IB_EVENT_SQ_DRAINED` once they have (`en_sqd_async_notify`).
    sqd_notify: bool,
    // ---- requester and completer
    /// Per SQ slot: what the engine keeps of its WQE.
    slots: KVec<Slot>,
    /// The send queue's progress, window, credits and retry budgets.
    req: Requester,
    /// The WQE being transmitted (`req.next`), decoded once for all its packets.
    cur: WqeCache,
    /// The READ or atomic WQE whose responses are arriving, decoded once for all of
    /// them (forgotten when it completes).
    comp: WqeCache,
    // ---- responder
    /// Expected PSN, MSN, ACK coalescing, NAK and RNR state.
    resp: Responder,
    rq_cons: u32,
    recv: RecvCtx,
    write: Option<WriteCtx>,
    /// Results of the last executed atomics, by PSN, for duplicate requests.
    replay: KVec<Option<(Psn, u64)>>,
    // ---- selective retransmission
    /// Requester: the peer accepted (its responses carry the capability bit).
    sel_tx: bool,
    /// Requester: a response arrived, so negotiation is decided.
    sel_seen: bool,
    /// Requester: new packets the IP stack refused in a row (see `req::TX_BUSY`).
    tx_refused: u8,
    /// Requester: probes sent since the last response.
    probes: u32,
    /// Requester: the silence those probes waited out (µs), against the transport
    /// timeout.
    silent_us: u64,
    /// Requester: the retransmit timer runs a tail-loss probe delay, not the transport
    /// timer (see `Qp::arm_retx`).
    retx_probe: bool,
    /// Requester: READ responses received and asked for again (with the probes counted
    /// since the last READ response: unlike `probes`, not reset by the ACK a probe brings
    /// back, which says nothing of READ responses).
    rd: ReadRepair,
    /// Requester: which PSNs a SACK sends again.
    sack: SackTx,
    /// Requester: the round trip, and from it the tail-loss probe delay.
    pto: ProbeDelay,
    /// Responder: the requester offered (keep packets beyond the expected PSN, SACK).
    peer_sel: bool,
    /// Responder: what to keep beyond the expected PSN, when to report holes.
    keep: Keeper,
    /// Responder: the kept packets and their sizes, by `psn % RX_SPAN` (empty when
    /// selective retransmission is off).
    kept: KVec<Option<Kept>>,
    kept_bytes: usize,
    // ---- verified WRITEs
    /// Requester: a response arrived, so whether the peer checks WRITEs is known.
    vfy_seen: bool,
    /// Requester: the peer checks WRITEs (and selective retransmission is on).
    vfy_tx: bool,
    /// Requester: hellos sent to learn the peer's capabilities before the first WRITE.
    hellos: u8,
    /// Requester: the last hello's wait is over (unanswered): the next may go.
    hello_due: bool,
    // ---- the XF_SOLO hint (requester)
    solo_hint: SoloHint,
    /// The WQE whose packets carry XF_SOLO while nothing is posted behind it.
    solo_wqe: Option<u32>,
    /// A SEND or WRITE from the peer arrived since the requester last started a WQE.
    pinged: bool,
    /// Responder: the requester offered verified WRITEs.
    peer_vfy: bool,
    /// Responder: whether to read the next verified WRITE back.
    vcheck: CheckPolicy,
    // ---- congestion control
    cc: QpCc,
    // ---- unreliable connected
    /// UC responder: the expected PSN, a message in progress.
    uc: UcResponder,
}

impl State {
    /// Requester: the silence the tail-loss probes measure is over (a response arrived,
    /// or the transport timer expired).
    fn silence_over(&mut self) {
        self.probes = 0;
        self.silent_us = 0;
    }

    /// Requester: a response arrived.
    fn heard(&mut self) {
        self.req.answered();
        self.silence_over();
    }
}

/// A queue pair.
#[pin_data]
pub(crate) struct Qp {
    pub(crate) qpn: u32,
    pd: usize,
    sig_all: bool,
    dev: Arc<DevShared>,
    scq: Arc<Cq>,
    rcq: Arc<Cq>,
    /// `IB_QPT_RC`, `IB_QPT_UD` or `IB_QPT_GSI`.
    qp_type: u32,
    /// The C object, for kernel completions.
    pub(crate) handle: QpHandle,
    /// Created by a kernel consumer (rings private to the kernel, `ib_wc` completions).
    kernel: bool,
    /// Kernel consumers post from any context (interrupts disabled included): their
    /// requests only go into the rings under this lock; the engine runs from `send_work`.
    #[pin]
    post_lock: SpinLockIrq<()>,
    /// Mirrors `state == Err` for posters that cannot take the engine lock.
    in_error: AtomicBool,
    /// The work item is processing a receive batch (else a packet is processed alone,
    /// straight from the softirq, and its ACK goes out at once: there is nothing to
    /// coalesce it with, and latency tools expect the ACK before the peer's reply).
    rx_batching: AtomicBool,
    /// Requester runs in progress under `st` (the work item, a doorbell). While one runs,
    /// the receive softirq and further doorbells hand their work to `send_work` instead
    /// of spinning on `st` behind it, on another CPU, for up to a window of packets.
    engines: AtomicU32,
    /// Packets the receive softirq sorted to this QP, for `send_work` to process, and
    /// whether that work is draining them.
    #[pin]
    rxq: SpinLockBh<RxQueue>,
    sq: Ring,
    /// The receive queue, unless receives come from an SRQ.
    rq: Option<Ring>,
    srq: Option<Arc<Srq>>,
    max_send_sge: u32,
    max_inline: u32,
    max_recv_sge: u32,
    /// `selmode` at creation.
    sel_mode: u32,
    /// Offer verified WRITEs (the device's `verify/enable` at creation).
    vfy_offer: bool,
    /// Bytes of packets the QP keeps beyond its expected PSN (module parameter
    /// `reasm_qp_kib` at creation).
    reasm_max: usize,
    timer: Timer<Qp>,
    /// Congestion control: the pacer's wake-up ([`TIMER_PACE`]).
    pace_timer: Timer<Qp>,
    /// Congestion control: the responder's idle check ([`TIMER_IDLE`]).
    idle_timer: Timer<Qp>,
    /// A request arrived Congestion Experienced since the responder last looked.
    ce: AtomicBool,
    /// Requester work deferred from softirq (ACKs, timer) to any CPU.
    send_work: Work<Qp>,
    #[pin]
    st: SpinLockBh<State>,
}

fn wc_op_of(opcode: u32) -> u32 {
    match opcode {
        uapi::wr::RDMA_WRITE | uapi::wr::RDMA_WRITE_WITH_IMM => wc_opcode::RDMA_WRITE,
        uapi::wr::RDMA_READ => wc_opcode::RDMA_READ,
        uapi::wr::ATOMIC_CMP_AND_SWP => wc_opcode::COMP_SWAP,
        uapi::wr::ATOMIC_FETCH_AND_ADD => wc_opcode::FETCH_ADD,
        uapi::wr::ATOMIC_WRITE => wc_opcode::ATOMIC_WRITE,
        uapi::wr::FLUSH => wc_opcode::FLUSH,
        uapi::wr::LOCAL_INV => wc_opcode::LOCAL_INV,
        uapi::wr::BIND_MW => wc_opcode::BIND_MW,
        uapi::wr::REG_MR => b::ib_wc_opcode_IB_WC_REG_MR,
        _ => wc_opcode::SEND,
    }
}

impl Qp {
    /// A new QP with number `qpn` (reserved by the device, which publishes the QP in
    /// its table once created).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn create(
        dev: &Arc<DevShared>,
        qpn: u32,
        pd: usize,
        init: &mut b::ib_qp_init_attr,
        (scq, rcq): (Arc<Cq>, Arc<Cq>),
        srq: Option<Arc<Srq>>,
        handle: QpHandle,
        udata: Option<&Udata>,
    ) -> Result<Arc<Qp>> {
        let qp_type = init.qp_type;
        let gsi = qp_type == b::ib_qp_type_IB_QPT_GSI;
        if qp_type != b::ib_qp_type_IB_QPT_RC
            && qp_type != b::ib_qp_type_IB_QPT_UC
            && qp_type != b::ib_qp_type_IB_QPT_UD
            && !(gsi && udata.is_none())
        {
            return Err(EOPNOTSUPP);
        }
        if init.create_flags != 0 {
            return Err(EOPNOTSUPP);
        }
        if srq.as_ref().is_some_and(|q| q.pd != pd) {
            return Err(EINVAL);
        }
        if udata.is_some_and(|u| u.in_len() != 0 || u.out_len() < 32) {
            return Err(EINVAL);
        }
        let cap = &mut init.cap;
        if cap.max_send_sge as usize > uapi::MAX_SGE
            || cap.max_recv_sge as usize > uapi::MAX_SGE
            || cap.max_inline_data as usize > uapi::MAX_INLINE
        {
            return Err(EINVAL);
        }
        let (selem, max_send_sge, max_inline) =
            uapi::sq_elem(cap.max_send_sge, cap.max_inline_data);
        let (sq, sq_mi) = Ring::new(cap.max_send_wr.max(1), selem, udata)?;
        let max_recv_sge = cap.max_recv_sge.max(1);
        let (rq, rq_mi) = if srq.is_some() {
            (None, [0u8; 16])
        } else {
            let (r, mi) = Ring::new(cap.max_recv_wr.max(1), uapi::rq_elem(max_recv_sge), udata)?;
            (Some(r), mi)
        };
        let mut resp = [0u8; 32];
        resp[..16].copy_from_slice(&rq_mi);
        resp[16..].copy_from_slice(&sq_mi);
        if let Some(u) = udata {
            u.respond(&resp)?;
        }
        cap.max_send_wr = sq.geom.capacity();
        cap.max_send_sge = max_send_sge;
        cap.max_inline_data = max_inline;
        cap.max_recv_wr = rq.as_ref().map_or(0, |r| r.geom.capacity());
        cap.max_recv_sge = max_recv_sge;
        let nslots = sq.geom.mask as usize + 1;
        let mut slots = KVec::with_capacity(nslots, GFP_KERNEL)?;
        for _ in 0..nslots {
            slots.push(Slot::default(), GFP_KERNEL)?;
        }
        let mut replay = KVec::with_capacity(REPLAY, GFP_KERNEL)?;
        for _ in 0..REPLAY {
            replay.push(None, GFP_KERNEL)?;
        }
        let sel_mode = if qp_type == b::ib_qp_type_IB_QPT_RC {
            crate::module_parameters::selective
                .value()
                .min(selmode::FORCE)
        } else {
            selmode::OFF
        };
        let mut kept = KVec::new();
        if sel_mode != selmode::OFF {
            kept.reserve(RX_SPAN as usize, GFP_KERNEL)?;
            for _ in 0..RX_SPAN {
                kept.push(None, GFP_KERNEL)?;
            }
        }
        let forced = sel_mode == selmode::FORCE;
        let reasm_max = crate::module_parameters::reasm_qp_kib
            .value()
            .clamp(REASM_QP_KIB.0, REASM_QP_KIB.1) as usize
            * 1024;
        let sig_all = init.sq_sig_type == b::ib_sig_type_IB_SIGNAL_ALL_WR;
        // Verified WRITEs need the extended header, so selective retransmission.
        let vfy_offer = sel_mode != selmode::OFF && dev.knobs.verify().enabled();
        let r = Arc::pin_init(
            try_pin_init!(Qp {
                qpn,
                pd,
                sig_all,
                dev: dev.clone(),
                scq,
                rcq,
                qp_type,
                handle,
                kernel: udata.is_none(),
                post_lock <- new_spinlock_irq!(()),
                rxq <- new_spinlock_bh!(RxQueue {
                    pkts: KVec::new(),
                    urgent: 0,
                    busy: false
                }),
                in_error: AtomicBool::new(false),
                rx_batching: AtomicBool::new(false),
                engines: AtomicU32::new(0),
                sq,
                rq,
                srq,
                max_send_sge,
                max_inline,
                max_recv_sge,
                sel_mode,
                vfy_offer,
                reasm_max,
                timer: Timer::new(TIMER_RETX)?,
                pace_timer: Timer::new(TIMER_PACE)?,
                idle_timer: Timer::new(TIMER_IDLE)?,
                ce: AtomicBool::new(false),
                send_work: Work::new()?,
                st <- new_spinlock_bh!(State {
                    state: QpState::Reset,
                    qkey: 0,
                    access: 0,
                    mtu: 256,
                    mtu_enum: 1,
                    dest_qpn: 0,
                    path: None,
                    av: None,
                    timeout: 0,
                    min_rnr_timer: 0,
                    max_rd_atomic: 0,
                    max_dest_rd_atomic: 0,
                    sqd_stop: 0,
                    sqd_notify: false,
                    slots,
                    req: Requester::new(Psn::new(0)),
                    cur: WqeCache::new()?,
                    comp: WqeCache::new()?,
                    resp: Responder::new(),
                    rq_cons: 0,
                    recv: RecvCtx {
                        active: false,
                        held: false,
                        wqe: KBox::new(RecvWqe::EMPTY, GFP_KERNEL)?,
                        offset: 0,
                        seq: None,
                    },
                    write: None,
                    replay,
                    sel_tx: forced,
                    sel_seen: false,
                    tx_refused: 0,
                    probes: 0,
                    silent_us: 0,
                    retx_probe: false,
                    rd: ReadRepair::new(Psn::new(0), RD_REORDER_MAX, REORDER_DECAY),
                    sack: SackTx::new(Psn::new(0)),
                    pto: ProbeDelay::new(),
                    peer_sel: forced,
                    keep: Keeper::new(Psn::new(0), REORDER_MAX, REORDER_DECAY),
                    kept,
                    kept_bytes: 0,
                    vfy_seen: false,
                    vfy_tx: false,
                    hellos: 0,
                    hello_due: false,
                    solo_hint: SoloHint::new(),
                    solo_wqe: None,
                    pinged: false,
                    peer_vfy: false,
                    vcheck: CheckPolicy::new(),
                    cc: QpCc::new(dev.knobs.params()),
                    uc: UcResponder::new(Psn::new(0)),
                }),
            }),
            GFP_KERNEL,
        );
        let qp = r?;
        qp.timer.bind(&qp);
        qp.pace_timer.bind(&qp);
        qp.idle_timer.bind(&qp);
        qp.send_work.bind(&qp);
        Ok(qp)
    }

    /// Undoes [`Qp::create`] for a QP that was never published.
    pub(crate) fn abort(&self) {
        self.timer.shutdown();
        self.pace_timer.shutdown();
        self.idle_timer.shutdown();
        self.send_work.shutdown();
    }

    /// Stops every packet-path user of the QP (destroy; the device has already removed
    /// it from its table, so no new packet finds it).
    pub(crate) fn shutdown(&self) {
        // After this no packet, timer or work item touches the QP's queues again.
        let closed = {
            let mut st = self.st.lock();
            // (Not after a READ or atomic to an IBTA requester: an ACK would complete
            // it, see [`Responder::read_last`].)
            let keep = !self.ud() && st.state.connected() && (st.peer_sel || !st.resp.read_last);
            st.state = QpState::Reset;
            self.drop_kept(&mut st);
            self.cc_detach(&mut st);
            let path = if keep { st.path.take() } else { None };
            path.map(|p| (p, st.dest_qpn, st.resp.psn, st.resp.msn))
        };
        // Its peer may still be waiting for the ACK of its last request (lost): keep
        // answering for a moment. (Without memory for the record, the peer times out.)
        if let Some((p, dest_qpn, resp_psn, msn)) = closed {
            if let Ok(path) = Arc::new(p, GFP_KERNEL) {
                self.dev.remember_closed(Closed {
                    qpn: self.qpn,
                    dest_qpn,
                    resp_psn,
                    msn,
                    path,
                    until: Deadline::after_us(super::limits::CLOSED_US),
                });
            }
        }
        self.timer.shutdown();
        self.pace_timer.shutdown();
        self.idle_timer.shutdown();
        self.send_work.shutdown();
        // Packets still queued are freed unprocessed.
        self.drop_queued();
        // The rings leave mmap now, in process context: the last reference to the QP
        // may go away later in softirq (a packet that found it just before).
        self.sq.unpublish();
        if let Some(rq) = &self.rq {
            rq.unpublish();
        }
    }

    /// Datagram QPs: UD and the GSI QP.
    fn ud(&self) -> bool {
        self.qp_type == b::ib_qp_type_IB_QPT_UD || self.qp_type == b::ib_qp_type_IB_QPT_GSI
    }

    /// A kernel consumer queues a send work request (the doorbell follows the list).
    pub(crate) fn post_send_kernel(&self, w: &SendWqe) -> Result {
        if !self.kernel {
            return Err(EOPNOTSUPP);
        }
        if let uapi::Payload::Sges { num, .. } = w.payload {
            if num > self.max_send_sge as usize {
                return Err(EINVAL);
            }
        }
        let _g = self.post_lock.lock();
        self.sq.push(|s| w.encode(s).map_err(|_| EINVAL))
    }

    /// A kernel consumer posts a receive work request.
    pub(crate) fn post_recv_kernel(&self, w: &RecvWqe) -> Result {
        let (true, Some(rq)) = (self.kernel, &self.rq) else {
            return Err(EINVAL);
        };
        rq.push_recv(&self.post_lock, self.max_recv_sge, w)?;
        if self.in_error.load(Ordering::Acquire) {
            // Flushed to the CQ by the engine.
            self.send_work.queue();
        }
        Ok(())
    }

    /// Modifies the QP; `port_mtu` is the port's active MTU in bytes (the UD path MTU).
    pub(crate) fn modify(&self, attr: &b::ib_qp_attr, mask: u32, port_mtu: u32) -> Result {
        use crate::kabi::verbs::modify_qp_is_ok;
        let m = |bit: u32| mask & bit != 0;
        let mut st = self.st.lock();
        let cur = if m(b::ib_qp_attr_mask_IB_QP_CUR_STATE) {
            attr.cur_qp_state
        } else {
            st.state.to_ib()
        };
        let new = if m(b::ib_qp_attr_mask_IB_QP_STATE) {
            attr.qp_state
        } else {
            cur
        };
        if mask & !((1u32 << 21) - 1) != 0 || !modify_qp_is_ok(cur, new, self.qp_type, mask) {
            return Err(EINVAL);
        }
        let new = QpState::from_ib(new).ok_or(EINVAL)?;
        if m(b::ib_qp_attr_mask_IB_QP_PORT) && attr.port_num != 1 {
            return Err(EINVAL);
        }
        if m(b::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS) {
            // (The connection manager asks for both FLUSH flags on every responder QP of a
            // device that advertises FLUSH; an MR is never registered FLUSH_PERSISTENT.)
            if attr.qp_access_flags & !(access::SUPPORTED | access::FLUSH_PERSISTENT) != 0 {
                return Err(EINVAL);
            }
            st.access = attr.qp_access_flags;
        }
        if m(b::ib_qp_attr_mask_IB_QP_PATH_MTU) {
            let bytes = crate::proto::port::ib_mtu_bytes(attr.path_mtu).ok_or(EINVAL)?;
            st.mtu = bytes;
            st.mtu_enum = attr.path_mtu;
        }
        if m(b::ib_qp_attr_mask_IB_QP_TIMEOUT) {
            if attr.timeout > 31 {
                return Err(EINVAL);
            }
            st.timeout = attr.timeout;
        }
        if m(b::ib_qp_attr_mask_IB_QP_RETRY_CNT) {
            st.req.retry = Retry::new(attr.retry_cnt);
        }
        if m(b::ib_qp_attr_mask_IB_QP_RNR_RETRY) {
            st.req.rnr = Retry::rnr(attr.rnr_retry);
        }
        if m(b::ib_qp_attr_mask_IB_QP_MIN_RNR_TIMER) {
            st.min_rnr_timer = attr.min_rnr_timer & 31;
        }
        if m(b::ib_qp_attr_mask_IB_QP_MAX_QP_RD_ATOMIC) {
            if u32::from(attr.max_rd_atomic) > MAX_QP_RD_ATOM {
                return Err(EINVAL);
            }
            st.max_rd_atomic = attr.max_rd_atomic;
        }
        if m(b::ib_qp_attr_mask_IB_QP_MAX_DEST_RD_ATOMIC) {
            if u32::from(attr.max_dest_rd_atomic) > MAX_QP_RD_ATOM {
                return Err(EINVAL);
            }
            st.max_dest_rd_atomic = attr.max_dest_rd_atomic;
        }
        if m(b::ib_qp_attr_mask_IB_QP_QKEY) {
            st.qkey = attr.qkey;
        }
        if self.ud() {
            st.mtu = port_mtu;
        }
        if m(b::ib_qp_attr_mask_IB_QP_DEST_QPN) {
            st.dest_qpn = attr.dest_qp_num & rc::MASK24;
        }
        if m(b::ib_qp_attr_mask_IB_QP_RQ_PSN) {
            st.resp.set_psn(Psn::new(attr.rq_psn));
            st.uc = UcResponder::new(Psn::new(attr.rq_psn));
            self.drop_kept(&mut st);
        }
        if m(b::ib_qp_attr_mask_IB_QP_SQ_PSN) {
            let psn = Psn::new(attr.sq_psn);
            st.req.set_psn(psn);
            st.rd.restart(psn);
            st.sack.restart(psn);
            st.pto = ProbeDelay::new();
        }
        if m(b::ib_qp_attr_mask_IB_QP_AV) {
            let av = Av::from_attr(&attr.ah_attr).ok_or(EINVAL)?;
            st.av = Some(av);
        }
        if !self.ud() && (new == QpState::Rtr || (new == QpState::Rts && st.path.is_none())) {
            let av = st.av.ok_or(EINVAL)?;
            st.path = Some(Path::new(self.dev.net, &av, self.qpn, st.dest_qpn)?);
            self.cc_attach(&mut st, &av.dgid);
        }
        if new != st.state {
            match new {
                QpState::Reset => self.reset(&mut st),
                QpState::Err => {
                    st.state = QpState::Err;
                    self.flush(&mut st);
                }
                QpState::Sqd => {
                    // Drain: finish the WQEs already started (the one being segmented
                    // included), start no new one.
                    let i = st.req.next;
                    let started = st.slots.get(i as usize).is_some_and(|s| s.started);
                    st.sqd_stop = if started && i != self.sq.producer() {
                        self.sq.geom.next(i)
                    } else {
                        i
                    };
                    st.sqd_notify = m(b::ib_qp_attr_mask_IB_QP_EN_SQD_ASYNC_NOTIFY)
                        && attr.en_sqd_async_notify != 0;
                    st.state = QpState::Sqd;
                    self.sqd_check(&mut st);
                }
                _ => st.state = new,
            }
        }
        if st.state == QpState::Rts {
            // Offering verified WRITEs: learn whether the peer checks them before the
            // first one (a hello now; the requester sends more if it goes unanswered).
            if self.vfy_offer && !st.vfy_seen && st.hellos == 0 && st.req.idle() {
                self.hello(&mut st);
            }
            self.req_run(&mut st);
        }
        Ok(())
    }

    pub(crate) fn query(&self, attr: &mut b::ib_qp_attr, init: &mut b::ib_qp_init_attr) {
        let st = self.st.lock();
        attr.qp_state = st.state.to_ib();
        attr.cur_qp_state = st.state.to_ib();
        attr.path_mtu = st.mtu_enum;
        attr.qp_access_flags = st.access;
        attr.dest_qp_num = st.dest_qpn;
        attr.sq_psn = st.req.req_psn.get();
        attr.rq_psn = st.resp.psn.get();
        attr.timeout = st.timeout;
        attr.retry_cnt = st.req.retry.limit();
        attr.rnr_retry = st.req.rnr.limit();
        attr.min_rnr_timer = st.min_rnr_timer;
        attr.max_rd_atomic = st.max_rd_atomic;
        attr.max_dest_rd_atomic = st.max_dest_rd_atomic;
        attr.port_num = 1;
        attr.sq_draining = u8::from(st.state == QpState::Sqd && st.req.cons != st.sqd_stop);
        let cap = || b::ib_qp_cap {
            max_send_wr: self.sq.geom.capacity(),
            max_recv_wr: self.rq.as_ref().map_or(0, |r| r.geom.capacity()),
            max_send_sge: self.max_send_sge,
            max_recv_sge: self.max_recv_sge,
            max_inline_data: self.max_inline,
            max_rdma_ctxs: 0,
        };
        attr.cap = cap();
        init.cap = cap();
        init.qp_type = self.qp_type;
        attr.qkey = st.qkey;
        init.sq_sig_type = if self.sig_all {
            b::ib_sig_type_IB_SIGNAL_ALL_WR
        } else {
            b::ib_sig_type_IB_SIGNAL_REQ_WR
        };
    }

    /// The user rang the SQ doorbell, or a kernel consumer's request list ended.
    pub(crate) fn doorbell(&self) -> Result {
        if self.kernel {
            // Maybe with interrupts disabled: the engine runs from the work item.
            self.send_work.queue();
            return Ok(());
        }
        if self.engine_busy() {
            // The running engine sends this request too: the work item runs again.
            self.send_work.queue();
            return Ok(());
        }
        let mut st = self.st.lock();
        if self.autocork(&mut st) {
            drop(st);
            self.send_work.queue();
            return Ok(());
        }
        // (Declared after the guard: ends before the unlock runs pending softirqs.)
        let _e = self.engine();
        match st.state {
            QpState::Rts | QpState::Sqd => {
                self.req_run(&mut st);
                Ok(())
            }
            QpState::Err => {
                self.flush(&mut st);
                Ok(())
            }
            _ => Err(EINVAL),
        }
    }

    fn reset(&self, st: &mut State) {
        st.state = QpState::Reset;
        self.in_error.store(false, Ordering::Release);
        // Discard everything posted: userspace sees empty queues (and no slot keeps the
        // state of a WQE that never completed).
        st.req.reset(self.sq.producer());
        for s in st.slots.iter_mut() {
            *s = Slot::default();
        }
        self.sq.publish_consumer(st.req.cons);
        if let Some(rq) = &self.rq {
            st.rq_cons = rq.producer();
            rq.publish_consumer(st.rq_cons);
        }
        st.recv.active = false;
        st.write = None;
        st.cur.forget();
        st.comp.forget();
        st.resp.reset();
        st.uc.abort();
        st.path = None;
        self.drop_kept(st);
        self.cc_detach(st);
        // A QP connected again starts its congestion control afresh: at line rate with a
        // new start window, its reaction chosen again by the first CNP it gets, its
        // extensions negotiated again, with the knobs as they are now.
        st.cc = QpCc::new(self.dev.knobs.params());
        st.sel_tx = self.sel_mode == selmode::FORCE;
        st.peer_sel = self.sel_mode == selmode::FORCE;
        st.sel_seen = false;
        st.vfy_seen = false;
        st.vfy_tx = false;
        st.hellos = 0;
        st.hello_due = false;
        st.peer_vfy = false;
        st.vcheck = CheckPolicy::new();
        st.resp.verify_passed();
        st.req.vrepair = None;
    }

    /// Completes the head send WQE with `status` (the engine decided it is done).
    fn complete_send(&self, st: &mut State, status: u32) {
        let Some((i, s)) = st.req.pop(&mut st.slots, &self.sq.geom) else {
            return;
        };
        st.cur.completed(i);
        st.comp.completed(i);
        self.sq.publish_consumer(st.req.cons);
        // The slot is free before the completion is visible: a consumer that posts again
        // as soon as it polls the completion (ibv_rc_pingpong, one send WQE) must not
        // find the queue still full.
        if self.sig_all || s.flags & send_flags::SIGNALED != 0 || status != wc_status::SUCCESS {
            let cqe = Cqe {
                wr_id: s.wr_id,
                status,
                opcode: if status == wc_status::SUCCESS {
                    wc_op_of(s.opcode)
                } else {
                    0
                },
                byte_len: if status == wc_status::SUCCESS {
                    s.length
                } else {
                    0
                },
                qp_num: self.qpn,
                ..Cqe::default()
            };
            if self.scq.post(&cqe, false).is_err() {
                self.dev.stats.cq_overflow.inc();
            }
        }
        if st.state == QpState::Sqd {
            self.sqd_check(st);
        }
    }

    /// SQD: once every WQE started before the drain completed, reports it (once).
    fn sqd_check(&self, st: &mut State) {
        if st.sqd_notify && st.req.cons == st.sqd_stop {
            st.sqd_notify = false;
            self.handle.sq_drained();
        }
    }

    /// Moves to ERR: completes the failing WQE with `status`, then flushes.
    fn fail(&self, st: &mut State, status: u32) {
        if st.req.cons != self.sq.producer() {
            self.complete_send(st, status);
        }
        st.state = QpState::Err;
        self.flush(st);
    }

    /// The sent WQE in slot `i` fails with `status`: those before it complete as flushed
    /// first (RC completes in order), then the QP fails.
    fn fail_from(&self, st: &mut State, i: u32, status: u32) {
        let prod = self.sq.producer();
        while st.req.cons != i && st.req.cons != prod {
            self.complete_send(st, wc_status::WR_FLUSH_ERR);
        }
        self.fail(st, status);
    }

    /// ERR: every outstanding send and posted receive completes with WR_FLUSH_ERR.
    fn flush(&self, st: &mut State) {
        let first = !self.in_error.swap(true, Ordering::AcqRel);
        if first && self.srq.is_some() {
            // This QP takes no more receive WQEs from the SRQ.
            self.handle.last_wqe_reached();
        }
        let prod = self.sq.producer();
        while st.req.cons != prod {
            let i = st.req.cons;
            if let Some(s) = st.slots.get_mut(i as usize) {
                if !s.started {
                    // Never fetched: take the wr_id from the slot.
                    let mut buf = [0u8; 8];
                    if self.sq.read_slot(i, &mut buf).is_some() {
                        s.wr_id = u64::from_le_bytes(buf);
                    }
                }
            }
            self.complete_send(st, wc_status::WR_FLUSH_ERR);
        }
        st.req.next = st.req.cons;
        // Receive WQEs of an SRQ belong to the SRQ, not to this QP, except the one a SEND
        // in progress took: it completes with the flush.
        let Some(rq) = &self.rq else {
            if st.recv.active {
                let cqe = Cqe {
                    wr_id: st.recv.wqe.wr_id,
                    status: wc_status::WR_FLUSH_ERR,
                    qp_num: self.qpn,
                    ..Cqe::default()
                };
                if self.rcq.post(&cqe, false).is_err() {
                    self.dev.stats.cq_overflow.inc();
                }
            }
            st.recv.active = false;
            st.write = None;
            return;
        };
        let rprod = rq.producer();
        while st.rq_cons != rprod {
            let mut buf = [0u8; 8];
            let ok = rq.read_slot(st.rq_cons, &mut buf).is_some();
            let wr_id = if ok { u64::from_le_bytes(buf) } else { 0 };
            let cqe = Cqe {
                wr_id,
                status: wc_status::WR_FLUSH_ERR,
                qp_num: self.qpn,
                ..Cqe::default()
            };
            if self.rcq.post(&cqe, false).is_err() {
                self.dev.stats.cq_overflow.inc();
            }
            st.rq_cons = rq.geom.next(st.rq_cons);
            rq.publish_consumer(st.rq_cons);
        }
        st.recv.active = false;
        st.write = None;
    }

    fn fail_at(&self, st: &mut State, status: u32) {
        // Everything before the failing WQE completes first (RC completes in order):
        // mark it and let the error reach it through `fail`.
        self.dev.stats.local_errors.inc();
        if let Some(s) = st.slots.get_mut(st.req.next as usize) {
            if !s.started {
                let mut buf = [0u8; 8];
                if self.sq.read_slot(st.req.next, &mut buf).is_some() {
                    s.wr_id = u64::from_le_bytes(buf);
                }
                s.flags = send_flags::SIGNALED;
            }
        }
        // Complete the earlier, already transmitted WQEs as flushed only after this one
        // fails; RC semantics: the QP goes to ERR and everything flushes.
        while st.req.cons != st.req.next {
            self.complete_send(st, wc_status::WR_FLUSH_ERR);
        }
        self.fail(st, status);
    }
}
