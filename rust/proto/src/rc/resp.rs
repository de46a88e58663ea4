// SPDX-License-Identifier: GPL-2.0
//! The responder: where a request falls against the expected PSN (rxe's
//! `RESPST_CHK_PSN`), what a duplicate gets (`RESPST_DUPLICATE_REQUEST`), and the
//! outcome of executing a request in order: the expected PSN, the MSN, the coalesced
//! ACK, an RNR or PSN-sequence NAK, and the atomic results kept for replays.
//! Executing (placing a SEND or WRITE, reading a READ's data, the atomic operation) is
//! the driver's; it reports the result here.

use super::super::psn::Psn;
use super::{next_msn, AckCoalesce, Seq, SeqNak, MAX_UNACKED_PSNS};

/// The responder acknowledges once per receive batch, but no later than after this many
/// requests (a quarter of the requester's window, so a long batch never stalls it).
pub const ACK_EVERY: u32 = MAX_UNACKED_PSNS / 4;
/// Atomic results the responder remembers (at least the largest responder depth).
pub const REPLAY: usize = 128;

/// What to do with a request, by its PSN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The expected PSN: execute it.
    Execute,
    /// Beyond the expected PSN, from a selective requester: keep it for later.
    Keep,
    /// Before the expected PSN: a retransmission of a request already executed.
    Duplicate,
    /// Beyond the expected PSN: send a PSN-sequence-error NAK naming the expected PSN.
    NakSeq(Psn),
    /// Beyond the expected PSN while an RNR NAK is outstanding, and a probe: the RNR NAK
    /// may have been lost, send it again for the expected PSN.
    RnrAgain(Psn),
    /// Beyond the expected PSN: drop it silently (its gap was NAKed already, or an RNR
    /// NAK is outstanding).
    Drop,
}

/// What a duplicate request gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dup {
    /// A READ: answered again from memory (READs are idempotent).
    Read,
    /// An atomic: the saved original value, never executed twice (`None`: older than
    /// anything remembered, the requester has long seen the answer).
    Atomic(Option<u64>),
    /// A selective requester's probe: answered with the holes.
    Probe,
    /// Anything else: the ACK of everything executed.
    Ack,
}

/// Responder state of an RC QP (rxe's `qp->resp`).
#[derive(Clone, Copy, Debug)]
pub struct Responder {
    /// The expected PSN.
    pub psn: Psn,
    /// Message sequence number: messages completed.
    pub msn: u32,
    /// Go-back-N PSN-sequence-error NAKs (one per gap).
    nak: SeqNak,
    /// ACKs owed to the requester (one per receive batch).
    acks: AckCoalesce,
    /// The last request executed was a READ or an atomic. A plain ACK then would name
    /// either the PSN of its last response (`psn - 1`), on which rdma_rxe completes a
    /// READ it is still receiving, without the data of the response it lost, or an
    /// earlier PSN, which behind a READ's responses makes rdma_rxe complete that READ
    /// early and move the QP to the error state. So an IBTA requester gets no plain ACK
    /// until a SEND or WRITE is executed: the responses acknowledge everything before
    /// them. (An rrxe requester completes READs and atomics only from their responses.)
    pub read_last: bool,
    /// An RNR NAK is outstanding towards a selective requester: it goes back to that PSN,
    /// so later packets are dropped (as IBTA does), not kept and reported.
    pub rnr_hold: bool,
    /// Where the next atomic result goes in the replay table.
    atomic_next: u32,
}

/// Results of the last executed atomics, by PSN, for duplicate requests: the driver's
/// memory ([`REPLAY`] entries, allocated with the QP), kept by [`Responder`].
pub type ReplayTable = [Option<(Psn, u64)>];

impl Default for Responder {
    fn default() -> Self {
        Self::new()
    }
}

impl Responder {
    /// A responder expecting PSN 0.
    pub const fn new() -> Self {
        Responder {
            psn: Psn::new(0),
            msn: 0,
            nak: SeqNak::new(),
            acks: AckCoalesce::new(ACK_EVERY),
            read_last: false,
            rnr_hold: false,
            atomic_next: 0,
        }
    }

    /// The QP's RQ PSN was set (modify).
    pub fn set_psn(&mut self, psn: Psn) {
        self.psn = psn;
        self.read_last = false;
    }

    /// The QP was reset.
    pub fn reset(&mut self) {
        self.nak.closed();
        self.msn = 0;
    }

