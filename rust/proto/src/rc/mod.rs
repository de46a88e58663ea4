// SPDX-License-Identifier: GPL-2.0
//! The reliable-connected engine, sans I/O: the requester ([`req`]: the send queue's
//! slots, segmentation of a WQE into packets, the PSN window), the completer ([`comp`]:
//! what an ACK, NAK, RNR NAK, READ response, atomic acknowledgement or timeout does to the
//! send queue) and the responder ([`resp`]: PSN check, duplicates, the ACK/NAK/MSN outcome
//! of a request), the SGE walk shared by gather and scatter ([`sge`]), and the rules they
//! share here: opcode sequencing, PSN spans, the acknowledge-request policy, timer
//! encodings, QP states and the retry budget.
//!
//! The machines take events and return decisions; the driver carries them out (memory
//! copies, transmission, timers, counters, completions). The host tests run the same
//! requester and responder against each other over a simulated lossy link.

pub mod comp;
pub mod req;
pub mod resp;
pub mod sack;
pub mod sge;

use super::exthdr::Syndrome;
use super::opcode::op;
use super::psn::Psn;
use super::uapi::wr;

/// The ACK syndrome's credit field when end-to-end credits are not used (IBTA 9.7.5.1.2:
/// "invalid", which every requester takes as "do not limit").
pub const NO_CREDITS: u8 = 0x1f;
/// A positive acknowledgement without end-to-end credits.
pub const ACK: Syndrome = Syndrome::Ack(NO_CREDITS);
/// The default partition key (full member of the default partition), the only one rrxe
/// has.
pub const DEFAULT_PKEY: u16 = 0xffff;
/// Mask of the 24-bit MSN, QPN and PSN fields.
pub const MASK24: u32 = 0x00ff_ffff;

/// QP states (`enum ib_qp_state`; rxe's `qp->attr.qp_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum QpState {
    /// `IB_QPS_RESET`.
    Reset = 0,
    /// `IB_QPS_INIT`.
    Init = 1,
    /// `IB_QPS_RTR`: the responder runs.
    Rtr = 2,
    /// `IB_QPS_RTS`: the requester runs too.
    Rts = 3,
    /// `IB_QPS_SQD`: the requester finishes what it started.
    Sqd = 4,
    /// `IB_QPS_SQE`.
    Sqe = 5,
    /// `IB_QPS_ERR`: everything flushes.
    Err = 6,
}

impl QpState {
    /// The state of an `ib_qp_state` value.
    pub const fn from_ib(v: u32) -> Option<QpState> {
        Some(match v {
            0 => QpState::Reset,
            1 => QpState::Init,
            2 => QpState::Rtr,
            3 => QpState::Rts,
            4 => QpState::Sqd,
            5 => QpState::Sqe,
            6 => QpState::Err,
            _ => return None,
        })
    }

    /// The `ib_qp_state` value.
    pub const fn to_ib(self) -> u32 {
        self as u32
    }

    /// The requester sends (in SQD only what it had started) and takes responses.
    pub const fn sending(self) -> bool {
        matches!(self, QpState::Rts | QpState::Sqd)
    }

    /// The responder takes requests (RTR and later, but not in the error state).
    pub const fn receiving(self) -> bool {
        matches!(
            self,
            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
        )
    }

    /// Connected: an RC peer may still be talking to this QP.
    pub const fn connected(self) -> bool {
        self.receiving()
    }
}

/// A retry budget: the QP's `retry_cnt` (transport retries) or `rnr_retry` (3 bits
/// each). Only for RNR retries does 7 mean "retry forever" (IBTA 9.7.5.2.8): a
/// transport retry count of 7 is seven retries, as hardware counts it, so a peer that
/// is gone fails the WQE with `RETRY_EXC_ERR` (rdma_rxe retries such a QP forever).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retry {
    limit: u8,
    left: u8,
    forever: bool,
}

impl Retry {
    /// The RNR retry count that means "unlimited".
    pub const UNLIMITED: u8 = 7;

    /// A full budget of `limit` (its low three bits) transport retries.
    pub const fn new(limit: u8) -> Self {
        let limit = limit & 7;
        Retry {
            limit,
            left: limit,
            forever: false,
        }
    }

