//! The records a run produces: a finished case's [`CaseRecord`] (the oracle's judgement of what
//! it observed, step by step) and the run's [`Summary`].
//!
//! # Memory
//! A record keeps at most [`KEEP_BYTES`] (64 KiB) of each reply's text ([`StepRecord::reply`]);
//! a longer one is kept cut at a character boundary, with its full length in bytes and its
//! SHA-256 ([`StepRecord::reply_cut`], the JSON report's `reply_cut`). Error texts and finding
//! details are cut at the same length. The oracle and the snapshot ([`CaseRecord::snapshot`],
//! baselines) see the whole reply, up to the target's read cap. Every report is rendered from
//! records, so none holds more of one reply than that.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{snapshots, Config};
use crate::attack::oracle::{judge, Finding, Observation};
use crate::baseline::{BaselineSummary, Comparison, Snapshot};
use crate::protocol::ToolResult;
use crate::stop::StopReason;
use crate::suite::verdict::{StepGrade, Verdict};
use crate::suite::{Case, Level};
use crate::text::Profile;

/// One command of a finished case, with its answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepRecord {
    /// The input sent.
    pub input: Value,
    /// The answer, if one came; its text cut at [`KEEP_BYTES`] ([`StepRecord::reply_cut`]).
    pub reply: Option<ToolResult>,
    /// When the answer's text was longer than [`KEEP_BYTES`]: its full length and SHA-256.
    pub reply_cut: Option<Cut>,
    /// Why no answer came.
    pub error: Option<String>,
    /// The best acceptable reply in this profile, as text.
    pub expected: String,
    /// The grade of this reply alone (ERROR when none came). A finding that names the step
    /// (`step N: ...`) may be worse: reports label a step with [`CaseRecord::step_label`].
    pub verdict: Verdict,
}

/// Bytes of one reply text, error text or finding detail a [`CaseRecord`] keeps (64 KiB).
pub const KEEP_BYTES: usize = 64 * 1024;

/// What a record kept of a reply whose text is longer than [`KEEP_BYTES`]. The text is the
/// string content, or for content blocks their JSON (`[{"type":"text",...}]`), whose strings are
/// then cut in order until the kept ones fill [`KEEP_BYTES`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cut {
    /// The full text's length in bytes (UTF-8).
    pub bytes: usize,
    /// The bytes of text kept.
    pub kept: usize,
    /// The SHA-256 of the full text, lower-case hex.
    pub sha256: String,
}

/// `reply` as a record keeps it: its text cut at `keep` bytes ([`KEEP_BYTES`] unless
/// [`super::Config::keep_reply_bytes`] says otherwise), with a [`Cut`] when it was longer.
/// Copies at most `keep` bytes of text.
pub fn keep_reply(reply: &ToolResult, keep: usize) -> (ToolResult, Option<Cut>) {
    use crate::protocol::Content;
    let (full, content, kept) = match &reply.content {
        Content::Text(t) if t.len() > keep => {
            let kept = cut_str(t, keep);
            (
                t.as_bytes().to_vec(),
                Content::Text(kept.to_owned()),
                kept.len(),
            )
        }
        Content::Blocks(b) => {
            let json = serde_json::to_vec(b).expect("JSON values serialise");
            if json.len() <= keep {
                return (reply.clone(), None);
            }
            let mut budget = keep;
            let blocks = b.iter().map(|v| cut_strings(v, &mut budget)).collect();
            (json, Content::Blocks(blocks), keep - budget)
        }
        _ => return (reply.clone(), None),
    };
    let cut = Cut {
        bytes: full.len(),
        kept,
        sha256: sha256_hex(&full),
    };
    let kept = ToolResult {
        content,
        is_error: reply.is_error,
    };
    (kept, Some(cut))
}

