// SPDX-License-Identifier: GPL-2.0
//! The requester executor: runs the protocol core's requester ([`rc::req`]) over the send
//! queue and carries out what it decides: builds and transmits each packet (headers from
//! the core, payload gathered from the WQE), arms the retransmit timer, and sends again
//! what a SACK, a probe or a go-back names.

use super::super::tx::{Payload, TxPkt};
use super::local::Local;
use super::mem::ODP_MISS;
use super::sched::mono_ns;
use super::Qp;
use super::{selmode, QpState, State};
use crate::kabi::crc::{KernelCrc, KernelCrc32};
use crate::proto::bth::Bth;
use crate::proto::ccwire::{CAP_CC, XF_TS};
use crate::proto::exthdr::{AtomicEth, Feth, Reth};
use crate::proto::icrc::{self, Crc32};
use crate::proto::opcode::{self, flags as f, op};
use crate::proto::packet::{self, Ext};
use crate::proto::psn::Psn;
use crate::proto::rc::req::{Request, Seg, Slot, WqeHead};
use crate::proto::rc::{self, Kind, DEFAULT_PKEY};
use crate::proto::sel::{self, Sack, Xeth};
use crate::proto::uapi::{send_flags, wc_status, wr, SendWqe};
use crate::proto::uc;
use crate::proto::verify::{crc_finish, Alg, Crc, Vcrc, WriteCrc, CAP_VERIFY, XF_VCRC};
use core::cell::Cell;
use kernel::prelude::KBox;

/// Silence after which a selective requester sends a tail-loss probe: twice the smallest
/// recent round trip (see `ProbeDelay`) within these bounds, the initial one until
/// measured, doubled for each probe of the same silence. (A fixed 1 ms probe made
/// lossless READ slower on a host where silences over 1 ms were common without loss;
/// 1.5 ms on a faster one sent at most 15 probes in a 4 s lossless run. An upper bound
/// of 3 ms on a path whose round trip was 10-30 ms, a debug kernel's, sent about 330
/// probes a second, and a ping-pong of 90 s there ran out of its retries.)
const PROBE_MIN_US: u32 = 1500;
const PROBE_INITIAL_US: u32 = 3000;
const PROBE_MAX_US: u32 = 200_000;

/// The largest WQE, in packets, a doorbell leaves to the work item while packets are in
/// flight (see `Qp::autocork`).
const AUTOCORK_PKTS: u32 = 8;

/// Hellos a requester that offers verified WRITEs sends (one per probe delay, doubled
/// each time: about 90 ms of silence before any round trip is measured) to learn whether
/// its peer checks them, before its first WRITE goes unverified. A peer still on its way
/// to RTR drops the first ones; three (21 ms) were not always enough for a peer under
/// QEMU TCG on a busy host.
const HELLOS: u8 = 5;

/// How long a requester waits before it looks again at local pages of an on-demand-paged
/// MR being faulted in (a work item's latency, typically).
const ODP_WAIT_US: u64 = 200;

/// Not a completion status: the IP stack refused a data packet or request (READ,
/// atomic, ATOMIC WRITE, FLUSH) of the requester's run, new or sent again after a
/// go-back, at once (a full device queue, such as a veth's
/// 256-packet ring shared by several QPs, or a tc action). As TCP does with a packet
/// its device refuses, the packet counts as not sent: the requester stops and sends it
/// on its next run, which the next acknowledgement starts (or, with nothing in flight,
/// the pacing timer after [`TX_BUSY_US`]). Left to loss recovery, each such drop cost a
/// tail-loss probe, a full SACK and a retransmission (1.6% of the packets of
/// `ib_write_bw` over 4 QPs on the bench's veth), and atomics, which go back N, spent
/// their retries. After [`TX_BUSY_MAX`] refusals in a row the next one is a loss, so
/// that a path that refuses everything ends in the transport timer's retries.
pub(super) const TX_BUSY: u32 = 0x8000_0002;

/// How long a requester whose packet the stack refused waits with nothing in flight.
const TX_BUSY_US: u64 = 100;

/// Packets the stack may refuse in a row before the next refusal counts as a loss.
const TX_BUSY_MAX: u8 = 16;

