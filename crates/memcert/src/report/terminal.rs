//! The terminal report, written when the run finishes: the header (memcert's and the catalog's
//! versions, target, profile, gate), the causes ([`super::causes`]: those of the gate's verdicts
//! with their example, rule and fix hint, the others one line each), expected failures, a table
//! of verdicts per category, stale expected-failure entries, and the verdict. With `--verbose`
//! every UNSAFE, ERROR and FAIL case follows the causes in full (requirement, findings, input,
//! expected, actual, diff), and the NON-STRICT, INFO and SKIPPED cases one line each. Progress
//! while cases run is the binary's (`memcert-cli`, progress.rs).

use std::collections::BTreeMap;
use std::io::Write;

use crate::certify::{CaseRecord, Event, Reporter, Summary};
use crate::suite::verdict::Verdict;

/// Findings printed per case; the JSON report has them all.
const MAX_FINDINGS: usize = 10;

/// Writes the human report to `out` when the run finishes. It keeps, while the cases come, only
/// what the report prints ([`Digest`]): the causes' aggregates, counts per category and verdict,
/// the lines of the excused cases and of the baseline's regressions, and with `--verbose` the
/// text of each case it lists; never the records themselves.
pub struct Terminal<W: Write> {
    out: W,
    digest: Digest,
    verbose: bool,
}

impl<W: Write> Terminal<W> {
    /// A report written to `out` when the run finishes.
    pub fn new(out: W) -> Self {
        Terminal {
            out,
            digest: Digest::default(),
            verbose: false,
        }
    }

    /// The same report, listing every case as well (`--verbose`).
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    fn write(&mut self, summary: &Summary, digest: Digest) {
        // Every field from the run is escaped where it is placed; this pass is the backstop
        // for any that is not.
        let text = super::escape::terminal_lines(&render_digest(summary, digest, self.verbose));
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
    }
}

impl<W: Write> Reporter for Terminal<W> {
    fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::Started { .. } => self.digest = Digest::default(),
            Event::CaseFinished(r) => self.digest.add(r, self.verbose),
            Event::Finished(summary) => {
                let digest = std::mem::take(&mut self.digest);
                self.write(summary, digest);
            }
        }
    }
}

impl<W: Write> super::Finish for Terminal<W> {
    fn finish(&mut self, summary: &Summary, cases: &[CaseRecord]) {
        let digest = Digest::of(cases, self.verbose);
        self.write(summary, digest);
    }
}

/// The whole report as text (no colours, stable order), causes and counts only.
pub fn render(summary: &Summary, cases: &[CaseRecord]) -> String {
    render_with(summary, cases, false)
}

/// [`render`], with every case listed too when `verbose` (`--verbose`).
pub fn render_with(summary: &Summary, cases: &[CaseRecord], verbose: bool) -> String {
    render_digest(summary, Digest::of(cases, verbose), verbose)
}

/// What the report needs of a run's cases, gathered one case at a time in run order
/// ([`Digest::add`]): the report of a [`Digest`] is the report of the cases added.
#[derive(Debug, Default)]
struct Digest {
    causes: super::causes::Fold,
    /// Cases per category and verdict.
    by_category: BTreeMap<String, BTreeMap<Verdict, usize>>,
    /// Cases with a `deadline` finding ([`Summary::stop_note_of`]).
    cut: usize,
    /// The excused cases: how many, and their lines ([`expected_failures`]).
    excused: (usize, String),
    /// Each REGRESSION: its case id, its diff as shown ([`super::clip_diff`]) and whether its
    /// inputs changed.
    regressions: Vec<(String, String, bool)>,
    /// `--verbose`: the UNSAFE, ERROR and FAIL cases not excused, in full, one text per
    /// verdict of [`FAILURES`].
    failures: [String; 3],
    /// `--verbose`: the NON-STRICT, INFO and SKIPPED cases, one line each: how many and the
    /// lines, per verdict of [`ONE_LINE`].
    one_line: [(usize, String); 3],
}

