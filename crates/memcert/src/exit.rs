//! Exit codes of the `memcert` binary.

/// The handler is certified (no UNSAFE, FAIL or ERROR), or a listing command succeeded.
pub const PASS: i32 = 0;
/// The run finished and the handler is not certified.
pub const FAILED: i32 = 1;
/// A usage error, or a handler that cannot be started at all.
pub const ERROR: i32 = 2;
