//! The runner: the only module that sees both a case and a target.
//!
//! [`run`] lays out a sandbox per case, resets the target over it, sends the case's commands,
//! observes the disk, asks `attack::oracle::judge` for the verdict and sends events to a
//! [`Reporter`]. It prints nothing itself.
//!
//! This module holds what a run is asked to do ([`Config`]), the choice of cases ([`select`])
//! and the loop over them ([`run`]); the rest, one job per module: `lane` keeps a worker's
//! sandbox from one case to the next (reset by undo), `pool` runs the loop over
//! several targets at once ([`run_parallel`], which [`run`] is with one), `case` runs one case
//! (preparation, commands, observation), `black_box` plans the set-up of black-box mode, `race`
//! is the harness side of a race, `record` turns an observation into a [`CaseRecord`] and a run's
//! verdicts into its [`Summary`], `snapshots` glues a case to the baseline, and `events` holds
//! what reporters receive.

mod black_box;
mod case;
mod events;
mod lane;
mod pool;
mod race;
mod record;
mod snapshots;
mod spool;

pub use black_box::{black_box_prelude, MAX_PRELUDE};
pub use case::{
    instantiate, instantiate_in, plants_root, probe_startup, run_case, run_case_after, run_case_in,
    skip_reason, skip_reason_for, startup_case, strings_of, Startup, STARTUP_CASE,
};
pub use events::{Collect, Event, Fanout, Reporter};
pub use lane::{Lane, Lease, Reset};
pub use pool::run_parallel;
pub use race::{run_rounds, run_rounds_after, run_rounds_in, DEFAULT_RACE_ROUNDS};
pub use record::{
    cut_by_deadline, deadline_record, finding_step, keep_reply, peak_memory_kib, record,
    sha256_hex, CaseRecord, Completion, Cut, StepLabel, StepRecord, Summary, KEEP_BYTES,
};
pub use snapshots::{baseline_summary_of, listed_unchecked};
pub use spool::{Records, Spool, MAX_LINE};

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::baseline::Baseline;
use crate::expected::ExpectedFailures;
use crate::stop::Stop;
use crate::suite::list::CaseList;
use crate::suite::Case;
use crate::target::Target;
use crate::text::Profile;

/// What a run is asked to do. The default: profile `docs`, not strict, nothing expected to fail.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Which wording is PASS.
    pub profile: Profile,
    /// NON-STRICT becomes FAIL.
    pub strict: bool,
    /// Known failures that do not stop certification (`--expected-failures`).
    pub expected: ExpectedFailures,
    /// Black-box mode (`--memory-dir-unknown`): the handler's store is not the `memories_dir`
    /// memcert gives it (a database, a dict, another folder). Planted files are made through
    /// the handler's own `create` commands instead ([`black_box_prelude`]); cases that need
    /// anything `create` cannot make (links, FIFOs, empty folders, bytes that are not UTF-8,
    /// races) are SKIPPED with the reason; checks on disk are dropped, so state is judged only
    /// through the handler's answers. The canaries around the sandbox are still watched.
    pub black_box: bool,
    /// Whether to take a snapshot of each case's answers (`memcert snapshot`) and compare it
    /// with a baseline (`--baseline`).
    pub snapshots: Snapshots,
    /// Rounds of each race case (`--race-rounds`; `None`: [`DEFAULT_RACE_ROUNDS`]); see
    /// [`run_rounds`].
    pub race_rounds: Option<u32>,
    /// Ends the run early (a signal, `--deadline`): see [`run`]. The default never fires.
    pub stop: Stop,
    /// Bytes of one reply text a record keeps ([`StepRecord::reply`]; `None`: [`KEEP_BYTES`],
    /// 64 KiB). Every report is rendered from records: a larger value lets a long reply into all
    /// of them (the reference's own reply snapshots use it).
    pub keep_reply_bytes: Option<usize>,
    /// How each case's sandbox is had in a run ([`run`], [`run_parallel`]): the worker's kept
    /// sandbox undone (the default) or a fresh one per case (`--reset fresh`); see
    /// [`Reset`]. [`run_case`] and [`run_rounds`] always lay out a fresh one.
    pub reset: Reset,
    /// Ids of cases that exist besides the catalog's, run or not (the transcripts of `memcert
    /// certify --replay`): a baseline snapshot or an expected-failure entry of one of them that
    /// this run leaves out counts as not run, not as STALE or retired. Empty by default.
    pub known: Vec<String>,
}

