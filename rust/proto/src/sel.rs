// SPDX-License-Identifier: GPL-2.0
//! Selective retransmission (source document 000): rrxe's extended transport header
//! (XETH), the selective NACK (SACK), the capability handshake bits, and the PSN
//! bookkeeping the receiver keeps to accept packets beyond the expected PSN.
//!
//! Wire summary (byte diagrams in Documentation/rrxe/wire.rst):
//!
//! * BTH byte 4, reserved bit [`CAP_SELECTIVE`]: "I can receive XETH and send SACKs". A
//!   requester sets it on its requests until the peer answers with the same bit; an IBTA
//!   peer ignores it (the ICRC masks that byte) and never sets it, so rrxe keeps plain
//!   go-back-N towards it.
//! * BTH byte 8, reserved bit [`XF_EXT`]: an rrxe header follows the IBTA headers: the
//!   12-byte [`Xeth`] on packets with payload, the 20-byte [`Sack`] on an ACK.
//!   [`XF_PROBE`] marks a tail-loss probe, which the receiver answers with a full SACK.
//! * BTH byte 8, reserved bit [`XF_SOLO`]: a hint, not a header: the packet belongs to
//!   a message of at most [`SOLO_MAX`] bytes that the sending application awaits.

use super::bth::HdrError;
use super::psn::Psn;
use super::wire::{be24, be32, be8, get, put, put24};

/// BTH byte 4 capability bit: selective retransmission offered (requests) or accepted
/// (responses).
pub const CAP_SELECTIVE: u8 = 0x01;
/// BTH byte 8 flag: an rrxe extension header follows the IBTA extension headers.
pub const XF_EXT: u8 = 0x01;
/// BTH byte 8 flag: tail-loss probe (answer with every hole you know of).
pub const XF_PROBE: u8 = 0x02;
/// BTH byte 8 flag: a retransmission (a hole filled by a packet without it was reported
/// too early: the path reorders more than the receiver allowed for).
pub const XF_RETX: u8 = 0x04;
/// BTH byte 8 flag: the packet belongs to a message of at most [`SOLO_MAX`] bytes that
/// the sending application awaits, alone on its send queue or answering the peer
/// ([`SoloHint`] says when; a READ's responses echo their request's flag). Nothing
/// queued behind the message, nothing gained by handing its packets to another CPU: the
/// receiver may process them in its receive softirq at once instead of waking the QP's
/// work item. Only set towards a peer that accepted selective retransmission; a receiver
/// is free to ignore it.
pub const XF_SOLO: u8 = 0x40;
/// Largest message whose packets carry [`XF_SOLO`].
pub const SOLO_MAX: u32 = 16384;
/// Length of the XETH.
pub const XETH_LEN: usize = 12;
/// Length of the SACK header.
pub const SACK_LEN: usize = 20;
/// PSNs one SACK can name (its bitmap).
pub const SACK_SPAN: u32 = 128;
/// A hole is reported once this many later PSNs arrived (reordering tolerance).
pub const REORDER: u32 = 3;

/// Every this many consecutive WQEs posted by an application that waits, one goes out
/// without [`XF_SOLO`] (see [`SoloHint`]).
pub const SOLO_PROBE: u32 = 16;

/// WQEs in flight from which a send queue counts as a stream's for good (see
/// [`SoloHint`]).
pub const SOLO_STREAM_DEPTH: u32 = 3;

/// The requester's choice of [`XF_SOLO`], once per WQE.
///
/// A WQE is *awaited* when nothing was posted behind it and either a message from the
/// peer arrived since the previous WQE started (a ping-pong: the application waited for
/// the peer's answer; the previous WQE's ACK may still be on its way), or it is alone on
/// the queue and signaled (the application waited for the previous WQE's completion and
/// asks for this one's) on a queue that never had [`SOLO_STREAM_DEPTH`] WQEs in flight.
///
/// The last condition is there because a stream's messages, processed at once by the
/// receiver, complete inside the post that sent them (on one host the receive softirq
/// runs in the sender's system call): an application that would keep 16 WQEs in flight
/// never gets to post the next one before the previous one completed, every WQE looks
/// alone, and the whole stream runs on one CPU. A queue that once held three WQEs
/// belongs to such an application (a WRITE and its READ posted together make two).
/// Likewise the first awaited WQE after one that was not, and every [`SOLO_PROBE`]th
/// after it, goes out without the flag: its packets take the receiver's work item, the
/// post returns before the WQE completes, and an application with more to send posts it
/// meanwhile. An application that waits for each message gets the flag on 15 of every
/// 16.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SoloHint {
    /// Consecutive awaited WQEs, counted 1 to [`SOLO_PROBE`] and round again; 0 after one
    /// that was not.
    run: u32,
    /// The queue once had [`SOLO_STREAM_DEPTH`] WQEs in flight.
    stream: bool,
}

impl SoloHint {
    /// No WQE seen yet.
    pub const fn new() -> Self {
        SoloHint {
            run: 0,
            stream: false,
        }
    }

    /// A WQE of `len` bytes starts: whether its packets carry [`XF_SOLO`]. `depth`: WQEs
    /// posted and not completed, itself and any behind it included; `behind`: a WQE was
    /// posted after it; `oldest`: every WQE before it completed and it is signaled;
    /// `pinged`: a message from the peer arrived since the previous WQE started.
    pub fn start(
        &mut self,
        depth: u32,
        behind: bool,
        oldest: bool,
        pinged: bool,
        len: u32,
    ) -> bool {
        self.stream |= depth >= SOLO_STREAM_DEPTH;
        if behind || !(pinged || oldest && !self.stream) {
            self.run = 0;
            return false;
        }
        self.run = if self.run >= SOLO_PROBE {
            1
        } else {
            self.run + 1
        };
        self.run != 1 && len <= SOLO_MAX
    }
}

