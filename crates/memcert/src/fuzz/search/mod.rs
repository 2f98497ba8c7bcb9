//! `memcert fuzz`: command sequences against any handler, graded as `certify` grades a case,
//! with the documented model ([`Model`](crate::handler::model::Model)) as the oracle; what it
//! finds is shrunk to a minimal sequence.
//!
//! # How one input is judged
//! A [`Sequence`] (a planted layout and up to 16 commands, [`generate`]) is planned into a
//! catalog case ([`plan::plan`]): each step accepts the model's outcome, the store is checked at
//! the end against the model's tree, and the canaries around the store are watched, exactly as
//! for a catalog case ([`crate::certify::run_case_in`], in the worker's kept sandbox, reset by
//! undo). A reply that takes another acceptable branch (an overwrite, a refusal of an unusual
//! name, a spelling taken as a name) makes the model follow that branch and the input run again
//! ([`judge`]), so one accepted difference is not a finding at every later step. What is left:
//! - **a finding**: the case is FAIL (a reply with another meaning, a store that differs) or
//!   UNSAFE (anything outside touched, a canary or host path in a reply). Findings are grouped
//!   by [`Cause`] (verdict, finding kind, command, expected outcome): each cause is shrunk once
//!   ([`shrink`]) and counted every time it is met;
//! - **a NON-STRICT divergence**: other words, or an accepted branch; counted, not reported;
//! - an ERROR (no reply: a hang, a crash): counted.
//!
//! # Search
//! Inputs are drawn fresh or (half the time) mutated from the corpus ([`generate::mutate`]); an input is kept
//! when it reaches a new coverage key, (command, model outcome, branch taken, reply is an error),
//! as libFuzzer keeps inputs that reach new edges. With one seed and one handler, the run is
//! deterministic as far as the handler is.
//!
//! # Non-guarantees
//! - The model is the reference's behaviour; a careful handler that words, lists or refuses
//!   differently is graded by meaning as `certify` grades it, and the accepted branches above are
//!   the only behaviours the model follows. A handler that takes a spelling the model refuses is
//!   not followed past that step.
//! - Black-box mode (`--memory-dir-unknown`) plants nothing and checks no store on disk: the
//!   plan views what the model holds after every [`plan::CHECKPOINT_EVERY`] commands and at
//!   the end, at most [`plan::CHECKPOINT_VIEWS`] views each (folders with plain listings
//!   first, then plain files). A wrong state put right before the next checkpoint, one past
//!   the cap, under a name outside `A-Za-z0-9._-`, or in a folder a refused command may have
//!   left is not seen.

pub mod generate;
pub mod plan;
mod shrink;
mod story;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::certify::{run_case_in, CaseRecord, Config, Lane, Startup};
use crate::fuzz::sequence::{CommandSpec, Sequence};
use crate::suite::verdict::{grade_step, reply_matches, Verdict};
use crate::suite::{Level, Step};
use crate::target::Target;
use crate::text::OutcomeKind;

pub use self::plan::{Branch, Plan};

/// Most times one input is planned again on newly learnt branches (one per step at most).
const MAX_REPLANS: usize = 18;

/// How long and from where to search.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Stop after this many sequences (`--runs`); `None`: no limit.
    pub runs: Option<u64>,
    /// Stop after this long (`--duration`); `None`: no limit.
    pub duration: Option<Duration>,
    /// The RNG seed (`--seed`).
    pub seed: u64,
    /// Most inputs one shrink may run (each is one or more case runs).
    pub shrink_budget: usize,
    /// Inputs to run first, in order (`--corpus DIR`, a worker's share); each counts as a
    /// sequence, and is kept when it reaches new coverage, as libFuzzer reads its corpus.
    pub initial: Vec<Sequence>,
    /// How many of `initial`, from the first, are built-in inputs
    /// ([`generate::seeds`]), not read from a corpus: one kept for new coverage is told as
    /// [`Event::Kept`], as a drawn input is, so that a corpus folder holds it.
    pub built_in: usize,
}

impl Settings {
    /// Worker `i`'s settings among `workers` (`memcert fuzz --jobs N`): its share of `runs`
    /// (the first `runs % workers` workers take one more), seed `seed + i`, and every
    /// `workers`-th of `built_in` ([`generate::seeds`]) then of `corpus` from the `i`-th, as
    /// its [`Settings::initial`]. Worker 0 of 1 gets them all.
    pub fn worker(
        runs: Option<u64>,
        seed: u64,
        workers: u64,
        i: u64,
        built_in: &[Sequence],
        corpus: &[Sequence],
    ) -> Settings {
        let workers = workers.max(1);
        let share_out = |inputs: &[Sequence]| -> Vec<Sequence> {
            inputs
                .iter()
                .skip(usize::try_from(i).unwrap_or(usize::MAX))
                .step_by(usize::try_from(workers).unwrap_or(1))
                .cloned()
                .collect()
        };
        let mut initial = share_out(built_in);
        let built_in = initial.len();
        initial.extend(share_out(corpus));
        Settings {
            runs: runs.map(|r| r / workers + u64::from(i < r % workers)),
            seed: seed.wrapping_add(i),
            initial,
            built_in,
            ..Settings::default()
        }
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            runs: Some(1000),
            duration: None,
            seed: 1,
            shrink_budget: 400,
            initial: Vec::new(),
            built_in: 0,
        }
    }
}

