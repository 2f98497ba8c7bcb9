//! Setting a run up from plain descriptions: what `memcert certify` and `snapshot` make of
//! their flags, as library calls, so any front end builds the same run the same way.
//!
//! - [`handler`]: the handler under test, started (reference, Python, Node or stdio), from a
//!   [`handler::HandlerSpec`];
//! - [`baseline`]: the baseline policy of a run (load the snapshots to compare with, and write
//!   the pending `.snap.new` files), from a [`baseline::BaselinePolicy`].
//!
//! Errors are typed; their texts name no command-line flag, so each caller can word them.

pub mod baseline;
pub mod handler;
