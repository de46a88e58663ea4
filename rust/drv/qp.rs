// SPDX-License-Identifier: GPL-2.0
//! Queue pairs: verbs (create/modify/query/destroy), the user rings, and the RC engine
//! (requester, completer, responder). The engine runs under the QP's BH lock, from the
//! doorbell (process context), the receive path (softirq) and the retransmit timer.

use super::device::{Closed, DevShared, CLOSED_US};
use super::net::{Path, Payload, TxPkt};
use super::res::{access, Cq, Mr, Ring, Srq};
use crate::kabi::lock::{new_spinlock_bh, new_spinlock_irq, SpinLockBh, SpinLockIrq};
use crate::kabi::skb::SkBuff;
use crate::kabi::timer::{self, Deadline, Timer, TimerHandler};
use crate::kabi::verbs::{Av, QpHandle, Udata};
use crate::kabi::work::{Work, WorkHandler};
use crate::proto::bth::Bth;
use crate::proto::exthdr::{Aeth, AtomicAckEth, AtomicEth, Deth, NakCode, Reth, Syndrome};
use crate::proto::opcode::{flags as f, op};
use crate::proto::packet::{Ext, Packet};
use crate::proto::psn::Psn;
use crate::proto::rc::{self, Kind};
use crate::proto::rdrep::{ReadPort, ReadRepair, ReadSpan};
use crate::proto::sel::{
    self, Arrival, ProbeDelay, PsnBits, Reordering, RxKey, RxWindow, Sack, Xeth, RX_SPAN,
};
use crate::proto::uapi::{self, send_flags, wc_flags, wc_opcode, wc_status, Cqe, RecvWqe, SendWqe};
use crate::sys as b;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

/// QP states (`enum ib_qp_state`).
pub(crate) mod qps {
    pub(crate) const RESET: u32 = 0;
    pub(crate) const RTR: u32 = 2;
    pub(crate) const RTS: u32 = 3;
    pub(crate) const SQD: u32 = 4;
    pub(crate) const ERR: u32 = 6;

    /// States in which the requester sends (in SQD only what it had started) and takes
    /// responses.
    pub(crate) const fn sending(state: u32) -> bool {
        matches!(state, RTS | SQD)
    }
}

/// Largest SQ/RQ depth rrxe accepts (bounds the per-QP state it allocates).
pub(crate) const MAX_QP_WR: u32 = 4096;

/// Most received packets a QP queues for processing (a peer cannot make it hold more).
const RX_QUEUE_MAX: usize = 1024;
/// Largest UDP payload the receive softirq processes itself when the QP's queue is idle.
const RX_INLINE_MAX: usize = 256;

/// Received packets waiting for the QP's work item.
struct RxQueue {
    /// Each with its direction and PSN (where a retransmission may go: [`sel::retx_slot`]).
    pkts: KVec<(SkBuff, RxKey)>,
    /// How many retransmissions lead `pkts` (see [`Qp::queue_rx`]).
    urgent: usize,
    /// The work item is processing a batch: later packets queue behind it.
    busy: bool,
}

/// Bytes at the start of a UD receive buffer that hold the network header.
const GRH_LEN: usize = 40;
/// `RDMA_NETWORK_IPV4` / `RDMA_NETWORK_IPV6`.
const NET_IPV4: u8 = 2;
const NET_IPV6: u8 = 3;

/// Atomic results the responder remembers (at least the largest responder depth).
const ATOMIC_REPLAY: usize = super::device::MAX_QP_RD_ATOM as usize;

/// Silence after which a selective requester sends a tail-loss probe: twice the smallest
/// recent round trip (see [`ProbeDelay`]) within these bounds, the upper one until
/// measured. (A fixed 1 ms probe made lossless READ slower on a host where silences over
/// 1 ms were common without loss; 1.5 ms on a faster one sent at most 15 probes in a 4 s
/// lossless run.)
const PROBE_MIN_US: u32 = 1500;
const PROBE_MAX_US: u32 = 3000;
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
/// The responder acknowledges once per receive batch, but no later than after this many
/// requests (a quarter of the requester's window, so a long batch never stalls it).
const ACK_EVERY: u32 = rc::MAX_UNACKED_PSNS / 4;

/// Selective-retransmission mode (module parameter `selective`).
pub(crate) mod selmode {
    /// Plain IBTA go-back-N: never offer, never accept.
    pub(crate) const OFF: u32 = 0;
    /// Offer on every request, use it once the peer accepts (default).
    pub(crate) const AUTO: u32 = 1;
    /// Use it from the first packet (both ends must be rrxe).
    pub(crate) const FORCE: u32 = 2;
}

/// Per-slot requester state (the WQE itself stays in the user's slot and is re-read and
/// re-validated whenever it is (re)transmitted).
#[derive(Clone, Copy, Default)]
struct Slot {
    wr_id: u64,
    opcode: u32,
    flags: u32,
    length: u32,
    first_psn: Psn,
    last_psn: Psn,
    /// Bytes transmitted so far (next packet starts here).
    sent: u32,
    started: bool,
    /// READ: bytes received.
    got: u32,
    /// WQE sequence number (the XETH's).
    seq: u32,
}

impl Slot {
    /// This READ, in slot `i`, as [`ReadRepair`] sees it.
    fn read_span(&self, i: u32) -> ReadSpan {
        ReadSpan {
            first: self.first_psn,
            last: self.last_psn,
            tag: i,
        }
    }
}

/// The largest WQE, in packets, a doorbell leaves to the work item while packets are in
/// flight (see `Qp::autocork`).
const AUTOCORK_PKTS: u32 = 8;

/// Responder context of a multi-packet SEND. The receive WQE (about 530 bytes) is
/// allocated with the QP and decoded into in place, never moved.
struct RecvCtx {
    /// A SEND is in progress and `wqe` is its receive WQE.
    active: bool,
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
}

/// Room for the headers of a data packet whose payload was placed early: BTH, RETH,
/// ImmDt or IETH, XETH and a dummy ICRC.
const PLACED_HDR: usize = 64;

/// The headers of a packet beyond the expected PSN whose payload already went to its
/// destination (the WQE's RETH or receive WQE was known), processed in PSN order later.
struct Placed {
    hdr: [u8; PLACED_HDR],
    len: usize,
    payload: u32,
}

/// A packet kept beyond the expected PSN.
enum Kept {
    /// The received skb and the bytes it counts against the limits.
    Skb(SkBuff, usize),
    /// Payload placed, headers kept.
    Placed(KBox<Placed>),
}

impl Kept {
    /// Bytes it counts against the reassembly limits.
    fn bytes(&self) -> usize {
        match self {
            Kept::Skb(_, n) => *n,
            Kept::Placed(_) => PLACED_HDR,
        }
    }
}

/// A decoded send WQE, allocated with the QP and reused: at about 700 bytes, moving one
/// per packet cost more copying than the payload did.
struct WqeCache {
    /// The slot `wqe` holds, if it is to be reused.
    slot: Option<u32>,
    /// Taken out while in use (see `Qp::take_wqe`).
    wqe: Option<KBox<SendWqe>>,
}

impl WqeCache {
    fn new() -> Result<Self> {
        Ok(WqeCache {
            slot: None,
            wqe: Some(KBox::new(SendWqe::EMPTY, GFP_KERNEL)?),
        })
    }

    fn put(&mut self, w: KBox<SendWqe>) {
        self.wqe = Some(w);
    }

    /// The slot may be posted again: decode it afresh next time.
    fn forget(&mut self) {
        self.slot = None;
    }

    /// Slot `i` completed (it may be posted again).
    fn completed(&mut self, i: u32) {
        if self.slot == Some(i) {
            self.slot = None;
        }
    }
}

struct State {
    state: u32,
    /// UD: the Q_Key of the QP.
    qkey: u32,
    access: i32,
    mtu: u32,
    mtu_enum: u32,
    dest_qpn: u32,
    path: Option<Path>,
    av: Option<Av>,
    timeout: u8,
    retry_cnt: u8,
    rnr_retry: u8,
    min_rnr_timer: u8,
    max_rd_atomic: u8,
    max_dest_rd_atomic: u8,
    // requester
    slots: KVec<Slot>,
    sq_cons: u32,
    sq_next: u32,
    req_psn: Psn,
    comp_psn: Psn,
    rd_outstanding: u32,
    noack: u32,
    retries_left: u8,
    rnr_left: u8,
    rnr_wait: bool,
    /// The WQE being transmitted (`sq_next`), decoded once for all its packets.
    cur: WqeCache,
    /// The READ or atomic WQE whose responses are arriving, decoded once for all of
    /// them (forgotten when it completes).
    comp: WqeCache,
    /// The PSN the requester last went back to because a READ response skipped ahead
    /// (one re-request per gap, not one per out-of-order packet).
    read_gap: Option<Psn>,
    // responder
    resp_psn: Psn,
    /// The last request executed was a READ or an atomic. A plain ACK then would name
    /// either the PSN of its last response (`resp_psn - 1`), on which rdma_rxe completes
    /// a READ it is still receiving, without the data of the response it lost, or an
    /// earlier PSN, which behind a READ's responses makes rdma_rxe complete that READ
    /// early and move the QP to the error state. So an IBTA requester gets no plain ACK
    /// until a SEND or WRITE is executed: the responses acknowledge everything before
    /// them. (An rrxe requester completes READs and atomics only from their responses.)
    read_last: bool,
    msn: u32,
    /// Go-back-N PSN-sequence-error NAKs (one per gap).
    nak: rc::SeqNak,
    rq_cons: u32,
    recv: RecvCtx,
    write: Option<WriteCtx>,
    /// Results of the last executed atomics, by PSN, for duplicate requests.
    replay: KVec<Option<(Psn, u64)>>,
    atomic_next: u32,
    // selective retransmission
    /// Requester: the peer accepted (its responses carry the capability bit).
    sel_tx: bool,
    /// Requester: a response arrived, so negotiation is decided.
    sel_seen: bool,
    /// Requester: sequence number of the next WQE.
    wqe_seq: u32,
    /// Requester: probes sent since the last response.
    probes: u32,
    /// Requester: READ responses received and asked for again (with the probes counted
    /// since the last READ response: unlike `probes`, not reset by the ACK a probe brings
    /// back, which says nothing of READ responses).
    rd: ReadRepair,
    /// Requester: PSNs resent for an incremental SACK since the last probe (a full SACK
    /// does not resend them again at once: they are likely still on their way).
    retx_bits: PsnBits<4>,
    /// Requester: the round trip, and from it the tail-loss probe delay.
    pto: ProbeDelay,
    /// Requester: every request before this PSN was acknowledged (explicitly or by a
    /// later response).
    acked: Psn,
    /// Responder: the requester offered (keep packets beyond the expected PSN, SACK).
    peer_sel: bool,
    /// Responder: PSNs kept beyond `resp_psn`.
    rxw: RxWindow,
    /// Responder: packets were kept since the last SACK decision.
    sack_due: bool,
    /// Responder: a packet was dropped at the reassembly limit and the packets kept
    /// since have not all been released: holes are reported at a batch's end only.
    at_limit: bool,
    /// SQD: WQEs from this SQ slot on are not started until the QP is back in RTS; the
    /// ones before it (posted and started before the drain) complete.
    sqd_stop: u32,
    /// SQD: report `IB_EVENT_SQ_DRAINED` once they have (`en_sqd_async_notify`).
    sqd_notify: bool,
    /// Responder: ACKs owed to the requester (one per receive batch).
    acks: rc::AckCoalesce,
    /// Responder: an RNR NAK is outstanding: the requester goes back to that PSN, so
    /// later packets are dropped (as IBTA does), not kept and reported.
    rnr_hold: bool,
    /// Responder: how many later packets reveal a hole (the path's reordering).
    reorder: Reordering,
    /// Responder: the kept packets and their sizes, by `psn % RX_SPAN` (empty when
    /// selective retransmission is off).
    kept: KVec<Option<Kept>>,
    kept_bytes: usize,
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
    /// Mirrors `state == ERR` for posters that cannot take the engine lock.
    in_error: AtomicBool,
    /// The work item is processing a receive batch (else a packet is processed alone,
    /// straight from the softirq, and its ACK goes out at once: there is nothing to
    /// coalesce it with, and latency tools expect the ACK before the peer's reply).
    rx_batching: AtomicBool,
    /// Requester runs in progress under `st` (the work item, a doorbell). While one runs,
    /// the receive softirq and further doorbells hand their work to `send_work` instead
    /// of spinning on `st` behind it, on another CPU, for up to a window of packets.
    engines: AtomicU32,
    /// A receive batch ended while `st` was taken: `send_work` ends it.
    batch_due: AtomicBool,
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
    /// Bytes of packets the QP keeps beyond its expected PSN (module parameter
    /// `reasm_qp_kib` at creation).
    reasm_max: usize,
    timer: Timer<Qp>,
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
        _ => wc_opcode::SEND,
    }
}

