//! The runner with a pool of targets ([`run_parallel`]): several handlers (each its own process,
//! or its own in-process instance, with its own scratch root and sandboxes) take cases from one
//! queue, and the records reach the reporter in catalog order, as [`super::run`] sends them.
//!
//! # Guarantees
//! - The reporter gets the event sequence a run on one target gives: `Started`, then one
//!   `CaseFinished` per case in the order of `cases` (a record that came early waits for those
//!   before it), then `Finished` once. The summary is the one a run on one target makes of
//!   those records.
//! - The start-up probe ([`super::probe_startup`]) runs once, first, on the first target,
//!   before any other target gets a case. The summary names the first target and its
//!   containment ([`Target::describe`], [`Target::containment`]): every target of a pool runs
//!   the same handler under the same policy (the CLI leaves out a handler whose containment
//!   differs from the first's, and makes no pool where a handler gets no PID namespace of its
//!   own). [`Summary::jobs`] is the number of targets: `target` and every helper.
//! - Race cases ([`Case::race`]) run first, right after the start-up probe, one after another
//!   on the first target alone (the others idle), so the load of the other handlers does not
//!   make a race rarer; then every other case runs on the whole pool. Races first, because they
//!   are in the middle of the catalog: run last, they would hold back the report of every case
//!   after the first of them until the run ends (no progress, a signal losing the cases that
//!   finished, the deadline cutting the races rather than the rest).
//! - A stop (`config.stop`) reaches every target; each case a worker had not started is what
//!   [`crate::stop::run_item`] makes of it on one target (after a signal: not reported, nor any
//!   case after it in `cases`; after the deadline: [`super::deadline_record`]).
//! - Every target other than the first is shut down ([`Target::shutdown`]) by its worker when
//!   the queue is empty; the first one when the run ends, as [`super::run`] does. A contained
//!   handler process dies with the thread that started it (`PR_SET_PDEATHSIG`,
//!   [`crate::contain`]): one a worker restarts (after a timeout, a crash) lives in that
//!   worker's thread, which shuts it down before it ends.
//!
//! # Non-guarantees
//! - Which target runs which case, and the order cases start in.
//! - State a handler keeps from one case to the next (a cache it does not drop at reset) is
//!   seen by different cases than in a run on one target.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex, PoisonError};

use super::{
    deadline_record, peak_memory_kib, probe_startup, retired, run_rounds_in, snapshots,
    startup_case, CaseRecord, Config, Event, Lane, Reporter, Snapshots, Startup, Summary,
};
use crate::baseline::Comparison;
use crate::stop::StopReason;
use crate::suite::list::CaseList;
use crate::suite::verdict::Verdict;
use crate::target::Target;

