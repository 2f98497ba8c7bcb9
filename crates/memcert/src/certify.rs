//! The runner: the only module that sees both a case and a target.
//!
//! [`run`] lays out a sandbox per case, resets the target over it, sends the case's commands,
//! observes the disk, asks `attack::oracle::judge` for the verdict and sends events to a
//! [`Reporter`]. It prints nothing itself.

use std::collections::BTreeMap;
use std::time::Instant;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Serialize;
use serde_json::Value;

use crate::attack::oracle::{judge, Finding, Observation};
use crate::attack::sandbox::Sandbox;
use crate::baseline::{Baseline, BaselineSummary, Comparison, Snapshot};
use crate::expected::ExpectedFailures;
use crate::protocol::ToolResult;
use crate::suite::verdict::Verdict;
use crate::suite::{Case, Level};
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

/// One command of a finished case, with its answer.
#[derive(Clone, Debug, Serialize)]
pub struct StepRecord {
    /// The input sent.
    pub input: Value,
    /// The answer, if one came.
    pub reply: Option<ToolResult>,
    /// Why no answer came.
    pub error: Option<String>,
    /// The best acceptable reply in this profile, as text.
    pub expected: String,
    /// The verdict of this reply alone (ERROR when none came).
    pub verdict: Verdict,
}

/// A finished case: enough to reproduce the verdict without rerunning.
#[derive(Clone, Debug, Serialize)]
pub struct CaseRecord {
    /// Case id.
    pub id: String,
    /// First id segment.
    pub category: String,
    /// The requirement under test.
    pub requirement: String,
    /// Spec rows and bug ids.
    pub source: Vec<String>,
    /// MUST or SHOULD.
    pub level: Level,
    /// Final verdict.
    pub verdict: Verdict,
    /// The reason from the expected-failures list when the verdict blocks certification and
    /// the list excuses it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_failure: Option<String>,
    /// Why, worst first.
    pub findings: Vec<Finding>,
    /// The commands and answers.
    pub steps: Vec<StepRecord>,
    /// Wall time of the case, in milliseconds.
    pub duration_ms: u64,
    /// The redacted snapshot of the answers, when the run takes snapshots ([`Config::snapshots`])
    /// and the case can have one (not a race, not SKIPPED).
    #[serde(skip)]
    pub snapshot: Option<Snapshot>,
    /// How the answers compare with the baseline (`--baseline`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Comparison>,
}

/// Totals of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The target's description.
    pub target: String,
    /// Profile used.
    pub profile: Profile,
    /// Whether `--strict` was on.
    pub strict: bool,
    /// Cases per verdict (every verdict present, zero included).
    pub counts: BTreeMap<String, usize>,
    /// Cases run.
    pub total: usize,
    /// Cases whose FAIL, UNSAFE or ERROR the expected-failures list excuses.
    pub expected_failures: usize,
    /// Expected-failure entries whose cases all passed (the list is stale).
    pub stale: Vec<String>,
    /// Expected-failure entries that matched no case of the run.
    pub unused: Vec<String>,
    /// No FAIL, UNSAFE or ERROR outside the expected failures, and no stale entry.
    pub certified: bool,
    /// The comparison with the baseline (`--baseline`), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineSummary>,
}

impl Summary {
    /// The totals of a run from its (case id, verdict) pairs: counts for every verdict (zero
    /// included), the expected failures and stale entries of `config.expected`, and certified
    /// when no FAIL, UNSAFE or ERROR is left unexcused and no entry is stale.
    pub fn of<'a>(
        target: String,
        config: &Config,
        outcomes: impl IntoIterator<Item = (&'a str, Verdict)>,
    ) -> Summary {
        let mut counts: BTreeMap<String, usize> = Verdict::ALL
            .iter()
            .map(|v| (v.as_str().to_owned(), 0))
            .collect();
        let mut total = 0;
        let mut certified = true;
        let mut all = Vec::new();
        for (id, v) in outcomes {
            *counts.entry(v.as_str().to_owned()).or_default() += 1;
            certified &= !v.blocks_certification() || config.expected.excuses(id, v).is_some();
            total += 1;
            all.push((id, v));
        }
        let reckoning = config.expected.reckon(all);
        certified &= reckoning.stale.is_empty();
        Summary {
            target,
            profile: config.profile,
            strict: config.strict,
            counts,
            total,
            expected_failures: reckoning.expected.len(),
            stale: reckoning.stale,
            unused: reckoning.unused,
            certified,
            baseline: None,
        }
    }