/// Packets of a verified WRITE's resend one requester run sends.
const REPAIR_BURST: u32 = 32;

/// What the send queue offers the requester next ([`Qp::next_wqe`]).
pub(super) enum Next {
    /// Nothing to send now.
    Stop,
    /// A local operation completed: look again.
    Again,
    /// WQE `i`, taken out of the cache (give it back with `WqeCache::put`).
    Wqe(u32, KBox<SendWqe>),
}

impl Qp {
    /// The next WQE to send, of any QP type: none at the producer or, in SQD, at the
    /// drain's stop; a WQE that cannot be read fails the QP; a local operation runs here
    /// (one that must wait goes on when the completer runs the requester again).
    pub(super) fn next_wqe(&self, st: &mut State) -> Next {
        let i = st.req.next;
        if i == self.sq.producer() || (st.state == QpState::Sqd && i == st.sqd_stop) {
            return Next::Stop;
        }
        let Ok(wqe) = self.take_wqe(&mut st.cur, i) else {
            self.fail_at(st, wc_status::LOC_QP_OP_ERR);
            return Next::Stop;
        };
        if wr::local(wqe.opcode) {
            let step = self.local_step(st, i, &wqe);
            st.cur.put(wqe);
            return if step == Local::Done {
                Next::Again
            } else {
                Next::Stop
            };
        }
        Next::Wqe(i, wqe)
    }

    /// An unacknowledged transport (UC, UD) handed WQE `i` to the network (`Ok`: its
    /// slot) or could not (`Err`: the completion status): completes it at once or fails
    /// the QP. Returns whether the requester goes on.
    pub(super) fn handed_over(
        &self,
        st: &mut State,
        i: u32,
        r: core::result::Result<Slot, u32>,
    ) -> bool {
        match r {
            Ok(slot) => {
                if let Some(s) = st.slots.get_mut(i as usize) {
                    *s = slot;
                }
                st.req.next = self.sq.geom.next(i);
                self.complete_send(st, wc_status::SUCCESS);
                true
            }
            Err(status) => {
                self.fail_at(st, status);
                false
            }
        }
    }

    /// Sends as much as the window allows (in SQD only what was started before the drain).
    pub(super) fn req_run(&self, st: &mut State) {
        if st.req.rnr_wait || !st.state.sending() {
            return;
        }
        if self.ud() {
            self.ud_run(st);
            return;
        }
        if self.uc() {
            self.uc_run(st);
            return;
        }
        let mut sent_any = self.repair_run(st);
        let now = mono_ns();
        self.cc_refresh(st, now);
        loop {
            if st.req.window_full() {
                self.dev.stats.window_full.inc();
                break;
            }
            if !self.cc_start(st) {
                break;
            }
            let (i, wqe) = match self.next_wqe(st) {
                Next::Stop => break,
                Next::Again => continue,
                Next::Wqe(i, wqe) => (i, wqe),
            };
            let kind = Kind::of_wr(wqe.opcode);
            let slot = st.slots.get(i as usize).copied().unwrap_or_default();
            let blocked = st.req.blocked(&slot, wqe.opcode, st.max_rd_atomic)
                || (matches!(kind, Some(Kind::Write { .. })) && !slot.started && self.hold(st));
            // On-demand paging: the next packet's local pages are being faulted in; the
            // pacing timer runs the requester again.
            let from = if slot.started { slot.sent } else { 0 };
            let n = wqe.length.saturating_sub(from).min(st.mtu) as usize;
            let waiting = !blocked && !self.wqe_resident(&wqe, from, n);
            if waiting {
                self.dev.stats.odp_wait.inc();
                self.pace_timer.arm_us(ODP_WAIT_US);
            }
            let sent = match kind {
                // Paced (congestion control): the pacing timer runs the requester again.
                Some(k) if !blocked && !waiting => {
                    let mtu = st.mtu;
                    if self.cc_admit(st, now, mtu) {
                        Some(self.send_next(st, i, &wqe, k, slot))
                    } else {
                        None
                    }
                }
                _ => None,
            };
            st.cur.put(wqe);
            let Some(sent) = sent else {
                if kind.is_none() {
                    self.fail_at(st, wc_status::LOC_QP_OP_ERR);
                }
                break;
            };
            match sent {
                Ok(done) => {
                    sent_any = true;
                    if done {
                        st.req.next = self.sq.geom.next(i);
                    }
                }
                Err(TX_BUSY) => {
                    self.dev.stats.tx_busy.inc();
                    if st.req.idle() {
                        self.pace_timer.arm_us(TX_BUSY_US);
                    }
                    break;
                }
                Err(status) => {
                    let s = if status == ODP_MISS {
                        wc_status::LOC_PROT_ERR
                    } else {
                        status
                    };
                    self.fail_at(st, s);
                    break;
                }
            }
        }
        if sent_any {
            st.pto.sent(st.req.req_psn.sub(1), mono_ns);
            self.arm_retx(st);
        }
    }