impl Qp {
    pub(crate) fn create(
        dev: &Arc<DevShared>,
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
        let mut replay = KVec::with_capacity(ATOMIC_REPLAY, GFP_KERNEL)?;
        for _ in 0..ATOMIC_REPLAY {
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
            .clamp(1, 65536) as usize
            * 1024;
        let qpn = dev.alloc_qpn(gsi)?;
        let sig_all = init.sq_sig_type == b::ib_sig_type_IB_SIGNAL_ALL_WR;
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
                batch_due: AtomicBool::new(false),
                engines: AtomicU32::new(0),
                sq,
                rq,
                srq,
                max_send_sge,
                max_inline,
                max_recv_sge,
                sel_mode,
                reasm_max,
                timer: Timer::new()?,
                send_work: Work::new()?,
                st <- new_spinlock_bh!(State {
                    state: qps::RESET,
                    qkey: 0,
                    access: 0,
                    mtu: 256,
                    mtu_enum: 1,
                    dest_qpn: 0,
                    path: None,
                    av: None,
                    timeout: 0,
                    retry_cnt: 0,
                    rnr_retry: 0,
                    min_rnr_timer: 0,
                    max_rd_atomic: 0,
                    max_dest_rd_atomic: 0,
                    slots,
                    sq_cons: 0,
                    sq_next: 0,
                    req_psn: Psn::new(0),
                    comp_psn: Psn::new(0),
                    rd_outstanding: 0,
                    noack: 0,
                    retries_left: 0,
                    rnr_left: 0,
                    rnr_wait: false,
                    cur: WqeCache::new()?,
                    comp: WqeCache::new()?,
                    read_gap: None,
                    resp_psn: Psn::new(0),
                    read_last: false,
                    msn: 0,
                    nak: rc::SeqNak::default(),
                    rq_cons: 0,
                    recv: RecvCtx {
                        active: false,
                        wqe: KBox::new(RecvWqe::EMPTY, GFP_KERNEL)?,
                        offset: 0,
                        seq: None,
                    },
                    write: None,
                    replay,
                    atomic_next: 0,
                    sel_tx: forced,
                    sel_seen: false,
                    wqe_seq: 0,
                    probes: 0,
                    rd: ReadRepair::new(Psn::new(0), RD_REORDER_MAX, REORDER_DECAY),
                    retx_bits: PsnBits::new(Psn::new(0)),
                    pto: ProbeDelay::new(),
                    acked: Psn::new(0),
                    peer_sel: forced,
                    rxw: RxWindow::new(Psn::new(0)),
                    sack_due: false,
                    at_limit: false,
                    acks: rc::AckCoalesce::new(ACK_EVERY),
                    sqd_stop: 0,
                    sqd_notify: false,
                    rnr_hold: false,
                    reorder: Reordering::new(REORDER_MAX, REORDER_DECAY),
                    kept,
                    kept_bytes: 0,
                }),
            }),
            GFP_KERNEL,
        );
        let qp = match r {
            Ok(q) => q,
            Err(e) => {
                dev.free_qpn(qpn);
                return Err(e);
            }
        };
        qp.timer.bind(&qp);
        qp.send_work.bind(&qp);
        if let Err(e) = dev.insert_qp(qpn, qp.clone()) {
            qp.timer.shutdown();
            qp.send_work.shutdown();
            dev.free_qpn(qpn);
            return Err(e);
        }
        Ok(qp)
    }

    /// Stops every packet-path user of the QP (destroy).
    pub(crate) fn shutdown(&self) {
        self.dev.remove_qp(self.qpn);
        // After this no packet, timer or work item touches the QP's queues again.
        let closed = {
            let mut st = self.st.lock();
            // (Not after a READ or atomic to an IBTA requester: an ACK would complete
            // it, see [`State::read_last`].)
            let keep = !self.ud()
                && st.state >= qps::RTR
                && st.state != qps::ERR
                && (st.peer_sel || !st.read_last);
            st.state = qps::RESET;
            self.drop_kept(&mut st);
            let path = if keep { st.path.take() } else { None };
            path.map(|p| (p, st.dest_qpn, st.resp_psn, st.msn))
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
                    until: Deadline::after_us(CLOSED_US),
                });
            }
        }
        self.timer.shutdown();
        self.send_work.shutdown();
        // Packets still queued are freed unprocessed.
        drop(core::mem::take(&mut self.rxq.lock().pkts));
        self.dev.free_qpn(self.qpn);
    }

    /// Receive softirq: a small packet (ACK, short message) arriving while nothing is
    /// queued is processed at once (latency); anything else goes to this QP's work item,
    /// so that copying payloads runs on whichever CPU is free. A full queue drops the
    /// packet (counted; the peer retransmits).
    ///
    /// A selective retransmission (`retx`) goes ahead of the packets queued before it,
    /// after the retransmissions already there and after any packet of its direction
    /// with an earlier PSN ([`sel::retx_slot`]): it repairs the hole everything behind
    /// it waits for. Queued at the back, a READ's repair was processed only after the
    /// whole window of responses sent before it, so the window stayed closed until the
    /// queue ran dry and then the pipe was empty for a round trip.
    pub(crate) fn queue_rx(&self, skb: SkBuff, len: usize, key: RxKey, retx: bool) {
        let mut q = self.rxq.lock();
        if len <= RX_INLINE_MAX && q.pkts.is_empty() && !q.busy && !self.engine_busy() {
            drop(q);
            self.dev.deliver(self, skb);
            self.rx_batch_done();
            return;
        }
        if q.pkts.len() >= RX_QUEUE_MAX {
            drop(q);
            self.dev.stats.drop_rx_queue.inc();
            return;
        }
        let queued = if retx {
            let at = sel::retx_slot(q.pkts.iter().map(|e| e.1), q.urgent, key);
            let ok = q.pkts.reserve(1, GFP_ATOMIC).is_ok()
                && q.pkts.insert_within_capacity(at, (skb, key)).is_ok();
            if ok && at == q.urgent {
                q.urgent = at + 1;
            }
            ok
        } else {
            q.pkts.push((skb, key), GFP_ATOMIC).is_ok()
        };
        drop(q);
        if !queued {
            self.dev.stats.drop_rx_queue.inc();
            return;
        }
        self.send_work.queue();
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
            st.state
        };
        let new = if m(b::ib_qp_attr_mask_IB_QP_STATE) {
            attr.qp_state
        } else {
            cur
        };
        if mask & !((1u32 << 21) - 1) != 0 || !modify_qp_is_ok(cur, new, self.qp_type, mask) {
            return Err(EINVAL);
        }
        if m(b::ib_qp_attr_mask_IB_QP_PORT) && attr.port_num != 1 {
            return Err(EINVAL);
        }
        if m(b::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS) {
            if attr.qp_access_flags & !access::SUPPORTED != 0 {
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
            st.retry_cnt = attr.retry_cnt & 7;
            st.retries_left = st.retry_cnt;
        }
        if m(b::ib_qp_attr_mask_IB_QP_RNR_RETRY) {
            st.rnr_retry = attr.rnr_retry & 7;
            st.rnr_left = st.rnr_retry;
        }
        if m(b::ib_qp_attr_mask_IB_QP_MIN_RNR_TIMER) {
            st.min_rnr_timer = attr.min_rnr_timer & 31;
        }
        if m(b::ib_qp_attr_mask_IB_QP_MAX_QP_RD_ATOMIC) {
            if u32::from(attr.max_rd_atomic) > super::device::MAX_QP_RD_ATOM {
                return Err(EINVAL);
            }
            st.max_rd_atomic = attr.max_rd_atomic;
        }
        if m(b::ib_qp_attr_mask_IB_QP_MAX_DEST_RD_ATOMIC) {
            if u32::from(attr.max_dest_rd_atomic) > super::device::MAX_QP_RD_ATOM {
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
            st.dest_qpn = attr.dest_qp_num & 0xff_ffff;
        }
        if m(b::ib_qp_attr_mask_IB_QP_RQ_PSN) {
            st.resp_psn = Psn::new(attr.rq_psn);
            st.read_last = false;
            self.drop_kept(&mut st);
        }
        if m(b::ib_qp_attr_mask_IB_QP_SQ_PSN) {
            st.req_psn = Psn::new(attr.sq_psn);
            st.comp_psn = st.req_psn;
            let comp = st.comp_psn;
            st.rd.restart(comp);
            st.retx_bits = PsnBits::new(st.comp_psn);
            st.pto = ProbeDelay::new();
            st.acked = st.comp_psn;
        }
        if m(b::ib_qp_attr_mask_IB_QP_AV) {
            let av = Av::from_attr(&attr.ah_attr).ok_or(EINVAL)?;
            st.av = Some(av);
        }
        if !self.ud() && (new == qps::RTR || (new == qps::RTS && st.path.is_none())) {
            let av = st.av.ok_or(EINVAL)?;
            st.path = Some(Path::new(&self.dev, &av, self.qpn, st.dest_qpn)?);
        }
        if new != st.state {
            match new {
                qps::RESET => self.reset(&mut st),
                qps::ERR => {
                    st.state = qps::ERR;
                    self.flush(&mut st);
                }
                qps::SQD => {
                    // Drain: finish the WQEs already started (the one being segmented
                    // included), start no new one.
                    let i = st.sq_next;
                    let started = st.slots.get(i as usize).is_some_and(|s| s.started);
                    st.sqd_stop = if started && i != self.sq.producer() {
                        self.sq.geom.next(i)
                    } else {
                        i
                    };
                    st.sqd_notify = m(b::ib_qp_attr_mask_IB_QP_EN_SQD_ASYNC_NOTIFY)
                        && attr.en_sqd_async_notify != 0;
                    st.state = qps::SQD;
                    self.sqd_check(&mut st);
                }
                _ => st.state = new,
            }
        }
        if st.state == qps::RTS {
            self.req_run(&mut st);
        }
        Ok(())
    }

    pub(crate) fn query(&self, attr: &mut b::ib_qp_attr, init: &mut b::ib_qp_init_attr) {
        let st = self.st.lock();
        attr.qp_state = st.state;
        attr.cur_qp_state = st.state;
        attr.path_mtu = st.mtu_enum;
        attr.qp_access_flags = st.access;
        attr.dest_qp_num = st.dest_qpn;
        attr.sq_psn = st.req_psn.get();
        attr.rq_psn = st.resp_psn.get();
        attr.timeout = st.timeout;
        attr.retry_cnt = st.retry_cnt;
        attr.rnr_retry = st.rnr_retry;
        attr.min_rnr_timer = st.min_rnr_timer;
        attr.max_rd_atomic = st.max_rd_atomic;
        attr.max_dest_rd_atomic = st.max_dest_rd_atomic;
        attr.port_num = 1;
        attr.sq_draining = u8::from(st.state == qps::SQD && st.sq_cons != st.sqd_stop);
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
            qps::RTS | qps::SQD => {
                self.req_run(&mut st);
                Ok(())
            }
            qps::ERR => {
                self.flush(&mut st);
                Ok(())
            }
            _ => Err(EINVAL),
        }
    }

    /// Whether a doorbell leaves the next WQE to the work item (like TCP's autocorking):
    /// packets are in flight, so ACKs run the requester soon anyway, and the WQE is a
    /// small SEND or WRITE (at most [`AUTOCORK_PKTS`] packets), which the work item then
    /// sends together with whatever else was posted meanwhile: fewer requester runs and
    /// fewer ACKs per message. A READ or atomic, a large WQE or an idle QP is sent from
    /// the syscall at once: a large one keeps the posting thread's CPU busy with its own
    /// packets, and a READ request waited on would stall its responses.
    fn autocork(&self, st: &mut State) -> bool {
        let i = st.sq_next;
        if self.ud() || st.state != qps::RTS || st.req_psn == st.comp_psn || i == self.sq.producer()
        {
            return false;
        }
        let Ok(w) = self.take_wqe(&mut st.cur, i) else {
            return false;
        };
        let small =
            !rc::needs_response(w.opcode) && w.length <= AUTOCORK_PKTS.saturating_mul(st.mtu);
        st.cur.put(w);
        small
    }

    fn reset(&self, st: &mut State) {
        st.state = qps::RESET;
        self.in_error.store(false, Ordering::Release);
        // Discard everything posted: userspace sees empty queues.
        st.sq_cons = self.sq.producer();
        st.sq_next = st.sq_cons;
        self.sq.publish_consumer(st.sq_cons);
        if let Some(rq) = &self.rq {
            st.rq_cons = rq.producer();
            rq.publish_consumer(st.rq_cons);
        }
        st.recv.active = false;
        st.write = None;
        st.cur.forget();
        st.comp.forget();
        st.rd_outstanding = 0;
        st.rnr_wait = false;
        st.nak.closed();
        st.msn = 0;
        st.path = None;
        self.drop_kept(st);
        st.sel_tx = self.sel_mode == selmode::FORCE;
        st.peer_sel = self.sel_mode == selmode::FORCE;
        st.sel_seen = false;
    }

    /// Frees every kept packet and restarts the receive window at `resp_psn`.
    fn drop_kept(&self, st: &mut State) {
        let mut freed = 0;
        for k in st.kept.iter_mut() {
            if let Some(k) = k.take() {
                freed += k.bytes();
            }
        }
        self.dev.reasm_release(freed);
        st.kept_bytes = 0;
        st.rxw = RxWindow::new(st.resp_psn);
    }

    /// Takes the packet kept for `psn`, if any.
    fn take_kept(&self, st: &mut State, psn: Psn) -> Option<Kept> {
        let i = (psn.get() % RX_SPAN) as usize;
        let k = st.kept.get_mut(i)?.take()?;
        let n = k.bytes();
        st.kept_bytes = st.kept_bytes.saturating_sub(n);
        self.dev.reasm_release(n);
        Some(k)
    }

    /// Stores a kept packet for `psn` within the limits; `false` if over them.
    fn store_kept(&self, st: &mut State, psn: Psn, k: Kept) -> bool {
        let bytes = k.bytes();
        if st.kept_bytes + bytes > self.reasm_max || !self.dev.reasm_reserve(bytes) {
            return false;
        }
        let i = (psn.get() % RX_SPAN) as usize;
        let old = match st.kept.get_mut(i) {
            Some(slot) => slot.replace(k),
            None => {
                self.dev.reasm_release(bytes);
                return false;
            }
        };
        st.kept_bytes += bytes;
        if let Some(o) = old {
            let n = o.bytes();
            st.kept_bytes = st.kept_bytes.saturating_sub(n);
            self.dev.reasm_release(n);
        }
        true
    }

    /// A SEND or WRITE packet beyond the expected PSN whose message is the one in
    /// progress (its receive WQE or RETH is known): its payload goes straight to the
    /// destination, and only its headers are kept. `false`: keep the whole packet.
    fn place_early(&self, st: &mut State, psn: Psn, pkt: &Packet<'_>) -> bool {
        let (Some(x), n) = (pkt.xeth(), pkt.payload.len() as u32) else {
            return false;
        };
        if n == 0 || pkt.info.has(f::FIRST) || !x.fits(n) || pkt.hdr.len() + 4 > PLACED_HDR {
            return false;
        }
        let placed = if pkt.info.has(f::WRITE) {
            match &st.write {
                Some(w) if w.seq == Some(x.wqe_seq) && w.len == x.total => w
                    .mr
                    .as_ref()
                    .and_then(|m| m.write(w.start.wrapping_add(u64::from(x.offset)), pkt.payload))
                    .is_some(),
                _ => false,
            }
        } else if pkt.info.has(f::SEND) {
            let c = &st.recv;
            if c.active && c.seq == Some(x.wqe_seq) && x.total <= c.wqe.length {
                let sge = c.wqe.sge.get(..c.wqe.num).unwrap_or(&[]);
                self.scatter(sge, x.offset, pkt.payload).is_some()
            } else {
                false
            }
        } else {
            false
        };
        if !placed {
            return false;
        }
        let mut p = Placed {
            hdr: [0; PLACED_HDR],
            len: pkt.hdr.len() + 4,
            payload: n,
        };
        if let Some(d) = p.hdr.get_mut(..pkt.hdr.len()) {
            d.copy_from_slice(pkt.hdr);
        }
        // No payload follows in the copy: no pad either.
        if let Some(b) = p.hdr.get_mut(1) {
            *b &= !0x30;
        }
        let Ok(b) = KBox::new(p, GFP_ATOMIC) else {
            // The payload is in place already; keeping the skb instead is still right.
            return false;
        };
        if self.store_kept(st, psn, Kept::Placed(b)) {
            self.dev.stats.ooo_placed.inc();
            true
        } else {
            false
        }
    }

    /// The receive path hands over a packet [`Qp::on_request`] chose to keep.
    pub(crate) fn keep(&self, psn: Psn, skb: SkBuff, bytes: usize) {
        let mut st = self.st.lock();
        if !st.rxw.is_kept(psn) {
            // The window moved on meanwhile (reset, RQ PSN changed).
            return;
        }
        if !self.store_kept(&mut st, psn, Kept::Skb(skb, bytes)) {
            // Over the limit: forget it; the SACK names it and the requester resends it.
            st.rxw.forget(psn);
            st.at_limit = true;
            self.dev.stats.drop_reasm_limit.inc();
            return;
        }
        self.sack_stored(&mut st);
    }

    /// A packet beyond the expected PSN was stored: a hole now followed by `reorder`
    /// later arrivals is reported at once (each hole once); waiting for the end of a long
    /// receive batch would delay its repair by the rest of the batch.
    ///
    /// Not while the QP is at its reassembly limit (`at_limit`: a packet was dropped
    /// there and the packets kept since have not all been released): a drop makes its
    /// PSN a hole again, every later stored packet would name it again, and its
    /// retransmission would meet the same full QP. Those holes are reported at the end
    /// of each receive batch only.
    fn sack_stored(&self, st: &mut State) {
        if !st.at_limit {
            let _ = self.sack_settled_holes(st);
        }
    }

    /// Reports the holes followed by `reorder` later arrivals, each hole once.
    /// `true` if a SACK went out.
    fn sack_settled_holes(&self, st: &mut State) -> bool {
        let settled = st.rxw.high().sub(st.reorder.get() - 1);
        match st.rxw.sack_settled(false, settled) {
            Some(s) => {
                self.send_sack(st, s);
                true
            }
            None => false,
        }
    }

    // ---------------------------------------------------------------- completions

    fn complete_send(&self, st: &mut State, status: u32) {
        let i = st.sq_cons;
        let Some(s) = st.slots.get(i as usize).copied() else {
            return;
        };
        if let Some(slot) = st.slots.get_mut(i as usize) {
            *slot = Slot::default();
        }
        st.sq_cons = self.sq.geom.next(i);
        st.cur.completed(i);
        st.comp.completed(i);
        if st.sq_next == i {
            // Completed while waiting to be sent again (its responses arrived after a
            // rewind): the next WQE keeps its original PSNs.
            st.sq_next = st.sq_cons;
            if s.started && st.req_psn.before(s.last_psn.add(1)) {
                st.req_psn = s.last_psn.add(1);
            }
        }
        self.sq.publish_consumer(st.sq_cons);
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
        if st.state == qps::SQD {
            self.sqd_check(st);
        }
    }

    /// SQD: once every WQE started before the drain completed, reports it (once).
    fn sqd_check(&self, st: &mut State) {
        if st.sqd_notify && st.sq_cons == st.sqd_stop {
            st.sqd_notify = false;
            self.handle.sq_drained();
        }
    }

    /// Moves to ERR: completes the failing WQE with `status`, then flushes.
    fn fail(&self, st: &mut State, status: u32) {
        if st.sq_cons != self.sq.producer() {
            self.complete_send(st, status);
        }
        st.state = qps::ERR;
        self.flush(st);
    }

    /// ERR: every outstanding send and posted receive completes with WR_FLUSH_ERR.
    fn flush(&self, st: &mut State) {
        let first = !self.in_error.swap(true, Ordering::AcqRel);
        if first && self.srq.is_some() {
            // This QP takes no more receive WQEs from the SRQ.
            self.handle.last_wqe_reached();
        }
        let prod = self.sq.producer();
        while st.sq_cons != prod {
            let i = st.sq_cons;
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
        st.sq_next = st.sq_cons;
        // Receive WQEs of an SRQ belong to the SRQ, not to this QP.
        let Some(rq) = &self.rq else {
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

    // ---------------------------------------------------------------- requester

    /// The decoded WQE of slot `i` out of cache `c` (decoded again unless it is the one
    /// cached); give it back with [`WqeCache::put`]. A cached slot stays valid until it
    /// completes ([`WqeCache::completed`]) or the queue is reset: only then can it be
    /// posted again.
    fn take_wqe(&self, c: &mut WqeCache, i: u32) -> core::result::Result<KBox<SendWqe>, ()> {
        let mut w = match c.wqe.take() {
            Some(w) => w,
            None => KBox::new(SendWqe::EMPTY, GFP_ATOMIC).map_err(|_| ())?,
        };
        if c.slot != Some(i) {
            c.slot = None;
            let mut buf = [0u8; uapi::SEND_WQE_HDR + uapi::MAX_INLINE];
            let decoded = self.sq.read_slot(i, &mut buf).and_then(|s| {
                w.decode_into(s, self.max_send_sge as usize, self.max_inline as usize)
                    .ok()
            });
            if decoded.is_none() {
                c.put(w);
                return Err(());
            }
            c.slot = Some(i);
        }
        Ok(w)
    }

    /// Sends as much as the window allows (in SQD only what was started before the drain).
    fn req_run(&self, st: &mut State) {
        if st.rnr_wait || !qps::sending(st.state) {
            return;
        }
        if self.ud() {
            self.ud_run(st);
            return;
        }
        let mut sent_any = false;
        loop {
            if st.req_psn.diff(st.comp_psn) >= rc::MAX_UNACKED_PSNS as i32 {
                self.dev.stats.window_full.inc();
                break;
            }
            let i = st.sq_next;
            if i == self.sq.producer() || (st.state == qps::SQD && i == st.sqd_stop) {
                break;
            }
            let Ok(wqe) = self.take_wqe(&mut st.cur, i) else {
                self.fail_at(st, i, wc_status::LOC_QP_OP_ERR);
                break;
            };
            let kind = Kind::of_wr(wqe.opcode);
            let slot = st.slots.get(i as usize).copied().unwrap_or_default();
            let blocked = rc::needs_response(wqe.opcode)
                && st.rd_outstanding >= u32::from(st.max_rd_atomic.max(1))
                && !slot.started;
            let sent = match kind {
                Some(k) if !blocked => Some(self.send_next(st, i, &wqe, k, slot)),
                _ => None,
            };
            st.cur.put(wqe);
            let Some(sent) = sent else {
                if kind.is_none() {
                    self.fail_at(st, i, wc_status::LOC_QP_OP_ERR);
                }
                break;
            };
            match sent {
                Ok(done) => {
                    sent_any = true;
                    if done {
                        st.sq_next = self.sq.geom.next(i);
                    }
                }
                Err(status) => {
                    self.fail_at(st, i, status);
                    break;
                }
            }
        }
        if sent_any {
            st.pto.sent(st.req_psn.sub(1), mono_ns);
            let t = self.rto_us(st);
            if t != 0 {
                self.timer.arm_us(t);
            }
        }
    }

    /// UD: every WQE is one datagram, complete once it is handed to the network.
    fn ud_run(&self, st: &mut State) {
        while st.sq_next != self.sq.producer() {
            let i = st.sq_next;
            let r = match self.take_wqe(&mut st.cur, i) {
                Ok(w) => {
                    let r = self.ud_send(st, &w).map(|()| Slot {
                        wr_id: w.wr_id,
                        opcode: w.opcode,
                        flags: w.flags,
                        length: w.length,
                        started: true,
                        ..Slot::default()
                    });
                    st.cur.put(w);
                    r
                }
                Err(()) => Err(wc_status::LOC_QP_OP_ERR),
            };
            match r {
                Ok(slot) => {
                    if let Some(s) = st.slots.get_mut(i as usize) {
                        *s = slot;
                    }
                    st.sq_next = self.sq.geom.next(i);
                    self.complete_send(st, wc_status::SUCCESS);
                }
                Err(status) => {
                    self.fail_at(st, i, status);
                    break;
                }
            }
        }
    }

    fn ud_send(&self, st: &mut State, w: &SendWqe) -> core::result::Result<(), u32> {
        let opcode = match w.opcode {
            uapi::wr::SEND => op::UD_SEND_ONLY,
            uapi::wr::SEND_WITH_IMM => op::UD_SEND_ONLY_IMM,
            _ => return Err(wc_status::LOC_QP_OP_ERR),
        };
        if w.length > st.mtu {
            return Err(wc_status::LOC_LEN_ERR);
        }
        let ah = self
            .dev
            .ah(w.ah_num)
            .filter(|a| a.pd == self.pd)
            .ok_or(wc_status::LOC_QP_OP_ERR)?;
        // A Q_Key with the high bit set means "use the QP's own" (IBTA 10.2.5).
        let qkey = if w.remote_qkey & 0x8000_0000 != 0 {
            st.qkey
        } else {
            w.remote_qkey
        };
        let bth = Bth {
            opcode,
            se: w.flags & send_flags::SOLICITED != 0,
            pkey: 0xffff,
            dqpn: w.remote_qpn & 0xff_ffff,
            psn: st.req_psn,
            pad: ((4 - (w.length % 4)) % 4) as u8,
            ..Bth::default()
        };
        let ext = Ext {
            deth: Some(Deth {
                qkey,
                sqpn: self.qpn,
            }),
            imm: (opcode == op::UD_SEND_ONLY_IMM).then_some(u32::from_be_bytes(w.ex.to_le_bytes())),
            ..Ext::default()
        };
        let fill = |d: &mut [u8]| self.gather(w, 0, d);
        let payload = if w.length == 0 {
            Payload::None
        } else {
            Payload::Fill(w.length as usize, &fill)
        };
        self.dev.xmit(&ah.path, &TxPkt { bth, ext, payload })?;
        st.req_psn = st.req_psn.add(1);
        Ok(())
    }

    /// UD receive: the 40-byte network header, then the payload, into the next WQE.
    fn ud_recv(&self, st: &mut State, pkt: &Packet<'_>, ip: &[u8]) {
        let Some(deth) = pkt.deth() else {
            self.dev.stats.drop_malformed.inc();
            return;
        };
        if deth.qkey != st.qkey {
            self.dev.stats.drop_qkey.inc();
            return;
        }
        if self.take_recv_wqe(st).is_err() {
            // Datagrams are unreliable: no receive WQE, no delivery.
            self.dev.stats.drop_no_recv.inc();
            return;
        }
        let wqe = &st.recv.wqe;
        let mut grh = [0u8; GRH_LEN];
        let at = GRH_LEN.saturating_sub(ip.len());
        if let (Some(d), Some(src)) = (grh.get_mut(at..), ip.get(..GRH_LEN.min(ip.len()))) {
            if d.len() == src.len() {
                d.copy_from_slice(src);
            }
        }
        let total = (GRH_LEN + pkt.payload.len()) as u32;
        let sge = wqe.sge.get(..wqe.num).unwrap_or(&[]);
        let ok = total <= wqe.length
            && self.scatter(sge, 0, &grh).is_some()
            && self.scatter(sge, GRH_LEN as u32, pkt.payload).is_some();
        let mut cqe = Cqe {
            wr_id: wqe.wr_id,
            status: if ok {
                wc_status::SUCCESS
            } else {
                wc_status::LOC_LEN_ERR
            },
            opcode: wc_opcode::RECV,
            byte_len: total,
            qp_num: self.qpn,
            src_qp: deth.sqpn,
            wc_flags: wc_flags::GRH,
            port_num: 1,
            // Kernel consumers (the CM) parse the GRH area by this.
            net_type: match (self.kernel, ip.len()) {
                (false, _) => 0,
                (true, 20) => NET_IPV4,
                (true, _) => NET_IPV6,
            },
            ..Cqe::default()
        };
        if let Some(imm) = pkt.imm() {
            cqe.ex = u32::from_ne_bytes(imm.to_be_bytes());
            cqe.wc_flags |= wc_flags::WITH_IMM;
        }
        self.complete_recv(st, cqe, pkt.bth.se);
    }

    fn fail_at(&self, st: &mut State, _i: u32, status: u32) {
        // Everything before the failing WQE completes first (RC completes in order):
        // mark it and let the error reach it through `fail`.
        self.dev.stats.local_errors.inc();
        if let Some(s) = st.slots.get_mut(st.sq_next as usize) {
            if !s.started {
                let mut buf = [0u8; 8];
                if self.sq.read_slot(st.sq_next, &mut buf).is_some() {
                    s.wr_id = u64::from_le_bytes(buf);
                }
                s.flags = send_flags::SIGNALED;
            }
        }
        // Complete the earlier, already transmitted WQEs as flushed only after this one
        // fails; RC semantics: the QP goes to ERR and everything flushes.
        while st.sq_cons != st.sq_next {
            self.complete_send(st, wc_status::WR_FLUSH_ERR);
        }
        self.fail(st, status);
    }

    /// Transmits the next packet of WQE `i`; `Ok(true)` once the WQE is fully sent.
    fn send_next(
        &self,
        st: &mut State,
        i: u32,
        wqe: &SendWqe,
        kind: Kind,
        mut slot: Slot,
    ) -> core::result::Result<bool, u32> {
        let mtu = st.mtu;
        if !slot.started {
            slot = Slot {
                wr_id: wqe.wr_id,
                opcode: wqe.opcode,
                flags: wqe.flags,
                length: wqe.length,
                first_psn: st.req_psn,
                last_psn: st.req_psn.add(rc::packets(wqe.length, mtu) - 1),
                sent: 0,
                started: true,
                got: 0,
                seq: st.wqe_seq,
            };
            st.wqe_seq = st.wqe_seq.wrapping_add(1);
        }
        let psn = st.req_psn;
        let dest = st.dest_qpn;
        let path = st.path.as_ref().ok_or(wc_status::LOC_QP_OP_ERR)?;
        if rc::needs_response(wqe.opcode) {
            // One request packet; the responses complete it.
            let resend = st.slots.get(i as usize).is_some_and(|s| s.started);
            let (psn, ext, span) = if let Kind::Atomic { cas } = kind {
                if wqe.length < 8 || wqe.remote_addr % 8 != 0 {
                    return Err(wc_status::LOC_LEN_ERR);
                }
                let atomic = AtomicEth {
                    va: wqe.remote_addr,
                    rkey: wqe.rkey,
                    swap_add: if cas { wqe.swap } else { wqe.compare_add },
                    compare: if cas { wqe.compare_add } else { 0 },
                };
                let ext = Ext {
                    atomic: Some(atomic),
                    ..Ext::default()
                };
                (psn, ext, 1)
            } else {
                // READ: everything not yet received; a re-request starts at the PSN its
                // offset maps to (responses may have arrived since the rewind).
                let off = slot.got;
                let psn = if resend {
                    slot.first_psn.add(off / mtu.max(1))
                } else {
                    psn
                };
                let reth = Reth {
                    va: wqe.remote_addr.wrapping_add(u64::from(off)),
                    rkey: wqe.rkey,
                    len: wqe.length - off,
                };
                let ext = Ext {
                    reth: Some(reth),
                    ..Ext::default()
                };
                (psn, ext, rc::packets(reth.len, mtu))
            };
            let bth = Bth {
                opcode: rc::opcode(kind, true, true),
                pkey: 0xffff,
                dqpn: dest,
                ack_req: true,
                psn,
                caps: self.offer(),
                ..Bth::default()
            };
            self.dev.xmit(
                path,
                &TxPkt {
                    bth,
                    ext,
                    payload: Payload::None,
                },
            )?;
            if !resend {
                st.rd_outstanding += 1;
            }
            st.req_psn = psn.add(span);
            st.noack = 0;
            slot.sent = wqe.length;
            if let Some(s) = st.slots.get_mut(i as usize) {
                *s = slot;
            }
            return Ok(true);
        }
        let remaining = wqe.length - slot.sent.min(wqe.length);
        let n = remaining.min(mtu);
        let last = n == remaining;
        st.noack += 1;
        let ack_req = last || st.noack >= rc::MAX_PKT_PER_ACK;
        if ack_req {
            st.noack = 0;
        }
        let k = slot.sent / mtu.max(1);
        self.data_packet(st, wqe, kind, &slot, k, ack_req, 0)?;
        st.req_psn = psn.add(1);
        slot.sent += n;
        if let Some(s) = st.slots.get_mut(i as usize) {
            *s = slot;
        }
        Ok(last)
    }

    /// The capability bits a request carries.
    fn offer(&self) -> u8 {
        if self.sel_mode == selmode::OFF {
            0
        } else {
            sel::CAP_SELECTIVE
        }
    }

    /// Transmits packet `k` (PSN `first_psn + k`) of a SEND or WRITE WQE; `xflags` adds
    /// rrxe flags (a probe). With selective retransmission on, it carries an XETH.
    #[allow(clippy::too_many_arguments)]
    fn data_packet(
        &self,
        st: &State,
        wqe: &SendWqe,
        kind: Kind,
        slot: &Slot,
        k: u32,
        ack_req: bool,
        xflags: u8,
    ) -> core::result::Result<(), u32> {
        let mtu = st.mtu.max(1);
        let off = k.saturating_mul(mtu).min(wqe.length);
        let n = (wqe.length - off).min(mtu);
        let first = k == 0;
        let last = off + n == wqe.length;
        let opcode = rc::opcode(kind, first, last);
        let info = crate::proto::opcode::info(opcode).ok_or(wc_status::LOC_QP_OP_ERR)?;
        let path = st.path.as_ref().ok_or(wc_status::LOC_QP_OP_ERR)?;
        let bth = Bth {
            opcode,
            se: last
                && wqe.flags & send_flags::SOLICITED != 0
                && (info.has(f::SEND) || info.has(f::IMMDT)),
            pkey: 0xffff,
            dqpn: st.dest_qpn,
            ack_req,
            psn: slot.first_psn.add(k),
            pad: ((4 - (n % 4)) % 4) as u8,
            caps: self.offer(),
            xflags: if st.sel_tx { sel::XF_EXT | xflags } else { 0 },
            ..Bth::default()
        };
        let ext = Ext {
            reth: info.has(f::RETH).then_some(Reth {
                va: wqe.remote_addr,
                rkey: wqe.rkey,
                len: wqe.length,
            }),
            // `ex` holds the immediate as the user stored it (network byte order in
            // memory); the header wants its numeric value.
            imm: info
                .has(f::IMMDT)
                .then_some(u32::from_be_bytes(wqe.ex.to_le_bytes())),
            ieth: info.has(f::IETH).then_some(wqe.ex),
            xeth: st.sel_tx.then_some(Xeth {
                wqe_seq: slot.seq,
                offset: off,
                total: wqe.length,
            }),
            ..Ext::default()
        };
        let fill = |d: &mut [u8]| self.gather(wqe, off, d);
        self.dev.xmit(
            path,
            &TxPkt {
                bth,
                ext,
                payload: Payload::Fill(n as usize, &fill),
            },
        )
    }

    /// Sends PSN `psn` again (a SACK named it, or a probe): only that packet, or, for a
    /// READ or atomic request, go-back-N from it.
    fn retransmit_psn(&self, st: &mut State, psn: Psn, xflags: u8) {
        if psn.before(st.comp_psn) || !psn.before(st.req_psn) {
            return;
        }
        let Some((i, s)) = self.slot_of(st, psn) else {
            return;
        };
        if s.opcode == uapi::wr::RDMA_READ && st.sel_tx {
            // The request was lost: ask for everything still missing, unless asked since
            // the last probe (two SACKs, or a probe's answer and a SACK, named it).
            let comp = st.comp_psn;
            let (rd, mut io) = self.read_io(st);
            rd.lost_request(comp, &s.read_span(i), psn, &mut io);
            return;
        }
        if rc::needs_response(s.opcode) {
            if psn == s.first_psn {
                self.rewind(st, psn);
                self.dev.stats.retransmits.inc();
                self.send_work.queue();
            }
            return;
        }
        let Some(kind) = Kind::of_wr(s.opcode) else {
            return;
        };
        let Ok(wqe) = self.take_wqe(&mut st.cur, i) else {
            return;
        };
        let k = psn.diff(s.first_psn).max(0) as u32;
        let sent = self.data_packet(st, &wqe, kind, &s, k, true, xflags);
        st.cur.put(wqe);
        if sent.is_ok() {
            self.dev.stats.retx_packets.inc();
            // The cumulative ACK of the timed packet now waits for this one.
            st.pto.cancel();
        }
    }

    /// A SACK arrived: send exactly the PSNs it names, before any new data.
    fn on_sack(&self, st: &mut State, s: &Sack) {
        self.dev.stats.sack_rcvd.inc();
        st.retx_bits.advance_to(st.comp_psn);
        for p in s.iter() {
            if s.full {
                if st.retx_bits.get(p) {
                    continue;
                }
            } else {
                st.retx_bits.set(p);
            }
            self.retransmit_psn(st, p, sel::XF_RETX);
        }
        if s.full {
            // The next probe's answer resends whatever is still missing.
            st.retx_bits = PsnBits::new(st.comp_psn);
        }
    }

    /// Silence after which a tail-loss probe is sent.
    fn probe_us(st: &State) -> u64 {
        u64::from(st.pto.delay_us(PROBE_MIN_US, PROBE_MAX_US))
    }

    /// Retransmit timeout: with selective retransmission a tail-loss probe after
    /// [`Qp::probe_us`] of silence, else the transport timer.
    fn rto_us(&self, st: &State) -> u64 {
        let t = rc::ack_timeout_us(st.timeout);
        let p = Self::probe_us(st);
        if st.sel_tx && (t == 0 || t > p) {
            p
        } else {
            t
        }
    }

    /// Copies `out.len()` bytes of the WQE's payload starting at `off`.
    fn gather(&self, wqe: &SendWqe, off: u32, out: &mut [u8]) -> core::result::Result<(), u32> {
        match &wqe.payload {
            uapi::Payload::Inline { data, len } => {
                let src = data
                    .get(off as usize..(off as usize + out.len()).min(*len))
                    .ok_or(wc_status::LOC_LEN_ERR)?;
                out.get_mut(..src.len())
                    .ok_or(wc_status::LOC_LEN_ERR)?
                    .copy_from_slice(src);
                Ok(())
            }
            uapi::Payload::Sges { sge, num } => {
                let mut skip = off;
                let mut done = 0usize;
                for s in sge.iter().take(*num) {
                    if done == out.len() {
                        break;
                    }
                    if skip >= s.length {
                        skip -= s.length;
                        continue;
                    }
                    let n = ((s.length - skip) as usize).min(out.len() - done);
                    let mr = self
                        .dev
                        .lookup_mr(s.lkey, self.pd, 0)
                        .ok_or(wc_status::LOC_PROT_ERR)?;
                    let dst = out.get_mut(done..done + n).ok_or(wc_status::LOC_LEN_ERR)?;
                    mr.read(s.addr.wrapping_add(u64::from(skip)), dst)
                        .ok_or(wc_status::LOC_PROT_ERR)?;
                    done += n;
                    skip = 0;
                }
                Ok(())
            }
        }
    }

    /// Copies `data` into the scatter list `sge` at byte offset `off`.
    fn scatter(&self, sge: &[uapi::Sge], off: u32, data: &[u8]) -> Option<()> {
        let mut skip = off;
        let mut done = 0usize;
        for s in sge {
            if done == data.len() {
                break;
            }
            if skip >= s.length {
                skip -= s.length;
                continue;
            }
            let n = ((s.length - skip) as usize).min(data.len() - done);
            let mr = self.dev.lookup_mr(s.lkey, self.pd, access::LOCAL_WRITE)?;
            mr.write(
                s.addr.wrapping_add(u64::from(skip)),
                data.get(done..done + n)?,
            )?;
            done += n;
            skip = 0;
        }
        (done == data.len()).then_some(())
    }

    /// Go-back-N: resume transmission at `psn`.
    fn rewind(&self, st: &mut State, psn: Psn) {
        let prod = self.sq.producer();
        let mut i = st.sq_cons;
        let mut found = false;
        while i != prod {
            let Some(s) = st.slots.get_mut(i as usize) else {
                break;
            };
            if !s.started {
                break;
            }
            if !found && !psn.after(s.last_psn) {
                found = true;
                st.sq_next = i;
                let done_pkts = psn.diff(s.first_psn).max(0) as u32;
                if s.opcode == uapi::wr::RDMA_READ {
                    // The re-request starts at `psn`, so it must ask for the data that PSN
                    // maps to: forget what arrived beyond it (it is simply written again).
                    s.sent = 0;
                    s.got = s.got.min(done_pkts.saturating_mul(st.mtu));
                } else {
                    s.sent = done_pkts.saturating_mul(st.mtu).min(s.length);
                }
            } else if found {
                // Later WQEs are sent again from scratch (and take their credit again).
                let rd = rc::needs_response(s.opcode);
                s.started = false;
                s.sent = 0;
                s.got = 0;
                if rd {
                    st.rd_outstanding = st.rd_outstanding.saturating_sub(1);
                }
            }
            i = self.sq.geom.next(i);
        }
        if found {
            st.req_psn = psn;
        }
    }

    // ---------------------------------------------------------------- completer

    /// An ACK, NAK or READ response arrived.
    pub(crate) fn on_response(&self, pkt: &Packet<'_>) {
        let mut st = self.st.lock();
        if !qps::sending(st.state) {
            self.dev.stats.drop_state.inc();
            return;
        }
        let psn = pkt.bth.psn;
        if !st.sel_seen && self.sel_mode == selmode::AUTO {
            st.sel_seen = true;
            if pkt.bth.caps & sel::CAP_SELECTIVE != 0 {
                st.sel_tx = true;
                self.dev.stats.sel_negotiated.inc();
            } else {
                self.dev.stats.sel_fallback.inc();
            }
        }
        if pkt.info.has(f::AETH) {
            if let Some(aeth) = pkt.aeth() {
                match aeth.syndrome {
                    Syndrome::Ack(_) => {}
                    Syndrome::Rnr(code) => {
                        self.dev.stats.rnr_nak_rcvd.inc();
                        if st.rnr_left == 0 {
                            self.fail(&mut st, wc_status::RNR_RETRY_EXC_ERR);
                            return;
                        }
                        if st.rnr_retry != 7 {
                            st.rnr_left -= 1;
                        }
                        self.ack_upto(&mut st, psn, false);
                        self.rewind(&mut st, psn);
                        st.rnr_wait = true;
                        self.timer.arm_us(rc::rnr_timer_us(code));
                        return;
                    }
                    Syndrome::Nak(NakCode::PsnSeqErr) => {
                        self.dev.stats.seq_nak_rcvd.inc();
                        self.ack_upto(&mut st, psn, false);
                        self.rewind(&mut st, psn);
                        self.dev.stats.retransmits.inc();
                        self.send_work.queue();
                        return;
                    }
                    Syndrome::Nak(code) => {
                        let status = match code {
                            NakCode::InvalidRequest => wc_status::REM_INV_REQ_ERR,
                            NakCode::RemoteAccessErr => wc_status::REM_ACCESS_ERR,
                            _ => wc_status::REM_OP_ERR,
                        };
                        self.ack_upto(&mut st, psn, false);
                        self.fail(&mut st, status);
                        return;
                    }
                    Syndrome::Reserved(_) => {
                        self.dev.stats.drop_malformed.inc();
                        return;
                    }
                }
            }
        }
        if pkt.info.opcode == op::RC_ACK {
            self.ack_upto(&mut st, psn, true);
            if let Some(s) = pkt.sack() {
                self.on_sack(&mut st, &s);
            }
        } else if pkt.info.opcode == op::RC_ATOMIC_ACK {
            self.atomic_response(&mut st, pkt);
        } else if pkt.info.has(f::PAYLOAD) {
            st.rd.response_seen();
            if st.sel_tx {
                self.read_response_sel(&mut st, pkt);
            } else {
                self.read_response(&mut st, pkt);
            }
        }
        st.retries_left = st.retry_cnt;
        st.rnr_left = st.rnr_retry;
        st.probes = 0;
        if st.sel_tx {
            let a = if pkt.info.opcode == op::RC_ACK {
                psn.add(1)
            } else {
                psn
            };
            if a.after(st.acked) && !a.after(st.req_psn) {
                st.acked = a;
            }
            self.settle(&mut st);
        }
        // Round trip: an ACK covers every PSN up to its own, a READ response only its own
        // (and one answering a re-request says nothing of one round trip).
        let covered = pkt.info.opcode == op::RC_ACK
            || pkt.info.opcode == op::RC_ATOMIC_ACK
            || pkt.bth.xflags & sel::XF_RETX == 0;
        if covered && st.pto.covers(psn) {
            st.pto.sample(mono_ns());
        }
        // The transport timer measures silence, not the age of the oldest request: a long
        // READ response stream or a large window must not look like a loss.
        if st.req_psn != st.comp_psn {
            let t = self.rto_us(&st);
            if t != 0 {
                self.timer.arm_us(t);
            }
        }
        // Sending more is requester work: leave the softirq to another CPU.
        if self.sq.producer() != st.sq_next || st.rnr_wait {
            self.send_work.queue();
        }
    }

    /// Completes every SEND/WRITE whose last PSN is covered (inclusive if `incl`).
    fn ack_upto(&self, st: &mut State, psn: Psn, incl: bool) {
        loop {
            let i = st.sq_cons;
            if i == st.sq_next && !st.slots.get(i as usize).is_some_and(|s| s.started) {
                break;
            }
            let Some(s) = st.slots.get(i as usize).copied() else {
                break;
            };
            if !s.started || s.sent < s.length && s.opcode != uapi::wr::RDMA_READ {
                break;
            }
            let covered = if incl {
                !s.last_psn.after(psn)
            } else {
                s.last_psn.before(psn)
            };
            if !covered || rc::needs_response(s.opcode) {
                break;
            }
            self.complete_send(st, wc_status::SUCCESS);
        }
        let mut next = if incl { psn.add(1) } else { psn };
        // An ACK or NAK covers requests the responder received, not READ responses we
        // still expect: never move past the first missing response of an incomplete READ
        // (its remaining responses would be discarded as stale and the READ would stall).
        if let Some(s) = st.slots.get(st.sq_cons as usize) {
            if s.started && rc::needs_response(s.opcode) {
                let expect = s.first_psn.add(s.got / st.mtu.max(1));
                if next.after(expect) {
                    next = expect;
                }
            }
        }
        if next.after(st.comp_psn) && !next.after(st.req_psn) {
            st.comp_psn = next;
        }
    }

    fn atomic_response(&self, st: &mut State, pkt: &Packet<'_>) {
        let psn = pkt.bth.psn;
        // The response implicitly acknowledges every request before it.
        self.ack_upto(st, psn, false);
        let i = st.sq_cons;
        let (Some(s), Some(ack)) = (st.slots.get(i as usize).copied(), pkt.atomic_ack()) else {
            return;
        };
        let atomic = matches!(
            s.opcode,
            uapi::wr::ATOMIC_CMP_AND_SWP | uapi::wr::ATOMIC_FETCH_AND_ADD
        );
        if !s.started || !atomic || psn != st.comp_psn || psn != s.first_psn {
            self.dev.stats.dup_or_ooo_resp.inc();
            return;
        }
        // The original value lands in the local buffer in host byte order.
        if !self.deliver(st, i, 0, &ack.orig.to_ne_bytes(), s.length) {
            return;
        }
        st.comp_psn = psn.add(1);
        st.rd_outstanding = st.rd_outstanding.saturating_sub(1);
        self.complete_send(st, wc_status::SUCCESS);
    }

    /// Writes response data into the scatter list of WQE `i` at `off` (at most `limit`
    /// bytes in all); on failure the QP fails and `false` is returned.
    fn deliver(&self, st: &mut State, i: u32, off: u32, data: &[u8], limit: u32) -> bool {
        let Ok(wqe) = self.take_wqe(&mut st.comp, i) else {
            self.fail(st, wc_status::LOC_QP_OP_ERR);
            return false;
        };
        let status = match &wqe.payload {
            uapi::Payload::Sges { sge, num } => {
                if off.saturating_add(data.len() as u32) > limit
                    || self
                        .scatter(sge.get(..*num).unwrap_or(&[]), off, data)
                        .is_none()
                {
                    wc_status::LOC_PROT_ERR
                } else {
                    wc_status::SUCCESS
                }
            }
            uapi::Payload::Inline { .. } => wc_status::LOC_QP_OP_ERR,
        };
        st.comp.put(wqe);
        if status != wc_status::SUCCESS {
            self.fail(st, status);
            return false;
        }
        true
    }

    fn read_response(&self, st: &mut State, pkt: &Packet<'_>) {
        // A response implicitly acknowledges every request before its READ.
        self.ack_upto(st, pkt.bth.psn, false);
        let i = st.sq_cons;
        let Some(s) = st.slots.get(i as usize).copied() else {
            return;
        };
        let psn = pkt.bth.psn;
        if !s.started || s.opcode != uapi::wr::RDMA_READ || psn != st.comp_psn {
            self.dev.stats.dup_or_ooo_resp.inc();
            // A response beyond the expected PSN means responses were lost: ask again from
            // the first missing one now instead of waiting for the retransmit timer.
            if s.started && psn.after(st.comp_psn) && st.read_gap != Some(st.comp_psn) {
                let p = st.comp_psn;
                st.read_gap = Some(p);
                self.rewind(st, p);
                self.dev.stats.retransmits.inc();
                self.send_work.queue();
            }
            return;
        }
        let off = (psn.diff(s.first_psn).max(0) as u32).saturating_mul(st.mtu);
        let data = pkt.payload;
        if !self.deliver(st, i, off, data, s.length) {
            return;
        }
        let got = off + data.len() as u32;
        if let Some(sl) = st.slots.get_mut(i as usize) {
            sl.got = got;
        }
        st.comp_psn = psn.add(1);
        // Responses are accepted only in PSN order and every response of every request
        // for this WQE maps PSN to offset the same way, so once all bytes are in, the READ
        // is complete, whichever response (a re-requested tail ends with LAST, a replay of
        // the original request may not) delivered them.
        if got >= s.length {
            st.rd_outstanding = st.rd_outstanding.saturating_sub(1);
            self.complete_send(st, wc_status::SUCCESS);
        }
    }

    /// The sent WQE (slot index and state) whose PSN span holds `psn`.
    fn slot_of(&self, st: &State, psn: Psn) -> Option<(u32, Slot)> {
        self.find_slot(&st.slots, st.sq_cons, psn)
    }

    /// The WQE among `slots`, from the oldest not completed (`sq_cons`), whose PSN span
    /// holds `psn` (what [`Qp::slot_of`] finds, for callers holding other parts of the
    /// state).
    fn find_slot(&self, slots: &[Slot], sq_cons: u32, psn: Psn) -> Option<(u32, Slot)> {
        let prod = self.sq.producer();
        let mut i = sq_cons;
        while i != prod {
            let s = slots.get(i as usize).copied()?;
            if !s.started || psn.before(s.first_psn) {
                return None;
            }
            if !psn.after(s.last_psn) {
                return Some((i, s));
            }
            i = self.sq.geom.next(i);
        }
        None
    }

    /// The READ slot whose PSN span holds `psn`.
    fn read_slot_of(&self, st: &State, psn: Psn) -> Option<(u32, Slot)> {
        self.slot_of(st, psn)
            .filter(|(_, s)| s.opcode == uapi::wr::RDMA_READ)
    }

    /// The READ repair state and, beside it, the parts of the state its requests need.
    fn read_io<'a>(&'a self, st: &'a mut State) -> (&'a mut ReadRepair, ReadIo<'a>) {
        let State {
            rd,
            slots,
            sq_cons,
            comp,
            path,
            mtu,
            dest_qpn,
            pto,
            ..
        } = st;
        let io = ReadIo {
            qp: self,
            slots,
            sq_cons: *sq_cons,
            comp,
            path: path.as_ref(),
            mtu: *mtu,
            dest_qpn: *dest_qpn,
            pto,
        };
        (rd, io)
    }

    /// READ response with selective retransmission: placed at its offset whatever its
    /// order and recorded in `rd`; READs complete in order once all their PSNs are in;
    /// holes are requested again (only the missing ranges, as [`ReadRepair`] decides).
    fn read_response_sel(&self, st: &mut State, pkt: &Packet<'_>) {
        let psn = pkt.bth.psn;
        self.ack_upto(st, psn, false);
        let Some((i, s)) = self.read_slot_of(st, psn) else {
            self.dev.stats.dup_or_ooo_resp.inc();
            return;
        };
        if !st.rd.wanted(st.comp_psn, psn) {
            self.dev.stats.dup_or_ooo_resp.inc();
            return;
        }
        let off = (psn.diff(s.first_psn).max(0) as u32).saturating_mul(st.mtu);
        if !self.deliver(st, i, off, pkt.payload, s.length) {
            return;
        }
        let retx = pkt.bth.xflags & sel::XF_RETX != 0;
        if st.rd.received(psn, retx) {
            // A hole we asked for again, filled by the original response: we asked too
            // early.
            self.dev.stats.sack_spurious.inc();
        }
        if psn != st.comp_psn {
            self.dev.stats.ooo_kept.inc();
        }
        self.read_progress(st);
        let comp = st.comp_psn;
        let (rd, mut io) = self.read_io(st);
        if rd.after_response(comp, s.first_psn, psn, retx, &mut io) {
            self.dev.stats.sack_again.inc();
        }
    }

    /// Selective READs complete out of step with ACKs: a READ at the head may have all
    /// its responses while a WRITE behind it was acknowledged earlier (and skipped). Completes
    /// whatever the responses and acknowledgements received so far allow.
    fn settle(&self, st: &mut State) {
        let mut budget = self.sq.geom.capacity() + 1;
        while budget > 0 {
            budget -= 1;
            let before = st.sq_cons;
            self.read_progress(st);
            let a = st.acked;
            self.ack_upto(st, a, false);
            if st.sq_cons == before {
                break;
            }
        }
    }

    /// Completes the READs at the head of the queue whose every response arrived.
    fn read_progress(&self, st: &mut State) {
        loop {
            let i = st.sq_cons;
            let Some(s) = st.slots.get(i as usize).copied() else {
                return;
            };
            if !s.started || s.opcode != uapi::wr::RDMA_READ || st.comp_psn.before(s.first_psn) {
                return;
            }
            while !st.comp_psn.after(s.last_psn) && st.rd.has(st.comp_psn) {
                st.comp_psn = st.comp_psn.add(1);
            }
            st.rd.advance_to(st.comp_psn);
            let got = (st.comp_psn.diff(s.first_psn).max(0) as u32)
                .saturating_mul(st.mtu)
                .min(s.length);
            if let Some(sl) = st.slots.get_mut(i as usize) {
                sl.got = got;
            }
            if st.comp_psn.after(s.last_psn) {
                st.rd_outstanding = st.rd_outstanding.saturating_sub(1);
                self.complete_send(st, wc_status::SUCCESS);
            } else {
                return;
            }
        }
    }
}

/// The requester's outstanding READs and the means to request their responses again,
/// for [`ReadRepair`]: borrowed from a [`State`] beside its `rd` ([`Qp::read_io`]).
struct ReadIo<'a> {
    qp: &'a Qp,
    slots: &'a [Slot],
    sq_cons: u32,
    comp: &'a mut WqeCache,
    path: Option<&'a Path>,
    mtu: u32,
    dest_qpn: u32,
    pto: &'a mut ProbeDelay,
}