/// Run every case against a pool of targets: `target` (on the calling thread: the start-up
/// probe, then every race case, then its share of the others) and each of `helpers` (a thread
/// each, its share of the cases other than races), reporting in the order of `cases`, and return the totals. With no
/// helper it is [`super::run`], case after case. See the [module docs](self) for what a pool
/// keeps of a run on one target.
///
/// Each target must be its own handler: its own process or instance, over its own scratch
/// root (two targets sharing one store would see each other's files).
///
/// A case of `cases` is had ([`CaseList::case`]) when a worker takes it and dropped when it is
/// done: a [`crate::suite::list::Cases`] builds each payload case only then, so a run holds no
/// more payload cases at once than it has workers. Nor does it keep the records: each goes to
/// `reporter` and is dropped (but for the few that wait for an earlier case still running).
pub fn run_parallel<C: CaseList + ?Sized>(
    config: &Config,
    cases: &C,
    target: &mut dyn Target,
    helpers: &mut [&mut (dyn Target + Send)],
    reporter: &mut dyn Reporter,
) -> Summary {
    let stop = &config.stop;
    target.set_stop(stop);
    // Start-up is judged once, first: its side effects are one case, not one per case.
    let (startup, startup_record) = if cases.is_empty() || stop.reason().is_some() {
        (Startup::default(), None)
    } else {
        let (startup, rec) = probe_startup(target, config);
        // A probe a stop cut short proves nothing.
        (startup, rec.filter(|_| stop.reason().is_none()))
    };
    let startup_case = startup_record.as_ref().map(|_| startup_case());
    let name = target.describe();
    let planned = cases.len() + usize::from(startup_case.is_some());
    reporter.event(&Event::Started {
        target: &name,
        profile: config.profile,
        total: planned,
    });
    let mut merge = Merge::new(cases.len(), reporter);
    if let Some(rec) = &startup_record {
        merge.tally(rec);
    }
    let run = Shared {
        config,
        cases,
        startup: &startup,
        stopped: Mutex::new(None),
    };
    // Races run alone, while no other handler loads the machine, and first: mid-catalog, run
    // last they would hold back every report after the first of them until the run ends.
    let (races, rest): (Vec<usize>, Vec<usize>) =
        (0..cases.len()).partition(|&i| !helpers.is_empty() && cases.is_race(i));
    // The first target's sandbox is kept through both phases (certify::lane).
    let mut lane = Lane::new(config.reset);
    run.in_pool(&Queue::new(races), target, &mut lane, &mut [], &mut merge);
    run.in_pool(&Queue::new(rest), target, &mut lane, helpers, &mut merge);
    drop(lane);
    target.shutdown();
    let stopped = if merge.halted {
        Some(StopReason::Interrupted)
    } else {
        *run.stopped.lock().unwrap_or_else(PoisonError::into_inner)
    };
    let Merge {
        verdicts,
        compared,
        ran,
        timed_out,
        ..
    } = merge;
    let ids = startup_case
        .iter()
        .map(|c| std::borrow::Cow::Borrowed(c.id.as_str()))
        .chain((0..cases.len()).filter_map(|i| cases.id(i)));
    let outcomes = ids.zip(verdicts);
    let mut summary =
        Summary::of_ids(target.describe(), config, outcomes).stopped(stopped, planned);
    summary.containment = Some(target.containment());
    summary.jobs = 1 + helpers.len();
    summary.timed_out = timed_out;
    summary.timeout_ms = target.timeout().map(|t| t.as_millis() as u64);
    summary.retired = retired(&summary.unused, &config.known);
    if let Snapshots::Compare(b) = &config.snapshots {
        let run: Vec<std::borrow::Cow<'_, str>> = (0..ran).filter_map(|i| cases.id(i)).collect();
        summary.baseline = Some(snapshots::baseline_summary(
            b,
            &run,
            &compared,
            &config.known,
        ));
    }
    summary.peak_memory_kib = peak_memory_kib();
    reporter.event(&Event::Finished(&summary));
    summary
}

/// The indices of the cases a phase runs, handed out once each to whichever worker asks first.
struct Queue {
    order: Vec<usize>,
    next: AtomicUsize,
}

impl Queue {
    fn new(order: Vec<usize>) -> Queue {
        Queue {
            order,
            next: AtomicUsize::new(0),
        }
    }

    /// The next case to run, `None` once every one was handed out.
    fn take(&self) -> Option<usize> {
        self.order
            .get(self.next.fetch_add(1, Ordering::Relaxed))
            .copied()
    }
}

/// What every worker of a run reads, and the stop they share.
struct Shared<'a, C: ?Sized> {
    config: &'a Config,
    cases: &'a C,
    startup: &'a Startup,
    /// The stop reason the run has seen, kept across workers as [`crate::stop::run_item`] keeps
    /// it across the items of one.
    stopped: Mutex<Option<StopReason>>,
}

