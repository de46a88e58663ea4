// SPDX-License-Identifier: GPL-2.0
//! The rxe user ABI (`rdma_user_rxe.h`, `ib_user_verbs.h`): queue header, send and
//! receive WQEs, CQEs and the ring index math shared with rdma-core's `rxe` provider.
//!
//! Everything userspace writes is decoded from a private copy of its bytes and validated;
//! nothing here trusts a length, count or index from the shared memory.

use super::wire::get;

/// Offset of `producer_index` in the queue header.
pub const PRODUCER_OFF: usize = 128;
/// Offset of `consumer_index` in the queue header.
pub const CONSUMER_OFF: usize = 256;
/// Offset of slot 0.
pub const DATA_OFF: usize = 384;
/// Minimum slot size (a cache line).
pub const MIN_SLOT: usize = 64;

/// Geometry of a ring: power-of-two slots of a power-of-two size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingGeom {
    /// `log2` of the slot size.
    pub log2_slot: u32,
    /// `num_slots - 1`.
    pub mask: u32,
}

impl RingGeom {
    /// Geometry for at least `depth` usable entries of `elem` bytes each, or `None` if it
    /// would exceed `max_depth` entries.
    pub fn new(depth: u32, elem: usize, max_depth: u32) -> Option<RingGeom> {
        if depth == 0 || depth > max_depth {
            return None;
        }
        let slots = depth.checked_add(1)?.checked_next_power_of_two()?;
        let slot = elem.max(MIN_SLOT).checked_next_power_of_two()?;
        Some(RingGeom {
            log2_slot: slot.trailing_zeros(),
            mask: slots - 1,
        })
    }

    /// Usable entries (one slot always stays empty).
    pub const fn capacity(&self) -> u32 {
        self.mask
    }

    /// Slot size in bytes.
    pub const fn slot_size(&self) -> usize {
        1 << self.log2_slot
    }

    /// Bytes of the whole buffer (header and slots).
    pub const fn bytes(&self) -> usize {
        DATA_OFF + ((self.mask as usize + 1) << self.log2_slot)
    }

    /// Byte offset of slot `index` (masked first).
    pub const fn slot_off(&self, index: u32) -> usize {
        DATA_OFF + (((index & self.mask) as usize) << self.log2_slot)
    }

    /// Next index.
    pub const fn next(&self, index: u32) -> u32 {
        index.wrapping_add(1) & self.mask
    }

    /// Entries between consumer and producer (both masked first).
    pub const fn count(&self, producer: u32, consumer: u32) -> u32 {
        producer.wrapping_sub(consumer) & self.mask
    }

    /// `true` if a producer at `producer` cannot add an entry.
    pub const fn full(&self, producer: u32, consumer: u32) -> bool {
        self.count(producer, consumer) == self.mask
    }
}

/// Size of `struct rxe_send_wqe` without its payload area.
pub const SEND_WQE_HDR: usize = 208;
/// Size of `struct rxe_recv_wqe` without its SGEs.
pub const RECV_WQE_HDR: usize = 40;
/// Size of one SGE.
pub const SGE_LEN: usize = 16;
/// Slot size of a user CQE (`ib_uverbs_wc` is 48 bytes; rxe uses the kernel union: 128).
pub const CQE_SLOT: usize = 128;
/// Size of `struct ib_uverbs_wc`.
pub const UVERBS_WC_LEN: usize = 48;

/// A scatter/gather element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sge {
    /// Virtual address (IOVA inside the MR).
    pub addr: u64,
    /// Length in bytes.
    pub length: u32,
    /// Local key.
    pub lkey: u32,
}

impl Sge {
    /// An empty entry.
    pub const ZERO: Sge = Sge {
        addr: 0,
        length: 0,
        lkey: 0,
    };

    fn encode(&self, b: &mut [u8], off: usize) -> Option<()> {
        put_at(b, off, &self.addr.to_le_bytes())?;
        put_at(b, off + 8, &self.length.to_le_bytes())?;
        put_at(b, off + 12, &self.lkey.to_le_bytes())
    }

    fn decode(b: &[u8], off: usize) -> Option<Sge> {
        Some(Sge {
            addr: u64::from_le_bytes(get::<8>(b, off)?),
            length: u32::from_le_bytes(get::<4>(b, off + 8)?),
            lkey: u32::from_le_bytes(get::<4>(b, off + 12)?),
        })
    }
}

/// Work request opcodes (`IBV_WR_*`).
pub mod wr {
    /// RDMA WRITE.
    pub const RDMA_WRITE: u32 = 0;
    /// RDMA WRITE with immediate.
    pub const RDMA_WRITE_WITH_IMM: u32 = 1;
    /// SEND.
    pub const SEND: u32 = 2;
    /// SEND with immediate.
    pub const SEND_WITH_IMM: u32 = 3;
    /// RDMA READ.
    pub const RDMA_READ: u32 = 4;
    /// Atomic compare and swap.
    pub const ATOMIC_CMP_AND_SWP: u32 = 5;
    /// Atomic fetch and add.
    pub const ATOMIC_FETCH_AND_ADD: u32 = 6;
    /// Local invalidate.
    pub const LOCAL_INV: u32 = 7;
    /// Bind memory window.
    pub const BIND_MW: u32 = 8;
    /// SEND with invalidate.
    pub const SEND_WITH_INV: u32 = 9;
    /// FLUSH (IBTA 1.5; userspace from rdma-core 45 on).
    pub const FLUSH: u32 = 14;
    /// ATOMIC WRITE (IBTA 1.5).
    pub const ATOMIC_WRITE: u32 = 15;
    /// Fast registration of an MR (`IB_WR_REG_MR`): kernel consumers only, never
    /// accepted from a user ring.
    pub const REG_MR: u32 = 0x20;