/// What a run does with snapshots of the answers (`crate::baseline`).
#[derive(Clone, Debug, Default)]
pub enum Snapshots {
    /// Nothing (the default).
    #[default]
    Off,
    /// Take a snapshot of every case that can have one ([`CaseRecord::snapshot`]).
    Record,
    /// Take them and compare each with the baseline ([`CaseRecord::baseline`],
    /// [`Summary::baseline`]).
    Compare(std::sync::Arc<Baseline>),
}

/// Of the expected-failure entries that matched no case of the run, those that match no case
/// of the catalog at any level, nor the start-up case, nor a `known` id ([`Config::known`]):
/// retired or renamed ids.
fn retired(unused: &[String], known: &[String]) -> Vec<String> {
    if unused.is_empty() {
        return Vec::new();
    }
    let all = crate::suite::list::Cases::level(crate::suite::catalog::RunLevel::Full);
    let ids: Vec<std::borrow::Cow<'_, str>> = all.ids().collect();
    let mut ids: Vec<&str> = ids.iter().map(|id| id.as_ref()).collect();
    ids.push(STARTUP_CASE);
    ids.extend(known.iter().map(String::as_str));
    ExpectedFailures::matching_none(unused, &ids)
}

/// Whether a case id passes the globs `include` (any of them; all ids when empty) and
/// `exclude` (none of them): the test [`select`] applies, for lists that are not a `Vec`
/// ([`crate::suite::list::Cases::retain`]). Globs use `*` for any characters, `/` included.
///
/// # Errors
/// A malformed glob.
pub fn id_filter(
    include: &[String],
    exclude: &[String],
) -> Result<impl Fn(&str) -> bool, globset::Error> {
    let set = |globs: &[String]| -> Result<GlobSet, globset::Error> {
        let mut b = GlobSetBuilder::new();
        for g in globs {
            b.add(Glob::new(g)?);
        }
        b.build()
    };
    let inc = set(include)?;
    let exc = set(exclude)?;
    let all = include.is_empty();
    Ok(move |id: &str| (all || inc.is_match(id)) && !exc.is_match(id))
}

/// Keep the cases whose id matches one of `include` (all when empty) and none of `exclude`.
/// Globs use `*` for any characters, `/` included.
///
/// # Errors
/// A malformed glob.
pub fn select(
    cases: Vec<Case>,
    include: &[String],
    exclude: &[String],
) -> Result<Vec<Case>, globset::Error> {
    let keep = id_filter(include, exclude)?;
    Ok(cases.into_iter().filter(|c| keep(&c.id)).collect())
}

/// [`run`] that also returns every case record, in run order.
pub fn run_collect<C: CaseList + ?Sized>(
    config: &Config,
    cases: &C,
    target: &mut dyn Target,
) -> (Summary, Vec<CaseRecord>) {
    let mut c = Collect::default();
    let summary = run(config, cases, target, &mut c);
    (summary, c.0)
}

/// Run every case against `target`, reporting as it goes, and return the totals.
///
/// When `config.stop` fires, the target's waits end at once (its handler's process tree is
/// killed), the case running then is dropped (a signal) or made ERROR (the deadline), and:
/// after a signal no further case runs and the summary is [`Completion::Interrupted`]; after
/// the deadline every case left is ERROR ([`deadline_record`]) and the summary is
/// [`Completion::Incomplete`]. Either way `Finished` is sent, so the reports are written.
///
/// [`run_parallel`] runs the cases on several targets at once, with the same events.
pub fn run<C: CaseList + ?Sized>(
    config: &Config,
    cases: &C,
    target: &mut dyn Target,
    reporter: &mut dyn Reporter,
) -> Summary {
    run_parallel(config, cases, target, &mut [], reporter)
}
