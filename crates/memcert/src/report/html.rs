//! `--html FILE`: one self-contained page a person opens offline: the verdict and totals (with
//! the gate, memcert's and the catalog's versions), the causes ([`super::causes`], worst first:
//! verdict, cases, rule linked to its text, shape, example and fix hint, each linking to its
//! cases), the table per category, filters by verdict, then every case (UNSAFE, ERROR and FAIL first, open;
//! NON-STRICT, INFO, SKIPPED, then PASS, closed) with its requirement, sources and findings and,
//! per step, its label ([`crate::certify::CaseRecord::step_label`]: the worst of its reply's grade
//! and the findings that name it, with the reply's grade beside it when a finding is worse), the
//! input, the expected text, the reply or the error, and a line diff.
//!
//! # Guarantees
//! - Every string from the run (replies, inputs, errors, case texts, the target description) is
//!   HTML-escaped (`& < > " '`), in text and in attributes; control characters but the newline,
//!   and the invisible Unicode format characters that reorder or hide text (bidi overrides,
//!   zero-width), are shown as `\u{..}` escapes, so a reply cannot forge or hide report lines.
//! - No data goes into the script: it reads the `data-verdict` attributes of the cases.
//! - No external resource: inline CSS and script only, and a Content-Security-Policy that allows
//!   exactly those two (by hash) and nothing else, so even a tag that slipped through escaping
//!   could neither run nor load anything.
//! - With scripts off every case is shown (the filter controls, which need the script, stay
//!   hidden).
//!
//! # Non-guarantees
//! - Not the full record: texts are cut at 4,000 characters, a case shows at most 10 steps and
//!   20 findings, and diffs are made for short texts only; `--report-json` has everything.

use std::collections::BTreeSet;
use std::fmt::{self, Write as _};

use crate::certify::{CaseRecord, StepLabel, StepRecord, Summary};
use crate::protocol::Content;
use crate::suite::verdict::Verdict;
use crate::suite::{spec, Level};

use super::COLUMNS;

/// The order cases are listed in: the verdicts that block certification first, as in the
/// terminal and Markdown reports, then the others, PASS last.
const ORDER: [Verdict; 7] = [
    Verdict::Unsafe,
    Verdict::Error,
    Verdict::Fail,
    Verdict::NonStrict,
    Verdict::Info,
    Verdict::Skipped,
    Verdict::Pass,
];

/// Characters of one text shown (input, expected, reply, error); the rest is counted.
const MAX_CHARS: usize = 4000;
/// Steps shown per case (long cases, the races, show those with a verdict or finding of their own).
const MAX_STEPS: usize = 10;
/// Findings shown per case.
const MAX_FINDINGS: usize = 20;
/// Characters of the first finding shown on a case's summary line.
const MAX_SUMMARY_CHARS: usize = 300;

/// The page's style sheet; the Content-Security-Policy allows it by [`STYLE_SHA256`].
const STYLE: &str = "\
body{font:14px/1.45 system-ui,sans-serif;color:#1f2328;max-width:75em;margin:1em auto;padding:0 1em}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.5em}\
table{border-collapse:collapse}th,td{border:1px solid #d0d7de;padding:.15em .6em}td{text-align:right}\
th{text-align:left}.meta td{text-align:left}tr.total{font-weight:bold}\
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;margin:.15em 0;padding:.3em .5em;\
font:12px/1.4 ui-monospace,monospace}\
code{font:12px ui-monospace,monospace}\
.v{display:inline-block;min-width:7.5em;font:bold 12px ui-monospace,monospace}\
.pass{color:#1a7f37}.nonstrict,.info,.skipped{color:#9a6700}.fail,.error{color:#cf222e}\
.unsafe{color:#fff;background:#cf222e;padding:0 .3em}\
.certified{color:#1a7f37}.not-certified{color:#cf222e}\
details.case{border-top:1px solid #d0d7de;padding:.25em 0}details.case>div{margin:.3em 0 .6em 1.5em}\
summary{cursor:pointer}.why{color:#59636e}\
dl{display:grid;grid-template-columns:max-content 1fr;gap:0 .8em;margin:.3em 0}dt{font-weight:bold}dd{margin:0;min-width:0}\
.step{border-left:3px solid #d0d7de;padding-left:.6em;margin:.5em 0}\
.c{color:#cf222e}del{background:#ffebe9;text-decoration:none}ins{background:#dafbe1;text-decoration:none}\
#filter{border:0;padding:0;margin:1em 0}#filter label{margin-right:1em}";

/// The filter script: shows or hides the elements with a `data-verdict` whose checkbox is ticked.
/// It reads only the page's own controls and attributes. The Content-Security-Policy allows it
/// by [`SCRIPT_SHA256`].
const SCRIPT: &str = "\
var f=document.getElementById('filter');f.hidden=false;\
f.addEventListener('change',function(){var off={};\
f.querySelectorAll('input').forEach(function(i){off[i.value]=!i.checked;});\
document.querySelectorAll('[data-verdict]').forEach(function(e){e.hidden=!!off[e.dataset.verdict];});});";

/// `base64(sha256(STYLE))`, checked by the `--html` test in `tests/certify/main.rs`.
const STYLE_SHA256: &str = "sWqEsQjajIPD2fKCMu6inOdUUSI92dNPDE69Hmg8YLU=";
/// `base64(sha256(SCRIPT))`, checked by the `--html` test in `tests/certify/main.rs`.
const SCRIPT_SHA256: &str = "i25jP+U1mU9wSTc1PgytgUaQsrI0BHHa6Gf9HxKBWvM=";

/// Render a finished run as one HTML document.
pub fn render(summary: &Summary, cases: &[CaseRecord]) -> String {
    render_with(summary, cases, None)
}