    /// Whether the run passes (exit status 0): certified, and no REGRESSION or STALE snapshot
    /// when compared with a baseline.
    pub fn passed(&self) -> bool {
        self.certified && self.baseline.as_ref().is_none_or(BaselineSummary::passed)
    }
}

/// What the runner tells reporters.
#[derive(Debug)]
pub enum Event<'a> {
    /// Before the first case.
    Started {
        /// Target description.
        target: &'a str,
        /// Profile used.
        profile: Profile,
        /// Number of cases to run.
        total: usize,
    },
    /// After each case.
    CaseFinished(&'a CaseRecord),
    /// After the last case.
    Finished(&'a Summary),
}

/// A consumer of run events (terminal, JSON, ...).
pub trait Reporter {
    /// Handle one event.
    fn event(&mut self, event: &Event<'_>);
}

/// A reporter that keeps every finished case, in run order (for callers that want the records
/// rather than a report: `memcert::certify`, tests).
#[derive(Debug, Default)]
pub struct Collect(pub Vec<CaseRecord>);

impl Reporter for Collect {
    fn event(&mut self, event: &Event<'_>) {
        if let Event::CaseFinished(r) = event {
            self.0.push((*r).clone());
        }
    }
}

/// [`run`] that also returns every case record, in run order.
pub fn run_collect(
    config: &Config,
    cases: &[Case],
    target: &mut dyn Target,
) -> (Summary, Vec<CaseRecord>) {
    let mut c = Collect::default();
    let summary = run(config, cases, target, &mut c);
    (summary, c.0)
}

/// Fan one event stream out to several reporters.
#[derive(Default)]
pub struct Fanout<'a>(pub Vec<&'a mut dyn Reporter>);

impl Reporter for Fanout<'_> {
    fn event(&mut self, event: &Event<'_>) {
        for r in self.0.iter_mut() {
            r.event(event);
        }
    }
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
    let set = |globs: &[String]| -> Result<GlobSet, globset::Error> {
        let mut b = GlobSetBuilder::new();
        for g in globs {
            b.add(Glob::new(g)?);
        }
        b.build()
    };
    let inc = set(include)?;
    let exc = set(exclude)?;
    Ok(cases
        .into_iter()
        .filter(|c| (include.is_empty() || inc.is_match(&c.id)) && !exc.is_match(&c.id))
        .collect())
}

