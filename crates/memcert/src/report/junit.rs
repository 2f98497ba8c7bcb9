//! `--junit FILE`: JUnit XML (quick-junit). The first test suite, `causes`, has one test case per
//! cause ([`super::causes`], worst first), named `KIND SPEC: SHAPE` (stable across runs, so CI
//! history follows a cause), classname `memcert.causes`: an UNSAFE or FAIL cause is a failure and
//! an ERROR cause an error, typed by the verdict, whose message is the verdict and the summary
//! (`UNSAFE in 12 cases: step N: the reply discloses the host path <path>`) and whose text holds
//! the rule, the fix hint, the example and the case ids; a cause whose cases the
//! expected-failures list all excuses is skipped; SKIPPED causes are skipped; NON-STRICT and INFO
//! causes pass, with their summary in `system-out`. CI pages (GitHub test reporters, GitLab,
//! Jenkins) list a failing test by name and message and show the text when opened; they do not
//! show properties, so the cause is in the message. The suite's properties hold the gate
//! (`fail-on`), memcert's and the catalog's versions, and for a run that did not complete its
//! `completion` (INTERRUPTED, INCOMPLETE, also in the report's name and the suite's
//! `system-err`). Then one test suite per case category, one test case per
//! case named by its id. UNSAFE and FAIL are failures (type `UNSAFE`/`FAIL`), ERROR an error,
//! SKIPPED skipped; PASS, NON-STRICT and INFO pass, the last two with their finding in
//! `system-out`. A failure's message starts with the requirement (rule:8). An expected
//! failure (`--expected-failures`) is skipped, its message `expected failure (VERDICT): reason`.
//! With `--baseline`, a REGRESSION case is a failure of type `REGRESSION` whatever its verdict,
//! the diff first in its text; a NEW case says so in `system-err`; each STALE snapshot is a
//! failing test case (type `STALE`) in a last suite, `baseline`. Every character XML 1.0
//! forbids, and every format character, is shown as a `\u{..}` escape ([`super::escape::xml`]).

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::certify::{CaseRecord, Summary};
use crate::suite::verdict::Verdict;

/// Render a finished run as JUnit XML.
pub fn render(summary: &Summary, cases: &[CaseRecord]) -> String {
    let mut name = format!("memcert certify ({})", summary.profile);
    if summary.completion != crate::certify::Completion::Complete {
        name.push(' ');
        name.push_str(summary.completion.as_str());
    }
    let mut report = Report::new(name);
    let mut suites: BTreeMap<&str, TestSuite> = BTreeMap::new();
    for c in cases {
        let detail = details(c);
        let regression = match &c.baseline {
            Some(crate::baseline::Comparison::Regression { diff, .. }) => Some(diff),
            _ => None,
        };
        let plain = c.expected_failure.is_none() && regression.is_none();
        let status = if let Some(reason) = &c.expected_failure {
            let mut status = TestCaseStatus::skipped();
            status
                .set_type(c.verdict.as_str())
                .set_message(format!("expected failure ({}): {reason}", c.verdict))
                .set_description(detail.clone());
            status
        } else if let Some(diff) = regression {
            // A changed answer fails whatever the verdict; the verdict's own evidence follows.
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_type("REGRESSION")
                .set_message(format!(
                    "the answers differ from the baseline snapshot (verdict {})",
                    c.verdict
                ))
                .set_description(format!("{}\n{detail}", super::clip_diff(diff, 1000)));
            status
        } else {
            let mut status = match c.verdict {
                Verdict::Pass | Verdict::NonStrict | Verdict::Info => TestCaseStatus::success(),
                Verdict::Skipped => TestCaseStatus::skipped(),
                Verdict::Error => TestCaseStatus::non_success(NonSuccessKind::Error),
                Verdict::Fail | Verdict::Unsafe => {
                    TestCaseStatus::non_success(NonSuccessKind::Failure)
                }
            };
            if !matches!(
                c.verdict,
                Verdict::Pass | Verdict::NonStrict | Verdict::Info
            ) {
                let first = c.findings.first().map(|f| f.detail.as_str()).unwrap_or("");
                status
                    .set_type(c.verdict.as_str())
                    .set_message(format!("{} {}", c.requirement, first))
                    .set_description(detail.clone());
            }
            status
        };
        let mut tc = TestCase::new(c.id.clone(), status);
        tc.set_classname(format!("memcert.{}", c.category))
            .set_time(Duration::from_millis(c.duration_ms));
        if plain && matches!(c.verdict, Verdict::NonStrict | Verdict::Info) {
            tc.set_system_out(format!("{}: {detail}", c.verdict));
        }
        if plain && matches!(c.baseline, Some(crate::baseline::Comparison::New)) {
            tc.set_system_err("NEW: no snapshot of this case in the baseline");
        }
        suites
            .entry(c.category.as_str())
            .or_insert_with(|| TestSuite::new(c.category.clone()))
            .add_test_case(tc);
    }
    if let Some(b) = summary.baseline.as_ref().filter(|b| !b.stale.is_empty()) {
        // A stale snapshot has no case to hang on: one failing test case each, in suite
        // `baseline`.
        let mut suite = TestSuite::new("baseline");
        for id in &b.stale {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_type("STALE").set_message(format!(
                "snapshot {} of a case that no longer exists; remove the file",
                crate::baseline::file_name(id)
            ));
            let mut tc = TestCase::new(id.clone(), status);
            tc.set_classname("memcert.baseline");
            suite.add_test_case(tc);
        }
        suites.insert("~baseline", suite);
    }
    report.add_test_suite(causes_suite(summary, cases));
    report.add_test_suites(suites.into_values());
    // No character XML 1.0 forbids (the file would not parse), no bidi override.
    super::escape::xml(report.to_string().expect("JUnit XML serialises"))
}

