// SPDX-License-Identifier: GPL-2.0
//! The RDMA side of one control connection: RC QPs connected through rdma_cm (so that
//! RoCE and iWARP devices alike work), one CQ, the receive buffers for chunk notices, and
//! the completion-handling thread that polls the CQ and hands every completion to the
//! connection's event queue.

use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sideway::ibverbs::completion::{BasicCompletionQueue, CompletionChannel, CompletionQueue};
use sideway::ibverbs::device::{DeviceInfo, TransportType};
use sideway::ibverbs::device_context::DeviceContext;
use sideway::ibverbs::memory_region::MemoryRegion;
use sideway::ibverbs::protection_domain::ProtectionDomain;
use sideway::ibverbs::queue_pair::{
    BasicQueuePair, PostSendGuard, QueuePair, QueuePairState, QueuePairType, SetInlineData,
    SetScatterGatherEntry, WorkRequestFlags,
};
use sideway::ibverbs::AccessFlags;
use sideway::rdmacm::communication_manager::{
    BindAddressErrorKind, ConnectionParameter, Event, EventChannel, EventType, Identifier,
    PortSpace,
};

use crate::wire::{Frame, NOTICE_LEN};

pub type Result<T> = std::result::Result<T, String>;

fn err<E: std::fmt::Display>(what: &str) -> impl FnOnce(E) -> String + '_ {
    move |e| format!("{what}: {e}")
}

/// What the connection's thread waits for: completions and control frames.
#[derive(Debug)]
pub enum Ev {
    /// A send-queue completion (WRITE or SEND) with its work-request id.
    Sent {
        wr_id: u64,
        status: u32,
    },
    /// A receive completion: which QP and notice slot, how many bytes.
    Received {
        wr_id: u64,
        status: u32,
        len: u32,
    },
    Ctrl(Frame),
    CtrlClosed(String),
}

/// How the completion-handling thread waits for completions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Poll {
    /// Poll the CQ in a loop, yielding the CPU between empty polls.
    Busy,
    /// Poll in a loop while completions come and for 100 us after the last one, then
    /// sleep on the completion channel until the next one.
    Adaptive,
    /// Sleep on the completion channel whenever the CQ is empty.
    Events,
}

impl Poll {
    /// How the summary line names the mode.
    pub fn name(self) -> &'static str {
        match self {
            Poll::Busy => "busy-polled",
            Poll::Adaptive => "adaptively polled",
            Poll::Events => "completion events",
        }
    }
}

/// How long the adaptive mode keeps polling an empty CQ: longer than a round trip of a
/// small message on a soft-RoCE path, far shorter than a chunk takes to arrive.
pub const SPIN: Duration = Duration::from_micros(100);

/// Work-request ids: a receive names its QP and notice slot.
pub fn recv_wr_id(qp: usize, slot: usize) -> u64 {
    ((qp as u64) << 32) | slot as u64
}
pub fn split_recv_wr_id(wr_id: u64) -> (usize, usize) {
    ((wr_id >> 32) as usize, (wr_id & 0xffff_ffff) as usize)
}

/// ibv_wc_status_str for the statuses a transfer can see.
pub fn status_name(s: u32) -> String {
    let n = match s {
        0 => "success",
        1 => "local length error",
        2 => "local QP operation error",
        4 => "local protection error",
        5 => "work request flushed",
        9 => "remote invalid request",
        10 => "remote access error",
        11 => "remote operation error",
        12 => "transport retry counter exceeded",
        13 => "RNR retry counter exceeded",
        _ => return format!("completion status {s}"),
    };
    n.to_string()
}

/// Work-request id of the iWARP first word (its completion is ignored).
pub const FIRST_WORD: u64 = u64::MAX;

/// How many notice receives each QP keeps posted (and the most chunks in flight).
pub const MAX_DEPTH: usize = 64;
const CQ_DEPTH: u32 = 4096;

/// Registered memory: an owned buffer and its MR, deregistered on drop (the MR first).
pub struct Region {
    mr: Arc<MemoryRegion>,
    buf: Vec<u8>,
}