/// What makes two findings the same flaw: the verdict, the kind of the worst finding (`reply`,
/// `check`, `outside-changed`, ...) and, for a FAIL reply, what the model said (success, or the
/// class of its error) and whether the handler answered with an error. The command is left
/// out: one flaw (say, success reported for a missing path) shows on several commands.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cause {
    /// FAIL or UNSAFE.
    pub verdict: Verdict,
    /// The worst finding's kind; `outside-read`, `outside-changed`, `outside-copied` and
    /// `credential-read` are all `outside-touched` (one flaw: the confinement).
    pub kind: String,
    /// For a reply: `success`, `not-found`, `exists` or the model's error kind
    /// (`InvalidViewRange`); else empty.
    pub expected: String,
    /// For a reply: `success` or `error`; else empty.
    pub got: String,
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.verdict, self.kind)?;
        if !self.expected.is_empty() {
            write!(
                f,
                " (the model: {}; the handler: {})",
                self.expected, self.got
            )?;
        }
        Ok(())
    }
}

/// One flaw: its cause, the minimal input and its run.
#[derive(Clone, Debug)]
pub struct Found {
    /// What it is.
    pub cause: Cause,
    /// The shrunk input.
    pub sequence: Sequence,
    /// The shrunk input planned (the case to replay).
    pub plan: Plan,
    /// The shrunk input's run: each step's reply beside the model's.
    pub record: CaseRecord,
    /// Sequences run before it was first met (1-based).
    pub first_at: u64,
    /// Inputs that met it.
    pub count: u64,
    /// Steps of the input first met's case, before shrinking: its commands sent, and in
    /// black-box mode the checkpoint views ([`plan::CHECKPOINT_EVERY`]), as the shrunk case's
    /// `plan.case.steps` counts them.
    pub unshrunk_commands: usize,
    /// Shrinking stopped before it was done (its budget of tries spent, the run stopped, or
    /// `--duration` ran out): a smaller input may show the same cause.
    pub shrink_cut: bool,
    /// The cause this finding's commands before its last one show (with a view of each path
    /// they name), when it is another cause not met yet: this finding is then a later symptom
    /// of that flaw, counted under it once it is met ([`merge_found`]).
    pub follows: Option<Cause>,
    /// Other causes counted under this one (later symptoms of its flaw).
    pub also: Vec<Cause>,
}

/// Counts of a search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Sequences judged.
    pub sequences: u64,
    /// Commands those sent (the last plan of each).
    pub commands: u64,
    /// Cases run (sequences, their re-plans and the shrinks).
    pub case_runs: u64,
    /// Sequences that ended NON-STRICT (other words, accepted branches).
    pub non_strict: u64,
    /// Sequences that ended ERROR (a step got no reply: a hang, a crash) or SKIPPED (a layout
    /// black-box mode cannot plant).
    pub errors: u64,
    /// Distinct coverage keys reached.
    pub coverage: usize,
    /// Inputs the corpus holds.
    pub corpus: usize,
}

/// What a search ended with.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// One per cause, in the order they were first met.
    pub found: Vec<Found>,
    /// Counts.
    pub stats: Stats,
    /// The coverage keys reached (`command|outcome|branch|is_error`), so that the workers'
    /// coverage can be joined; `stats.coverage` is their number.
    pub coverage: BTreeSet<String>,
    /// Wall time.
    pub elapsed: Duration,
}

/// What a search tells as it goes.
#[derive(Debug)]
pub enum Event<'a> {
    /// A cause met for the first time, before its shrink.
    Met(&'a Cause),
    /// An input kept for reaching new coverage (drawn, or one of [`Settings::initial`]'s
    /// built-in inputs, not one read from a corpus): to save in a corpus folder.
    Kept(&'a Sequence),
}

/// How [`Fuzzer::check`] judged one sequence.
#[derive(Clone, Debug)]
pub enum Checked {
    /// PASS, NON-STRICT or INFO: no finding (other words and accepted branches included).
    Clean,
    /// FAIL or UNSAFE: the finding, shrunk.
    Found(Box<Found>),
    /// ERROR or SKIPPED (a step got no reply, the handler could not be made over its store):
    /// the run's record, whose steps and findings say why.
    Error(Box<CaseRecord>),
}

/// How one run of a planned input ended.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Judged {
    /// Command `.0` (its index in the sequence, not the step's in the case: black-box
    /// checkpoints add steps) took branch `.1`, which the plan did not follow: plan again.
    Replan(usize, Branch),
    /// A finding.
    Found(Cause),
    /// NON-STRICT or INFO.
    NonStrict,
    /// PASS.
    Pass,
    /// ERROR or SKIPPED.
    Error,
}

