// SPDX-License-Identifier: GPL-2.0
//! Every input of the fuzz corpus kept in the tree (`fuzz/seeds/<target>/`, minimized
//! from fuzzing runs, with any input that once crashed a target) through the target's
//! body (`rrxe_proto::fuzzing`): the corpus is a regression suite that needs no fuzzer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

#[test]
fn seeds_replay() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let mut total = 0;
    for (name, body) in rrxe_proto::fuzzing::TARGETS {
        let dir = root.join(name);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let data = std::fs::read(e.unwrap().path()).unwrap();
            body(&data);
            total += 1;
        }
    }
    assert!(total > 0, "no seeds under {}", root.display());
}