impl Region {
    pub fn new(pd: &Arc<ProtectionDomain>, len: usize, access: AccessFlags) -> Result<Region> {
        let buf = vec![0u8; len.max(1)];
        // SAFETY: the buffer lives in this struct and is dropped after the MR.
        let mr = unsafe { pd.reg_mr(buf.as_ptr() as usize, buf.len(), access) }
            .map_err(err("registering memory"))?;
        Ok(Region { mr, buf })
    }
    pub fn addr(&self) -> u64 {
        self.buf.as_ptr() as u64
    }
    pub fn lkey(&self) -> u32 {
        self.mr.lkey()
    }
    pub fn rkey(&self) -> u32 {
        self.mr.rkey()
    }
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buf
    }
}

/// The RDMA resources of one connection.
pub struct Link {
    // Field order is drop order: QPs, then the notice MR, the CQ thread's CQ, the PD.
    pub qps: Vec<BasicQueuePair>,
    notices: Region,
    ids: Vec<Arc<Identifier>>,
    pub cq: Arc<BasicCompletionQueue>,
    channel: Option<Arc<CompletionChannel>>,
    poll: Poll,
    pub pd: Arc<ProtectionDomain>,
    _ctx: Arc<DeviceContext>,
    events: Arc<EventChannel>,
    cq_thread: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
    pub device: String,
    /// iWARP: the connection manager moves the QPs past INIT itself, and QP numbers do
    /// not travel on the wire.
    pub iwarp: bool,
    /// The peer's QP numbers, in the order of `qps` (iWARP: unknown, left empty).
    pub remote_qpns: Vec<u32>,
}

/// Waits up to `t` for the next rdma_cm event.
fn next_event(ch: &Arc<EventChannel>, t: Duration) -> Result<Event> {
    let deadline = Instant::now() + t;
    loop {
        match ch.get_cm_event() {
            Ok(e) => return Ok(e),
            Err(e) => {
                if !format!("{e:?}").contains("NoEvent") {
                    return Err(format!("rdma_cm: {e}"));
                }
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err("rdma_cm: timed out waiting for the peer".into());
        }
        let mut pfd = libc::pollfd {
            fd: ch.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(1000) as i32) };
    }
}

fn expect_event(ch: &Arc<EventChannel>, want: EventType, t: Duration) -> Result<Event> {
    let e = next_event(ch, t)?;
    let got = e.event_type();
    if got != want {
        return Err(format!(
            "rdma_cm: expected {want:?}, got {got:?} (status {})",
            e.status()
        ));
    }
    Ok(e)
}

fn new_channel() -> Result<Arc<EventChannel>> {
    let ch = EventChannel::new().map_err(err("rdma_cm event channel (is rdma_ucm loaded?)"))?;
    ch.set_nonblocking(true).map_err(err("rdma_cm"))?;
    Ok(ch)
}

type Resources = (
    Arc<ProtectionDomain>,
    Arc<BasicCompletionQueue>,
    Option<Arc<CompletionChannel>>,
);

/// Protection domain, CQ (with a completion channel unless busy-polled) of a device.
fn resources(ctx: &Arc<DeviceContext>, poll: Poll) -> Result<Resources> {
    let pd = ctx.alloc_pd().map_err(err("allocating a PD"))?;
    let channel = if poll != Poll::Busy {
        let c = CompletionChannel::new(ctx).map_err(err("completion channel"))?;
        c.set_nonblocking(true).map_err(err("completion channel"))?;
        Some(c)
    } else {
        None
    };
    let mut b = ctx.create_cq_builder();
    b.setup_cqe(CQ_DEPTH);
    if let Some(c) = &channel {
        b.setup_comp_channel(c, 0);
    }
    let cq = b.build().map_err(err("creating a CQ"))?;
    Ok((pd, cq, channel))
}