/// One input judged: how, the final plan and its run, and the branches each step took.
struct Judgement {
    judged: Judged,
    plan: Plan,
    record: CaseRecord,
    taken: Vec<Option<Branch>>,
}

/// The searcher: a target, the run's config, one lane.
pub struct Fuzzer<'a> {
    target: &'a mut dyn Target,
    config: &'a Config,
    startup: Startup,
    lane: Lane,
    case_runs: u64,
}

impl<'a> Fuzzer<'a> {
    /// A searcher over `target`, which [`crate::certify::probe_startup`] has probed (`startup`).
    pub fn new(target: &'a mut dyn Target, config: &'a Config, startup: Startup) -> Fuzzer<'a> {
        Fuzzer::with_lane(target, config, startup, Lane::new(config.reset))
    }

    /// [`Fuzzer::new`] that runs its cases in `lane` (a worker's kept sandbox, from an earlier
    /// searcher's [`Fuzzer::into_lane`]): what [`crate::fuzz::differential`] keeps from one
    /// input to the next.
    pub fn with_lane(
        target: &'a mut dyn Target,
        config: &'a Config,
        startup: Startup,
        lane: Lane,
    ) -> Fuzzer<'a> {
        Fuzzer {
            target,
            config,
            startup,
            lane,
            case_runs: 0,
        }
    }

    /// The searcher's lane, for the next searcher ([`Fuzzer::with_lane`]).
    pub fn into_lane(self) -> Lane {
        self.lane
    }

    /// Judge one sequence as [`Fuzzer::search`] judges each (planned, run, planned again on
    /// each accepted branch the handler took) and, on a finding, shrink it within
    /// `shrink_budget` judged runs.
    pub fn check(&mut self, seq: &Sequence, shrink_budget: usize) -> Checked {
        let j = self.evaluate(seq, "1");
        match j.judged.clone() {
            Judged::Found(cause) => Checked::Found(Box::new(self.shrink(
                seq,
                &cause,
                j,
                1,
                shrink_budget,
                None,
            ))),
            Judged::Error => Checked::Error(Box::new(j.record)),
            Judged::NonStrict | Judged::Pass | Judged::Replan(..) => Checked::Clean,
        }
    }

    /// Search until `settings` or the config's stop ends it, running [`Settings::initial`]
    /// first; `events` is told of each cause when it is first met and of each input kept.
    pub fn search(&mut self, settings: &Settings, events: &mut dyn FnMut(Event<'_>)) -> Outcome {
        let started = Instant::now();
        let mut rng = fastrand::Rng::with_seed(settings.seed);
        let mut corpus: Vec<Sequence> = Vec::new();
        let mut coverage: BTreeSet<String> = BTreeSet::new();
        let mut found: BTreeMap<Cause, usize> = BTreeMap::new();
        let mut out = Outcome::default();
        loop {
            let n = out.stats.sequences;
            if settings.runs.is_some_and(|r| n >= r)
                || settings.duration.is_some_and(|d| started.elapsed() >= d)
                || self.config.stop.reason().is_some()
            {
                break;
            }
            let initial = usize::try_from(n)
                .ok()
                .and_then(|i| settings.initial.get(i));
            let seq = if let Some(s) = initial {
                s.clone()
            } else if corpus.is_empty() || rng.bool() {
                generate::sequence(&mut rng)
            } else {
                let base = &corpus[rng.usize(..corpus.len())];
                generate::mutate(&mut rng, base)
            };
            let id = format!("{}-{}", settings.seed, n + 1);
            let j = self.evaluate(&seq, &id);
            out.stats.sequences += 1;
            out.stats.commands += j.plan.case.steps.len() as u64;
            let before = coverage.len();
            coverage.extend(keys(&j));
            if coverage.len() > before {
                if initial.is_none() || n < settings.built_in as u64 {
                    events(Event::Kept(&seq));
                }
                corpus.push(seq.clone());
            }
            match j.judged.clone() {
                Judged::Found(cause) => {
                    if let Some(&i) = found.get(&cause) {
                        out.found[i].count += 1;
                    } else {
                        events(Event::Met(&cause));
                        let deadline = settings.duration.map(|d| started + d);
                        let mut f =
                            self.shrink(&seq, &cause, j, n + 1, settings.shrink_budget, deadline);
                        match self.earlier_cause(&f, &id) {
                            // A consequence of a flaw an earlier command already shows: it
                            // counts there, now and when met again, without another shrink.
                            Some(c) if found.contains_key(&c) => {
                                let i = found[&c];
                                out.found[i].count += 1;
                                out.found[i].also.push(cause.clone());
                                found.insert(cause, i);
                            }
                            follows => {
                                f.follows = follows;
                                found.insert(cause, out.found.len());
                                out.found.push(f);
                            }
                        }
                    }
                }
                Judged::NonStrict => out.stats.non_strict += 1,
                Judged::Error => out.stats.errors += 1,
                Judged::Pass | Judged::Replan(..) => {}
            }
        }
        out.found = merge_found(std::mem::take(&mut out.found));
        out.stats.coverage = coverage.len();
        out.stats.corpus = corpus.len();
        out.coverage = coverage;
        out.stats.case_runs = self.case_runs;
        out.elapsed = started.elapsed();
        out
    }

    /// Plan `seq`, run it, and plan again on each branch the handler took that the plan did not
    /// follow.
    fn evaluate(&mut self, seq: &Sequence, id: &str) -> Judgement {
        let device = 1u32 << plan::DEVICE_BIT;
        if seq.layout & device != 0 {
            let j = self.evaluate_planted(seq, id);
            if j.record.verdict != Verdict::Skipped {
                return j;
            }
            // The device could not be planted where this target's sandboxes are (nodev, no
            // mknod): the same input without it.
            let mut without = seq.clone();
            without.layout &= !device;
            return self.evaluate_planted(&without, id);
        }
        self.evaluate_planted(seq, id)
    }

    /// [`Fuzzer::evaluate`] of `seq` as its layout says.
    fn evaluate_planted(&mut self, seq: &Sequence, id: &str) -> Judgement {
        let profile = self.config.profile;
        let mut branches: Vec<Branch> = Vec::new();
        let mut replans = 0;
        loop {
            let plan = plan::plan(seq, &branches, profile, id, self.config.black_box);
            let record = run_case_in(
                &plan.case,
                self.target,
                self.config,
                &self.startup,
                &mut self.lane,
            );
            self.case_runs += 1;
            let (judged, taken) = judge(&plan, &branches, &record, self.config);
            let judged = match judged {
                Judged::Replan(i, b) if replans < MAX_REPLANS => {
                    replans += 1;
                    branches.truncate(i);
                    branches.resize(i, Branch::Model);
                    branches.push(b);
                    continue;
                }
                // Branches that keep changing (a handler that is not deterministic): counted
                // as NON-STRICT.
                Judged::Replan(..) => Judged::NonStrict,
                j => j,
            };
            return Judgement {
                judged,
                plan,
                record,
                taken,
            };
        }
    }
}