    /// Transmits the next packet of WQE `i` (`stored`: its slot as kept so far);
    /// `Ok(true)` once the WQE is fully sent.
    fn send_next(
        &self,
        st: &mut State,
        i: u32,
        wqe: &SendWqe,
        kind: Kind,
        stored: Slot,
    ) -> core::result::Result<bool, u32> {
        let mtu = st.mtu;
        let mut slot = stored;
        // What starting the WQE changes outside its slot, for a refused request (below).
        let (hint0, pinged0) = (st.solo_hint, st.pinged);
        if !slot.started {
            let head = WqeHead {
                wr_id: wqe.wr_id,
                opcode: wqe.opcode,
                flags: wqe.flags,
                length: wqe.length,
            };
            slot = st.req.start(&head, mtu);
            let prod = self.sq.producer();
            let behind = prod != self.sq.geom.next(i);
            let depth = self.sq.geom.count(prod, st.req.cons);
            let signaled = wqe.flags & send_flags::SIGNALED != 0 || self.sig_all;
            let pinged = core::mem::take(&mut st.pinged);
            // (Not a verified WRITE's resend after a failed check.)
            let solo = st.solo_hint.start(
                depth,
                behind,
                st.req.cons == i && signaled,
                pinged,
                wqe.length,
            ) && st.sel_tx
                && st.req.vrepair.is_none();
            st.solo_wqe = solo.then_some(i);
            if matches!(kind, Kind::Write { .. }) {
                if stored.vfy.is_some() {
                    // Started again after a go-back: its CRC so far and its attempts
                    // stay (the bytes are the same).
                    slot.vfy = stored.vfy;
                } else if st.vfy_tx {
                    slot.vfy = Some(WriteCrc::new(self.dev.knobs.verify().alg()));
                    self.dev.stats.verify_sent.inc();
                } else if self.vfy_offer && !st.vfy_seen {
                    self.dev.stats.verify_unnegotiated.inc();
                }
            }
        }
        // Flagged while nothing was posted behind it.
        let solo = st.solo_wqe == Some(i) && self.sq.producer() == self.sq.geom.next(i);
        if rc::needs_response(wqe.opcode) {
            // One request packet; the responses complete it.
            let r = st.req.next_request(&slot, stored.started, mtu);
            let taken = self.request(st, wqe, kind, &r, solo)?;
            if !taken && st.tx_refused < TX_BUSY_MAX {
                // Not sent, as a refused data packet (see `TX_BUSY`): a new WQE starts
                // again on the next run (its slot is not kept), one sent again after a
                // go-back is sent again from the same place. Left to loss recovery,
                // atomics, which go back N, spent their retries on a full veth ring, and
                // a refused resend of the head atomic cost a whole transport timer.
                st.tx_refused += 1;
                if !stored.started {
                    // It starts again on the next run: as if it had not started now.
                    st.req.unstart();
                    st.solo_hint = hint0;
                    st.pinged = pinged0;
                }
                return Err(TX_BUSY);
            }
            st.tx_refused = 0;
            st.req.request_sent(&mut slot, &r);
            if let Some(s) = st.slots.get_mut(i as usize) {
                *s = slot;
            }
            return Ok(true);
        }
        let seg = st.req.next_data(&slot, mtu, st.cc.ack_every());
        let xf = if solo { sel::XF_SOLO } else { 0 };
        let (fed, taken) = self.data_packet(st, wqe, kind, &slot, &seg, xf)?;
        if !taken && st.tx_refused < TX_BUSY_MAX {
            // Not sent: the WQE keeps its progress (started, this packet not sent),
            // and the packet goes out on the next run.
            st.tx_refused += 1;
            if let Some(s) = st.slots.get_mut(i as usize) {
                *s = slot;
            }
            return Err(TX_BUSY);
        }
        st.tx_refused = 0;
        if let (Some(raw), Some(w)) = (fed, slot.vfy.as_mut()) {
            w.fed(raw, seg.len);
        }
        st.req.data_sent(&mut slot, &seg);
        if let Some(s) = st.slots.get_mut(i as usize) {
            *s = slot;
        }
        Ok(seg.last)
    }