fn new_qp(pd: &Arc<ProtectionDomain>, cq: &Arc<BasicCompletionQueue>) -> Result<BasicQueuePair> {
    pd.create_qp_builder()
        .setup_qp_type(QueuePairType::ReliableConnection)
        .setup_max_send_wr(2 * MAX_DEPTH as u32 + 8)
        .setup_max_recv_wr(MAX_DEPTH as u32 + 8)
        .setup_max_send_sge(1)
        .setup_max_recv_sge(1)
        .setup_max_inline_data(NOTICE_LEN as u32)
        .setup_send_cq(Arc::clone(cq))
        .setup_recv_cq(Arc::clone(cq))
        .build()
        .map_err(err("creating a QP"))
}

/// Moves the QP to `s` with the attributes rdma_cm gives; in INIT the peer may only
/// WRITE (the connection manager would also allow READ and atomics).
fn to_state(id: &Identifier, qp: &mut BasicQueuePair, s: QueuePairState) -> Result<()> {
    let mut attr = id.get_qp_attr(s).map_err(err("rdma_init_qp_attr"))?;
    if s == QueuePairState::Init {
        attr.setup_access_flags(AccessFlags::LocalWrite | AccessFlags::RemoteWrite);
    }
    qp.modify(&attr).map_err(err("modifying the QP"))
}

fn conn_param(qpn: u32) -> ConnectionParameter {
    let mut p = ConnectionParameter::default();
    p.setup_qp_number(qpn);
    p
}

impl Link {
    fn with(
        ctx: Arc<DeviceContext>,
        events_ch: Arc<EventChannel>,
        ids: Vec<Arc<Identifier>>,
        poll: Poll,
    ) -> Result<Link> {
        let (pd, cq, channel) = resources(&ctx, poll)?;
        let notices = Region::new(&pd, wire_notices_len(), AccessFlags::LocalWrite)?;
        Ok(Link {
            qps: Vec::new(),
            notices,
            ids,
            cq,
            channel,
            poll,
            pd,
            device: ctx.name(),
            iwarp: ctx.transport_type() == TransportType::IWarp,
            _ctx: ctx,
            events: events_ch,
            cq_thread: None,
            remote_qpns: Vec::new(),
        })
    }

    /// Requester side, first half: `n` QPs towards `server`, routed and in INIT with
    /// their notice receives posted, not yet connected (their numbers go in the request).
    pub fn prepare(server: SocketAddr, n: usize, poll: Poll) -> Result<Link> {
        let ch = new_channel()?;
        let t = Duration::from_secs(5);
        let mut ids = Vec::new();
        for _ in 0..n {
            let id = ch
                .create_id(PortSpace::Tcp)
                .map_err(err("rdma_create_id"))?;
            id.resolve_addr(None, server, t)
                .map_err(err("resolving the server's address"))?;
            expect_event(&ch, EventType::AddressResolved, t)
                .map_err(|e| format!("{e} (no RDMA device reaches {})", server.ip()))?
                .ack()
                .map_err(err("rdma_cm"))?;
            id.resolve_route(t).map_err(err("resolving the route"))?;
            expect_event(&ch, EventType::RouteResolved, t)?
                .ack()
                .map_err(err("rdma_cm"))?;
            ids.push(id);
        }
        let ctx = ids
            .first()
            .and_then(|id| id.get_device_context())
            .ok_or("rdma_cm bound no RDMA device")?;
        let mut link = Link::with(ctx, ch, ids, poll)?;
        for i in 0..n {
            let mut qp = new_qp(&link.pd, &link.cq)?;
            to_state(&link.ids[i], &mut qp, QueuePairState::Init)?;
            link.qps.push(qp);
            link.post_all_notices(i)?;
        }
        Ok(link)
    }