impl ReadIo<'_> {
    /// Sends a READ request for `n` response PSNs of READ slot `i` starting at `psn`.
    fn request(&mut self, i: u32, psn: Psn, n: u32, xflags: u8) {
        let Some(s) = self.slots.get(i as usize).copied() else {
            return;
        };
        let Ok(wqe) = self.qp.take_wqe(self.comp, i) else {
            return;
        };
        let (va, rkey) = (wqe.remote_addr, wqe.rkey);
        self.comp.put(wqe);
        let Some(path) = self.path else {
            return;
        };
        let mtu = self.mtu.max(1);
        let off = (psn.diff(s.first_psn).max(0) as u32)
            .saturating_mul(mtu)
            .min(s.length);
        let len = n.saturating_mul(mtu).min(s.length - off);
        let bth = Bth {
            opcode: op::RC_READ_REQ,
            pkey: 0xffff,
            dqpn: self.dest_qpn,
            ack_req: true,
            psn,
            caps: self.qp.offer(),
            xflags,
            ..Bth::default()
        };
        let ext = Ext {
            reth: Some(Reth {
                va: va.wrapping_add(u64::from(off)),
                rkey,
                len,
            }),
            ..Ext::default()
        };
        self.qp.dev.xmit_hdr(path, bth, ext);
    }
}