/// The SHA-256 of `bytes`, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn cut_str(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `v` with its strings cut, in order, so that together they take at most `budget` bytes
/// (what they take is subtracted).
fn cut_strings(v: &Value, budget: &mut usize) -> Value {
    match v {
        Value::String(s) => {
            let kept = cut_str(s, *budget);
            *budget -= kept.len();
            Value::String(kept.to_owned())
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| cut_strings(x, budget)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), cut_strings(x, budget)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `text` cut at [`KEEP_BYTES`], with `…` and the full length when it was longer.
fn keep_text(text: &str) -> String {
    if text.len() <= KEEP_BYTES {
        return text.to_owned();
    }
    format!(
        "{}… ({} bytes in all)",
        cut_str(text, KEEP_BYTES),
        text.len()
    )
}

/// What a step is labelled with in every report ([`CaseRecord::step_label`]): the worst of its
/// reply's grade and of the findings that name it, so that a step is never shown better than a
/// finding about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepLabel {
    /// The label: the worst of [`StepLabel::reply`] and the verdicts of the findings that name
    /// the step.
    pub verdict: Verdict,
    /// The grade of the reply alone ([`StepRecord::verdict`]).
    pub reply: Verdict,
    /// The kinds of the findings that name the step and are worse than its reply's grade, worst
    /// first, each once (`host-path-disclosed`, `outside-read`).
    pub worse: Vec<String>,
}

impl StepLabel {
    /// Why the label is worse than the reply's grade, in words (`None` when it is not):
    /// `reply graded PASS; UNSAFE by host-path-disclosed`.
    pub fn note(&self) -> Option<String> {
        (self.verdict != self.reply).then(|| {
            format!(
                "reply graded {}; {} by {}",
                self.reply,
                self.verdict,
                self.worse.join(", ")
            )
        })
    }
}

/// The step a finding names: `Some(i)` for a detail that starts with `step {i + 1}:` (the
/// findings about a reply: `reply`, `no-reply`, `outside-read`, `host-path-disclosed`); `None`
/// for a finding about the case as a whole (the disk: `outside-changed`, `outside-copied`,
/// `check`; `race-rounds`, `skipped`, ...).
pub fn finding_step(f: &Finding) -> Option<usize> {
    let rest = f.detail.strip_prefix("step ")?;
    let (n, _) = rest.split_once(':')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse::<usize>().ok()?.checked_sub(1)
}

/// A finished case: enough to reproduce the verdict without rerunning. It serialises as the
/// JSON report's case (`docs/report.schema.json`), each step with its label
/// ([`CaseRecord::step_label`]) as `verdict` and its reply's grade as `reply_verdict`.
#[derive(Clone, Debug)]
pub struct CaseRecord {
    /// Case id.
    pub id: String,
    /// First id segment.
    pub category: String,
    /// The requirement under test.
    pub requirement: String,
    /// Spec rows and bug ids, as citation ids (`spec:2.1/D3`, `bug:B10`).
    pub source: Vec<String>,
    /// Where the case is defined ([`crate::suite::Case::defined`]); empty for a case made at
    /// run time, and then left out of the JSON report.
    pub defined: String,
    /// MUST or SHOULD.
    pub level: Level,
    /// Final verdict.
    pub verdict: Verdict,
    /// The reason from the expected-failures list when the verdict blocks certification and
    /// the list excuses it.
    pub expected_failure: Option<String>,
    /// Why, worst first.
    pub findings: Vec<Finding>,
    /// The commands and answers.
    pub steps: Vec<StepRecord>,
    /// Wall time of the case, in milliseconds.
    pub duration_ms: u64,
    /// The redacted snapshot of the answers, when the run takes snapshots ([`Config::snapshots`])
    /// and the case can have one (not a race, not SKIPPED).
    pub snapshot: Option<Snapshot>,
    /// How the answers compare with the baseline (`--baseline`).
    pub baseline: Option<Comparison>,
    /// Whether a command of the case got no answer within the target's timeout (`--timeout`,
    /// [`Observation::timed_out`]); listed in [`Summary::timed_out`]. Not in the JSON case.
    pub timed_out: bool,
}

/// The JSON report's case: a [`CaseRecord`] without its snapshot, each step labelled.
#[derive(Serialize)]
struct CaseOut<'a> {
    id: &'a str,
    category: &'a str,
    requirement: &'a str,
    source: &'a [String],
    #[serde(skip_serializing_if = "str::is_empty")]
    defined: &'a str,
    level: Level,
    verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected_failure: Option<&'a str>,
    findings: &'a [Finding],
    steps: Vec<StepOut<'a>>,
    duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline: Option<&'a Comparison>,
}