    /// Requester side, second half: connects every QP (the server accepts once it has
    /// read the request naming them).
    pub fn connect(&mut self) -> Result<()> {
        let t = Duration::from_secs(15);
        for i in 0..self.qps.len() {
            let qpn = self.qps[i].qp_number();
            self.ids[i]
                .connect(conn_param(qpn))
                .map_err(err("rdma_connect"))?;
            let e = next_event(&self.events, t)?;
            match e.event_type() {
                EventType::ConnectResponse => {}
                // iWARP: the connection manager moved the QP to RTS itself.
                EventType::Established if self.iwarp => {
                    e.ack().map_err(err("rdma_cm"))?;
                    self.first_word(i)?;
                    continue;
                }
                EventType::Rejected => {
                    return Err("the server rejected the RDMA connection".into());
                }
                other => return Err(format!("rdma_connect: {other:?} (status {})", e.status())),
            }
            e.ack().map_err(err("rdma_cm"))?;
            to_state(
                &self.ids[i],
                &mut self.qps[i],
                QueuePairState::ReadyToReceive,
            )?;
            to_state(&self.ids[i], &mut self.qps[i], QueuePairState::ReadyToSend)?;
            self.ids[i].establish().map_err(err("rdma_establish"))?;
        }
        Ok(())
    }

    /// iWARP: the initiator speaks first on a new connection (MPA), so each QP of the
    /// requester SENDs one notice of transfer 0, which the server's receiver skips.
    fn first_word(&mut self, qp: usize) -> Result<()> {
        let n = crate::wire::Notice {
            transfer: 0,
            chunk: 0,
            len: 0,
        }
        .encode();
        let q = self.qps.get_mut(qp).ok_or("no such QP")?;
        let mut g = q.start_post_send();
        g.construct_wr(
            FIRST_WORD,
            WorkRequestFlags::Signaled | WorkRequestFlags::Inline,
        )
        .setup_send()
        .setup_inline_data(&n);
        g.post().map_err(err("posting the first SEND"))
    }

    fn post_all_notices(&mut self, qp: usize) -> Result<()> {
        for slot in 0..MAX_DEPTH {
            self.post_notice(qp, slot)?;
        }
        Ok(())
    }

    /// (Re)posts the receive for notice `slot` of QP `qp`.
    pub fn post_notice(&mut self, qp: usize, slot: usize) -> Result<()> {
        let addr = self.notices.addr() + ((qp * MAX_DEPTH + slot) * NOTICE_LEN) as u64;
        let lkey = self.notices.lkey();
        let q = self.qps.get_mut(qp).ok_or("no such QP")?;
        let mut g = q.start_post_recv();
        // SAFETY: the notice buffer is registered and outlives the QP.
        unsafe {
            g.construct_wr(recv_wr_id(qp, slot))
                .setup_sge(lkey, addr, NOTICE_LEN as u32)
        };
        g.post().map_err(err("posting a receive"))
    }

    /// The notice that arrived in `slot` of QP `qp`.
    pub fn notice(&self, qp: usize, slot: usize) -> Option<&[u8]> {
        let at = (qp.checked_mul(MAX_DEPTH)?.checked_add(slot)?).checked_mul(NOTICE_LEN)?;
        self.notices.bytes().get(at..at + NOTICE_LEN)
    }

    /// RDMA WRITE of `len` bytes from `src` at `off` to the peer's `raddr`/`rkey`
    /// (unsignaled), then the notice, SENT inline and signaled with `wr_id`.
    #[allow(clippy::too_many_arguments)]
    pub fn write_and_notify(
        &mut self,
        qp: usize,
        src: &Region,
        off: usize,
        len: u32,
        rkey: u32,
        raddr: u64,
        notice: &[u8],
        wr_id: u64,
    ) -> Result<()> {
        let lkey = src.lkey();
        let laddr = src.addr() + off as u64;
        let q = self.qps.get_mut(qp).ok_or("no such QP")?;
        let mut g = q.start_post_send();
        if len > 0 {
            // SAFETY: the source region is registered and outlives the request.
            unsafe {
                g.construct_wr(wr_id, WorkRequestFlags::none())
                    .setup_write(rkey, raddr)
                    .setup_sge(lkey, laddr, len)
            };
        }
        g.construct_wr(wr_id, WorkRequestFlags::Signaled | WorkRequestFlags::Inline)
            .setup_send()
            .setup_inline_data(notice);
        g.post().map_err(err("posting RDMA WRITE and SEND"))
    }

