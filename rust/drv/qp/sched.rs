// SPDX-License-Identifier: GPL-2.0
//! Where and when the engine runs: the receive softirq sorts a packet to its QP and
//! processes a small one at once when the QP is idle, else queues it for the QP's work
//! item (on the unbound workqueue, on whichever CPU is free); the work item processes
//! the queued packets in batches, then runs the requester; the retransmit timer goes
//! back, probes or ends an RNR wait.

use super::super::frame;
use super::super::limits::RX_QUEUE_MAX;
use super::{Qp, QpState, State, TIMER_RETX};
use crate::kabi::crc::KernelCrc32;
use crate::kabi::skb::SkBuff;
use crate::kabi::timer::{self, TimerHandler};
use crate::kabi::work::WorkHandler;
use crate::proto::icrc;
use crate::proto::opcode::{flags as f, ICRC_LEN};
use crate::proto::packet;
use crate::proto::rc::comp::Timer as Fired;
use crate::proto::rdrep::ReadPort;
use crate::proto::sel::{self, RxKey};
use crate::proto::uapi::wc_status;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;

/// Largest UDP payload the receive softirq processes itself when the QP's queue is idle.
const RX_INLINE_MAX: usize = 256;

/// Received packets waiting for the QP's work item.
pub(super) struct RxQueue {
    /// Each with its direction and PSN (where a retransmission may go: [`sel::retx_slot`]).
    pub(super) pkts: KVec<(SkBuff, RxKey)>,
    /// How many retransmissions lead `pkts` (see [`Qp::queue_rx`]).
    pub(super) urgent: usize,
    /// The work item is processing a batch: later packets queue behind it.
    pub(super) busy: bool,
}

impl Qp {
    /// Receive softirq: a small packet (ACK, short message) or one of a message its
    /// sender's application awaits (`solo`: [`sel::XF_SOLO`], someone waits for just
    /// this message), arriving while nothing is queued, is processed at once (latency);
    /// anything else goes to this QP's work item, so that copying payloads of a stream
    /// runs on whichever CPU is free. A full queue drops the packet (counted; the peer
    /// retransmits).
    ///
    /// A selective retransmission (`retx`) goes ahead of the packets queued before it,
    /// after the retransmissions already there and after any packet of its direction
    /// with an earlier PSN ([`sel::retx_slot`]): it repairs the hole everything behind
    /// it waits for. Queued at the back, a READ's repair was processed only after the
    /// whole window of responses sent before it, so the window stayed closed until the
    /// queue ran dry and then the pipe was empty for a round trip.
    pub(crate) fn queue_rx(&self, skb: SkBuff, len: usize, key: RxKey, retx: bool, solo: bool) {
        let mut q = self.rxq.lock();
        if (len <= RX_INLINE_MAX || solo) && q.pkts.is_empty() && !q.busy && !self.engine_busy() {
            drop(q);
            if len > RX_INLINE_MAX {
                self.dev.stats.rx_solo.inc();
            }
            self.process(skb, true);
            return;
        }
        if q.pkts.len() >= RX_QUEUE_MAX {
            drop(q);
            self.dev.stats.drop_rx_queue.inc();
            return;
        }
        let queued = if self.dev.alloc_fails() {
            false
        } else if retx {
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
            // No room could be allocated (or the fault point failed it).
            self.dev.stats.nomem.inc();
            self.dev.stats.drop_rx_queue.inc();
            return;
        }
        self.send_work.queue();
    }

    /// Frees the packets still queued (destroy).
    pub(super) fn drop_queued(&self) {
        drop(core::mem::take(&mut self.rxq.lock().pkts));
    }

    /// Checks and processes a packet the softirq sorted to this QP: the ICRC, then the
    /// responder (requests) or the completer (responses). Its work item runs this, on
    /// whichever CPU is free, for a batch of queued packets; the receive softirq, for a
    /// packet processed at once (`alone`: a batch of its own, ended under the same hold
    /// of `st` as its processing).
    pub(super) fn process(&self, mut skb: SkBuff, alone: bool) {
        let Ok((l3, v6)) = skb.rx_view() else {
            return;
        };
        let Some((ip, udp_payload)) = frame::split(l3, v6) else {
            self.dev.stats.drop_malformed.inc();
            return;
        };
        let Ok(pkt) = packet::parse(udp_payload) else {
            self.dev.stats.drop_malformed.inc();
            return;
        };
        let body = l3.get(..l3.len().saturating_sub(ICRC_LEN)).unwrap_or(&[]);
        if icrc::compute(&KernelCrc32, body).ok() != Some(pkt.icrc) {
            self.dev.stats.drop_icrc.inc();
            return;
        }
        let bytes = udp_payload.len();
        if pkt.info.has(f::CNP) {
            // (Nothing for a batch's end: a CNP neither executes nor keeps a request.)
            self.on_cnp(&pkt);
        } else if pkt.info.has(f::REQ) {
            if let Some(psn) = self.on_request(&pkt, ip, alone) {
                self.keep(psn, skb, bytes, alone);
                return;
            }
        } else {
            self.on_response(&pkt, alone);
        }
        skb.consume();
    }