impl ReadPort for ReadIo<'_> {
    fn span(&self, psn: Psn) -> Option<ReadSpan> {
        self.qp
            .find_slot(self.slots, self.sq_cons, psn)
            .filter(|(_, s)| s.opcode == uapi::wr::RDMA_READ)
            .map(|(i, s)| s.read_span(i))
    }

    fn ask(&mut self, span: &ReadSpan, psn: Psn, n: u32) {
        self.pto.resent(psn, psn.add(n));
        self.request(span.tag, psn, n, sel::XF_RETX);
        // A request, like a NAK, carries no data: the responses it brings are counted by
        // the responder, which sends them again (unless it never saw the original).
        self.qp.dev.stats.rd_rereq.inc();
    }
}

impl Qp {
    // ---------------------------------------------------------------- responder

    /// A request arrived; `ip` is its IP header (UD receivers get it in the GRH area).
    /// `Some(psn)`: the packet lies beyond the expected PSN and the QP keeps it; the
    /// caller hands the skb over with [`Qp::keep`].
    pub(crate) fn on_request(&self, pkt: &Packet<'_>, ip: &[u8]) -> Option<Psn> {
        let mut st = self.st.lock();
        if st.state < qps::RTR || st.state == qps::ERR {
            self.dev.stats.drop_state.inc();
            return None;
        }
        // The opcode's transport (its top three bits) must be the QP's.
        let transport = if self.ud() {
            op::UD_SEND_ONLY & 0xe0
        } else {
            op::RC_SEND_FIRST & 0xe0
        };
        if pkt.info.opcode & 0xe0 != transport {
            self.dev.stats.drop_opcode.inc();
            return None;
        }
        if self.ud() {
            self.ud_recv(&mut st, pkt, ip);
            return None;
        }
        if pkt.bth.caps & sel::CAP_SELECTIVE != 0 && self.sel_mode != selmode::OFF && !st.peer_sel {
            st.peer_sel = true;
            self.dev.stats.sel_accepted.inc();
        }
        let psn = pkt.bth.psn;
        let probe = pkt.bth.xflags & sel::XF_PROBE != 0;
        let seq = rc::Seq::of(st.resp_psn, psn);
        if seq == rc::Seq::Ahead {
            self.dev.stats.out_of_seq.inc();
            if st.peer_sel && !st.kept.is_empty() && !st.rnr_hold {
                return self.ahead(&mut st, pkt, probe);
            }
            if st.rnr_hold {
                if probe {
                    // Our RNR NAK may have been lost: a probe gets it again, so the
                    // requester goes back instead of probing forever.
                    let (p, t) = (st.resp_psn, st.min_rnr_timer);
                    self.send_ack(&mut st, p, Syndrome::Rnr(t));
                }
                return None;
            }
            if st.nak.ahead(psn) {
                let e = st.resp_psn;
                self.send_ack(&mut st, e, Syndrome::Nak(NakCode::PsnSeqErr));
            }
            return None;
        }
        if seq == rc::Seq::Duplicate {
            self.dev.stats.duplicates.inc();
            if pkt.info.has(f::READ) {
                // READs are idempotent: answer again from memory.
                let _ = self.read_request(&mut st, pkt, false);
                if probe && st.peer_sel && st.rxw.has_holes() {
                    self.answer_probe(&mut st);
                }
            } else if pkt.info.has(f::ATMETH) {
                // Atomics are not: replay the saved result, never execute twice.
                self.atomic_replay(&mut st, psn);
            } else if probe && st.peer_sel {
                self.answer_probe(&mut st);
            } else {
                self.ack_executed(&mut st);
            }
            return None;
        }
        if st.peer_sel && st.rxw.has_holes() {
            self.hole_filled(&mut st, pkt);
        }
        self.in_order(&mut st, pkt, None);
        self.catch_up(&mut st);
        if probe && st.peer_sel && st.rxw.has_holes() {
            self.answer_probe(&mut st);
        }
        None
    }