    /// Starts the completion-handling thread: it polls the CQ as [`Poll`] says and turns
    /// every completion into an `Ev` on `tx`.
    pub fn start_cq_thread(&mut self, tx: Sender<Ev>, verbose: bool) {
        let stop = Arc::new(AtomicBool::new(false));
        let cq = Arc::clone(&self.cq);
        let ch = self.channel.clone();
        let s = Arc::clone(&stop);
        let poll = self.poll;
        let h = std::thread::spawn(move || cq_loop(cq, ch, poll, tx, s, verbose));
        self.cq_thread = Some((stop, h));
    }

    pub fn stop_cq_thread(&mut self) {
        if let Some((stop, h)) = self.cq_thread.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = h.join();
        }
    }

    /// Server side: binds a listener of this connection's own to `ip` (the first free
    /// port from `base`), so every RDMA connection it accepts belongs to it.
    pub fn listen(ip: IpAddr, base: u16, span: u16, poll: Poll) -> Result<(Link, u16)> {
        let ch = new_channel()?;
        let id = ch
            .create_id(PortSpace::Tcp)
            .map_err(err("rdma_create_id"))?;
        let mut port = None;
        for p in base..base.saturating_add(span) {
            match id.bind_addr(SocketAddr::new(ip, p)) {
                Ok(()) => {
                    port = Some(p);
                    break;
                }
                // Taken: try the next one. Anything else (no RDMA device on that
                // address, say) would fail on every port: report it as it is.
                Err(e) => {
                    let os = match &e.source {
                        BindAddressErrorKind::Rdmacm(os) => os.raw_os_error(),
                        _ => None,
                    };
                    if os != Some(libc::EADDRINUSE) {
                        return Err(format!("rdma_bind_addr {ip}:{p}: {}", e.source));
                    }
                }
            }
        }
        let port =
            port.ok_or_else(|| format!("no free rdma_cm port in {base}..{}", base + span))?;
        id.listen(8).map_err(err("rdma_listen"))?;
        let ctx = id
            .get_device_context()
            .ok_or_else(|| format!("no RDMA device on {ip}"))?;
        Ok((Link::with(ctx, ch, vec![id], poll)?, port))
    }

    /// Server side: accepts `n` connections on the listener and returns the peer's QP
    /// numbers in order.
    pub fn accept(&mut self, n: usize, t: Duration) -> Result<()> {
        let mut pending = 0usize;
        let mut accepted = 0usize;
        let deadline = Instant::now() + t;
        while accepted < n || pending > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            let e = next_event(&self.events, left)?;
            match e.event_type() {
                EventType::ConnectRequest if accepted < n => {
                    let id = e.cm_id().ok_or("rdma_cm: request without an id")?;
                    e.ack().map_err(err("rdma_cm"))?;
                    let mut qp = new_qp(&self.pd, &self.cq)?;
                    to_state(&id, &mut qp, QueuePairState::Init)?;
                    self.qps.push(qp);
                    let i = self.qps.len() - 1;
                    self.post_all_notices(i)?;
                    if !self.iwarp {
                        to_state(&id, &mut self.qps[i], QueuePairState::ReadyToReceive)?;
                        let attr = id
                            .get_qp_attr(QueuePairState::ReadyToReceive)
                            .map_err(err("rdma_init_qp_attr"))?;
                        self.remote_qpns.push(attr.dest_qp_num());
                        to_state(&id, &mut self.qps[i], QueuePairState::ReadyToSend)?;
                    }
                    id.accept(conn_param(self.qps[i].qp_number()))
                        .map_err(err("rdma_accept"))?;
                    self.ids.push(id);
                    accepted += 1;
                    pending += 1;
                }
                EventType::Established => {
                    pending = pending.saturating_sub(1);
                    e.ack().map_err(err("rdma_cm"))?;
                }
                other => {
                    return Err(format!(
                        "rdma_cm: {other:?} (status {}) while accepting",
                        e.status()
                    ))
                }
            }
        }
        Ok(())
    }
}

fn wire_notices_len() -> usize {
    crate::wire::MAX_QPS * MAX_DEPTH * NOTICE_LEN
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop_cq_thread();
        for id in self.ids.iter().skip(1) {
            let _ = id.disconnect();
        }
        if let Some(id) = self.ids.first() {
            let _ = id.disconnect();
        }
        self.qps.clear();
    }
}

