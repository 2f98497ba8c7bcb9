//! `--markdown FILE`: a summary that fits a CI job summary (`$GITHUB_STEP_SUMMARY`). First,
//! within [`MAX_LINES`] lines and [`MAX_BYTES`] bytes (a test holds it to that): the verdict
//! with the gate (`--fail-on`), memcert's and the catalog's versions, the counts per cause and
//! per case, and the table of causes ([`super::causes`], worst first, as many rows as fit).
//! Then, collapsed: every cause with its example, rule, fix hint and cases; the table per
//! category; the UNSAFE, ERROR and FAIL cases with their requirement and first finding;
//! expected failures; stale entries (`--expected-failures`); the baseline; NON-STRICT and INFO.
//!
//! # Guarantees
//! - Text from the run that a handler or an app wrote (the target's name, findings, replies,
//!   errors, paths it made, cause shapes) appears only inside code spans ([`span`]) or a fence
//!   longer than any backtick run in it, its hidden characters ([`super::escape`]) shown as
//!   `\u{..}` escapes: never as a link, an image, an autolink or markup.
//! - The whole file stays under [`MAX_TOTAL`] bytes (GitHub refuses a step summary over 1 MiB):
//!   long lists end with a line saying how many were left out.

use crate::certify::{CaseRecord, Summary};
use crate::suite::verdict::Verdict;

use super::causes::Cause;
use super::COLUMNS;

/// Lines before the first `<details>` at most.
pub const MAX_LINES: usize = 40;
/// Bytes before the first `<details>` at most.
pub const MAX_BYTES: usize = 4096;
/// Bytes of the whole report at most: under GitHub's 1 MiB limit for a job summary.
pub const MAX_TOTAL: usize = 1_000_000;
/// Bytes kept free for what follows a list cut short ([`Rows`]).
const RESERVE: usize = 16 * 1024;
/// Characters of one text from the run shown in a list or a cell; `--report-json` has all.
const MAX_CELL: usize = 300;

/// Rows appended to a report while it stays within [`MAX_TOTAL`] (less [`RESERVE`] for what
/// follows); once one does not fit, a line says how many were left out.
struct Rows<'a> {
    s: &'a mut String,
    left_out: usize,
}

impl<'a> Rows<'a> {
    fn new(s: &'a mut String) -> Self {
        Rows { s, left_out: 0 }
    }

    fn push(&mut self, row: &str) {
        if self.left_out > 0 || self.s.len() + row.len() + RESERVE > MAX_TOTAL {
            self.left_out += 1;
        } else {
            self.s.push_str(row);
        }
    }

    /// The line for the rows left out (if any), in a list or after a table.
    fn end(self, table: bool) {
        if self.left_out > 0 {
            self.s.push_str(&format!(
                "{}{} more left out: the summary is full (--report-json has them all)\n",
                if table { "\n" } else { "- " },
                self.left_out
            ));
        }
    }
}

/// Render a finished run as Markdown.
pub fn render(summary: &Summary, cases: &[CaseRecord]) -> String {
    let causes = super::causes::causes(cases);
    let mut s = head(summary, &causes, cases);
    s.push_str(&cause_details(&causes));
    s.push_str(&categories(cases));
    let worst: Vec<&CaseRecord> = [Verdict::Unsafe, Verdict::Error, Verdict::Fail]
        .iter()
        .flat_map(|v| {
            cases
                .iter()
                .filter(move |c| c.verdict == *v && c.expected_failure.is_none())
        })
        .collect();
    if !worst.is_empty() {
        s.push_str(&format!(
            "\n<details><summary>UNSAFE, ERROR and FAIL cases ({})</summary>\n\n\
| verdict | case | requirement | finding |\n|---|---|---|---|\n",
            worst.len()
        ));
        let mut rows = Rows::new(&mut s);
        for c in worst {
            let first = c.findings.first().map(|f| f.detail.as_str()).unwrap_or("");
            rows.push(&format!(
                "| {} | {} | {} | {} |\n",
                c.verdict,
                cell_span(&c.id),
                cell(&c.requirement),
                cell_span(&clip(first))
            ));
        }
        rows.end(true);
        s.push_str("\n</details>\n");
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
        let mut rows = Rows::new(&mut s);
        for c in excused {
            let why = c.expected_failure.as_deref().unwrap_or("");
            rows.push(&format!("- {} {}: {}\n", c.verdict, span(&c.id), cell(why)));
        }
        rows.end(false);
        s.push_str("\n</details>\n");
    }
    if let Some(v) = &summary.expected_catalog {
        s.push_str(&format!(
            "\n**Catalog:** {}\n",
            cell(&super::expected_other_catalog(
                "the expected-failures list",
                v
            ))
        ));
    }
    if !summary.stale.is_empty() {
        s.push_str(
            "\n**Stale expected failures** (their cases all pass now; remove the entries):\n\n",
        );
        let mut rows = Rows::new(&mut s);
        for id in &summary.stale {
            rows.push(&format!("- {}\n", span(id)));
        }
        rows.end(false);
    }
    if let Some(b) = &summary.baseline {
        baseline(&mut s, b, cases);
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
        let mut rows = Rows::new(&mut s);
        for c in soft {
            let first = c.findings.first().map(|f| f.detail.as_str()).unwrap_or("");
            rows.push(&format!(
                "- {} {}: {}\n",
                c.verdict,
                span(&c.id),
                span(&clip(first))
            ));
        }
        rows.end(false);
        s.push_str("\n</details>\n");
    }
    s
}