    /// A local operation: executed by the requester, no packet.
    pub const fn local(opcode: u32) -> bool {
        matches!(opcode, LOCAL_INV | BIND_MW | REG_MR)
    }

    /// Whether the request union holds the `mw`/`reg` variant (see [`super::Bind`]).
    pub const fn binds(opcode: u32) -> bool {
        matches!(opcode, BIND_MW | REG_MR)
    }
}

/// Send flags (`IBV_SEND_*`).
pub mod send_flags {
    /// Fence.
    pub const FENCE: u32 = 1;
    /// Signaled.
    pub const SIGNALED: u32 = 2;
    /// Solicited event.
    pub const SOLICITED: u32 = 4;
    /// Inline data.
    pub const INLINE: u32 = 8;
}

/// Maximum SGEs rrxe accepts per WQE.
pub const MAX_SGE: usize = 32;
/// Maximum inline bytes rrxe accepts per WQE.
pub const MAX_INLINE: usize = 512;

/// Payload description of a send WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload {
    /// Gather list (`num` valid entries).
    Sges {
        /// Entries.
        sge: [Sge; MAX_SGE],
        /// Valid entries.
        num: usize,
    },
    /// Inline bytes, copied out of the slot (`len` valid bytes).
    Inline {
        /// Bytes.
        data: [u8; MAX_INLINE],
        /// Valid bytes.
        len: usize,
    },
}

/// A send WQE decoded from a private copy of its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendWqe {
    /// Caller's id, echoed in the CQE.
    pub wr_id: u64,
    /// `IBV_WR_*`.
    pub opcode: u32,
    /// `IBV_SEND_*`.
    pub flags: u32,
    /// Immediate data (raw big-endian word) or invalidated rkey.
    pub ex: u32,
    /// Remote address (RDMA / atomic).
    pub remote_addr: u64,
    /// Remote key (RDMA / atomic).
    pub rkey: u32,
    /// Compare (CAS) or add (FAA) operand.
    pub compare_add: u64,
    /// Swap operand (CAS).
    pub swap: u64,
    /// UD: remote QPN.
    pub remote_qpn: u32,
    /// UD: remote Q_Key.
    pub remote_qkey: u32,
    /// UD: address handle number.
    pub ah_num: u32,
    /// BIND_MW and REG_MR: access flags (see [`SendWqe::bind`]).
    pub access: u32,
    /// Total length in bytes (sum of SGE lengths or inline length; FLUSH: of the
    /// range).
    pub length: u32,
    /// FLUSH: placement type (`IB_FLUSH_GLOBAL`, `IB_FLUSH_PERSISTENT`).
    pub flush_type: u8,
    /// FLUSH: selectivity level (`IB_FLUSH_RANGE`, `IB_FLUSH_MR`).
    pub flush_level: u8,
    /// Payload.
    pub payload: Payload,
}

/// Why a WQE was rejected (completes with a local error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WqeError {
    /// The slot is shorter than the WQE claims.
    Truncated,
    /// More SGEs than the queue allows.
    TooManySge,
    /// Inline data longer than the queue allows.
    InlineTooLong,
    /// The SGE lengths overflow 32 bits.
    LengthOverflow,
}

fn put_at(b: &mut [u8], off: usize, v: &[u8]) -> Option<()> {
    b.get_mut(off..off.checked_add(v.len())?)?
        .copy_from_slice(v);
    Some(())
}

fn le32(b: &[u8], off: usize) -> Result<u32, WqeError> {
    get::<4>(b, off)
        .map(u32::from_le_bytes)
        .ok_or(WqeError::Truncated)
}

fn le64(b: &[u8], off: usize) -> Result<u64, WqeError> {
    get::<8>(b, off)
        .map(u64::from_le_bytes)
        .ok_or(WqeError::Truncated)
}

impl SendWqe {
    /// An all-zero WQE (SGE payload, no entries): the starting point of
    /// [`SendWqe::decode_into`].
    pub const EMPTY: SendWqe = SendWqe {
        wr_id: 0,
        opcode: 0,
        flags: 0,
        ex: 0,
        remote_addr: 0,
        rkey: 0,
        compare_add: 0,
        swap: 0,
        remote_qpn: 0,
        remote_qkey: 0,
        ah_num: 0,
        access: 0,
        length: 0,
        flush_type: 0,
        flush_level: 0,
        payload: Payload::Sges {
            sge: [Sge::ZERO; MAX_SGE],
            num: 0,
        },
    };

    /// Decodes a send WQE slot. `max_sge` and `max_inline` are the queue's real limits.
    /// The SGE lengths, not the user's `dma.length`, define the total length.
    pub fn decode(b: &[u8], max_sge: usize, max_inline: usize) -> Result<SendWqe, WqeError> {
        let mut w = SendWqe::EMPTY;
        w.decode_into(b, max_sge, max_inline)?;
        Ok(w)
    }