impl<C: CaseList + ?Sized> Shared<'_, C> {
    /// Case `i` on `target` under the run's stop ([`crate::stop::run_item`]); `None`: a signal
    /// stopped the run before or during it (or `cases` has no case `i`, which a queue of its
    /// indices never hands out). The case is built here and dropped when its record is made.
    fn one(&self, i: usize, target: &mut dyn Target, lane: &mut Lane) -> Option<CaseRecord> {
        let case = self.cases.case(i)?;
        let case = &*case;
        let mut seen = *self.stopped.lock().unwrap_or_else(PoisonError::into_inner);
        let rec = crate::stop::run_item(
            &self.config.stop,
            &mut seen,
            || run_rounds_in(case, target, self.config, self.startup, lane),
            |rec| rec.verdict == Verdict::Error,
            |cut| deadline_record(case, cut.is_some()),
        );
        let mut shared = self.stopped.lock().unwrap_or_else(PoisonError::into_inner);
        *shared = shared.or(seen);
        rec
    }

    /// Run `queue` on `target` (this thread) and on each helper (a thread each, shut down when
    /// the queue is empty), the records to `merge` as they come; returns when every case
    /// handed out is in. A worker stops taking cases after a signal.
    fn in_pool(
        &self,
        queue: &Queue,
        target: &mut dyn Target,
        lane: &mut Lane,
        helpers: &mut [&mut (dyn Target + Send)],
        merge: &mut Merge<'_>,
    ) {
        std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel::<(usize, Option<CaseRecord>)>();
            for helper in helpers.iter_mut() {
                let tx = tx.clone();
                scope.spawn(move || {
                    helper.set_stop(&self.config.stop);
                    let mut lane = Lane::new(self.config.reset);
                    while let Some(i) = queue.take() {
                        let rec = self.one(i, &mut **helper, &mut lane);
                        let signal = rec.is_none();
                        if tx.send((i, rec)).is_err() || signal {
                            break;
                        }
                    }
                    drop(lane);
                    helper.shutdown();
                });
            }
            drop(tx);
            while let Some(i) = queue.take() {
                let rec = self.one(i, target, lane);
                let signal = rec.is_none();
                merge.put(i, rec);
                while let Ok((i, rec)) = rx.try_recv() {
                    merge.put(i, rec);
                }
                if signal {
                    break;
                }
            }
            for (i, rec) in rx {
                merge.put(i, rec);
            }
        });
    }
}

/// The records of a run put back in the order of its cases on their way to the reporter.
struct Merge<'r> {
    /// The records that came while a case before them still ran, by case index (`None`: a
    /// signal stopped that case): only those a running case holds back, never a slot per case
    /// of the run.
    early: BTreeMap<usize, Option<CaseRecord>>,
    /// How many cases the run has.
    cases: usize,
    /// The first case not yet reported.
    next: usize,
    /// A case a signal stopped was reached: nothing more is reported.
    halted: bool,
    /// Cases reported.
    ran: usize,
    /// The verdicts reported, in order (the start-up case's first when there is one).
    verdicts: Vec<Verdict>,
    /// The baseline comparisons of the cases reported, in order.
    compared: Vec<(String, Comparison)>,
    /// The ids of the cases reported that timed out ([`CaseRecord::timed_out`]), in order.
    timed_out: Vec<String>,
    reporter: &'r mut dyn Reporter,
}

