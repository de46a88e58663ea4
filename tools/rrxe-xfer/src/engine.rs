// SPDX-License-Identifier: GPL-2.0
//! Moving one file or message: the sender RDMA-WRITEs chunk `i` into slot `i % slots` of
//! the receiver's registered ring over QP `i % qps` and SENDs a notice behind it; the
//! receiver's completion thread hands each notice's receive completion over, and the
//! receiver writes the slot to the file (or message buffer) in chunk order, hashes it and
//! returns the slot as a cumulative credit over TCP. The sender keeps a pool of
//! registered buffers, so reading the file, the WRITEs and the receiver's writing overlap.
//! At the end the sender sends its checksum (xxh64 of the whole file), and the receiver
//! answers with its verdict.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::net::TcpStream;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use sideway::ibverbs::AccessFlags;
use xxhash_rust::xxh64::Xxh64;

use crate::rdma::{split_recv_wr_id, status_name, Ev, Link, Region};
use crate::resume::Plan;
use crate::wire::{write_frame, Frame, Notice, Status};

/// Where a transfer's bytes come from.
pub trait Source {
    fn read_at(&mut self, off: u64, buf: &mut [u8]) -> io::Result<()>;
}
/// Where they go.
pub trait Sink {
    fn write_at(&mut self, off: u64, buf: &[u8]) -> io::Result<()>;
}

impl Source for File {
    fn read_at(&mut self, off: u64, buf: &mut [u8]) -> io::Result<()> {
        self.read_exact_at(buf, off)
    }
}
impl Sink for File {
    fn write_at(&mut self, off: u64, buf: &[u8]) -> io::Result<()> {
        self.write_all_at(buf, off)
    }
}
impl Source for &[u8] {
    fn read_at(&mut self, off: u64, buf: &mut [u8]) -> io::Result<()> {
        let s = usize::try_from(off).map_err(|_| io::ErrorKind::InvalidInput)?;
        let src = self
            .get(s..s + buf.len())
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(src);
        Ok(())
    }
}
impl Sink for Vec<u8> {
    fn write_at(&mut self, off: u64, buf: &[u8]) -> io::Result<()> {
        let s = usize::try_from(off).map_err(|_| io::ErrorKind::InvalidInput)?;
        if self.len() < s + buf.len() {
            self.resize(s + buf.len(), 0);
        }
        self[s..s + buf.len()].copy_from_slice(buf);
        Ok(())
    }
}

/// A failed transfer: the status for the peer and the text for the user.
#[derive(Debug)]
pub struct Failure {
    pub status: Status,
    pub text: String,
    /// The control connection or the QPs can no longer be trusted.
    pub fatal: bool,
}