fn cq_loop(
    cq: Arc<BasicCompletionQueue>,
    ch: Option<Arc<CompletionChannel>>,
    poll: Poll,
    tx: Sender<Ev>,
    stop: Arc<AtomicBool>,
    verbose: bool,
) {
    use rdma_mummy_sys as sys;
    // SAFETY: the CQ outlives this thread (we hold an Arc).
    let raw = unsafe { cq.cq().as_ptr() };
    // SAFETY: `ibv_wc` is plain C data (integers, enums for which 0 is a value:
    // IBV_WC_SUCCESS, IBV_WC_SEND, and a union of integers): all zeros is a valid value.
    // The array is this thread's own.
    let mut wcs: [sys::ibv_wc; 32] = unsafe { std::mem::zeroed() };
    // The CQ is armed only before sleeping on the channel, and polled once more after
    // arming: a completion that came in between is found by that poll, any later one
    // wakes the sleep.
    let mut armed = false;
    let mut last = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        // SAFETY: as above.
        let n = unsafe { sys::ibv_poll_cq(raw, wcs.len() as i32, wcs.as_mut_ptr()) };
        if n < 0 {
            let _ = tx.send(Ev::CtrlClosed("polling the CQ failed".into()));
            return;
        }
        for wc in wcs.iter().take(n as usize) {
            let ev = if wc.opcode & sys::ibv_wc_opcode::IBV_WC_RECV != 0 {
                Ev::Received {
                    wr_id: wc.wr_id,
                    status: wc.status,
                    len: wc.byte_len,
                }
            } else {
                if verbose {
                    eprintln!(
                        "rrxe-xfer: send completion wr {:#x} QP {:#x}: {}",
                        wc.wr_id,
                        wc.qp_num,
                        status_name(wc.status)
                    );
                }
                Ev::Sent {
                    wr_id: wc.wr_id,
                    status: wc.status,
                }
            };
            if tx.send(ev).is_err() {
                return;
            }
        }
        if n > 0 {
            last = Instant::now();
            continue;
        }
        match &ch {
            None => std::thread::yield_now(),
            Some(_) if poll == Poll::Adaptive && last.elapsed() < SPIN => std::hint::spin_loop(),
            Some(_) if !armed => {
                // SAFETY: a valid CQ.
                unsafe { sys::ibv_req_notify_cq(raw, 0) };
                armed = true;
            }
            Some(c) => {
                let mut pfd = libc::pollfd {
                    fd: c.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                if unsafe { libc::poll(&mut pfd, 1, 100) } > 0 {
                    let mut ev_cq: *mut sys::ibv_cq = std::ptr::null_mut();
                    let mut ev_ctx: *mut libc::c_void = std::ptr::null_mut();
                    // SAFETY: a valid, non-blocking completion channel.
                    if unsafe {
                        sys::ibv_get_cq_event(c.comp_channel().as_ptr(), &mut ev_cq, &mut ev_ctx)
                    } == 0
                    {
                        // SAFETY: the event is for our CQ.
                        unsafe { sys::ibv_ack_cq_events(raw, 1) };
                        armed = false;
                    }
                }
            }
        }
    }
}

/// Whether the local device verifies RDMA WRITEs towards peers that accept (rrxe's
/// `/sys/kernel/debug/rrxe-<dev>/verify/enable`), with its count of WRITEs verified so
/// far (the `verify_ok` port counter); None when the driver has no such setting.
pub fn verify_state(device: &str) -> Option<String> {
    let on =
        std::fs::read_to_string(format!("/sys/kernel/debug/rrxe-{device}/verify/enable")).ok()?;
    let on = if on.trim() == "0" { "off" } else { "on" };
    let ok = std::fs::read_to_string(format!(
        "/sys/class/infiniband/{device}/ports/1/hw_counters/verify_ok"
    ));
    Some(match ok {
        Ok(n) => format!("{on}, {} verified so far", n.trim()),
        Err(_) => on.to_string(),
    })
}
