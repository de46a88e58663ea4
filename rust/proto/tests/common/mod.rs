// SPDX-License-Identifier: GPL-2.0
//! The simulated link the transport simulations share: seeded dice and a one-way link
//! that loses, duplicates and delays packets. (Each test crate uses only part of it.)
#![allow(dead_code)]

use proptest::prelude::*;
use std::collections::BTreeMap;

/// Random message sizes: tiny, up to 20 KB, and 64 KiB.
pub fn sizes() -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(prop_oneof![0usize..64, 0usize..20_000, Just(65536)], 1..24)
}

/// The path MTUs RoCE allows (up to 4096).
pub fn mtus() -> impl Strategy<Value = usize> {
    prop_oneof![Just(256usize), Just(512), Just(1024), Just(4096)]
}

/// Messages of the given sizes with recognisable contents (`salt` varies them).
pub fn messages(sizes: &[usize], salt: usize) -> Vec<Vec<u8>> {
    sizes
        .iter()
        .enumerate()
        .map(|(i, n)| (0..*n).map(|b| (b * 7 + i * 13 + salt) as u8).collect())
        .collect()
}

/// One packet's share of a message.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    /// Index of the message.
    pub msg: usize,
    /// Byte offset in the message.
    pub off: usize,
    /// Payload bytes.
    pub len: usize,
    /// The message's last packet.
    pub last: bool,
}

/// The packets of every message at path MTU `mtu`, in PSN order (at least one each).
pub fn segments(msgs: &[Vec<u8>], mtu: usize) -> Vec<Segment> {
    let mut v = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        let n = m.len().div_ceil(mtu).max(1);
        for k in 0..n {
            let off = k * mtu;
            v.push(Segment {
                msg: i,
                off,
                len: (m.len() - off.min(m.len())).min(mtu),
                last: k + 1 == n,
            });
        }
    }
    v
}

/// Writes a segment's bytes of its message into the receiver's copy.
pub fn place(out: &mut [Vec<u8>], msgs: &[Vec<u8>], s: &Segment) {
    out[s.msg][s.off..s.off + s.len].copy_from_slice(&msgs[s.msg][s.off..s.off + s.len]);
}

/// Every one of `n` messages completed, in order.
pub fn completed_in_order(done: &[usize], n: usize) -> bool {
    done.len() == n && done.iter().enumerate().all(|(i, m)| i == *m)
}

/// xorshift64*: the link's dice.
pub struct Rng(pub u64);

impl Rng {
    /// `true` with probability `p` per mille.
    pub fn pct(&mut self, p: u32) -> bool {
        self.below(1000) < p
    }

    /// A number in `[0, n)` (0 if `n` is 0).
    pub fn below(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) % u64::from(n.max(1))) as u32
    }
}

/// A one-way link: each packet is lost, duplicated or delayed with the given per-mille
/// probabilities, and delivered in tick order.
pub struct Link<T: Copy> {
    q: BTreeMap<(u64, u64), T>,
    seq: u64,
    loss: u32,
    dup: u32,
    reorder: u32,
    /// Extra delay, up to this many ticks, with the order kept (a slow, busy host).
    jitter: u32,
    /// When the last packet sent with jitter arrives.
    last: u64,
    /// Packets lost so far.
    pub lost: u64,
}

impl<T: Copy> Link<T> {
    /// A link with these per-mille loss, duplication and reordering probabilities.
    pub fn new(loss: u32, dup: u32, reorder: u32) -> Self {
        Link {
            q: BTreeMap::new(),
            seq: 0,
            loss,
            dup,
            reorder,
            jitter: 0,
            last: 0,
            lost: 0,
        }
    }

    /// The same link, each packet delayed by up to `jitter` more ticks, in order: a
    /// delayed packet holds up the ones behind it.
    pub fn with_jitter(self, jitter: u32) -> Self {
        Link { jitter, ..self }
    }

    /// Sends `v` at tick `now`.
    pub fn send(&mut self, now: u64, rng: &mut Rng, v: T) {
        if rng.pct(self.loss) {
            self.lost += 1;
            return;
        }
        let copies = if rng.pct(self.dup) { 2 } else { 1 };
        for _ in 0..copies {
            let delay = if rng.pct(self.reorder) { 4 } else { 1 };
            let mut at = now + delay;
            if self.jitter > 0 {
                at = (at + u64::from(rng.below(self.jitter + 1))).max(self.last);
                self.last = at;
            }
            self.seq += 1;
            self.q.insert((at, self.seq), v);
        }
    }

    /// What arrives at tick `now`, in order.
    pub fn due(&mut self, now: u64) -> Vec<T> {
        let later = self.q.split_off(&(now + 1, 0));
        let due = std::mem::replace(&mut self.q, later);
        due.into_values().collect()
    }

    /// Whether a packet in flight satisfies `f`.
    pub fn any(&self, f: impl Fn(&T) -> bool) -> bool {
        self.q.values().any(f)
    }

    /// Nothing in flight.
    pub fn idle(&self) -> bool {
        self.q.is_empty()
    }
}
