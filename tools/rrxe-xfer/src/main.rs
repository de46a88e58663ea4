// SPDX-License-Identifier: GPL-2.0
//! rrxe-xfer: files and messages between hosts, requested over TCP, moved by RDMA WRITE,
//! completed by a CQ thread. See Documentation/rrxe/xfer.rst.

mod client;
mod confine;
mod engine;
mod rdma;
mod resume;
mod server;
mod wire;

use std::net::SocketAddr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use client::{Opts, Session};
use engine::Failure;
use rdma::Poll;
use wire::{Message, MsgType};

#[derive(Parser)]
#[command(
    name = "rrxe-xfer",
    version,
    about = "Files and messages between hosts over RDMA (rdma_cm + RC QPs)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve the files below a directory.
    Serve(ServeArgs),
    /// Fetch remote files or directories: get [OPTIONS] HOST:PATH... LOCAL
    Get(GetArgs),
    /// Send local files or directories: put [OPTIONS] LOCAL... HOST:PATH
    Put(PutArgs),
    /// Ask the server for a message: echo TEXT, info, ls PATH, stat PATH.
    Msg(MsgArgs),
}

#[derive(Args)]
struct ServeArgs {
    /// Directory to serve; nothing outside it is read or written.
    #[arg(short = 'r', long, default_value = ".")]
    root: PathBuf,
    /// TCP address for requests.
    #[arg(short, long, default_value = "0.0.0.0:18700")]
    listen: SocketAddr,
    /// First rdma_cm port; each connection listens on its own port from here.
    #[arg(long, default_value_t = 18701)]
    cm_port: u16,
    /// Most connections served at once.
    #[arg(long, default_value_t = 8)]
    max_conns: usize,
    /// MiB of memory registered for all transfers together.
    #[arg(long, default_value_t = 256)]
    max_mem: u64,
    /// Largest receive-buffer slot a client may ask for, in KiB.
    #[arg(long, default_value_t = 4096)]
    max_buffer: u32,
    /// Most QPs per connection.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(1..=8))]
    max_qps: u8,
    /// Seconds without progress after which a transfer's client is taken for gone.
    #[arg(long, default_value_t = 30)]
    idle: u64,
    #[command(flatten)]
    wait: Wait,
    /// Log every connection and transfer (and each send completion).
    #[arg(short, long)]
    verbose: bool,
    /// Serve one connection, then exit.
    #[arg(long)]
    once: bool,
}

/// How the completion thread waits, on the server and on the client.
#[derive(Args, Clone)]
struct Wait {
    /// How the completion thread waits: busy (poll the CQ in a loop), adaptive (poll
    /// for 100 us after each completion, then sleep on a completion channel) or events
    /// (sleep on the channel whenever the CQ is empty).
    #[arg(long, value_enum, default_value_t = Poll::Adaptive)]
    poll: Poll,
    /// The same as --poll events.
    #[arg(short = 'e', long, conflicts_with = "poll")]
    events: bool,
}

impl Wait {
    fn mode(&self) -> Poll {
        if self.events {
            Poll::Events
        } else {
            self.poll
        }
    }
}

#[derive(Args, Clone)]
struct Common {
    /// The server's TCP port.
    #[arg(short = 'P', long, default_value_t = 18700)]
    port: u16,
    /// QPs to move the data over (chunks alternate between them; each QP's packets are
    /// processed by the provider independently of the others).
    #[arg(short = 'q', long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=8))]
    qps: u16,
    /// Chunk (receive-buffer slot) size in KiB.
    #[arg(short = 'c', long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=16384))]
    chunk: u32,
    /// Slots in the receive ring: chunks in flight.
    #[arg(short = 's', long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=64))]
    slots: u16,
    #[command(flatten)]
    wait: Wait,
    /// Continue interrupted files from their `.rrxe-part` prefix.
    #[arg(short = 'R', long)]
    resume: bool,
    /// Copy directories recursively.
    #[arg(short = 'r', long)]
    recursive: bool,
    /// No progress bar and no summary.
    #[arg(long)]
    quiet: bool,
    /// Log each send completion.
    #[arg(short, long)]
    verbose: bool,
    /// Seconds without progress before giving up.
    #[arg(long, default_value_t = 30)]
    idle: u64,
}

