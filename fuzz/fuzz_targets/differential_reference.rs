#![no_main]
//! Bytes decoded (`arbitrary`) into a command sequence over a planted layout, run on the
//! reference handler and judged against the documented model as `memcert fuzz` judges any
//! handler; see `memcert::fuzz::differential`. It must never crash.
use memcert::handler::reference::{Options, Reference};
use memcert::text::Profile;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let options = Options {
        fsync: false,
        ..Options::default()
    };
    memcert::fuzz::differential(
        |memories| Reference::open_ambient(memories, Profile::Docs, options),
        data,
    )
});