impl Fuzzer<'_> {
    /// The cause the shrunk finding `f` shows without its last command, when that still fails
    /// with another cause: `f` is then a later symptom of that flaw (a create that never
    /// wrote, then a str_replace in the file: the str_replace's FAIL is the create's flaw).
    /// When those commands alone pass, each prefix of them (shortest first) is run again with
    /// a view of each path it names, so that a state no store check can see (black-box mode, a
    /// cache) shows where it was left.
    fn earlier_cause(&mut self, f: &Found, id: &str) -> Option<Cause> {
        let mut shorter = f.sequence.clone();
        shorter.commands.truncate(f.plan.commands_sent());
        shorter.commands.pop()?;
        if shorter.commands.is_empty() {
            return None;
        }
        // Another cause counts as the earlier one only when it is at least as grave: an
        // UNSAFE is never counted under a FAIL a probe's view shows.
        let other = |j: Judged| match j {
            Judged::Found(c) if c != f.cause && c.verdict >= f.cause.verdict => Some(Some(c)),
            Judged::Found(c) if c == f.cause => Some(None),
            _ => None,
        };
        if let Some(c) = other(self.evaluate(&shorter, id).judged) {
            return c;
        }
        // Then each prefix of them, shortest first, with a view of each path it names: a
        // wrong state the last of them hides (a file made again over a stale one) shows after
        // the command that left it.
        for k in 1..=shorter.commands.len() {
            let mut probe = Sequence {
                commands: shorter.commands[..k].to_vec(),
                ..shorter.clone()
            };
            let mut named: Vec<&crate::fuzz::sequence::PathSpec> = Vec::new();
            for p in shorter.commands[..k].iter().flat_map(CommandSpec::paths) {
                if !named.contains(&p) {
                    named.push(p);
                }
            }
            probe
                .commands
                .extend(named.into_iter().map(|p| CommandSpec::View {
                    path: p.clone(),
                    range: None,
                }));
            probe.commands.truncate(crate::fuzz::sequence::MAX_COMMANDS);
            if let Some(c) = other(self.evaluate(&probe, id).judged) {
                return c;
            }
        }
        None
    }
}

/// Findings as one list per flaw, from one worker or several (in the order met, or the
/// workers' lists one after another):
/// - findings of one cause (met by several workers), or of a cause another finding counts
///   under ([`Found::also`]), are one: counts added, the shortest shrink kept, the earliest
///   sequence;
/// - a finding that is a later symptom of another ([`Found::follows`]) is counted under it, along
///   a chain of such links.
pub fn merge_found(all: Vec<Found>) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    for f in all {
        let same = |g: &Found| {
            g.cause == f.cause || g.also.contains(&f.cause) || f.also.contains(&g.cause)
        };
        match out.iter().position(same) {
            Some(i) => absorb(&mut out[i], f),
            None => out.push(f),
        }
    }
    let keys: Vec<(Cause, Vec<Cause>)> = out
        .iter()
        .map(|f| (f.cause.clone(), f.also.clone()))
        .collect();
    let follows: Vec<Option<Cause>> = out.iter().map(|f| f.follows.clone()).collect();
    let root = symptom_roots(&keys, &follows);
    let mut kept: Vec<Option<Found>> = out.into_iter().map(Some).collect();
    for i in 0..kept.len() {
        if root[i] != i {
            if let Some(f) = kept[i].take() {
                if let Some(r) = kept[root[i]].as_mut() {
                    r.count += f.count;
                    r.first_at = r.first_at.min(f.first_at);
                    r.also.push(f.cause);
                    r.also.extend(f.also);
                }
            }
        }
    }
    kept.into_iter().flatten().collect()
}