    /// Where request `psn` falls. `keep`: the requester negotiated selective
    /// retransmission and this QP keeps packets beyond the expected PSN; `probe`: it is a
    /// tail-loss probe.
    pub fn check(&mut self, psn: Psn, keep: bool, probe: bool) -> Check {
        match Seq::of(self.psn, psn) {
            Seq::Expected => Check::Execute,
            Seq::Duplicate => Check::Duplicate,
            Seq::Ahead if keep && !self.rnr_hold => Check::Keep,
            Seq::Ahead if self.rnr_hold => {
                if probe {
                    Check::RnrAgain(self.psn)
                } else {
                    Check::Drop
                }
            }
            Seq::Ahead => {
                if self.nak.ahead(psn) {
                    Check::NakSeq(self.psn)
                } else {
                    Check::Drop
                }
            }
        }
    }

    /// What duplicate request `psn` gets: `read`/`atomic` by its opcode, `probe_sel` if
    /// it is a selective requester's probe; `table`: the atomic results kept.
    pub fn duplicate(
        &self,
        table: &ReplayTable,
        psn: Psn,
        read: bool,
        atomic: bool,
        probe_sel: bool,
    ) -> Dup {
        if read {
            Dup::Read
        } else if atomic {
            Dup::Atomic(replay(table, psn))
        } else if probe_sel {
            Dup::Probe
        } else {
            Dup::Ack
        }
    }

    /// The expected request is about to execute; `responds`: it is a READ or atomic.
    /// `true`: send the ACK still owed first (the responses carry later PSNs).
    pub fn in_order(&mut self, responds: bool) -> bool {
        self.nak.closed();
        responds && self.acks.batch_end()
    }

    /// Request `psn` executed. `last`: it ended a message; `ack_req`: it asked for an
    /// ACK; `responds`: a READ or atomic (already answered: see [`Self::read_executed`]
    /// and [`Self::atomic_executed`]); `batching`: it is part of a receive batch, whose
    /// end sends the owed ACK. `true`: send the ACK of `psn` now.
    pub fn executed(
        &mut self,
        psn: Psn,
        last: bool,
        ack_req: bool,
        responds: bool,
        batching: bool,
    ) -> bool {
        self.rnr_hold = false;
        self.read_last = responds;
        if responds {
            return false;
        }
        self.psn = psn.add(1);
        if last {
            self.msn = next_msn(self.msn);
        }
        let now = self.acks.executed(ack_req);
        now || (self.acks.batch_end() && !batching)
    }

    /// A request found no receive WQE: an RNR NAK goes out for it. `selective`: the
    /// requester keeps sending beyond it until it hears the NAK; `true`: drop what was
    /// kept beyond the expected PSN and every later packet until the requester comes
    /// back.
    pub fn rnr(&mut self, selective: bool) -> bool {
        if selective {
            self.rnr_hold = true;
        }
        selective
    }

    /// A new READ request is being answered (its responses carry the new MSN).
    pub fn read_accepted(&mut self) {
        self.msn = next_msn(self.msn);
    }

    /// The READ request at `psn` was answered with `n` responses.
    pub fn read_executed(&mut self, psn: Psn, n: u32) {
        self.psn = psn.add(n);
    }

    /// The atomic request at `psn` executed; `orig` is the value it read, kept in
    /// `table` (oldest result replaced).
    pub fn atomic_executed(&mut self, table: &mut ReplayTable, psn: Psn, orig: u64) {
        self.psn = psn.add(1);
        self.msn = next_msn(self.msn);
        let slot = self.atomic_next as usize % table.len().max(1);
        if let Some(e) = table.get_mut(slot) {
            *e = Some((psn, orig));
        }
        self.atomic_next = self.atomic_next.wrapping_add(1);
    }

    /// The PSN a plain ACK of everything executed names, if one may be sent (see
    /// [`Self::read_last`]; `selective`: the requester is an rrxe one). When none may,
    /// what was owed counts as settled.
    pub fn ack_psn(&mut self, selective: bool) -> Option<Psn> {
        if self.read_last && !selective {
            self.acks.sent();
            return None;
        }
        Some(self.psn.sub(1))
    }

    /// An ACK or NAK went out (every one is cumulative up to the expected PSN).
    pub fn sent(&mut self) {
        self.acks.sent();
    }

    /// End of a receive batch: whether an ACK is owed.
    pub fn ack_owed(&self) -> bool {
        self.acks.batch_end()
    }
}