/// The `create` commands that lay out a case's planted files through the handler itself, for
/// black-box mode ([`Config::black_box`]), or why the case cannot run that way. Folders come
/// with the files created in them; an empty folder that no command names is left out.
///
/// # Errors
/// The reason the case is SKIPPED: a planted item `create` cannot make.
pub fn black_box_prelude(case: &Case) -> Result<Vec<Value>, String> {
    use crate::suite::Fs;
    if case.race.is_some() {
        return Err("a race swaps folders on disk; the handler's store is not on the filesystem (black-box mode)".into());
    }
    let mut creates = Vec::new();
    for item in &case.setup {
        let (path, text) = match item {
            Fs::File { path, content } => match String::from_utf8(content.clone()) {
                Ok(text) => (path, text),
                Err(_) => {
                    return Err(format!(
                        "needs {path} planted with bytes that are not UTF-8, which create cannot write (black-box mode)"
                    ))
                }
            },
            Fs::Lines { path, count } => (path, "x\n".repeat(*count)),
            Fs::Dir { path } => {
                let prefix = format!("{}/", path.trim_end_matches('/'));
                let filled = case.setup.iter().any(|other| match other {
                    Fs::File { path: p, .. } | Fs::Lines { path: p, .. } => p.starts_with(&prefix),
                    _ => false,
                });
                // An empty folder no command names only furnishes the store (the root cases
                // plant one so that deleting the root would lose something): left out.
                let named = case.steps.iter().any(|step| {
                    crate::protocol::strings_in(&step.input)
                        .iter()
                        .any(|s| s.starts_with(path.trim_end_matches('/')))
                });
                if filled || !named {
                    continue;
                }
                return Err(format!(
                    "needs the empty folder {path} planted, which create cannot make (black-box mode)"
                ));
            }
            Fs::Symlink { path, .. } => {
                return Err(format!("needs the symlink {path} planted on disk (black-box mode)"))
            }
            Fs::Fifo { path } => {
                return Err(format!("needs the FIFO {path} planted on disk (black-box mode)"))
            }
            Fs::HardLinkOutside { path, .. } => {
                return Err(format!("needs the hard link {path} planted on disk (black-box mode)"))
            }
            Fs::Socket { path } => {
                return Err(format!("needs the socket {path} planted on disk (black-box mode)"))
            }
            Fs::Mode { path, .. } => {
                return Err(format!(
                    "needs permission bits set on {path} on disk (black-box mode)"
                ))
            }
            Fs::RawName { dir, .. } => {
                return Err(format!(
                    "needs a file name in {dir} that is not UTF-8, which create cannot spell (black-box mode)"
                ))
            }
            Fs::RootSymlink { .. } => {
                return Err("needs the store root replaced by a link on disk (black-box mode)".into())
            }
            Fs::ManyFiles { dir, count } => {
                return Err(format!(
                    "needs {count} files planted in {dir}; black-box set-up makes files one create at a time and stops at {MAX_PRELUDE}"
                ))
            }
            Fs::DeepChain { path, depth } => {
                let mut p = path.trim_end_matches('/').to_owned();
                for _ in 0..*depth {
                    p.push_str("/d");
                }
                creates.push(serde_json::json!({"command": "create", "path": format!("{p}/bottom.txt"), "file_text": "bottom\n"}));
                continue;
            }
        };
        creates.push(serde_json::json!({"command": "create", "path": path, "file_text": text}));
    }
    if creates.len() > MAX_PRELUDE {
        return Err(format!(
            "needs {} files planted; black-box set-up stops at {MAX_PRELUDE} creates",
            creates.len()
        ));
    }
    Ok(creates)
}

/// Most `create` commands a black-box set-up sends for one case.
pub const MAX_PRELUDE: usize = 100;

/// Why `case` cannot run in this process, or `None` when it can. A case that plants permission
/// bits ([`Case::needs_unprivileged`]) proves nothing when the harness, and so every handler it
/// starts, runs as root (effective uid 0): permission bits do not bind root.
pub fn skip_reason(case: &Case) -> Option<String> {
    (case.needs_unprivileged() && rustix::process::geteuid().is_root()).then(|| {
        "the harness runs as root (effective uid 0), where permission bits do not bind; run it as \
         another user to test this"
            .to_owned()
    })
}

/// Run one case against a target and judge it. A case this process cannot run
/// ([`skip_reason`]) is SKIPPED without touching the target.
pub fn run_case(case: &Case, target: &mut dyn Target, config: &Config) -> CaseRecord {
    if !config.black_box {
        return run_prepared(case, &case.setup, &[], target, config);
    }
    match black_box_prelude(case) {
        Ok(prelude) => {
            let judged = Case {
                checks: Vec::new(),
                ..case.clone()
            };
            run_prepared(&judged, &[], &prelude, target, config)
        }
        Err(reason) => skipped(case, reason, config),
    }
}

/// The folders outside the sandbox a case watches: the target's scratch HOME and TMPDIR,
/// except in black-box mode, where the handler's store may be there.
fn watched(target: &dyn Target, config: &Config) -> Vec<std::path::PathBuf> {
    if config.black_box {
        Vec::new()
    } else {
        target.watched()
    }
}

/// A case not run, with the reason (graded by the oracle as any skip).
fn skipped(case: &Case, reason: String, config: &Config) -> CaseRecord {
    let obs = Observation {
        skipped: Some(reason),
        ..Observation::default()
    };
    record(case, &[], obs, config, Vec::new(), Instant::now())
}

