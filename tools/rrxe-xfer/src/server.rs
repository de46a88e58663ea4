// SPDX-License-Identifier: GPL-2.0
//! `rrxe-xfer serve`: answers requests for files and messages below one directory.
//!
//! Each TCP connection gets its own rdma_cm listener (its port is in the hello), its QPs
//! (accepted when the first request names them; later requests must name the same ones),
//! CQ and completion thread. Memory is registered per transfer (send buffers with no
//! remote access, a receive ring with remote write only) and deregistered after it; the
//! registered bytes of all connections together, the number of connections, QPs per
//! connection, slot size and ring depth are bounded. A client that vanishes ends its
//! connection (TCP end, completion error or no progress for `--idle` seconds) and nothing
//! else.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::confine::{relative, PathError, Root};
use crate::engine::{self, hash_prefix, Chan, Failure, RemoteRing, Ring};
use crate::rdma::{verify_state, Ev, Link, Poll, MAX_DEPTH};
use crate::resume::{resume_offset, Plan};
use crate::wire::{
    write_frame, Entry, Frame, Hello, Kind, Message, MsgType, Request, Response, Status,
    FLAG_RESUME, MAX_ENTRIES, MAX_QPS, VERSION,
};

pub struct Config {
    pub root: PathBuf,
    pub listen: SocketAddr,
    pub cm_port: u16,
    pub max_conns: usize,
    pub max_mem: u64,
    pub max_buf: u32,
    pub max_qps: u8,
    pub idle: Duration,
    pub poll: Poll,
    pub verbose: bool,
    pub once: bool,
}

struct Shared {
    cfg: Config,
    root: Root,
    conns: AtomicUsize,
    mem_left: AtomicU64,
}

/// Registered bytes taken from the server's budget, given back on drop.
struct Budget<'a>(&'a AtomicU64, u64);

impl Drop for Budget<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(self.1, Ordering::Relaxed);
    }
}

fn reserve(left: &AtomicU64, n: u64) -> Option<Budget<'_>> {
    left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| l.checked_sub(n))
        .ok()
        .map(|_| Budget(left, n))
}

fn path_failure(e: PathError) -> Failure {
    match e {
        PathError::Refused(s) => Failure::new(Status::Refused, s),
        PathError::NotFound(s) => Failure::new(Status::NotFound, s),
        PathError::Io(s) => Failure::new(Status::Io, s),
    }
}

pub fn serve(cfg: Config) -> Result<(), String> {
    let root = Root::open(&cfg.root).map_err(|e| format!("{}: {e}", cfg.root.display()))?;
    let l =
        TcpListener::bind(cfg.listen).map_err(|e| format!("listening on {}: {e}", cfg.listen))?;
    eprintln!(
        "rrxe-xfer: serving {} on {} (rdma_cm ports from {}, {} connections, {} MiB registered at most)",
        cfg.root.display(),
        cfg.listen,
        cfg.cm_port,
        cfg.max_conns,
        cfg.max_mem >> 20
    );
    let once = cfg.once;
    let sh = Arc::new(Shared {
        mem_left: AtomicU64::new(cfg.max_mem),
        cfg,
        root,
        conns: AtomicUsize::new(0),
    });
    for s in l.incoming() {
        let mut s = match s {
            Ok(s) => s,
            Err(e) => {
                eprintln!("rrxe-xfer: accept: {e}");
                continue;
            }
        };
        let peer = s
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| "?".into());
        if sh.conns.fetch_add(1, Ordering::SeqCst) >= sh.cfg.max_conns {
            sh.conns.fetch_sub(1, Ordering::SeqCst);
            eprintln!(
                "rrxe-xfer: {peer}: refused, {} connections already",
                sh.cfg.max_conns
            );
            let _ = write_frame(
                &mut s,
                &Frame::Abort {
                    status: Status::Busy,
                    text: format!("server busy ({} connections)", sh.cfg.max_conns),
                },
            );
            continue;
        }
        let sh2 = Arc::clone(&sh);
        let h = std::thread::spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                connection(&sh2, s, &peer)
            }));
            let ok = match r {
                Ok(Ok(())) => {
                    if sh2.cfg.verbose {
                        eprintln!("rrxe-xfer: {peer}: closed");
                    }
                    true
                }
                Ok(Err(e)) => {
                    eprintln!("rrxe-xfer: {peer}: connection ended: {e}");
                    false
                }
                Err(_) => {
                    eprintln!("rrxe-xfer: {peer}: connection thread panicked");
                    false
                }
            };
            sh2.conns.fetch_sub(1, Ordering::SeqCst);
            ok
        });
        if once {
            // The one connection's outcome is the exit status.
            return match h.join() {
                Ok(true) => Ok(()),
                _ => Err("the connection served ended in error".into()),
            };
        }
    }
    Ok(())
}