/// [`render`], with each cited rule also linked to a hosted copy of the spec pages at
/// `spec_url` (`{spec_url}/{page}?plain=1#L{line}`: a repository's blob URL at a tag, where
/// `?plain=1` makes a Markdown page show its lines so the `#L` anchor lands); without it the
/// report links nothing outside itself. The caller checks the URL is http(s).
pub fn render_with(summary: &Summary, cases: &[CaseRecord], spec_url: Option<&str>) -> String {
    let mut h = String::with_capacity(16 * 1024 + cases.len() * 2048);
    let (word, class) = match summary.completion {
        crate::certify::Completion::Complete if summary.certified => ("CERTIFIED", "certified"),
        crate::certify::Completion::Complete => ("NOT CERTIFIED", "not-certified"),
        c => (c.as_str(), "not-certified"),
    };
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
style-src 'sha256-{STYLE_SHA256}'; script-src 'sha256-{SCRIPT_SHA256}'; \
base-uri 'none'; form-action 'none'\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<title>memcert certify: {word}: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
<h1>memcert certify: <span class=\"{class}\">{word}</span></h1>\n",
        // A <title> shows markup as text: escaped without the marking span.
        Attr(&summary.target)
    );
    let _ = write!(
        h,
        "<table class=\"meta\">\n<tr><th>target</th><td>{}</td></tr>\n\
<tr><th>profile</th><td>{}</td></tr>\n<tr><th>strict</th><td>{}</td></tr>\n\
<tr><th>cases</th><td>{}</td></tr>\n<tr><th>fail on</th><td>{}</td></tr>\n\
<tr><th>memcert</th><td>{}</td></tr>\n<tr><th>catalog</th><td>{}</td></tr>\n{}</table>\n",
        Text(&summary.target),
        Text(summary.profile.as_str()),
        if summary.strict { "yes" } else { "no" },
        totals(summary),
        Text(&summary.gate_line()),
        env!("CARGO_PKG_VERSION"),
        crate::suite::CATALOG_VERSION,
        summary
            .containment
            .as_ref()
            .map_or(String::new(), |c| format!(
                "<tr><th>containment</th><td>{}</td></tr>\n",
                Text(&c.line())
            )),
    );
    if let Some(note) = summary.stop_note(cases) {
        let _ = writeln!(
            h,
            "<p class=\"not-certified\"><strong>{}</strong></p>",
            Text(&note)
        );
    }
    causes(&mut h, &super::causes::causes(cases));
    if summary.expected_failures > 0 {
        let _ = writeln!(
            h,
            "<p>{} expected failures (<code>--expected-failures</code>) do not count against \
the verdict; each case shows its reason.</p>",
            summary.expected_failures
        );
    }
    if let Some(v) = &summary.expected_catalog {
        let _ = writeln!(
            h,
            "<p>{}</p>",
            Text(&super::expected_other_catalog(
                "the expected-failures list",
                v
            ))
        );
    }
    if !summary.stale.is_empty() {
        h.push_str(
            "<p class=\"not-certified\">Stale expected failures: these entries' cases all pass now; \
remove them:</p>\n<ul>\n",
        );
        for id in &summary.stale {
            let _ = writeln!(h, "<li><code>{}</code></li>", Text(id));
        }
        h.push_str("</ul>\n");
    }
    if let Some(b) = &summary.baseline {
        baseline(&mut h, b);
    }
    table(&mut h, cases);
    h.push_str("<h2>Cases</h2>\n<fieldset id=\"filter\" hidden>show:");
    for v in ORDER {
        let n = cases.iter().filter(|c| c.verdict == v).count();
        if n > 0 {
            let _ = write!(
                h,
                " <label><input type=\"checkbox\" value=\"{}\" checked> {} ({n})</label>",
                Attr(v.as_str()),
                Text(v.as_str())
            );
        }
    }
    h.push_str("</fieldset>\n");
    for c in ordered(cases) {
        case(&mut h, c);
    }
    cited(&mut h, cases, spec_url);
    let _ = write!(h, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    h
}

/// Case links listed per cause; the JSON report has them all.
const CAUSE_LINKS: usize = 100;

/// "Causes": one row per cause (verdict, cases, rule, kind and shape, example, fix), then per
/// cause a closed list of links to its cases.
fn causes(h: &mut String, causes: &[super::causes::Cause]) {
    if causes.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<h2>Causes</h2>\n<p>{} causes: {}.</p>\n<table class=\"summary\">\n\
<tr><th>#</th><th>verdict</th><th>cases</th><th>rule</th><th>cause</th><th>example</th><th>fix</th></tr>",
        causes.len(),
        Text(&super::causes::counts_line(causes))
    );
    for (i, c) in causes.iter().enumerate() {
        let _ = writeln!(
            h,
            "<tr><td><a href=\"#cause-{n}\">{n}</a></td><td>{}</td><td>{}</td><td>{}</td>\
<td><code>{}</code> {}</td><td><a href=\"#case-{}\"><code>{}</code></a></td><td>{}</td></tr>",
            badge(c.verdict),
            c.count,
            sources(std::slice::from_ref(&c.spec)),
            Text(&c.kind),
            Text(&c.shape),
            Attr(&c.example.case),
            Text(&c.example.case),
            Text(&c.hint),
            n = i + 1,
        );
    }
    h.push_str("</table>\n");
    for (i, c) in causes.iter().enumerate() {
        let _ = write!(
            h,
            "<details id=\"cause-{}\"><summary>{} {} {}: {} ({} cases)</summary>\n\
<p class=\"why\">{}</p>\n<ul>",
            i + 1,
            i + 1,
            badge(c.verdict),
            Text(&c.kind),
            Text(&c.shape),
            c.count,
            Text(&c.requirement),
        );
        for id in c.ids.iter().take(CAUSE_LINKS) {
            let _ = write!(
                h,
                "<li><a href=\"#case-{}\">{}</a></li>",
                Attr(id),
                Text(id)
            );
        }
        if c.ids.len() > CAUSE_LINKS {
            let _ = write!(
                h,
                "<li>... and {} more (--report-json lists them)</li>",
                c.ids.len() - CAUSE_LINKS
            );
        }
        h.push_str("</ul></details>\n");
    }
}