    /// A packet beyond the expected PSN from a selective requester: keep it, and report
    /// the holes it reveals (rate-limited by the window's bookkeeping).
    fn ahead(&self, st: &mut State, pkt: &Packet<'_>, probe: bool) -> Option<Psn> {
        let psn = pkt.bth.psn;
        if st.rxw.base() != st.resp_psn {
            self.catch_up(st);
        }
        match st.rxw.arrive(psn) {
            Arrival::Ahead => {
                self.dev.stats.ooo_kept.inc();
                self.hole_filled(st, pkt);
                st.sack_due = true;
                if probe {
                    self.answer_probe(st);
                } else if pkt.bth.xflags & sel::XF_RETX != 0 && !st.at_limit {
                    // A later retransmission overtook the repair of a reported hole.
                    if let Some(s) = st.rxw.lost_again(psn) {
                        self.dev.stats.sack_again.inc();
                        self.send_sack(st, s);
                    }
                }
                if self.place_early(st, psn, pkt) {
                    self.sack_stored(st);
                    return None;
                }
                // (`keep` stores it, or drops it at the reassembly limit.)
                Some(psn)
            }
            Arrival::Duplicate => {
                self.dev.stats.duplicates.inc();
                if probe {
                    self.answer_probe(st);
                }
                None
            }
            Arrival::Beyond | Arrival::Expected => {
                st.at_limit = true;
                self.dev.stats.drop_reasm_limit.inc();
                None
            }
        }
    }

