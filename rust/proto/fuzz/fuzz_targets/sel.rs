// SPDX-License-Identifier: GPL-2.0
//! Fuzzes the rrxe header parsers (XETH, SACK) and the receiver window: the input is
//! read as a header pair, then as a sequence of PSN arrivals.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rrxe_proto::psn::Psn;
use rrxe_proto::sel::{RxWindow, Sack, Xeth};

fuzz_target!(|data: &[u8]| {
    if let Ok(x) = Xeth::decode(data) {
        let _ = x.fits(u32::from(data.len() as u16));
    }
    if let Ok(s) = Sack::decode(data) {
        let _ = s.iter().count();
    }
    let mut w = RxWindow::new(Psn::new(0xff_ff00));
    for c in data.chunks(2) {
        let d = u32::from(c[0]) | u32::from(*c.get(1).unwrap_or(&0)) << 8;
        let psn = w.base().add(d & 0x3ff);
        let _ = w.arrive(psn);
        if d & 0x8000 != 0 {
            while w.advance() {}
        }
        if d & 0x2000 != 0 {
            let _ = w.lost_again(psn);
        }
        let _ = w.sack(d & 0x4000 != 0);
    }
});