/// The verdicts `--verbose` shows in full, in this order.
const FAILURES: [Verdict; 3] = [Verdict::Unsafe, Verdict::Error, Verdict::Fail];
/// The verdicts `--verbose` shows one line each, in this order.
const ONE_LINE: [Verdict; 3] = [Verdict::NonStrict, Verdict::Info, Verdict::Skipped];

impl Digest {
    fn of(cases: &[CaseRecord], verbose: bool) -> Digest {
        let mut d = Digest::default();
        for c in cases {
            d.add(c, verbose);
        }
        d
    }

    /// Add the next case of the run.
    fn add(&mut self, c: &CaseRecord, verbose: bool) {
        use crate::baseline::Comparison;
        self.causes.add(c);
        let by_verdict = match self.by_category.get_mut(c.category.as_str()) {
            Some(by_verdict) => by_verdict,
            None => self.by_category.entry(c.category.clone()).or_default(),
        };
        *by_verdict.entry(c.verdict).or_default() += 1;
        if crate::certify::cut_by_deadline(c) {
            self.cut += 1;
        }
        if let Some(why) = &c.expected_failure {
            self.excused.0 += 1;
            self.excused.1.push_str(&format!(
                "  {:<48} {:<6} {}\n",
                c.id,
                c.verdict.as_str(),
                visible(why)
            ));
        }
        if let Some(Comparison::Regression {
            diff,
            input_changed,
        }) = &c.baseline
        {
            // Kept as shown: the first lines ([`MAX_DIFF_LINES`]).
            let shown = super::clip_diff(diff, MAX_DIFF_LINES);
            self.regressions.push((c.id.clone(), shown, *input_changed));
        }
        if !verbose {
            return;
        }
        for (v, text) in FAILURES.iter().zip(&mut self.failures) {
            if *v == c.verdict && c.expected_failure.is_none() {
                text.push('\n');
                text.push_str(&detail(c));
            }
        }
        for (v, (count, lines)) in ONE_LINE.iter().zip(&mut self.one_line) {
            if *v == c.verdict {
                let why = c.findings.first().map(|f| f.detail.as_str()).unwrap_or("");
                *count += 1;
                lines.push_str(&format!("  {:<48} {}\n", c.id, visible(why)));
            }
        }
    }
}

/// The report of the cases `digest` gathered.
fn render_digest(summary: &Summary, digest: Digest, verbose: bool) -> String {
    let mut s = header(summary);
    if let Some(note) = summary.stop_note_of(digest.cut) {
        s.push_str(&format!("\n{note}\n"));
    }
    s.push_str(&causes_section(summary, &digest.causes.finish(), verbose));
    if verbose {
        s.push_str(&digest.failures.concat());
    }
    s.push_str(&expected_failures(&digest.excused));
    if verbose {
        s.push_str(&one_line_verdicts(&digest.one_line));
    }
    if let Some(b) = &summary.baseline {
        s.push_str(&baseline(b, &digest.regressions));
    }
    s.push('\n');
    s.push_str(&table(&digest.by_category));
    s.push_str(&list_entries(summary));
    s.push_str(&verdict(summary));
    if let Some(b) = &summary.baseline {
        s.push_str(&baseline_verdict(b));
    }
    s
}

/// The first lines: memcert's and the catalog's versions, the target, the profile, the number
/// of cases, the handlers run at once (`--jobs`) and the gate.
fn header(summary: &Summary) -> String {
    let mut s = String::new();
    s.push_str(&format!("{} certify\n", super::versions()));
    s.push_str(&format!("target:  {}\n", visible(&summary.target)));
    if let Some(c) = &summary.containment {
        s.push_str(&format!("contain: {}\n", visible(&c.line())));
    }
    s.push_str(&format!(
        "profile: {}{}    cases: {}    jobs: {}\nfail on: {}\n",
        summary.profile,
        if summary.strict { " (strict)" } else { "" },
        summary.total,
        summary.jobs,
        summary.gate_line()
    ));
    if let Some(line) = summary.timed_out_line(TIMED_OUT_IDS) {
        s.push_str(&visible(&line));
        s.push('\n');
    }
    s
}

