//! The harness side of a race case: a thread that exchanges two folders on disk while the
//! case's commands run.

/// The harness side of a race: a thread exchanging two entries atomically, as fast as it can,
/// until stopped or `max_swaps` exchanges. Starting returns once the thread has made its first
/// exchange, so no command runs before the race does (a fast in-process handler could otherwise
/// answer every command while the new thread waits to be scheduled).
///
/// Each entry is a name in a folder handle opened from the sandbox's handles with no link
/// followed ([`crate::attack::sandbox::Sandbox::entry_at`]): the exchanges stay inside the
/// sandbox whatever is swapped for a link on the way. An entry that could not be opened makes
/// no exchange (0 swaps).
pub(super) struct Swapper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

/// One side of a race: a folder handle and a name in it.
pub(super) type Entry = std::io::Result<(cap_std::fs::Dir, std::ffi::OsString)>;

impl Swapper {
    pub(super) fn start(a: Entry, b: Entry, max_swaps: u64) -> Swapper {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let (started, first) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let (Ok((da, a)), Ok((db, b))) = (a, b) else {
                return 0;
            };
            let exchange = || {
                let flags = rustix::fs::RenameFlags::EXCHANGE;
                rustix::fs::renameat_with(&da, &a, &db, &b, flags)
            };
            let mut swaps = 0;
            let mut started = Some(started);
            while swaps < max_swaps && !flag.load(Ordering::Relaxed) {
                let done = exchange();
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
                let _ = exchange();
            }
            swaps
        });
        // Ends (Err) when the thread drops the sender: after its first exchange, or at once
        // when max_swaps is 0 or an entry could not be opened.
        let _ = first.recv();
        Swapper { stop, thread }
    }

    pub(super) fn stop(self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap_or(0)
    }
}

/// Rounds of each race case when [`super::Config::race_rounds`] is not set (`--race-rounds`).
pub const DEFAULT_RACE_ROUNDS: u32 = 5;

/// Run `case` as [`super::run_case`] does; a race case ([`crate::suite::Case::race`]) runs
/// [`super::Config::race_rounds`] times (each round a fresh sandbox and reset) and gives the
/// record of its worst round, so one leak in any round makes it UNSAFE (spec:3/S-10). When a
/// round leaked (UNSAFE) a `race-rounds` finding saying "leaked in k of n rounds" leads its
/// findings, with the same verdict; otherwise the finding is PASS ("no leak in n rounds"), so a
/// race's PASS says how much evidence it rests on. The duration is that of all rounds. A case
/// SKIPPED in its first round is not run again.
pub fn run_rounds(
    case: &crate::suite::Case,
    target: &mut dyn crate::target::Target,
    config: &super::Config,
) -> super::CaseRecord {
    run_rounds_after(case, target, config, &super::Startup::default())
}

/// [`run_rounds`] after the run's start-up probe: each round is
/// [`super::run_case_after`] with `startup`.
pub fn run_rounds_after(
    case: &crate::suite::Case,
    target: &mut dyn crate::target::Target,
    config: &super::Config,
    startup: &super::Startup,
) -> super::CaseRecord {
    let mut lane = super::Lane::new(super::Reset::Fresh);
    run_rounds_in(case, target, config, startup, &mut lane)
}

/// [`run_rounds_after`] in the sandboxes of `lane` (each round is [`super::run_case_in`]).
pub fn run_rounds_in(
    case: &crate::suite::Case,
    target: &mut dyn crate::target::Target,
    config: &super::Config,
    startup: &super::Startup,
    lane: &mut super::Lane,
) -> super::CaseRecord {
    use crate::suite::verdict::Verdict;
    let mut first = super::run_case_in(case, target, config, startup, lane);
    if case.race.is_none() || first.verdict == Verdict::Skipped {
        return first;
    }
    let rounds = config.race_rounds.unwrap_or(DEFAULT_RACE_ROUNDS).max(1);
    let mut leaked = u32::from(first.verdict == Verdict::Unsafe);
    let mut duration = first.duration_ms;
    for _ in 1..rounds {
        let rec = super::run_case_in(case, target, config, startup, lane);
        duration = duration.saturating_add(rec.duration_ms);
        leaked += u32::from(rec.verdict == Verdict::Unsafe);
        // Keep the first worst round: its steps and findings show the leak.
        if rec.verdict > first.verdict {
            first = rec;
        }
    }
    first.duration_ms = duration;
    // Findings stay worst first: the leak count leads, the no-leak note comes last.
    if leaked > 0 {
        let detail = format!(
            "leaked in {leaked} of {rounds} rounds (one leak is UNSAFE; the steps shown are those \
             of the first leaking round)"
        );
        first
            .findings
            .insert(0, rounds_finding(Verdict::Unsafe, detail));
    } else {
        let detail = format!("no leak in {rounds} rounds");
        first.findings.push(rounds_finding(Verdict::Pass, detail));
    }
    first
}

fn rounds_finding(
    verdict: crate::suite::verdict::Verdict,
    detail: String,
) -> crate::attack::oracle::Finding {
    crate::attack::oracle::Finding {
        verdict,
        kind: "race-rounds".into(),
        detail,
    }
}