/// The saved result of atomic request `psn` in `table`.
pub fn replay(table: &ReplayTable, psn: Psn) -> Option<u64> {
    table
        .iter()
        .flatten()
        .find(|(p, _)| *p == psn)
        .map(|&(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(psn: u32) -> Responder {
        let mut r = Responder::new();
        r.set_psn(Psn::new(psn));
        r
    }

    #[test]
    fn psn_check() {
        let mut r = at(10);
        assert_eq!(r.check(Psn::new(10), false, false), Check::Execute);
        assert_eq!(r.check(Psn::new(9), false, false), Check::Duplicate);
        // One NAK per gap, then silence; again when the go-back loses a packet too.
        assert_eq!(
            r.check(Psn::new(12), false, false),
            Check::NakSeq(Psn::new(10))
        );
        assert_eq!(r.check(Psn::new(13), false, false), Check::Drop);
        assert_eq!(
            r.check(Psn::new(11), false, false),
            Check::NakSeq(Psn::new(10))
        );
        // Selective: kept instead.
        assert_eq!(r.check(Psn::new(14), true, false), Check::Keep);
        // While an RNR NAK is outstanding: dropped, but a probe gets the NAK again.
        assert!(r.rnr(true));
        assert_eq!(r.check(Psn::new(14), true, false), Check::Drop);
        assert_eq!(
            r.check(Psn::new(14), true, true),
            Check::RnrAgain(Psn::new(10))
        );
        assert!(!r.in_order(false));
        assert!(!r.executed(Psn::new(10), true, false, false, true));
        assert!(!r.rnr_hold);
        assert!(!r.rnr(false) && !r.rnr_hold);
    }

    #[test]
    fn duplicates() {
        let mut r = at(0);
        let t = &mut [None; REPLAY];
        r.atomic_executed(t, Psn::new(0), 77);
        let dup = |r: &Responder, t: &ReplayTable, p: u32, flags: (bool, bool, bool)| {
            r.duplicate(t, Psn::new(p), flags.0, flags.1, flags.2)
        };
        assert_eq!(dup(&r, t, 0, (false, true, false)), Dup::Atomic(Some(77)));
        assert_eq!(dup(&r, t, 5, (false, true, false)), Dup::Atomic(None));
        assert_eq!(dup(&r, t, 0, (true, false, true)), Dup::Read);
        assert_eq!(dup(&r, t, 0, (false, false, true)), Dup::Probe);
        assert_eq!(dup(&r, t, 0, (false, false, false)), Dup::Ack);
        // The replay table keeps the last REPLAY results.
        for k in 1..=REPLAY as u32 {
            r.atomic_executed(t, Psn::new(k), u64::from(k));
        }
        assert_eq!(replay(t, Psn::new(0)), None);
        assert_eq!(replay(t, Psn::new(1)), Some(1));
        assert_eq!(
            (r.psn, r.msn),
            (Psn::new(REPLAY as u32 + 1), REPLAY as u32 + 1)
        );
    }

    #[test]
    fn acks_and_msn() {
        let mut r = at(0);
        // Not asked for: nothing owed. Asked for inside a batch: owed until its end.
        assert!(!r.executed(Psn::new(0), false, false, false, true));
        assert!(!r.ack_owed());
        assert!(!r.executed(Psn::new(1), true, true, false, true));
        assert!(r.ack_owed());
        assert_eq!((r.psn, r.msn), (Psn::new(2), 1));
        assert_eq!(r.ack_psn(false), Some(Psn::new(1)));
        r.sent();
        assert!(!r.ack_owed());
        // Alone (not in a batch): at once.
        assert!(r.executed(Psn::new(2), true, true, false, false));
        r.sent();
        // Every ACK_EVERY requests in a long batch.
        let mut now = 0;
        for k in 0..2 * ACK_EVERY {
            if r.executed(Psn::new(3 + k), true, true, false, true) {
                now += 1;
                r.sent();
            }
        }
        assert_eq!(now, 2);
        // An owed ACK goes out before a READ's responses.
        r.sent();
        assert!(!r.executed(Psn::new(100), false, true, false, true));
        assert!(r.in_order(true));
        r.sent();
        r.read_accepted();
        r.read_executed(Psn::new(101), 4);
        assert!(!r.executed(Psn::new(101), true, true, true, true));
        assert_eq!(r.psn, Psn::new(105));
        // After a READ, an IBTA requester gets no plain ACK; an rrxe one does.
        assert_eq!(r.ack_psn(false), None);
        assert_eq!(r.ack_psn(true), Some(Psn::new(104)));
        r.set_psn(Psn::new(7));
        assert_eq!(r.ack_psn(false), Some(Psn::new(6)));
        r.reset();
        assert_eq!(r.msn, 0);
    }
}