/// Ids of the cases that timed out listed in the header; the JSON report has them all.
const TIMED_OUT_IDS: usize = 10;

/// Steps of a cause's example shown; the JSON report has them all.
const EXAMPLE_STEPS: usize = 3;
/// Case ids listed per cause.
const CAUSE_IDS: usize = 3;

/// Causes of a gate verdict shown in full without `--verbose` (the worst ones); the others one
/// line each.
const FULL_CAUSES: usize = 10;

/// Causes of a verdict outside the gate listed one line each without `--verbose`; the rest are
/// counted.
const OTHER_CAUSES: usize = 8;

/// The causes: a count line, then each cause of a gate verdict with its shape, rule, example,
/// fix hint and first case ids ([`FULL_CAUSES`] of them, then one line each, unless `verbose`);
/// every other cause one line ([`OTHER_CAUSES`] per verdict unless `verbose`).
fn causes_section(summary: &Summary, causes: &[super::causes::Cause], verbose: bool) -> String {
    use super::causes::{first_line, reply_line};
    if causes.is_empty() {
        return String::new();
    }
    let cases: usize = {
        let mut ids: Vec<&str> = causes
            .iter()
            .flat_map(|c| c.ids.iter().map(String::as_str))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    };
    let mut s = format!(
        "\nCAUSES ({}: {}) over {cases} cases not PASS\n",
        causes.len(),
        super::causes::counts_line(causes)
    );
    for (i, c) in causes.iter().enumerate() {
        let n = if c.count == 1 { "case" } else { "cases" };
        let excused = if c.excused > 0 {
            format!(" ({} expected)", c.excused)
        } else {
            String::new()
        };
        let head = format!(
            "{:>3}. {:<10} {} {n}{excused}  [{}] {}",
            i + 1,
            c.verdict.as_str(),
            c.count,
            c.kind,
            super::causes::rules_label(c)
        );
        let gated = summary.fail_on.contains(&c.verdict);
        let gate_rank = causes[..i]
            .iter()
            .filter(|o| summary.fail_on.contains(&o.verdict))
            .count();
        if gated && !verbose && gate_rank >= FULL_CAUSES {
            s.push_str(&format!(
                "{head}: {} (e.g. {})\n",
                visible(&first_line(&c.shape, 100)),
                visible(&c.example.case)
            ));
            continue;
        }
        if !gated {
            let rank = causes[..i]
                .iter()
                .filter(|o| o.verdict == c.verdict)
                .count();
            let of_verdict = causes.iter().filter(|o| o.verdict == c.verdict).count();
            if !verbose && rank >= OTHER_CAUSES {
                if rank == OTHER_CAUSES {
                    s.push_str(&format!(
                        "     ... and {} more {} causes (--verbose lists them)\n",
                        of_verdict - OTHER_CAUSES,
                        c.verdict
                    ));
                }
                continue;
            }
            s.push_str(&format!(
                "{head}: {} (e.g. {})\n",
                visible(&first_line(&c.shape, 100)),
                visible(&c.example.case)
            ));
            continue;
        }
        s.push_str(&format!("{head}\n"));
        s.push_str(&format!("     {}\n", visible(&first_line(&c.shape, 160))));
        s.push_str(&format!(
            "     rule:    {}\n",
            visible(&first_line(&c.requirement, 160))
        ));
        let steps = c.example.steps.len();
        s.push_str(&format!(
            "     example: {} ({steps} step{})\n",
            visible(&c.example.case),
            if steps == 1 { "" } else { "s" }
        ));
        for step in c.example.steps.iter().take(EXAMPLE_STEPS) {
            s.push_str(&format!(
                "       > {}\n",
                visible(&first_line(&step.input.to_string(), 160))
            ));
            s.push_str(&format!("       < {}\n", visible(&reply_line(step, 160))));
        }
        if steps > EXAMPLE_STEPS {
            s.push_str(&format!(
                "       ... {} more steps\n",
                steps - EXAMPLE_STEPS
            ));
        }
        for d in c.example.disk.iter().take(2) {
            s.push_str(&format!("       disk: {}\n", visible(&first_line(d, 160))));
        }
        if !c.example.disk.contains(&c.example.detail) {
            s.push_str(&format!(
                "       seen: {}\n",
                visible(&first_line(&c.example.detail, 160))
            ));
        }
        s.push_str(&format!("     fix:     {}\n", c.hint));
        if c.ids.len() == 1 {
            continue;
        }
        let more = c.ids.len().saturating_sub(CAUSE_IDS);
        let ids: Vec<String> = c.ids.iter().take(CAUSE_IDS).map(|i| visible(i)).collect();
        s.push_str(&format!(
            "     cases:   {}{}\n",
            ids.join(", "),
            if more > 0 {
                format!(" and {more} more (--verbose)")
            } else {
                String::new()
            }
        ));
    }
    s
}