/// The JSON report's step: a [`StepRecord`] with its label as `verdict`.
#[derive(Serialize)]
struct StepOut<'a> {
    input: &'a Value,
    reply: Option<&'a ToolResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reply_cut: Option<&'a Cut>,
    error: Option<&'a str>,
    expected: &'a str,
    verdict: Verdict,
    reply_verdict: Verdict,
}

impl Serialize for CaseRecord {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        CaseOut {
            id: &self.id,
            category: &self.category,
            requirement: &self.requirement,
            source: &self.source,
            defined: &self.defined,
            level: self.level,
            verdict: self.verdict,
            expected_failure: self.expected_failure.as_deref(),
            findings: &self.findings,
            steps: self
                .steps
                .iter()
                .enumerate()
                .map(|(i, s)| StepOut {
                    input: &s.input,
                    reply: s.reply.as_ref(),
                    reply_cut: s.reply_cut.as_ref(),
                    error: s.error.as_deref(),
                    expected: &s.expected,
                    verdict: self.step_label(i).verdict,
                    reply_verdict: s.verdict,
                })
                .collect(),
            duration_ms: self.duration_ms,
            baseline: self.baseline.as_ref(),
        }
        .serialize(serializer)
    }
}

impl CaseRecord {
    /// The label of step `i` (from 0) in every report: the worst of its reply's grade and the
    /// findings that name it ([`finding_step`]). The findings that name no step (the disk, the
    /// rounds of a race) are about the case and label no step.
    pub fn step_label(&self, i: usize) -> StepLabel {
        let reply = self.steps.get(i).map_or(Verdict::Pass, |s| s.verdict);
        let mut label = StepLabel {
            verdict: reply,
            reply,
            worse: Vec::new(),
        };
        let mut named: Vec<&Finding> = self
            .findings
            .iter()
            .filter(|f| f.verdict > reply && finding_step(f) == Some(i))
            .collect();
        named.sort_by_key(|f| std::cmp::Reverse(f.verdict));
        for f in named {
            label.verdict = label.verdict.max(f.verdict);
            if !label.worse.contains(&f.kind) {
                label.worse.push(f.kind.clone());
            }
        }
        label
    }

    /// Whether step `i` matters on its own in a report that shows only some steps: its label is
    /// not PASS (a reply graded worse, or a finding that names it).
    pub fn step_matters(&self, i: usize) -> bool {
        self.step_label(i).verdict != Verdict::Pass
    }
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
    /// Of [`Summary::unused`], the entries that match no case of the whole catalog either
    /// (retired or renamed ids); filled by catalog runs ([`crate::certify::run`]). Not in the
    /// JSON report.
    #[serde(skip)]
    pub retired: Vec<String>,
    /// The catalog version the expected-failures list was made for, when it names one other
    /// than the running catalog ([`crate::expected::ExpectedFailures::other_catalog`]). Not in
    /// the JSON report.
    #[serde(skip)]
    pub expected_catalog: Option<crate::suite::CatalogVersion>,
    /// The verdicts that block certification (`--fail-on`), worst first; by default UNSAFE,
    /// ERROR and FAIL.
    pub fail_on: Vec<Verdict>,
    /// Cases per blocking verdict (UNSAFE, ERROR, FAIL; zero included) that the
    /// expected-failures list does not excuse, whatever the gate.
    pub unexcused: BTreeMap<String, usize>,
    /// No verdict of [`Summary::fail_on`] outside the expected failures, and no stale entry.
    pub certified: bool,
    /// The comparison with the baseline (`--baseline`), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineSummary>,
    /// Whether every case the run was to run ran ([`Completion`]); a run that did not
    /// complete is never certified.
    pub completion: Completion,
    /// Cases the run was to run: [`Summary::total`] is smaller when it was interrupted.
    pub planned: usize,
    /// Handlers that ran the cases at once (`--jobs`; [`crate::certify::run_parallel`]): the
    /// handlers actually used, fewer than asked where some could not be; 1 for a run on one
    /// handler, an app run, and a summary built in code.
    pub jobs: usize,
    /// memcert's own peak resident memory when the run finished, in KiB (`VmHWM` of
    /// `/proc/self/status`, [`peak_memory_kib`]); `None` where that is not readable, and in
    /// summaries not made by a run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_memory_kib: Option<u64>,
    /// The containment the handler ran under (`crate::contain`), filled by the runs
    /// ([`crate::certify::run`], app runs); `None` in runs built in code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub containment: Option<crate::contain::Containment>,
    /// The ids of the cases a command of which got no answer within the target's time limit
    /// ([`CaseRecord::timed_out`]), in run order; empty when none did.
    pub timed_out: Vec<String>,
    /// The target's time limit for one answer (`--timeout`), in milliseconds; `None` for a
    /// target without one (the in-process reference) and in summaries built in code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// Whether a run ran every case it was to run (the JSON summary's `completion`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Completion {
    /// Every case ran.
    #[default]
    Complete,
    /// A signal (SIGINT, SIGTERM) stopped the run: the cases not run are not reported, the
    /// case running then neither (exit status 130).
    Interrupted,
    /// The run's deadline (`--deadline`) passed: every case not run, and the one it cut short,
    /// is ERROR with a `deadline` finding.
    Incomplete,
}