    /// Transmits a READ, atomic, ATOMIC WRITE or FLUSH request (`solo`: flagged
    /// [`sel::XF_SOLO`], which a READ's responses echo); `Ok(false)`: the stack refused it
    /// at once.
    fn request(
        &self,
        st: &State,
        wqe: &SendWqe,
        kind: Kind,
        r: &Request,
        solo: bool,
    ) -> core::result::Result<bool, u32> {
        let path = st.path.as_ref().ok_or(wc_status::LOC_QP_OP_ERR)?;
        let fill = |at: u32, d: &mut [u8]| self.gather(wqe, at, d).map(|()| None);
        let mut payload = Payload::None;
        let ext = if kind == Kind::AtomicWrite {
            // IBTA oA19-28: exactly 8 bytes, to an 8-byte aligned address.
            if wqe.length != 8 || wqe.remote_addr % 8 != 0 {
                return Err(wc_status::LOC_LEN_ERR);
            }
            payload = Payload::Fill(8, &fill);
            Ext {
                reth: Some(Reth {
                    va: wqe.remote_addr,
                    rkey: wqe.rkey,
                    len: 8,
                }),
                ..Ext::default()
            }
        } else if kind == Kind::Flush {
            Ext {
                feth: Some(Feth {
                    plt: wqe.flush_type,
                    sel: wqe.flush_level,
                }),
                reth: Some(Reth {
                    va: wqe.remote_addr,
                    rkey: wqe.rkey,
                    len: wqe.length,
                }),
                ..Ext::default()
            }
        } else if let Kind::Atomic { cas } = kind {
            if wqe.length < 8 || wqe.remote_addr % 8 != 0 {
                return Err(wc_status::LOC_LEN_ERR);
            }
            Ext {
                atomic: Some(AtomicEth {
                    va: wqe.remote_addr,
                    rkey: wqe.rkey,
                    swap_add: if cas { wqe.swap } else { wqe.compare_add },
                    compare: if cas { wqe.compare_add } else { 0 },
                }),
                ..Ext::default()
            }
        } else {
            // READ: everything not yet received, from the PSN its offset maps to.
            Ext {
                reth: Some(Reth {
                    va: wqe.remote_addr.wrapping_add(u64::from(r.off)),
                    rkey: wqe.rkey,
                    len: r.len,
                }),
                ..Ext::default()
            }
        };
        let bth = Bth {
            opcode: rc::opcode(kind, true, true),
            pkey: DEFAULT_PKEY,
            dqpn: st.dest_qpn,
            ack_req: true,
            psn: r.psn,
            caps: self.offer(),
            xflags: if solo { sel::XF_SOLO } else { 0 },
            ..Bth::default()
        };
        self.dev.xmit_or_busy(path, &TxPkt { bth, ext, payload })
    }

    /// The capability bits a request carries (congestion-control extensions always).
    pub(super) fn offer(&self) -> u8 {
        let v = if self.vfy_offer { CAP_VERIFY } else { 0 };
        if self.sel_mode == selmode::OFF {
            CAP_CC | v
        } else {
            sel::CAP_SELECTIVE | CAP_CC | v
        }
    }

