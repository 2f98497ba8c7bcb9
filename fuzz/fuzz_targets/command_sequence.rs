#![no_main]
//! Bytes decoded (`arbitrary`) into a sequence of up to 16 memory commands, run on the reference
//! handler and on its in-memory model; see `memcert::fuzz::command_sequence`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| memcert::fuzz::command_sequence(data));