fn connection(sh: &Shared, mut s: TcpStream, peer: &str) -> Result<(), String> {
    let cfg = &sh.cfg;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    let ip = s.local_addr().map_err(|e| e.to_string())?.ip();
    let (mut link, cm_port) =
        match Link::listen(ip, cfg.cm_port, 4 * cfg.max_conns as u16 + 16, cfg.poll) {
            Ok(x) => x,
            Err(e) => return Err(abort(&mut s, Status::Io, e)),
        };
    let hello = Hello {
        version: VERSION,
        cm_port,
        max_buf: cfg.max_buf,
        max_slots: MAX_DEPTH as u16,
        max_qps: cfg.max_qps,
        name: hostname(),
        device: link.device.clone(),
    };
    write_frame(&mut s, &Frame::Hello(hello)).map_err(|e| e.to_string())?;
    let (tx, rx) = channel();
    engine::spawn_reader(s.try_clone().map_err(|e| e.to_string())?, tx.clone());
    let mut connected = false;
    // Events a transfer left for the next request (see engine::send).
    let mut early = VecDeque::new();
    loop {
        let ev = match early.pop_front() {
            Some(ev) => ev,
            None => match rx.recv_timeout(Duration::from_secs(600)) {
                Ok(ev) => ev,
                Err(_) => return Err("idle for 10 minutes".into()),
            },
        };
        let r = match ev {
            Ev::Ctrl(Frame::Request(r)) => r,
            Ev::CtrlClosed(why) if why.starts_with("control connection") => {
                return Err(abort(&mut s, Status::Protocol, format!("server: {why}")));
            }
            Ev::CtrlClosed(_) => return Ok(()),
            Ev::Ctrl(f) => {
                let text = format!("expected a request, got {f:?}");
                return Err(abort(&mut s, Status::Protocol, text));
            }
            Ev::Received { wr_id, .. } => {
                // (a notice outside a transfer: the iWARP first word) its receive again
                let (q, slot) = crate::rdma::split_recv_wr_id(wr_id);
                link.post_notice(q, slot)?;
                continue;
            }
            Ev::Sent { .. } => continue,
        };
        if !connected {
            let n = r.qpns.len();
            if n == 0 || n > usize::from(cfg.max_qps).min(MAX_QPS) {
                let _ = write_frame(
                    &mut s,
                    &Frame::Response(Response::error(
                        r.id,
                        Status::Busy,
                        format!("at most {} QPs", cfg.max_qps),
                    )),
                );
                return Err("too many QPs".into());
            }
            link.accept(n, Duration::from_secs(15))?;
            if link.iwarp {
                // (The listener is this connection's own; iWARP carries no QP numbers.)
                link.remote_qpns = r.qpns.clone();
            }
            let mut mine = link.remote_qpns.clone();
            let mut theirs = r.qpns.clone();
            mine.sort_unstable();
            theirs.sort_unstable();
            if mine != theirs {
                return Err("the RDMA connections are not the request's QPs".into());
            }
            link.start_cq_thread(tx.clone(), cfg.verbose);
            connected = true;
            if cfg.verbose {
                eprintln!(
                    "rrxe-xfer: {peer}: {} ({}) connected {n} QP(s) on {}",
                    r.sender, peer, link.device
                );
            }
        } else if sorted(&r.qpns) != sorted(&link.remote_qpns) {
            let _ = write_frame(
                &mut s,
                &Frame::Response(Response::error(r.id, Status::Protocol, "unknown QPs")),
            );
            return Err("a request named QPs of another connection".into());
        }
        let t0 = Instant::now();
        let what = format!("{:?} {}", r.kind, String::from_utf8_lossy(&r.path));
        let mut ch = Chan {
            link: &mut link,
            rx: &rx,
            early: &mut early,
            ctrl: &mut s,
            idle: cfg.idle,
        };
        match handle(sh, &mut ch, &r) {
            Ok(bytes) => {
                if cfg.verbose {
                    eprintln!(
                        "rrxe-xfer: {peer}: {} -> {}: {what}: {bytes} B in {:.3} s",
                        r.sender,
                        r.receiver,
                        t0.elapsed().as_secs_f64()
                    );
                }
            }
            Err(f) => {
                eprintln!("rrxe-xfer: {peer}: {what}: {}: {}", f.status.name(), f.text);
                if f.fatal {
                    return Err(f.text);
                }
            }
        }
    }
}

