// SPDX-License-Identifier: GPL-2.0
//! The requesting side: one session (TCP control connection, rdma_cm-connected QPs, CQ
//! thread) carries every file and message of one command.

use std::collections::VecDeque;
use std::fs::{self, File, OpenOptions};
use std::io::IsTerminal;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use crate::engine::{self, hash_prefix, Chan, Failure, RemoteRing, Ring};
use crate::rdma::{verify_state, Ev, Link, Poll};
use crate::resume::{resume_offset, Plan};
use crate::wire::{
    read_frame, write_frame, Entry, Frame, Hello, Kind, Message, MsgType, Request, Response,
    Status, FLAG_RESUME, VERSION,
};

#[derive(Clone, Debug)]
pub struct Opts {
    pub port: u16,
    pub qps: usize,
    pub chunk: u32,
    pub slots: u16,
    pub poll: Poll,
    pub resume: bool,
    pub progress: bool,
    pub quiet: bool,
    pub verbose: bool,
    pub idle: Duration,
}

pub struct Session {
    link: Link,
    rx: Receiver<Ev>,
    ctrl: TcpStream,
    pub hello: Hello,
    connected: bool,
    next_id: u32,
    server: String,
    pub opts: Opts,
    /// Bytes moved and files done, for the summary.
    pub bytes: u64,
    pub files: u64,
    pub started: Instant,
    /// Completions that arrived before the response they belong to.
    early: VecDeque<Ev>,
    /// The event queue's sender, given to the CQ thread once the QPs are connected.
    tx: Option<std::sync::mpsc::Sender<Ev>>,
}

fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

impl Session {
    pub fn open(host: &str, opts: &Opts) -> Result<Session, String> {
        let addr: SocketAddr = (host, opts.port)
            .to_socket_addrs()
            .map_err(|e| format!("{host}: {e}"))?
            .next()
            .ok_or_else(|| format!("{host}: no address"))?;
        let mut ctrl = TcpStream::connect_timeout(&addr, Duration::from_secs(10))
            .map_err(|e| format!("connecting to {addr}: {e}"))?;
        ctrl.set_nodelay(true).map_err(|e| e.to_string())?;
        ctrl.set_read_timeout(Some(Duration::from_secs(30)))
            .map_err(|e| e.to_string())?;
        let hello = match read_frame(&mut ctrl) {
            Ok(Some(Frame::Hello(h))) => h,
            Ok(Some(Frame::Abort { text, .. })) => return Err(format!("{host}: {text}")),
            Ok(_) => return Err(format!("{host}: not an rrxe-xfer server")),
            Err(e) => return Err(format!("{host}: {e}")),
        };
        if hello.version != VERSION {
            return Err(format!(
                "{host}: protocol version {} (this is {VERSION})",
                hello.version
            ));
        }
        ctrl.set_read_timeout(None).map_err(|e| e.to_string())?;
        let qps = opts.qps.clamp(1, usize::from(hello.max_qps.max(1)));
        let link = Link::prepare(SocketAddr::new(addr.ip(), hello.cm_port), qps, opts.poll)?;
        let (tx, rx) = channel();
        engine::spawn_reader(ctrl.try_clone().map_err(|e| e.to_string())?, tx.clone());
        let s = Session {
            link,
            rx,
            ctrl,
            hello,
            connected: false,
            next_id: 1,
            server: host.to_string(),
            opts: opts.clone(),
            bytes: 0,
            files: 0,
            started: Instant::now(),
            tx: Some(tx),
            early: VecDeque::new(),
        };
        Ok(s)
    }