    /// A full budget of `limit` (its low three bits) RNR retries, where
    /// [`Retry::UNLIMITED`] never runs out.
    pub const fn rnr(limit: u8) -> Self {
        let limit = limit & 7;
        Retry {
            limit,
            left: limit,
            forever: limit == Self::UNLIMITED,
        }
    }

    /// A budget that never runs out (models and tests of lossy paths).
    pub const fn unlimited() -> Self {
        Retry {
            limit: Self::UNLIMITED,
            left: Self::UNLIMITED,
            forever: true,
        }
    }

    /// Retries spent since the peer last answered.
    pub const fn spent(&self) -> u8 {
        self.limit.saturating_sub(self.left)
    }

    /// The configured count (for `query_qp`).
    pub const fn limit(&self) -> u8 {
        self.limit
    }

    /// The peer answered: the budget is full again.
    pub fn refill(&mut self) {
        self.left = self.limit;
    }

    /// Spends one retry; `false` when none is left (the WQE fails).
    pub fn spend(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        if !self.forever {
            self.left -= 1;
        }
        true
    }
}

/// The next message sequence number (24 bits, wrapping).
pub const fn next_msn(msn: u32) -> u32 {
    msn.wrapping_add(1) & MASK24
}

/// Pad bytes after a payload of `len` bytes (to a multiple of four).
pub const fn pad(len: u32) -> u8 {
    ((4 - (len % 4)) % 4) as u8
}

/// Most PSNs the requester keeps unacknowledged.
pub const MAX_UNACKED_PSNS: u32 = 128;
/// The requester asks for an ACK at least every this many packets.
pub const MAX_PKT_PER_ACK: u32 = 64;

/// Kind of message a send WQE produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// SEND (with immediate if `imm`, with invalidate if `inv`).
    Send {
        /// Carries immediate data.
        imm: bool,
        /// Carries an invalidate rkey.
        inv: bool,
    },
    /// RDMA WRITE (with immediate if `imm`).
    Write {
        /// Carries immediate data.
        imm: bool,
    },
    /// RDMA READ.
    Read,
    /// Atomic compare-and-swap (`cas`) or fetch-and-add.
    Atomic {
        /// Compare-and-swap (else fetch-and-add).
        cas: bool,
    },
    /// ATOMIC WRITE: 8 bytes written as one (answered like a zero-length READ).
    AtomicWrite,
    /// FLUSH: placement made visible or persistent (answered like a zero-length READ).
    Flush,
}

impl Kind {
    /// The message kind of a work-request opcode, if rrxe's RC requester implements it.
    pub const fn of_wr(opcode: u32) -> Option<Kind> {
        Some(match opcode {
            wr::SEND => Kind::Send {
                imm: false,
                inv: false,
            },
            wr::SEND_WITH_IMM => Kind::Send {
                imm: true,
                inv: false,
            },
            wr::SEND_WITH_INV => Kind::Send {
                imm: false,
                inv: true,
            },
            wr::RDMA_WRITE => Kind::Write { imm: false },
            wr::RDMA_WRITE_WITH_IMM => Kind::Write { imm: true },
            wr::RDMA_READ => Kind::Read,
            wr::ATOMIC_CMP_AND_SWP => Kind::Atomic { cas: true },
            wr::ATOMIC_FETCH_AND_ADD => Kind::Atomic { cas: false },
            wr::ATOMIC_WRITE => Kind::AtomicWrite,
            wr::FLUSH => Kind::Flush,
            _ => return None,
        })
    }
}

/// Whether a work-request opcode waits for a response (READ, atomics, ATOMIC WRITE,
/// FLUSH): it takes an initiator-depth credit and only its response, never an ACK,
/// completes it.
pub const fn needs_response(opcode: u32) -> bool {
    matches!(
        opcode,
        wr::RDMA_READ
            | wr::ATOMIC_CMP_AND_SWP
            | wr::ATOMIC_FETCH_AND_ADD
            | wr::ATOMIC_WRITE
            | wr::FLUSH
    )
}

/// Whether a work-request opcode is answered by one zero-length READ RESPONSE ONLY
/// (ATOMIC WRITE, FLUSH), which alone completes it.
pub const fn placement_op(opcode: u32) -> bool {
    matches!(opcode, wr::ATOMIC_WRITE | wr::FLUSH)
}

/// Result of an atomic operation on `old`: the value to store.
pub const fn atomic_result(cas: bool, old: u64, swap_add: u64, compare: u64) -> u64 {
    if cas {
        if old == compare {
            swap_add
        } else {
            old
        }
    } else {
        old.wrapping_add(swap_add)
    }
}