impl Completion {
    /// How a run that stopped for `why` (or did not stop) completed.
    pub fn of(why: Option<StopReason>) -> Completion {
        match why {
            None => Completion::Complete,
            Some(StopReason::Interrupted) => Completion::Interrupted,
            Some(StopReason::Deadline) => Completion::Incomplete,
        }
    }

    /// `COMPLETE`, `INTERRUPTED` or `INCOMPLETE`, as the reports mark a run.
    pub fn as_str(self) -> &'static str {
        match self {
            Completion::Complete => "COMPLETE",
            Completion::Interrupted => "INTERRUPTED",
            Completion::Incomplete => "INCOMPLETE",
        }
    }
}

impl Summary {
    /// The verdicts a run fails on by default (no `--fail-on`): UNSAFE, ERROR and FAIL.
    pub const DEFAULT_FAIL_ON: [Verdict; 3] = [Verdict::Unsafe, Verdict::Error, Verdict::Fail];

    /// The totals of a run from its (case id, verdict) pairs: counts for every verdict (zero
    /// included), the expected failures and stale entries of `config.expected`, and certified
    /// when no FAIL, UNSAFE or ERROR is left unexcused and no entry is stale (the default gate;
    /// [`Summary::gated`] applies another).
    pub fn of<'a>(
        target: String,
        config: &Config,
        outcomes: impl IntoIterator<Item = (&'a str, Verdict)>,
    ) -> Summary {
        Self::of_ids(target, config, outcomes)
    }

    /// [`Summary::of`] with the ids owned or borrowed (`String`, `Cow<str>`): a run whose case
    /// ids are made as they are read ([`crate::suite::list::Cases`]) counts them without keeping
    /// them.
    pub fn of_ids<S: AsRef<str>>(
        target: String,
        config: &Config,
        outcomes: impl IntoIterator<Item = (S, Verdict)>,
    ) -> Summary {
        let mut counts: BTreeMap<String, usize> = Verdict::ALL
            .iter()
            .map(|v| (v.as_str().to_owned(), 0))
            .collect();
        let mut unexcused: BTreeMap<String, usize> = Self::DEFAULT_FAIL_ON
            .iter()
            .map(|v| (v.as_str().to_owned(), 0))
            .collect();
        let mut total = 0;
        // One pass: the outcomes are counted as the list reckons them, never kept.
        let reckoning = config
            .expected
            .reckon(outcomes.into_iter().inspect(|(id, v)| {
                *counts.entry(v.as_str().to_owned()).or_default() += 1;
                if v.blocks_certification() && config.expected.excuses(id.as_ref(), *v).is_none() {
                    *unexcused.entry(v.as_str().to_owned()).or_default() += 1;
                }
                total += 1;
            }));
        let mut summary = Summary {
            target,
            profile: config.profile,
            strict: config.strict,
            counts,
            total,
            expected_failures: reckoning.expected.len(),
            stale: reckoning.stale,
            unused: reckoning.unused,
            retired: Vec::new(),
            expected_catalog: config.expected.other_catalog().cloned(),
            fail_on: Vec::new(),
            unexcused,
            certified: false,
            baseline: None,
            completion: Completion::Complete,
            planned: total,
            jobs: 1,
            peak_memory_kib: None,
            containment: None,
            timed_out: Vec::new(),
            timeout_ms: None,
        };
        summary.gate(&Self::DEFAULT_FAIL_ON);
        summary
    }

