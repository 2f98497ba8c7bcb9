//! `--sarif FILE`: SARIF 2.1.0 for code scanning (GitHub, GitLab, any dashboard that reads it),
//! built with the `serde-sarif` types (generated from the official schema).
//!
//! One result per cause ([`super::causes`]), never one per case: a flaw met by 48 cases is one
//! alert with its count, as in every other report.
//!
//! | cause verdict | SARIF |
//! |---|---|
//! | UNSAFE | result, level `error`, rule tagged `security` with `security-severity` 9.0 |
//! | FAIL | result, level `warning` |
//! | NON-STRICT | result, level `note`, only with [`Options::non_strict`] (`--sarif-non-strict`) |
//! | ERROR | a tool execution notification (level `error`), not a result: memcert could not judge |
//! | INFO, PASS, SKIPPED | nothing |
//!
//! # Guarantees
//! - Every result has exactly one location: [`Options::location`], a repository-relative URI
//!   with `uriBaseId` `%SRCROOT%` (code scanning rejects results without one, and absolute
//!   URIs), region line 1 (memcert judges a handler by its answers, not by its source lines).
//! - Rule ids are `<effect>/<rule>` (`escape/bug:B01`, `reply/spec:2.1/D3`): the cause's effect
//!   ([`super::causes::effect`]) and its rule ([`super::causes::rule`]); they change only when
//!   the catalog re-cites a case. Each result carries `partialFingerprints`
//!   (`memcertCause/v1`: the SHA-256 of rule id and the cause's shape, or for an escape whether
//!   it wrote outside, first 32 hex digits: [`fingerprint`]), so an
//!   alert stays the same alert across runs while the cause is the same.
//! - A cause whose every case the expected-failures list excuses has an `external` suppression.
//! - Untrusted text (findings quote handler replies) is written with every hidden character shown
//!   as an escape ([`super::escape::terminal`]) and cut at [`MESSAGE_CHARS`] characters.
//!
//! # Non-guarantees
//! - The location is where the handler lives, not the line at fault.
//! - Results are not tied to a git commit (`versionControlProvenance` is left to the uploader).

use std::collections::BTreeMap;

use serde_sarif::sarif::{
    ArtifactLocation, Invocation, Location, Message, MultiformatMessageString, Notification,
    PhysicalLocation, PropertyBag, Region, ReportingDescriptor, Result as SarifResult, ResultLevel,
    Run, Sarif, Suppression, Tool, ToolComponent,
};
use sha2::Digest;

use super::causes::Cause;
use crate::certify::{CaseRecord, Summary};
use crate::suite::verdict::Verdict;

/// The schema URI written as the file's `$schema`.
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Longest message text, in characters (the rest is cut with `…`).
pub const MESSAGE_CHARS: usize = 2_000;

/// Case ids listed in a result's properties (`cases`), at most; `count` gives them all.
pub const LISTED_CASES: usize = 50;

/// What a SARIF report needs beyond the run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The repository-relative URI every result points at (the handler's file), `/`-separated,
    /// percent-encoded where needed (`fixtures/handlers/flawed/naive_join.py`).
    pub location: String,
    /// Also report NON-STRICT causes, as `note` results.
    pub non_strict: bool,
}

/// The rule id of a cause: `<effect>/<rule>`, or the effect alone when no case cites a rule.
pub fn rule_id(cause: &Cause) -> String {
    if cause.spec.is_empty() {
        cause.kind.clone()
    } else {
        format!("{}/{}", cause.kind, cause.spec)
    }
}

