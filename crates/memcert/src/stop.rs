//! When a run must stop early: a signal (SIGINT, SIGTERM: the binary sets a flag) or the run's
//! deadline (`--deadline`). A [`Stop`] is shared by everything that waits during a run (the
//! runner between cases, a stdio handler's answer, an app's process), so each wait ends within
//! [`POLL`] of the stop instead of at its own time limit.
//!
//! # Guarantees
//! - [`Stop::recv`] never waits past the deadline, nor more than [`POLL`] past a signal.
//! - A stop is sticky: once [`Stop::reason`] is `Some`, it stays `Some` (a signal wins over the
//!   deadline when both came).
//!
//! # Non-guarantees
//! - Nothing is interrupted in the middle: code that does not wait on a [`Stop`] (an in-process
//!   handler's call, laying out a sandbox) runs to its end first.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
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

/// What a wait on a channel gave ([`Stop::recv`]).
#[derive(Debug)]
pub enum Received<T> {
    /// A message came.
    Got(T),
    /// The time limit passed first.
    Timeout,
    /// The sender is gone.
    Disconnected,
    /// The run stopped first.
    Stopped(StopReason),
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

    /// This stop with the deadline `within` from now.
    pub fn within(mut self, within: Duration) -> Stop {
        self.deadline = Some(Instant::now() + within);
        self
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

    /// Sleep `d`, or less when the run stops first; the reason when it did.
    pub fn sleep(&self, d: Duration) -> Option<StopReason> {
        let end = Instant::now() + d;
        loop {
            if let Some(r) = self.reason() {
                return Some(r);
            }
            let now = Instant::now();
            if now >= end {
                return None;
            }
            std::thread::sleep((end - now).min(POLL));
        }
    }

    /// Wait up to `timeout` for a message on `rx`, ending early when the run stops.
    pub fn recv<T>(&self, rx: &Receiver<T>, timeout: Duration) -> Received<T> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(r) = self.reason() {
                return Received::Stopped(r);
            }
            let now = Instant::now();
            if now >= end {
                return Received::Timeout;
            }
            let mut slice = (end - now).min(POLL);
            if let Some(left) = self.remaining() {
                slice = slice.min(left.max(Duration::from_millis(1)));
            }
            match rx.recv_timeout(slice) {
                Ok(m) => return Received::Got(m),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Received::Disconnected,
            }
        }
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

    #[test]
    fn a_wait_ends_at_the_deadline_or_soon_after_a_signal() {
        let (_tx, rx) = std::sync::mpsc::channel::<u8>();
        let stop = Stop::never().within(Duration::from_millis(100));
        let t = Instant::now();
        assert!(matches!(
            stop.recv(&rx, Duration::from_secs(30)),
            Received::Stopped(StopReason::Deadline)
        ));
        assert!(t.elapsed() < Duration::from_secs(2));
        let stop = Stop::never();
        let s2 = stop.clone();
        let h = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            s2.interrupt();
        });
        let t = Instant::now();
        assert!(matches!(
            stop.recv(&rx, Duration::from_secs(30)),
            Received::Stopped(StopReason::Interrupted)
        ));
        assert!(t.elapsed() < Duration::from_secs(2));
        h.join().unwrap();
        assert_eq!(stop.reason(), Some(StopReason::Interrupted));
        assert!(matches!(
            Stop::never().recv(&rx, Duration::from_millis(10)),
            Received::Timeout
        ));
    }
}
