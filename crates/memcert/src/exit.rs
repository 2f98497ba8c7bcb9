//! Exit codes of the `memcert` binary.

/// The handler is certified (no UNSAFE, FAIL or ERROR), or a listing command succeeded (also
/// when its stdout was closed early, as by `| head`).
pub const PASS: i32 = 0;
/// The run finished and the handler is not certified; also a run its `--deadline` cut short
/// (INCOMPLETE).
pub const FAILED: i32 = 1;
/// A usage error, or a handler that cannot be started at all.
pub const ERROR: i32 = 2;
/// SIGINT or SIGTERM stopped the run (128 + SIGINT, as shells report it): the handler's process
/// tree was killed, the scratch folders removed, the reports so far written marked INTERRUPTED.
pub const INTERRUPTED: i32 = 130;