/// Run a case over a sandbox laid out with `setup`, after sending `prelude` (ungraded set-up
/// commands; a refused one makes the case SKIPPED).
fn run_prepared(
    case: &Case,
    setup: &[crate::suite::Fs],
    prelude: &[Value],
    target: &mut dyn Target,
    config: &Config,
) -> CaseRecord {
    let started = Instant::now();
    let mut obs = Observation::default();
    if let Some(why) = skip_reason(case) {
        obs.skipped = Some(why);
        return record(case, &[], obs, config, Vec::new(), started);
    }
    let sandbox = match Sandbox::create_unchecked(setup) {
        Ok(s) => s,
        Err(e) => {
            obs.replies
                .push(Err(format!("the sandbox could not be laid out: {e}")));
            return record(case, &[], obs, config, Vec::new(), started);
        }
    };
    obs.before_unchecked(&sandbox);
    let run = sandbox.run_dir().to_string_lossy();
    let root = sandbox.root().to_string_lossy();
    let inputs: Vec<Value> = case
        .steps
        .iter()
        .map(|s| instantiate(&s.input, run.trim_start_matches('/'), &root))
        .collect();
    obs.inputs = inputs.iter().map(strings_of).collect();
    // Taken after the reset, which may (re)start the handler: what a start-up writes to its
    // HOME is not charged to the case.
    let mut watched_before = Vec::new();
    match target.reset(sandbox.base(), sandbox.root()) {
        Ok(()) => {
            watched_before = watched(target, config)
                .iter()
                .map(|w| watched_unchecked(w))
                .collect();
            for input in prelude {
                let refused = match target.call(input) {
                    Ok(r) if !r.is_error => None,
                    Ok(r) => Some(format!("the handler refused it: {}", r.text())),
                    Err(e) => Some(explain(&e, target)),
                };
                if let Some(why) = refused {
                    let path = input["path"].as_str().unwrap_or("");
                    return skipped(
                        case,
                        format!("black-box set-up: create {path} failed ({why})"),
                        config,
                    );
                }
            }
            let snapshot_listings =
                !matches!(config.snapshots, Snapshots::Off) && !config.black_box;
            let swapper = case.race.as_ref().map(|r| {
                Swapper::start_unchecked(
                    sandbox.host_unchecked(&r.a),
                    sandbox.host_unchecked(&r.b),
                    r.max_swaps,
                )
            });
            let mut at = 0;
            'turns: for size in case.turn_sizes() {
                let turn = &inputs[at.min(inputs.len())..(at + size).min(inputs.len())];
                at += size;
                if turn.len() > 1 {
                    match target.call_batch(turn) {
                        Ok(rs) => {
                            if snapshot_listings {
                                obs.listed
                                    .extend(rs.iter().map(|r| listed_unchecked(&sandbox, r)));
                            }
                            obs.replies.extend(rs.into_iter().map(Ok))
                        }
                        Err(e) => {
                            obs.replies.push(Err(explain(&e, target)));
                            break 'turns;
                        }
                    }
                    continue;
                }
                for input in turn {
                    match target.call(input) {
                        Ok(r) => {
                            if snapshot_listings {
                                obs.listed.push(listed_unchecked(&sandbox, &r));
                            }
                            obs.replies.push(Ok(r))
                        }
                        Err(e) => {
                            obs.replies.push(Err(explain(&e, target)));
                            break 'turns;
                        }
                    }
                }
            }
            if let Some(s) = swapper {
                obs.race_swaps = Some(s.stop());
            }
        }
        Err(e) => obs
            .replies
            .push(Err(format!("reset failed: {}", explain(&e, target)))),
    }
    obs.after_unchecked(&sandbox, case);
    for (w, before) in watched(target, config).iter().zip(watched_before) {
        let name = w
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (rel, node) in before {
            obs.outside_before
                .insert(std::path::Path::new(&name).join(rel), node);
        }
        for (rel, node) in watched_unchecked(w) {
            obs.outside_after
                .insert(std::path::Path::new(&name).join(rel), node);
        }
    }
    record(case, &inputs, obs, config, Vec::new(), started)
}

/// The entries of a listing answer that are directories or links on disk now, right after the
/// answer (`crate::baseline`'s `dir-size` and `link-size` rules).
///
/// # Ambient authority
/// `lstat` by host path, inside the case's store root (listing paths resolved lexically,
/// `baseline::entry_key`; intermediate links are followed, as by the handler that listed them).
pub fn listed_unchecked(sandbox: &Sandbox, reply: &ToolResult) -> crate::baseline::Entries {
    use crate::baseline::{entry_key, listing_lines, EntryKind};
    let text = reply.text();
    let mut out = crate::baseline::Entries::new();
    for (_, _, path) in listing_lines(&text) {
        let Some(key) = entry_key(path) else { continue };
        let rel = key["/memories".len()..].trim_start_matches('/');
        let host = if rel.is_empty() {
            sandbox.root().to_path_buf()
        } else {
            sandbox.root().join(rel)
        };
        match std::fs::symlink_metadata(&host) {
            Ok(m) if m.file_type().is_symlink() => out.insert(key, EntryKind::Link),
            Ok(m) if m.is_dir() => out.insert(key, EntryKind::Dir),
            _ => continue,
        };
    }
    out
}