/// `f`, a finding of the same flaw, counted into `g`: counts added, the shorter shrink kept,
/// the earlier first sequence, the causes counted under either.
fn absorb(g: &mut Found, f: Found) {
    let count = g.count + f.count;
    let first_at = g.first_at.min(f.first_at);
    let mut also = std::mem::take(&mut g.also);
    also.extend(f.also.iter().cloned());
    let other = if f.plan.case.steps.len() < g.plan.case.steps.len() {
        std::mem::replace(g, f).cause
    } else {
        f.cause
    };
    if other != g.cause && !also.contains(&other) {
        also.push(other);
    }
    also.retain(|c| *c != g.cause);
    g.also = also;
    g.count = count;
    g.first_at = first_at;
}

/// For each finding, given as (its cause, the causes counted under it), the index it is
/// counted under: its own, or the end of the chain of `follows` links (finding `i` is a later
/// symptom of the finding whose cause, or a cause counted under it, is `follows[i]`). A chain
/// that comes back on itself ends at the first-met finding of the loop.
fn symptom_roots(keys: &[(Cause, Vec<Cause>)], follows: &[Option<Cause>]) -> Vec<usize> {
    let next = |i: usize| -> Option<usize> {
        let c = follows.get(i)?.as_ref()?;
        keys.iter()
            .position(|(d, also)| d == c || also.contains(c))
            .filter(|&j| j != i)
    };
    (0..keys.len())
        .map(|i| {
            let mut seen = vec![i];
            let mut r = i;
            while let Some(j) = next(r) {
                if let Some(at) = seen.iter().position(|&k| k == j) {
                    return seen[at..].iter().copied().min().unwrap_or(r);
                }
                seen.push(j);
                r = j;
            }
            r
        })
        .collect()
}

/// The branch a reply to `step` took: the model's outcome (also in other words), another
/// accepted reply's branch, or `None` (a reply with another meaning).
fn taken(
    step: &Step,
    others: &[(crate::suite::Reply, Branch)],
    reply: &crate::protocol::ToolResult,
    config: &Config,
) -> Option<Branch> {
    let model_only = Step {
        input: step.input.clone(),
        accept: step.accept[..1].to_vec(),
        tests_view_format: step.tests_view_format,
    };
    let g = grade_step(&model_only, reply, config.profile, Level::Must, false);
    if matches!(
        g.verdict,
        Verdict::Pass | Verdict::NonStrict | Verdict::Info
    ) {
        return Some(Branch::Model);
    }
    others
        .iter()
        .find(|(r, _)| reply_matches(config.profile, r, reply))
        .map(|(_, b)| *b)
}

/// Judge a run of `plan`, planned on `branches` (per command, [`Plan::commands`]): the first
/// step whose branch differs from the plan's asks for a new plan on that step's command;
/// otherwise the case's verdict says.
fn judge(
    plan: &Plan,
    branches: &[Branch],
    record: &CaseRecord,
    config: &Config,
) -> (Judged, Vec<Option<Branch>>) {
    let mut took = Vec::new();
    for (i, s) in record.steps.iter().enumerate() {
        let (Some(reply), Some(step), Some(sp)) =
            (&s.reply, plan.case.steps.get(i), plan.steps.get(i))
        else {
            break;
        };
        let t = taken(step, &sp.others, reply, config);
        took.push(t);
        let planned = plan.branch_of(i, branches);
        // A view the plan added (a black-box checkpoint) is no command: it has no branch to
        // follow, and one that took another is judged by the case's verdict.
        let command = plan.commands.get(i).copied().flatten();
        match (t, command) {
            (Some(b), _) if b == planned => {}
            (Some(b), Some(c)) if record.verdict != Verdict::Unsafe => {
                return (Judged::Replan(c, b), took)
            }
            _ => break,
        }
    }
    let judged = match record.verdict {
        Verdict::Fail | Verdict::Unsafe => Judged::Found(cause_of(plan, record)),
        Verdict::NonStrict | Verdict::Info => Judged::NonStrict,
        Verdict::Pass => Judged::Pass,
        _ => Judged::Error,
    };
    (judged, took)
}