#[derive(Args)]
struct GetArgs {
    #[command(flatten)]
    c: Common,
    /// HOST:PATH... then the local destination.
    #[arg(required = true, num_args = 2..)]
    args: Vec<String>,
}

#[derive(Args)]
struct PutArgs {
    #[command(flatten)]
    c: Common,
    /// Local files... then HOST:PATH.
    #[arg(required = true, num_args = 2..)]
    args: Vec<String>,
}

#[derive(Args)]
struct MsgArgs {
    #[command(flatten)]
    c: Common,
    /// The server.
    host: String,
    /// echo, info, ls or stat.
    kind: String,
    /// echo: the text; ls, stat: the path.
    arg: Option<String>,
}

fn opts(c: &Common) -> Opts {
    Opts {
        port: c.port,
        qps: usize::from(c.qps),
        chunk: c.chunk.saturating_mul(1024),
        slots: c.slots,
        poll: c.wait.mode(),
        resume: c.resume,
        progress: !c.quiet,
        quiet: c.quiet,
        verbose: c.verbose,
        idle: Duration::from_secs(c.idle.max(1)),
    }
}

/// Splits HOST:PATH ([v6]:PATH for IPv6 literals).
fn split_remote(s: &str) -> Option<(String, String)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (h, p) = rest.split_once("]:")?;
        return Some((h.to_string(), p.to_string()));
    }
    let (h, p) = s.split_once(':')?;
    if h.is_empty() || h.contains('/') {
        return None;
    }
    Some((h.to_string(), p.to_string()))
}