/// Extended transport header: where a packet belongs inside its WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Xeth {
    /// WQE sequence number (per QP and direction, +1 per WQE).
    pub wqe_seq: u32,
    /// Byte offset of this packet's payload inside the WQE's message.
    pub offset: u32,
    /// Length of the whole message.
    pub total: u32,
}

impl Xeth {
    /// Decodes an XETH.
    pub fn decode(b: &[u8]) -> Result<Self, HdrError> {
        let t = HdrError::Truncated;
        Ok(Xeth {
            wqe_seq: be32(b, 0).ok_or(t)?,
            offset: be32(b, 4).ok_or(t)?,
            total: be32(b, 8).ok_or(t)?,
        })
    }

    /// Encodes an XETH.
    pub fn encode(&self, b: &mut [u8]) -> Result<(), HdrError> {
        let ok = put(b, 0, &self.wqe_seq.to_be_bytes())
            && put(b, 4, &self.offset.to_be_bytes())
            && put(b, 8, &self.total.to_be_bytes());
        if ok && b.len() >= XETH_LEN {
            Ok(())
        } else {
            Err(HdrError::Truncated)
        }
    }

    /// Whether the header is consistent with a payload of `len` bytes: the packet lies
    /// inside the message.
    pub const fn fits(&self, len: u32) -> bool {
        match self.offset.checked_add(len) {
            Some(end) => end <= self.total,
            None => false,
        }
    }
}

/// Selective NACK: the PSNs the receiver misses, as a base and a bitmap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Sack {
    /// First PSN the bitmap describes (always a missing one).
    pub base: Psn,
    /// Answer to a probe: every hole the receiver knows of up to `SACK_SPAN`, not only
    /// the new ones.
    pub full: bool,
    /// Bit `i` set: PSN `base + i` is missing.
    pub missing: u128,
}

impl Sack {
    /// Decodes a SACK header.
    pub fn decode(b: &[u8]) -> Result<Self, HdrError> {
        let t = HdrError::Truncated;
        let flags = be8(b, 0).ok_or(t)?;
        let bits: [u8; 16] = get(b, 4).ok_or(t)?;
        Ok(Sack {
            base: Psn::new(be24(b, 1).ok_or(t)?),
            full: flags & 1 != 0,
            missing: u128::from_be_bytes(bits),
        })
    }

    /// Encodes a SACK header.
    pub fn encode(&self, b: &mut [u8]) -> Result<(), HdrError> {
        let ok = put(b, 0, &[u8::from(self.full)])
            && put24(b, 1, self.base.get())
            && put(b, 4, &self.missing.to_be_bytes());
        if ok && b.len() >= SACK_LEN {
            Ok(())
        } else {
            Err(HdrError::Truncated)
        }
    }

    /// The missing PSNs, ascending.
    pub fn iter(&self) -> impl Iterator<Item = Psn> + '_ {
        let base = self.base;
        let m = self.missing;
        (0..SACK_SPAN)
            .filter(move |i| (m >> i) & 1 != 0)
            .map(move |i| base.add(i))
    }

    /// How many PSNs it names.
    pub const fn count(&self) -> u32 {
        self.missing.count_ones()
    }
}

/// A bitmap over `64 * W` consecutive PSNs starting at `base`.
///
/// The bits form a ring indexed by the PSN itself (`psn % SPAN`), so moving the start
/// clears only the words the start passes instead of shifting the whole map: a READ
/// requester advances it once per response. `W` must be a power of two (the PSN space,
/// 2^24, is then a multiple of the span; checked at compile time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PsnBits<const W: usize> {
    base: Psn,
    words: [u64; W],
}

impl<const W: usize> PsnBits<W> {
    /// PSNs covered.
    pub const SPAN: u32 = 64 * W as u32;
    const RING_OK: () = assert!(W.is_power_of_two() && W <= 1 << 18);

