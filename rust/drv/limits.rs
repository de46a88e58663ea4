// SPDX-License-Identifier: GPL-2.0
//! What rrxe allocates at most: table sizes, queue depths and budgets, per device and per
//! QP. Everything a peer or a user can make the driver hold is bounded by one of these.

/// Largest SQ, RQ or SRQ depth (bounds the per-QP state allocated with a QP).
pub(crate) const MAX_QP_WR: u32 = 4096;
/// Largest `max_rd_atomic` / `max_dest_rd_atomic`.
pub(crate) const MAX_QP_RD_ATOM: u32 = 128;
/// QPs per device.
pub(crate) const QP_TABLE: usize = 1024;
/// MRs per device (index 0 is never used).
pub(crate) const MR_TABLE: usize = 16384;
/// Memory windows per device.
pub(crate) const MW_TABLE: usize = 16384;
/// Pages of one fast-registration MR (`max_fast_reg_page_list_len`); each MR allocates
/// its page list with it.
pub(crate) const MAX_FAST_REG_PAGES: u32 = 512;
/// Address handles per device (AH number 0 is never used).
pub(crate) const AH_TABLE: usize = 4096;
/// Largest CQ.
pub(crate) const MAX_CQE: u32 = 32767;
/// Scatter/gather entries per WQE (what the WQE decoder accepts).
pub(crate) const MAX_SGE: u32 = crate::proto::uapi::MAX_SGE as u32;
/// Bytes of packets kept beyond the expected PSN, per device (all QPs).
pub(crate) const REASM_DEV_MAX: u64 = 64 << 20;
/// KiB of packets one QP keeps beyond its expected PSN: the bounds of the module
/// parameter `reasm_qp_kib`.
pub(crate) const REASM_QP_KIB: (u32, u32) = (1, 65536);
/// Received packets a QP queues for its work item (a peer cannot make it hold more).
pub(crate) const RX_QUEUE_MAX: usize = 1024;
/// Destroyed QPs remembered per device (see `shared::Closed`).
pub(crate) const CLOSED_MAX: usize = 16;
/// How long a destroyed QP's executed requests are still acknowledged.
pub(crate) const CLOSED_US: u64 = 20_000_000;

// The responder's atomic replay table covers the deepest responder.
const _: () = assert!(crate::proto::rc::resp::REPLAY >= MAX_QP_RD_ATOM as usize);

/// Destinations (peer addresses) the delay-based congestion control keeps a register
/// and a rate limiter for, per device; QPs to further destinations are not paced.
pub(crate) const CC_DESTS: usize = 64;