fn base_name(p: &str) -> String {
    Path::new(p.trim_end_matches('/'))
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn join_remote(dir: &str, name: &str) -> String {
    if dir.is_empty() || dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

struct Run {
    failed: usize,
    quiet: bool,
}

impl Run {
    fn new(quiet: bool) -> Run {
        Run { failed: 0, quiet }
    }
    fn fail(&mut self, what: &str, f: &Failure) {
        self.failed += 1;
        if f.status == wire::Status::Io {
            eprintln!("rrxe-xfer: {what}: {}", f.text);
        } else {
            eprintln!("rrxe-xfer: {what}: {}: {}", f.status.name(), f.text);
        }
    }
    fn done(&self, s: Option<&Session>) -> ExitCode {
        if let Some(s) = s {
            if !self.quiet {
                eprintln!("rrxe-xfer: {}", s.summary());
            }
        }
        if self.failed > 0 {
            eprintln!("rrxe-xfer: {} failure(s)", self.failed);
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}

/// The session to `host`, or None after printing why not.
fn open(host: &str, o: &Opts) -> Option<Session> {
    Session::open(host, o)
        .map_err(|e| eprintln!("rrxe-xfer: {e}"))
        .ok()
}

fn get(a: GetArgs) -> ExitCode {
    let o = opts(&a.c);
    let (mut run, Some((dest, srcs))) = (Run::new(o.quiet), a.args.split_last()) else {
        return ExitCode::from(2);
    };
    let mut host = None;
    let mut paths = Vec::new();
    for s in srcs {
        match split_remote(s) {
            Some((h, p)) if host.is_none() || host.as_deref() == Some(h.as_str()) => {
                host = Some(h);
                paths.push(p);
            }
            _ => {
                eprintln!("rrxe-xfer: get: '{s}': sources must be HOST:PATH on one host");
                return ExitCode::from(2);
            }
        }
    }
    let Some(host) = host else {
        return ExitCode::from(2);
    };
    let dest = PathBuf::from(dest);
    let into_dir = paths.len() > 1 || dest.is_dir();
    if paths.len() > 1 && !dest.is_dir() {
        eprintln!("rrxe-xfer: get: {}: not a directory", dest.display());
        return ExitCode::from(1);
    }
    let Some(mut s) = open(&host, &o) else {
        return ExitCode::from(1);
    };
    for p in &paths {
        let target = if into_dir {
            dest.join(base_name(p))
        } else {
            dest.clone()
        };
        let what = format!("{host}:{p}");
        let st = match s.stat(p.as_bytes()) {
            Ok(st) => st,
            Err(f) => {
                run.fail(&what, &f);
                if f.fatal {
                    break;
                }
                continue;
            }
        };
        let r = if st.kind == b'd' {
            if !a.c.recursive {
                run.fail(
                    &what,
                    &Failure::new(wire::Status::Invalid, "is a directory (use -r)"),
                );
                continue;
            }
            get_tree(&mut s, &mut run, &host, p, &target)
        } else {
            s.get_file(p.as_bytes(), &target, st.size).map(|_| ())
        };
        if let Err(f) = r {
            run.fail(&what, &f);
            if f.fatal {
                break;
            }
        }
    }
    run.done(Some(&s))
}

fn get_tree(
    s: &mut Session,
    run: &mut Run,
    host: &str,
    dir: &str,
    target: &Path,
) -> Result<(), Failure> {
    let io =
        |e: std::io::Error| Failure::new(wire::Status::Io, format!("{}: {e}", target.display()));
    std::fs::create_dir_all(target).map_err(io)?;
    let entries = match s.message(MsgType::Walk, dir.as_bytes(), b"")? {
        Message::Walk(v) => v,
        _ => {
            return Err(Failure::fatal(
                wire::Status::Protocol,
                "walk answered with another message",
            ))
        }
    };
    for e in entries {
        let rel = String::from_utf8_lossy(&e.name).into_owned();
        if confine::relative(&e.name)
            .map(|r| r.as_os_str().as_bytes() != e.name.as_slice())
            .unwrap_or(true)
        {
            run.fail(
                &rel,
                &Failure::new(wire::Status::Refused, "the server sent an unsafe name"),
            );
            continue;
        }
        let local = target.join(&rel);
        let what = format!("{host}:{}", join_remote(dir, &rel));
        match e.kind {
            b'd' => {
                if let Err(err) = std::fs::create_dir_all(&local) {
                    run.fail(&what, &Failure::new(wire::Status::Io, err.to_string()));
                }
            }
            b'f' => {
                if let Err(f) = s.get_file(join_remote(dir, &rel).as_bytes(), &local, e.size) {
                    run.fail(&what, &f);
                    if f.fatal {
                        return Err(Failure::fatal(f.status, "session lost"));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn put(a: PutArgs) -> ExitCode {
    let o = opts(&a.c);
    let (mut run, Some((dest, srcs))) = (Run::new(o.quiet), a.args.split_last()) else {
        return ExitCode::from(2);
    };
    let Some((host, rdest)) = split_remote(dest) else {
        eprintln!("rrxe-xfer: put: '{dest}': the destination must be HOST:PATH");
        return ExitCode::from(2);
    };
    let Some(mut s) = open(&host, &o) else {
        return ExitCode::from(1);
    };
    let remote_is_dir = match s.stat(rdest.as_bytes()) {
        Ok(e) => e.kind == b'd',
        Err(f) if f.status == wire::Status::NotFound => false,
        Err(f) => {
            run.fail(&format!("{host}:{rdest}"), &f);
            return run.done(Some(&s));
        }
    };
    let into_dir = remote_is_dir || srcs.len() > 1 || rdest.ends_with('/') || rdest.is_empty();
    for src in srcs {
        let local = PathBuf::from(src);
        let target = if into_dir {
            join_remote(&rdest, &base_name(src))
        } else {
            rdest.clone()
        };
        let r = if local.is_dir() {
            if !a.c.recursive {
                run.fail(
                    src,
                    &Failure::new(wire::Status::Invalid, "is a directory (use -r)"),
                );
                continue;
            }
            put_tree(&mut s, &mut run, &local, &target)
        } else {
            s.put_file(&local, target.as_bytes()).map(|_| ())
        };
        if let Err(f) = r {
            run.fail(&format!("{src} -> {host}:{target}"), &f);
            if f.fatal {
                break;
            }
        }
    }
    run.done(Some(&s))
}

fn put_tree(s: &mut Session, run: &mut Run, dir: &Path, target: &str) -> Result<(), Failure> {
    s.mkdir(target.as_bytes())?;
    let mut list: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Failure::new(wire::Status::Io, format!("{}: {e}", dir.display())))?
        .flatten()
        .collect();
    list.sort_by_key(|e| e.file_name());
    for e in list {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let t = join_remote(target, &name);
        let r = if p.is_dir() {
            put_tree(s, run, &p, &t)
        } else if p.is_file() {
            s.put_file(&p, t.as_bytes()).map(|_| ())
        } else {
            Ok(())
        };
        if let Err(f) = r {
            if f.fatal {
                return Err(f);
            }
            run.fail(&p.display().to_string(), &f);
        }
    }
    Ok(())
}

fn msg(a: MsgArgs) -> ExitCode {
    let mut o = opts(&a.c);
    o.progress = false;
    let (t, path, payload) = match (a.kind.as_str(), &a.arg) {
        ("echo", Some(x)) => (MsgType::Echo, String::new(), x.clone().into_bytes()),
        ("info", None) => (MsgType::Info, String::new(), Vec::new()),
        ("ls", p) => (MsgType::List, p.clone().unwrap_or_default(), Vec::new()),
        ("stat", Some(p)) => (MsgType::Stat, p.clone(), Vec::new()),
        _ => {
            eprintln!("rrxe-xfer: msg: expected 'echo TEXT', 'info', 'ls [PATH]' or 'stat PATH'");
            return ExitCode::from(2);
        }
    };
    let mut run = Run::new(true);
    let Some(mut s) = open(&a.host, &o) else {
        return ExitCode::from(1);
    };
    match s.message(t, path.as_bytes(), &payload) {
        Ok(m) => dispatch(&m),
        Err(f) => run.fail(&format!("msg {}", a.kind), &f),
    }
    run.done(None)
}

/// The message dispatcher: one handler per message type.
fn dispatch(m: &Message) {
    let show = |e: &wire::Entry| {
        println!(
            "{} {:o} {:>12} {}",
            e.kind as char,
            e.mode,
            e.size,
            String::from_utf8_lossy(&e.name)
        )
    };
    match m {
        Message::Echo(b) => println!("{}", String::from_utf8_lossy(b)),
        Message::Info(kv) => {
            for (k, v) in kv {
                println!("{k}: {v}");
            }
        }
        Message::List(v) | Message::Walk(v) => v.iter().for_each(show),
        Message::Stat(e) => show(e),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Serve(a) => {
            let cfg = server::Config {
                root: a.root,
                listen: a.listen,
                cm_port: a.cm_port,
                max_conns: a.max_conns.max(1),
                max_mem: a.max_mem.saturating_mul(1 << 20),
                max_buf: a.max_buffer.clamp(1, 1 << 20).saturating_mul(1024),
                max_qps: a.max_qps,
                idle: Duration::from_secs(a.idle.max(1)),
                poll: a.wait.mode(),
                verbose: a.verbose,
                once: a.once,
            };
            match server::serve(cfg) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("rrxe-xfer: serve: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Cmd::Get(a) => get(a),
        Cmd::Put(a) => put(a),
        Cmd::Msg(a) => msg(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_specs() {
        assert_eq!(split_remote("h:a/b"), Some(("h".into(), "a/b".into())));
        assert_eq!(
            split_remote("10.0.0.2:"),
            Some(("10.0.0.2".into(), "".into()))
        );
        assert_eq!(
            split_remote("[fd00::2]:x"),
            Some(("fd00::2".into(), "x".into()))
        );
        assert_eq!(split_remote("local/file"), None);
        assert_eq!(split_remote("./a:b"), None);
        assert_eq!(join_remote("", "f"), "f");
        assert_eq!(join_remote("d/", "f"), "d/f");
        assert_eq!(join_remote("d", "f"), "d/f");
        assert_eq!(base_name("a/b/"), "b");
    }
}