    /// [`SendWqe::decode`] into `self`, in place: a WQE is about 700 bytes, and the
    /// requester keeps one per QP rather than moving it for every packet. On success
    /// `self` equals what `decode` returns (entries past the valid ones are zero, as
    /// long as they were zero in `self` on entry, which holds for [`SendWqe::EMPTY`] and
    /// for anything this function left behind); on error `self` is unchanged.
    pub fn decode_into(
        &mut self,
        b: &[u8],
        max_sge: usize,
        max_inline: usize,
    ) -> Result<(), WqeError> {
        let opcode = le32(b, 12)?;
        let flags = le32(b, 16)?;
        let num_sge = le32(b, 184 + 12)? as usize;
        let dma_len = le32(b, 184)? as usize;
        let atomic = opcode == wr::ATOMIC_CMP_AND_SWP || opcode == wr::ATOMIC_FETCH_AND_ADD;
        let flush = opcode == wr::FLUSH;
        // Every check first, so that an error leaves `self` as it was.
        let wr_id = le64(b, 0)?;
        let ex = le32(b, 20)?;
        let remote_addr = le64(b, 24)?;
        let rkey = if atomic || wr::binds(opcode) {
            le32(b, 48)?
        } else if flush {
            le32(b, 36)?
        } else {
            le32(b, 32)?
        };
        let compare_add = le64(b, 32)?;
        let swap = le64(b, 40)?;
        let remote_qpn = le32(b, 24)?;
        let remote_qkey = le32(b, 28)?;
        let ah_num = le32(b, 36)?;
        let access = le32(b, 52)?;
        let (flush_type, flush_level) = if flush {
            (le32(b, 40)? as u8, (le32(b, 40)? >> 8) as u8)
        } else {
            (0, 0)
        };
        // ATOMIC WRITE's 8 bytes are in the slot where inline data goes (librxe's
        // `dma.atomic_wr`) unless the request names them with one SGE (kernel requests).
        let inline = flags & send_flags::INLINE != 0
            || (opcode == wr::ATOMIC_WRITE && num_sge == 0)
            || flush;
        let (body, length) = if flush {
            // No payload: the length is the range's, from the request itself.
            (&[][..], le32(b, 32)?)
        } else if inline {
            let (dma_len, limit) = if opcode == wr::ATOMIC_WRITE && flags & send_flags::INLINE == 0
            {
                (8, 8)
            } else {
                (dma_len, max_inline.min(MAX_INLINE))
            };
            if dma_len > limit {
                return Err(WqeError::InlineTooLong);
            }
            let src = b
                .get(SEND_WQE_HDR..SEND_WQE_HDR + dma_len)
                .ok_or(WqeError::Truncated)?;
            (src, dma_len as u32)
        } else {
            if num_sge > max_sge.min(MAX_SGE) {
                return Err(WqeError::TooManySge);
            }
            let src = b
                .get(SEND_WQE_HDR..)
                .unwrap_or(&[])
                .get(..num_sge * SGE_LEN)
                .ok_or(WqeError::Truncated)?;
            let length = src
                .chunks_exact(SGE_LEN)
                .try_fold(0u32, |acc, e| {
                    acc.checked_add(Sge::decode(e, 0).map_or(0, |s| s.length))
                })
                .ok_or(WqeError::LengthOverflow)?;
            (src, length)
        };
        match (&mut self.payload, inline) {
            (Payload::Inline { .. }, true) | (Payload::Sges { .. }, false) => {}
            (p, true) => {
                *p = Payload::Inline {
                    data: [0; MAX_INLINE],
                    len: 0,
                }
            }
            (p, false) => *p = SendWqe::EMPTY.payload,
        }
        match &mut self.payload {
            Payload::Inline { data, len } => {
                // Zero what the previous WQE left past the new end, then copy.
                if let Some(stale) = data.get_mut(body.len()..*len) {
                    stale.fill(0);
                }
                if let Some(d) = data.get_mut(..body.len()) {
                    d.copy_from_slice(body);
                }
                *len = body.len();
            }
            Payload::Sges { sge, num } => {
                if let Some(stale) = sge.get_mut(num_sge..*num) {
                    stale.fill(Sge::default());
                }
                for (s, e) in sge.iter_mut().zip(body.chunks_exact(SGE_LEN)) {
                    *s = Sge::decode(e, 0).unwrap_or_default();
                }
                *num = num_sge;
            }
        }
        self.wr_id = wr_id;
        self.opcode = opcode;
        self.flags = flags;
        self.ex = ex;
        self.remote_addr = remote_addr;
        self.rkey = rkey;
        self.compare_add = compare_add;
        self.swap = swap;
        self.remote_qpn = remote_qpn;
        self.remote_qkey = remote_qkey;
        self.ah_num = ah_num;
        self.access = access;
        self.length = length;
        self.flush_type = flush_type;
        self.flush_level = flush_level;
        Ok(())
    }

    /// The `mw` (BIND_MW) / `reg` (REG_MR) variant of the request union: they share the
    /// bytes of the RDMA and atomic variants (address 24, length 32, MR lkey 40, MW
    /// rkey 44, new rkey 48, access 52).
    pub const fn bind(&self) -> Bind {
        Bind {
            addr: self.remote_addr,
            length: self.compare_add,
            mr_lkey: self.swap as u32,
            mw_rkey: (self.swap >> 32) as u32,
            rkey: self.rkey,
            access: self.access,
        }
    }
}