    /// Sends the next packets of a verified WRITE's resend after a failed check (at most
    /// [`REPAIR_BURST`] per run, the work item runs again for the rest); `true` if any
    /// went out.
    fn repair_run(&self, st: &mut State) -> bool {
        let mut n = 0;
        while n < REPAIR_BURST {
            let Some((i, seg)) = st.req.repair_next(&st.slots, st.mtu) else {
                return n > 0;
            };
            let Some(slot) = st.slots.get(i as usize).copied() else {
                return n > 0;
            };
            let Ok(wqe) = self.take_wqe(&mut st.cur, i) else {
                return n > 0;
            };
            let r = Kind::of_wr(wqe.opcode)
                .map(|k| self.data_packet(st, &wqe, k, &slot, &seg, sel::XF_RETX));
            st.cur.put(wqe);
            if matches!(r, Some(Ok(_))) {
                self.dev.stats.retx_packets.inc();
            }
            n += 1;
        }
        self.send_work.queue();
        true
    }

    /// Whether a new WRITE waits because it is offered as verified and the peer has not
    /// answered yet: a response to what is in flight will say whether it checks WRITEs;
    /// with nothing in flight a hello asks (at most [`HELLOS`], the probe delay apart,
    /// doubled each time; then the WRITE goes unverified).
    fn hold(&self, st: &mut State) -> bool {
        if !self.vfy_offer || st.vfy_seen {
            return false;
        }
        if !st.req.idle() {
            return true;
        }
        if st.hellos >= HELLOS {
            return false;
        }
        // One hello at a time: the next only once the last one's wait is over.
        if st.hellos == 0 || st.hello_due {
            self.hello(st);
        }
        true
    }

    /// Sends a hello: a zero-length SEND with the PSN before the first one not yet
    /// acknowledged, which every RC responder takes as a duplicate and acknowledges
    /// (IBTA C9-105) without executing it; the ACK carries the responder's capability
    /// bits. The retransmit timer runs the requester again after the probe delay (doubled
    /// for each hello before).
    pub(super) fn hello(&self, st: &mut State) {
        let Some(path) = st.path.as_ref() else {
            return;
        };
        let bth = Bth {
            opcode: op::RC_SEND_ONLY,
            pkey: DEFAULT_PKEY,
            dqpn: st.dest_qpn,
            ack_req: true,
            psn: st.req.comp_psn.sub(1),
            caps: self.offer(),
            ..Bth::default()
        };
        self.dev.xmit_hdr(path, bth, Ext::default());
        st.hellos = st.hellos.saturating_add(1);
        st.hello_due = false;
        self.dev.stats.verify_hello.inc();
        // Each unanswered hello doubles the wait, as probes do: a slow path or peer still
        // answers in time.
        self.timer.arm_us(Self::probe_after_us(
            st,
            u32::from(st.hellos.saturating_sub(1)),
        ));
    }