impl Failure {
    pub fn new(status: Status, text: impl Into<String>) -> Failure {
        Failure {
            status,
            text: text.into(),
            fatal: false,
        }
    }
    pub fn fatal(status: Status, text: impl Into<String>) -> Failure {
        Failure {
            status,
            text: text.into(),
            fatal: true,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The receiver's ring, registered for remote writes by the peer only.
pub struct Ring {
    pub region: Region,
    pub slot: u32,
    pub slots: u16,
}

impl Ring {
    pub fn new(link: &Link, slot: u32, slots: u16) -> Result<Ring, String> {
        let len = slot as usize * slots as usize;
        let region = Region::new(
            &link.pd,
            len,
            AccessFlags::LocalWrite | AccessFlags::RemoteWrite,
        )?;
        Ok(Ring {
            region,
            slot,
            slots,
        })
    }
}

/// The peer's ring as its request or response described it.
#[derive(Debug, Clone, Copy)]
pub struct RemoteRing {
    pub addr: u64,
    pub rkey: u32,
    pub slot: u32,
    pub slots: u16,
}

/// What both directions share: the link, the event queue and the control stream.
pub struct Chan<'a> {
    pub link: &'a mut Link,
    pub rx: &'a Receiver<Ev>,
    /// Events that came while the caller waited for something else (a notice that
    /// overtook the response to its request), handled first.
    pub early: &'a mut VecDeque<Ev>,
    pub ctrl: &'a mut TcpStream,
    /// Longest wait for any progress before the peer is taken for gone.
    pub idle: Duration,
}

impl Chan<'_> {
    pub fn send(&mut self, f: &Frame) -> Result<(), Failure> {
        write_frame(self.ctrl, f)
            .map_err(|e| Failure::fatal(Status::Io, format!("control connection: {e}")))
    }
    fn next(&mut self) -> Result<Ev, Failure> {
        let ev = match self.early.pop_front() {
            Some(ev) => Ok(ev),
            None => self.rx.recv_timeout(self.idle),
        };
        match ev {
            Ok(Ev::CtrlClosed(why)) => Err(Failure::fatal(Status::Io, why)),
            Ok(Ev::Ctrl(Frame::Abort { status, text })) => {
                Err(Failure::fatal(status, format!("peer aborted: {text}")))
            }
            Ok(ev) => Ok(ev),
            Err(RecvTimeoutError::Timeout) => Err(Failure::fatal(
                Status::Io,
                format!("no progress for {} s: peer gone", self.idle.as_secs()),
            )),
            Err(RecvTimeoutError::Disconnected) => {
                Err(Failure::fatal(Status::Io, "connection closed"))
            }
        }
    }
    /// Tells the peer why we stop (best effort) and passes the failure on.
    pub fn abort(&mut self, f: Failure) -> Failure {
        let _ = write_frame(
            self.ctrl,
            &Frame::Abort {
                status: f.status,
                text: f.text.clone(),
            },
        );
        f
    }
}

/// The end-to-end checksum: xxh64, seed 0. Its scalar loop also runs fast where SIMD is
/// emulated (QEMU's TCG ran xxh3's SSE2 loop at 0.3 GB/s and this one at 3-4 GB/s);
/// natively both outrun a memory copy.
pub type Checksum = Xxh64;

/// A checksum of nothing yet.
pub fn checksum() -> Checksum {
    Xxh64::new(0)
}

/// Hashes `src` over `0..n` (the prefix a resumed transfer does not move).
pub fn hash_prefix(src: &mut dyn Source, n: u64, h: &mut Checksum) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < n {
        let k = (n - at).min(buf.len() as u64) as usize;
        src.read_at(at, &mut buf[..k])?;
        h.update(&buf[..k]);
        at += k as u64;
    }
    Ok(())
}

/// Most registered send buffers one transfer uses.
const POOL: usize = 8;

