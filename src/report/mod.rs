//! Reporters: consumers of `certify::Event`s. They read events, never a target.
//!
//! - [`terminal`]: progress on stderr, then a summary a person reads (worst cases first);
//! - [`json`]: one JSON file with the summary and one record per case (`--report-json`).

pub mod json;
pub mod terminal;