/// A memory-window bind (`rxe_send_wr.wr.mw`) or, for kernel consumers, an MR
/// registration: for REG_MR, `mr_lkey` names the MR (its index), `rkey` is the key it
/// takes and `addr`/`length` the region.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bind {
    /// First address of the window (or region).
    pub addr: u64,
    /// Length in bytes.
    pub length: u64,
    /// lkey of the MR the window lies in (REG_MR: of the MR registered).
    pub mr_lkey: u32,
    /// The window's current rkey (BIND_MW).
    pub mw_rkey: u32,
    /// The rkey the window (or MR) takes.
    pub rkey: u32,
    /// Access flags.
    pub access: u32,
}

impl SendWqe {
    /// Encodes the WQE into a slot in the layout librxe writes (kernel consumers' work
    /// requests go through the same rings as userspace's). SGE payloads only.
    pub fn encode(&self, b: &mut [u8]) -> Result<(), WqeError> {
        let t = WqeError::Truncated;
        let Payload::Sges { sge, num } = &self.payload else {
            return Err(WqeError::InlineTooLong);
        };
        b.get_mut(..SEND_WQE_HDR).ok_or(t)?.fill(0);
        let atomic =
            self.opcode == wr::ATOMIC_CMP_AND_SWP || self.opcode == wr::ATOMIC_FETCH_AND_ADD;
        let ud = self.ah_num != 0;
        let mut put = |off: usize, v: &[u8]| put_at(b, off, v).ok_or(t);
        put(0, &self.wr_id.to_le_bytes())?;
        put(12, &self.opcode.to_le_bytes())?;
        put(16, &(self.flags & !send_flags::INLINE).to_le_bytes())?;
        put(20, &self.ex.to_le_bytes())?;
        if ud {
            put(24, &self.remote_qpn.to_le_bytes())?;
            put(28, &self.remote_qkey.to_le_bytes())?;
            put(36, &self.ah_num.to_le_bytes())?;
        } else if atomic || wr::binds(self.opcode) {
            put(24, &self.remote_addr.to_le_bytes())?;
            put(32, &self.compare_add.to_le_bytes())?;
            put(40, &self.swap.to_le_bytes())?;
            put(48, &self.rkey.to_le_bytes())?;
            put(52, &self.access.to_le_bytes())?;
        } else if self.opcode == wr::FLUSH {
            put(24, &self.remote_addr.to_le_bytes())?;
            put(32, &self.length.to_le_bytes())?;
            put(36, &self.rkey.to_le_bytes())?;
            put(40, &[self.flush_type, self.flush_level])?;
            return Ok(());
        } else {
            put(24, &self.remote_addr.to_le_bytes())?;
            put(32, &self.rkey.to_le_bytes())?;
        }
        put(184, &self.length.to_le_bytes())?;
        put(188, &self.length.to_le_bytes())?;
        put(196, &(*num as u32).to_le_bytes())?;
        for (i, s) in sge.iter().take(*num).enumerate() {
            s.encode(b, SEND_WQE_HDR + i * SGE_LEN).ok_or(t)?;
        }
        Ok(())
    }
}

/// A receive WQE decoded from a private copy of its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvWqe {
    /// Caller's id.
    pub wr_id: u64,
    /// Scatter list.
    pub sge: [Sge; MAX_SGE],
    /// Valid entries.
    pub num: usize,
    /// Total bytes the SGEs can take (saturating).
    pub length: u32,
}

impl RecvWqe {
    /// An all-zero WQE: the starting point of [`RecvWqe::decode_into`].
    pub const EMPTY: RecvWqe = RecvWqe {
        wr_id: 0,
        sge: [Sge::ZERO; MAX_SGE],
        num: 0,
        length: 0,
    };

    /// Decodes a receive WQE slot with at most `max_sge` SGEs.
    pub fn decode(b: &[u8], max_sge: usize) -> Result<RecvWqe, WqeError> {
        let mut w = RecvWqe::EMPTY;
        w.decode_into(b, max_sge)?;
        Ok(w)
    }

    /// [`RecvWqe::decode`] into `self`, in place (about 530 bytes; see
    /// [`SendWqe::decode_into`] for the guarantees).
    pub fn decode_into(&mut self, b: &[u8], max_sge: usize) -> Result<(), WqeError> {
        let num = le32(b, 16 + 12)? as usize;
        if num > max_sge.min(MAX_SGE) {
            return Err(WqeError::TooManySge);
        }
        let src = b
            .get(RECV_WQE_HDR..)
            .unwrap_or(&[])
            .get(..num * SGE_LEN)
            .ok_or(WqeError::Truncated)?;
        let wr_id = le64(b, 0)?;
        if let Some(stale) = self.sge.get_mut(num..self.num) {
            stale.fill(Sge::default());
        }
        let mut length = 0u32;
        for (s, e) in self.sge.iter_mut().zip(src.chunks_exact(SGE_LEN)) {
            *s = Sge::decode(e, 0).unwrap_or_default();
            length = length.saturating_add(s.length);
        }
        self.wr_id = wr_id;
        self.num = num;
        self.length = length;
        Ok(())
    }

    /// Encodes the WQE into a slot in the layout librxe writes.
    pub fn encode(&self, b: &mut [u8]) -> Result<(), WqeError> {
        let t = WqeError::Truncated;
        b.get_mut(..RECV_WQE_HDR).ok_or(t)?.fill(0);
        put_at(b, 0, &self.wr_id.to_le_bytes()).ok_or(t)?;
        put_at(b, 16, &self.length.to_le_bytes()).ok_or(t)?;
        put_at(b, 20, &self.length.to_le_bytes()).ok_or(t)?;
        put_at(b, 28, &(self.num as u32).to_le_bytes()).ok_or(t)?;
        for (i, s) in self.sge.iter().take(self.num).enumerate() {
            s.encode(b, RECV_WQE_HDR + i * SGE_LEN).ok_or(t)?;
        }
        Ok(())
    }
}