/// The cases the expected-failures list excuses, one line each with the list's reason: how
/// many, and their lines ([`Digest::add`]).
fn expected_failures((count, lines): &(usize, String)) -> String {
    if *count == 0 {
        return String::new();
    }
    format!("\nEXPECTED FAILURES ({count})\n{lines}")
}

/// The NON-STRICT, INFO and SKIPPED cases, one line each with their first finding: how many of
/// each verdict of [`ONE_LINE`], and their lines ([`Digest::add`]).
fn one_line_verdicts(each: &[(usize, String); 3]) -> String {
    let mut s = String::new();
    for (v, (count, lines)) in ONE_LINE.iter().zip(each) {
        if *count > 0 {
            s.push_str(&format!("\n{v} ({count})\n{lines}"));
        }
    }
    s
}

/// The expected-failure list's catalog when it is not the running one, the entries that are
/// stale (their cases all pass) and those that matched no case of the run (marked when no case
/// of the catalog has their id).
fn list_entries(summary: &Summary) -> String {
    let mut s = String::new();
    if let Some(v) = &summary.expected_catalog {
        s.push_str(&format!(
            "\n{}\n",
            super::expected_other_catalog("the expected-failures list", v)
        ));
    }
    if !summary.stale.is_empty() {
        s.push_str(&format!(
            "\nSTALE expected failures ({}): these entries' cases all pass now; remove them\n",
            summary.stale.len()
        ));
        for id in &summary.stale {
            s.push_str(&format!("  {}\n", visible(id)));
        }
    }
    if !summary.unused.is_empty() {
        s.push_str(&format!(
            "\nexpected-failure entries that matched no case of this run ({}):\n",
            summary.unused.len()
        ));
        for id in &summary.unused {
            if summary.retired.contains(id) {
                s.push_str(&format!(
                    "  {}  (no case of catalog {} has this id: retired or renamed, see CHANGELOG.md)\n",
                    visible(id),
                    crate::suite::CATALOG_VERSION
                ));
            } else {
                s.push_str(&format!("  {}\n", visible(id)));
            }
        }
    }
    s
}

/// The verdict line: CERTIFIED, or NOT CERTIFIED with what blocks it.
fn verdict(summary: &Summary) -> String {
    let mut bad = summary.blocking();
    match summary.completion {
        crate::certify::Completion::Complete => {}
        c => bad.insert(0, format!("{} run", c.as_str())),
    }
    if !summary.stale.is_empty() {
        let n = summary.stale.len();
        bad.push(format!(
            "{n} stale expected-failure {}",
            if n == 1 { "entry" } else { "entries" }
        ));
    }
    let excused = if summary.expected_failures > 0 {
        format!(" outside {} expected failures", summary.expected_failures)
    } else {
        String::new()
    };
    let gate = if summary.fail_on == Summary::DEFAULT_FAIL_ON {
        String::new()
    } else {
        format!("; --fail-on {}", summary.gate_line())
    };
    if summary.certified {
        let v: Vec<&str> = summary.fail_on.iter().map(|v| v.as_str()).collect();
        let none = match v.as_slice() {
            [a] => a.to_string(),
            [a, b] => format!("{a} or {b}"),
            _ => format!("{} or {}", v[..v.len() - 1].join(", "), v[v.len() - 1]),
        };
        format!("\nverdict: CERTIFIED (no {none}{excused})\n")
    } else {
        format!("\nverdict: NOT CERTIFIED ({}{gate})\n", bad.join(", "))
    }
}