    /// An empty bitmap starting at `base`.
    pub const fn new(base: Psn) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::RING_OK;
        PsnBits {
            base,
            words: [0; W],
        }
    }

    /// First PSN covered.
    pub const fn base(&self) -> Psn {
        self.base
    }

    /// Whether `p` is covered.
    pub fn covers(&self, p: Psn) -> bool {
        let d = p.diff(self.base);
        d >= 0 && (d as u32) < Self::SPAN
    }

    /// Ring position of `p`: word index and bit.
    const fn slot(p: Psn) -> (usize, u32) {
        let pos = p.get() % Self::SPAN;
        ((pos / 64) as usize, pos % 64)
    }

    /// Sets the bit of `p`: `Some(true)` if it was clear, `None` if `p` is not covered.
    pub fn set(&mut self, p: Psn) -> Option<bool> {
        if !self.covers(p) {
            return None;
        }
        let (i, b) = Self::slot(p);
        let w = self.words.get_mut(i)?;
        let m = 1u64 << b;
        let new = *w & m == 0;
        *w |= m;
        Some(new)
    }

    /// Clears the bit of `p` (if covered).
    pub fn clear(&mut self, p: Psn) {
        if self.covers(p) {
            let (i, b) = Self::slot(p);
            if let Some(w) = self.words.get_mut(i) {
                *w &= !(1u64 << b);
            }
        }
    }

    /// Whether the bit of `p` is set (`false` if not covered).
    pub fn get(&self, p: Psn) -> bool {
        if !self.covers(p) {
            return false;
        }
        let (i, b) = Self::slot(p);
        self.words.get(i).is_some_and(|w| (w >> b) & 1 != 0)
    }

    /// Bits `[b, b + n)` of a word (`b + n <= 64`, `n >= 1`).
    const fn mask(b: u32, n: u32) -> u64 {
        (u64::MAX >> (64 - n)) << b
    }

    /// The chunk of PSNs from `p` that shares `p`'s word, at most `left` long (>= 1).
    const fn chunk(p: Psn, left: u32) -> (usize, u32, u32) {
        let (i, b) = Self::slot(p);
        let room = 64 - b;
        (i, b, if left < room { left } else { room })
    }

    /// Moves the start to `p` (forward only), dropping the bits before it.
    pub fn advance_to(&mut self, p: Psn) {
        let d = p.diff(self.base);
        if d <= 0 {
            return;
        }
        let n = d as u32;
        if n >= Self::SPAN {
            self.words = [0; W];
            self.base = p;
            return;
        }
        // The PSNs passed leave the map; their ring slots become those of the PSNs
        // entering at the top, which must read as clear.
        let mut q = self.base;
        let mut left = n;
        while left > 0 {
            let (i, b, k) = Self::chunk(q, left);
            if let Some(w) = self.words.get_mut(i) {
                *w &= !Self::mask(b, k);
            }
            q = q.add(k);
            left -= k;
        }
        self.base = p;
    }

    /// The bits of the chunk `(i, b, k)` starting at `q`, which [`PsnBits::find`] keeps
    /// either wholly covered or wholly uncovered (uncovered PSNs read as clear, as in
    /// [`PsnBits::get`]).
    fn chunk_bits(&self, q: Psn, i: usize, b: u32, k: u32) -> u64 {
        if !self.covers(q) {
            return 0;
        }
        self.words.get(i).copied().unwrap_or(0) & Self::mask(b, k)
    }

    /// The first PSN in `[from, to)` whose bit is set in `pick(self, other)`, where
    /// `pick` combines a word of each map (a PSN a map does not cover reads as clear
    /// in it; a bit `pick` sets for it counts). Scans a word at a time.
    pub fn find(
        &self,
        other: &Self,
        from: Psn,
        to: Psn,
        pick: impl Fn(u64, u64) -> u64,
    ) -> Option<Psn> {
        let mut q = from;
        while q.before(to) {
            let left = to.diff(q) as u32;
            // Keep chunks inside one coverage state of both maps: split at their ends.
            let mut lim = left;
            for m in [self.base, other.base] {
                let d = q.diff(m);
                let edge = if d < 0 {
                    (-d) as u32
                } else if (d as u32) < Self::SPAN {
                    Self::SPAN - d as u32
                } else {
                    left
                };
                if edge < lim {
                    lim = edge;
                }
            }
            let (i, b, k) = Self::chunk(q, lim);
            let m =
                pick(self.chunk_bits(q, i, b, k), other.chunk_bits(q, i, b, k)) & Self::mask(b, k);
            if m != 0 {
                return Some(q.add(m.trailing_zeros() - b));
            }
            q = q.add(k);
        }
        None
    }

    /// Bitmap of the clear bits among the `SACK_SPAN` PSNs from `from`, limited to PSNs
    /// before `end` (bit `i` = PSN `from + i`).
    pub fn clear_bits(&self, from: Psn, end: Psn) -> u128 {
        let mut m = 0u128;
        let mut p = from;
        let mut i = 0;
        while i < SACK_SPAN && p.before(end) {
            if !self.get(p) {
                m |= 1u128 << i;
            }
            p = p.add(1);
            i += 1;
        }
        m
    }

    /// Whether any bit is set.
    pub fn any(&self) -> bool {
        self.words.iter().any(|w| *w != 0)
    }
}

/// How many later packets a hole must wait for before it is reported: the path's
/// reordering as observed so far. Starts at [`REORDER`], doubles (up to `max`) when a
/// reported hole is then filled by the original packet, and drops by one after `decay`
/// holes were confirmed lost (filled by the retransmission), as TCP's reordering
/// estimate does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reordering {
    n: u32,
    confirmed: u32,
    max: u32,
    decay: u32,
}

impl Reordering {
    /// A fresh estimate bounded by `max` (at least [`REORDER`]), lowered after `decay`
    /// confirmations.
    pub const fn new(max: u32, decay: u32) -> Self {
        Reordering {
            n: REORDER,
            confirmed: 0,
            max: if max < REORDER { REORDER } else { max },
            decay,
        }
    }

    /// The current threshold, in packets.
    pub const fn get(&self) -> u32 {
        self.n
    }

    /// A reported hole was filled: by a retransmission (`retx`, the report was right) or
    /// by the original packet (it was only late).
    pub fn filled(&mut self, retx: bool) {
        if retx {
            // Counted only while there is a step to drop: at the floor, every hole a
            // retransmission fills for the life of the QP would add one (and at 2^32
            // overflow, a panic in the kernel).
            if self.n > REORDER {
                self.confirmed = self.confirmed.saturating_add(1);
                if self.confirmed >= self.decay {
                    self.n -= 1;
                    self.confirmed = 0;
                }
            }
        } else {
            self.n = self.n.saturating_mul(2).min(self.max);
            self.confirmed = 0;
        }
    }
}

