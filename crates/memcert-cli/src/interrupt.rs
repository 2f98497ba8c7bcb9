//! SIGINT and SIGTERM, in every mode (`certify` with any handler or `--app`, `snapshot`,
//! `mock-api`, `record`): the first signal sets a flag the run polls ([`memcert::stop::Stop`]),
//! so it kills the handler's or the app's process tree, removes its scratch folders, writes the
//! reports of the cases that finished (marked INTERRUPTED) and exits 130; a second signal ends
//! memcert at once with 130, without that clean-up.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use memcert::stop::Stop;

/// A flag set by SIGINT or SIGTERM, so a run can stop its app and clean up before exiting; a
/// second signal exits 130 at once.
pub fn flag() -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // Registered first, so the first signal only arms it (signal-hook's documented order).
        signal_hook::flag::register_conditional_shutdown(
            sig,
            memcert::exit::INTERRUPTED,
            Arc::clone(&flag),
        )
        .context("cannot install the signal handler")?;
        signal_hook::flag::register(sig, Arc::clone(&flag))
            .context("cannot install the signal handler")?;
    }
    Ok(flag)
}

/// The run's [`Stop`]: SIGINT or SIGTERM ([`flag`]), and the deadline `within` from now
/// (`--deadline`) when given.
pub fn stop(within: Option<Duration>) -> Result<Stop> {
    Ok(Stop::on_flag(flag()?, within))
}
