// SPDX-License-Identifier: GPL-2.0
//! Port parameters derived from the Ethernet device: IB MTU enum and EUI-64 GUIDs.

/// Bytes of RoCEv2 overhead that do not count toward the IB path MTU: IPv6 header (40) or
/// IPv4 (20) + UDP (8) + BTH (12) + largest extension headers + ICRC, rounded as ib_core's
/// `iboe_get_mtu` does (80 in total).
pub const ROCE_OVERHEAD: u32 = 80;

/// IB MTU enum values (`enum ib_mtu`): 1 = 256 ... 5 = 4096.
pub const IB_MTU_256: u32 = 1;
/// 4096-byte IB MTU.
pub const IB_MTU_4096: u32 = 5;

/// Bytes of an IB MTU enum value; `None` for values outside 1..=5.
pub const fn ib_mtu_bytes(mtu: u32) -> Option<u32> {
    match mtu {
        1..=5 => Some(128 << mtu),
        _ => None,
    }
}

/// The largest IB MTU that fits an Ethernet device MTU, as an enum value. Devices too
/// small for 256-byte packets still report 256, as rdma_rxe does.
pub const fn ib_mtu_for_netdev(netdev_mtu: u32) -> u32 {
    let room = netdev_mtu.saturating_sub(ROCE_OVERHEAD);
    let mut e = IB_MTU_4096;
    while e > IB_MTU_256 {
        if room >= (128 << e) {
            return e;
        }
        e -= 1;
    }
    IB_MTU_256
}

/// Modified EUI-64 from a 48-bit MAC (RFC 4291 appendix A), in wire byte order.
pub const fn eui64_from_mac(mac: [u8; 6]) -> [u8; 8] {
    [
        mac[0] ^ 0x02,
        mac[1],
        mac[2],
        0xff,
        0xfe,
        mac[3],
        mac[4],
        mac[5],
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mtu_buckets() {
        assert_eq!(ib_mtu_for_netdev(1500), 3); // 1024, as rdma_rxe reports on 1500
        assert_eq!(ib_mtu_for_netdev(9000), IB_MTU_4096);
        assert_eq!(ib_mtu_for_netdev(4096 + 80), IB_MTU_4096);
        assert_eq!(ib_mtu_for_netdev(4096 + 79), 4);
        assert_eq!(ib_mtu_for_netdev(2048 + 80), 4);
        assert_eq!(ib_mtu_for_netdev(592), 2);
        assert_eq!(ib_mtu_for_netdev(591), IB_MTU_256);
        assert_eq!(ib_mtu_for_netdev(68), IB_MTU_256);
        assert_eq!(ib_mtu_for_netdev(0), IB_MTU_256);
        assert_eq!(ib_mtu_bytes(3), Some(1024));
        assert_eq!(ib_mtu_bytes(0), None);
        assert_eq!(ib_mtu_bytes(6), None);
    }

    #[test]
    fn eui64() {
        assert_eq!(
            eui64_from_mac([0x52, 0x54, 0x00, 0x12, 0x34, 0x56]),
            [0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x56]
        );
    }
}