    /// This summary for a run that stopped for `why` (`None`: it did not) with `planned` cases
    /// to run: marked [`Completion::Interrupted`] or [`Completion::Incomplete`], and then not
    /// certified.
    pub fn stopped(mut self, why: Option<StopReason>, planned: usize) -> Summary {
        self.completion = Completion::of(why);
        self.planned = planned.max(self.total);
        let gate = self.fail_on.clone();
        self.gate(&gate);
        self
    }

    /// The summary under the gate `fail_on` (`--fail-on`): certified when no case of those
    /// verdicts is left unexcused and no expected-failure entry is stale. An empty gate is the
    /// default one, [`Summary::DEFAULT_FAIL_ON`].
    pub fn gated(mut self, fail_on: &[Verdict]) -> Summary {
        self.gate(fail_on);
        self
    }

    fn gate(&mut self, fail_on: &[Verdict]) {
        let mut gate: Vec<Verdict> = if fail_on.is_empty() {
            Self::DEFAULT_FAIL_ON.to_vec()
        } else {
            fail_on.to_vec()
        };
        gate.sort_by(|a, b| b.cmp(a));
        gate.dedup();
        self.certified = self.stale.is_empty()
            && self.completion == Completion::Complete
            && gate
                .iter()
                .all(|v| self.unexcused.get(v.as_str()).copied().unwrap_or(0) == 0);
        self.fail_on = gate;
    }

    /// The cases of the gate's verdicts left unexcused, worst first, as `"2 UNSAFE"` parts (none
    /// when there are none).
    pub fn blocking(&self) -> Vec<String> {
        self.fail_on
            .iter()
            .filter_map(|v| {
                let n = self.unexcused.get(v.as_str()).copied().unwrap_or(0);
                (n > 0).then(|| format!("{n} {v}"))
            })
            .collect()
    }

    /// The gate in words: `"UNSAFE, ERROR, FAIL"`.
    pub fn gate_line(&self) -> String {
        let v: Vec<&str> = self.fail_on.iter().map(|v| v.as_str()).collect();
        v.join(", ")
    }

    /// The sentence every report gives a run that did not complete ([`Summary::completion`]),
    /// `None` for one that did; `cases` are the run's records.
    pub fn stop_note(&self, cases: &[CaseRecord]) -> Option<String> {
        self.stop_note_of(cases.iter().filter(|c| cut_by_deadline(c)).count())
    }

    /// [`Summary::stop_note`] of a run `cut` of whose cases have a `deadline` finding
    /// ([`cut_by_deadline`]), for a report that counts them as the cases come.
    pub fn stop_note_of(&self, cut: usize) -> Option<String> {
        match self.completion {
            Completion::Complete => None,
            Completion::Interrupted => Some(format!(
                "INTERRUPTED: a signal stopped the run after {} of {} cases; the others are not in this report, and the run is not certified",
                self.total, self.planned
            )),
            Completion::Incomplete => {
                Some(format!(
                    "INCOMPLETE: the run's --deadline passed; {cut} of {} cases it cut short or never ran are ERROR (deadline), and the run is not certified",
                    self.planned
                ))
            }
        }
    }

    /// The line every report gives the cases that timed out ([`Summary::timed_out`]), `None`
    /// when none did: `timed out (--timeout 10 s): 3 cases: a, b, c`, the first `max` ids
    /// listed and the number of the others after them (`, and 2 more`).
    pub fn timed_out_line(&self, max: usize) -> Option<String> {
        if self.timed_out.is_empty() {
            return None;
        }
        let limit = self
            .timeout_ms
            .map(|ms| {
                if ms % 1000 == 0 {
                    format!(" (--timeout {} s)", ms / 1000)
                } else {
                    format!(" (--timeout {} ms)", ms)
                }
            })
            .unwrap_or_default();
        let n = self.timed_out.len();
        let mut ids = self.timed_out[..n.min(max)].join(", ");
        if n > max {
            ids.push_str(&format!(", and {} more", n - max));
        }
        let cases = if n == 1 { "case" } else { "cases" };
        Some(format!("timed out{limit}: {n} {cases}: {ids}"))
    }