/// The cause of a FAIL or UNSAFE record: its worst finding, and for a finding on a step
/// (`step N: ...`) what the model said there and whether the handler answered an error.
fn cause_of(plan: &Plan, record: &CaseRecord) -> Cause {
    let worst = record.findings.first();
    let step = worst
        .and_then(|f| f.detail.strip_prefix("step "))
        .and_then(|d| d.split(':').next())
        .and_then(|n| n.trim().parse::<usize>().ok())
        .and_then(|n| n.checked_sub(1));
    let (expected, got) = match step.and_then(|i| Some((plan.steps.get(i)?, record.steps.get(i)?)))
    {
        Some((sp, sr)) => (
            class(sp.outcome.kind()),
            match &sr.reply {
                Some(r) if r.is_error => "error".to_owned(),
                Some(_) => "success".to_owned(),
                None => "no reply".to_owned(),
            },
        ),
        None => (String::new(), String::new()),
    };
    // Anything outside touched or disclosed is one cause whatever the command: the flaw is
    // the confinement, not the command that showed it.
    let (expected, got) = if record.verdict == Verdict::Unsafe {
        (String::new(), String::new())
    } else if worst.is_some_and(|f| {
        // The grader's own words open the detail; the handler's reply is quoted after them.
        f.detail.split_once(": ").is_some_and(|(head, rest)| {
            head.starts_with("step ") && rest.starts_with("the reply reads as an error")
        })
    }) {
        // An error sent without its flag is one flaw whatever error the model gave (an error
        // of another class, unflagged, counts here too).
        (
            "an error".to_owned(),
            "the same error without is_error".to_owned(),
        )
    } else {
        (expected, got)
    };
    let kind = worst.map(|f| f.kind.as_str()).unwrap_or_default();
    let kind = match kind {
        "outside-read" | "outside-changed" | "outside-copied" | "credential-read" => {
            "outside-touched"
        }
        k => k,
    };
    // A hang or an endless read of a FIFO, socket or device is one flaw (no file-type check),
    // and a whole read of the huge file another (no size limit), whatever the model said: as
    // `certify` counts them (`report::causes::read_hazard`).
    let read = worst
        .filter(|_| matches!(kind, "hang" | "unbounded-read"))
        .and_then(|f| crate::report::causes::read_hazard(&f.detail));
    if let Some(read) = read {
        return Cause {
            verdict: record.verdict,
            kind: format!("{read}-read"),
            expected: String::new(),
            got: String::new(),
        };
    }
    Cause {
        verdict: record.verdict,
        kind: kind.to_owned(),
        expected,
        got,
    }
}

/// What an outcome says, coarsely: `success`, `not-found`, `exists`, or the error's kind.
fn class(kind: OutcomeKind) -> String {
    use OutcomeKind as K;
    match kind {
        K::ViewDir
        | K::ViewFile
        | K::Created
        | K::Edited
        | K::Inserted
        | K::Deleted
        | K::Renamed => "success".into(),
        K::ViewNotFound
        | K::StrReplaceNotFound
        | K::InsertNotFound
        | K::DeleteNotFound
        | K::RenameNotFound => "not-found".into(),
        K::FileExists | K::RenameDestinationExists => "exists".into(),
        other => format!("{other:?}"),
    }
}