/// The baseline line after the verdict: PASSED, or FAILED with the REGRESSION and STALE counts.
fn baseline_verdict(b: &crate::baseline::BaselineSummary) -> String {
    let mut bad = Vec::new();
    if !b.regressions.is_empty() {
        bad.push(format!("{} REGRESSION", b.regressions.len()));
    }
    if !b.stale.is_empty() {
        bad.push(format!("{} STALE", b.stale.len()));
    }
    if bad.is_empty() {
        format!(
            "baseline: PASSED ({} unchanged, {} NEW)\n",
            b.unchanged,
            b.new.len()
        )
    } else {
        format!(
            "baseline: FAILED ({}): the run fails; for a deliberate change, rerun with --update-baseline and accept the .snap.new files\n",
            bad.join(", ")
        )
    }
}

/// The comparison with the baseline: every REGRESSION (case id, diff as shown, whether its
/// inputs changed, in run order) with its diff, then the NEW cases and STALE snapshots one line
/// each, then the totals.
fn baseline(
    b: &crate::baseline::BaselineSummary,
    regressions: &[(String, String, bool)],
) -> String {
    let mut s = String::new();
    for (id, diff, input_changed) in regressions {
        s.push_str(&format!("\nREGRESSION {id}\n"));
        s.push_str(&format!(
            "  snapshot:    {}\n",
            visible(
                &std::path::Path::new(&b.dir)
                    .join(crate::baseline::file_name(id))
                    .display()
                    .to_string()
            )
        ));
        if *input_changed {
            s.push_str(
                "  the case's inputs changed too (memcert's catalog changed since the snapshot)\n",
            );
        }
        s.push_str("  diff (-baseline +actual):\n");
        for line in diff.lines() {
            // Backslashes doubled too, so a changed `\t` (two characters) never looks like
            // a tab.
            s.push_str(&format!("    {}\n", visible(&line.replace('\\', "\\\\"))));
        }
    }
    if !b.new.is_empty() {
        s.push_str(&format!(
            "\nNEW ({}): no snapshot in the baseline (not a failure)\n",
            b.new.len()
        ));
        for id in &b.new {
            s.push_str(&format!("  {id}\n"));
        }
    }
    if !b.stale.is_empty() {
        s.push_str(&format!(
            "\nSTALE snapshots ({}): their cases no longer exist; remove the files\n",
            b.stale.len()
        ));
        for id in &b.stale {
            s.push_str(&format!(
                "  {}  ({})\n",
                visible(id),
                crate::baseline::file_name(id)
            ));
        }
    }
    if let Some(note) = super::baseline_other_catalog(
        "the baseline was recorded with",
        &b.other_catalogs,
        b.snapshots,
    ) {
        s.push_str(&format!("\n{note}\n"));
    }
    s.push_str(&format!("\nbaseline {}: {}\n", visible(&b.dir), b.totals()));
    s
}

/// Diff lines shown per REGRESSION; the rest are in the JSON report.
const MAX_DIFF_LINES: usize = 200;