    /// Moves the receive window up to `resp_psn`, processing every kept packet that
    /// became the expected one.
    fn catch_up(&self, st: &mut State) {
        if st.kept.is_empty() {
            return;
        }
        let mut budget = 2 * RX_SPAN;
        while st.rxw.base() != st.resp_psn && budget > 0 {
            budget -= 1;
            let base = st.rxw.base();
            let d = st.resp_psn.diff(base);
            if d < 0 || d >= RX_SPAN as i32 {
                // The expected PSN jumped (modify): start over.
                self.drop_kept(st);
                return;
            }
            // A PSN just processed, or skipped by a READ's span: nothing kept there.
            drop(self.take_kept(st, base));
            let kept = st.rxw.advance();
            if kept && st.rxw.base() == st.resp_psn {
                match self.take_kept(st, st.resp_psn) {
                    Some(Kept::Skb(mut skb, _)) => match super::net::rc_packet(&mut skb) {
                        Some(pkt) => self.in_order(st, &pkt, None),
                        None => self.dev.stats.drop_malformed.inc(),
                    },
                    Some(Kept::Placed(p)) => {
                        match crate::proto::packet::parse(p.hdr.get(..p.len).unwrap_or(&[])) {
                            Ok(pkt) => self.in_order(st, &pkt, Some(p.payload)),
                            Err(_) => self.dev.stats.drop_malformed.inc(),
                        }
                    }
                    None => {}
                }
            }
        }
    }