/// The `causes` suite: one test case per cause.
fn causes_suite(summary: &Summary, cases: &[CaseRecord]) -> TestSuite {
    let mut suite = TestSuite::new("causes");
    suite.add_property(("fail-on", summary.gate_line().as_str()));
    suite.add_property(("memcert", env!("CARGO_PKG_VERSION")));
    suite.add_property(("catalog", crate::suite::CATALOG_VERSION));
    if let Some(note) = summary.stop_note(cases) {
        suite.add_property(("completion", summary.completion.as_str()));
        suite.set_system_err(note);
    }
    for c in super::causes::causes(cases) {
        let n = if c.count == 1 { "case" } else { "cases" };
        let message = format!("{} in {} {n}: {}", c.verdict, c.count, c.shape);
        let mut text = format!(
            "rule {}: {}\nfix: {}\nexample {}: {}\n",
            c.spec, c.requirement, c.hint, c.example.case, c.example.detail
        );
        for st in &c.example.steps {
            text.push_str(&format!(
                "  > {}\n  < {}\n",
                super::causes::first_line(&st.input.to_string(), 300),
                super::causes::reply_line(st, 300)
            ));
        }
        for d in &c.example.disk {
            text.push_str(&format!("  disk: {d}\n"));
        }
        text.push_str(&format!("cases: {}\n", c.ids.join(", ")));
        let excused = c.excused == c.count && c.verdict.blocks_certification();
        let message = if excused {
            format!("expected failures: {message}")
        } else {
            message
        };
        let mut status = if excused {
            TestCaseStatus::skipped()
        } else {
            match c.verdict {
                Verdict::Unsafe | Verdict::Fail => {
                    TestCaseStatus::non_success(NonSuccessKind::Failure)
                }
                Verdict::Error => TestCaseStatus::non_success(NonSuccessKind::Error),
                Verdict::Skipped => TestCaseStatus::skipped(),
                Verdict::Pass | Verdict::NonStrict | Verdict::Info => TestCaseStatus::success(),
            }
        };
        let passes = matches!(c.verdict, Verdict::NonStrict | Verdict::Info);
        if !passes {
            status
                .set_type(c.verdict.as_str())
                .set_message(message.clone())
                .set_description(text.clone());
        }
        let mut tc = TestCase::new(format!("{} {}: {}", c.kind, c.spec, c.shape), status);
        tc.set_classname("memcert.causes");
        if passes {
            tc.set_system_out(format!("{message}\n{text}"));
        }
        suite.add_test_case(tc);
    }
    suite
}

fn details(c: &CaseRecord) -> String {
    let mut s = format!("{}\nsource: {}\n", c.requirement, c.source.join(", "));
    for f in &c.findings {
        s.push_str(&format!("- {} [{}] {}\n", f.verdict, f.kind, f.detail));
    }
    s
}
