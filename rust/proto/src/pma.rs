// SPDX-License-Identifier: GPL-2.0
//! The performance-management agent's answers (IBTA 16.1): `ClassPortInfo` and
//! `PortCountersExtended` GETs, which ib_core sends the device to fill
//! `/sys/class/infiniband/DEV/ports/1/counters/` (`port_xmit_data`, `port_rcv_data`,
//! `port_xmit_packets`, `port_rcv_packets`).

use super::wire::get;

/// Size of a MAD.
pub const MAD_LEN: usize = 256;
/// Offset of the attribute data in a PerfMgt MAD (24-byte header, 40 reserved bytes).
const DATA_OFF: usize = 64;

/// `IB_MGMT_CLASS_PERF_MGMT`.
pub const CLASS_PERF_MGMT: u8 = 0x04;
/// `IB_MGMT_METHOD_GET`.
pub const METHOD_GET: u8 = 0x01;
/// `IB_MGMT_METHOD_GET_RESP`.
pub const METHOD_GET_RESP: u8 = 0x81;
/// `IB_PMA_CLASS_PORT_INFO`.
pub const ATTR_CLASS_PORT_INFO: u16 = 0x0001;
/// `IB_PMA_PORT_COUNTERS`.
pub const ATTR_PORT_COUNTERS: u16 = 0x0012;
/// `IB_PMA_PORT_COUNTERS_EXT`.
pub const ATTR_PORT_COUNTERS_EXT: u16 = 0x001d;
/// `IB_PMA_CLASS_CAP_EXT_WIDTH`: 64-bit data and packet counters are supported.
pub const CAP_EXT_WIDTH: u16 = 1 << 9;
/// MAD status: the method/attribute combination is not supported.
pub const STATUS_UNSUPPORTED: u16 = 0x000c;

/// The port's traffic counters (bytes of RoCEv2 packets, UDP payload, and packets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Bytes sent.
    pub xmit_bytes: u64,
    /// Bytes received.
    pub rcv_bytes: u64,
    /// Packets sent.
    pub xmit_pkts: u64,
    /// Packets received.
    pub rcv_pkts: u64,
}

/// What the device does with a MAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Not for the device: the MAD layer processes it as usual.
    Pass,
    /// `out` holds the response.
    Reply,
}

fn put(out: &mut [u8], off: usize, v: &[u8]) {
    if let Some(d) = out.get_mut(off..off + v.len()) {
        d.copy_from_slice(v);
    }
}

/// Answers a PerfMgt GET in `inp` into `out` (both [`MAD_LEN`] bytes); anything else
/// passes.
pub fn answer(inp: &[u8], out: &mut [u8], c: &PortCounters) -> Answer {
    let (Some(class), Some(method), Some(attr)) = (
        inp.get(1).copied(),
        inp.get(3).copied(),
        get::<2>(inp, 16).map(u16::from_be_bytes),
    ) else {
        return Answer::Pass;
    };
    if class != CLASS_PERF_MGMT || method != METHOD_GET || out.len() < MAD_LEN {
        return Answer::Pass;
    }
    out.fill(0);
    if let (Some(o), Some(i)) = (out.get_mut(..24), inp.get(..24)) {
        o.copy_from_slice(i);
    }
    put(out, 3, &[METHOD_GET_RESP]);
    put(out, 4, &0u16.to_be_bytes());
    match attr {
        ATTR_CLASS_PORT_INFO => {
            // ClassPortInfo: base version, class version, capability mask.
            put(out, DATA_OFF + 2, &CAP_EXT_WIDTH.to_be_bytes());
        }
        // The 32-bit counters hold nothing rrxe counts (link errors): all zero.
        ATTR_PORT_COUNTERS => {}
        ATTR_PORT_COUNTERS_EXT => {
            // Data counters count 4-byte words.
            let words = [c.xmit_bytes / 4, c.rcv_bytes / 4, c.xmit_pkts, c.rcv_pkts];
            for (k, v) in words.iter().enumerate() {
                put(out, DATA_OFF + 8 + 8 * k, &v.to_be_bytes());
            }
        }
        _ => put(out, 4, &STATUS_UNSUPPORTED.to_be_bytes()),
    }
    Answer::Reply
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mad(class: u8, method: u8, attr: u16) -> [u8; MAD_LEN] {
        let mut m = [0u8; MAD_LEN];
        m[0] = 1;
        m[1] = class;
        m[2] = 1;
        m[3] = method;
        m[8..16].copy_from_slice(&0x1122_3344_5566_7788u64.to_be_bytes());
        m[16..18].copy_from_slice(&attr.to_be_bytes());
        m
    }

    #[test]
    fn counters_ext() {
        let c = PortCounters {
            xmit_bytes: 4000,
            rcv_bytes: 8001,
            xmit_pkts: 3,
            rcv_pkts: 5,
        };
        let mut out = [0xffu8; MAD_LEN];
        let r = answer(
            &mad(CLASS_PERF_MGMT, METHOD_GET, ATTR_PORT_COUNTERS_EXT),
            &mut out,
            &c,
        );
        assert_eq!(r, Answer::Reply);
        assert_eq!(out[3], METHOD_GET_RESP);
        assert_eq!(&out[8..16], &0x1122_3344_5566_7788u64.to_be_bytes());
        assert_eq!(&out[4..6], &[0, 0]);
        let at = |k: usize| u64::from_be_bytes(out[72 + 8 * k..80 + 8 * k].try_into().unwrap());
        assert_eq!((at(0), at(1), at(2), at(3)), (1000, 2000, 3, 5));
    }

    #[test]
    fn class_port_info_and_others() {
        let c = PortCounters::default();
        let mut out = [0u8; MAD_LEN];
        let r = answer(
            &mad(CLASS_PERF_MGMT, METHOD_GET, ATTR_CLASS_PORT_INFO),
            &mut out,
            &c,
        );
        assert_eq!(r, Answer::Reply);
        assert_eq!(&out[66..68], &CAP_EXT_WIDTH.to_be_bytes());
        assert_eq!(
            answer(&mad(CLASS_PERF_MGMT, METHOD_GET, 0x99), &mut out, &c),
            Answer::Reply
        );
        assert_eq!(&out[4..6], &STATUS_UNSUPPORTED.to_be_bytes());
        // Connection-manager MADs, SETs and short buffers pass.
        assert_eq!(
            answer(&mad(0x07, METHOD_GET, 1), &mut out, &c),
            Answer::Pass
        );
        assert_eq!(
            answer(&mad(CLASS_PERF_MGMT, 0x02, 1), &mut out, &c),
            Answer::Pass
        );
        assert_eq!(answer(&[0u8; 10], &mut out, &c), Answer::Pass);
        assert_eq!(
            answer(&mad(CLASS_PERF_MGMT, METHOD_GET, 1), &mut [0u8; 100], &c),
            Answer::Pass
        );
    }
}