    /// Whether the run passes (exit status 0): certified, and no REGRESSION or STALE snapshot
    /// when compared with a baseline.
    pub fn passed(&self) -> bool {
        self.certified && self.baseline.as_ref().is_none_or(BaselineSummary::passed)
    }
}

/// This process's peak resident memory so far, in KiB: the `VmHWM` line of `/proc/self/status`
/// (Linux); `None` where there is no such line.
pub fn peak_memory_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    vm_hwm_kib(&status)
}

/// The `VmHWM:` value of a `/proc/<pid>/status` text, in KiB (`VmHWM:\t  1234 kB`).
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    line.trim().strip_suffix("kB")?.trim().parse().ok()
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
    let keep = config.keep_reply_bytes.unwrap_or(KEEP_BYTES);
    let mut steps = step_records(case, inputs, &obs.replies, &j.steps, config.profile, keep);
    let mut source = case.source.clone();
    if obs.reply_too_large.is_some() {
        // The cut answer is the last step: its reply's grade is the finding's FAIL, and the
        // case cites bug:B17 first among its bug classes (`report::causes::rule`).
        if let Some(last) = steps.last_mut().filter(|s| s.reply.is_none()) {
            last.verdict = Verdict::Fail;
        }
        if !source.iter().any(|s| s == BUG_UNBOUNDED) {
            let at = source
                .iter()
                .position(|s| s.starts_with("bug:"))
                .unwrap_or(source.len());
            source.insert(at, BUG_UNBOUNDED.into());
        }
    }
    for f in &mut j.findings {
        if f.detail.len() > KEEP_BYTES {
            f.detail = keep_text(&f.detail);
        }
    }
    let snapshot = snapshots::case_snapshot(case, inputs, &obs, config);
    let baseline = snapshots::case_comparison(snapshot.as_ref(), &obs, config);
    CaseRecord {
        id: case.id.clone(),
        category: case.category().to_owned(),
        requirement: case.requirement.clone(),
        source,
        defined: case.defined.clone(),
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
        timed_out: obs.timed_out,
    }
}

/// Whether the run's `--deadline` cut `c` short or left it unrun: it has a `deadline` finding
/// ([`deadline_record`]).
pub fn cut_by_deadline(c: &CaseRecord) -> bool {
    c.findings.iter().any(|f| f.kind == "deadline")
}

/// The record of a case the run's deadline (`--deadline`) kept from running (`cut`: false) or
/// cut short (`cut`: true): ERROR, with one finding of kind `deadline`; no step.
pub fn deadline_record(case: &Case, cut: bool) -> CaseRecord {
    let detail = if cut {
        "the run's --deadline passed while this case ran; its handler was stopped"
    } else {
        "not run: the run's --deadline passed first"
    };
    CaseRecord {
        id: case.id.clone(),
        category: case.category().to_owned(),
        requirement: case.requirement.clone(),
        source: case.source.clone(),
        defined: case.defined.clone(),
        level: case.level,
        verdict: Verdict::Error,
        expected_failure: None,
        findings: vec![Finding {
            verdict: Verdict::Error,
            kind: "deadline".into(),
            detail: detail.into(),
        }],
        steps: Vec::new(),
        duration_ms: 0,
        snapshot: None,
        baseline: None,
        timed_out: false,
    }
}
/// The bug class an answer over the read cap cites (`oracle::REPLY_TOO_LARGE`).
const BUG_UNBOUNDED: &str = "bug:B17";