fn detail(c: &CaseRecord) -> String {
    let mut s = format!("{:<10} {}\n", c.verdict, c.id);
    s.push_str(&format!("  requirement: {}\n", c.requirement));
    s.push_str(&format!("  source:      {}\n", c.source.join(", ")));
    for f in c.findings.iter().take(MAX_FINDINGS) {
        s.push_str(&format!(
            "  - {} [{}] {}\n",
            f.verdict,
            f.kind,
            visible(&f.detail)
        ));
    }
    if c.findings.len() > MAX_FINDINGS {
        s.push_str(&format!(
            "  - ... and {} more findings (all in --report-json)\n",
            c.findings.len() - MAX_FINDINGS
        ));
    }
    // Long cases (races) show the steps that matter: those with a grade or a finding of their
    // own, five at most.
    let shown: Vec<usize> = (0..c.steps.len())
        .filter(|&i| c.steps.len() <= 3 || c.step_matters(i))
        .take(5)
        .collect();
    if shown.len() < c.steps.len() {
        s.push_str(&format!(
            "  ({} of {} steps shown)\n",
            shown.len(),
            c.steps.len()
        ));
    }
    for i in shown {
        let step = &c.steps[i];
        s.push_str(&format!("  step {} input: {}\n", i + 1, step.input));
        s.push_str(&indent("expected", &step.expected));
        match (&step.reply, &step.error) {
            (Some(r), _) => {
                let flag = if r.is_error { "is_error: true\n" } else { "" };
                let actual = format!("{flag}{}", r.text());
                s.push_str(&indent("actual", &actual));
                // A line diff only where it reads well: both sides short (a handler may answer
                // with a million lines), and with a time limit.
                let small = |t: &str| t.len() <= 20_000 && t.lines().count() <= 400;
                if step.verdict != Verdict::Pass
                    && (actual.contains('\n') || step.expected.contains('\n'))
                    && small(&actual)
                    && small(&step.expected)
                {
                    s.push_str("    diff (-expected +actual):\n");
                    let d = similar::TextDiff::configure()
                        .timeout(std::time::Duration::from_millis(200))
                        .diff_lines(&step.expected, &actual);
                    for change in d.iter_all_changes() {
                        let sign = match change.tag() {
                            similar::ChangeTag::Delete => "-",
                            similar::ChangeTag::Insert => "+",
                            similar::ChangeTag::Equal => " ",
                        };
                        s.push_str(&format!(
                            "      {sign}{}",
                            visible(change.value().trim_end_matches('\n'))
                        ));
                        s.push('\n');
                    }
                }
            }
            (None, Some(e)) => s.push_str(&format!("    no reply: {}\n", visible(e))),
            (None, None) => {}
        }
    }
    s
}

fn indent(label: &str, text: &str) -> String {
    let shown: String = if text.chars().count() > 2000 {
        format!(
            "{}... ({} characters)",
            text.chars().take(2000).collect::<String>(),
            text.chars().count()
        )
    } else {
        text.to_owned()
    };
    let mut lines = shown.split('\n');
    let mut s = format!("    {label:<9}{}\n", visible(lines.next().unwrap_or("")));
    for l in lines {
        s.push_str(&format!("             {}\n", visible(l)));
    }
    s
}

/// Show tabs, carriage returns, newlines, other control characters (ANSI escapes included) and
/// format characters (bidi overrides) as escapes ([`super::escape::terminal`]); keep everything
/// else. Handler-controlled text goes through here, so it cannot forge report lines, colour a
/// CI log or reorder what is shown.
fn visible(line: &str) -> String {
    super::escape::terminal(line)
}