/// Every string value of an input and its escaped rendering (replies may escape control
/// characters of a path, vpath::display_path), longest first, so a longer echo is taken out
/// before a shorter one inside it (`Observation::inputs`).
pub fn strings_of(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for s in crate::protocol::strings_in(v) {
        let shown = crate::vpath::display_path(&s);
        if shown != s {
            out.push(shown);
        }
        out.push(s);
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// A target error with its causes, and the handler's last stderr lines when the error does not
/// carry them already.
fn explain(e: &crate::target::TargetError, target: &dyn Target) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    if !matches!(e, crate::target::TargetError::Exited { .. }) {
        let last = crate::target::last_lines(&target.stderr_tail());
        if !last.is_empty() {
            text.push_str(&format!("; stderr ends with: {last}"));
        }
    }
    text
}

/// The harness side of a race: a thread exchanging two host paths atomically, as fast as it can,
/// until stopped or `max_swaps` exchanges. Starting returns once the thread has made its first
/// exchange, so no command runs before the race does (a fast in-process handler could otherwise
/// answer every command while the new thread waits to be scheduled).
///
/// # Ambient authority
/// `renameat2(RENAME_EXCHANGE)` by host path, inside the case's sandbox only.
struct Swapper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl Swapper {
    fn start_unchecked(a: std::path::PathBuf, b: std::path::PathBuf, max_swaps: u64) -> Swapper {
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

    fn stop(self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap_or(0)
    }
}

/// Everything under a watched folder.
///
/// # Ambient authority
/// Walks a host folder by path, never following links.
fn watched_unchecked(dir: &std::path::Path) -> crate::attack::sandbox::Tree {
    crate::attack::sandbox::tree_unchecked(dir)
}

/// Fill in the run-time parts of a case input: `{RUN}` becomes the run folder's absolute path
/// without its leading `/` (so `/memories/../../(...)/{RUN}/canary.txt` reaches a canary from any
/// depth), and `{DOWN:d}` the way back down from the d-th ancestor of the store root at `root`
/// (see `attack::payloads::instantiate`).
pub fn instantiate(input: &Value, run: &str, root: &str) -> Value {
    match input {
        Value::String(s) if s.contains("{RUN}") || s.contains("{DOWN:") => Value::String(
            crate::attack::payloads::instantiate(&s.replace("{RUN}", run), root),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| instantiate(v, run, root)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), instantiate(v, run, root)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The record of a finished case: the oracle's judgement of `obs`, plus `extra` findings a
/// runner made itself (the app runner's protocol findings), the worst of which can raise the
/// verdict.
pub fn record(
    case: &Case,
    inputs: &[Value],
    obs: Observation,
    config: &Config,
    extra: Vec<Finding>,
    started: Instant,
) -> CaseRecord {
    let mut j = judge(case, &obs, config.profile, config.strict);
    if let Some(worst) = extra.iter().map(|f| f.verdict).max() {
        j.verdict = j.verdict.max(worst);
        j.findings.extend(extra);
        j.findings.sort_by_key(|f| std::cmp::Reverse(f.verdict));
    }
    let mut grades = j.steps.iter();
    let steps = case
        .steps
        .iter()
        .zip(&obs.replies)
        .zip(inputs)
        .map(|((step, reply), input)| {
            let expected = crate::suite::verdict::expected_text(step, config.profile);
            match reply {
                Ok(r) => StepRecord {
                    input: input.clone(),
                    reply: Some(r.clone()),
                    error: None,
                    expected,
                    verdict: grades.next().map(|g| g.verdict).unwrap_or(Verdict::Pass),
                },
                Err(e) => StepRecord {
                    input: input.clone(),
                    reply: None,
                    error: Some(e.clone()),
                    expected,
                    verdict: Verdict::Error,
                },
            }
        })
        .collect();
    let snapshot = match (&config.snapshots, &obs.skipped, &case.race) {
        (Snapshots::Off, _, _) | (_, Some(_), _) | (_, _, Some(_)) => None,
        _ => Some(
            crate::baseline::Redactor::new(&obs.host_paths, &obs.token).snapshot(
                &case.id,
                inputs,
                &obs.replies,
                &obs.listed,
            ),
        ),
    };
    let baseline = match &config.snapshots {
        Snapshots::Compare(b) => Some(match (&snapshot, &obs.skipped) {
            (Some(s), _) => b.compare(s),
            (None, Some(_)) => Comparison::NotCompared {
                reason: "SKIPPED: no answers to compare".into(),
            },
            (None, None) => Comparison::NotCompared {
                reason: "a race: its answers depend on timing".into(),
            },
        }),
        _ => None,
    };
    CaseRecord {
        id: case.id.clone(),
        category: case.category().to_owned(),
        requirement: case.requirement.clone(),
        source: case.source.clone(),
        level: case.level,
        verdict: j.verdict,
        expected_failure: config
            .expected
            .excuses(&case.id, j.verdict)
            .map(str::to_owned),
        findings: j.findings,
        steps,
        duration_ms: started.elapsed().as_millis() as u64,
        snapshot,
        baseline,
    }
}

/// The totals of a comparison with `baseline`: the run's comparisons, and every snapshot whose
/// case was not run: STALE when memcert's catalog (every level) no longer has the case, else not
/// run.
fn baseline_summary(
    baseline: &Baseline,
    cases: &[Case],
    compared: &[(String, Comparison)],
) -> BaselineSummary {
    let run: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    baseline_summary_of(baseline, &run, compared, &|left| {
        let all: std::collections::HashSet<String> =
            crate::suite::catalog::for_level(crate::suite::catalog::RunLevel::Full)
                .into_iter()
                .map(|c| c.id)
                .collect();
        left.iter().map(|id| all.contains(*id)).collect()
    })
}

/// [`baseline_summary`] for any set of cases: `run` are the ids run, `exists` says for each
/// snapshot left over whether its case still exists (not run) or not (STALE).
pub fn baseline_summary_of(
    baseline: &Baseline,
    run: &[&str],
    compared: &[(String, Comparison)],
    exists: &dyn Fn(&[&String]) -> Vec<bool>,
) -> BaselineSummary {
    let mut s = BaselineSummary {
        dir: baseline.dir.display().to_string(),
        ..BaselineSummary::default()
    };
    for (id, c) in compared {
        match c {
            Comparison::Unchanged => s.unchanged += 1,
            Comparison::Regression { .. } => s.regressions.push(id.clone()),
            Comparison::New => s.new.push(id.clone()),
            Comparison::NotCompared { .. } => s.not_compared += 1,
        }
    }
    let run: std::collections::HashSet<&str> = run.iter().copied().collect();
    let left: Vec<&String> = baseline
        .snapshots
        .keys()
        .filter(|id| !run.contains(id.as_str()))
        .collect();
    if !left.is_empty() {
        for (id, still) in left.iter().zip(exists(&left)) {
            if still {
                s.not_run += 1;
            } else {
                s.stale.push((*id).clone());
            }
        }
    }
    s
}

/// Run every case against `target`, reporting as it goes, and return the totals.
pub fn run(
    config: &Config,
    cases: &[Case],
    target: &mut dyn Target,
    reporter: &mut dyn Reporter,
) -> Summary {
    let name = target.describe();
    reporter.event(&Event::Started {
        target: &name,
        profile: config.profile,
        total: cases.len(),
    });
    let mut verdicts = Vec::with_capacity(cases.len());
    let mut compared = Vec::new();
    for case in cases {
        let rec = run_case(case, target, config);
        verdicts.push(rec.verdict);
        if let Some(c) = &rec.baseline {
            compared.push((rec.id.clone(), c.clone()));
        }
        reporter.event(&Event::CaseFinished(&rec));
    }
    target.shutdown();
    let outcomes = cases.iter().map(|c| c.id.as_str()).zip(verdicts);
    let mut summary = Summary::of(target.describe(), config, outcomes);
    if let Snapshots::Compare(b) = &config.snapshots {
        summary.baseline = Some(baseline_summary(b, cases, &compared));
    }
    reporter.event(&Event::Finished(&summary));
    summary
}