/// The requester's round-trip samples and the tail-loss probe delay drawn from them:
/// twice the smallest recent round trip, within fixed bounds, doubled for each probe
/// that went unanswered.
///
/// The probe timer measures silence (no response, nothing sent), not the age of a
/// request, so the queue of a full window, which lengthens every round trip, does not
/// lengthen the silences of a flow without loss: responses keep arriving meanwhile. The
/// longest such silence is about one round trip through an empty path, which the
/// smallest recent sample approximates (RFC 8985 sizes its reordering window from the
/// minimum round trip too; its probe timeout is twice the smoothed one, which measured
/// 1-2.6 ms here, larger under loss when probes matter most).
///
/// One packet at a time is timed: the last of a batch of new requests, until a response
/// covering it arrives. As Karn's algorithm requires, a retransmission that can delay
/// that response (a repair a SACK asked for) cancels the timing, and responses to
/// retransmissions end none. A tail-loss probe does not cancel it: whether the response
/// answers the original or the probe, it comes at least one round trip after the
/// original was sent, so the sample can only be too long, which the minimum discards;
/// cancelling would leave a path slower than the initial delay, where every silence
/// ends in a probe, unmeasured for ever. Times are nanoseconds of a monotonic clock,
/// given by the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeDelay {
    /// Smallest sample (µs) of the current window of samples ([`u32::MAX`]: none yet).
    min_now: u32,
    /// The same for the window before it.
    min_prev: u32,
    /// Samples in the current window.
    samples: u32,
    /// The timed PSN and when it was sent.
    timed: Option<(Psn, u64)>,
    /// The first PSN never sent: PSNs sent again after a rewind are not timed.
    next: Option<Psn>,
    /// Smoothed round trip × 8, in µs (RFC 6298's SRTT with α = 1/8; 0: no sample yet).
    srtt8: u32,
    /// Round-trip variation × 4, in µs (RFC 6298's RTTVAR with β = 1/4).
    rttvar4: u32,
}

/// Samples per window of the minimum: the minimum covers the last 64 to 128 samples, so
/// a path that became slower is followed.
const MIN_RTT_WINDOW: u32 = 64;

impl ProbeDelay {
    /// No sample yet: [`ProbeDelay::delay_us`] gives its upper bound.
    pub const fn new() -> Self {
        ProbeDelay {
            min_now: u32::MAX,
            min_prev: u32::MAX,
            samples: 0,
            timed: None,
            next: None,
            srtt8: 0,
            rttvar4: 0,
        }
    }

    /// New requests up to `last` were sent: times `last` unless a packet is being timed
    /// already or `last` was sent before (a rewind). `now_ns` reads the clock, only when
    /// a timing starts (about once per round trip, not once per batch).
    pub fn sent(&mut self, last: Psn, now_ns: impl FnOnce() -> u64) {
        let fresh = self.next.is_none_or(|n| !last.before(n));
        if fresh {
            self.next = Some(last.add(1));
            if self.timed.is_none() {
                self.timed = Some((last, now_ns()));
            }
        }
    }

    /// A packet was sent again before the timed one's response: that response may now be
    /// late for that reason (a cumulative ACK waits for the repair).
    pub fn cancel(&mut self) {
        self.timed = None;
    }

    /// PSNs `from` up to (not including) `to` were asked for again, each answered on its
    /// own (READ responses): only the timed packet's own repair cancels the timing.
    pub fn resent(&mut self, from: Psn, to: Psn) {
        if self
            .timed
            .is_some_and(|(t, _)| !t.before(from) && t.before(to))
        {
            self.timed = None;
        }
    }

    /// Whether a response covering `psn` (an ACK of everything up to it, or the READ
    /// response with that PSN, not sent again) ends the timing.
    pub fn covers(&self, psn: Psn) -> bool {
        self.timed.is_some_and(|(t, _)| !psn.before(t))
    }

    /// The response [`ProbeDelay::covers`] named arrived at `now_ns`.
    pub fn sample(&mut self, now_ns: u64) {
        let Some((_, t0)) = self.timed.take() else {
            return;
        };
        let us = u32::try_from(now_ns.saturating_sub(t0) / 1000).unwrap_or(u32::MAX - 1);
        self.smooth(us.max(1));
        self.min_now = self.min_now.min(us);
        self.samples += 1;
        if self.samples >= MIN_RTT_WINDOW {
            self.min_prev = self.min_now;
            self.min_now = u32::MAX;
            self.samples = 0;
        }
    }

    /// RFC 6298's estimator in integers: the first sample sets SRTT and RTTVAR = SRTT/2,
    /// each later one moves SRTT by 1/8 and RTTVAR by 1/4 of the difference.
    fn smooth(&mut self, us: u32) {
        if self.srtt8 == 0 {
            self.srtt8 = us.saturating_mul(8);
            self.rttvar4 = us.saturating_mul(2);
            return;
        }
        let srtt = self.srtt8 / 8;
        let err = us.abs_diff(srtt);
        self.srtt8 = (self.srtt8 - srtt).saturating_add(us);
        self.rttvar4 = (self.rttvar4 - self.rttvar4 / 4).saturating_add(err);
    }

    /// The retransmission timeout RFC 6298 derives from the samples, SRTT + 4 × RTTVAR,
    /// but at least twice SRTT, in µs (`None` before the first sample): a round trip the
    /// path rarely exceeds, queues and a slow peer included, where
    /// [`ProbeDelay::min_rtt_us`] is the fastest one. (The variation of a steady path
    /// decays to nearly nothing, and a timer right at the mean expires on every slower
    /// round trip; TCP keeps a 200 ms floor for that, far too long here.)
    pub fn rto_us(&self) -> Option<u32> {
        if self.srtt8 == 0 {
            None
        } else {
            let srtt = self.srtt8 / 8;
            Some(
                srtt.saturating_add(self.rttvar4)
                    .max(srtt.saturating_mul(2)),
            )
        }
    }

    /// How long a full SACK leaves a resent PSN alone ([`super::rc::sack::SackTx`]'s
    /// period), in µs: half the retransmission timeout, so at least the smoothed round
    /// trip; `initial_us` before the first sample.
    pub fn sack_hold_us(&self, initial_us: u32) -> u32 {
        self.rto_us().map_or(initial_us, |r| r / 2)
    }