/// The `memcertCause/v1` fingerprint of a cause: the first 32 hex digits of the SHA-256 of its
/// rule id, a newline and its shape; for an escape, instead of the shape (which lists every kind
/// seen), `escape:write` when it changed anything outside and `escape:read` otherwise (read, or
/// copied into the store). So an escape that also copies is the same alert, and one that starts
/// (or stops) writing outside is a new one: a dismissed read-only alert never covers a write.
pub fn fingerprint(cause: &Cause) -> String {
    let shape = if cause.kind == "escape" {
        if cause.kinds.iter().any(|k| k == "outside-changed") {
            "escape:write"
        } else {
            "escape:read"
        }
    } else {
        cause.shape.as_str()
    };
    let digest = sha2::Sha256::digest(format!("{}\n{shape}", rule_id(cause)));
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// `text` as one safe line: hidden characters as escapes, at most [`MESSAGE_CHARS`] characters.
fn safe(text: &str) -> String {
    let shown = super::escape::terminal(text);
    match shown.char_indices().nth(MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", &shown[..at]),
        None => shown,
    }
}

fn plain(text: &str) -> MultiformatMessageString {
    MultiformatMessageString::builder().text(safe(text)).build()
}

fn message(text: &str) -> Message {
    Message::builder().text(safe(text)).build()
}

fn level(verdict: Verdict) -> Option<ResultLevel> {
    match verdict {
        Verdict::Unsafe => Some(ResultLevel::Error),
        Verdict::Fail => Some(ResultLevel::Warning),
        Verdict::NonStrict => Some(ResultLevel::Note),
        _ => None,
    }
}

/// The text of a cause's result: verdict, count, shape, the example case and its finding.
fn result_text(c: &Cause) -> String {
    let cases = if c.count == 1 { "case" } else { "cases" };
    format!(
        "{verdict} in {count} {cases}: {shape}. Example {case}: {detail}",
        verdict = c.verdict.as_str(),
        count = c.count,
        shape = c.shape,
        case = c.example.case,
        detail = c.example.detail,
    )
}

fn rule(c: &Cause) -> ReportingDescriptor {
    let mut props: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    props.insert("precision".into(), "high".into());
    let mut tags = vec!["memory-tool".to_owned()];
    if c.verdict == Verdict::Unsafe {
        tags.push("security".into());
        props.insert("security-severity".into(), "9.0".into());
    }
    ReportingDescriptor::builder()
        .id(rule_id(c))
        .short_description(plain(&c.requirement))
        .help(plain(&c.hint))
        .properties(
            PropertyBag::builder()
                .tags(tags)
                .additional_properties(props)
                .build(),
        )
        .build()
}

fn result(c: &Cause, rule_index: usize, opts: &Options) -> Option<SarifResult> {
    let level = level(c.verdict)?;
    if c.verdict == Verdict::NonStrict && !opts.non_strict {
        return None;
    }
    let location = Location::builder()
        .physical_location(
            PhysicalLocation::builder()
                .artifact_location(
                    ArtifactLocation::builder()
                        .uri(opts.location.clone())
                        .uri_base_id("%SRCROOT%".to_owned())
                        .build(),
                )
                .region(Region::builder().start_line(1).build())
                .build(),
        )
        .build();
    let mut props: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    props.insert("count".into(), c.count.into());
    props.insert("excused".into(), c.excused.into());
    props.insert(
        "cases".into(),
        c.ids
            .iter()
            .take(LISTED_CASES)
            .map(|id| safe(id))
            .collect::<Vec<_>>()
            .into(),
    );
    props.insert("kinds".into(), c.kinds.clone().into());
    let base = SarifResult::builder()
        .rule_id(rule_id(c))
        .rule_index(rule_index as i64)
        .level(level)
        .message(message(&result_text(c)))
        .locations(vec![location])
        .partial_fingerprints(BTreeMap::from([(
            "memcertCause/v1".to_owned(),
            fingerprint(c),
        )]))
        .properties(PropertyBag::builder().additional_properties(props).build());
    Some(if c.count > 0 && c.excused == c.count {
        base.suppressions(vec![Suppression::builder()
            .kind(serde_json::Value::from("external"))
            .justification("every case of the cause is in the expected-failures list".to_owned())
            .build()])
            .build()
    } else {
        base.build()
    })
}

/// Render a finished run as a SARIF 2.1.0 log (pretty JSON and a final newline): one run, the
/// causes as results ([module docs](self)), ERROR causes as tool execution notifications.
pub fn render_with(summary: &Summary, cases: &[CaseRecord], opts: &Options) -> String {
    let causes = super::causes::causes(cases);
    let mut rules: Vec<ReportingDescriptor> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut results = Vec::new();
    let mut notifications = Vec::new();
    for c in &causes {
        if c.verdict == Verdict::Error {
            notifications.push(
                Notification::builder()
                    .level(serde_json::Value::from("error"))
                    .message(message(&result_text(c)))
                    .build(),
            );
            continue;
        }
        if level(c.verdict).is_none() || (c.verdict == Verdict::NonStrict && !opts.non_strict) {
            continue;
        }
        let id = rule_id(c);
        let at = *index.entry(id).or_insert_with(|| {
            rules.push(rule(c));
            rules.len() - 1
        });
        results.extend(result(c, at, opts));
    }
    let mut run_props: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    run_props.insert("catalog".into(), crate::suite::CATALOG_VERSION.into());
    run_props.insert("target".into(), safe(&summary.target).into());
    run_props.insert("certified".into(), summary.certified.into());
    let driver = ToolComponent::builder()
        .name("memcert".to_owned())
        .version(env!("CARGO_PKG_VERSION").to_owned())
        .semantic_version(env!("CARGO_PKG_VERSION").to_owned())
        .rules(rules)
        .build();
    let invocation = Invocation::builder()
        .execution_successful(
            summary.completion == crate::certify::Completion::Complete && notifications.is_empty(),
        )
        .tool_execution_notifications(notifications)
        .build();
    let run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .invocations(vec![invocation])
        .properties(
            PropertyBag::builder()
                .additional_properties(run_props)
                .build(),
        )
        .build();
    let log = Sarif::builder()
        .schema(SCHEMA_URI.to_owned())
        .version(serde_json::Value::from("2.1.0"))
        .runs(vec![run])
        .build();
    super::escape::json(serde_json::to_string_pretty(&log).expect("reports serialise")) + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attack::oracle::Finding;
    use crate::report::test_record;

    fn with(id: &str, verdict: Verdict, kind: &str, detail: &str) -> CaseRecord {
        CaseRecord {
            findings: vec![Finding {
                verdict,
                kind: kind.into(),
                detail: detail.into(),
            }],
            ..test_record(id, verdict)
        }
    }

    fn sample() -> (Summary, Vec<CaseRecord>) {
        let cases = vec![
            with(
                "traversal/a",
                Verdict::Unsafe,
                "outside-read",
                "outside the root, base/canary.txt was read",
            ),
            with(
                "traversal/b",
                Verdict::Unsafe,
                "outside-read",
                "outside the root, base/other.txt was read",
            ),
            with(
                "view/x",
                Verdict::NonStrict,
                "reply",
                "wording \u{202e}differs",
            ),
            with(
                "view/y",
                Verdict::Error,
                "no-reply",
                "no answer within 10 s",
            ),
            test_record("view/z", Verdict::Pass),
        ];
        let summary = Summary::of(
            "t".into(),
            &crate::certify::Config::default(),
            cases.iter().map(|c| (c.id.as_str(), c.verdict)),
        );
        (summary, cases)
    }

    fn render(non_strict: bool) -> serde_json::Value {
        let (summary, cases) = sample();
        let opts = Options {
            location: "src/handler.py".into(),
            non_strict,
        };
        serde_json::from_str(&render_with(&summary, &cases, &opts)).unwrap()
    }

    #[test]
    fn an_escape_keeps_its_fingerprint_unless_it_starts_or_stops_writing_outside() {
        let (_, cases) = sample();
        let mut cause = super::super::causes::causes(&cases).remove(0);
        assert_eq!(cause.shape, "reached outside the root (read)");
        let before = fingerprint(&cause);
        // sha256("escape/bug:B01\nescape:read"), first 16 bytes.
        let want: String = sha2::Sha256::digest("escape/bug:B01\nescape:read")
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(before, want);
        cause.shape = "reached outside the root (copied into the store, read)".into();
        cause.kinds.push("outside-copied".into());
        assert_eq!(fingerprint(&cause), before);
        // Writing outside is another alert: a dismissed read never covers it.
        cause.kinds.push("outside-changed".into());
        assert_ne!(fingerprint(&cause), before);
        cause.kind = "reply".into();
        assert_ne!(fingerprint(&cause), before);
    }

    #[test]
    fn one_result_per_cause_with_location_level_and_fingerprint() {
        let log = render(false);
        assert_eq!(log["version"], "2.1.0");
        assert_eq!(log["$schema"], SCHEMA_URI);
        let run = &log["runs"][0];
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 1, "{results:#?}");
        let r = &results[0];
        assert_eq!(r["ruleId"], "escape/bug:B01");
        assert_eq!(r["ruleIndex"], 0);
        assert_eq!(r["level"], "error");
        assert_eq!(
            r["message"]["text"],
            "UNSAFE in 2 cases: reached outside the root (read). Example traversal/a: outside the root, base/canary.txt was read"
        );
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"],
            serde_json::json!({"uri": "src/handler.py", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(r["properties"]["count"], 2);
        assert_eq!(
            r["properties"]["cases"],
            serde_json::json!(["traversal/a", "traversal/b"])
        );
        let fp = r["partialFingerprints"]["memcertCause/v1"]
            .as_str()
            .unwrap();
        assert_eq!(fp.len(), 32);
        assert_eq!(
            render(false)["runs"][0]["results"][0]["partialFingerprints"]["memcertCause/v1"],
            fp
        );
        let rule = &run["tool"]["driver"]["rules"][0];
        assert_eq!(rule["id"], "escape/bug:B01");
        assert_eq!(rule["properties"]["security-severity"], "9.0");
        assert_eq!(
            rule["properties"]["tags"],
            serde_json::json!(["memory-tool", "security"])
        );
        let notes = &run["invocations"][0];
        assert_eq!(notes["executionSuccessful"], false);
        assert_eq!(
            notes["toolExecutionNotifications"][0]["message"]["text"],
            "ERROR in 1 case: no answer within N s. Example view/y: no answer within 10 s"
        );
    }

    #[test]
    fn non_strict_only_when_asked_and_hidden_characters_escaped() {
        let log = render(true);
        let results = log["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[1]["level"], "note");
        assert_eq!(results[1]["ruleId"], "reply/bug:B01");
        assert_eq!(
            results[1]["message"]["text"],
            "NON-STRICT in 1 case: wording \\u{202e}differs. Example view/x: wording \\u{202e}differs"
        );
    }

    #[test]
    fn a_wholly_excused_cause_is_suppressed() {
        let (summary, mut cases) = sample();
        for c in &mut cases[..2] {
            c.expected_failure = Some("traversal/*".into());
        }
        let opts = Options {
            location: "h.py".into(),
            non_strict: false,
        };
        let log: serde_json::Value =
            serde_json::from_str(&render_with(&summary, &cases, &opts)).unwrap();
        assert_eq!(
            log["runs"][0]["results"][0]["suppressions"],
            serde_json::json!([{"kind": "external", "justification": "every case of the cause is in the expected-failures list"}])
        );
    }
}
