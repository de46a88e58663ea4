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
    /// A verified WRITE failed its check and is being placed again: this packet is the
    /// next one of its resend, to place again at its offset.
    Replace,
    /// A verified WRITE is being placed again and this packet cannot go on with it (its
    /// last packet came before the rest of the resend, or a probe asks): report again
    /// where the resend stands (the PSN to resume from, and the attempt reported).
    RepairGap(Psn, u8),
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
    /// An ATOMIC WRITE or FLUSH: answered again without executing it again (a later
    /// request may have written the same bytes since).
    Placement,
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
    /// A verified WRITE that failed its check, being placed again.
    repair: Option<Repair>,
    /// Where the next atomic result goes in the replay table.
    atomic_next: u32,
}

/// Results of the last executed atomics, by PSN, for duplicate requests: the driver's
/// memory ([`REPLAY`] entries, allocated with the QP), kept by [`Responder`].
pub type ReplayTable = [Option<(Psn, u64)>];

/// A verified WRITE whose check failed at its last packet, `last` (the expected PSN,
/// which stays there): the requester sends `[first, last]` again, and the responder
/// places the packets before `last` again in PSN order (`next` is the one it waits for),
/// then executes `last` and checks again. Nothing acknowledged is taken back: every
/// ACK sent before named a PSN before `last`, and those packets are placed again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repair {
    /// The WRITE's first PSN.
    pub first: Psn,
    /// Its last PSN (the expected PSN).
    pub last: Psn,
    /// The next PSN to place again.
    pub next: Psn,
    /// The attempt whose failure was reported last.
    pub reported: u8,
}

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
            repair: None,
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
        if let Some(r) = self.repair {
            let gap = Check::RepairGap(r.next, r.reported);
            if psn == r.next && r.next != r.last {
                return Check::Replace;
            }
            if psn == r.last && r.next != r.last {
                return gap;
            }
            if !psn.before(r.first) && psn.before(r.last) {
                return if probe { gap } else { Check::Drop };
            }
            if probe && psn.after(r.last) {
                return gap;
            }
        }
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

    /// What duplicate request `psn` gets: `read`/`atomic`/`placement` (ATOMIC WRITE,
    /// FLUSH) by its opcode, `probe_sel` if it is a selective requester's probe; `table`:
    /// the atomic results kept.
    pub fn duplicate(
        &self,
        table: &ReplayTable,
        psn: Psn,
        (read, atomic, placement): (bool, bool, bool),
        probe_sel: bool,
    ) -> Dup {
        if read {
            Dup::Read
        } else if atomic {
            Dup::Atomic(replay(table, psn))
        } else if placement {
            Dup::Placement
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

    /// The ATOMIC WRITE or FLUSH at `psn` executed (answered by a zero-length READ
    /// response; duplicates are answered again without executing).
    pub fn placement_executed(&mut self, psn: Psn) {
        self.psn = psn.add(1);
        self.msn = next_msn(self.msn);
    }

    /// The verified WRITE `[first, last]` failed its check (of `attempt`) when its last
    /// packet, at the expected PSN, executed: the expected PSN stays there, the packets
    /// before it are placed again as the requester resends them ([`Check::Replace`]),
    /// then `last` executes again. The report names `first`.
    pub fn verify_failed(&mut self, first: Psn, last: Psn, attempt: u8) {
        self.repair = Some(Repair {
            first,
            last,
            next: first,
            reported: attempt,
        });
    }

    /// The packet the repair waited for was placed again.
    pub fn replaced(&mut self, psn: Psn) {
        if let Some(r) = self.repair.as_mut().filter(|r| r.next == psn) {
            r.next = psn.add(1);
        }
    }

    /// Whether the last packet of a WRITE under repair is an old copy (its `attempt` is
    /// not after the one reported): it is dropped unexecuted, the resend brings the
    /// current one.
    pub fn stale_attempt(&self, attempt: u8) -> bool {
        self.repair
            .is_some_and(|r| (attempt.wrapping_sub(r.reported) as i8) <= 0)
    }

    /// The repair in progress, if any.
    pub fn repair(&self) -> Option<Repair> {
        self.repair
    }

    /// The verified WRITE's check passed (or the QP reset): no repair any more.
    pub fn verify_passed(&mut self) {
        self.repair = None;
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
    fn failed_check_is_repaired_in_place() {
        let mut r = at(10);
        // WRITE 10..12: 10 and 11 executed (and acknowledged), 12 fails the check.
        assert!(!r.executed(Psn::new(10), false, false, false, true));
        assert!(!r.executed(Psn::new(11), false, false, false, true));
        r.verify_failed(Psn::new(10), Psn::new(12), 2);
        // Nothing acknowledged is taken back: the expected PSN stays at the last packet.
        assert_eq!((r.psn, r.ack_psn(true)), (Psn::new(12), Some(Psn::new(11))));
        let gap = |n| Check::RepairGap(Psn::new(n), 2);
        // The last packet before the rest of the resend: report where it stands.
        assert_eq!(r.check(Psn::new(12), true, false), gap(10));
        // Out of order: dropped; a probe anywhere gets the report.
        assert_eq!(r.check(Psn::new(11), true, false), Check::Drop);
        assert_eq!(r.check(Psn::new(11), true, true), gap(10));
        assert_eq!(r.check(Psn::new(20), true, true), gap(10));
        // Later requests are still kept.
        assert_eq!(r.check(Psn::new(20), true, false), Check::Keep);
        // In order: placed again, then the last packet executes.
        assert_eq!(r.check(Psn::new(10), true, false), Check::Replace);
        r.replaced(Psn::new(10));
        r.replaced(Psn::new(10));
        assert_eq!(r.check(Psn::new(11), true, false), Check::Replace);
        r.replaced(Psn::new(11));
        assert_eq!(r.check(Psn::new(12), true, false), Check::Execute);
        // An old copy of the last packet (attempt 2) is stale, the resend's (3) is not.
        assert!(r.stale_attempt(2) && !r.stale_attempt(3));
        assert_eq!(r.repair().map(|x| x.next), Some(Psn::new(12)));
        r.verify_passed();
        assert!(!r.stale_attempt(0));
        assert!(!r.executed(Psn::new(12), true, true, false, true));
        assert_eq!(r.psn, Psn::new(13));
    }

    #[test]
    fn duplicates() {
        let mut r = at(0);
        let t = &mut [None; REPLAY];
        r.atomic_executed(t, Psn::new(0), 77);
        let dup = |r: &Responder, t: &ReplayTable, p: u32, flags: (bool, bool, bool)| {
            r.duplicate(t, Psn::new(p), (flags.0, flags.1, false), flags.2)
        };
        assert_eq!(
            r.duplicate(t, Psn::new(0), (false, false, true), true),
            Dup::Placement
        );
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