/// Work completion status codes (`IBV_WC_*`).
pub mod wc_status {
    /// Success.
    pub const SUCCESS: u32 = 0;
    /// Local length error.
    pub const LOC_LEN_ERR: u32 = 1;
    /// Local QP operation error.
    pub const LOC_QP_OP_ERR: u32 = 2;
    /// Local protection error.
    pub const LOC_PROT_ERR: u32 = 4;
    /// Flushed.
    pub const WR_FLUSH_ERR: u32 = 5;
    /// Bad response.
    pub const BAD_RESP_ERR: u32 = 7;
    /// Remote invalid request.
    pub const REM_INV_REQ_ERR: u32 = 9;
    /// Remote access error.
    pub const REM_ACCESS_ERR: u32 = 10;
    /// Remote operation error.
    pub const REM_OP_ERR: u32 = 11;
    /// Memory window bind error.
    pub const MW_BIND_ERR: u32 = 6;
    /// Transport retry counter exceeded.
    pub const RETRY_EXC_ERR: u32 = 12;
    /// RNR retry counter exceeded.
    pub const RNR_RETRY_EXC_ERR: u32 = 13;
}

/// Work completion opcodes (`IBV_WC_*`).
pub mod wc_opcode {
    /// SEND.
    pub const SEND: u32 = 0;
    /// RDMA WRITE.
    pub const RDMA_WRITE: u32 = 1;
    /// RDMA READ.
    pub const RDMA_READ: u32 = 2;
    /// Compare and swap.
    pub const COMP_SWAP: u32 = 3;
    /// Fetch and add.
    pub const FETCH_ADD: u32 = 4;
    /// Memory window bind.
    pub const BIND_MW: u32 = 5;
    /// Local invalidate.
    pub const LOCAL_INV: u32 = 6;
    /// Receive.
    pub const RECV: u32 = 128;
    /// FLUSH.
    pub const FLUSH: u32 = 8;
    /// ATOMIC WRITE.
    pub const ATOMIC_WRITE: u32 = 9;
    /// Receive of an RDMA WRITE with immediate.
    pub const RECV_RDMA_WITH_IMM: u32 = 129;
}

/// Work completion flags for user CQEs (`IBV_WC_*` flags).
pub mod wc_flags {
    /// A GRH is present.
    pub const GRH: u32 = 1;
    /// Immediate data is valid.
    pub const WITH_IMM: u32 = 2;
    /// The invalidated rkey is valid (userspace value).
    pub const WITH_INV: u32 = 8;
}

/// A completion, in `struct ib_uverbs_wc` terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cqe {
    /// Caller's id.
    pub wr_id: u64,
    /// Status.
    pub status: u32,
    /// Opcode.
    pub opcode: u32,
    /// Bytes transferred.
    pub byte_len: u32,
    /// Immediate data (raw) or invalidated rkey.
    pub ex: u32,
    /// Local QP number.
    pub qp_num: u32,
    /// Source QP (UD).
    pub src_qp: u32,
    /// Flags.
    pub wc_flags: u32,
    /// Port.
    pub port_num: u8,
    /// Network header of a UD/GSI receive (`RDMA_NETWORK_IPV4` 2 / `_IPV6` 3); reported to
    /// kernel consumers only (`ib_uverbs_wc` has no such field).
    pub net_type: u8,
}

impl Cqe {
    /// Encodes as `struct ib_uverbs_wc` (48 bytes, every byte written).
    pub fn encode(&self) -> [u8; UVERBS_WC_LEN] {
        let mut b = [0u8; UVERBS_WC_LEN];
        let mut put = |off: usize, v: &[u8]| {
            if let Some(d) = b.get_mut(off..off + v.len()) {
                d.copy_from_slice(v);
            }
        };
        put(0, &self.wr_id.to_le_bytes());
        put(8, &self.status.to_le_bytes());
        put(12, &self.opcode.to_le_bytes());
        put(20, &self.byte_len.to_le_bytes());
        put(24, &self.ex.to_le_bytes());
        put(28, &self.qp_num.to_le_bytes());
        put(32, &self.src_qp.to_le_bytes());
        put(36, &self.wc_flags.to_le_bytes());
        put(46, &[self.port_num]);
        put(47, &[self.net_type]);
        b
    }

    /// Decodes what [`Cqe::encode`] wrote.
    pub fn decode(b: &[u8; UVERBS_WC_LEN]) -> Cqe {
        let w = |off: usize| get::<4>(b, off).map_or(0, u32::from_le_bytes);
        Cqe {
            wr_id: get::<8>(b, 0).map_or(0, u64::from_le_bytes),
            status: w(8),
            opcode: w(12),
            byte_len: w(20),
            ex: w(24),
            qp_num: w(28),
            src_qp: w(32),
            wc_flags: w(36),
            port_num: b[46],
            net_type: b[47],
        }
    }
}