/// The part before the first `<details>`: the verdict line, the counts, and the causes table
/// with as many rows as fit in [`MAX_LINES`] and [`MAX_BYTES`].
fn head(summary: &Summary, causes: &[Cause], cases: &[CaseRecord]) -> String {
    let mut s = String::from("## memcert certify\n\n");
    let verdict = match (
        summary.certified,
        summary.baseline.as_ref().map(|b| b.passed()),
    ) {
        (true, Some(false)) => "**CERTIFIED**, but the baseline **FAILED** (the run fails)",
        (true, _) => "**CERTIFIED**",
        (false, _) => "**NOT CERTIFIED**",
    };
    let blocking = summary.blocking();
    let stale = if summary.stale.is_empty() {
        String::new()
    } else {
        format!(", {} stale expected-failure entries", summary.stale.len())
    };
    let why = if blocking.is_empty() && stale.is_empty() {
        String::new()
    } else {
        format!(": {}{stale}", blocking.join(", "))
    };
    if let Some(note) = summary.stop_note(cases) {
        s.push_str(&format!("**{}**\n\n", cell(&note)));
    }
    s.push_str(&format!(
        "{verdict} (fail on {}{why}): {}, profile `{}`{}, {} cases, {}\n\n",
        summary.gate_line(),
        span(&clip(&summary.target)),
        summary.profile,
        if summary.strict { " (strict)" } else { "" },
        summary.total,
        super::versions(),
    ));
    if let Some(line) = summary.timed_out_line(10) {
        s.push_str(&format!("{}\n\n", cell(&line)));
    }
    if let Some(c) = &summary.containment {
        s.push_str(&format!("Containment: {}\n\n", span(&c.line())));
    }
    let per_case: Vec<String> = COLUMNS
        .iter()
        .filter_map(|v| {
            let n = summary.counts.get(v.as_str()).copied().unwrap_or(0);
            (n > 0).then(|| format!("{n} {v}"))
        })
        .collect();
    s.push_str(&format!(
        "Causes: {}. Cases: {}.\n",
        super::causes::counts_line(causes),
        per_case.join(", ")
    ));
    if causes.is_empty() {
        return s;
    }
    s.push_str(
        "\n| verdict | cases | rule | cause | example | fix |\n|---|---:|---|---|---|---|\n",
    );
    // Room for the line that says how many causes are left for the details.
    let tail = 120;
    for (i, c) in causes.iter().enumerate() {
        let row = format!(
            "| {} | {} | {} | {}: {} | {} | {} |\n",
            c.verdict,
            c.count,
            cell_span(&super::causes::rules_label(c)),
            cell(&c.kind),
            cell_span(&super::causes::first_line(&c.shape, 90)),
            cell_span(&c.example.case),
            cell(&c.hint)
        );
        let lines = s.lines().count() + 1 + 2;
        if s.len() + row.len() + tail > MAX_BYTES || lines > MAX_LINES {
            s.push_str(&format!(
                "\n{} more causes ({}) in the details below.\n",
                causes.len() - i,
                super::causes::counts_line(&causes[i..])
            ));
            return s;
        }
        s.push_str(&row);
    }
    s
}

