// SPDX-License-Identifier: GPL-2.0
//! Memory windows: an rkey of its own onto part of a registered MR, bound by BIND_MW work
//! requests (type 1 through librxe's `ibv_bind_mw`, type 2 directly) and, for type 2,
//! invalidated like a fast-registration MR. The rules are the protocol core's
//! ([`crate::proto::mw`]); this keeps the window's state and the MR it is bound to.

use super::Mr;
use crate::kabi::lock::{new_spinlock_irq, SpinLockIrq};
use crate::proto::mw::{BindReq, MrView, MwError, Window};
use kernel::prelude::*;
use kernel::sync::Arc;

/// A memory window.
pub(crate) struct Mw {
    /// The key it was allocated with (its table entry; the current rkey is in `st`).
    pub(crate) key: u32,
    pub(crate) pd: usize,
    /// Its state and the MR it is bound to. Binds run from the requester (softirq or
    /// process context), accesses from the responder.
    st: Pin<KBox<SpinLockIrq<Bound>>>,
}

struct Bound {
    w: Window,
    mr: Option<Arc<Mr>>,
}

impl Bound {
    /// Forgets the MR (the window no longer reaches it).
    fn unbind(&mut self) {
        if let Some(m) = self.mr.take() {
            m.window_unbound();
        }
    }
}

impl Mw {
    /// A new window of PD `pd` with key `rkey`.
    pub(crate) fn new(pd: usize, type2: bool, rkey: u32) -> Result<Arc<Mw>> {
        let st = KBox::pin_init(
            new_spinlock_irq!(Bound {
                w: Window::new(type2, rkey),
                mr: None,
            }),
            GFP_KERNEL,
        )?;
        Ok(Arc::new(Mw { key: rkey, pd, st }, GFP_KERNEL)?)
    }

    /// BIND_MW from a QP (number `qpn`) of PD `pd`; `mr`: the MR the request names, if it
    /// has a length.
    pub(crate) fn bind(
        &self,
        r: &BindReq,
        pd: usize,
        mr: Option<Arc<Mr>>,
        qpn: u32,
    ) -> core::result::Result<(), MwError> {
        let view = mr.as_ref().map(|m| MrView {
            same_pd: m.pd == pd,
            access: m.access as u32,
            iova: m.iova,
            len: m.len,
        });
        let mut st = self.st.lock();
        st.w.bind(r, pd == self.pd, view.as_ref(), qpn)?;
        st.unbind();
        if st.w.len > 0 {
            if let Some(m) = &mr {
                m.window_bound();
            }
            st.mr = mr;
        }
        Ok(())
    }

    /// LOCAL_INV or a SEND with invalidate naming `rkey`.
    pub(crate) fn invalidate(&self, rkey: u32) -> core::result::Result<(), MwError> {
        let mut st = self.st.lock();
        st.w.invalidate(rkey)?;
        st.unbind();
        Ok(())
    }

    /// The MR and the address in it that an access with `rkey` from QP `qpn` of PD `pd`
    /// to `n` bytes at `va`, needing `need`, reaches.
    pub(crate) fn target(
        &self,
        rkey: u32,
        pd: usize,
        qpn: u32,
        need: u32,
        va: u64,
        n: u64,
    ) -> Option<(Arc<Mr>, u64)> {
        let st = self.st.lock();
        let at = st.w.admits(rkey, pd == self.pd, qpn, need, va, n)?;
        Some((st.mr.clone()?, at))
    }

    /// Deallocation: the window lets go of its MR.
    pub(crate) fn release(&self) {
        self.st.lock().unbind();
    }
}