/// Send-queue element size for the requested limits (rxe's geometry) and the limits the
/// slot actually gives: `(element bytes, max_send_sge, max_inline)`.
pub fn sq_elem(max_sge: u32, max_inline: u32) -> (usize, u32, u32) {
    let payload = (max_sge as usize * SGE_LEN).max(max_inline as usize);
    let payload = payload.max(SGE_LEN);
    (
        SEND_WQE_HDR + payload,
        (payload / SGE_LEN) as u32,
        payload as u32,
    )
}

/// Receive-queue element size for `max_sge` SGEs.
pub fn rq_elem(max_sge: u32) -> usize {
    RECV_WQE_HDR + max_sge.max(1) as usize * SGE_LEN
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn send_wqe_round_trip() {
        let mut sge = [Sge::default(); MAX_SGE];
        sge[0] = Sge {
            addr: 0x1000,
            length: 100,
            lkey: 0x1234,
        };
        sge[1] = Sge {
            addr: 0x9000,
            length: 28,
            lkey: 0x5678,
        };
        let variants = [
            (wr::SEND, 0, 0),
            (wr::RDMA_WRITE_WITH_IMM, 0, 0),
            (wr::ATOMIC_CMP_AND_SWP, 0, 0),
            (wr::SEND_WITH_IMM, 7, 0x8001_0000),
        ];
        for (opcode, ah_num, qkey) in variants {
            let w = SendWqe {
                wr_id: 0xdead_beef_0000_0001,
                opcode,
                flags: send_flags::SIGNALED,
                ex: 0x0100_0000,
                remote_addr: if ah_num == 0 {
                    0xffff_0000_1234_5678
                } else {
                    0
                },
                rkey: if ah_num == 0 { 0xabcd } else { 0 },
                compare_add: if opcode == wr::ATOMIC_CMP_AND_SWP {
                    5
                } else {
                    0
                },
                swap: if opcode == wr::ATOMIC_CMP_AND_SWP {
                    6
                } else {
                    0
                },
                remote_qpn: if ah_num != 0 { 1 } else { 0 },
                remote_qkey: qkey,
                ah_num,
                access: 0,
                length: 128,
                flush_type: 0,
                flush_level: 0,
                payload: Payload::Sges { sge, num: 2 },
            };
            let mut slot = [0xaau8; SEND_WQE_HDR + 2 * SGE_LEN];
            w.encode(&mut slot).unwrap();
            let mut d = SendWqe::decode(&slot, 2, 0).unwrap();
            // Decoding reads every union variant; keep only the one that applies.
            if ah_num != 0 {
                d.remote_addr = 0;
                d.rkey = 0;
                d.compare_add = 0;
                d.swap = 0;
            } else {
                d.remote_qpn = 0;
                d.remote_qkey = 0;
                d.ah_num = 0;
                if opcode != wr::ATOMIC_CMP_AND_SWP {
                    d.compare_add = 0;
                    d.swap = 0;
                }
            }
            assert_eq!(d, w);
        }
    }

    #[test]
    fn bind_round_trip() {
        for opcode in [wr::BIND_MW, wr::REG_MR] {
            let w = SendWqe {
                wr_id: 3,
                opcode,
                flags: send_flags::SIGNALED,
                remote_addr: 0x7f00_1000,
                compare_add: 0x3000,
                swap: (0x0000_0502u64 << 32) | 0x0000_0401,
                rkey: 0x0000_0503,
                access: 0xf,
                ..SendWqe::EMPTY
            };
            let mut slot = [0xaau8; SEND_WQE_HDR + SGE_LEN];
            w.encode(&mut slot).unwrap();
            let d = SendWqe::decode(&slot, 1, 0).unwrap();
            assert_eq!(
                d.bind(),
                Bind {
                    addr: 0x7f00_1000,
                    length: 0x3000,
                    mr_lkey: 0x401,
                    mw_rkey: 0x502,
                    rkey: 0x503,
                    access: 0xf,
                }
            );
            assert!(wr::local(opcode));
        }
        assert!(!wr::local(wr::SEND_WITH_INV) && wr::local(wr::LOCAL_INV));
    }

    #[test]
    fn recv_wqe_round_trip() {
        let mut sge = [Sge::default(); MAX_SGE];
        sge[0] = Sge {
            addr: 0x1000,
            length: 4096,
            lkey: 0x100,
        };
        let w = RecvWqe {
            wr_id: 42,
            sge,
            num: 1,
            length: 4096,
        };
        let mut slot = [0x55u8; RECV_WQE_HDR + SGE_LEN];
        w.encode(&mut slot).unwrap();
        assert_eq!(RecvWqe::decode(&slot, 1).unwrap(), w);
        assert!(w.encode(&mut [0u8; RECV_WQE_HDR]).is_err());
    }

    #[test]
    fn geometry_matches_rxe() {
        // perftest: tx_depth 128, 1 SGE, no inline -> 256 slots of 256 bytes, capacity 255
        let (elem, sge, inl) = sq_elem(1, 0);
        assert_eq!((elem, sge, inl), (224, 1, 16));
        let g = RingGeom::new(128, elem, 1 << 15).unwrap();
        assert_eq!(g.capacity(), 255);
        assert_eq!(g.slot_size(), 256);
        assert_eq!(g.bytes(), 384 + 256 * 256);
        assert_eq!(rq_elem(1), 56);
        assert_eq!(RingGeom::new(1, 56, 16).unwrap().slot_size(), 64);
        assert_eq!(RingGeom::new(1, 56, 16).unwrap().capacity(), 1);
        assert!(RingGeom::new(0, 56, 16).is_none());
        assert!(RingGeom::new(17, 56, 16).is_none());
        let g = RingGeom::new(3, 128, 16).unwrap();
        assert_eq!(g.capacity(), 3);
        assert!(g.full(3, 0));
        assert!(g.full(1, 2));
        assert_eq!(g.count(1, 3), 2);
        assert_eq!(g.next(3), 0);
        assert_eq!(g.slot_off(5), 384 + 128);
    }

    fn send_slot(opcode: u32, flags: u32, sges: &[(u64, u32, u32)]) -> [u8; 1024] {
        let mut b = [0u8; 1024];
        b[0..8].copy_from_slice(&7u64.to_le_bytes());
        b[12..16].copy_from_slice(&opcode.to_le_bytes());
        b[16..20].copy_from_slice(&flags.to_le_bytes());
        b[24..32].copy_from_slice(&0x1000u64.to_le_bytes());
        b[32..36].copy_from_slice(&0xabcdu32.to_le_bytes());
        b[196..200].copy_from_slice(&(sges.len() as u32).to_le_bytes());
        for (i, (a, l, k)) in sges.iter().enumerate() {
            let o = 208 + i * 16;
            b[o..o + 8].copy_from_slice(&a.to_le_bytes());
            b[o + 8..o + 12].copy_from_slice(&l.to_le_bytes());
            b[o + 12..o + 16].copy_from_slice(&k.to_le_bytes());
        }
        b
    }

    #[test]
    fn send_wqe_decodes_and_validates() {
        let b = send_slot(wr::RDMA_WRITE, 2, &[(0x10, 100, 5), (0x20, 28, 5)]);
        let w = SendWqe::decode(&b, 4, 64).unwrap();
        assert_eq!(w.wr_id, 7);
        assert_eq!(w.length, 128);
        assert_eq!(w.remote_addr, 0x1000);
        assert_eq!(w.rkey, 0xabcd);
        assert_eq!(SendWqe::decode(&b, 1, 64), Err(WqeError::TooManySge));
        let big = send_slot(wr::SEND, 0, &[(0, u32::MAX, 1), (0, 2, 1)]);
        assert_eq!(SendWqe::decode(&big, 4, 0), Err(WqeError::LengthOverflow));
        let mut inl = send_slot(wr::SEND, send_flags::INLINE, &[]);
        inl[184..188].copy_from_slice(&100u32.to_le_bytes());
        assert_eq!(SendWqe::decode(&inl, 1, 64), Err(WqeError::InlineTooLong));
        let w = SendWqe::decode(&inl, 1, 128).unwrap();
        assert_eq!(w.length, 100);
        assert_eq!(SendWqe::decode(&b[..100], 4, 64), Err(WqeError::Truncated));
    }

    /// The decoder as first written (a fresh WQE per call): the reference for
    /// `decode_into`.
    fn decode_reference(b: &[u8], max_sge: usize, max_inline: usize) -> Result<SendWqe, WqeError> {
        let opcode = le32(b, 12)?;
        let flags = le32(b, 16)?;
        let num_sge = le32(b, 184 + 12)? as usize;
        let dma_len = le32(b, 184)? as usize;
        let flush = opcode == wr::FLUSH;
        let implicit8 =
            opcode == wr::ATOMIC_WRITE && num_sge == 0 && flags & send_flags::INLINE == 0;
        let payload = if flush {
            Payload::Inline {
                data: [0u8; MAX_INLINE],
                len: 0,
            }
        } else if implicit8 {
            let mut data = [0u8; MAX_INLINE];
            data[..8].copy_from_slice(
                b.get(SEND_WQE_HDR..SEND_WQE_HDR + 8)
                    .ok_or(WqeError::Truncated)?,
            );
            Payload::Inline { data, len: 8 }
        } else if flags & send_flags::INLINE != 0 {
            if dma_len > max_inline.min(MAX_INLINE) {
                return Err(WqeError::InlineTooLong);
            }
            let src = b
                .get(SEND_WQE_HDR..SEND_WQE_HDR + dma_len)
                .ok_or(WqeError::Truncated)?;
            let mut data = [0u8; MAX_INLINE];
            data[..dma_len].copy_from_slice(src);
            Payload::Inline { data, len: dma_len }
        } else {
            if num_sge > max_sge.min(MAX_SGE) {
                return Err(WqeError::TooManySge);
            }
            let mut sge = [Sge::default(); MAX_SGE];
            for (i, s) in sge.iter_mut().enumerate().take(num_sge) {
                *s = Sge::decode(b, SEND_WQE_HDR + i * SGE_LEN).ok_or(WqeError::Truncated)?;
            }
            Payload::Sges { sge, num: num_sge }
        };
        let length = match &payload {
            _ if flush => le32(b, 32)?,
            Payload::Inline { len, .. } => *len as u32,
            Payload::Sges { sge, num } => sge
                .iter()
                .take(*num)
                .try_fold(0u32, |acc, s| acc.checked_add(s.length))
                .ok_or(WqeError::LengthOverflow)?,
        };
        let atomic = opcode == wr::ATOMIC_CMP_AND_SWP || opcode == wr::ATOMIC_FETCH_AND_ADD;
        Ok(SendWqe {
            wr_id: le64(b, 0)?,
            opcode,
            flags,
            ex: le32(b, 20)?,
            remote_addr: le64(b, 24)?,
            rkey: if atomic || wr::binds(opcode) {
                le32(b, 48)?
            } else if flush {
                le32(b, 36)?
            } else {
                le32(b, 32)?
            },
            compare_add: le64(b, 32)?,
            swap: le64(b, 40)?,
            remote_qpn: le32(b, 24)?,
            remote_qkey: le32(b, 28)?,
            ah_num: le32(b, 36)?,
            access: le32(b, 52)?,
            length,
            flush_type: if flush { le32(b, 40)? as u8 } else { 0 },
            flush_level: if flush { (le32(b, 40)? >> 8) as u8 } else { 0 },
            payload,
        })
    }

    /// The receive decoder as first written: the reference for `decode_into`.
    fn recv_reference(b: &[u8], max_sge: usize) -> Result<RecvWqe, WqeError> {
        let num = le32(b, 16 + 12)? as usize;
        if num > max_sge.min(MAX_SGE) {
            return Err(WqeError::TooManySge);
        }
        let mut sge = [Sge::default(); MAX_SGE];
        for (i, s) in sge.iter_mut().enumerate().take(num) {
            *s = Sge::decode(b, RECV_WQE_HDR + i * SGE_LEN).ok_or(WqeError::Truncated)?;
        }
        let length = sge
            .iter()
            .take(num)
            .fold(0u32, |acc, s| acc.saturating_add(s.length));
        Ok(RecvWqe {
            wr_id: le64(b, 0)?,
            sge,
            num,
            length,
        })
    }

    /// A random slot: inline or not, SGE count and inline length around the limits,
    /// lengths that sometimes overflow, and a random slot size (truncation).
    fn arb_slot() -> impl Strategy<Value = Vec<u8>> {
        (
            any::<bool>(),
            prop_oneof![0u32..40, Just(0u32)],
            0u32..600,
            prop::collection::vec(any::<u8>(), 1024),
            0usize..=1024,
            any::<bool>(),
            prop_oneof![
                any::<u32>(),
                Just(wr::FLUSH),
                Just(wr::ATOMIC_WRITE),
                Just(wr::SEND)
            ],
        )
            .prop_map(|(inline, num, dma_len, mut b, size, small, opcode)| {
                let flags = if inline { send_flags::INLINE } else { 0 };
                b[12..16].copy_from_slice(&opcode.to_le_bytes());
                b[16..20].copy_from_slice(&flags.to_le_bytes());
                b[184..188].copy_from_slice(&dma_len.to_le_bytes());
                b[196..200].copy_from_slice(&num.to_le_bytes());
                if small {
                    // Lengths that do not overflow when added.
                    for o in (SEND_WQE_HDR + 8..1024).step_by(SGE_LEN) {
                        b[o + 3] = 0;
                    }
                }
                b.truncate(size);
                b
            })
    }

    proptest! {
        /// Decoding a sequence of slots into one WQE gives, slot by slot, what the
        /// reference decoder gives for each alone; an error leaves the WQE unchanged.
        #[test]
        fn decode_into_matches_reference(
            slots in prop::collection::vec(arb_slot(), 1..12),
            max_sge in 0usize..40,
            max_inline in 0usize..600,
        ) {
            let mut w = SendWqe::EMPTY;
            for b in &slots {
                let before = w;
                let r = w.decode_into(b, max_sge, max_inline);
                let want = decode_reference(b, max_sge, max_inline);
                match want {
                    Ok(x) => {
                        prop_assert_eq!(r, Ok(()));
                        prop_assert_eq!(w, x);
                        prop_assert_eq!(SendWqe::decode(b, max_sge, max_inline), Ok(x));
                    }
                    Err(e) => {
                        prop_assert_eq!(r, Err(e));
                        prop_assert_eq!(w, before);
                    }
                }
            }
        }

        /// The same for receive WQEs (the SGE count sits at byte 28).
        #[test]
        fn recv_decode_into_matches_reference(
            slots in prop::collection::vec(
                (0u32..40, prop::collection::vec(any::<u8>(), 0..600)).prop_map(|(n, mut b)| {
                    if let Some(c) = b.get_mut(28..32) {
                        c.copy_from_slice(&n.to_le_bytes());
                    }
                    b
                }),
                1..12,
            ),
            max_sge in 0usize..40,
        ) {
            let mut w = RecvWqe::EMPTY;
            for b in &slots {
                let before = w;
                let r = w.decode_into(b, max_sge);
                match recv_reference(b, max_sge) {
                    Ok(x) => {
                        prop_assert_eq!(r, Ok(()));
                        prop_assert_eq!(w, x);
                    }
                    Err(e) => {
                        prop_assert_eq!(r, Err(e));
                        prop_assert_eq!(w, before);
                    }
                }
            }
        }
    }

    #[test]
    fn cqe_layout() {
        let c = Cqe {
            wr_id: 0x0102_0304_0506_0708,
            status: 5,
            opcode: 128,
            byte_len: 64,
            ex: 0xaabb_ccdd,
            qp_num: 17,
            src_qp: 3,
            wc_flags: 1,
            port_num: 1,
            net_type: 2,
        };
        let b = c.encode();
        assert_eq!(Cqe::decode(&b), c);
        assert_eq!(&b[0..8], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(b[8], 5);
        assert_eq!(b[12], 128);
        assert_eq!(b[20], 64);
        assert_eq!(b[28], 17);
        assert_eq!(b[36], 1);
        assert_eq!(b[46], 1);
    }
}