    /// The smallest round trip of the last 64 to 128 samples, in microseconds (`None`
    /// before the first).
    pub fn min_rtt_us(&self) -> Option<u32> {
        let m = self.min_now.min(self.min_prev);
        if m == u32::MAX {
            None
        } else {
            Some(m)
        }
    }

    /// The probe delay: twice the smallest recent round trip, at least `min_us` and at
    /// most `max_us`; `initial_us` before the first sample.
    pub fn delay_us(&self, min_us: u32, initial_us: u32, max_us: u32) -> u32 {
        match self.min_rtt_us() {
            None => initial_us,
            Some(r) => r.saturating_mul(2).max(min_us).min(max_us.max(min_us)),
        }
    }

    /// The delay before the next probe when `probes` were sent since the last response:
    /// [`ProbeDelay::delay_us`] doubled for each, at most [`PROBE_BACKOFF`] times. A
    /// silence that outlasts one probe is a peer or path slower than the delay assumed,
    /// or a peer gone: probing it at the same pace would only add load (each probe is a
    /// packet and its answer).
    pub fn backoff_us(&self, min_us: u32, initial_us: u32, max_us: u32, probes: u32) -> u32 {
        let d = u64::from(self.delay_us(min_us, initial_us, max_us));
        u32::try_from(d << probes.min(PROBE_BACKOFF)).unwrap_or(u32::MAX)
    }
}

/// Doublings of the probe delay in one silence (see [`ProbeDelay::backoff_us`]).
pub const PROBE_BACKOFF: u32 = 6;

impl Default for ProbeDelay {
    fn default() -> Self {
        Self::new()
    }
}

/// A packet waiting in a QP's receive queue: which engine it goes to (a response or ACK
/// to the requester, a request to the responder) and its PSN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxKey {
    /// A response or acknowledgement (else a request).
    pub resp: bool,
    /// The packet's PSN.
    pub psn: Psn,
}

/// Where a selective retransmission `key` joins a receive queue holding `queued`, whose
/// first `urgent` entries are retransmissions placed there before it.
///
/// A retransmission repairs the hole the packets behind it wait for, so it goes ahead of
/// them, but after the retransmissions already placed (their order is kept) and after
/// every packet of its own direction with an earlier PSN. Ahead of such a packet it would
/// show the receiver a hole that is not there: the packet is only waiting its turn, and a
/// SACK for it would make the peer resend it, and those resent packets would in turn
/// jump ahead of others still waiting.
pub fn retx_slot(queued: impl Iterator<Item = RxKey>, urgent: usize, key: RxKey) -> usize {
    let (mut at, mut len) = (0, 0);
    for (i, q) in queued.enumerate() {
        len = i + 1;
        if i >= urgent && q.resp == key.resp && q.psn.before(key.psn) {
            at = i + 1;
        }
    }
    at.max(urgent.min(len))
}

/// Where an arriving PSN falls relative to the receiver's window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The expected PSN: process it now.
    Expected,
    /// Beyond the expected PSN, inside the window, first copy: keep it.
    Ahead,
    /// Already processed, or already kept.
    Duplicate,
    /// Too far ahead to keep: drop it (the sender recovers it).
    Beyond,
}

/// PSNs a receiver keeps ahead of the expected one.
pub const RX_SPAN: u32 = PsnBits::<8>::SPAN;

/// The receiver's view of the PSN space: the expected PSN, which later PSNs it keeps,
/// and which holes it already reported.
#[derive(Clone, Copy, Debug)]
pub struct RxWindow {
    bits: PsnBits<8>,
    /// Highest PSN received (`base - 1` when nothing is kept).
    high: Psn,
    /// Holes before this PSN were reported in a SACK.
    reported: Psn,
    /// Holes before this PSN were reported again (see [`RxWindow::lost_again`]).
    again: Psn,
}

impl RxWindow {
    /// A window expecting `base`.
    pub const fn new(base: Psn) -> Self {
        RxWindow {
            bits: PsnBits::new(base),
            high: base.sub(1),
            reported: base,
            again: base,
        }
    }

    /// The expected PSN.
    pub const fn base(&self) -> Psn {
        self.bits.base()
    }

    /// Highest PSN received.
    pub const fn high(&self) -> Psn {
        self.high
    }

    /// Whether packets are kept beyond the expected PSN (there is a hole at `base`).
    pub fn has_holes(&self) -> bool {
        self.high.after(self.base()) || self.bits.any()
    }

    /// Holes before this PSN were reported.
    pub const fn reported(&self) -> Psn {
        self.reported
    }

    /// Whether `psn` is recorded as kept.
    pub fn is_kept(&self, psn: Psn) -> bool {
        self.bits.get(psn)
    }

    /// Forgets a kept PSN (its packet could not be stored): it is a hole again, and
    /// reported again.
    pub fn forget(&mut self, psn: Psn) {
        self.bits.clear(psn);
        if psn.before(self.reported) {
            self.reported = psn;
        }
    }

    /// Classifies an arriving PSN and records it if it is kept.
    pub fn arrive(&mut self, psn: Psn) -> Arrival {
        let d = psn.diff(self.base());
        if d == 0 {
            return Arrival::Expected;
        }
        if d < 0 {
            return Arrival::Duplicate;
        }
        match self.bits.set(psn) {
            None => Arrival::Beyond,
            Some(false) => Arrival::Duplicate,
            Some(true) => {
                if psn.after(self.high) {
                    self.high = psn;
                }
                Arrival::Ahead
            }
        }
    }