/// The HTML id of a cited item's block (`spec:2.1/D3` → `cite-spec-2-1-D3`).
fn cite_anchor(id: &str) -> String {
    let slug: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("cite-{slug}")
}

/// A case's sources, each known id linked to its text under "Rules cited".
fn sources(ids: &[String]) -> String {
    ids.iter()
        .map(|id| match spec::lookup(id) {
            Some(_) => format!("<a href=\"#{}\">{}</a>", cite_anchor(id), Text(id)),
            None => Text(id).to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "Rules cited": the text of every spec item the report's cases cite, once each, in id order,
/// compiled into memcert, so the report explains itself offline.
fn cited(h: &mut String, cases: &[CaseRecord], spec_url: Option<&str>) {
    let ids: BTreeSet<&str> = cases
        .iter()
        .flat_map(|c| c.source.iter().map(String::as_str))
        .collect();
    let items: Vec<_> = ids.into_iter().filter_map(spec::lookup).collect();
    if items.is_empty() {
        return;
    }
    h.push_str("<h2>Rules cited</h2>\n");
    for item in items {
        let _ = write!(
            h,
            "<section id=\"{}\"><h3>{}</h3><p class=\"why\">{}:{}",
            cite_anchor(&item.id),
            Text(&item.id),
            Text(item.page),
            item.line
        );
        if let Some(url) = spec_url {
            let _ = write!(
                h,
                " (<a href=\"{}/{}?plain=1#L{}\">hosted copy</a>)",
                Attr(url.trim_end_matches('/')),
                Attr(item.page),
                item.line
            );
        }
        let _ = writeln!(h, "</p>\n<pre>{}</pre></section>", Text(&item.text));
    }
}

/// The comparison with the baseline: the totals and the REGRESSION, NEW and STALE ids (each
/// REGRESSION case shows its diff, open, among the cases).
fn baseline(h: &mut String, b: &crate::baseline::BaselineSummary) {
    let (word, class) = if b.passed() {
        ("PASSED", "certified")
    } else {
        ("FAILED", "not-certified")
    };
    let _ = writeln!(
        h,
        "<h2>Baseline: <span class=\"{class}\">{word}</span></h2>\n<p><code>{}</code>: {}</p>",
        Text(&b.dir),
        Text(&b.totals())
    );
    if let Some(note) = super::baseline_other_catalog(
        "the baseline was recorded with",
        &b.other_catalogs,
        b.snapshots,
    ) {
        let _ = writeln!(h, "<p>{}</p>", Text(&note));
    }
    for (what, ids) in [
        ("REGRESSION (the answers changed)", &b.regressions),
        ("NEW (no snapshot yet; not a failure)", &b.new),
        (
            "STALE (snapshots of cases that no longer exist; remove the files)",
            &b.stale,
        ),
    ] {
        if ids.is_empty() {
            continue;
        }
        let _ = writeln!(h, "<p>{}:</p>\n<ul>", Text(what));
        for id in ids {
            let _ = writeln!(h, "<li><code>{}</code></li>", Text(id));
        }
        h.push_str("</ul>\n");
    }
}

/// `201: 157 PASS, 28 NON-STRICT, ...`: the total, then each verdict that occurs.
fn totals(summary: &Summary) -> String {
    let parts: Vec<String> = COLUMNS
        .iter()
        .filter_map(|v| {
            let n = summary.counts.get(v.as_str()).copied().unwrap_or(0);
            (n > 0).then(|| format!("{n} {v}"))
        })
        .collect();
    format!("{}: {}", summary.total, parts.join(", "))
}

/// The table of verdicts per category, with a total row.
fn table(h: &mut String, cases: &[CaseRecord]) {
    h.push_str("<table class=\"summary\">\n<tr><th>category</th>");
    for v in COLUMNS {
        let _ = write!(h, "<th>{}</th>", Text(v.as_str()));
    }
    h.push_str("</tr>\n");
    let mut totals = [0usize; COLUMNS.len()];
    for (cat, counts) in super::by_category(cases) {
        let _ = write!(h, "<tr><th>{}</th>", Text(cat));
        for (i, v) in COLUMNS.iter().enumerate() {
            let n = counts.get(v).copied().unwrap_or(0);
            totals[i] += n;
            let _ = write!(h, "<td>{n}</td>");
        }
        h.push_str("</tr>\n");
    }
    h.push_str("<tr class=\"total\"><th>total</th>");
    for n in totals {
        let _ = write!(h, "<td>{n}</td>");
    }
    h.push_str("</tr>\n</table>\n");
}

/// The cases in report order ([`ORDER`]), run order within a verdict.
fn ordered(cases: &[CaseRecord]) -> Vec<&CaseRecord> {
    ORDER
        .iter()
        .flat_map(|v| cases.iter().filter(move |c| c.verdict == *v))
        .collect()
}

/// The CSS class of a verdict.
fn class(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::NonStrict => "nonstrict",
        Verdict::Info => "info",
        Verdict::Fail => "fail",
        Verdict::Unsafe => "unsafe",
        Verdict::Error => "error",
        Verdict::Skipped => "skipped",
    }
}

fn badge(v: Verdict) -> String {
    format!("<span class=\"v {}\">{}</span>", class(v), Text(v.as_str()))
}

fn case(h: &mut String, c: &CaseRecord) {
    let regression = match &c.baseline {
        Some(crate::baseline::Comparison::Regression { diff, .. }) => Some(diff.as_str()),
        _ => None,
    };
    let open = if (c.verdict.blocks_certification() && c.expected_failure.is_none())
        || regression.is_some()
    {
        " open"
    } else {
        ""
    };
    let why = c.findings.first().map(|f| f.detail.as_str()).unwrap_or("");
    let _ = write!(
        h,
        "<details class=\"case\" id=\"case-{}\" data-verdict=\"{}\"{open}>\
<summary>{} <code>{}</code>",
        Attr(&c.id),
        Attr(c.verdict.as_str()),
        badge(c.verdict),
        Text(&c.id),
    );
    match &c.baseline {
        Some(crate::baseline::Comparison::Regression { .. }) => {
            h.push_str(" <span class=\"v fail\">REGRESSION</span>")
        }
        Some(crate::baseline::Comparison::New) => h.push_str(" <span class=\"v info\">NEW</span>"),
        _ => {}
    }
    if let Some(reason) = &c.expected_failure {
        let _ = write!(
            h,
            " <span class=\"why\">(expected failure: {})</span>",
            Text(&clip(reason, MAX_SUMMARY_CHARS))
        );
    }
    if !why.is_empty() {
        let _ = write!(
            h,
            " <span class=\"why\">{}</span>",
            Text(&clip(why, MAX_SUMMARY_CHARS))
        );
    }
    h.push_str("</summary>\n<div>\n");
    let level = match c.level {
        Level::Must => "MUST",
        Level::Should => "SHOULD",
    };
    let defined = if c.defined.is_empty() {
        String::new()
    } else {
        format!("<dt>defined</dt><dd><code>{}</code></dd>", Text(&c.defined))
    };
    let _ = writeln!(
        h,
        "<dl><dt>requirement</dt><dd>{}</dd><dt>level</dt><dd>{level}</dd>\
<dt>source</dt><dd>{}</dd>{defined}<dt>time</dt><dd>{} ms</dd></dl>",
        Text(&c.requirement),
        sources(&c.source),
        c.duration_ms
    );
    if let Some(diff) = regression {
        h.push_str(
            "<p>The answers differ from the baseline snapshot (-baseline +actual):</p>\n<pre>",
        );
        for line in clip(diff, 4 * MAX_CHARS).lines() {
            let _ = match line.as_bytes().first() {
                Some(b'-') if !line.starts_with("---") => writeln!(h, "<del>{}</del>", Text(line)),
                Some(b'+') if !line.starts_with("+++") => writeln!(h, "<ins>{}</ins>", Text(line)),
                _ => writeln!(h, "{}", Text(line)),
            };
        }
        h.push_str("</pre>\n");
    }
    if !c.findings.is_empty() {
        h.push_str("<ul class=\"findings\">\n");
        for f in c.findings.iter().take(MAX_FINDINGS) {
            let _ = writeln!(
                h,
                "<li>{} [{}] {}</li>",
                badge(f.verdict),
                Text(&f.kind),
                Text(&clip(&f.detail, MAX_CHARS))
            );
        }
        if c.findings.len() > MAX_FINDINGS {
            let _ = writeln!(
                h,
                "<li>... and {} more findings (all in --report-json)</li>",
                c.findings.len() - MAX_FINDINGS
            );
        }
        h.push_str("</ul>\n");
    }
    // Long cases (races) show the steps that matter: those with a grade or a finding of their
    // own, the terminal report's rule with more room.
    let shown: Vec<usize> = (0..c.steps.len())
        .filter(|&i| c.steps.len() <= MAX_STEPS || c.step_matters(i))
        .take(MAX_STEPS)
        .collect();
    if shown.len() < c.steps.len() {
        let _ = writeln!(
            h,
            "<p>{} of {} steps shown: those with a verdict or finding of their own \
(all in --report-json).</p>",
            shown.len(),
            c.steps.len()
        );
    }
    for i in shown {
        step(h, i, &c.steps[i], &c.step_label(i));
    }
    h.push_str("</div>\n</details>\n");
}

/// One step, labelled with the worst of its reply's grade and the findings that name it; when a
/// finding is the worse, the reply's grade is shown beside it.
fn step(h: &mut String, i: usize, s: &StepRecord, label: &StepLabel) {
    let note = label
        .note()
        .map(|n| format!(" <span class=\"why\">({})</span>", Text(&n)))
        .unwrap_or_default();
    let _ = write!(
        h,
        "<div class=\"step\">step {} {}{note}\n<dl><dt>input</dt><dd>{}</dd>\n\
<dt>expected</dt><dd>{}</dd>\n",
        i + 1,
        badge(label.verdict),
        Pre(&s.input.to_string()),
        Pre(&s.expected),
    );
    match (&s.reply, &s.error) {
        (Some(r), _) => {
            let actual = actual_text(r);
            let null = if matches!(r.content, Content::Null) {
                " (content: null)"
            } else {
                ""
            };
            let _ = writeln!(h, "<dt>reply{null}</dt><dd>{}</dd></dl>", Pre(&actual));
            if s.verdict != Verdict::Pass && actual != s.expected {
                h.push_str("<details><summary>diff (-expected +actual)</summary>");
                match diff(&s.expected, &actual) {
                    Some(d) => {
                        let _ = write!(h, "<pre class=\"diff\">{d}</pre>");
                    }
                    None => h.push_str("<p>too long for a diff</p>"),
                }
                h.push_str("</details>\n");
            }
        }
        (None, Some(e)) => {
            let _ = writeln!(h, "<dt>no reply</dt><dd>{}</dd></dl>", Pre(e));
        }
        (None, None) => h.push_str("</dl>\n"),
    }
    h.push_str("</div>\n");
}

/// A reply as the expected text spells it: `is_error: true` on a line of its own, then the text.
fn actual_text(r: &crate::protocol::ToolResult) -> String {
    let flag = if r.is_error { "is_error: true\n" } else { "" };
    format!("{flag}{}", r.text())
}

/// A line diff of `expected` (`<del>-`) against `actual` (`<ins>+`), equal lines after a space,
/// one line of the diff per line of the page; a changed line without a final newline is followed
/// by `\ No newline at end of file`. `None` when either text is too long to diff (a handler may
/// answer with a million lines); the diff itself also stops after 200 ms.
fn diff(expected: &str, actual: &str) -> Option<String> {
    let small = |t: &str| t.len() <= 20_000 && t.lines().count() <= 400;
    if !small(expected) || !small(actual) {
        return None;
    }
    let d = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(200))
        .diff_lines(expected, actual);
    let mut out = String::new();
    for change in d.iter_all_changes() {
        let line = change.value();
        let text = Text(line.strip_suffix('\n').unwrap_or(line));
        let _ = match change.tag() {
            similar::ChangeTag::Equal => writeln!(out, " {text}"),
            similar::ChangeTag::Delete => writeln!(out, "<del>-{text}</del>"),
            similar::ChangeTag::Insert => writeln!(out, "<ins>+{text}</ins>"),
        };
        if change.tag() != similar::ChangeTag::Equal && !line.ends_with('\n') {
            out.push_str("\\ No newline at end of file\n");
        }
    }
    Some(out)
}

/// The first `max` characters of `text`, and how many there were in all when it is longer.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!(
            "{}... ({} characters in all; --report-json has them)",
            &text[..cut],
            text.chars().count()
        ),
    }
}

