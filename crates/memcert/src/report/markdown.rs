//! `--markdown FILE`: a summary that fits a CI job summary (`$GITHUB_STEP_SUMMARY`): the verdict,
//! a table per category, the UNSAFE, ERROR and FAIL cases with their requirement and first
//! finding, expected failures and stale entries (`--expected-failures`), then NON-STRICT and
//! INFO in a collapsed list.

use crate::certify::{CaseRecord, Summary};
use crate::suite::verdict::Verdict;

use super::COLUMNS;

/// Render a finished run as Markdown.
pub fn render(summary: &Summary, cases: &[CaseRecord]) -> String {
    let mut s = String::from("## memcert certify\n\n");
    let verdict = match (
        summary.certified,
        summary.baseline.as_ref().map(|b| b.passed()),
    ) {
        (true, Some(false)) => "**CERTIFIED**, but the baseline **FAILED** (the run fails)",
        (true, _) => "**CERTIFIED**",
        (false, _) => "**NOT CERTIFIED**",
    };
    s.push_str(&format!(
        "{verdict}: `{}`, profile `{}`{}, {} cases\n\n",
        cell(&summary.target),
        summary.profile,
        if summary.strict { " (strict)" } else { "" },
        summary.total
    ));
    s.push_str("| category |");
    for v in COLUMNS {
        s.push_str(&format!(" {v} |"));
    }
    s.push_str("\n|---|");
    s.push_str(&"---:|".repeat(COLUMNS.len()));
    s.push('\n');
    let by = super::by_category(cases);
    for (cat, counts) in &by {
        s.push_str(&format!("| {cat} |"));
        for v in COLUMNS {
            s.push_str(&format!(" {} |", counts.get(&v).copied().unwrap_or(0)));
        }
        s.push('\n');
    }
    let worst: Vec<&CaseRecord> = [Verdict::Unsafe, Verdict::Error, Verdict::Fail]
        .iter()
        .flat_map(|v| {
            cases
                .iter()
                .filter(move |c| c.verdict == *v && c.expected_failure.is_none())
        })
        .collect();
    if !worst.is_empty() {
        s.push_str("\n| verdict | case | requirement | finding |\n|---|---|---|---|\n");
        for c in worst {
            let first = c.findings.first().map(|f| f.detail.as_str()).unwrap_or("");
            s.push_str(&format!(
                "| {} | `{}` | {} | {} |\n",
                c.verdict,
                c.id,
                cell(&c.requirement),
                cell(first)
            ));
        }
    }
    let excused: Vec<&CaseRecord> = cases
        .iter()
        .filter(|c| c.expected_failure.is_some())
        .collect();
    if !excused.is_empty() {
        s.push_str(&format!(
            "\n<details><summary>Expected failures ({})</summary>\n\n",
            excused.len()
        ));
        for c in excused {
            let why = c.expected_failure.as_deref().unwrap_or("");
            s.push_str(&format!("- {} `{}`: {}\n", c.verdict, c.id, cell(why)));
        }
        s.push_str("\n</details>\n");
    }
    if !summary.stale.is_empty() {
        s.push_str(
            "\n**Stale expected failures** (their cases all pass now; remove the entries):\n\n",
        );
        for id in &summary.stale {
            s.push_str(&format!("- `{}`\n", cell(id)));
        }
    }
    if let Some(b) = &summary.baseline {
        s.push_str(&baseline(b, cases));
    }
    let soft: Vec<&CaseRecord> = cases
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::NonStrict | Verdict::Info))
        .collect();
    if !soft.is_empty() {
        s.push_str(&format!(
            "\n<details><summary>NON-STRICT and INFO ({})</summary>\n\n",
            soft.len()
        ));
        for c in soft {
            let first = c.findings.first().map(|f| f.detail.as_str()).unwrap_or("");
            s.push_str(&format!("- {} `{}`: {}\n", c.verdict, c.id, cell(first)));
        }
        s.push_str("\n</details>\n");
    }
    s
}