    /// Transmits data packet `seg` of the SEND or WRITE WQE in `slot`; `xflags` adds rrxe
    /// flags (a probe, a retransmission). With selective retransmission on, it carries an
    /// XETH. A verified WRITE's packet extends the message's CRC the first time it is
    /// sent (`Ok(Some(crc))`: the running CRC after it), and its last packet carries the
    /// CRC. The flag beside it is `false` if the stack refused the packet at once (a
    /// new packet is then sent again, see [`TX_BUSY`]; a resend is lost).
    pub(super) fn data_packet(
        &self,
        st: &State,
        wqe: &SendWqe,
        kind: Kind,
        slot: &Slot,
        seg: &Seg,
        xflags: u8,
    ) -> core::result::Result<(Option<u32>, bool), u32> {
        let opcode = if self.uc() {
            uc::opcode(rc::opcode(kind, seg.first, seg.last))
        } else {
            rc::opcode(kind, seg.first, seg.last)
        };
        let info = opcode::info(opcode).ok_or(wc_status::LOC_QP_OP_ERR)?;
        let path = st.path.as_ref().ok_or(wc_status::LOC_QP_OP_ERR)?;
        let ts = st.cc.ts();
        let bth = Bth {
            opcode,
            se: seg.last
                && wqe.flags & send_flags::SOLICITED != 0
                && (info.has(f::SEND) || info.has(f::IMMDT)),
            pkey: DEFAULT_PKEY,
            dqpn: st.dest_qpn,
            ack_req: seg.ack_req,
            psn: seg.psn,
            pad: rc::pad(seg.len),
            caps: self.offer(),
            xflags: if st.sel_tx { sel::XF_EXT | xflags } else { 0 }
                | if ts.is_some() { XF_TS } else { 0 }
                | if seg.last && slot.vfy.is_some() {
                    XF_VCRC
                } else {
                    0
                },
            ..Bth::default()
        };
        let vcrc = slot.vfy.filter(|_| seg.last).map(|w| w.header());
        let ext = Ext {
            vcrc,
            ts,
            reth: info.has(f::RETH).then_some(Reth {
                va: wqe.remote_addr,
                rkey: wqe.rkey,
                len: slot.length,
            }),
            // `ex` holds the immediate as the user stored it (network byte order in
            // memory); the header wants its numeric value.
            imm: info
                .has(f::IMMDT)
                .then_some(u32::from_be_bytes(wqe.ex.to_le_bytes())),
            ieth: info.has(f::IETH).then_some(wqe.ex),
            xeth: st.sel_tx.then_some(Xeth {
                wqe_seq: slot.seq,
                offset: seg.off,
                total: slot.length,
            }),
            ..Ext::default()
        };
        let off = seg.off;
        // A verified WRITE's bytes extend its CRC as they are gathered, the first time.
        let feed = slot.vfy.filter(|w| w.due(off));
        let crc = Cell::new(feed.map_or(0, |w| w.raw));
        let alg = slot.vfy.map(|w| w.alg).unwrap_or_default();
        let fill = |at: u32, d: &mut [u8]| {
            self.gather(wqe, off.wrapping_add(at), d)?;
            if feed.is_none() {
                return Ok(None);
            }
            if alg != Alg::Crc32 {
                crc.set(KernelCrc.update(alg, crc.get(), d));
                return Ok(None);
            }
            // CRC-32 is the ICRC's polynomial: one pass over the bytes serves both.
            let raw = KernelCrc32.update(0, d);
            crc.set(icrc::shift(crc.get(), d.len() as u32) ^ raw);
            Ok(Some(raw))
        };
        // The last packet's CRC header, once its own bytes are in.
        let at = packet::vfy_offset(&bth);
        let seal = |h: &mut [u8]| {
            if let (Some(o), Some(v)) = (at, vcrc) {
                let raw = if feed.is_some() {
                    crc.get()
                } else {
                    slot.vfy.map_or(0, |w| w.raw)
                };
                let hdr = Vcrc {
                    crc: crc_finish(raw),
                    attempt: v.attempt,
                    alg: v.alg,
                };
                let _ = h.get_mut(o..).map(|b| hdr.encode(b));
            }
        };
        let len = seg.len as usize;
        let payload = if vcrc.is_some() {
            Payload::Sealed(len, &fill, &seal)
        } else {
            Payload::Fill(len, &fill)
        };
        match self.dev.xmit_or_busy(path, &TxPkt { bth, ext, payload }) {
            // Pages invalidated since `req_run` checked them: the packet is lost, as on
            // the wire, and sent again once the peer reports the gap (a verified WRITE's
            // CRC needs every byte: that fails).
            Err(ODP_MISS) if feed.is_none() => {
                self.dev.stats.odp_wait.inc();
                Ok((None, true))
            }
            Err(ODP_MISS) => Err(wc_status::LOC_PROT_ERR),
            r => r.map(|taken| (feed.map(|_| crc.get()), taken)),
        }
    }