    /// Tail-loss probe: sends the last packet again, flagged, so the responder answers
    /// with every hole it knows of. Counts against the retry budget once the silence
    /// reaches the transport timeout. `false`: fall back to the go-back-N timeout, as
    /// `Requester::probe_psn` decides (an atomic is the last request, or waits for its
    /// acknowledgement at the head), once the transport timer has run out.
    fn probe(&self, st: &mut State) -> bool {
        {
            let q = self.rxq.lock();
            if q.busy || !q.pkts.is_empty() {
                // Responses are waiting in our own queue: not a silence.
                drop(q);
                self.arm_retx(st);
                return true;
            }
        }
        let prod = self.sq.producer();
        let Some(last) = st.req.probe_psn(&st.slots, &self.sq.geom, prod) else {
            // Nothing a probe repairs (an atomic, ATOMIC WRITE or FLUSH at the head, or
            // the last request): if a probe delay ran out, the transport timer decides,
            // counted from the same silence.
            let t = Self::transport_us(st);
            let ran = Self::probe_us(st);
            if st.retx_probe && t > ran {
                st.retx_probe = false;
                self.timer.arm_us(t - ran);
                return true;
            }
            st.silence_over();
            return false;
        };
        // (The delay that just ran out, before this probe doubles the next.)
        st.silent_us = st.silent_us.saturating_add(Self::probe_us(st));
        st.probes = st.probes.saturating_add(1);
        let t = Self::transport_us(st);
        if t != 0 && st.silent_us >= t {
            st.silence_over();
            self.dev.stats.timeouts.inc();
            if !st.req.timed_out() {
                self.fail(st, wc_status::RETRY_EXC_ERR);
                return true;
            }
        }
        self.dev.stats.tlp_sent.inc();
        // (Its answer, if it is a full SACK, is matched to it: see `SackTx`.)
        st.sack.probe_sent(last);
        // READ responses: the requester fills its own holes ([`ReadRepair::probe`]).
        let comp = st.req.comp_psn;
        let (rd, mut io) = self.read_io(st);
        rd.probe(comp, last, &mut io);
        match io.span(last) {
            // The last request is a READ: probe with a request for its last response,
            // which a responder still missing earlier requests keeps and answers with
            // its holes.
            Some(s) => io.request(s.tag, last, 1, sel::XF_PROBE),
            None => self.retransmit_psn(st, last, sel::XF_PROBE | sel::XF_RETX),
        }
        st.retx_probe = true;
        self.timer.arm_us(Self::probe_us(st));
        true
    }
}

impl TimerHandler for Qp {
    fn timer_fired(&self, id: u8) {
        if id != TIMER_RETX {
            self.cc_timer(id);
            return;
        }
        let mut st = self.st.lock();
        // (In SQD the WQEs being drained are still retransmitted.)
        if !st.state.sending() {
            return;
        }
        match st.req.timer() {
            Fired::RnrDone => {
                self.send_work.queue();
                return;
            }
            Fired::Idle => {
                // A hello went unanswered: the requester sends another or gives up.
                if self.vfy_offer && !st.vfy_seen && st.hellos > 0 {
                    st.hello_due = true;
                    self.send_work.queue();
                }
                return;
            }
            Fired::Expired => {}
        }
        if st.sel_tx && self.probe(&mut st) {
            return;
        }
        self.dev.stats.timeouts.inc();
        if !st.req.timed_out() {
            self.fail(&mut st, wc_status::RETRY_EXC_ERR);
            return;
        }
        let p = st.req.comp_psn;
        self.rewind(&mut st, p);
        self.dev.stats.retransmits.inc();
        self.send_work.queue();
    }
}

/// An engine run in progress (see `Qp::engines`); ends when dropped.
pub(super) struct EngineRun<'a>(&'a AtomicU32);

impl Drop for EngineRun<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

impl Qp {
    pub(super) fn engine(&self) -> EngineRun<'_> {
        self.engines.fetch_add(1, Ordering::Acquire);
        EngineRun(&self.engines)
    }

    /// Another context is running the engine (a hint: it may end at any moment).
    pub(super) fn engine_busy(&self) -> bool {
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
                self.process(skb, false);
            }
            self.rx_batching.store(false, Ordering::Release);
            let mut st = self.st.lock();
            self.batch_end(&mut st);
        }
        let mut st = self.st.lock();
        let _e = self.engine();
        if st.state == QpState::Err {
            self.flush(&mut st);
        } else {
            self.req_run(&mut st);
        }
    }
}

/// The monotonic clock in nanoseconds, for round-trip samples.
pub(super) fn mono_ns() -> u64 {
    u64::try_from(timer::now_ns()).unwrap_or(0)
}
