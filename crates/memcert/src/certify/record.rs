//! The records a run produces: a finished case's [`CaseRecord`] (the oracle's judgement of what
//! it observed, step by step) and the run's [`Summary`].

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

use super::{snapshots, Config};
use crate::attack::oracle::{judge, Finding, Observation};
use crate::baseline::{BaselineSummary, Comparison, Snapshot};
use crate::protocol::ToolResult;
use crate::suite::verdict::{StepGrade, Verdict};
use crate::suite::{Case, Level};
use crate::text::Profile;

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
    /// Spec rows and bug ids, as citation ids (`spec:2.1/D3`, `bug:B10`).
    pub source: Vec<String>,
    /// Where the case is defined ([`crate::suite::Case::defined`]); empty for a case made at
    /// run time, and then left out of the JSON report.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub defined: String,
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
        let mut counts: BTreeMap<String, usize> = Verdict::ALL
            .iter()
            .map(|v| (v.as_str().to_owned(), 0))
            .collect();
        let mut unexcused: BTreeMap<String, usize> = Self::DEFAULT_FAIL_ON
            .iter()
            .map(|v| (v.as_str().to_owned(), 0))
            .collect();
        let mut total = 0;
        let mut all = Vec::new();
        for (id, v) in outcomes {
            *counts.entry(v.as_str().to_owned()).or_default() += 1;
            if v.blocks_certification() && config.expected.excuses(id, v).is_none() {
                *unexcused.entry(v.as_str().to_owned()).or_default() += 1;
            }
            total += 1;
            all.push((id, v));
        }
        let reckoning = config.expected.reckon(all);
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
        };
        summary.gate(&Self::DEFAULT_FAIL_ON);
        summary
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

    /// Whether the run passes (exit status 0): certified, and no REGRESSION or STALE snapshot
    /// when compared with a baseline.
    pub fn passed(&self) -> bool {
        self.certified && self.baseline.as_ref().is_none_or(BaselineSummary::passed)
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
    let steps = step_records(case, inputs, &obs.replies, &j.steps, config.profile);
    let snapshot = snapshots::case_snapshot(case, inputs, &obs, config);
    let baseline = snapshots::case_comparison(snapshot.as_ref(), &obs, config);
    CaseRecord {
        id: case.id.clone(),
        category: case.category().to_owned(),
        requirement: case.requirement.clone(),
        source: case.source.clone(),
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
    }
}

/// One record per step sent: its input, the answer or why none came, the best acceptable reply
/// in `profile`, and the grade of the answer (`grades` has one per answer that came).
fn step_records(
    case: &Case,
    inputs: &[Value],
    replies: &[Result<ToolResult, String>],
    grades: &[StepGrade],
    profile: Profile,
) -> Vec<StepRecord> {
    let mut grades = grades.iter();
    case.steps
        .iter()
        .zip(replies)
        .zip(inputs)
        .map(|((step, reply), input)| {
            let expected = crate::suite::verdict::expected_text(step, profile);
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
        .collect()
}
