//! SIGINT and SIGTERM during `certify --app`, `snapshot --app`, `mock-api` and `record`: a flag
//! the run polls, so it stops its app, cleans up and exits 130 instead of dying midway.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{Context, Result};

/// A flag set by SIGINT or SIGTERM, so a run can stop its app and clean up before exiting.
pub fn flag() -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&flag))
            .context("cannot install the signal handler")?;
    }
    Ok(flag)
}
