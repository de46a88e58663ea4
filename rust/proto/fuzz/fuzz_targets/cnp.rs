// SPDX-License-Identifier: GPL-2.0
//! Fuzzes the CNP payload decoder: whatever decodes re-encodes to the same fields, and
//! the `rate` reaction point takes it without leaving its bounds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rrxe_proto::cc::params::Params;
use rrxe_proto::cc::share::{CnpInfo, RateCc, CNP_INFO_LEN};

fuzz_target!(|data: &[u8]| {
    if let Some(i) = CnpInfo::decode(data) {
        let mut b = [0u8; CNP_INFO_LEN];
        assert!(i.encode(&mut b));
        assert_eq!(CnpInfo::decode(&b), Some(i));
        let p = Params::DEFAULT;
        let mut r = RateCc::new(0, &p);
        r.on_cnp(1, &i, &p);
        assert!(p.min_rate() <= r.rate() && r.rate() <= p.max_rate());
    }
});