/// The opcode of the packet carrying bytes `[sent, sent + this)` of a `total`-byte message.
pub const fn opcode(kind: Kind, first: bool, last: bool) -> u8 {
    match kind {
        Kind::Send { imm, inv } => match (first, last) {
            (true, true) if inv => op::RC_SEND_ONLY_INV,
            (true, true) if imm => op::RC_SEND_ONLY_IMM,
            (true, true) => op::RC_SEND_ONLY,
            (true, false) => op::RC_SEND_FIRST,
            (false, false) => op::RC_SEND_MIDDLE,
            (false, true) if inv => op::RC_SEND_LAST_INV,
            (false, true) if imm => op::RC_SEND_LAST_IMM,
            (false, true) => op::RC_SEND_LAST,
        },
        Kind::Write { imm } => match (first, last) {
            (true, true) if imm => op::RC_WRITE_ONLY_IMM,
            (true, true) => op::RC_WRITE_ONLY,
            (true, false) => op::RC_WRITE_FIRST,
            (false, false) => op::RC_WRITE_MIDDLE,
            (false, true) if imm => op::RC_WRITE_LAST_IMM,
            (false, true) => op::RC_WRITE_LAST,
        },
        Kind::Read => op::RC_READ_REQ,
        Kind::Atomic { cas: true } => op::RC_CMP_SWAP,
        Kind::Atomic { cas: false } => op::RC_FETCH_ADD,
        Kind::AtomicWrite => op::RC_ATOMIC_WRITE,
        Kind::Flush => op::RC_FLUSH,
    }
}

/// Packets (and PSNs) a message of `len` bytes needs at path MTU `mtu` (at least one).
pub const fn packets(len: u32, mtu: u32) -> u32 {
    if len == 0 || mtu == 0 {
        1
    } else {
        len.div_ceil(mtu)
    }
}

/// READ response opcode for packet `i` of `n`.
pub const fn read_resp_opcode(i: u32, n: u32) -> u8 {
    if n <= 1 {
        op::RC_READ_RESP_ONLY
    } else if i == 0 {
        op::RC_READ_RESP_FIRST
    } else if i + 1 == n {
        op::RC_READ_RESP_LAST
    } else {
        op::RC_READ_RESP_MIDDLE
    }
}

/// Local ACK timeout for the IB `timeout` attribute: 4.096 µs × 2^t, in µs (0 = none).
pub const fn ack_timeout_us(t: u8) -> u64 {
    if t == 0 || t > 31 {
        0
    } else {
        (4096u64 << t) / 1000
    }
}

/// The transport timer actually run for the IB `timeout` attribute, in µs (0 = none):
/// the Local ACK Timeout ([`ack_timeout_us`]) stretched to `rto_us`, the retransmission
/// timeout measured on the path, and doubled for each of the `spent` timeouts since the
/// peer last answered (as TCP backs off), but never beyond four times the attribute, so
/// the timer stays of the order the QP's owner asked for. A path or peer
/// slower than the attribute assumes (a loaded or instrumented host) then does not time
/// out on every window, each time sending it all again, while a peer that is gone is
/// still given up on within four times the time the attribute names per retry.
pub fn transport_timer_us(t: u8, rto_us: Option<u32>, spent: u8) -> u64 {
    let base = ack_timeout_us(t);
    let backoff = base.checked_shl(u32::from(spent.min(2))).unwrap_or(base);
    let want = rto_us.map_or(0, u64::from).max(backoff);
    want.max(base).min(base.saturating_mul(4))
}

/// Microseconds of an IB RNR timer code (IBTA table 45).
// Indexing: `code & 31` is below 32, the table's length.
#[allow(clippy::indexing_slicing)]
pub const fn rnr_timer_us(code: u8) -> u64 {
    const T: [u32; 32] = [
        655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
        5120, 7680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840,
        245_760, 327_680, 491_520,
    ];
    T[(code & 31) as usize] as u64
}

/// Where a request falls relative to the responder's expected PSN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seq {
    /// The expected PSN: execute it.
    Expected,
    /// Before it: a retransmission of a request already executed.
    Duplicate,
    /// After it: earlier requests are missing.
    Ahead,
}

