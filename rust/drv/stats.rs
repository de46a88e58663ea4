// SPDX-License-Identifier: GPL-2.0
//! Device counters: one atomic per counter, read by `rdma statistic show link DEV/1`.

use core::sync::atomic::{AtomicU64, Ordering};
use kernel::prelude::*;

/// A statistics counter.
pub(crate) struct Counter(AtomicU64);

impl Counter {
    const fn new() -> Self {
        Counter(AtomicU64::new(0))
    }

    pub(crate) fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Adds `n`; returns the new value (gauges).
    pub(crate) fn add(&self, n: u64) -> u64 {
        self.0.fetch_add(n, Ordering::Relaxed).wrapping_add(n)
    }

    /// Subtracts `n` (gauges).
    pub(crate) fn sub(&self, n: u64) {
        self.0.fetch_sub(n, Ordering::Relaxed);
    }

    /// Raises the value to `v` if it is lower (high-water marks).
    pub(crate) fn raise(&self, v: u64) {
        self.0.fetch_max(v, Ordering::Relaxed);
    }
}

macro_rules! stats {
    ($($name:ident),* $(,)?) => {
        /// Device counters (see Documentation/rrxe/index.rst).
        pub(crate) struct Stats {
            $(pub(crate) $name: Counter,)*
        }

        impl Stats {
            pub(crate) const fn new() -> Self {
                Stats { $($name: Counter::new(),)* }
            }

            /// Counter names, in declaration order.
            pub(crate) const NAMES: &'static [&'static CStr] = &[$(kernel::c_str!(stringify!($name)),)*];

            /// Counter values, in [`Stats::NAMES`] order.
            pub(crate) fn values(&self, out: &mut [u64]) {
                for (o, v) in out.iter_mut().zip([$(self.$name.get(),)*]) {
                    *o = v;
                }
            }
        }
    };
}

stats!(
    tx_packets,
    tx_bytes,
    tx_errors,
    tx_busy,
    rx_packets,
    rx_bytes,
    drop_malformed,
    drop_opcode,
    drop_icrc,
    drop_qpn,
    drop_state,
    out_of_seq,
    duplicates,
    replay_miss,
    dup_or_ooo_resp,
    ghost_resp,
    retransmits,
    timeouts,
    rnr_nak_sent,
    rnr_nak_rcvd,
    seq_nak_rcvd,
    nak_sent,
    cq_overflow,
    local_errors,
    window_full,
    cnp_rcvd,
    np_ecn_marked_roce_packets,
    np_cnp_sent,
    rp_cnp_handled,
    rp_cnp_ignored,
    rp_rate_dec,
    rp_rate_inc,
    rp_paced,
    rp_paced_us,
    rp_start_held,
    rp_ts_samples,
    drop_qkey,
    drop_no_recv,
    drop_rx_queue,
    rx_solo,
    sel_negotiated,
    sel_fallback,
    sel_accepted,
    ooo_kept,
    ooo_placed,
    sack_sent,
    sack_rcvd,
    sack_spurious,
    retx_packets,
    rd_rereq,
    tlp_sent,
    reasm_bytes,
    reasm_high,
    drop_reasm_limit,
    sack_again,
    closed_acks,
    verify_hello,
    verify_negotiated,
    verify_unnegotiated,
    verify_sent,
    verify_ok,
    verify_failed,
    verify_skipped,
    verify_faults,
    verify_resent,
    verify_errors,
    atomic_write,
    flush,
    mr_reg,
    mr_inv_local,
    mr_inv_remote,
    mw_bind,
    key_errors,
    odp_rnr,
    odp_wait,
    odp_faulted,
    odp_invalidated,
    mr_release_later,
    nomem,
    fault_alloc,
);
