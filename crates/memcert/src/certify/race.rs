//! The harness side of a race case: a thread that exchanges two folders on disk while the
//! case's commands run.

/// The harness side of a race: a thread exchanging two host paths atomically, as fast as it can,
/// until stopped or `max_swaps` exchanges. Starting returns once the thread has made its first
/// exchange, so no command runs before the race does (a fast in-process handler could otherwise
/// answer every command while the new thread waits to be scheduled).
///
/// # Ambient authority
/// `renameat2(RENAME_EXCHANGE)` by host path, inside the case's sandbox only.
pub(super) struct Swapper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl Swapper {
    pub(super) fn start_unchecked(
        a: std::path::PathBuf,
        b: std::path::PathBuf,
        max_swaps: u64,
    ) -> Swapper {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let (started, first) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let mut swaps = 0;
            let mut started = Some(started);
            while swaps < max_swaps && !flag.load(Ordering::Relaxed) {
                let flags = rustix::fs::RenameFlags::EXCHANGE;
                let done =
                    rustix::fs::renameat_with(rustix::fs::CWD, &a, rustix::fs::CWD, &b, flags);
                // Wake the runner after the first attempt, whatever it gave: dropping the
                // sender ends its wait.
                drop(started.take());
                if done.is_err() {
                    break;
                }
                swaps += 1;
            }
            // Leave the names as they were laid out.
            if swaps % 2 == 1 {
                let flags = rustix::fs::RenameFlags::EXCHANGE;
                let _ = rustix::fs::renameat_with(rustix::fs::CWD, &a, rustix::fs::CWD, &b, flags);
            }
            swaps
        });
        // Ends (Err) when the thread drops the sender: after its first exchange, or at once
        // when max_swaps is 0.
        let _ = first.recv();
        Swapper { stop, thread }
    }

    pub(super) fn stop(self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap_or(0)
    }
}