/// Every cause, collapsed: its verdict, kind, rule, shape, requirement, fix hint, example
/// (each step's input and reply, the disk changes) and its cases (50 at most).
fn cause_details(causes: &[Cause]) -> String {
    if causes.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\n<details><summary>Causes with an example each ({})</summary>\n\n",
        causes.len()
    );
    let mut rows = Rows::new(&mut s);
    for (i, c) in causes.iter().enumerate() {
        let mut item = format!(
            "{}. **{}** {} case{} {} {}: {}\n   - rule: {}\n   - fix: {}\n   - example {}:\n",
            i + 1,
            c.verdict,
            c.count,
            if c.count == 1 { "" } else { "s" },
            span(&c.kind),
            span(&c.spec),
            span(&clip(&c.shape)),
            cell(&c.requirement),
            cell(&c.hint),
            span(&c.example.case)
        );
        for st in &c.example.steps {
            item.push_str(&format!(
                "     - input {} → {}\n",
                span(&super::causes::first_line(&st.input.to_string(), 200)),
                span(&super::causes::reply_line(st, 200))
            ));
        }
        for d in &c.example.disk {
            item.push_str(&format!("     - disk: {}\n", span(&clip(d))));
        }
        let ids: Vec<String> = c.ids.iter().take(50).map(|i| span(i)).collect();
        let more = c.ids.len().saturating_sub(50);
        item.push_str(&format!(
            "   - cases: {}{}\n",
            ids.join(", "),
            if more > 0 {
                format!(" and {more} more (--report-json lists them)")
            } else {
                String::new()
            }
        ));
        rows.push(&item);
    }
    rows.end(false);
    s.push_str("\n</details>\n");
    s
}

/// The table of verdicts per category, collapsed.
fn categories(cases: &[CaseRecord]) -> String {
    let mut s = String::from("\n<details><summary>Cases per category</summary>\n\n| category |");
    for v in COLUMNS {
        s.push_str(&format!(" {v} |"));
    }
    s.push_str("\n|---|");
    s.push_str(&"---:|".repeat(COLUMNS.len()));
    s.push('\n');
    let mut rows = Rows::new(&mut s);
    for (cat, counts) in &super::by_category(cases) {
        let mut row = format!("| {} |", cell(cat));
        for v in COLUMNS {
            row.push_str(&format!(" {} |", counts.get(&v).copied().unwrap_or(0)));
        }
        row.push('\n');
        rows.push(&row);
    }
    rows.end(true);
    s.push_str("\n</details>\n");
    s
}