    fn chan(&mut self) -> Chan<'_> {
        Chan {
            link: &mut self.link,
            rx: &self.rx,
            early: &mut self.early,
            ctrl: &mut self.ctrl,
            idle: self.opts.idle,
        }
    }

    fn request(&mut self, kind: Kind) -> Request {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        Request {
            kind,
            id,
            buf_size: self.opts.chunk,
            slots: self.opts.slots,
            msg_type: 0,
            offset: 0,
            size: 0,
            mode: 0,
            flags: 0,
            ring_addr: 0,
            ring_rkey: 0,
            qpns: self.link.qps.iter().map(qpn).collect(),
            sender: hostname(),
            receiver: self.server.clone(),
            path: Vec::new(),
            payload: Vec::new(),
        }
    }

    /// Sends the request (connecting the QPs the first time) and waits for its response.
    fn ask(&mut self, r: &Request) -> Result<Response, Failure> {
        write_frame(&mut self.ctrl, &Frame::Request(r.clone()))
            .map_err(|e| Failure::fatal(Status::Io, format!("control connection: {e}")))?;
        if !self.connected {
            if let Err(e) = self.link.connect() {
                // The server may have said why (an abort on the control connection).
                let why = match self.rx.recv_timeout(Duration::from_secs(2)) {
                    Ok(Ev::Ctrl(Frame::Abort { text, .. })) => text,
                    Ok(Ev::Ctrl(Frame::Response(resp))) if resp.status != Status::Ok => resp.text,
                    _ => e,
                };
                return Err(Failure::fatal(Status::Io, why));
            }
            if let Some(tx) = self.tx.take() {
                self.link.start_cq_thread(tx, self.opts.verbose);
            }
            self.connected = true;
        }
        loop {
            match self.rx.recv_timeout(self.opts.idle) {
                Ok(Ev::Ctrl(Frame::Response(resp))) if resp.id == r.id => {
                    return if resp.status == Status::Ok {
                        Ok(resp)
                    } else {
                        Err(Failure::new(resp.status, resp.text))
                    }
                }
                Ok(Ev::Ctrl(Frame::Abort { status, text })) => {
                    return Err(Failure::fatal(status, text))
                }
                Ok(Ev::CtrlClosed(why)) => return Err(Failure::fatal(Status::Io, why)),
                Ok(Ev::Ctrl(f)) => {
                    return Err(Failure::fatal(
                        Status::Protocol,
                        format!("unexpected {f:?}"),
                    ))
                }
                Ok(Ev::Sent { wr_id, .. }) if wr_id == crate::rdma::FIRST_WORD => {}
                Ok(ev @ (Ev::Received { .. } | Ev::Sent { .. })) => self.early.push_back(ev),
                Err(_) => return Err(Failure::fatal(Status::Io, "no response from the server")),
            }
        }
    }

    /// Asks for a message; the receive completion hands it to `decode` (the dispatcher).
    pub fn message(&mut self, t: MsgType, path: &[u8], payload: &[u8]) -> Result<Message, Failure> {
        if payload.len() > crate::wire::MAX_PAYLOAD {
            return Err(Failure::new(
                Status::Invalid,
                format!("message argument over {} bytes", crate::wire::MAX_PAYLOAD),
            ));
        }
        let mut r = self.request(Kind::Message);
        r.msg_type = t as u16;
        r.path = path.to_vec();
        r.payload = payload.to_vec();
        let slot = self.opts.chunk.min(64 << 10);
        let ring = Ring::new(&self.link, slot, 4).map_err(|e| Failure::fatal(Status::Io, e))?;
        r.buf_size = slot;
        r.slots = 4;
        r.ring_addr = ring.region.addr();
        r.ring_rkey = ring.region.rkey();
        let resp = self.ask(&r)?;
        let mut buf = Vec::new();
        let plan = Plan::new(0, resp.size, slot);
        engine::recv(
            &mut self.chan(),
            r.id,
            &mut buf,
            plan,
            &ring,
            engine::checksum(),
            &mut |_| {},
        )?;
        Message::decode(&buf).map_err(|e| Failure::fatal(Status::Protocol, e.to_string()))
    }

    pub fn stat(&mut self, path: &[u8]) -> Result<Entry, Failure> {
        match self.message(MsgType::Stat, path, b"")? {
            Message::Stat(e) => Ok(e),
            _ => Err(Failure::fatal(
                Status::Protocol,
                "stat answered with another message",
            )),
        }
    }

    /// Fetches one remote file to `dest` (through `dest.rrxe-part`).
    pub fn get_file(&mut self, remote: &[u8], dest: &Path, size_hint: u64) -> Result<u64, Failure> {
        let io = |e: std::io::Error| Failure::new(Status::Io, format!("{}: {e}", dest.display()));
        let mut part_path = dest.as_os_str().to_owned();
        part_path.push(".rrxe-part");
        let part_path = PathBuf::from(part_path);
        let mut part = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&part_path)
            .map_err(io)?;
        let have = part.metadata().map_err(io)?.len();
        let offset = if self.opts.resume { have } else { 0 };
        let want = size_hint.saturating_sub(offset).max(1);
        let slot = u64::from(self.opts.chunk).min(want) as u32;
        let slots = (u64::from(self.opts.slots))
            .min(want.div_ceil(u64::from(slot)))
            .max(1) as u16;
        let ring = Ring::new(&self.link, slot, slots).map_err(|e| Failure::fatal(Status::Io, e))?;
        let mut r = self.request(Kind::GetFile);
        r.path = remote.to_vec();
        r.offset = offset;
        r.buf_size = slot;
        r.slots = slots;
        r.ring_addr = ring.region.addr();
        r.ring_rkey = ring.region.rkey();
        let resp = self.ask(&r)?;
        let offset = resume_offset(Some(resp.offset), resp.size);
        part.set_len(offset).map_err(io)?;
        let mut h = engine::checksum();
        hash_prefix(&mut part, offset, &mut h).map_err(io)?;
        let plan = Plan::new(offset, resp.size, slot);
        let name = dest.display().to_string();
        let mut bar = Progress::new(&name, resp.size, offset, self.opts.progress);
        let res = engine::recv(
            &mut self.chan(),
            r.id,
            &mut part,
            plan,
            &ring,
            h,
            &mut |n| bar.add(n),
        );
        bar.finish();
        res?;
        drop(ring);
        let _ = part.set_permissions(fs::Permissions::from_mode(resp.mode & 0o7777));
        drop(part);
        fs::rename(&part_path, dest).map_err(io)?;
        self.bytes += resp.size - offset;
        self.files += 1;
        Ok(resp.size - offset)
    }

    /// Sends one local file to `remote` (the server writes `remote.rrxe-part`, renames
    /// it once the checksum matches).
    pub fn put_file(&mut self, local: &Path, remote: &[u8]) -> Result<u64, Failure> {
        let io = |e: std::io::Error| Failure::new(Status::Io, format!("{}: {e}", local.display()));
        let mut f = File::open(local).map_err(io)?;
        let md = f.metadata().map_err(io)?;
        if !md.is_file() {
            return Err(Failure::new(
                Status::Invalid,
                format!("{}: not a regular file", local.display()),
            ));
        }
        let mut r = self.request(Kind::PutFile);
        r.path = remote.to_vec();
        r.size = md.len();
        r.mode = md.mode() & 0o7777;
        if self.opts.resume {
            r.flags |= FLAG_RESUME;
        }
        let resp = self.ask(&r)?;
        let offset = resume_offset(Some(resp.offset), md.len());
        let mut h = engine::checksum();
        hash_prefix(&mut f, offset, &mut h).map_err(io)?;
        let ring = RemoteRing {
            addr: resp.ring_addr,
            rkey: resp.ring_rkey,
            slot: resp.buf_size,
            slots: resp.slots,
        };
        let plan = Plan::new(offset, md.len(), resp.buf_size);
        let name = local.display().to_string();
        let mut bar = Progress::new(&name, md.len(), offset, self.opts.progress);
        let res = engine::send(&mut self.chan(), r.id, &mut f, plan, ring, h, &mut |n| {
            bar.add(n)
        });
        bar.finish();
        res?;
        self.bytes += md.len() - offset;
        self.files += 1;
        Ok(md.len() - offset)
    }

    pub fn mkdir(&mut self, remote: &[u8]) -> Result<(), Failure> {
        let mut r = self.request(Kind::Mkdir);
        r.path = remote.to_vec();
        self.ask(&r).map(|_| ())
    }

    /// The summary line: bytes, seconds, MB/s, device, QPs, verification.
    pub fn summary(&self) -> String {
        let secs = self.started.elapsed().as_secs_f64();
        let mut s = format!(
            "{} file(s), {} bytes in {:.2} s, {} ({} to {} on {}, {} QP(s), {}",
            self.files,
            self.bytes,
            secs,
            fmt_rate(self.bytes as f64 / secs.max(1e-9)),
            self.link.device,
            self.hello.name,
            self.hello.device,
            self.link.qps.len(),
            self.opts.poll.name(),
        );
        if let Some(v) = verify_state(&self.link.device) {
            s.push_str(&format!(", verified writes: {v}"));
        }
        s.push(')');
        s
    }
}