/// The comparison with the baseline: the totals, each REGRESSION with its diff in a `diff`
/// block, the NEW cases and the STALE snapshots.
fn baseline(b: &crate::baseline::BaselineSummary, cases: &[CaseRecord]) -> String {
    use crate::baseline::Comparison;
    let verdict = if b.passed() { "PASSED" } else { "FAILED" };
    let mut s = format!(
        "\n### Baseline: **{verdict}**\n\n`{}`: {}\n",
        cell(&b.dir),
        b.totals()
    );
    // A job summary holds 1 MiB: diffs stop at 100 lines each and 400 KB in all.
    let mut budget = 400_000usize;
    for c in cases {
        if let Some(Comparison::Regression { diff, .. }) = &c.baseline {
            let diff = &crate::report::clip_diff(diff, 100);
            if diff.len() > budget {
                s.push_str(&format!(
                    "\n**REGRESSION** `{}` (diff left out: the summary is full; see --report-json)\n",
                    c.id
                ));
                continue;
            }
            budget -= diff.len();
            // A fence longer than any backtick run in the diff, so a reply cannot close it.
            let mut fence = String::from("```");
            while diff.contains(fence.as_str()) {
                fence.push('`');
            }
            s.push_str(&format!(
                "\n**REGRESSION** `{}`\n\n{fence}diff\n{}{}{fence}\n",
                c.id,
                diff,
                if diff.ends_with('\n') { "" } else { "\n" }
            ));
        }
    }
    if !b.new.is_empty() {
        s.push_str(&format!(
            "\n<details><summary>NEW, no snapshot yet ({})</summary>\n\n",
            b.new.len()
        ));
        for id in &b.new {
            s.push_str(&format!("- `{}`\n", cell(id)));
        }
        s.push_str("\n</details>\n");
    }
    if !b.stale.is_empty() {
        s.push_str("\n**STALE snapshots** (their cases no longer exist; remove the files):\n\n");
        for id in &b.stale {
            s.push_str(&format!("- `{}`\n", cell(id)));
        }
    }
    s
}