impl Seq {
    /// Classifies `psn` against the expected PSN (24-bit serial arithmetic).
    pub fn of(expected: Psn, psn: Psn) -> Seq {
        match psn.diff(expected) {
            0 => Seq::Expected,
            d if d < 0 => Seq::Duplicate,
            _ => Seq::Ahead,
        }
    }
}

/// A go-back-N responder's PSN-sequence-error NAKs: one per gap, not one per packet
/// beyond it; again only when the requester's go-back itself lost a packet (a request
/// at or below the highest PSN seen since the NAK arrives out of order again).
#[derive(Clone, Copy, Debug, Default)]
pub struct SeqNak {
    sent: bool,
    high: Psn,
}

impl SeqNak {
    /// No NAK outstanding.
    pub const fn new() -> Self {
        SeqNak {
            sent: false,
            high: Psn::new(0),
        }
    }

    /// A request beyond the expected PSN arrived: whether to NAK now.
    pub fn ahead(&mut self, psn: Psn) -> bool {
        let again = self.sent && !psn.after(self.high);
        let nak = !self.sent || again;
        self.sent = true;
        self.high = psn;
        nak
    }

    /// The expected request arrived (or the expected PSN was reset): the gap is closed.
    pub fn closed(&mut self) {
        self.sent = false;
    }
}

/// A responder's ACK coalescing: requests that ask for an ACK (AckReq) are acknowledged
/// once per receive batch, but no later than every `every` requests so that a long batch
/// never stalls the requester's window; any ACK or NAK sent meanwhile (all are
/// cumulative) settles what is owed.
#[derive(Clone, Copy, Debug)]
pub struct AckCoalesce {
    due: bool,
    since: u32,
    every: u32,
}

impl AckCoalesce {
    /// Acknowledges at least every `every` requests (at least 1).
    pub const fn new(every: u32) -> Self {
        AckCoalesce {
            due: false,
            since: 0,
            every: if every == 0 { 1 } else { every },
        }
    }

    /// A request was executed in order; `ack_req`: it asked for an ACK. `true`: send the
    /// ACK now (else it is owed until [`AckCoalesce::batch_end`]).
    pub fn executed(&mut self, ack_req: bool) -> bool {
        self.since = self.since.saturating_add(1);
        if !ack_req {
            return false;
        }
        if self.since >= self.every {
            true
        } else {
            self.due = true;
            false
        }
    }

    /// An ACK or NAK went out.
    pub fn sent(&mut self) {
        self.due = false;
        self.since = 0;
    }

