#![no_main]
//! Arbitrary bytes as a memory path; see `memcert::attack::fuzz::vpath`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| memcert::attack::fuzz::vpath(data));