fn table(by: &BTreeMap<String, BTreeMap<Verdict, usize>>) -> String {
    let cols = super::COLUMNS;
    let mut s = format!("{:<12}", "category");
    for v in cols {
        s.push_str(&format!("{:>11}", v.as_str()));
    }
    s.push('\n');
    let mut totals: BTreeMap<Verdict, usize> = BTreeMap::new();
    for (cat, counts) in by {
        s.push_str(&format!("{cat:<12}"));
        for v in cols {
            let n = counts.get(&v).copied().unwrap_or(0);
            *totals.entry(v).or_default() += n;
            s.push_str(&format!("{n:>11}"));
        }
        s.push('\n');
    }
    s.push_str(&format!("{:<12}", "total"));
    for v in cols {
        s.push_str(&format!("{:>11}", totals.get(&v).copied().unwrap_or(0)));
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attack::oracle::Finding;
    use crate::protocol::ToolResult;
    use crate::text::Profile;

    fn record(
        id: &str,
        verdict: Verdict,
        finding: Option<Finding>,
        reply: ToolResult,
        expected: &str,
    ) -> CaseRecord {
        CaseRecord {
            source: vec!["spec:3/S-4".into()],
            defined: String::new(),
            findings: finding.into_iter().collect(),
            steps: vec![crate::certify::StepRecord {
                input: serde_json::json!({"command": "delete", "path": "/memories/l"}),
                reply: Some(reply),
                reply_cut: None,
                error: None,
                expected: expected.into(),
                verdict,
            }],
            ..crate::report::test_record(id, verdict)
        }
    }

    #[test]
    fn causes_first_then_the_table_and_every_case_with_verbose() {
        let unsafe_case = record(
            "symlink/inner-file/delete",
            Verdict::Unsafe,
            Some(Finding {
                verdict: Verdict::Unsafe,
                kind: "check".into(),
                detail: "target kept: found nothing".into(),
            }),
            ToolResult::ok("Successfully deleted /memories/l"),
            "Successfully deleted /memories/l",
        );
        let ns = record(
            "path/dot/inside",
            Verdict::NonStrict,
            Some(Finding {
                verdict: Verdict::NonStrict,
                kind: "reply".into(),
                detail: "step 1: accepted a . component".into(),
            }),
            ToolResult::ok("x"),
            "is_error: true (any text)",
        );
        let pass = record(
            "view/missing",
            Verdict::Pass,
            None,
            ToolResult::error("a\tb"),
            "a\tb",
        );
        let config = crate::certify::Config {
            profile: Profile::Docs,
            strict: false,
            ..Default::default()
        };
        let summary = Summary::of(
            "t".into(),
            &config,
            [
                ("view/missing", Verdict::Pass),
                ("path/dot/inside", Verdict::NonStrict),
                ("symlink/inner-file/delete", Verdict::Unsafe),
            ],
        );
        let cases = [pass, ns, unsafe_case];
        let head = [
            format!(
                "memcert {}, catalog {} certify",
                env!("CARGO_PKG_VERSION"),
                crate::suite::CATALOG_VERSION
            )
            .as_str(),
            "target:  t",
            "profile: docs    cases: 3    jobs: 1",
            "fail on: UNSAFE, ERROR, FAIL",
            "",
            "CAUSES (2: 1 UNSAFE, 1 NON-STRICT) over 2 cases not PASS",
            "  1. UNSAFE     1 case  [check] spec:3/S-4",
            "     target kept: found nothing",
            "     rule:    R MUST hold.",
            "     example: symlink/inner-file/delete (1 step)",
            "       > {\"command\":\"delete\",\"path\":\"/memories/l\"}",
            "       < \"Successfully deleted /memories/l\"",
            "       disk: target kept: found nothing",
            "     fix:     act on a link itself, never on its target (lstat, unlink, rename the link)",
            "  2. NON-STRICT 1 case  [reply] spec:3/S-4: accepted a . component (e.g. path/dot/inside)",
            "",
        ]
        .join("\n");
        let every_case = "\n\
UNSAFE     symlink/inner-file/delete\n  requirement: R MUST hold.\n  source:      spec:3/S-4\n  - UNSAFE [check] target kept: found nothing\n  step 1 input: {\"command\":\"delete\",\"path\":\"/memories/l\"}\n    expected Successfully deleted /memories/l\n    actual   Successfully deleted /memories/l\n\n\
NON-STRICT (1)\n  path/dot/inside                                  step 1: accepted a . component\n";
        let tail = "\n\
category           PASS NON-STRICT       INFO       FAIL     UNSAFE      ERROR    SKIPPED\n\
path                  0          1          0          0          0          0          0\n\
symlink               0          0          0          0          1          0          0\n\
view                  1          0          0          0          0          0          0\n\
total                 1          1          0          0          1          0          0\n\n\
verdict: NOT CERTIFIED (1 UNSAFE)\n";
        assert_eq!(render(&summary, &cases), format!("{head}{tail}"));
        assert_eq!(
            render_with(&summary, &cases, true),
            format!("{head}{every_case}{tail}")
        );
        // As a reporter it keeps only its digest of the cases as they come, and writes the same.
        for (verbose, want) in [
            (false, format!("{head}{tail}")),
            (true, format!("{head}{every_case}{tail}")),
        ] {
            let mut t = Terminal::new(Vec::new()).verbose(verbose);
            t.event(&Event::Started {
                target: "t",
                profile: Profile::Docs,
                total: 3,
            });
            for c in &cases {
                t.event(&Event::CaseFinished(c));
            }
            t.event(&Event::Finished(&summary));
            assert_eq!(String::from_utf8(t.out).unwrap(), want);
        }
        let gated = summary.gated(&[Verdict::Fail]);
        let gated_text = render(&gated, &cases);
        assert!(
            gated_text.contains(concat!(
                "\n  1. UNSAFE     1 case  [check] spec:3/S-4: target kept: found nothing ",
                "(e.g. symlink/inner-file/delete)\n",
                "  2. NON-STRICT 1 case  [reply] spec:3/S-4: accepted a . component ",
                "(e.g. path/dot/inside)\n\ncategory"
            )),
            "{gated_text}"
        );
        assert!(gated_text.ends_with("\nverdict: CERTIFIED (no FAIL)\n"));
    }

    #[test]
    fn baseline_regressions_with_their_diff_then_new_stale_and_the_totals() {
        let (summary, cases) = crate::report::baseline_sample();
        let text = render(&summary, &cases);
        let want = concat!(
            "\nREGRESSION str_replace/success\n",
            "  snapshot:    base/str_replace__success.snap\n",
            "  diff (-baseline +actual):\n",
            "    --- baseline\n",
            "    +++ actual\n",
            "    @@ -1,5 +1,5 @@\n",
            "     --- step 1 ---\n",
            "     is_error: false\n",
            "     content: 1 line\n",
            "    -edited\n",
            "    +<b>edited</b>\n",
            "     --- end ---\n",
            "\nNEW (1): no snapshot in the baseline (not a failure)\n",
            "  view/new\n",
            "\nSTALE snapshots (1): their cases no longer exist; remove the files\n",
            "  view/retired  (view__retired.snap)\n",
            "\nbaseline base: 1 unchanged, 1 REGRESSION, 1 NEW, 1 STALE (0 not compared: race, huge \
file or SKIPPED; 2 snapshots of cases not run)\n",
            "\ncategory",
        );
        assert!(text.contains(want), "{text}");
        assert!(text.ends_with(
            "\nverdict: CERTIFIED (no UNSAFE, ERROR or FAIL)\nbaseline: FAILED (1 REGRESSION, 1 STALE): the run fails; for a deliberate change, rerun with --update-baseline and accept the .snap.new files\n"
        ));
    }

    #[test]
    fn a_diff_shows_an_escaped_tab_apart_from_a_tab_and_stops_at_200_lines() {
        assert_eq!(visible(&"a\\tb".replace('\\', "\\\\")), "a\\\\tb");
        assert_eq!(visible("a\tb"), "a\\tb");
        let long: String = (0..250).map(|i| format!("+{i}\n")).collect();
        let clipped = crate::report::clip_diff(&long, MAX_DIFF_LINES);
        assert_eq!(clipped.lines().count(), 201);
        assert_eq!(
            clipped.lines().last(),
            Some("... 50 more diff lines (the whole diff is in --report-json)")
        );
    }
}
