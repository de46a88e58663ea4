// SPDX-License-Identifier: GPL-2.0
//! Raw bindings: the kernel crate's bindings plus rrxe's build-time bindgen output for the
//! rdma, uverbs and shim headers (`include/rrxe_bindings.h`). Only `kabi` uses this module
//! for anything but plain C data types.

#![allow(
    dead_code,
    missing_docs,
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    improper_ctypes,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    clippy::all,
    clippy::undocumented_unsafe_blocks,
    clippy::ptr_as_ptr,
    clippy::ref_as_ptr,
    clippy::as_underscore,
    clippy::cast_lossless
)]

pub(crate) use kernel::bindings::*;
use kernel::ffi;
use pin_init::MaybeZeroable;

include!("bindings_generated.rs");

// SAFETY: `__BindgenBitfieldUnit<S>` is a newtype around `S`, so it is zeroable exactly
// when `S` is (the kernel crate does the same for its own copy).
unsafe impl<S: pin_init::Zeroable> pin_init::Zeroable for __BindgenBitfieldUnit<S> {}
