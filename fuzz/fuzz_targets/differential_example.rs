//! The template for fuzzing your own Rust handler (fuzz/README.md, "Fuzzing your own Rust
//! handler"): copy the three lines below and put your handler's constructor, a function from
//! the store folder (`&Path`) to `Result<YourHandler, _>`, where `StaleFolderCache::open` is.
//! This handler is deliberately flawed (a cache that deleting a folder does not empty): the
//! target crashes within seconds. Left out of the ClusterFuzzLite build.
#![no_main]
use memcert::fuzz::{differential, flawed::StaleFolderCache};
libfuzzer_sys::fuzz_target!(|data: &[u8]| differential(StaleFolderCache::open, data));
