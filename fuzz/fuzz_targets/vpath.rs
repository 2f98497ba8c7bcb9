#![no_main]
//! Arbitrary bytes as a memory path; see `memcert::fuzz::vpath`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| memcert::fuzz::vpath(data));