    /// End of a receive batch: report the holes that outlived the previous batch (a
    /// packet sent from another CPU can overtake a few others; a lost one stays missing).
    /// Not behind a requester run on another CPU, which holds `st` for up to a window of
    /// packets: if `st` is taken, the work item, queued again, ends the batch once that
    /// run lets go of it.
    pub(crate) fn rx_batch_done(&self) {
        let Some(mut st) = self.st.try_lock() else {
            self.batch_due.store(true, Ordering::Release);
            self.send_work.queue();
            return;
        };
        self.batch_end(&mut st);
    }

    /// The work of [`Self::rx_batch_done`], under `st`.
    fn batch_end(&self, st: &mut State) {
        if st.kept_bytes == 0 {
            st.at_limit = false;
        }
        if st.peer_sel && st.sack_due {
            st.sack_due = false;
            if st.at_limit {
                // Every hole from the expected PSN: the retransmissions of PSNs dropped
                // at the limit are dropped again until the first hole is filled, and
                // each SACK naming only those would keep the requester from probing
                // (its timer measures silence) while its repair of the first hole may
                // have been lost.
                if let Some(s) = st.rxw.sack(true) {
                    self.send_sack(st, s);
                }
            } else if !self.sack_settled_holes(st) {
                // Holes not yet settled are looked at again after the next batch.
                st.sack_due = st.rxw.has_holes();
            }
        }
        if st.acks.batch_end() {
            self.ack_executed(st);
        }
    }

    /// A request filled a hole: if the hole was reported and this is the original packet,
    /// not the retransmission, the report came too early: allow for more reordering.
    fn hole_filled(&self, st: &mut State, pkt: &Packet<'_>) {
        let psn = pkt.bth.psn;
        if !psn.before(st.rxw.reported()) {
            return;
        }
        let retx = pkt.bth.xflags & sel::XF_RETX != 0;
        if !retx {
            self.dev.stats.sack_spurious.inc();
        }
        st.reorder.filled(retx);
    }

    /// Answers a probe: every hole, or an ACK if there is none.
    fn answer_probe(&self, st: &mut State) {
        match st.rxw.sack(true) {
            Some(s) => self.send_sack(st, s),
            None => self.ack_executed(st),
        }
    }

    /// Processes the request at the expected PSN; `placed`: its payload (that many
    /// bytes) was placed when it arrived early.
    fn in_order(&self, st: &mut State, pkt: &Packet<'_>, placed: Option<u32>) {
        let psn = pkt.bth.psn;
        st.nak.closed();
        // A READ or atomic answers with responses; an ACK still owed goes before them
        // (they carry later PSNs).
        let responds = pkt.info.has(f::READ) || pkt.info.has(f::ATMETH);
        if responds && st.acks.batch_end() {
            self.ack_executed(st);
        }
        let r = if pkt.info.has(f::SEND) {
            self.recv_send(st, pkt, placed)
        } else if pkt.info.has(f::WRITE) {
            self.recv_write(st, pkt, placed)
        } else if pkt.info.has(f::READ) {
            self.read_request(st, pkt, true)
        } else if pkt.info.has(f::ATMETH) {
            self.atomic_request(st, pkt)
        } else {
            Err(Syndrome::Nak(NakCode::InvalidRequest))
        };
        match r {
            Ok(()) => {
                st.rnr_hold = false;
                st.read_last = responds;
                if !responds {
                    st.resp_psn = psn.add(1);
                    if pkt.info.has(f::LAST) {
                        st.msn = st.msn.wrapping_add(1) & 0xff_ffff;
                    }
                    // Else `rx_batch_done` sends it: one ACK for the receive batch.
                    let now = st.acks.executed(pkt.bth.ack_req);
                    if now || (st.acks.batch_end() && !self.rx_batching.load(Ordering::Acquire)) {
                        self.send_ack(st, psn, Syndrome::Ack(0x1f));
                    }
                }
            }
            Err(Syndrome::Rnr(_)) => {
                self.dev.stats.rnr_nak_sent.inc();
                let t = st.min_rnr_timer;
                self.send_ack(st, psn, Syndrome::Rnr(t));
                if st.peer_sel {
                    st.rnr_hold = true;
                    self.drop_kept(st);
                }
            }
            Err(syn) => {
                self.dev.stats.nak_sent.inc();
                self.send_ack(st, psn, syn);
                st.state = qps::ERR;
                self.flush(st);
            }
        }
    }

    /// A plain ACK of every request executed, unless the last one was a READ or an
    /// atomic and the requester is an IBTA one (see [`State::read_last`]).
    fn ack_executed(&self, st: &mut State) {
        if st.read_last && !st.peer_sel {
            st.acks.sent();
            return;
        }
        let p = st.resp_psn.sub(1);
        self.send_ack(st, p, Syndrome::Ack(0x1f));
    }

    /// Sends a selective NACK (an ACK of everything before the expected PSN, plus the
    /// holes after it). It goes only to an rrxe requester, which completes a READ or an
    /// atomic only from its own response, so it may name the expected PSN even right
    /// after one.
    fn send_sack(&self, st: &mut State, s: Sack) {
        self.dev.stats.sack_sent.inc();
        let p = st.resp_psn.sub(1);
        self.respond(st, p, Syndrome::Ack(0x1f), None, Some(s));
    }

    fn send_ack(&self, st: &mut State, psn: Psn, syndrome: Syndrome) {
        self.respond(st, psn, syndrome, None, None);
    }

    /// The capability bits a response carries: accepted if the requester offered.
    fn accept(st: &State) -> u8 {
        if st.peer_sel {
            sel::CAP_SELECTIVE
        } else {
            0
        }
    }

    /// Sends an ACK/NAK, an ATOMIC ACKNOWLEDGE when `atomic_ack` is given, or a SACK.
    fn respond(
        &self,
        st: &mut State,
        psn: Psn,
        syndrome: Syndrome,
        atomic_ack: Option<AtomicAckEth>,
        sack: Option<Sack>,
    ) {
        let Some(path) = st.path.as_ref() else {
            return;
        };
        let bth = Bth {
            opcode: if atomic_ack.is_some() {
                op::RC_ATOMIC_ACK
            } else {
                op::RC_ACK
            },
            pkey: 0xffff,
            dqpn: st.dest_qpn,
            psn,
            caps: Self::accept(st),
            xflags: if sack.is_some() { sel::XF_EXT } else { 0 },
            ..Bth::default()
        };
        let ext = Ext {
            aeth: Some(Aeth {
                syndrome,
                msn: st.msn,
            }),
            atomic_ack,
            sack,
            ..Ext::default()
        };
        self.dev.xmit_hdr(path, bth, ext);
        // Every responder ACK/NAK is cumulative up to the expected PSN.
        st.acks.sent();
    }

    /// Decodes the next receive WQE into `st.recv.wqe`. From the RQ it stays posted
    /// until [`Qp::complete_recv`]; from an SRQ it is taken at once (other QPs share the
    /// queue).
    fn take_recv_wqe(&self, st: &mut State) -> core::result::Result<(), Syndrome> {
        let bad = Syndrome::Nak(NakCode::RemoteOpErr);
        let Some(rq) = &self.rq else {
            return match self.srq.as_ref().and_then(|q| q.take(&mut st.recv.wqe)) {
                Some(r) => r.map_err(|()| bad),
                None => Err(Syndrome::Rnr(0)),
            };
        };
        if st.rq_cons == rq.producer() {
            return Err(Syndrome::Rnr(0));
        }
        let mut buf = [0u8; uapi::RECV_WQE_HDR + uapi::MAX_SGE * uapi::SGE_LEN];
        let s = rq.read_slot(st.rq_cons, &mut buf).ok_or(bad)?;
        st.recv
            .wqe
            .decode_into(s, self.max_recv_sge as usize)
            .map_err(|_| bad)
    }

    fn complete_recv(&self, st: &mut State, cqe: Cqe, solicited: bool) {
        if let Some(rq) = &self.rq {
            st.rq_cons = rq.geom.next(st.rq_cons);
            rq.publish_consumer(st.rq_cons);
        }
        if self.rcq.post(&cqe, solicited).is_err() {
            self.dev.stats.cq_overflow.inc();
        }
    }

    fn recv_send(
        &self,
        st: &mut State,
        pkt: &Packet<'_>,
        placed: Option<u32>,
    ) -> core::result::Result<(), Syndrome> {
        if pkt.info.has(f::FIRST) {
            self.take_recv_wqe(st)?;
            st.recv.active = true;
            st.recv.offset = 0;
            st.recv.seq = pkt.xeth().map(|x| x.wqe_seq);
        }
        let ctx = &st.recv;
        if !ctx.active {
            return Err(Syndrome::Nak(NakCode::InvalidRequest));
        }
        let data = pkt.payload;
        let n = placed.unwrap_or(data.len() as u32);
        let (wr_id, off) = (ctx.wqe.wr_id, ctx.offset);
        if off.saturating_add(n) > ctx.wqe.length
            || (placed.is_none()
                && self
                    .scatter(ctx.wqe.sge.get(..ctx.wqe.num).unwrap_or(&[]), off, data)
                    .is_none())
        {
            let cqe = Cqe {
                wr_id,
                status: wc_status::LOC_LEN_ERR,
                qp_num: self.qpn,
                ..Cqe::default()
            };
            st.recv.active = false;
            self.complete_recv(st, cqe, false);
            return Err(Syndrome::Nak(NakCode::InvalidRequest));
        }
        st.recv.offset = off + n;
        if pkt.info.has(f::LAST) {
            let total = off + n;
            let mut cqe = Cqe {
                wr_id,
                status: wc_status::SUCCESS,
                opcode: wc_opcode::RECV,
                byte_len: total,
                qp_num: self.qpn,
                wc_flags: wc_flags::GRH,
                port_num: 1,
                ..Cqe::default()
            };
            if let Some(imm) = pkt.imm() {
                // Immediate data travels big-endian and is handed to userspace unchanged.
                cqe.ex = u32::from_ne_bytes(imm.to_be_bytes());
                cqe.wc_flags |= wc_flags::WITH_IMM;
            }
            if let Some(rkey) = pkt.ieth() {
                cqe.ex = rkey;
                cqe.wc_flags |= wc_flags::WITH_INV;
            }
            st.recv.active = false;
            self.complete_recv(st, cqe, pkt.bth.se);
        }
        Ok(())
    }