/// Tells the client why the connection ends (best effort); returns the reason.
fn abort(s: &mut TcpStream, status: Status, text: String) -> String {
    let _ = write_frame(
        s,
        &Frame::Abort {
            status,
            text: text.clone(),
        },
    );
    text
}

fn sorted(v: &[u32]) -> Vec<u32> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Sends a response; an error response ends the request.
fn respond(ch: &mut Chan<'_>, r: Response) -> Result<(), Failure> {
    ch.send(&Frame::Response(r))
}

fn refuse(ch: &mut Chan<'_>, id: u32, f: Failure) -> Result<u64, Failure> {
    respond(ch, Response::error(id, f.status, f.text.clone()))?;
    Err(f)
}

fn ok_response(id: u32) -> Response {
    let mut r = Response::error(id, Status::Ok, "");
    r.text.clear();
    r
}

/// Serves one request; returns the bytes moved.
fn handle(sh: &Shared, ch: &mut Chan<'_>, r: &Request) -> Result<u64, Failure> {
    let cfg = &sh.cfg;
    let ring_ok = r.buf_size > 0
        && r.buf_size <= cfg.max_buf
        && r.slots > 0
        && usize::from(r.slots) <= MAX_DEPTH;
    match r.kind {
        Kind::GetFile | Kind::Message => {
            if !ring_ok {
                return refuse(
                    ch,
                    r.id,
                    Failure::new(
                        Status::Invalid,
                        format!(
                            "receive buffer of {} x {} B is outside 1..{} x 1..{} B",
                            r.slots, r.buf_size, MAX_DEPTH, cfg.max_buf
                        ),
                    ),
                );
            }
            let ring = RemoteRing {
                addr: r.ring_addr,
                rkey: r.ring_rkey,
                slot: r.buf_size,
                slots: r.slots,
            };
            let pool = u64::from(r.buf_size) * u64::from(r.slots.min(8));
            let Some(_b) = reserve(&sh.mem_left, pool) else {
                return refuse(
                    ch,
                    r.id,
                    Failure::new(Status::Busy, "server memory limit reached, try later"),
                );
            };
            if r.kind == Kind::Message {
                let m = match message(sh, r, &ch.link.device.clone()) {
                    Ok(m) => m.encode(),
                    Err(f) => return refuse(ch, r.id, f),
                };
                let mut resp = ok_response(r.id);
                resp.size = m.len() as u64;
                respond(ch, resp)?;
                let plan = Plan::new(0, m.len() as u64, r.buf_size);
                engine::send(
                    ch,
                    r.id,
                    &mut &m[..],
                    plan,
                    ring,
                    engine::checksum(),
                    &mut |_| {},
                )?;
                return Ok(m.len() as u64);
            }
            let (mut f, rel) = match sh.root.open_read(&r.path) {
                Ok(x) => x,
                Err(e) => return refuse(ch, r.id, path_failure(e)),
            };
            let md = match f.metadata() {
                Ok(m) if m.is_file() => m,
                Ok(_) => {
                    return refuse(
                        ch,
                        r.id,
                        Failure::new(
                            Status::Invalid,
                            format!("{}: not a regular file", rel.display()),
                        ),
                    )
                }
                Err(e) => return refuse(ch, r.id, Failure::new(Status::Io, e.to_string())),
            };
            let offset = resume_offset(Some(r.offset), md.len());
            let mut h = engine::checksum();
            if let Err(e) = hash_prefix(&mut f, offset, &mut h) {
                return refuse(
                    ch,
                    r.id,
                    Failure::new(Status::Io, format!("{}: {e}", rel.display())),
                );
            }
            let mut resp = ok_response(r.id);
            resp.size = md.len();
            resp.offset = offset;
            resp.mode = md.mode() & 0o7777;
            respond(ch, resp)?;
            let plan = Plan::new(offset, md.len(), r.buf_size);
            engine::send(ch, r.id, &mut f, plan, ring, h, &mut |_| {})?;
            Ok(md.len() - offset)
        }
        Kind::PutFile => {
            let slot = r.buf_size.clamp(1, cfg.max_buf);
            let slot = u32::try_from(u64::from(slot).min(r.size.max(1))).unwrap_or(slot);
            let slots = (r.slots.clamp(1, MAX_DEPTH as u16) as u64)
                .min(r.size.div_ceil(u64::from(slot)).max(1)) as u16;
            let Some(_b) = reserve(&sh.mem_left, u64::from(slot) * u64::from(slots)) else {
                return refuse(
                    ch,
                    r.id,
                    Failure::new(Status::Busy, "server memory limit reached, try later"),
                );
            };
            let mut part = match sh.root.open_part(&r.path, r.mode) {
                Ok(p) => p,
                Err(e) => return refuse(ch, r.id, path_failure(e)),
            };
            let have = part.file.metadata().map(|m| m.len()).ok();
            let offset = if r.flags & FLAG_RESUME != 0 {
                resume_offset(have, r.size)
            } else {
                0
            };
            let mut h = engine::checksum();
            let prep = part
                .file
                .set_len(offset)
                .and_then(|_| hash_prefix(&mut part.file, offset, &mut h));
            if let Err(e) = prep {
                return refuse(
                    ch,
                    r.id,
                    Failure::new(Status::Io, format!("{}: {e}", part.rel.display())),
                );
            }
            let ring = match Ring::new(ch.link, slot, slots) {
                Ok(x) => x,
                Err(e) => return refuse(ch, r.id, Failure::new(Status::Io, e)),
            };
            let mut resp = ok_response(r.id);
            resp.offset = offset;
            resp.size = r.size;
            resp.ring_addr = ring.region.addr();
            resp.ring_rkey = ring.region.rkey();
            resp.buf_size = slot;
            resp.slots = slots;
            respond(ch, resp)?;
            let plan = Plan::new(offset, r.size, slot);
            let res = engine::recv(ch, r.id, &mut part.file, plan, &ring, h, &mut |_| {});
            drop(ring);
            match res {
                Ok(()) => {
                    let _ = part
                        .file
                        .set_permissions(std::fs::Permissions::from_mode(r.mode & 0o7777));
                    part.commit().map_err(path_failure)?;
                    Ok(r.size - offset)
                }
                Err(e) => Err(e),
            }
        }
        Kind::Mkdir => {
            let rel = relative(&r.path).map_err(path_failure);
            match rel.and_then(|p| sh.root.make_dirs(&p).map_err(path_failure)) {
                Ok(_) => {
                    respond(ch, ok_response(r.id))?;
                    Ok(0)
                }
                Err(f) => refuse(ch, r.id, f),
            }
        }
    }
}

