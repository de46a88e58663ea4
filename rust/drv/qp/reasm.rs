// SPDX-License-Identifier: GPL-2.0
//! Selective retransmission at the responder: packets beyond the expected PSN are kept
//! (the skb, or only its headers when the payload could be placed at once), within the
//! per-QP and per-device limits; the holes they reveal are reported in SACKs (the
//! protocol core's [`Keeper`](crate::proto::rc::sack::Keeper) decides which and when);
//! when the expected PSN arrives the kept packets run through the responder in PSN
//! order.

use super::super::frame;
use super::{Qp, State};
use crate::kabi::skb::SkBuff;
use crate::proto::opcode::flags as f;
use crate::proto::packet::{self, Packet};
use crate::proto::psn::Psn;
use crate::proto::rc::sack::{Arrive, CatchUp};
use crate::proto::sel::{self, RX_SPAN};
use kernel::prelude::*;

/// Room for the headers of a data packet whose payload was placed early: BTH, RETH,
/// ImmDt or IETH, XETH and a dummy ICRC.
const PLACED_HDR: usize = 64;

/// The headers of a packet beyond the expected PSN whose payload already went to its
/// destination (the WQE's RETH or receive WQE was known), processed in PSN order later.
pub(super) struct Placed {
    hdr: [u8; PLACED_HDR],
    len: usize,
    payload: u32,
}

/// A packet kept beyond the expected PSN.
pub(super) enum Kept {
    /// The received skb and the bytes it counts against the limits.
    Skb(SkBuff, usize),
    /// Payload placed, headers kept.
    Placed(KBox<Placed>),
}

impl Kept {
    /// Bytes it counts against the reassembly limits.
    pub(super) fn bytes(&self) -> usize {
        match self {
            Kept::Skb(_, n) => *n,
            Kept::Placed(_) => PLACED_HDR,
        }
    }
}

impl Qp {
    /// Frees every kept packet and restarts the receive window at `resp_psn`.
    pub(super) fn drop_kept(&self, st: &mut State) {
        let mut freed = 0;
        for k in st.kept.iter_mut() {
            if let Some(k) = k.take() {
                freed += k.bytes();
            }
        }
        self.dev.reasm_release(freed);
        st.kept_bytes = 0;
        st.keep.restart(st.resp.psn);
    }

    /// Takes the packet kept for `psn`, if any.
    pub(super) fn take_kept(&self, st: &mut State, psn: Psn) -> Option<Kept> {
        let i = (psn.get() % RX_SPAN) as usize;
        let k = st.kept.get_mut(i)?.take()?;
        let n = k.bytes();
        st.kept_bytes = st.kept_bytes.saturating_sub(n);
        self.dev.reasm_release(n);
        Some(k)
    }