impl<'r> Merge<'r> {
    fn new(cases: usize, reporter: &'r mut dyn Reporter) -> Merge<'r> {
        Merge {
            early: BTreeMap::new(),
            cases,
            next: 0,
            halted: false,
            ran: 0,
            verdicts: Vec::with_capacity(cases + 1),
            compared: Vec::new(),
            timed_out: Vec::new(),
            reporter,
        }
    }

    /// Case `i` finished (`None`: a signal stopped it): report it and every case after it
    /// whose record is in, up to the first still running.
    fn put(&mut self, i: usize, rec: Option<CaseRecord>) {
        if i < self.cases && i >= self.next {
            self.early.insert(i, rec);
        }
        let mut ready = VecDeque::new();
        while !self.halted {
            let Some(slot) = self.early.remove(&self.next) else {
                break;
            };
            self.next += 1;
            match slot {
                Some(rec) => ready.push_back(rec),
                None => self.halted = true,
            }
        }
        for rec in ready {
            self.ran += 1;
            self.tally(&rec);
        }
    }

    /// Count `rec` in the run's totals (its verdict, a timeout, its baseline comparison) and
    /// report it.
    fn tally(&mut self, rec: &CaseRecord) {
        self.verdicts.push(rec.verdict);
        if rec.timed_out {
            self.timed_out.push(rec.id.clone());
        }
        if let Some(c) = &rec.baseline {
            self.compared.push((rec.id.clone(), c.clone()));
        }
        self.reporter.event(&Event::CaseFinished(rec));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::Value;

    use super::super::{run, Completion, Config, Event, Reporter, Summary};
    use super::run_parallel;
    use crate::protocol::ToolResult;
    use crate::stop::Stop;
    use crate::suite::Case;
    use crate::target::inproc::InProcess;
    use crate::target::{Target, TargetError};
    use crate::text::Profile;

    /// Every event as one line: `started N`, `case ID VERDICT FINDING-KINDS`, `finished`.
    #[derive(Default)]
    struct Lines(Vec<String>);

    impl Reporter for Lines {
        fn event(&mut self, event: &Event<'_>) {
            self.0.push(match event {
                Event::Started { total, .. } => format!("started {total}"),
                Event::CaseFinished(r) => {
                    let kinds: Vec<&str> = r.findings.iter().map(|f| f.kind.as_str()).collect();
                    format!("case {} {} {}", r.id, r.verdict.as_str(), kinds.join(","))
                }
                Event::Finished(_) => "finished".into(),
            });
        }
    }

    /// The first 40 hand-written cases and the first race case (in the middle of the list).
    fn cases() -> Vec<Case> {
        let all = crate::suite::catalog::all();
        let mut v: Vec<Case> = all
            .iter()
            .filter(|c| c.race.is_none())
            .take(40)
            .cloned()
            .collect();
        let race = all.iter().find(|c| c.race.is_some()).cloned();
        v.splice(20..20, race);
        v
    }

    fn reference() -> InProcess {
        InProcess::reference(Profile::Docs)
    }

    /// `cases` on the reference: one target, then a pool of three.
    fn both(config: &Config, cases: &[Case]) -> ((Summary, Lines), (Summary, Lines)) {
        let mut one = Lines::default();
        let s1 = run(config, cases, &mut reference(), &mut one);
        let mut pool = Lines::default();
        let (mut a, mut b) = (reference(), reference());
        let mut helpers: Vec<&mut (dyn Target + Send)> = vec![&mut a, &mut b];
        let s3 = run_parallel(config, cases, &mut reference(), &mut helpers, &mut pool);
        ((s1, one), (s3, pool))
    }

    #[test]
    fn a_pool_sends_the_events_of_one_target_in_catalog_order() {
        let cases = cases();
        let config = Config {
            race_rounds: Some(1),
            ..Config::default()
        };
        let ((s1, one), (s3, pool)) = both(&config, &cases);
        assert_eq!(one.0.len(), cases.len() + 2, "{:?}", one.0);
        assert_eq!(one.0, pool.0);
        let ids: Vec<String> = pool.0[1..=cases.len()]
            .iter()
            .map(|l| l.split(' ').nth(1).unwrap_or("").to_owned())
            .collect();
        let want: Vec<String> = cases.iter().map(|c| c.id.clone()).collect();
        assert_eq!(ids, want);
        assert_eq!(
            (s1.counts, s1.total, s1.completion, s1.certified),
            (s3.counts, s3.total, s3.completion, s3.certified)
        );
        assert_eq!(s3.total, 41);
    }

    #[test]
    fn a_deadline_passed_makes_every_case_of_a_pool_a_deadline_error() {
        let cases = cases();
        let config = Config {
            stop: Stop::on_flag(Arc::default(), Some(Duration::ZERO)),
            ..Config::default()
        };
        let ((s1, one), (s3, pool)) = both(&config, &cases);
        assert_eq!(one.0, pool.0);
        assert_eq!(pool.0[0], "started 41");
        assert!(pool.0[1..=41]
            .iter()
            .all(|l| l.ends_with(" ERROR deadline")));
        assert_eq!(pool.0[42], "finished");
        assert_eq!(s3.completion, Completion::Incomplete);
        assert_eq!((s1.total, s3.total), (41, 41));
    }

    /// The reference, interrupting the run (as a signal does) at the `at`-th call that any
    /// target sharing `calls` answers.
    struct Interrupting {
        inner: InProcess,
        stop: Stop,
        calls: Arc<AtomicUsize>,
        at: usize,
    }

    impl Target for Interrupting {
        fn describe(&self) -> String {
            self.inner.describe()
        }

        fn reset(
            &mut self,
            base: &std::path::Path,
            root: &std::path::Path,
        ) -> Result<(), TargetError> {
            self.inner.reset(base, root)
        }

        fn call(&mut self, input: &Value) -> Result<ToolResult, TargetError> {
            if self.calls.fetch_add(1, Ordering::SeqCst) + 1 == self.at {
                self.stop.interrupt();
            }
            self.inner.call(input)
        }
    }

    /// Calls a run of `cases` on one [`Interrupting`] target that never interrupts makes (the
    /// start-up probe's included).
    fn calls_of(config: &Config, cases: &[Case]) -> usize {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut t = Interrupting {
            inner: reference(),
            stop: config.stop.clone(),
            calls: Arc::clone(&calls),
            at: usize::MAX,
        };
        run_parallel(config, cases, &mut t, &mut [], &mut Lines::default());
        calls.load(Ordering::SeqCst)
    }

    /// `cases` on a pool of three [`Interrupting`] targets interrupting at the `at`-th call:
    /// the summary, the events, and the calls made.
    fn interrupted(config: &Config, cases: &[Case], at: usize) -> (Summary, Lines, usize) {
        let calls = Arc::new(AtomicUsize::new(0));
        let make = || Interrupting {
            inner: reference(),
            stop: config.stop.clone(),
            calls: Arc::clone(&calls),
            at,
        };
        let (mut first, mut a, mut b) = (make(), make(), make());
        let mut helpers: Vec<&mut (dyn Target + Send)> = vec![&mut a, &mut b];
        let mut lines = Lines::default();
        let summary = run_parallel(config, cases, &mut first, &mut helpers, &mut lines);
        let calls = calls.load(Ordering::SeqCst);
        (summary, lines, calls)
    }

    #[test]
    fn a_signal_stops_every_worker_and_the_pool_reports_a_prefix_once() {
        let cases = cases();
        let stop = Stop::never();
        let config = Config {
            stop: stop.clone(),
            race_rounds: Some(1),
            ..Config::default()
        };
        // The probe and the race case run first, alone: the signal comes 15 calls later.
        let race: Vec<Case> = cases.iter().filter(|c| c.race.is_some()).cloned().collect();
        let first = calls_of(&config, &race);
        let (summary, lines, calls) = interrupted(&config, &cases, first + 15);
        assert_eq!(summary.completion, Completion::Interrupted);
        assert_eq!(lines.0.first().map(String::as_str), Some("started 41"));
        assert_eq!(lines.0.last().map(String::as_str), Some("finished"));
        assert_eq!(lines.0.iter().filter(|l| *l == "finished").count(), 1);
        let reported: Vec<&str> = lines.0[1..lines.0.len() - 1]
            .iter()
            .map(|l| l.split(' ').nth(1).unwrap_or(""))
            .collect();
        let prefix: Vec<&str> = cases
            .iter()
            .map(|c| c.id.as_str())
            .take(reported.len())
            .collect();
        assert_eq!(reported, prefix);
        assert!(reported.len() < 15, "{reported:?}");
        assert_eq!(summary.total, reported.len());
        // Every worker stopped after the case it was running: no worker ran on through the
        // queue.
        let longest = cases.iter().map(|c| c.steps.len()).max().unwrap_or(0);
        assert!(calls <= first + 15 + 3 * longest, "{calls} calls");
    }

    #[test]
    fn race_cases_run_first_alone_and_a_signal_during_them_runs_no_other_case() {
        let cases = cases();
        let config = Config {
            stop: Stop::never(),
            race_rounds: Some(1),
            ..Config::default()
        };
        let race: Vec<Case> = cases.iter().filter(|c| c.race.is_some()).cloned().collect();
        assert_eq!(race.len(), 1);
        let first = calls_of(&config, &race);
        assert!(first > 1, "{first} calls");
        // The signal comes at the race's last call: had any other case run before it or
        // beside it, the count would be reached earlier, and calls made after.
        let (summary, lines, calls) = interrupted(&config, &cases, first);
        assert_eq!(calls, first);
        assert_eq!(summary.completion, Completion::Interrupted);
        assert_eq!(summary.total, 0);
        assert_eq!(lines.0, ["started 41", "finished"]);
    }
}