fn entry_of(md: &std::fs::Metadata, name: Vec<u8>) -> Entry {
    let ft = md.file_type();
    Entry {
        kind: if ft.is_file() {
            b'f'
        } else if ft.is_dir() {
            b'd'
        } else if ft.is_symlink() {
            b'l'
        } else {
            b'o'
        },
        size: md.len(),
        mode: md.mode() & 0o7777,
        mtime: md.mtime(),
        name,
    }
}

/// The directory's entries, through its descriptor (already confined).
fn list_dir(dir: &File) -> io::Result<Vec<(Vec<u8>, std::fs::Metadata)>> {
    use std::os::fd::AsRawFd;
    let p = PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()));
    let mut v = Vec::new();
    for e in std::fs::read_dir(&p)? {
        let e = e?;
        v.push((e.file_name().as_bytes().to_vec(), e.metadata()?));
    }
    v.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(v)
}

fn message(sh: &Shared, r: &Request, device: &str) -> Result<Message, Failure> {
    let t =
        MsgType::from_u16(r.msg_type).map_err(|e| Failure::new(Status::Invalid, e.to_string()))?;
    let io = |e: io::Error| Failure::new(Status::Io, e.to_string());
    Ok(match t {
        MsgType::Echo => Message::Echo(r.payload.clone()),
        MsgType::Info => {
            let mut kv = vec![
                ("name".to_string(), hostname()),
                ("version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
                ("root".to_string(), sh.root.path.display().to_string()),
                ("max_buffer".to_string(), sh.cfg.max_buf.to_string()),
                ("max_qps".to_string(), sh.cfg.max_qps.to_string()),
                ("max_connections".to_string(), sh.cfg.max_conns.to_string()),
                ("max_registered".to_string(), sh.cfg.max_mem.to_string()),
                ("requester".to_string(), r.sender.clone()),
            ];
            if let Some(v) = verify_state(device) {
                kv.push(("verified_writes".to_string(), v));
            }
            Message::Info(kv)
        }
        MsgType::Stat => {
            let (f, rel) = sh.root.open_read(&r.path).map_err(path_failure)?;
            let md = f.metadata().map_err(io)?;
            let name = rel.as_os_str().as_bytes().to_vec();
            Message::Stat(entry_of(&md, name))
        }
        MsgType::List => {
            let (f, _) = sh.root.open_read(&r.path).map_err(path_failure)?;
            let v = list_dir(&f).map_err(io)?;
            Message::List(v.into_iter().map(|(n, m)| entry_of(&m, n)).collect())
        }
        MsgType::Walk => {
            let (f, _) = sh.root.open_read(&r.path).map_err(path_failure)?;
            let mut out = Vec::new();
            walk(sh, &f, &r.path, Path::new(""), 0, &mut out)?;
            Message::Walk(out)
        }
    })
}

/// Every entry below `dir` with its path relative to the walk's start (no symlinks
/// followed), depth-first, bounded in depth and count.
fn walk(
    sh: &Shared,
    dir: &File,
    base: &[u8],
    rel: &Path,
    depth: usize,
    out: &mut Vec<Entry>,
) -> Result<(), Failure> {
    if depth > 64 {
        return Err(Failure::new(
            Status::Invalid,
            "directory tree deeper than 64",
        ));
    }
    let list = list_dir(dir).map_err(|e| Failure::new(Status::Io, e.to_string()))?;
    for (name, md) in list {
        let p = rel.join(std::ffi::OsStr::from_bytes(&name));
        if out.len() >= MAX_ENTRIES {
            return Err(Failure::new(
                Status::Invalid,
                format!("more than {MAX_ENTRIES} entries"),
            ));
        }
        out.push(entry_of(&md, p.as_os_str().as_bytes().to_vec()));
        if md.file_type().is_dir() {
            let mut full = base.to_vec();
            full.push(b'/');
            full.extend_from_slice(p.as_os_str().as_bytes());
            let (sub, _) = sh.root.open_read(&full).map_err(path_failure)?;
            walk(sh, &sub, base, &p, depth + 1, out)?;
        }
    }
    Ok(())
}
