//! When a run must stop early: a signal (SIGINT, SIGTERM: the binary sets a flag) or the run's
//! deadline (`--deadline`). A [`Stop`] is shared by everything that waits during a run (the
//! runner between cases, a stdio handler's answer, an app's process), so each wait ends within
//! [`POLL`] of the stop instead of at its own time limit.
//!
//! # Guarantees
//! - A stdio handler's exchange (`target::stdio`) never waits past the deadline, nor more than
//!   [`POLL`] past a signal.
//! - A stop is sticky: once [`Stop::reason`] is `Some`, it stays `Some` (a signal wins over the
//!   deadline when both came).
//!
//! # Non-guarantees
//! - Nothing is interrupted in the middle: code that does not wait on a [`Stop`] (an in-process
//!   handler's call, laying out a sandbox) runs to its end first.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a wait looks at the stop flag.
pub const POLL: Duration = Duration::from_millis(50);

/// Why a run stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// A signal (SIGINT, SIGTERM) asked memcert to stop.
    Interrupted,
    /// The run's deadline (`--deadline`) passed.
    Deadline,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StopReason::Interrupted => "interrupted by a signal",
            StopReason::Deadline => "the run's deadline passed",
        })
    }
}

/// A shared stop condition: a flag (set by a signal handler, or [`Stop::interrupt`]) and an
/// optional deadline. Clones share the flag. The default never stops.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    flag: Arc<AtomicBool>,
    deadline: Option<Instant>,
}

impl Stop {
    /// A stop that never fires unless [`Stop::interrupt`] is called.
    pub fn never() -> Stop {
        Stop::default()
    }

    /// A stop on `flag` (what `signal_hook::flag::register` sets), with the deadline `within`
    /// from now when given.
    pub fn on_flag(flag: Arc<AtomicBool>, within: Option<Duration>) -> Stop {
        Stop {
            flag,
            deadline: within.map(|d| Instant::now() + d),
        }
    }

    /// Stop as a signal would.
    pub fn interrupt(&self) {
        self.flag.store(true, Ordering::SeqCst);
    }

    /// Why the run must stop now, or `None` to go on.
    pub fn reason(&self) -> Option<StopReason> {
        if self.flag.load(Ordering::SeqCst) {
            Some(StopReason::Interrupted)
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(StopReason::Deadline)
        } else {
            None
        }
    }

    /// The time left before the deadline (`None`: no deadline).
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }
}

/// One item of a run (a case, a transcript) under `stop`, with `stopped` carrying the reason
/// across items (a stop is kept once seen). `None` when a signal stopped the run, before or
/// during the item: neither it nor any after it is reported. After the deadline the item is not
/// run: `deadline(None)` stands for it. Otherwise `run()` runs it, and an ERROR result
/// (`is_error`) that ends after the deadline passed is given to `deadline(Some(result))`, the
/// item the deadline cut short.
pub fn run_item<T>(
    stop: &Stop,
    stopped: &mut Option<StopReason>,
    run: impl FnOnce() -> T,
    is_error: impl Fn(&T) -> bool,
    deadline: impl FnOnce(Option<T>) -> T,
) -> Option<T> {
    *stopped = stopped.or(stop.reason());
    match *stopped {
        Some(StopReason::Interrupted) => None,
        Some(StopReason::Deadline) => Some(deadline(None)),
        None => {
            let done = run();
            match stop.reason() {
                Some(StopReason::Interrupted) => {
                    *stopped = Some(StopReason::Interrupted);
                    None
                }
                Some(StopReason::Deadline) if is_error(&done) => {
                    *stopped = Some(StopReason::Deadline);
                    Some(deadline(Some(done)))
                }
                _ => Some(done),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runner's step: a result, a deadline record for an item not run or cut short, and
    /// nothing once a signal came; the reason kept across items.
    #[test]
    fn run_item_follows_the_stop() {
        let is_error = |v: &i32| *v < 0;
        let stand_in = |cut: Option<i32>| 100 + cut.unwrap_or(0);
        let mut stopped = None;
        let go = Stop::never();
        assert_eq!(
            run_item(&go, &mut stopped, || 1, is_error, stand_in),
            Some(1)
        );
        assert_eq!(stopped, None);
        // The deadline passes during an item that ends in an error: cut short.
        let late = Stop::on_flag(Arc::default(), Some(Duration::from_millis(20)));
        let slow_error = || {
            std::thread::sleep(Duration::from_millis(60));
            -1
        };
        assert_eq!(
            run_item(&late, &mut stopped, slow_error, is_error, stand_in),
            Some(99)
        );
        assert_eq!(stopped, Some(StopReason::Deadline));
        // Every later item is not run.
        assert_eq!(
            run_item(&go, &mut stopped, || 1, is_error, stand_in),
            Some(100)
        );
        // A signal during an item: neither it nor any after it.
        let mut stopped = None;
        let sig = Stop::never();
        let s2 = sig.clone();
        let run = move || {
            s2.interrupt();
            1
        };
        assert_eq!(run_item(&sig, &mut stopped, run, is_error, stand_in), None);
        assert_eq!(stopped, Some(StopReason::Interrupted));
        assert_eq!(run_item(&go, &mut stopped, || 1, is_error, stand_in), None);
    }
}