/// Text from the run as one inline code span, outside a table: its hidden characters (the
/// newline included) as `\u{..}` escapes ([`super::escape::terminal`]), between backtick runs
/// longer than any inside it, padded with a space where it starts or ends with a backtick or a
/// space (which the span then drops). Inside code nothing is a link, an image or markup.
fn span(text: &str) -> String {
    let text = super::escape::terminal(text);
    if text.is_empty() {
        return "` `".into();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let ticks = "`".repeat(longest + 1);
    let pad = if text.starts_with(['`', ' ']) || text.ends_with(['`', ' ']) {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// [`span`] inside a table cell: a `|` escaped as `\|`, which GitHub reads as a `|` of the
/// span, not a cell's end.
fn cell_span(text: &str) -> String {
    span(text).replace('|', "\\|")
}

/// The first [`MAX_CELL`] characters of a text from the run, and `…` when there was more.
fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_CELL) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The comparison with the baseline, appended to `s`: the totals, each REGRESSION with its diff
/// in a `diff` block, the NEW cases and the STALE snapshots.
fn baseline(s: &mut String, b: &crate::baseline::BaselineSummary, cases: &[CaseRecord]) {
    use crate::baseline::Comparison;
    let verdict = if b.passed() { "PASSED" } else { "FAILED" };
    s.push_str(&format!(
        "\n### Baseline: **{verdict}**\n\n`{}`: {}\n",
        cell(&b.dir),
        b.totals()
    ));
    // A job summary holds 1 MiB: diffs stop at 100 lines each and 400 KB in all.
    let mut budget = 400_000usize.min(MAX_TOTAL.saturating_sub(s.len() + 4 * RESERVE));
    for c in cases {
        if let Some(Comparison::Regression { diff, .. }) = &c.baseline {
            let diff = &super::escape::terminal_lines(&crate::report::clip_diff(diff, 100));
            if diff.len() > budget {
                s.push_str(&format!(
                    "\n**REGRESSION** {} (diff left out: the summary is full; see --report-json)\n",
                    span(&c.id)
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
                "\n**REGRESSION** {}\n\n{fence}diff\n{}{}{fence}\n",
                span(&c.id),
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
        let mut rows = Rows::new(s);
        for id in &b.new {
            rows.push(&format!("- {}\n", span(id)));
        }
        rows.end(false);
        s.push_str("\n</details>\n");
    }
    if !b.stale.is_empty() {
        s.push_str("\n**STALE snapshots** (their cases no longer exist; remove the files):\n\n");
        let mut rows = Rows::new(s);
        for id in &b.stale {
            rows.push(&format!("- {}\n", span(id)));
        }
        rows.end(false);
    }
    if let Some(note) = super::baseline_other_catalog(
        "the baseline was recorded with",
        &b.other_catalogs,
        b.snapshots,
    ) {
        s.push_str(&format!("\n**Catalog:** {}\n", cell(&note)));
    }
}

/// memcert's own text (requirements, fix hints, reasons from an expected-failures list) in a
/// table cell or a list item: no newlines, no pipes, no HTML, hidden characters as escapes.
/// Text a handler or an app wrote goes through [`span`] instead.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '`' => out.push('\''),
            '\n' | '\t' | '\r' => out.push(' '),
            c if super::escape::hidden(c) => out.push_str(&super::escape::shown(c)),
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
    fn markdown_layout_causes_first() {
        let (summary, cases) = sample();
        assert_eq!(
            render(&summary, &cases).replace(&crate::report::versions(), "VERSIONS"),
            concat!(
                "## memcert certify\n",
                "\n",
                "**NOT CERTIFIED** (fail on UNSAFE, ERROR, FAIL: 1 UNSAFE): `t`, profile `python-sdk`, 3 cases, VERSIONS\n",
                "\n",
                "Causes: 1 UNSAFE, 1 NON-STRICT. Cases: 1 PASS, 1 NON-STRICT, 1 UNSAFE.\n",
                "\n",
                "| verdict | cases | rule | cause | example | fix |\n",
                "|---|---:|---|---|---|---|\n",
                "| UNSAFE | 1 | `bug:B01` | reply: `the reply discloses the host path <path>` | `symlink/loop/view` | give the outcome the rule asks: is_error, and the change made or refused |\n",
                "| NON-STRICT | 1 | `bug:B01` | reply: `accepted a . component` | `path/dot/inside` | allowed; the profile's exact wording or choice makes it PASS |\n",
                "\n",
                "<details><summary>Causes with an example each (2)</summary>\n",
                "\n",
                "1. **UNSAFE** 1 case `reply` `bug:B01`: `the reply discloses the host path <path>`\n",
                "   - rule: R MUST hold.\n",
                "   - fix: give the outcome the rule asks: is_error, and the change made or refused\n",
                "   - example `symlink/loop/view`:\n",
                "   - cases: `symlink/loop/view`\n",
                "2. **NON-STRICT** 1 case `reply` `bug:B01`: `accepted a . component`\n",
                "   - rule: R MUST hold.\n",
                "   - fix: allowed; the profile's exact wording or choice makes it PASS\n",
                "   - example `path/dot/inside`:\n",
                "   - cases: `path/dot/inside`\n",
                "\n",
                "</details>\n",
                "\n",
                "<details><summary>Cases per category</summary>\n",
                "\n",
                "| category | PASS | NON-STRICT | INFO | FAIL | UNSAFE | ERROR | SKIPPED |\n",
                "|---|---:|---:|---:|---:|---:|---:|---:|\n",
                "| path | 0 | 1 | 0 | 0 | 0 | 0 | 0 |\n",
                "| symlink | 0 | 0 | 0 | 0 | 1 | 0 | 0 |\n",
                "| view | 1 | 0 | 0 | 0 | 0 | 0 | 0 |\n",
                "\n",
                "</details>\n",
                "\n",
                "<details><summary>UNSAFE, ERROR and FAIL cases (1)</summary>\n",
                "\n",
                "| verdict | case | requirement | finding |\n",
                "|---|---|---|---|\n",
                "| UNSAFE | `symlink/loop/view` | R MUST hold. | `step 1: the reply discloses the host path /tmp/x\\|y` |\n",
                "\n",
                "</details>\n",
                "\n",
                "<details><summary>NON-STRICT and INFO (1)</summary>\n",
                "\n",
                "- NON-STRICT `path/dot/inside`: `step 1: accepted a . component`\n",
                "\n",
                "</details>\n",
            )
        );
    }

    #[test]
    fn junit_leads_with_causes_then_names_cases_by_id_and_fails_unsafe_ones() {
        let (summary, cases) = sample();
        let want = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="memcert certify (python-sdk)" tests="5" skipped="0" failures="2" errors="0">
    <testsuite name="causes" tests="2" skipped="0" errors="0" failures="1">
        <properties>
            <property name="fail-on" value="UNSAFE, ERROR, FAIL"/>
            <property name="memcert" value="MEMCERT"/>
            <property name="catalog" value="CATALOG"/>
        </properties>
        <testcase name="reply bug:B01: the reply discloses the host path &lt;path&gt;" classname="memcert.causes">
            <failure message="UNSAFE in 1 case: the reply discloses the host path &lt;path&gt;" type="UNSAFE">rule bug:B01: R MUST hold.
fix: give the outcome the rule asks: is_error, and the change made or refused
example symlink/loop/view: step 1: the reply discloses the host path /tmp/x|y
cases: symlink/loop/view
</failure>
        </testcase>
        <testcase name="reply bug:B01: accepted a . component" classname="memcert.causes">
            <system-out>NON-STRICT in 1 case: accepted a . component
rule bug:B01: R MUST hold.
fix: allowed; the profile&apos;s exact wording or choice makes it PASS
example path/dot/inside: step 1: accepted a . component
cases: path/dot/inside
</system-out>
        </testcase>
    </testsuite>
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
        let got = crate::report::junit::render(&summary, &cases)
            .replace(
                &format!("value=\"{}\"", env!("CARGO_PKG_VERSION")),
                "value=\"MEMCERT\"",
            )
            .replace(
                &format!("value=\"{}\"", crate::suite::CATALOG_VERSION),
                "value=\"CATALOG\"",
            );
        assert_eq!(got, want);
    }

    #[test]
    fn handler_text_is_one_code_span_longer_than_its_backtick_runs() {
        assert_eq!(span("a"), "`a`");
        assert_eq!(span("a `b` ``c``"), "``` a `b` ``c`` ```");
        assert_eq!(span("`x"), "`` `x ``");
        assert_eq!(span(""), "` `");
        assert_eq!(
            span("[l](https://e.x)\n# h\u{202e}"),
            "`[l](https://e.x)\\n# h\\u{202e}`"
        );
        assert_eq!(cell_span("a|b"), "`a\\|b`");
    }

    // See: issue 13 (the Markdown report "stays under GitHub's 1 MiB step-summary limit").
    #[test]
    fn a_huge_run_stays_under_the_job_summary_limit() {
        // Unbounded, the list of FAIL cases alone would be about 2.4 MB.
        let long = "x".repeat(400);
        let cases: Vec<CaseRecord> = (0..6_000)
            .map(|i| CaseRecord {
                findings: vec![Finding {
                    verdict: Verdict::Fail,
                    kind: "reply".into(),
                    detail: format!("step 1: {i} {long}"),
                }],
                ..crate::report::test_record(&format!("c{}/case-{i}", i % 300), Verdict::Fail)
            })
            .collect();
        let summary = Summary::of(
            "t".into(),
            &Default::default(),
            cases.iter().map(|c| (c.id.as_str(), c.verdict)),
        );
        let md = render(&summary, &cases);
        assert!(md.len() <= MAX_TOTAL, "{}", md.len());
        assert!(md.contains("more left out: the summary is full"));
        assert!(md.ends_with("</details>\n"), "{}", &md[md.len() - 300..]);
    }

    #[test]
    fn markdown_baseline_section() {
        let (summary, cases) = crate::report::baseline_sample();
        let text = render(&summary, &cases);
        let want = "\n### Baseline: **FAILED**\n\n`base`: 1 unchanged, 1 REGRESSION, 1 NEW, 1 STALE \
(0 not compared: race, huge file or SKIPPED; 2 snapshots of cases not run)\n\n**REGRESSION** `str_replace/success`\n\n```diff\n--- baseline\n+++ actual\n\
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