    /// The expected PSN was processed: expect the next one. Returns `true` if that one
    /// is already kept (process it next, then call `advance` again).
    pub fn advance(&mut self) -> bool {
        let next = self.base().add(1);
        self.bits.advance_to(next);
        if self.high.before(next) {
            self.high = next.sub(1);
        }
        if self.reported.before(next) {
            self.reported = next;
        }
        if self.again.before(next) {
            self.again = next;
        }
        let kept = self.bits.get(next);
        self.bits.clear(next);
        kept
    }

    /// The SACK to send now, if any. `full` (answer to a probe): every hole up to the
    /// highest PSN received. Otherwise only holes not reported before and followed by at
    /// least [`REORDER`] later arrivals (a mere reordering fills itself).
    pub fn sack(&mut self, full: bool) -> Option<Sack> {
        self.sack_settled(full, self.high.add(1))
    }

    /// A retransmission of `psn` arrived (not a probe). The sender resends the PSNs of a
    /// SACK in ascending order, after those of earlier SACKs, so a hole before `psn` that
    /// was reported and is still missing lost its retransmission as well (or the SACK
    /// naming it was lost). Returns an incremental SACK naming those holes, each at most
    /// once this way; without it their repair waits for the sender's tail-loss probe.
    /// (Reordering on the link can make such a report spurious: the sender then sends a
    /// duplicate, which the receiver drops.)
    pub fn lost_again(&mut self, psn: Psn) -> Option<Sack> {
        let start = self.again.later(self.base());
        let end = psn.earlier(self.reported);
        if !start.before(end) {
            return None;
        }
        let m = self.bits.clear_bits(start, end);
        let first = m.trailing_zeros();
        self.again = start.add(SACK_SPAN).earlier(end);
        if first >= SACK_SPAN {
            return None;
        }
        Some(Sack {
            base: start.add(first),
            full: false,
            missing: m >> first,
        })
    }