/// A text from the run in a `<pre>`, escaped ([`Text`]) and cut at [`MAX_CHARS`] characters. A
/// newline right after `<pre>` is dropped by HTML parsers, so a text starting with one gets
/// another.
struct Pre<'a>(&'a str);

impl fmt::Display for Pre<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lead = if self.0.starts_with('\n') { "\n" } else { "" };
        write!(f, "<pre>{lead}{}</pre>", Text(&clip(self.0, MAX_CHARS)))
    }
}

/// Text from the run in element content: the five HTML-special characters as character
/// references; control characters but the newline, and invisible format characters, as a
/// `\u{..}` escape (`\t`, `\r` for those two) marked by a `<span class="c">`.
struct Text<'a>(&'a str);

/// Text from the run in a quoted attribute value: escaped as [`Text`], without the marking span.
struct Attr<'a>(&'a str);

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        escape(f, self.0, true)
    }
}

impl fmt::Display for Attr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        escape(f, self.0, false)
    }
}

fn escape(f: &mut fmt::Formatter<'_>, text: &str, mark: bool) -> fmt::Result {
    let mut plain = 0;
    for (i, c) in text.char_indices() {
        let reference = match c {
            '&' => Some("&amp;"),
            '<' => Some("&lt;"),
            '>' => Some("&gt;"),
            '"' => Some("&quot;"),
            '\'' => Some("&#39;"),
            '\n' => continue,
            c if super::escape::hidden(c) => None,
            _ => continue,
        };
        f.write_str(&text[plain..i])?;
        plain = i + c.len_utf8();
        match reference {
            Some(r) => f.write_str(r)?,
            None => {
                if mark {
                    f.write_str("<span class=\"c\">")?;
                }
                f.write_str(&super::escape::shown(c))?;
                if mark {
                    f.write_str("</span>")?;
                }
            }
        }
    }
    f.write_str(&text[plain..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attack::oracle::Finding;
    use crate::certify::Config;
    use crate::protocol::ToolResult;
    use crate::text::Profile;

    fn rec(id: &str, verdict: Verdict) -> CaseRecord {
        crate::report::test_record(id, verdict)
    }

    fn summary_of(cases: &[CaseRecord]) -> Summary {
        let config = Config {
            profile: Profile::Docs,
            strict: false,
            ..Default::default()
        };
        Summary::of(
            "t".into(),
            &config,
            cases.iter().map(|c| (c.id.as_str(), c.verdict)),
        )
    }

    /// Every tag of `html` is one of the report's own, with only its own attributes, each value
    /// double-quoted: what a handler sends cannot open a tag or an attribute.
    fn assert_only_own_markup(html: &str) {
        const TAGS: &[&str] = &[
            "!DOCTYPE", "html", "head", "meta", "title", "style", "body", "h1", "h2", "table",
            "tr", "th", "td", "fieldset", "label", "input", "details", "summary", "span", "code",
            "div", "dl", "dt", "dd", "pre", "ul", "li", "p", "del", "ins", "script", "a",
            "section", "h3",
        ];
        const ATTRS: &[&str] = &[
            "lang",
            "charset",
            "http-equiv",
            "name",
            "content",
            "class",
            "id",
            "data-verdict",
            "hidden",
            "type",
            "value",
            "checked",
            "open",
            "html",
            "href",
        ];
        let mut rest = html;
        while let Some(start) = rest.find('<') {
            let tag = &rest[start + 1..];
            let tag = tag.strip_prefix('/').unwrap_or(tag);
            let name_len = tag.find([' ', '>']).expect("tag ends");
            assert!(
                TAGS.contains(&&tag[..name_len]),
                "tag {:?}",
                &tag[..40.min(tag.len())]
            );
            let mut attrs = &tag[name_len..];
            loop {
                attrs = attrs.trim_start_matches(' ');
                if let Some(after) = attrs.strip_prefix('>') {
                    rest = after;
                    break;
                }
                let end = attrs.find(['=', ' ', '>']).expect("attribute ends");
                assert!(
                    ATTRS.contains(&&attrs[..end]),
                    "attribute {:?}",
                    &attrs[..end]
                );
                attrs = &attrs[end..];
                if let Some(value) = attrs.strip_prefix("=\"") {
                    let close = value.find('"').expect("value closed");
                    assert!(
                        !value[..close].contains(['<', '>']),
                        "{:?}",
                        &value[..close]
                    );
                    attrs = &value[close + 1..];
                }
            }
        }
    }

    #[test]
    fn strings_from_the_run_appear_only_escaped() {
        let evil = "</script><script>alert(1)</script><img src=x onerror=alert(1)>";
        let mut c = rec("x\" onmouseover='alert(1)", Verdict::Unsafe);
        c.category = evil.into();
        c.requirement = evil.into();
        c.source = vec![evil.into()];
        c.findings = vec![Finding {
            verdict: Verdict::Unsafe,
            kind: evil.into(),
            detail: evil.into(),
        }];
        c.steps = vec![
            StepRecord {
                input: serde_json::json!({"command": "view", "path": evil}),
                reply: Some(ToolResult::error(format!("{evil}\ttab \u{202e}rtl"))),
                reply_cut: None,
                error: None,
                expected: evil.into(),
                verdict: Verdict::Unsafe,
            },
            StepRecord {
                input: serde_json::json!({}),
                reply: None,
                reply_cut: None,
                error: Some(evil.into()),
                expected: evil.into(),
                verdict: Verdict::Error,
            },
        ];
        let mut summary = summary_of(std::slice::from_ref(&c));
        summary.target = evil.into();
        let html = render(&summary, &[c]);
        assert_only_own_markup(&html);
        assert_eq!(html.matches("<script").count(), 1, "{html}");
        assert_eq!(html.matches("</script>").count(), 1);
        assert!(!html.contains("<img"));
        let escaped = "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;\
&lt;img src=x onerror=alert(1)&gt;";
        // Target (title, header), category, requirement, source, finding kind and detail (the
        // summary line and the list), input, expected (two steps), reply, diff (both sides),
        // error; and in the causes: the kind (table and list), the rule id (table) and the
        // requirement (list).
        assert_eq!(html.matches(escaped).count(), 19, "{html}");
        assert!(html.contains(
            "<details class=\"case\" id=\"case-x&quot; onmouseover=&#39;alert(1)\" \
data-verdict=\"UNSAFE\" open>"
        ));
        assert!(html.contains(&format!(
            "<dt>reply</dt><dd><pre>is_error: true\n{escaped}\
<span class=\"c\">\\t</span>tab <span class=\"c\">\\u{{202e}}</span>rtl</pre></dd></dl>"
        )));
        assert!(html.contains(&format!(
            "<dt>input</dt><dd><pre>{{&quot;command&quot;:&quot;view&quot;,&quot;path&quot;:\
&quot;{escaped}&quot;}}</pre></dd>"
        )));
        assert!(html.contains(&format!(
            "<dt>no reply</dt><dd><pre>{escaped}</pre></dd></dl>"
        )));
    }

    #[test]
    fn cited_rules_are_embedded_once_and_linked() {
        let mut a = rec("view/a", Verdict::Fail);
        a.source = vec!["bug:B01".into(), "spec:2.1/D3".into(), "not-an-id".into()];
        let mut b = rec("view/b", Verdict::Pass);
        b.source = vec!["bug:B01".into()];
        b.defined = "crates/memcert-cases/src/catalog/view.rs:7".into();
        let cases = [a, b];
        let html = render(&summary_of(&cases), &cases);
        assert_only_own_markup(&html);
        assert!(html.contains(
            "<dd><a href=\"#cite-bug-B01\">bug:B01</a>, \
<a href=\"#cite-spec-2-1-D3\">spec:2.1/D3</a>, not-an-id</dd>"
        ));
        assert_eq!(html.matches("<section id=\"cite-bug-B01\">").count(), 1);
        assert_eq!(html.matches("<section id=").count(), 2);
        let d3 = spec::lookup("spec:2.1/D3").unwrap();
        assert!(html.contains(&format!(
            "<section id=\"cite-spec-2-1-D3\"><h3>spec:2.1/D3</h3><p class=\"why\">docs/spec/memory-tool.md:{}</p>",
            d3.line
        )));
        assert!(!html.contains("hosted copy"));
        assert!(html.contains(
            "<dt>defined</dt><dd><code>crates/memcert-cases/src/catalog/view.rs:7</code></dd>"
        ));
        assert_eq!(html.matches("<dt>defined</dt>").count(), 1);
        let linked = render_with(
            &summary_of(&cases),
            &cases,
            Some("https://example.org/m/blob/v1/"),
        );
        assert!(linked.contains(&format!(
            "(<a href=\"https://example.org/m/blob/v1/docs/spec/memory-tool.md?plain=1#L{}\">hosted copy</a>)",
            d3.line
        )));
    }

    #[test]
    fn worst_cases_first_and_open_then_the_rest_in_run_order() {
        let cases = [
            rec("a/pass", Verdict::Pass),
            rec("b/fail", Verdict::Fail),
            rec("c/unsafe", Verdict::Unsafe),
            rec("d/non-strict", Verdict::NonStrict),
            rec("e/error", Verdict::Error),
            rec("f/fail", Verdict::Fail),
            rec("g/info", Verdict::Info),
            rec("h/skipped", Verdict::Skipped),
        ];
        let html = render(&summary_of(&cases), &cases);
        let opened: Vec<&str> = html
            .lines()
            .filter_map(|l| l.strip_prefix("<details class=\"case\" id=\"case-"))
            .map(|l| &l[..l.find("<summary>").unwrap()])
            .collect();
        assert_eq!(
            opened,
            [
                "c/unsafe\" data-verdict=\"UNSAFE\" open>",
                "e/error\" data-verdict=\"ERROR\" open>",
                "b/fail\" data-verdict=\"FAIL\" open>",
                "f/fail\" data-verdict=\"FAIL\" open>",
                "d/non-strict\" data-verdict=\"NON-STRICT\">",
                "g/info\" data-verdict=\"INFO\">",
                "h/skipped\" data-verdict=\"SKIPPED\">",
                "a/pass\" data-verdict=\"PASS\">",
            ]
        );
        assert!(html.contains(
            "<fieldset id=\"filter\" hidden>show: \
<label><input type=\"checkbox\" value=\"UNSAFE\" checked> UNSAFE (1)</label> \
<label><input type=\"checkbox\" value=\"ERROR\" checked> ERROR (1)</label> \
<label><input type=\"checkbox\" value=\"FAIL\" checked> FAIL (2)</label> \
<label><input type=\"checkbox\" value=\"NON-STRICT\" checked> NON-STRICT (1)</label> \
<label><input type=\"checkbox\" value=\"INFO\" checked> INFO (1)</label> \
<label><input type=\"checkbox\" value=\"SKIPPED\" checked> SKIPPED (1)</label> \
<label><input type=\"checkbox\" value=\"PASS\" checked> PASS (1)</label></fieldset>\n"
        ));
    }

    #[test]
    fn header_and_table_per_category_with_totals() {
        let cases = [
            rec("view/a", Verdict::Pass),
            rec("view/b", Verdict::Pass),
            rec("view/c", Verdict::NonStrict),
            rec("symlink/a", Verdict::Unsafe),
            rec("path/a", Verdict::Fail),
            rec("path/b", Verdict::Pass),
        ];
        let html = render(&summary_of(&cases), &cases);
        assert!(html.contains(
            "<h1>memcert certify: <span class=\"not-certified\">NOT CERTIFIED</span></h1>\n\
<table class=\"meta\">\n<tr><th>target</th><td>t</td></tr>\n\
<tr><th>profile</th><td>docs</td></tr>\n<tr><th>strict</th><td>no</td></tr>\n\
<tr><th>cases</th><td>6: 3 PASS, 1 NON-STRICT, 1 FAIL, 1 UNSAFE</td></tr>\n"
        ));
        assert!(html.contains(
            "<table class=\"summary\">\n<tr><th>category</th><th>PASS</th><th>NON-STRICT</th>\
<th>INFO</th><th>FAIL</th><th>UNSAFE</th><th>ERROR</th><th>SKIPPED</th></tr>\n\
<tr><th>path</th><td>1</td><td>0</td><td>0</td><td>1</td><td>0</td><td>0</td><td>0</td></tr>\n\
<tr><th>symlink</th><td>0</td><td>0</td><td>0</td><td>0</td><td>1</td><td>0</td><td>0</td></tr>\n\
<tr><th>view</th><td>2</td><td>1</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0</td></tr>\n\
<tr class=\"total\"><th>total</th><td>3</td><td>1</td><td>0</td><td>1</td><td>1</td><td>0</td>\
<td>0</td></tr>\n</table>\n"
        ));
        assert!(html.starts_with("<!DOCTYPE html>\n"));
        assert!(html.ends_with("</script>\n</body>\n</html>\n"));
    }

    #[test]
    fn diff_marks_expected_lines_del_and_actual_lines_ins() {
        assert_eq!(
            diff("a\nb\nc\n", "a\nB<x>\nc\n").unwrap(),
            " a\n<del>-b</del>\n<ins>+B&lt;x&gt;</ins>\n c\n"
        );
        assert_eq!(
            diff("is_error: true\nx\n", "x").unwrap(),
            "<del>-is_error: true</del>\n<del>-x</del>\n<ins>+x</ins>\n\
\\ No newline at end of file\n"
        );
        let long = "x\n".repeat(401);
        assert_eq!(diff(&long, "x"), None);
    }

    #[test]
    fn a_failed_step_shows_its_diff_collapsed() {
        let mut c = rec("view/x", Verdict::Fail);
        c.steps = vec![StepRecord {
            input: serde_json::json!({"command": "view", "path": "/memories/x"}),
            reply: Some(ToolResult::ok("1\tb\n")),
            reply_cut: None,
            error: None,
            expected: "is_error: true\nno".into(),
            verdict: Verdict::Fail,
        }];
        let html = render(&summary_of(std::slice::from_ref(&c)), &[c]);
        assert!(
            html.contains(
                "<div class=\"step\">step 1 <span class=\"v fail\">FAIL</span>\n\
<dl><dt>input</dt><dd><pre>{&quot;command&quot;:&quot;view&quot;,&quot;path&quot;:\
&quot;/memories/x&quot;}</pre></dd>\n\
<dt>expected</dt><dd><pre>is_error: true\nno</pre></dd>\n\
<dt>reply</dt><dd><pre>1<span class=\"c\">\\t</span>b\n</pre></dd></dl>\n\
<details><summary>diff (-expected +actual)</summary><pre class=\"diff\">\
<del>-is_error: true</del>\n<del>-no</del>\n\\ No newline at end of file\n\
<ins>+1<span class=\"c\">\\t</span>b</ins>\n</pre></details>\n</div>\n"
            ),
            "{html}"
        );
    }

    use crate::report::test_view_step as view_step;

    fn unsafe_finding(kind: &str, detail: &str) -> Finding {
        Finding {
            verdict: Verdict::Unsafe,
            kind: kind.into(),
            detail: detail.into(),
        }
    }

    /// The `<div class="step">` heads of `html`, one per step shown.
    fn step_heads(html: &str) -> Vec<&str> {
        html.match_indices("<div class=\"step\">")
            .map(|(i, _)| &html[i..i + html[i..].find('\n').unwrap()])
            .collect()
    }

    // See: issue 11 ("verdicts follow what was observed"): symlink/loop/view showed its only
    // step as PASS (the refusal's grade) beside the UNSAFE finding that this step's reply
    // discloses the host path.
    #[test]
    fn a_step_named_by_a_worse_finding_is_labelled_with_it() {
        let mut c = rec("symlink/loop/view", Verdict::Unsafe);
        c.findings = vec![unsafe_finding(
            "host-path-disclosed",
            "step 1: the reply discloses the host path /tmp/memcert-x",
        )];
        c.steps = vec![view_step(Verdict::Pass)];
        let html = render(&summary_of(std::slice::from_ref(&c)), &[c]);
        assert_eq!(
            step_heads(&html),
            [
                "<div class=\"step\">step 1 <span class=\"v unsafe\">UNSAFE</span> \
<span class=\"why\">(reply graded PASS; UNSAFE by host-path-disclosed)</span>"
            ]
        );
    }

    // See: issue 11: race/swap-dir/view showed the leaking steps of its first leaking round as
    // PASS (a race accepts any reply) beside the UNSAFE findings that they read the canary.
    #[test]
    fn a_race_shows_its_leaking_steps_labelled_unsafe_and_its_rounds_at_case_level() {
        let mut c = rec("race/swap-dir/view", Verdict::Unsafe);
        let read =
            "the reply holds the canary token: content or names from outside the root were read";
        c.findings = vec![
            unsafe_finding("race-rounds", "leaked in 5 of 5 rounds"),
            unsafe_finding("outside-read", &format!("step 22: {read}")),
            unsafe_finding(
                "host-path-disclosed",
                "step 22: the reply discloses the host path /tmp/m",
            ),
            unsafe_finding("outside-read", &format!("step 25: {read}")),
        ];
        c.steps = (0..30).map(|_| view_step(Verdict::Pass)).collect();
        let html = render(&summary_of(std::slice::from_ref(&c)), &[c]);
        assert!(html.contains(
            "<li><span class=\"v unsafe\">UNSAFE</span> [race-rounds] leaked in 5 of 5 rounds</li>"
        ));
        assert!(
            html.contains("<p>2 of 30 steps shown: those with a verdict or finding of their own")
        );
        assert_eq!(
            step_heads(&html),
            [
                "<div class=\"step\">step 22 <span class=\"v unsafe\">UNSAFE</span> \
<span class=\"why\">(reply graded PASS; UNSAFE by outside-read, host-path-disclosed)</span>",
                "<div class=\"step\">step 25 <span class=\"v unsafe\">UNSAFE</span> \
<span class=\"why\">(reply graded PASS; UNSAFE by outside-read)</span>",
            ]
        );
    }

    #[test]
    fn a_finding_on_the_disk_labels_no_step() {
        let mut c = rec("batch/create-twice", Verdict::Fail);
        c.findings = vec![
            Finding {
                verdict: Verdict::Fail,
                kind: "check".into(),
                detail: "/memories/a.txt: expected \"2\", found \"1\"".into(),
            },
            Finding {
                verdict: Verdict::NonStrict,
                kind: "reply".into(),
                detail: "step 2: same meaning in other words".into(),
            },
        ];
        c.steps = vec![view_step(Verdict::Pass), view_step(Verdict::NonStrict)];
        let html = render(&summary_of(std::slice::from_ref(&c)), &[c]);
        assert!(html.contains("<li><span class=\"v fail\">FAIL</span> [check] /memories/a.txt: expected &quot;2&quot;, found &quot;1&quot;</li>"), "{html}");
        assert_eq!(
            step_heads(&html),
            [
                "<div class=\"step\">step 1 <span class=\"v pass\">PASS</span>",
                "<div class=\"step\">step 2 <span class=\"v nonstrict\">NON-STRICT</span>",
            ]
        );
    }

    #[test]
    fn long_texts_are_cut_and_a_leading_newline_kept() {
        assert_eq!(
            clip("abcdef", 3),
            "abc... (6 characters in all; --report-json has them)"
        );
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(Pre("\nx").to_string(), "<pre>\n\nx</pre>");
        assert_eq!(Pre("x").to_string(), "<pre>x</pre>");
    }

    #[test]
    fn a_regression_is_open_with_its_diff_and_the_baseline_lists() {
        let (summary, cases) = crate::report::baseline_sample();
        let html = render(&summary, &cases);
        assert_only_own_markup(&html);
        assert!(html.contains(
            "<h2>Baseline: <span class=\"not-certified\">FAILED</span></h2>\n<p><code>base</code>: \
1 unchanged, 1 REGRESSION, 1 NEW, 1 STALE (0 not compared: race, huge file or SKIPPED; 2 snapshots of cases not run)</p>"
        ), "{html}");
        assert!(html.contains("<p>STALE (snapshots of cases that no longer exist; remove the files):</p>\n<ul>\n<li><code>view/retired</code></li>"));
        assert!(html.contains(
            "data-verdict=\"PASS\" open><summary><span class=\"v pass\">PASS</span> <code>str_replace/success</code> \
<span class=\"v fail\">REGRESSION</span></summary>"
        ), "{html}");
        assert!(
            html.contains("<del>-edited</del>\n<ins>+&lt;b&gt;edited&lt;/b&gt;</ins>\n"),
            "{html}"
        );
        assert!(html.contains("<code>view/new</code> <span class=\"v info\">NEW</span></summary>"));
    }
}