    /// End of a receive batch: whether an ACK is owed.
    pub const fn batch_end(&self) -> bool {
        self.due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_sequences() {
        let w = Kind::Write { imm: true };
        assert_eq!(opcode(w, true, false), op::RC_WRITE_FIRST);
        assert_eq!(opcode(w, false, false), op::RC_WRITE_MIDDLE);
        assert_eq!(opcode(w, false, true), op::RC_WRITE_LAST_IMM);
        assert_eq!(opcode(w, true, true), op::RC_WRITE_ONLY_IMM);
        let s = Kind::Send {
            imm: false,
            inv: true,
        };
        assert_eq!(opcode(s, true, true), op::RC_SEND_ONLY_INV);
        assert_eq!(opcode(s, false, true), op::RC_SEND_LAST_INV);
        assert_eq!(Kind::of_wr(wr::RDMA_READ), Some(Kind::Read));
        assert_eq!(Kind::of_wr(wr::BIND_MW), None);
        assert_eq!(
            opcode(Kind::of_wr(wr::FLUSH).unwrap(), true, true),
            op::RC_FLUSH
        );
        assert_eq!(
            opcode(Kind::of_wr(wr::ATOMIC_WRITE).unwrap(), true, true),
            op::RC_ATOMIC_WRITE
        );
        assert!(needs_response(wr::FLUSH) && placement_op(wr::ATOMIC_WRITE));
        assert!(!placement_op(wr::RDMA_READ));
    }

    #[test]
    fn sequence_and_naks() {
        let e = Psn::new(0xff_fffe);
        assert_eq!(Seq::of(e, e), Seq::Expected);
        assert_eq!(Seq::of(e, Psn::new(1)), Seq::Ahead);
        assert_eq!(Seq::of(e, Psn::new(0xff_fff0)), Seq::Duplicate);
        let mut n = SeqNak::default();
        assert!(n.ahead(Psn::new(5)));
        assert!(!n.ahead(Psn::new(6)));
        assert!(!n.ahead(Psn::new(7)));
        // The go-back from the NAKed PSN lost a packet too: NAK again.
        assert!(n.ahead(Psn::new(4)));
        n.closed();
        assert!(n.ahead(Psn::new(9)));
    }

    #[test]
    fn ack_coalescing() {
        let mut a = AckCoalesce::new(4);
        assert!(!a.executed(false));
        assert!(!a.executed(true));
        assert!(a.batch_end());
        assert!(!a.executed(false));
        assert!(a.executed(true));
        a.sent();
        assert!(!a.batch_end());
        assert!(!a.executed(true));
        a.sent();
        assert!(!a.batch_end());
        assert!(AckCoalesce::new(0).executed(true));
    }

    #[test]
    fn retry_budget() {
        let mut r = Retry::new(2);
        assert!(r.spend());
        assert!(r.spend());
        assert!(!r.spend());
        r.refill();
        assert!(r.spend());
        let mut u = Retry::rnr(Retry::UNLIMITED);
        for _ in 0..100 {
            assert!(u.spend());
        }
        // Seven transport retries are seven, then the WQE fails.
        let mut t = Retry::new(7);
        for _ in 0..7 {
            assert!(t.spend());
        }
        assert!(!t.spend());
        let mut r = Retry::rnr(6);
        for _ in 0..6 {
            assert!(r.spend());
        }
        assert!(!r.spend());
        assert!(Retry::unlimited().spend());
        let mut b = Retry::new(3);
        assert_eq!(b.spent(), 0);
        assert!(b.spend() && b.spend());
        assert_eq!(b.spent(), 2);
        b.refill();
        assert_eq!(b.spent(), 0);
        assert!(!Retry::new(0).spend());
        assert_eq!(Retry::new(0xff).limit(), 7);
    }

    #[test]
    fn qp_states() {
        for v in 0..7 {
            assert_eq!(QpState::from_ib(v).map(QpState::to_ib), Some(v));
        }
        assert_eq!(QpState::from_ib(7), None);
        assert!(QpState::Sqd.sending() && !QpState::Rtr.sending());
        assert!(QpState::Rtr.receiving() && !QpState::Err.receiving());
        assert!(!QpState::Init.receiving());
        assert_eq!(next_msn(MASK24), 0);
        assert_eq!(pad(5), 3);
        assert_eq!(pad(8), 0);
    }

    #[test]
    fn spans_and_timers() {
        assert_eq!(packets(0, 1024), 1);
        assert_eq!(packets(1024, 1024), 1);
        assert_eq!(packets(1025, 1024), 2);
        assert_eq!(packets(65536, 1024), 64);
        assert_eq!(read_resp_opcode(0, 1), op::RC_READ_RESP_ONLY);
        assert_eq!(read_resp_opcode(0, 3), op::RC_READ_RESP_FIRST);
        assert_eq!(read_resp_opcode(1, 3), op::RC_READ_RESP_MIDDLE);
        assert_eq!(read_resp_opcode(2, 3), op::RC_READ_RESP_LAST);
        assert_eq!(ack_timeout_us(14), 67_108);
        assert_eq!(ack_timeout_us(0), 0);
        // Never shorter than the attribute, never beyond four times it, none if none.
        assert_eq!(transport_timer_us(12, None, 0), 16_777);
        assert_eq!(transport_timer_us(12, Some(100), 0), 16_777);
        assert_eq!(transport_timer_us(12, Some(40_000), 0), 40_000);
        assert_eq!(transport_timer_us(12, Some(u32::MAX), 0), 4 * 16_777);
        assert_eq!(transport_timer_us(0, Some(40_000), 3), 0);
        // Backed off after unanswered timeouts, up to the same bound.
        assert_eq!(transport_timer_us(12, None, 1), 2 * 16_777);
        assert_eq!(transport_timer_us(12, Some(100), 2), 4 * 16_777);
        assert_eq!(transport_timer_us(12, None, 7), 4 * 16_777);
        assert_eq!(transport_timer_us(31, None, 7), 4 * ack_timeout_us(31));
        assert_eq!(rnr_timer_us(1), 10);
        assert_eq!(rnr_timer_us(0), 655_360);
        assert_eq!(rnr_timer_us(25), 61_440);
    }
}
