//! `--junit FILE`: JUnit XML (quick-junit), one test suite per case category, one test case per
//! case named by its id. UNSAFE and FAIL are failures (type `UNSAFE`/`FAIL`), ERROR an error,
//! SKIPPED skipped; PASS, NON-STRICT and INFO pass, the last two with their finding in
//! `system-out`. A failure's message starts with the requirement (rule:8). An expected
//! failure (`--expected-failures`) is skipped, its message `expected failure (VERDICT): reason`.
//! With `--baseline`, a REGRESSION case is a failure of type `REGRESSION` whatever its verdict,
//! the diff first in its text; a NEW case says so in `system-err`; each STALE snapshot is a
//! failing test case (type `STALE`) in a last suite, `baseline`.

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::certify::{CaseRecord, Summary};
use crate::suite::verdict::Verdict;

/// Render a finished run as JUnit XML.
pub fn render(summary: &Summary, cases: &[CaseRecord]) -> String {
    let mut report = Report::new(format!("memcert certify ({})", summary.profile));
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
    report.add_test_suites(suites.into_values());
    report.to_string().expect("JUnit XML serialises")
}

fn details(c: &CaseRecord) -> String {
    let mut s = format!("{}\nsource: {}\n", c.requirement, c.source.join(", "));
    for f in &c.findings {
        s.push_str(&format!("- {} [{}] {}\n", f.verdict, f.kind, f.detail));
    }
    s
}