    /// The MR a RETH names, after the QP's and the MR's access checks and the bounds
    /// check; `None` for a zero-length operation (which touches no memory).
    fn remote_mr(
        &self,
        st: &State,
        reth: &Reth,
        need: i32,
    ) -> core::result::Result<Option<Arc<Mr>>, Syndrome> {
        let acc = Syndrome::Nak(NakCode::RemoteAccessErr);
        if st.access & need == 0 {
            return Err(acc);
        }
        if reth.len == 0 {
            return Ok(None);
        }
        let mr = self.dev.lookup_mr(reth.rkey, self.pd, need).ok_or(acc)?;
        if !mr.covers(reth.va, u64::from(reth.len)) {
            return Err(acc);
        }
        Ok(Some(mr))
    }

    fn recv_write(
        &self,
        st: &mut State,
        pkt: &Packet<'_>,
        placed: Option<u32>,
    ) -> core::result::Result<(), Syndrome> {
        let acc = Syndrome::Nak(NakCode::RemoteAccessErr);
        if pkt.info.has(f::FIRST) {
            let reth = pkt.reth().ok_or(Syndrome::Nak(NakCode::InvalidRequest))?;
            let mr = self.remote_mr(st, &reth, access::REMOTE_WRITE)?;
            st.write = Some(WriteCtx {
                mr,
                va: reth.va,
                resid: reth.len,
                len: reth.len,
                start: reth.va,
                seq: pkt.xeth().map(|x| x.wqe_seq),
            });
        }
        let Some(w) = st.write.as_mut() else {
            return Err(Syndrome::Nak(NakCode::InvalidRequest));
        };
        let n = placed.unwrap_or(pkt.payload.len() as u32);
        if n > w.resid {
            return Err(Syndrome::Nak(NakCode::InvalidRequest));
        }
        if n > 0 && placed.is_none() {
            w.mr.as_ref()
                .ok_or(acc)?
                .write(w.va, pkt.payload)
                .ok_or(acc)?;
        }
        w.va = w.va.wrapping_add(u64::from(n));
        w.resid -= n;
        let len = w.len;
        if pkt.info.has(f::LAST) {
            st.write = None;
            if let Some(imm) = pkt.imm() {
                self.take_recv_wqe(st)?;
                let cqe = Cqe {
                    wr_id: st.recv.wqe.wr_id,
                    status: wc_status::SUCCESS,
                    opcode: wc_opcode::RECV_RDMA_WITH_IMM,
                    byte_len: len,
                    ex: u32::from_ne_bytes(imm.to_be_bytes()),
                    qp_num: self.qpn,
                    wc_flags: wc_flags::GRH | wc_flags::WITH_IMM,
                    port_num: 1,
                    ..Cqe::default()
                };
                self.complete_recv(st, cqe, pkt.bth.se);
            }
        }
        Ok(())
    }

    /// Executes an atomic request and answers it; the result is kept for replays.
    fn atomic_request(
        &self,
        st: &mut State,
        pkt: &Packet<'_>,
    ) -> core::result::Result<(), Syndrome> {
        let inv = Syndrome::Nak(NakCode::InvalidRequest);
        let acc = Syndrome::Nak(NakCode::RemoteAccessErr);
        let a = pkt.atomic_eth().ok_or(inv)?;
        if st.access & access::REMOTE_ATOMIC == 0 {
            return Err(acc);
        }
        if a.va % 8 != 0 {
            return Err(inv);
        }
        let mr = self
            .dev
            .lookup_mr(a.rkey, self.pd, access::REMOTE_ATOMIC)
            .ok_or(acc)?;
        let cas = pkt.info.opcode == op::RC_CMP_SWAP;
        let orig = {
            let _g = self.dev.atomic.lock();
            let mut old = [0u8; 8];
            mr.read(a.va, &mut old).ok_or(acc)?;
            let old = u64::from_ne_bytes(old);
            let new = rc::atomic_result(cas, old, a.swap_add, a.compare);
            mr.write(a.va, &new.to_ne_bytes()).ok_or(acc)?;
            old
        };
        let psn = pkt.bth.psn;
        st.resp_psn = psn.add(1);
        st.msn = st.msn.wrapping_add(1) & 0xff_ffff;
        let slot = st.atomic_next % ATOMIC_REPLAY as u32;
        if let Some(e) = st.replay.get_mut(slot as usize) {
            *e = Some((psn, orig));
        }
        st.atomic_next = st.atomic_next.wrapping_add(1);
        self.send_atomic_ack(st, psn, orig);
        Ok(())
    }

    fn atomic_replay(&self, st: &mut State, psn: Psn) {
        match st.replay.iter().flatten().find(|(p, _)| *p == psn) {
            Some(&(_, orig)) => self.send_atomic_ack(st, psn, orig),
            // Older than anything remembered: the requester has long seen the answer.
            None => self.dev.stats.duplicates.inc(),
        }
    }

    fn send_atomic_ack(&self, st: &mut State, psn: Psn, orig: u64) {
        self.respond(
            st,
            psn,
            Syndrome::Ack(0x1f),
            Some(AtomicAckEth { orig }),
            None,
        );
    }

    /// Answers a READ request (`fresh`: not a duplicate).
    fn read_request(
        &self,
        st: &mut State,
        pkt: &Packet<'_>,
        fresh: bool,
    ) -> core::result::Result<(), Syndrome> {
        let reth = pkt.reth().ok_or(Syndrome::Nak(NakCode::InvalidRequest))?;
        let mr = self.remote_mr(st, &reth, access::REMOTE_READ)?;
        let mtu = st.mtu;
        let n = rc::packets(reth.len, mtu);
        if fresh {
            st.msn = st.msn.wrapping_add(1) & 0xff_ffff;
        }
        let Some(path) = st.path.as_ref() else {
            return Ok(());
        };
        for k in 0..n {
            let off = k * mtu;
            let len = (reth.len - off.min(reth.len)).min(mtu);
            let va = reth.va.wrapping_add(u64::from(off));
            let mr = mr.as_ref();
            let fill = |d: &mut [u8]| {
                mr.and_then(|m| m.read(va, d))
                    .ok_or(wc_status::REM_ACCESS_ERR)
            };
            let opcode = rc::read_resp_opcode(k, n);
            let info =
                crate::proto::opcode::info(opcode).ok_or(Syndrome::Nak(NakCode::InvalidRequest))?;
            let bth = Bth {
                opcode,
                pkey: 0xffff,
                dqpn: st.dest_qpn,
                psn: pkt.bth.psn.add(k),
                pad: ((4 - (len % 4)) % 4) as u8,
                caps: Self::accept(st),
                // Answers to a request seen before, or sent again, are retransmissions.
                xflags: if st.peer_sel && (!fresh || pkt.bth.xflags & sel::XF_RETX != 0) {
                    sel::XF_RETX
                } else {
                    0
                },
                ..Bth::default()
            };
            let ext = Ext {
                aeth: info.has(f::AETH).then_some(Aeth {
                    syndrome: Syndrome::Ack(0x1f),
                    msn: st.msn,
                }),
                ..Ext::default()
            };
            let payload = if len == 0 {
                Payload::None
            } else {
                Payload::Fill(len as usize, &fill)
            };
            let _ = self.dev.xmit(path, &TxPkt { bth, ext, payload });
        }
        if fresh {
            st.resp_psn = pkt.bth.psn.add(n);
        } else {
            self.dev.stats.retx_packets.add(u64::from(n));
        }
        Ok(())
    }
}

impl Qp {
    /// Tail-loss probe: sends the last packet again, flagged, so the responder answers
    /// with every hole it knows of. Counts against the retry budget once the silence
    /// reaches the transport timeout. `false`: fall back to the go-back-N timeout (the
    /// last request is a READ or atomic).
    fn probe(&self, st: &mut State) -> bool {
        {
            let q = self.rxq.lock();
            if q.busy || !q.pkts.is_empty() {
                // Responses are waiting in our own queue: not a silence.
                drop(q);
                self.timer.arm_us(Self::probe_us(st));
                return true;
            }
        }
        let last = st.req_psn.sub(1);
        let data = self
            .slot_of(st, last)
            .is_some_and(|(_, s)| !rc::needs_response(s.opcode) || s.opcode == uapi::wr::RDMA_READ);
        if !data {
            return false;
        }
        st.probes += 1;
        let t = rc::ack_timeout_us(st.timeout);
        if t != 0 && u64::from(st.probes).saturating_mul(Self::probe_us(st)) >= t {
            st.probes = 0;
            self.dev.stats.timeouts.inc();
            if st.retries_left == 0 {
                self.fail(st, wc_status::RETRY_EXC_ERR);
                return true;
            }
            if st.retry_cnt != 7 {
                st.retries_left -= 1;
            }
        }
        self.dev.stats.tlp_sent.inc();
        // READ responses: the requester fills its own holes ([`ReadRepair::probe`]).
        let comp = st.comp_psn;
        let (rd, mut io) = self.read_io(st);
        rd.probe(comp, last, &mut io);
        match io.span(last) {
            // The last request is a READ: probe with a request for its last response,
            // which a responder still missing earlier requests keeps and answers with
            // its holes.
            Some(s) => io.request(s.tag, last, 1, sel::XF_PROBE),
            None => self.retransmit_psn(st, last, sel::XF_PROBE | sel::XF_RETX),
        }
        self.timer.arm_us(Self::probe_us(st));
        true
    }
}

impl TimerHandler for Qp {
    fn timer_fired(&self) {
        let mut st = self.st.lock();
        // (In SQD the WQEs being drained are still retransmitted.)
        if !qps::sending(st.state) {
            return;
        }
        if st.rnr_wait {
            st.rnr_wait = false;
            self.send_work.queue();
            return;
        }
        if st.req_psn == st.comp_psn {
            return;
        }
        if st.sel_tx && self.probe(&mut st) {
            return;
        }
        self.dev.stats.timeouts.inc();
        if st.retries_left == 0 {
            self.fail(&mut st, wc_status::RETRY_EXC_ERR);
            return;
        }
        if st.retry_cnt != 7 {
            st.retries_left -= 1;
        }
        let p = st.comp_psn;
        self.rewind(&mut st, p);
        self.dev.stats.retransmits.inc();
        self.send_work.queue();
    }
}

/// An engine run in progress (see `Qp::engines`); ends when dropped.
struct EngineRun<'a>(&'a AtomicU32);

impl Drop for EngineRun<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

impl Qp {
    fn engine(&self) -> EngineRun<'_> {
        self.engines.fetch_add(1, Ordering::Acquire);
        EngineRun(&self.engines)
    }

    /// Another context is running the engine (a hint: it may end at any moment).
    fn engine_busy(&self) -> bool {
        self.engines.load(Ordering::Acquire) != 0
    }
}

impl WorkHandler for Qp {
    fn work_run(&self) {
        // Received packets first (ACKs open the window for the requester below).
        loop {
            let batch = {
                let mut q = self.rxq.lock();
                q.busy = !q.pkts.is_empty();
                q.urgent = 0;
                core::mem::take(&mut q.pkts)
            };
            if batch.is_empty() {
                break;
            }
            self.rx_batching.store(true, Ordering::Release);
            for (skb, _) in batch {
                self.dev.deliver(self, skb);
            }
            self.rx_batching.store(false, Ordering::Release);
            let mut st = self.st.lock();
            self.batch_end(&mut st);
        }
        let mut st = self.st.lock();
        if self.batch_due.swap(false, Ordering::AcqRel) {
            self.batch_end(&mut st);
        }
        let _e = self.engine();
        if st.state == qps::ERR {
            self.flush(&mut st);
        } else {
            self.req_run(&mut st);
        }
    }
}

/// The monotonic clock in nanoseconds, for round-trip samples.
fn mono_ns() -> u64 {
    u64::try_from(timer::now_ns()).unwrap_or(0)
}
