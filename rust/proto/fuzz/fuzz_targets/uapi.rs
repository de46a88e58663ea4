// SPDX-License-Identifier: GPL-2.0
//! Fuzzes the ring-slot parsers userspace feeds the kernel (send and receive WQEs): the
//! first two bytes pick the queue limits, the rest is cut into slots decoded one after
//! another into one reused WQE, which must equal a fresh decode of the same slot.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rrxe_proto::uapi::{RecvWqe, SendWqe};

fuzz_target!(|data: &[u8]| {
    let (Some(&a), Some(&b)) = (data.first(), data.get(1)) else {
        return;
    };
    let (max_sge, max_inline) = (usize::from(a & 0x3f), usize::from(b) * 4);
    let mut w = SendWqe::EMPTY;
    let mut r = RecvWqe::EMPTY;
    for slot in data[2..].chunks(300) {
        let before = w;
        match (
            w.decode_into(slot, max_sge, max_inline),
            SendWqe::decode(slot, max_sge, max_inline),
        ) {
            (Ok(()), Ok(x)) => assert_eq!(w, x),
            (Err(e), Err(f)) => {
                assert_eq!(e, f);
                assert_eq!(w, before);
            }
            (a, b) => panic!("decode_into {a:?}, decode {b:?}"),
        }
        let before = r;
        match (r.decode_into(slot, max_sge), RecvWqe::decode(slot, max_sge)) {
            (Ok(()), Ok(x)) => assert_eq!(r, x),
            (Err(e), Err(f)) => {
                assert_eq!(e, f);
                assert_eq!(r, before);
            }
            (a, b) => panic!("recv decode_into {a:?}, decode {b:?}"),
        }
    }
});