    /// Stores a kept packet for `psn` within the limits; `false` if over them.
    pub(super) fn store_kept(&self, st: &mut State, psn: Psn, k: Kept) -> bool {
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
    pub(super) fn place_early(&self, st: &mut State, psn: Psn, pkt: &Packet<'_>) -> bool {
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
        let b = (!self.dev.alloc_fails())
            .then(|| KBox::new(p, GFP_ATOMIC).ok())
            .flatten();
        let Some(b) = b else {
            // The payload is in place already; keeping the skb instead is still right.
            self.dev.stats.nomem.inc();
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
    pub(crate) fn keep(&self, psn: Psn, skb: SkBuff, bytes: usize, alone: bool) {
        let mut st = self.st.lock();
        self.keep_locked(&mut st, psn, skb, bytes);
        if alone {
            self.batch_end(&mut st);
        }
    }

    fn keep_locked(&self, st: &mut State, psn: Psn, skb: SkBuff, bytes: usize) {
        if !st.keep.rxw.is_kept(psn) {
            // The window moved on meanwhile (reset, RQ PSN changed).
            return;
        }
        if !self.store_kept(st, psn, Kept::Skb(skb, bytes)) {
            // Over the limit: forget it; the SACK names it and the requester resends it.
            st.keep.store_failed(psn);
            self.dev.stats.drop_reasm_limit.inc();
            return;
        }
        self.sack_stored(st);
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
    pub(super) fn sack_stored(&self, st: &mut State) {
        if let Some(s) = st.keep.stored() {
            self.send_sack(st, s);
        }
    }

    /// A packet beyond the expected PSN from a selective requester: keep it, and report
    /// the holes it reveals (rate-limited by the window's bookkeeping).
    pub(super) fn ahead(&self, st: &mut State, pkt: &Packet<'_>, probe: bool) -> Option<Psn> {
        let psn = pkt.bth.psn;
        if st.keep.rxw.base() != st.resp.psn {
            self.catch_up(st);
        }
        let retx = pkt.bth.xflags & sel::XF_RETX != 0;
        match st.keep.arrive(psn, probe, retx) {
            Arrive::Keep {
                answer_probe,
                again,
                spurious,
            } => {
                self.dev.stats.ooo_kept.inc();
                if spurious {
                    self.dev.stats.sack_spurious.inc();
                }
                if answer_probe {
                    self.answer_probe(st);
                } else if let Some(s) = again {
                    // A later retransmission overtook the repair of a reported hole.
                    self.dev.stats.sack_again.inc();
                    self.send_sack(st, s);
                }
                if self.place_early(st, psn, pkt) {
                    self.sack_stored(st);
                    return None;
                }
                // (`keep` stores it, or drops it at the reassembly limit.)
                Some(psn)
            }
            Arrive::Duplicate { answer_probe } => {
                self.dev.stats.duplicates.inc();
                if answer_probe {
                    self.answer_probe(st);
                }
                None
            }
            Arrive::Limit => {
                self.dev.stats.drop_reasm_limit.inc();
                None
            }
        }
    }

    /// Moves the receive window up to `resp_psn`, processing every kept packet that
    /// became the expected one.
    pub(super) fn catch_up(&self, st: &mut State) {
        if st.kept.is_empty() {
            return;
        }
        let mut budget = 2 * RX_SPAN;
        while budget > 0 {
            budget -= 1;
            let (release, process) = match st.keep.catch_up(st.resp.psn) {
                CatchUp::Done => return,
                CatchUp::Restart => {
                    self.drop_kept(st);
                    return;
                }
                CatchUp::Step { release, process } => (release, process),
            };
            // Nothing to process there; whatever was kept is freed.
            drop(self.take_kept(st, release));
            if !process {
                continue;
            }
            match self.take_kept(st, st.resp.psn) {
                Some(Kept::Skb(mut skb, _)) => match frame::rc_packet(&mut skb) {
                    Some(pkt) => self.in_order(st, &pkt, None),
                    None => self.dev.stats.drop_malformed.inc(),
                },
                Some(Kept::Placed(p)) => match packet::parse(p.hdr.get(..p.len).unwrap_or(&[])) {
                    Ok(pkt) => self.in_order(st, &pkt, Some(p.payload)),
                    Err(_) => self.dev.stats.drop_malformed.inc(),
                },
                None => {}
            }
        }
    }

    /// A request filled a hole: if the hole was reported and this is the original packet,
    /// not the retransmission, the report came too early: allow for more reordering.
    pub(super) fn hole_filled(&self, st: &mut State, pkt: &Packet<'_>) {
        let retx = pkt.bth.xflags & sel::XF_RETX != 0;
        if st.keep.filled(pkt.bth.psn, retx) {
            self.dev.stats.sack_spurious.inc();
        }
    }

    /// Answers a probe: every hole, or an ACK if there is none.
    pub(super) fn answer_probe(&self, st: &mut State) {
        match st.keep.probe_answer() {
            Some(s) => self.send_sack(st, s),
            None => self.ack_executed(st),
        }
    }

    /// End of a receive batch (the work item's, or one packet the receive softirq
    /// processed at once, under the same hold of `st`): report the holes that outlived
    /// the previous batch (a packet sent from another CPU can overtake a few others; a
    /// lost one stays missing) and send the ACK the batch owes.
    pub(super) fn batch_end(&self, st: &mut State) {
        if st.peer_sel {
            let nothing_kept = st.kept_bytes == 0;
            if let Some(s) = st.keep.batch_end(nothing_kept) {
                self.send_sack(st, s);
            }
        }
        if st.resp.ack_owed() {
            self.ack_executed(st);
        }
    }
}