    /// Sends PSN `psn` again (a SACK named it, or a probe): only that packet, or, for a
    /// READ or atomic request, go-back-N from it.
    pub(super) fn retransmit_psn(&self, st: &mut State, psn: Psn, xflags: u8) {
        if psn.before(st.req.comp_psn) || !psn.before(st.req.req_psn) {
            return;
        }
        let Some((i, s)) = self.slot_of(st, psn) else {
            return;
        };
        if s.is_read() && st.sel_tx {
            // The request was lost: ask for everything still missing, unless asked since
            // the last probe (two SACKs, or a probe's answer and a SACK, named it).
            let comp = st.req.comp_psn;
            let (rd, mut io) = self.read_io(st);
            rd.lost_request(comp, &s.read_span(i), psn, &mut io);
            return;
        }
        if s.responds() {
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
        let seg = Seg::of(&s, psn.diff(s.first_psn).max(0) as u32, st.mtu, true);
        let sent = self.data_packet(st, &wqe, kind, &s, &seg, xflags);
        st.cur.put(wqe);
        if let (Ok((Some(raw), _)), Some(Some(w))) =
            (sent, st.slots.get_mut(i as usize).map(|e| e.vfy.as_mut()))
        {
            w.fed(raw, seg.len);
        }
        if sent.is_ok() {
            self.dev.stats.retx_packets.inc();
            // The cumulative ACK of the timed packet now waits for this one (a probe only
            // resends a packet the response already waits for: see `ProbeDelay`).
            if xflags & sel::XF_PROBE == 0 {
                st.pto.cancel();
            }
        }
    }

    /// A SACK arrived (the completer was at `before`; its cumulative part has been
    /// handled): send exactly the PSNs it names, before any new data.
    pub(super) fn on_sack(&self, st: &mut State, s: &Sack, before: Psn) {
        self.dev.stats.sack_rcvd.inc();
        let hold_ns = u64::from(st.pto.sack_hold_us(PROBE_INITIAL_US)) * 1000;
        st.sack
            .begin(s.full, before, st.req.comp_psn, mono_ns(), hold_ns);
        for p in s.iter() {
            if st.sack.resend(p) {
                self.retransmit_psn(st, p, sel::XF_RETX);
            }
        }
    }

    /// Silence after which a tail-loss probe is sent, the probes already sent in this
    /// silence counted.
    pub(super) fn probe_us(st: &State) -> u64 {
        Self::probe_after_us(st, st.probes)
    }

    /// The probe delay after `n` unanswered probes (or hellos).
    fn probe_after_us(st: &State, n: u32) -> u64 {
        u64::from(
            st.pto
                .backoff_us(PROBE_MIN_US, PROBE_INITIAL_US, PROBE_MAX_US, n),
        )
    }

    /// The transport timer: the Local ACK Timeout stretched towards the measured
    /// retransmission timeout and backed off after unanswered timeouts, up to four times
    /// the attribute ([`rc::transport_timer_us`]).
    pub(super) fn transport_us(st: &State) -> u64 {
        rc::transport_timer_us(st.timeout, st.pto.rto_us(), st.req.retry.spent())
    }

    /// Arms the retransmit timer as a silence starts (a packet sent, a response heard):
    /// with selective retransmission a tail-loss probe after [`Qp::probe_us`], else,
    /// and when the head WQE is an atomic, ATOMIC WRITE or FLUSH (which no probe
    /// repairs), the transport timer. Such a head goes back N only when the transport
    /// timer runs out, as the Local ACK Timeout says: going back at every probe delay
    /// spent a retry each time, and under load (four QPs of 128 atomics on the debug
    /// kernel) the QPs failed with `RETRY_EXC_ERR` whatever the attribute.
    pub(super) fn arm_retx(&self, st: &mut State) {
        let t = Self::transport_us(st);
        let p = Self::probe_us(st);
        st.retx_probe = st.sel_tx && (t == 0 || t > p) && !st.req.head_unprobed(&st.slots);
        let d = if st.retx_probe { p } else { t };
        if d != 0 {
            self.timer.arm_us(d);
        }
    }

    /// Go-back-N: transmission resumes at `psn` (as [`rc::req::Requester::rewind`]
    /// decides).
    pub(super) fn rewind(&self, st: &mut State, psn: Psn) {
        // (Karn: the response to the timed packet may now answer its resend.)
        st.pto.cancel();
        let prod = self.sq.producer();
        st.req
            .rewind(&mut st.slots, &self.sq.geom, prod, psn, st.mtu);
    }

    /// Whether a doorbell leaves the next WQE to the work item (like TCP's autocorking):
    /// packets are in flight, so ACKs run the requester soon anyway, and the WQE is a
    /// small SEND or WRITE (at most [`AUTOCORK_PKTS`] packets), which the work item then
    /// sends together with whatever else was posted meanwhile: fewer requester runs and
    /// fewer ACKs per message. A READ or atomic, a large WQE or an idle QP is sent from
    /// the syscall at once: a large one keeps the posting thread's CPU busy with its own
    /// packets, and a READ request waited on would stall its responses.
    pub(super) fn autocork(&self, st: &mut State) -> bool {
        let i = st.req.next;
        if self.ud() || st.state != QpState::Rts || st.req.idle() || i == self.sq.producer() {
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
}
