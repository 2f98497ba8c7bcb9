//! The terminal report: progress on stderr while cases run (a line that rewrites itself on a
//! terminal, one line per case elsewhere, so CI logs are never silent), then
//! UNSAFE, ERROR and FAIL cases in full (requirement, findings, input, expected, actual, diff),
//! NON-STRICT and INFO cases one line each, and a table of verdicts per category.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};

use crate::certify::{CaseRecord, Event, Reporter, Summary};
use crate::suite::verdict::Verdict;

/// Findings printed per case; the JSON report has them all.
const MAX_FINDINGS: usize = 10;

/// Writes the human report to `out` when the run finishes.
pub struct Terminal<W: Write> {
    out: W,
    progress: bool,
    total: usize,
    done: usize,
    cases: Vec<CaseRecord>,
    target: String,
}

impl<W: Write> Terminal<W> {
    /// A report written to `out`; a progress line goes to stderr when it is a terminal.
    pub fn new(out: W) -> Self {
        Terminal {
            out,
            progress: std::io::stderr().is_terminal(),
            total: 0,
            done: 0,
            cases: Vec::new(),
            target: String::new(),
        }
    }
}

impl<W: Write> Reporter for Terminal<W> {
    fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::Started { target, total, .. } => {
                self.total = *total;
                self.target = target.to_string();
            }
            Event::CaseFinished(r) => {
                self.done += 1;
                if self.progress {
                    eprint!(
                        "\r\x1b[2K[{:>4}/{}] {:<10} {}",
                        self.done, self.total, r.verdict, r.id
                    );
                    if self.done == self.total {
                        eprint!("\r\x1b[2K");
                    }
                } else {
                    // Not a terminal (CI): one line per case, so a slow run is never silent.
                    eprintln!(
                        "[{:>4}/{}] {:<10} {}",
                        self.done, self.total, r.verdict, r.id
                    );
                }
                self.cases.push((*r).clone());
            }
            Event::Finished(summary) => {
                let text = render(summary, &self.cases);
                let _ = self.out.write_all(text.as_bytes());
                let _ = self.out.flush();
            }
        }
    }
}

/// The whole report as text (no colours, stable order).
pub fn render(summary: &Summary, cases: &[CaseRecord]) -> String {
    let mut s = String::new();
    s.push_str(&format!("memcert {} certify\n", env!("CARGO_PKG_VERSION")));
    s.push_str(&format!("target:  {}\n", visible(&summary.target)));
    s.push_str(&format!(
        "profile: {}{}    cases: {}\n",
        summary.profile,
        if summary.strict { " (strict)" } else { "" },
        summary.total
    ));
    for v in [Verdict::Unsafe, Verdict::Error, Verdict::Fail] {
        for c in cases.iter().filter(|c| c.verdict == v) {
            s.push('\n');
            s.push_str(&detail(c));
        }
    }
    for v in [Verdict::NonStrict, Verdict::Info, Verdict::Skipped] {
        let list: Vec<&CaseRecord> = cases.iter().filter(|c| c.verdict == v).collect();
        if list.is_empty() {
            continue;
        }
        s.push_str(&format!("\n{v} ({})\n", list.len()));
        for c in list {
            let why = c.findings.first().map(|f| f.detail.as_str()).unwrap_or("");
            s.push_str(&format!("  {:<48} {}\n", c.id, visible(why)));
        }
    }
    s.push('\n');
    s.push_str(&table(cases));
    let bad: Vec<String> = [Verdict::Unsafe, Verdict::Error, Verdict::Fail]
        .iter()
        .filter_map(|v| {
            let n = summary.counts.get(v.as_str()).copied().unwrap_or(0);
            (n > 0).then(|| format!("{n} {v}"))
        })
        .collect();
    if summary.certified {
        s.push_str("\nverdict: CERTIFIED (no UNSAFE, ERROR or FAIL)\n");
    } else {
        s.push_str(&format!("\nverdict: NOT CERTIFIED ({})\n", bad.join(", ")));
    }
    s
}

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
    let named = |i: usize| {
        c.findings
            .iter()
            .any(|f| f.detail.starts_with(&format!("step {}:", i + 1)))
    };
    let shown: Vec<usize> = (0..c.steps.len())
        .filter(|&i| c.steps.len() <= 3 || c.steps[i].verdict != Verdict::Pass || named(i))
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

/// Show tabs, carriage returns and other control characters (ANSI escapes included) as escapes;
/// keep everything else. Handler-controlled text goes through here, so it cannot forge report
/// lines or colour a CI log.
fn visible(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

fn table(cases: &[CaseRecord]) -> String {
    let by = super::by_category(cases);
    let cols = super::COLUMNS;
    let mut s = format!("{:<12}", "category");
    for v in cols {
        s.push_str(&format!("{:>11}", v.as_str()));
    }
    s.push('\n');
    let mut totals: BTreeMap<Verdict, usize> = BTreeMap::new();
    for (cat, counts) in &by {
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
    use crate::suite::Level;
    use crate::text::Profile;

    fn record(
        id: &str,
        verdict: Verdict,
        finding: Option<Finding>,
        reply: ToolResult,
        expected: &str,
    ) -> CaseRecord {
        CaseRecord {
            id: id.into(),
            category: id.split('/').next().unwrap().into(),
            requirement: "R MUST hold.".into(),
            source: vec!["§3 S-4".into()],
            level: Level::Must,
            verdict,
            findings: finding.into_iter().collect(),
            steps: vec![crate::certify::StepRecord {
                input: serde_json::json!({"command": "delete", "path": "/memories/l"}),
                reply: Some(reply),
                error: None,
                expected: expected.into(),
                verdict,
            }],
            duration_ms: 1,
        }
    }

    #[test]
    fn worst_cases_first_then_one_liners_then_the_table() {
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
        };
        let summary = Summary::of(
            "t".into(),
            &config,
            [Verdict::Pass, Verdict::NonStrict, Verdict::Unsafe],
        );
        let text = render(&summary, &[pass, ns, unsafe_case]);
        let want = format!(
            "memcert {} certify\ntarget:  t\nprofile: docs    cases: 3\n\n\
UNSAFE     symlink/inner-file/delete\n  requirement: R MUST hold.\n  source:      §3 S-4\n  - UNSAFE [check] target kept: found nothing\n  step 1 input: {{\"command\":\"delete\",\"path\":\"/memories/l\"}}\n    expected Successfully deleted /memories/l\n    actual   Successfully deleted /memories/l\n\n\
NON-STRICT (1)\n  path/dot/inside                                  step 1: accepted a . component\n\n\
category           PASS NON-STRICT       INFO       FAIL     UNSAFE      ERROR    SKIPPED\n\
path                  0          1          0          0          0          0          0\n\
symlink               0          0          0          0          1          0          0\n\
view                  1          0          0          0          0          0          0\n\
total                 1          1          0          0          1          0          0\n\n\
verdict: NOT CERTIFIED (1 UNSAFE)\n",
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(text, want);
    }
}