/// A rate in bytes per second for people: MB/s with one decimal, or kB/s below 1 MB/s (a
/// tree of small files on a slow path would otherwise read "0.0 MB/s").
fn fmt_rate(bps: f64) -> String {
    if bps >= 1e6 {
        format!("{:.1} MB/s", bps / 1e6)
    } else {
        format!("{:.1} kB/s", bps / 1e3)
    }
}

fn qpn(q: &sideway::ibverbs::queue_pair::BasicQueuePair) -> u32 {
    use sideway::ibverbs::queue_pair::QueuePair;
    q.qp_number()
}

/// A one-line progress bar with rate and ETA on a terminal (stderr), nothing elsewhere.
pub struct Progress {
    name: String,
    total: u64,
    done: u64,
    base: u64,
    start: Instant,
    last: Instant,
    on: bool,
}

impl Progress {
    pub fn new(name: &str, total: u64, done: u64, want: bool) -> Progress {
        let now = Instant::now();
        Progress {
            name: name.to_string(),
            total,
            done,
            base: done,
            start: now,
            last: now,
            on: want && std::io::stderr().is_terminal(),
        }
    }
    pub fn add(&mut self, n: u64) {
        self.done += n;
        if self.on && self.last.elapsed() >= Duration::from_millis(100) {
            self.draw();
            self.last = Instant::now();
        }
    }
    fn draw(&self) {
        let t = self.start.elapsed().as_secs_f64().max(1e-6);
        let rate = (self.done - self.base) as f64 / t;
        let pct = (self.done * 100).checked_div(self.total).unwrap_or(100);
        let eta = if rate > 0.0 {
            (self.total - self.done) as f64 / rate
        } else {
            0.0
        };
        let n = self.name.chars().count();
        let name: String = if n > 32 {
            format!("...{}", self.name.chars().skip(n - 29).collect::<String>())
        } else {
            self.name.clone()
        };
        eprint!(
            "\r{name:<32} {pct:>3}% {:>10} {:>12} ETA {}:{:02}  ",
            self.done,
            fmt_rate(rate),
            (eta as u64) / 60,
            (eta as u64) % 60
        );
    }
    pub fn finish(&mut self) {
        if self.on {
            self.draw();
            eprintln!();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fmt_rate;

    #[test]
    fn rate_switches_to_kilobytes_below_one_megabyte() {
        assert_eq!(fmt_rate(1_471_500.0 / 139.36), "10.6 kB/s");
        assert_eq!(fmt_rate(268_435_456.0 / 8.0), "33.6 MB/s");
        assert_eq!(fmt_rate(0.0), "0.0 kB/s");
        assert_eq!(fmt_rate(1e6), "1.0 MB/s");
    }
}