/// One record per step sent: its input, the answer or why none came, the best acceptable reply
/// in `profile`, and the grade of the answer (`grades` has one per answer that came).
fn step_records(
    case: &Case,
    inputs: &[Value],
    replies: &[Result<ToolResult, String>],
    grades: &[StepGrade],
    profile: Profile,
    keep: usize,
) -> Vec<StepRecord> {
    let mut grades = grades.iter();
    case.steps
        .iter()
        .zip(replies)
        .zip(inputs)
        .map(|((step, reply), input)| {
            let expected = crate::suite::verdict::expected_text(step, profile);
            match reply {
                Ok(r) => {
                    let (kept, cut) = keep_reply(r, keep);
                    StepRecord {
                        input: input.clone(),
                        reply: Some(kept),
                        reply_cut: cut,
                        error: None,
                        expected,
                        verdict: grades.next().map(|g| g.verdict).unwrap_or(Verdict::Pass),
                    }
                }
                Err(e) => StepRecord {
                    input: input.clone(),
                    reply: None,
                    reply_cut: None,
                    error: Some(keep_text(e)),
                    expected,
                    verdict: Verdict::Error,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(verdict: Verdict, kind: &str, detail: &str) -> Finding {
        Finding {
            verdict,
            kind: kind.into(),
            detail: detail.into(),
        }
    }

    use crate::report::test_view_step as step;

    #[test]
    fn the_timed_out_line_names_the_limit_and_the_first_ids() {
        let mut s = Summary::of("t".into(), &Config::default(), []);
        assert_eq!(s.timed_out_line(2), None);
        s.timed_out = vec!["a".into(), "b".into(), "c".into()];
        s.timeout_ms = Some(10_000);
        assert_eq!(
            s.timed_out_line(3).as_deref(),
            Some("timed out (--timeout 10 s): 3 cases: a, b, c")
        );
        s.timeout_ms = Some(1_500);
        assert_eq!(
            s.timed_out_line(2).as_deref(),
            Some("timed out (--timeout 1500 ms): 3 cases: a, b, and 1 more")
        );
        s.timed_out.truncate(1);
        s.timeout_ms = None;
        assert_eq!(s.timed_out_line(2).as_deref(), Some("timed out: 1 case: a"));
    }

    #[test]
    fn the_peak_memory_is_read_from_proc_status() {
        let status = "Name:\tmemcert\nVmPeak:\t  20000 kB\nVmHWM:\t    7312 kB\nVmRSS:\t 7000 kB\n";
        assert_eq!(vm_hwm_kib(status), Some(7312));
        assert_eq!(vm_hwm_kib("VmHWM: lots"), None);
        assert_eq!(vm_hwm_kib(""), None);
        assert!(peak_memory_kib().is_some_and(|k| k > 0));
    }

    #[test]
    fn a_long_reply_is_kept_cut_with_its_length_and_sha256() {
        let short = ToolResult::ok("abc");
        assert_eq!(keep_reply(&short, KEEP_BYTES), (short.clone(), None));
        // A two-byte character straddles the cap: the cut falls before it.
        let long = format!("{}é{}", "a".repeat(KEEP_BYTES - 1), "b".repeat(100));
        let (kept, cut) = keep_reply(&ToolResult::ok(long.clone()), KEEP_BYTES);
        let cut = cut.unwrap();
        assert_eq!(kept.text(), "a".repeat(KEEP_BYTES - 1));
        assert_eq!((cut.bytes, cut.kept), (long.len(), KEEP_BYTES - 1));
        assert_eq!(cut.sha256, sha256_hex(long.as_bytes()));
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        // Blocks: their JSON is measured, their strings are cut in order.
        let blocks = crate::protocol::Content::Blocks(vec![
            serde_json::json!({"type": "text", "text": "x".repeat(KEEP_BYTES)}),
            serde_json::json!({"type": "text", "text": "y"}),
        ]);
        let whole = serde_json::to_vec(&blocks).unwrap().len();
        let (kept, cut) = keep_reply(
            &ToolResult {
                content: blocks,
                is_error: true,
            },
            KEEP_BYTES,
        );
        let cut = cut.unwrap();
        assert!(kept.is_error);
        assert_eq!(cut.kept, KEEP_BYTES);
        assert!(serde_json::to_vec(&kept.content).unwrap().len() < KEEP_BYTES + 100);
        assert_eq!(cut.bytes, whole);
    }

    #[test]
    fn a_finding_names_the_step_its_detail_starts_with() {
        let named = |d: &str| finding_step(&finding(Verdict::Unsafe, "reply", d));
        assert_eq!(named("step 1: x"), Some(0));
        assert_eq!(named("step 22: the reply holds the canary token"), Some(21));
        assert_eq!(named("step 0: x"), None);
        assert_eq!(named("step +1: x"), None);
        assert_eq!(named("step : x"), None);
        assert_eq!(named("step 1 x"), None);
        assert_eq!(named("/memories/a: step 1: x"), None);
        assert_eq!(named("leaked in 5 of 5 rounds"), None);
    }

    // See: issue 11 ("verdicts follow what was observed"): symlink/loop/view's refusal was
    // graded PASS while a finding said that same reply discloses the host path.
    #[test]
    fn a_step_is_labelled_with_the_worst_of_its_reply_and_the_findings_that_name_it() {
        let c = CaseRecord {
            findings: vec![
                finding(
                    Verdict::Unsafe,
                    "outside-read",
                    "step 2: the reply holds the canary token",
                ),
                finding(Verdict::Unsafe, "outside-changed", "/outside/x was changed"),
                finding(
                    Verdict::Unsafe,
                    "host-path-disclosed",
                    "step 2: the reply discloses the host path /tmp/m",
                ),
                finding(
                    Verdict::Unsafe,
                    "outside-read",
                    "step 2: the reply holds the canary token",
                ),
                finding(
                    Verdict::Fail,
                    "reply",
                    "step 3: the file is shown without line numbers",
                ),
                finding(Verdict::Info, "host-path-disclosed", "step 3: info"),
            ],
            steps: vec![
                step(Verdict::Pass),
                step(Verdict::Pass),
                step(Verdict::Fail),
            ],
            ..crate::report::test_record("symlink/loop/view", Verdict::Unsafe)
        };
        let pass = StepLabel {
            verdict: Verdict::Pass,
            reply: Verdict::Pass,
            worse: vec![],
        };
        assert_eq!(c.step_label(0), pass);
        assert_eq!(c.step_label(0).note(), None);
        assert!(!c.step_matters(0));
        let leaked = c.step_label(1);
        assert_eq!(
            leaked,
            StepLabel {
                verdict: Verdict::Unsafe,
                reply: Verdict::Pass,
                worse: vec!["outside-read".into(), "host-path-disclosed".into()],
            }
        );
        assert_eq!(
            leaked.note().as_deref(),
            Some("reply graded PASS; UNSAFE by outside-read, host-path-disclosed")
        );
        assert!(c.step_matters(1));
        // The reply's own finding, and a milder one, leave the reply's grade as the label.
        assert_eq!(
            c.step_label(2),
            StepLabel {
                verdict: Verdict::Fail,
                reply: Verdict::Fail,
                worse: vec![],
            }
        );
        assert_eq!(c.step_label(2).note(), None);
    }

    #[test]
    fn the_json_case_gives_each_step_its_label_and_its_reply_grade() {
        let c = CaseRecord {
            findings: vec![finding(
                Verdict::Unsafe,
                "host-path-disclosed",
                "step 1: the reply discloses the host path /tmp/m",
            )],
            steps: vec![step(Verdict::Pass), step(Verdict::NonStrict)],
            ..crate::report::test_record("symlink/loop/view", Verdict::Unsafe)
        };
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            concat!(
                r#"{"id":"symlink/loop/view","category":"symlink","requirement":"R MUST hold.","#,
                r#""source":["bug:B01"],"level":"must","verdict":"UNSAFE","findings":[{"verdict":"UNSAFE","#,
                r#""kind":"host-path-disclosed","detail":"step 1: the reply discloses the host path /tmp/m"}],"#,
                r#""steps":[{"input":{"command":"view","path":"/memories/loop"},"#,
                r#""reply":{"content":"loop","is_error":true},"error":null,"expected":"is_error: true\nloop","#,
                r#""verdict":"UNSAFE","reply_verdict":"PASS"},"#,
                r#"{"input":{"command":"view","path":"/memories/loop"},"#,
                r#""reply":{"content":"loop","is_error":true},"error":null,"expected":"is_error: true\nloop","#,
                r#""verdict":"NON-STRICT","reply_verdict":"NON-STRICT"}],"duration_ms":1}"#
            )
        );
    }
}