/// The coverage keys of a judged input: per step, (command, model outcome, branch taken or
/// `other-meaning`, reply is an error).
fn keys(j: &Judgement) -> Vec<String> {
    j.record
        .steps
        .iter()
        .zip(&j.plan.steps)
        .zip(&j.taken)
        .map(|((s, sp), t)| {
            let command = s
                .input
                .get("command")
                .and_then(|c| c.as_str())
                .unwrap_or("?");
            let branch = t.map(Branch::name).unwrap_or("other-meaning");
            let error = s.reply.as_ref().is_some_and(|r| r.is_error);
            format!("{command}|{:?}|{branch}|{error}", sp.outcome.kind())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference with one command answered otherwise: `alter` sees each input first and
    /// answers it itself (`Some`), or leaves it to the reference (`None`).
    struct Altered {
        reference: crate::target::inproc::InProcess,
        alter: Alter,
    }

    /// How [`Altered`] answers an input itself.
    type Alter = fn(
        &mut crate::target::inproc::InProcess,
        &serde_json::Value,
    ) -> Option<Result<crate::protocol::ToolResult, crate::target::TargetError>>;

    impl Altered {
        fn new(alter: Alter) -> Altered {
            Altered {
                reference: crate::target::inproc::InProcess::reference(crate::text::Profile::Docs),
                alter,
            }
        }
    }

    impl Target for Altered {
        fn describe(&self) -> String {
            "the reference, altered".into()
        }

        fn reset(
            &mut self,
            base: &std::path::Path,
            root: &std::path::Path,
        ) -> Result<(), crate::target::TargetError> {
            self.reference.reset(base, root)
        }

        fn call(
            &mut self,
            input: &serde_json::Value,
        ) -> Result<crate::protocol::ToolResult, crate::target::TargetError> {
            (self.alter)(&mut self.reference, input).unwrap_or_else(|| self.reference.call(input))
        }
    }

    /// Every `view` answers "ok" as a success (FAIL on an absent path).
    fn view_says_ok() -> Altered {
        Altered::new(|_, input| {
            (input["command"] == "view").then(|| Ok(crate::protocol::ToolResult::ok("ok")))
        })
    }

    /// A `create` of an existing file overwrites it (the overwrite branch).
    fn overwrites() -> Altered {
        Altered::new(|reference, input| {
            if input["command"] != "create" {
                return None;
            }
            let delete = serde_json::json!({"command": "delete", "path": input["path"]});
            Some(reference.call(&delete).and_then(|_| reference.call(input)))
        })
    }

    /// In black-box mode, an overwrite by the fifth command (step 10, after the checkpoint's
    /// five views) is learnt for that command: planned again on it, the views after it read the
    /// new text and the input is NON-STRICT (an accepted branch), not a finding or a replan
    /// that never settles.
    #[test]
    fn a_branch_after_a_black_box_checkpoint_is_followed() {
        let raw = |p: &str| crate::fuzz::sequence::PathSpec::raw(p);
        let create = |p: &str, t: &str| CommandSpec::Create {
            path: raw(p),
            text: crate::fuzz::sequence::TextSpec::Raw(t.into()),
        };
        let seq = Sequence {
            layout: 0,
            profile: 0,
            commands: vec![
                create("/memories/a.txt", "one\n"),
                create("/memories/b.txt", "b\n"),
                create("/memories/c.txt", "c\n"),
                create("/memories/d.txt", "d\n"),
                create("/memories/a.txt", "two\n"),
                CommandSpec::View {
                    path: raw("/memories/a.txt"),
                    range: None,
                },
            ],
        };
        let config = Config {
            black_box: true,
            ..Config::default()
        };
        let mut target = overwrites();
        let mut f = Fuzzer::new(&mut target, &config, Startup::default());
        let j = f.evaluate(&seq, "t");
        assert_eq!(j.judged, Judged::NonStrict);
        assert_eq!(f.case_runs, 2);
        assert_eq!(j.plan.commands[9], Some(4));
        assert_eq!(j.taken[9], Some(Branch::Overwrite));
        assert_eq!(j.record.verdict, Verdict::NonStrict);
        // After the overwrite: the view of the sequence, then the end's views (the root,
        // then the files); each of a.txt reads the new text.
        let after: Vec<(String, bool)> = j.record.steps[10..]
            .iter()
            .map(|s| {
                let text = s.reply.as_ref().and_then(|r| r.content.text());
                (
                    s.input["path"].as_str().unwrap_or("").to_owned(),
                    text.is_some_and(|t| t.contains("two")),
                )
            })
            .collect();
        let want = [
            ("/memories/a.txt", true),
            ("/memories", false),
            ("/memories/a.txt", true),
            ("/memories/b.txt", false),
            ("/memories/c.txt", false),
            ("/memories/d.txt", false),
        ];
        assert_eq!(
            after,
            want.map(|(p, two)| (p.to_owned(), two)),
            "{:?}",
            j.record.steps
        );
    }

    /// Two views of one absent file, shrunk with no deadline and with one already passed: the
    /// first drops a command and says it finished; the second keeps both and says it was cut.
    #[test]
    fn a_shrink_past_its_deadline_keeps_what_it_has_and_says_so() {
        let view = || CommandSpec::View {
            path: crate::fuzz::sequence::PathSpec::raw("/memories/absent.txt"),
            range: None,
        };
        let seq = Sequence {
            layout: 0,
            profile: 0,
            commands: vec![view(), view()],
        };
        let config = Config::default();
        let shrunk = |deadline: Option<Instant>| {
            let mut target = view_says_ok();
            let mut f = Fuzzer::new(&mut target, &config, Startup::default());
            let j = f.evaluate(&seq, "t");
            let Judged::Found(cause) = j.judged.clone() else {
                panic!("not found: {:?}", j.judged);
            };
            let found = f.shrink(&seq, &cause, j, 1, 400, deadline);
            (found.sequence.commands.len(), found.shrink_cut)
        };
        assert_eq!(shrunk(None), (1, false));
        assert_eq!(shrunk(Some(Instant::now())), (2, true));
    }

    /// Worker shares: runs split with the remainder to the first workers, seeds counted up,
    /// built-in inputs first then the corpus, every `workers`-th of each.
    #[test]
    fn a_worker_takes_its_share_of_runs_seeds_and_inputs() {
        let seq = |n: u32| Sequence {
            layout: n,
            profile: 0,
            commands: Vec::new(),
        };
        let built_in: Vec<Sequence> = (0..3).map(seq).collect();
        let corpus: Vec<Sequence> = (10..14).map(seq).collect();
        let w = |i| Settings::worker(Some(7), 5, 2, i, &built_in, &corpus);
        let layouts = |s: &Settings| s.initial.iter().map(|q| q.layout).collect::<Vec<_>>();
        let (a, b) = (w(0), w(1));
        assert_eq!((a.runs, a.seed, a.built_in), (Some(4), 5, 2));
        assert_eq!((b.runs, b.seed, b.built_in), (Some(3), 6, 1));
        assert_eq!(layouts(&a), [0, 2, 10, 12]);
        assert_eq!(layouts(&b), [1, 11, 13]);
        let one = Settings::worker(None, 1, 1, 0, &built_in, &corpus);
        assert_eq!((one.runs, one.built_in, one.initial.len()), (None, 3, 7));
    }

    /// A hang on a FIFO and an endless read of a device are one cause (no file-type check); a
    /// whole read of the huge file is another; a reply finding keeps what the model said.
    #[test]
    fn reads_of_special_files_are_one_cause_and_of_the_huge_file_another() {
        let seq = Sequence {
            layout: 0,
            profile: 0,
            commands: vec![CommandSpec::View {
                path: crate::fuzz::sequence::PathSpec::raw("/memories/x"),
                range: None,
            }],
        };
        let p = plan::plan(&seq, &[], crate::text::Profile::Docs, "t", false);
        let of = |kind: &str, detail: &str| {
            let mut r = crate::certify::deadline_record(&p.case, false);
            r.verdict = Verdict::Fail;
            r.findings = vec![crate::attack::oracle::Finding {
                verdict: Verdict::Fail,
                kind: kind.into(),
                detail: detail.into(),
            }];
            cause_of(&p, &r).to_string()
        };
        let hang = of(
            "hang",
            "step 1: hangs on a FIFO: no answer within 10s (bug:B17)",
        );
        let device = of(
            "unbounded-read",
            "step 1: unbounded read of a character device: the handler read 68157520 bytes for one call, more than 16777216 (bug:B17)",
        );
        let huge = of(
            "unbounded-read",
            "step 1: unbounded read of a huge file: the handler read 67108864 bytes for one call, more than 16777216 (bug:B17)",
        );
        assert_eq!(
            [hang.as_str(), device.as_str(), huge.as_str()],
            [
                "FAIL special-file-read",
                "FAIL special-file-read",
                "FAIL huge-file-read"
            ]
        );
    }

    fn cause(kind: &str) -> Cause {
        Cause {
            verdict: Verdict::Fail,
            kind: kind.into(),
            expected: String::new(),
            got: String::new(),
        }
    }

    /// A str_replace that fails (met first) after a create that never wrote (met second):
    /// counted under the create's cause; a chain of two links ends at its last cause; a link
    /// to a cause counted under another finding ends there; a loop ends at its first-met
    /// finding; an unrelated cause stays.
    #[test]
    fn symptoms_count_under_their_cause() {
        let keys = [
            (cause("reply"), vec![]),
            (cause("check"), vec![cause("merged")]),
            (cause("other"), vec![]),
            (cause("x"), vec![]),
            (cause("y"), vec![]),
            (cause("a"), vec![]),
            (cause("b"), vec![]),
        ];
        let follows = [
            Some(cause("check")),
            None,
            Some(cause("merged")),
            Some(cause("y")),
            Some(cause("reply")),
            Some(cause("b")),
            Some(cause("a")),
        ];
        assert_eq!(symptom_roots(&keys, &follows), [1, 1, 1, 1, 1, 5, 5]);
    }

    /// A finding of `kind` whose shrunk input has `commands` views, met `count` times first in
    /// sequence `first_at`, a symptom of `follows`.
    fn finding(
        kind: &str,
        commands: usize,
        count: u64,
        first_at: u64,
        follows: Option<&str>,
    ) -> Found {
        let sequence = Sequence {
            layout: 0,
            profile: 0,
            commands: (0..commands)
                .map(|_| CommandSpec::View {
                    path: crate::fuzz::sequence::PathSpec {
                        rooted: true,
                        tokens: Vec::new(),
                    },
                    range: None,
                })
                .collect(),
        };
        let plan = plan::plan(&sequence, &[], crate::text::Profile::Docs, "t", false);
        Found {
            cause: cause(kind),
            record: crate::certify::deadline_record(&plan.case, false),
            sequence,
            plan,
            first_at,
            count,
            unshrunk_commands: commands,
            shrink_cut: false,
            follows: follows.map(cause),
            also: Vec::new(),
        }
    }

    /// Two workers' lists: one cause met by both is one finding (counts added, the shorter
    /// shrink, the earlier sequence); a symptom of it from either worker counts there; an
    /// unrelated cause stays, in the order met.
    #[test]
    fn workers_findings_merge_per_flaw() {
        let merged = merge_found(vec![
            finding("reply", 3, 2, 5, None),
            finding("check", 1, 1, 9, None),
            finding("x", 2, 4, 2, Some("reply")),
            finding("reply", 2, 1, 7, None),
        ]);
        let got: Vec<(String, usize, u64, u64, Vec<String>)> = merged
            .iter()
            .map(|f| {
                (
                    f.cause.kind.clone(),
                    f.plan.case.steps.len(),
                    f.count,
                    f.first_at,
                    f.also.iter().map(|c| c.kind.clone()).collect(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("reply".to_owned(), 2, 7, 2, vec!["x".to_owned()]),
                ("check".to_owned(), 1, 1, 9, vec![]),
            ]
        );
    }
}