/// Sends `plan`'s chunks of `src` into the peer's ring; `h` already holds the prefix.
/// Returns once the receiver's verdict is in and every buffer is back.
pub fn send(
    ch: &mut Chan<'_>,
    id: u32,
    src: &mut dyn Source,
    plan: Plan,
    ring: RemoteRing,
    mut h: Checksum,
    progress: &mut dyn FnMut(u64),
) -> Result<(), Failure> {
    let n = plan.count();
    let slots = u64::from(ring.slots.max(1));
    let slot = plan.chunk.min(u64::from(ring.slot)) as usize;
    if plan.chunk > u64::from(ring.slot) || ring.slots == 0 {
        return Err(Failure::new(
            Status::Invalid,
            "chunk larger than the peer's slot",
        ));
    }
    let pool = (POOL as u64).min(n.max(1)).min(slots) as usize;
    let mut bufs = Region::new(&ch.link.pd, slot * pool, AccessFlags::none())
        .map_err(|e| Failure::new(Status::Io, e))?;
    let mut free: Vec<usize> = (0..pool).rev().collect();
    // A buffer is reused once its SEND completed and the receiver has written the chunk
    // it held (a credit past it): siw completes a WRITE when its pages are handed to
    // TCP, and the bytes must not change before they are on their way.
    let mut held: Vec<Option<u64>> = vec![None; pool];
    let mut sent: Vec<bool> = vec![true; pool];
    let nqp = ch.link.qps.len().max(1) as u64;
    let (mut next, mut credit) = (0u64, 0u64);
    let mut done_sent = false;
    let mut verdict: Option<(Status, String)> = None;
    // Frames that came after the verdict (the requester's next request, while the last
    // send completions are still on their way): left for the caller.
    let mut later = Vec::new();
    loop {
        for b in 0..pool {
            if sent[b] && held[b].is_some_and(|k| k < credit) {
                held[b] = None;
                free.push(b);
            }
        }
        while next < n && next < credit + slots {
            let Some(b) = free.pop() else { break };
            let Some((off, len)) = plan.chunk(next) else {
                break;
            };
            let at = b * slot..b * slot + len as usize;
            let dst = &mut bufs.bytes_mut()[at.clone()];
            src.read_at(off, dst).map_err(|e| {
                let text = match e.kind() {
                    io::ErrorKind::UnexpectedEof => "the file shrank while being sent".into(),
                    _ => format!("reading: {e}"),
                };
                ch.abort(Failure::fatal(Status::Io, text))
            })?;
            let notice = Notice {
                transfer: id,
                chunk: next,
                len,
            }
            .encode();
            let raddr = ring.addr + (next % slots) * u64::from(ring.slot);
            ch.link
                .write_and_notify(
                    (next % nqp) as usize,
                    &bufs,
                    b * slot,
                    len,
                    ring.rkey,
                    raddr,
                    &notice,
                    b as u64,
                )
                .map_err(|e| ch.abort(Failure::fatal(Status::Io, e)))?;
            // Hashed while the provider moves it: a WRITE only reads the buffer.
            h.update(&bufs.bytes()[at]);
            held[b] = Some(next);
            sent[b] = false;
            progress(u64::from(len));
            next += 1;
        }
        if next == n && !done_sent {
            ch.send(&Frame::Done {
                size: plan.size,
                hash: h.digest(),
            })?;
            done_sent = true;
        }
        if free.len() == pool {
            if let Some((status, text)) = verdict.take() {
                for ev in later.into_iter().rev() {
                    ch.early.push_front(ev);
                }
                return if status == Status::Ok {
                    Ok(())
                } else {
                    Err(Failure::new(status, format!("receiver: {text}")))
                };
            }
        }
        match ch.next()? {
            Ev::Sent { wr_id, status } => {
                if status != 0 {
                    return Err(ch.abort(Failure::fatal(
                        Status::Io,
                        format!("RDMA WRITE/SEND failed: {}", status_name(status)),
                    )));
                }
                if let Some(x) = sent.get_mut(wr_id as usize) {
                    *x = true;
                }
            }
            Ev::Received { status, .. } if status != 0 => {
                return Err(Failure::fatal(
                    Status::Io,
                    format!("receive failed: {}", status_name(status)),
                ))
            }
            Ev::Received { wr_id, .. } => {
                let (q, s) = split_recv_wr_id(wr_id);
                ch.link
                    .post_notice(q, s)
                    .map_err(|e| Failure::fatal(Status::Io, e))?;
            }
            Ev::Ctrl(Frame::Credit(c)) => credit = credit.max(c.min(n)),
            Ev::Ctrl(Frame::Verdict { status, text }) if done_sent && verdict.is_none() => {
                verdict = Some((status, text))
            }
            Ev::Ctrl(f) if verdict.is_some() => later.push(Ev::Ctrl(f)),
            Ev::Ctrl(f) => {
                return Err(ch.abort(Failure::fatal(
                    Status::Protocol,
                    format!("unexpected {f:?} while sending"),
                )))
            }
            Ev::CtrlClosed(_) => unreachable_closed()?,
        }
    }
}

fn unreachable_closed() -> Result<(), Failure> {
    Err(Failure::fatal(Status::Io, "connection closed"))
}

