#![no_main]
//! Arbitrary bytes as a tool_use input on the reference handler; see
//! `memcert::fuzz::tool_input`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| memcert::fuzz::tool_input(data));
