// SPDX-License-Identifier: GPL-2.0
//! `serve --once`: the exit status is the one connection's outcome. A client that sends
//! a malformed frame ends the connection in error, whether or not the host has an RDMA
//! device (without one, the server's rdma_cm listener already fails), so the server
//! must exit 1.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn once_exits_1_when_its_connection_failed() {
    let root = std::env::temp_dir().join(format!("rrxe-xfer-once-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    // A free port: bound, then released for the server.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut srv = Command::new(env!("CARGO_BIN_EXE_rrxe-xfer"))
        .args(["serve", "--once", "-l", &format!("127.0.0.1:{port}"), "-r"])
        .arg(&root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let mut s = loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => break s,
            Err(_) if t0.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Err(e) => {
                let _ = srv.kill();
                panic!("server not listening: {e}");
            }
        }
    };
    // A frame of length 0: out of range.
    let _ = s.write_all(&[0, 0, 0, 0]);
    drop(s);
    let status = loop {
        if let Some(st) = srv.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > Duration::from_secs(30) {
            let _ = srv.kill();
            panic!("serve --once still running after 30 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(status.code(), Some(1));
}