    /// As [`RxWindow::sack`], but an incremental SACK only names holes before `settled`:
    /// PSNs that had arrived by an earlier moment (the end of the previous receive
    /// batch), so packets that are merely late within a batch are not reported.
    pub fn sack_settled(&mut self, full: bool, settled: Psn) -> Option<Sack> {
        let (start, end) = if full {
            (self.base(), self.high)
        } else {
            let lim = self.high.sub(REORDER - 1).earlier(settled);
            let start = self.reported.later(self.base());
            (start, lim)
        };
        if !start.before(end) {
            return None;
        }
        let m = self.bits.clear_bits(start, end);
        // The base of a SACK is its first hole.
        let first = m.trailing_zeros();
        if first >= SACK_SPAN {
            if !full {
                self.reported = start.add(SACK_SPAN).earlier(end);
            }
            return None;
        }
        let base = start.add(first);
        let missing = m >> first;
        if !full {
            // Everything up to the last PSN this SACK describes is now reported.
            let covered = start.add(SACK_SPAN).earlier(end);
            self.reported = covered;
        }
        Some(Sack {
            base,
            full,
            missing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn xeth_bytes() {
        let x = Xeth {
            wqe_seq: 0x0102_0304,
            offset: 4096,
            total: 65536,
        };
        let mut b = [0u8; XETH_LEN];
        x.encode(&mut b).unwrap();
        assert_eq!(b, [1, 2, 3, 4, 0, 0, 0x10, 0, 0, 1, 0, 0]);
        assert_eq!(Xeth::decode(&b).unwrap(), x);
        for n in 0..XETH_LEN {
            assert!(Xeth::decode(&b[..n]).is_err());
            assert!(x.encode(&mut [0u8; XETH_LEN][..n]).is_err());
        }
        assert!(x.fits(4096) && !x.fits(61441) && x.fits(61440));
        assert!(!Xeth {
            offset: u32::MAX,
            ..x
        }
        .fits(2));
    }

    #[test]
    fn sack_bytes() {
        let s = Sack {
            base: Psn::new(0xabcdef),
            full: true,
            missing: 0b1011,
        };
        let mut b = [0u8; SACK_LEN];
        s.encode(&mut b).unwrap();
        assert_eq!(&b[..4], &[1, 0xab, 0xcd, 0xef]);
        assert_eq!(b[19], 0b1011);
        assert_eq!(Sack::decode(&b).unwrap(), s);
        let v: Vec<u32> = s.iter().map(|p| p.get()).collect();
        assert_eq!(v, [0xabcdef, 0xabcdf0, 0xabcdf2]);
        for n in 0..SACK_LEN {
            assert!(Sack::decode(&b[..n]).is_err());
        }
    }

    #[test]
    fn window_basics() {
        let mut w = RxWindow::new(Psn::new(0xff_fffe));
        assert_eq!(w.arrive(Psn::new(0xff_fffe)), Arrival::Expected);
        assert!(!w.advance());
        // 0xffffff lost; 0, 1, 2 arrive.
        for p in 0..3 {
            assert_eq!(w.arrive(Psn::new(p)), Arrival::Ahead);
        }
        assert_eq!(w.arrive(Psn::new(1)), Arrival::Duplicate);
        assert_eq!(w.arrive(Psn::new(0xff_fffd)), Arrival::Duplicate);
        let s = w.sack(false).unwrap();
        assert_eq!((s.base.get(), s.missing, s.full), (0xff_ffff, 1, false));
        // Reported once.
        assert_eq!(w.sack(false), None);
        assert_eq!(w.sack(true).unwrap().missing, 1);
        assert_eq!(w.arrive(Psn::new(0xff_ffff)), Arrival::Expected);
        assert!(w.advance() && w.advance() && w.advance());
        assert!(!w.advance());
        assert_eq!(w.base().get(), 3);
        assert!(!w.has_holes());
        assert_eq!(w.arrive(Psn::new(3 + RX_SPAN)), Arrival::Beyond);
    }

    #[test]
    fn lost_again_names_reported_holes_once() {
        let mut w = RxWindow::new(Psn::new(0xff_fff0));
        // 0xfffff0 and 0xfffff2 lost; 0xfffff1, 0xfffff3..=0xfffffa arrive.
        for p in [0xff_fff1, 0xff_fff3, 0xff_fff4, 0xff_fff5, 0xff_fff6] {
            assert_eq!(w.arrive(Psn::new(p)), Arrival::Ahead);
        }
        // Nothing reported yet: nothing to report again.
        assert_eq!(w.lost_again(Psn::new(0xff_fff6)), None);
        let s = w.sack(false).unwrap();
        assert_eq!((s.base.get(), s.missing), (0xff_fff0, 0b101));
        // 0xfffff9 (lost later, not yet reported) and 0x5 arrive.
        assert_eq!(w.arrive(Psn::new(0xff_fffa)), Arrival::Ahead);
        assert_eq!(w.arrive(Psn::new(5)), Arrival::Ahead);
        // The retransmission of 0xfffff2 arrives, that of 0xfffff0 did not: only the
        // reported hole before it is named.
        assert_eq!(w.arrive(Psn::new(0xff_fff2)), Arrival::Ahead);
        let a = w.lost_again(Psn::new(0xff_fff2)).unwrap();
        assert_eq!((a.base.get(), a.missing, a.full), (0xff_fff0, 1, false));
        // Each hole once this way.
        assert_eq!(w.lost_again(Psn::new(0xff_fff2)), None);
        assert_eq!(w.lost_again(Psn::new(5)), None);
        // Filled: the window moves on, and so does the mark.
        assert_eq!(w.arrive(Psn::new(0xff_fff0)), Arrival::Expected);
        while w.advance() {}
        assert_eq!(w.base().get(), 0xff_fff7);
        assert_eq!(w.lost_again(Psn::new(5)), None);
    }

    #[test]
    fn reordering_adapts() {
        let mut r = Reordering::new(48, 8);
        assert_eq!(r.get(), REORDER);
        r.filled(false);
        assert_eq!(r.get(), 6);
        for _ in 0..10 {
            r.filled(false);
        }
        assert_eq!(r.get(), 48);
        for _ in 0..8 {
            r.filled(true);
        }
        assert_eq!(r.get(), 47);
        for _ in 0..10_000 {
            r.filled(true);
        }
        assert_eq!(r.get(), REORDER);
        // At the floor, confirmations are not counted: a QP's lifetime of repaired holes
        // (2^32 of them) must not overflow the count, and a later rise starts afresh.
        assert_eq!(r.confirmed, 0);
        let mut top = Reordering {
            confirmed: u32::MAX,
            ..Reordering::new(48, u32::MAX)
        };
        top.filled(false);
        top.confirmed = u32::MAX;
        top.filled(true);
        assert_eq!((top.get(), top.confirmed), (5, 0));
    }

    #[test]
    fn retx_slot_examples() {
        let k = |resp, p| RxKey {
            resp,
            psn: Psn::new(p),
        };
        // READ responses 11..14 wait; the repair of 10 goes first.
        let q = [k(true, 11), k(true, 12), k(true, 13), k(true, 14)];
        assert_eq!(retx_slot(q.iter().copied(), 0, k(true, 10)), 0);
        // Behind the repair already placed.
        assert_eq!(retx_slot(q.iter().copied(), 1, k(true, 9)), 1);
        // Never ahead of an earlier PSN of its own direction...
        assert_eq!(retx_slot(q.iter().copied(), 0, k(true, 13)), 2);
        assert_eq!(retx_slot(q.iter().copied(), 0, k(true, 20)), 4);
        // ...but ahead of the other direction's packets, whatever their PSN.
        let mixed = [k(false, 1), k(true, 12), k(false, 2)];
        assert_eq!(retx_slot(mixed.iter().copied(), 0, k(true, 10)), 0);
        assert_eq!(retx_slot(mixed.iter().copied(), 0, k(false, 2)), 1);
        // Across the PSN wrap, and with a stale `urgent`.
        let w = [k(false, 0xff_fffe), k(false, 0)];
        assert_eq!(retx_slot(w.iter().copied(), 0, k(false, 0xff_ffff)), 1);
        assert_eq!(retx_slot(w.iter().copied(), 0, k(false, 1)), 2);
        assert_eq!(retx_slot(w.iter().copied(), 9, k(false, 0xff_fff0)), 2);
        assert_eq!(retx_slot([].into_iter(), 0, k(false, 1)), 0);
    }

    #[test]
    fn solo_hint_probes_then_flags() {
        let mut h = SoloHint::new();
        // A run of WQEs each alone: the first and every 16th after it unflagged.
        let got: Vec<bool> = (0..40)
            .map(|_| h.start(1, false, true, false, 4096))
            .collect();
        for (k, g) in got.iter().enumerate() {
            assert_eq!(*g, k % SOLO_PROBE as usize != 0, "WQE {k}");
        }
        // Too large: never flagged, but still part of the run.
        assert!(!h.start(1, false, true, false, SOLO_MAX + 1));
        assert!(h.start(1, false, true, false, SOLO_MAX));
        // A WQE posted behind ends the run, even in a ping-pong: the next one probes.
        assert!(!h.start(2, true, true, true, 8));
        assert!(!h.start(1, false, true, false, 8));
        assert!(h.start(1, false, true, false, 8));
        // The previous WQE still uncompleted: awaited only if the peer answered since.
        assert!(h.start(2, false, false, true, 8));
        assert!(!h.start(2, false, false, false, 8));
        assert!(!h.start(2, false, false, true, 8));
        assert!(h.start(2, false, false, true, 8));
    }

    #[test]
    fn solo_hint_stream_waits_only_for_the_peer() {
        let mut h = SoloHint::new();
        // Two in flight (a WRITE and its READ) do not make a stream.
        assert!(!h.start(2, true, true, false, 8));
        assert!(!h.start(1, false, true, false, 8));
        assert!(h.start(1, false, true, false, 8));
        // Three do, for good: alone and signaled is no longer enough...
        assert!(!h.start(3, true, false, false, 8));
        for _ in 0..100 {
            assert!(!h.start(1, false, true, false, 8));
        }
        // ...but the peer's answer still is.
        assert!(!h.start(1, false, true, true, 8));
        assert!(h.start(1, false, true, true, 8));
    }

    proptest! {
        #[test]
        fn xeth_round_trip(a in any::<u32>(), b in any::<u32>(), c in any::<u32>()) {
            let x = Xeth { wqe_seq: a, offset: b, total: c };
            let mut buf = [0u8; XETH_LEN];
            x.encode(&mut buf).unwrap();
            prop_assert_eq!(Xeth::decode(&buf).unwrap(), x);
        }

        #[test]
        fn sack_decode_any(buf in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(s) = Sack::decode(&buf) {
                prop_assert_eq!(s.iter().count() as u32, s.count());
                let mut out = [0u8; SACK_LEN];
                s.encode(&mut out).unwrap();
                prop_assert_eq!(&out[1..], &buf[1..SACK_LEN]);
            }
        }

        /// `find` agrees with a PSN-by-PSN scan, whatever the two maps' bases.
        #[test]
        fn bits_find(a_set in proptest::collection::vec(0u32..600, 0..80),
                     b_set in proptest::collection::vec(0u32..600, 0..80),
                     a_off in 0u32..300, b_off in 0u32..300, from in 0u32..700,
                     len in 0u32..700, base in 0u32..=0xff_ffff, mode in 0u8..3) {
            let p0 = Psn::new(base);
            let mut a = PsnBits::<4>::new(p0.add(a_off));
            let mut b = PsnBits::<4>::new(p0.add(b_off));
            for s in &a_set { a.set(p0.add(*s)); }
            for s in &b_set { b.set(p0.add(*s)); }
            let pick = |x: u64, y: u64| match mode {
                0 => !(x | y),
                1 => !x,
                _ => !x & y,
            };
            let bit = |x: bool, y: bool| match mode {
                0 => !(x || y),
                1 => !x,
                _ => !x && y,
            };
            let (f, t) = (p0.add(from), p0.add(from + len));
            let want = (0..len).map(|i| p0.add(from + i)).find(|p| bit(a.get(*p), b.get(*p)));
            prop_assert_eq!(a.find(&b, f, t, pick), want);
        }

        /// Any sequence of sets, clears and advances matches a set of PSNs.
        #[test]
        fn bits_model(ops in proptest::collection::vec((0u8..3, 0u32..700), 0..200),
                      base in 0u32..=0xff_ffff) {
            let mut b = PsnBits::<4>::new(Psn::new(base));
            let mut model: Vec<Psn> = Vec::new();
            for (op, v) in ops {
                let p = b.base().add(v % 300);
                match op {
                    0 => {
                        let covered = b.covers(p);
                        let was = model.contains(&p);
                        prop_assert_eq!(b.set(p), covered.then_some(!was));
                        if covered && !was { model.push(p); }
                    }
                    1 => { b.clear(p); model.retain(|q| *q != p); }
                    _ => {
                        let to = b.base().add(v % 320);
                        b.advance_to(to);
                        model.retain(|q| !q.before(b.base()));
                    }
                }
                for i in 0..PsnBits::<4>::SPAN + 64 {
                    let q = b.base().add(i);
                    prop_assert_eq!(b.get(q), model.contains(&q));
                }
            }
        }

        /// A retransmission lands at the first place from which no packet of its own
        /// direction with an earlier PSN follows it, and never among those placed before.
        #[test]
        fn retx_slot_model(q in proptest::collection::vec((any::<bool>(), 0u32..40), 0..40),
                           urgent in 0usize..45, resp in any::<bool>(), psn in 0u32..40,
                           base in 0u32..=0xff_ffff) {
            let b0 = Psn::new(base);
            let queued: Vec<RxKey> =
                q.iter().map(|&(r, p)| RxKey { resp: r, psn: b0.add(p) }).collect();
            let key = RxKey { resp, psn: b0.add(psn) };
            let at = retx_slot(queued.iter().copied(), urgent, key);
            let ok = |i: usize| {
                i >= urgent.min(queued.len())
                    && queued[i..].iter().all(|x| x.resp != resp || !x.psn.before(key.psn))
            };
            prop_assert!(at <= queued.len() && ok(at));
            prop_assert!((0..at).all(|i| !ok(i)));
        }

        /// The bitmap shift keeps exactly the bits at or after the new base.
        #[test]
        fn bits_shift(set in proptest::collection::vec(0u32..256, 0..64), by in 0u32..300,
                      base in 0u32..=0xff_ffff) {
            let b0 = Psn::new(base);
            let mut b = PsnBits::<4>::new(b0);
            for s in &set {
                b.set(b0.add(*s));
            }
            b.advance_to(b0.add(by));
            for i in 0..256u32 {
                let p = b0.add(by + i);
                let want = by + i < 256 && set.contains(&(by + i));
                prop_assert_eq!(b.get(p), want);
            }
        }
    }
}
