// SPDX-License-Identifier: GPL-2.0
//! A work item on the module's workqueue that calls back into a driver object (process
//! context, may run on any CPU), and that workqueue: unbound, at normal priority (see
//! [`WorkQueue`]).

use super::gate::Gate;
use crate::sys as b;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::types::Opaque;

/// The module's workqueue, where every [`Work`] runs: unbound (any CPU that is free),
/// at normal priority, usable for memory reclaim. A QP's work item processes received
/// packets and runs the requester, work a softirq would otherwise do, but without a
/// softirq's time budget: at high priority (nice -20), under a stream the debug kernel
/// could not keep up with, other tasks' short commands took twice as long. Created first
/// at module load and destroyed last at unload, after every device (and so every work
/// item) is gone.
pub(crate) struct WorkQueue(());

impl WorkQueue {
    pub(crate) fn create() -> Result<Self> {
        // SAFETY: called once, at module load, before any work item can be queued.
        kernel::error::to_result(unsafe { b::rrxe_wq_create() })?;
        Ok(WorkQueue(()))
    }
}

impl Drop for WorkQueue {
    fn drop(&mut self) {
        // SAFETY: at module unload, after every device and its work items are gone;
        // `destroy_workqueue` drains what is still queued (released memory regions).
        unsafe { b::rrxe_wq_destroy() }
    }
}

/// Runs deferred work.
pub(crate) trait WorkHandler: Sync + 'static {
    /// The work item ran.
    fn work_run(&self);
}

#[repr(C)]
#[pin_data]
struct WorkBox<T> {
    work: Opaque<b::work_struct>,
    ctx: AtomicPtr<T>,
    /// Closed by [`Work::shutdown`] before it cancels the work.
    #[pin]
    gate: Gate,
}

/// A work item bound to an object of type `T` that outlives it: the owner calls
/// [`Work::shutdown`] from process context before the object can go away. Queueing
/// after that does nothing, so a context that still holds the object (a packet in
/// flight) cannot queue it again once it is cancelled.
pub(crate) struct Work<T: WorkHandler>(Pin<KBox<WorkBox<T>>>);

// SAFETY: the work item is driven by the workqueue core; `ctx` is atomic.
unsafe impl<T: WorkHandler> Send for Work<T> {}
// SAFETY: as above.
unsafe impl<T: WorkHandler> Sync for Work<T> {}

/// # Safety
///
/// Called by the workqueue core (process context) for an item set up by [`Work::new`], so
/// `w` is the first field of a pinned `WorkBox<T>`; the owner calls [`Work::shutdown`], which
/// waits for this call, before that box or the object given to [`Work::bind`] (a non-NULL
/// `ctx`) can go away.
unsafe extern "C" fn run<T: WorkHandler>(w: *mut b::work_struct) {
    // SAFETY: `w` is the first field of a live `WorkBox<T>` (shutdown waits for us).
    let wb = unsafe { &*w.cast::<WorkBox<T>>() };
    let ctx = wb.ctx.load(Ordering::Acquire);
    if !ctx.is_null() {
        // SAFETY: `ctx` stays alive until `shutdown` clears it and waits for this call.
        unsafe { (*ctx).work_run() };
    }
}

impl<T: WorkHandler> Work<T> {
    /// An unbound work item.
    pub(crate) fn new() -> Result<Self> {
        let wb = KBox::pin_init(
            pin_init!(WorkBox {
                work: Opaque::zeroed(),
                ctx: AtomicPtr::new(core::ptr::null_mut()),
                gate <- Gate::new(),
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: the box is pinned for the work item's lifetime.
        unsafe { b::rrxe_work_init(wb.work.get(), Some(run::<T>)) };
        Ok(Work(wb))
    }

    /// Binds the work item to `ctx`, which must stay alive until [`Work::shutdown`].
    pub(crate) fn bind(&self, ctx: &T) {
        self.0
            .ctx
            .store(core::ptr::from_ref(ctx).cast_mut(), Ordering::Release);
    }

    /// Queues the work (no-op if already queued, or shut down). Any context.
    pub(crate) fn queue(&self) {
        let work = self.0.work.get();
        self.0.gate.pass(|| {
            // SAFETY: initialised in `new`; `shutdown` cannot close the gate (and then
            // cancel) while this runs.
            unsafe { b::rrxe_work_queue(work) };
        });
    }

    /// Stops the work for good and waits for a running instance (process context).
    pub(crate) fn shutdown(&self) {
        self.0.ctx.store(core::ptr::null_mut(), Ordering::Release);
        self.0.gate.close();
        // SAFETY: initialised in `new`; sleeps until a running instance finishes. Nothing
        // can queue it afterwards (gate closed).
        unsafe { b::cancel_work_sync(self.0.work.get()) };
    }
}