/// Receives `plan`'s chunks into `ring` and writes them to `sink` in order; `h` already
/// holds the prefix. Checks size and checksum against the sender's and sends the verdict.
pub fn recv(
    ch: &mut Chan<'_>,
    id: u32,
    sink: &mut dyn Sink,
    plan: Plan,
    ring: &Ring,
    mut h: Checksum,
    progress: &mut dyn FnMut(u64),
) -> Result<(), Failure> {
    let n = plan.count();
    let slots = u64::from(ring.slots.max(1));
    let mut arrived: Vec<Option<u64>> = vec![None; slots as usize];
    let mut next = 0u64;
    let mut done: Option<(u64, u64)> = None;
    loop {
        if next == n {
            if let Some((size, hash)) = done {
                let digest = h.digest();
                let (status, text) = if size != plan.size {
                    (
                        Status::Checksum,
                        format!(
                            "size mismatch: sender has {size} B, receiver {} B",
                            plan.size
                        ),
                    )
                } else if hash != digest {
                    (
                        Status::Checksum,
                        format!("checksum mismatch: sender {hash:016x}, receiver {digest:016x}"),
                    )
                } else {
                    (Status::Ok, String::new())
                };
                ch.send(&Frame::Verdict {
                    status,
                    text: text.clone(),
                })?;
                return if status == Status::Ok {
                    Ok(())
                } else {
                    Err(Failure::new(status, text))
                };
            }
        }
        match ch.next()? {
            Ev::Received { status, .. } if status != 0 => {
                return Err(ch.abort(Failure::fatal(
                    Status::Io,
                    format!("receive failed: {}", status_name(status)),
                )))
            }
            Ev::Received { wr_id, len, .. } => {
                let (q, s) = split_recv_wr_id(wr_id);
                let raw = ch
                    .link
                    .notice(q, s)
                    .and_then(|b| b.get(..len.min(b.len() as u32) as usize))
                    .map(<[u8]>::to_vec)
                    .unwrap_or_default();
                ch.link
                    .post_notice(q, s)
                    .map_err(|e| Failure::fatal(Status::Io, e))?;
                let nt = Notice::decode(&raw)
                    .map_err(|e| ch.abort(Failure::fatal(Status::Protocol, e.to_string())))?;
                if nt.transfer != id {
                    continue; // a notice of an earlier, abandoned transfer
                }
                let expect = plan.chunk(nt.chunk).map(|c| c.1);
                if nt.chunk < next || nt.chunk >= next + slots || expect != Some(nt.len) {
                    return Err(ch.abort(Failure::fatal(
                        Status::Protocol,
                        format!(
                            "notice for chunk {} of {n} out of order or of a wrong length",
                            nt.chunk
                        ),
                    )));
                }
                arrived[(nt.chunk % slots) as usize] = Some(nt.chunk);
                let start = next;
                while arrived[(next % slots) as usize] == Some(next) {
                    arrived[(next % slots) as usize] = None;
                    let Some((off, l)) = plan.chunk(next) else {
                        break;
                    };
                    let at = ((next % slots) * u64::from(ring.slot)) as usize;
                    let data = &ring.region.bytes()[at..at + l as usize];
                    sink.write_at(off, data).map_err(|e| {
                        ch.abort(Failure::fatal(Status::Io, format!("writing: {e}")))
                    })?;
                    h.update(data);
                    progress(u64::from(l));
                    next += 1;
                }
                if next > start {
                    ch.send(&Frame::Credit(next))?;
                }
            }
            Ev::Sent { status, .. } if status != 0 => {
                return Err(Failure::fatal(Status::Io, status_name(status)))
            }
            Ev::Sent { .. } => {}
            Ev::Ctrl(Frame::Done { size, hash }) => done = Some((size, hash)),
            Ev::Ctrl(f) => {
                return Err(ch.abort(Failure::fatal(
                    Status::Protocol,
                    format!("unexpected {f:?} while receiving"),
                )))
            }
            Ev::CtrlClosed(_) => unreachable_closed()?,
        }
    }
}

/// Spawns the thread that reads control frames and queues them as events.
pub fn spawn_reader(mut s: TcpStream, tx: std::sync::mpsc::Sender<Ev>) {
    std::thread::spawn(move || loop {
        match crate::wire::read_frame(&mut s) {
            Ok(Some(f)) => {
                if tx.send(Ev::Ctrl(f)).is_err() {
                    return;
                }
            }
            Ok(None) => {
                let _ = tx.send(Ev::CtrlClosed("the peer closed the connection".into()));
                return;
            }
            Err(e) => {
                let _ = tx.send(Ev::CtrlClosed(format!("control connection: {e}")));
                return;
            }
        }
    });
}