/// Text safe inside a table cell: no newlines, no pipes, no HTML.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '`' => out.push('\''),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attack::oracle::Finding;
    use crate::text::Profile;

    pub(crate) fn sample() -> (Summary, Vec<CaseRecord>) {
        let rec = |id: &str, verdict, detail: &str| CaseRecord {
            findings: if detail.is_empty() {
                vec![]
            } else {
                vec![Finding {
                    verdict,
                    kind: "reply".into(),
                    detail: detail.into(),
                }]
            },
            duration_ms: 3,
            ..crate::report::test_record(id, verdict)
        };
        let cases = vec![
            rec("view/missing", Verdict::Pass, ""),
            rec(
                "path/dot/inside",
                Verdict::NonStrict,
                "step 1: accepted a . component",
            ),
            rec(
                "symlink/loop/view",
                Verdict::Unsafe,
                "step 1: the reply discloses the host path /tmp/x|y",
            ),
        ];
        let config = crate::certify::Config {
            profile: Profile::PythonSdk,
            strict: false,
            ..Default::default()
        };
        let summary = Summary::of(
            "t".into(),
            &config,
            cases.iter().map(|c| (c.id.as_str(), c.verdict)),
        );
        (summary, cases)
    }

    #[test]
    fn markdown_layout() {
        let (summary, cases) = sample();
        assert_eq!(
            render(&summary, &cases),
            "## memcert certify\n\n**NOT CERTIFIED**: `t`, profile `python-sdk`, 3 cases\n\n\
| category | PASS | NON-STRICT | INFO | FAIL | UNSAFE | ERROR | SKIPPED |\n\
|---|---:|---:|---:|---:|---:|---:|---:|\n\
| path | 0 | 1 | 0 | 0 | 0 | 0 | 0 |\n\
| symlink | 0 | 0 | 0 | 0 | 1 | 0 | 0 |\n\
| view | 1 | 0 | 0 | 0 | 0 | 0 | 0 |\n\n\
| verdict | case | requirement | finding |\n|---|---|---|---|\n\
| UNSAFE | `symlink/loop/view` | R MUST hold. | step 1: the reply discloses the host path /tmp/x\\|y |\n\n\
<details><summary>NON-STRICT and INFO (1)</summary>\n\n\
- NON-STRICT `path/dot/inside`: step 1: accepted a . component\n\n</details>\n"
        );
    }

    #[test]
    fn junit_names_cases_by_id_and_fails_unsafe_ones() {
        let (summary, cases) = sample();
        let want = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="memcert certify (python-sdk)" tests="3" skipped="0" failures="1" errors="0">
    <testsuite name="path" tests="1" skipped="0" errors="0" failures="0">
        <testcase name="path/dot/inside" classname="memcert.path" time="0.003">
            <system-out>NON-STRICT: R MUST hold.
source: bug:B01
- NON-STRICT [reply] step 1: accepted a . component
</system-out>
        </testcase>
    </testsuite>
    <testsuite name="symlink" tests="1" skipped="0" errors="0" failures="1">
        <testcase name="symlink/loop/view" classname="memcert.symlink" time="0.003">
            <failure message="R MUST hold. step 1: the reply discloses the host path /tmp/x|y" type="UNSAFE">R MUST hold.
source: bug:B01
- UNSAFE [reply] step 1: the reply discloses the host path /tmp/x|y
</failure>
        </testcase>
    </testsuite>
    <testsuite name="view" tests="1" skipped="0" errors="0" failures="0">
        <testcase name="view/missing" classname="memcert.view" time="0.003"/>
    </testsuite>
</testsuites>
"#;
        assert_eq!(crate::report::junit::render(&summary, &cases), want);
    }

    #[test]
    fn markdown_baseline_section() {
        let (summary, cases) = crate::report::baseline_sample();
        let text = render(&summary, &cases);
        let want = "\n### Baseline: **FAILED**\n\n`base`: 1 unchanged, 1 REGRESSION, 1 NEW, 1 STALE \
(0 not compared: race or SKIPPED; 2 snapshots of cases not run)\n\n**REGRESSION** `str_replace/success`\n\n```diff\n--- baseline\n+++ actual\n\
@@ -1,5 +1,5 @@\n --- step 1 ---\n is_error: false\n content: 1 line\n-edited\n+<b>edited</b>\n --- end ---\n```\n\n\
<details><summary>NEW, no snapshot yet (1)</summary>\n\n- `view/new`\n\n</details>\n\n\
**STALE snapshots** (their cases no longer exist; remove the files):\n\n- `view/retired`\n";
        assert!(text.ends_with(want), "{text}");
    }

    #[test]
    fn junit_fails_regressions_and_stale_snapshots() {
        let (summary, cases) = crate::report::baseline_sample();
        let xml = crate::report::junit::render(&summary, &cases);
        assert!(xml.contains(
            "<testsuites name=\"memcert certify (docs)\" tests=\"4\" skipped=\"0\" failures=\"2\" errors=\"0\">"
        ), "{xml}");
        assert!(xml.contains(
            "<failure message=\"the answers differ from the baseline snapshot (verdict PASS)\" \
type=\"REGRESSION\">--- baseline\n+++ actual\n"
        ), "{xml}");
        assert!(
            xml.contains("-edited\n+&lt;b&gt;edited&lt;/b&gt;\n"),
            "{xml}"
        );
        for line in [
            "    <testsuite name=\"baseline\" tests=\"1\" skipped=\"0\" errors=\"0\" failures=\"1\">\n",
            "        <testcase name=\"view/retired\" classname=\"memcert.baseline\">\n",
            "            <failure message=\"snapshot view__retired.snap of a case that no longer exists; \
remove the file\" type=\"STALE\"/>\n",
        ] {
            assert!(xml.contains(line), "{line}\n{xml}");
        }
        assert!(
            xml.contains("<system-err>NEW: no snapshot of this case in the baseline</system-err>"),
            "{xml}"
        );
    }
}
