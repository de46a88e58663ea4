// SPDX-License-Identifier: GPL-2.0
//! Memory regions: registered user pages (or, for a kernel PD's DMA MR, kernel virtual
//! addresses), with the bounds checks every access goes through.

use super::access;
use crate::kabi::mem::{KernelVa, Umem};
use kernel::prelude::*;
use kernel::sync::Arc;

/// A registered user memory region.
pub(crate) struct Mr {
    pub(crate) key: u32,
    pub(crate) pd: usize,
    pub(crate) access: i32,
    pub(crate) iova: u64,
    pub(crate) len: u64,
    mem: MrMem,
}

/// What an MR's addresses refer to.
enum MrMem {
    /// Pinned user pages; `first_off` is the start's offset in the first page.
    User { umem: Umem, first_off: usize },
    /// Kernel virtual addresses (the DMA MR of a kernel PD).
    Kernel,
}

impl Mr {
    pub(crate) fn new(
        key: u32,
        pd: usize,
        access: i32,
        start: u64,
        len: u64,
        iova: u64,
        umem: Umem,
    ) -> Result<Arc<Mr>> {
        let page = kernel::page::PAGE_SIZE as u64;
        let first_off = (start % page) as usize;
        Ok(Arc::new(
            Mr {
                key,
                pd,
                access,
                iova,
                len,
                mem: MrMem::User { umem, first_off },
            },
            GFP_KERNEL,
        )?)
    }

    /// The DMA MR of kernel PD `pd`: local access to kernel virtual addresses only (a
    /// remote peer must never reach kernel memory through it).
    pub(crate) fn new_dma(key: u32, pd: usize) -> Result<Arc<Mr>> {
        Ok(Arc::new(
            Mr {
                key,
                pd,
                access: access::LOCAL_WRITE,
                iova: 0,
                len: u64::MAX,
                mem: MrMem::Kernel,
            },
            GFP_KERNEL,
        )?)
    }

    /// Offset of `[va, va + n)` from the MR's start, if the range lies in the MR.
    fn offset(&self, va: u64, n: usize) -> Option<usize> {
        let rel = va.checked_sub(self.iova)?;
        let end = rel.checked_add(n as u64)?;
        if end > self.len {
            return None;
        }
        usize::try_from(rel).ok()
    }

    /// Copies `buf` into the MR at `va`.
    pub(crate) fn write(&self, va: u64, buf: &[u8]) -> Option<()> {
        let off = self.offset(va, buf.len())?;
        match &self.mem {
            MrMem::User { umem, first_off } => umem.copy_in(off.checked_add(*first_off)?, buf),
            MrMem::Kernel => KernelVa::write(va, buf),
        }
    }

    /// Copies from the MR at `va` into `buf`.
    pub(crate) fn read(&self, va: u64, buf: &mut [u8]) -> Option<()> {
        let off = self.offset(va, buf.len())?;
        match &self.mem {
            MrMem::User { umem, first_off } => umem.copy_out(off.checked_add(*first_off)?, buf),
            MrMem::Kernel => KernelVa::read(va, buf),
        }
    }

    /// The CRC32C of the MR's bytes `[va, va + n)`, read where they are. `None` if the
    /// range is not in the MR.
    pub(crate) fn crc32c(&self, va: u64, n: u32) -> Option<u32> {
        use crate::proto::verify::{crc_finish, CRC_INIT};
        let n = n as usize;
        let off = self.offset(va, n)?;
        let raw = match &self.mem {
            MrMem::User { umem, first_off } => {
                umem.crc32c(off.checked_add(*first_off)?, n, CRC_INIT)
            }
            MrMem::Kernel => KernelVa::crc32c(va, n, CRC_INIT),
        }?;
        Some(crc_finish(raw))
    }

    /// ATOMIC WRITE: stores the 8 bytes `v` at `va` as one access (IBTA A19.4.2: no
    /// reader sees half of it). `None` if out of range or not 8-byte aligned.
    pub(crate) fn store8(&self, va: u64, v: [u8; 8]) -> Option<()> {
        let off = self.offset(va, 8)?;
        let v = u64::from_ne_bytes(v);
        match &self.mem {
            MrMem::User { umem, first_off } => umem.store8(off.checked_add(*first_off)?, v),
            MrMem::Kernel => KernelVa::store8(va, v),
        }
    }

    /// Fault injection: flips the bits of one byte of `[va, va + n)` chosen by `r`.
    pub(crate) fn corrupt(&self, va: u64, n: u32, r: u32) -> Option<()> {
        if n == 0 {
            return Some(());
        }
        let at = va.checked_add(u64::from(r % n))?;
        let mut b = [0u8];
        self.read(at, &mut b)?;
        let [x] = b;
        self.write(at, &[!x])
    }

    /// Whether `[va, va + n)` lies in the MR.
    pub(crate) fn covers(&self, va: u64, n: u64) -> bool {
        usize::try_from(n)
            .ok()
            .and_then(|n| self.offset(va, n))
            .is_some()
    }
}
