//! The exact cause list (`memcert::report::causes`: verdict, finding kind, rule, case count,
//! worst first) of the pinned SDK handlers at `--level standard --exclude 'race/*'` and of each
//! one-flaw fixture of `fixtures/handlers/flawed/` on the cases `tests/attack` runs it on; and
//! the Markdown summary's size before its first `<details>` for each.
//!
//! Each expected list is one table: when a grading change moves a cause, the failure prints the
//! new table in this file's syntax, to paste after checking it.

#[path = "../common/mod.rs"]
mod common;
use common::*;

use std::time::Duration;

use memcert::certify::{self, CaseRecord, Config, Summary};
use memcert::report::{causes, markdown};
use memcert::suite::catalog::{self, RunLevel};
use memcert::suite::verdict::Verdict::{self, *};
use memcert::suite::Case;
use memcert::text::Profile;

/// One expected cause: verdict, finding kind, rule (first citation id), number of cases.
type Row = (Verdict, &'static str, &'static str, usize);

/// The causes of `records`, as rows.
fn rows(records: &[CaseRecord]) -> Vec<(Verdict, String, String, usize)> {
    causes::causes(records)
        .into_iter()
        .map(|c| (c.verdict, c.kind, c.spec, c.count))
        .collect()
}

/// Assert the cause list and the Markdown head's size; on a mismatch, print the actual table.
fn assert_causes(what: &str, records: &[CaseRecord], want: &[Row]) {
    let got = rows(records);
    let want: Vec<(Verdict, String, String, usize)> = want
        .iter()
        .map(|(v, k, s, n)| (*v, k.to_string(), s.to_string(), *n))
        .collect();
    if got != want {
        let table: String = got
            .iter()
            .map(|(v, k, s, n)| format!("    ({v:?}, {k:?}, {s:?}, {n}),\n"))
            .collect();
        panic!("{what}: the cause list changed; the new table:\n{table}");
    }
    let summary = Summary::of(
        what.into(),
        &Config::default(),
        records.iter().map(|c| (c.id.as_str(), c.verdict)),
    );
    let md = markdown::render(&summary, records);
    let head = md.split("<details>").next().unwrap_or("");
    assert!(
        head.lines().count() <= markdown::MAX_LINES && head.len() <= markdown::MAX_BYTES,
        "{what}: the Markdown summary before <details> is {} lines, {} bytes:\n{head}",
        head.lines().count(),
        head.len()
    );
}

/// The standard level without races, as `--level standard --exclude 'race/*'` selects it.
fn standard_without_races() -> Vec<memcert::suite::Case> {
    certify::select(
        catalog::for_level(RunLevel::Standard),
        &[],
        &["race/*".to_owned()],
    )
    .unwrap()
}

/// `python anthropic.tools:BetaLocalFilesystemMemoryTool --profile python-sdk`.
const PYTHON_SDK: &[Row] = &[
    (Unsafe, "escape", "bug:B10", 11),
    (Unsafe, "escape", "bug:B15", 5),
    (Unsafe, "check", "bug:B14", 3),
    (Unsafe, "check", "spec:3/S-6", 2),
    (Unsafe, "host-path-disclosed", "bug:B07", 1),
    (Fail, "unbounded-read", "bug:B17", 3),
    (Fail, "reply", "spec:3/P-11", 2),
    (Fail, "check", "bug:B06", 1),
    (Fail, "reply", "bug:B10", 1),
    (Fail, "check", "spec:2.2/B9", 1),
    (NonStrict, "reply", "bug:B06", 8),
    (NonStrict, "reply", "bug:B06", 4),
    (NonStrict, "reply", "bug:B07", 3),
    (NonStrict, "reply", "spec:2.1/A2", 2),
    (NonStrict, "reply", "spec:2.1/C11", 2),
    (NonStrict, "reply", "spec:2.1/C7", 2),
    (NonStrict, "check", "spec:2.4/F8", 2),
    (NonStrict, "check", "spec:3/S-7", 2),
    (NonStrict, "reply", "bug:B01", 1),
    (NonStrict, "check", "bug:B07", 1),
    (NonStrict, "reply", "bug:B07", 1),
    (NonStrict, "reply", "spec:2.1/C18", 1),
    (NonStrict, "reply", "spec:2.1/C30", 1),
    (NonStrict, "reply", "spec:2.1/C6", 1),
    (NonStrict, "reply", "spec:2.1/D3", 1),
    (NonStrict, "check", "spec:2.2/B10", 1),
    (NonStrict, "reply", "spec:2.3/X1", 1),
    (NonStrict, "reply", "spec:2.4/F15", 1),
    (NonStrict, "reply", "spec:2.4/X20", 1),
    (NonStrict, "check", "spec:2.5/X15", 1),
    (NonStrict, "check", "spec:2.6/H5", 1),
    (NonStrict, "reply", "spec:3/P-6", 1),
    (NonStrict, "reply", "spec:3/P-6", 1),
    (Info, "reply", "bug:B03", 462),
    (Info, "reply", "spec:3/S-2", 2),
];

/// `node @anthropic-ai/sdk/tools/memory/node:BetaLocalFilesystemMemoryTool --profile
/// typescript-sdk`.
const TYPESCRIPT_SDK: &[Row] = &[
    (Unsafe, "host-path-disclosed", "bug:B07", 54),
    (Unsafe, "escape", "bug:B10", 11),
    (Unsafe, "escape", "bug:B15", 5),
    (Fail, "unbounded-read", "bug:B17", 3),
    (Fail, "check", "spec:2.4/F14", 2),
    (Fail, "reply", "spec:3/P-11", 2),
    (Fail, "check", "bug:B06", 1),
    (Fail, "reply", "spec:2.1/C25", 1),
    (Fail, "reply", "spec:2.1/X18", 1),
    (Fail, "reply", "spec:2.1/X21", 1),
    (Fail, "check", "spec:2.2/B9", 1),
    (Fail, "check", "spec:2.3/E4", 1),
    (Fail, "check", "spec:2.3/E6", 1),
    (Fail, "check", "spec:2.3/X12", 1),
    (Fail, "check", "spec:2.3/X24", 1),
    (Fail, "check", "spec:2.4/F3", 1),
    (NonStrict, "reply", "bug:B06", 8),
    (NonStrict, "reply", "bug:B06", 4),
    (NonStrict, "reply", "bug:B07", 3),
    (NonStrict, "reply", "spec:2.1/A2", 3),
    (NonStrict, "reply", "spec:2.1/C11", 2),
    (NonStrict, "reply", "spec:2.1/C7", 2),
    (NonStrict, "check", "spec:3/S-7", 2),
    (NonStrict, "reply", "bug:B01", 1),
    (NonStrict, "reply", "bug:B09", 1),
    (NonStrict, "reply", "spec:2.1/C18", 1),
    (NonStrict, "reply", "spec:2.1/C30", 1),
    (NonStrict, "reply", "spec:2.1/C6", 1),
    (NonStrict, "check", "spec:2.2/B10", 1),
    (NonStrict, "reply", "spec:2.3/X1", 1),
    (NonStrict, "reply", "spec:2.4/F15", 1),
    (NonStrict, "check", "spec:2.4/F6b", 1),
    (NonStrict, "reply", "spec:2.4/X20", 1),
    (NonStrict, "check", "spec:2.5/X15", 1),
    (NonStrict, "check", "spec:2.6/H5", 1),
    (NonStrict, "reply", "spec:3/P-6", 1),
    (NonStrict, "reply", "spec:3/P-6", 1),
    (NonStrict, "check", "spec:3/S-7", 1),
    (Info, "reply", "bug:B03", 462),
    (Info, "reply", "spec:3/S-2", 2),
];

#[test]
fn python_sdk_causes() {
    let (_dir, mut t) = sdk_target(Profile::PythonSdk);
    let records = run_cases(&mut t, Profile::PythonSdk, &standard_without_races());
    assert_causes("python-sdk", &records, PYTHON_SDK);
}

#[test]
fn typescript_sdk_causes() {
    let (_dir, mut t) = sdk_target(Profile::TypescriptSdk);
    // The TypeScript runner's batch/* outcomes depend on timing (its calls of one turn run at
    // once); their verdicts are asserted as allowed sets in tests/certify, not as causes here.
    let cases = certify::select(standard_without_races(), &[], &["batch/*".to_owned()]).unwrap();
    let records = run_cases(&mut t, Profile::TypescriptSdk, &cases);
    assert_causes("typescript-sdk", &records, TYPESCRIPT_SDK);
}

/// `payload/traversal/<dot>/<slash>/depth-2/*` for each pair, as in `tests/attack`.
fn traversal(pairs: &[(&str, &str)]) -> Vec<String> {
    pairs
        .iter()
        .map(|(d, s)| format!("payload/traversal/{d}/{s}/depth-2/*"))
        .collect()
}

/// The cases `tests/attack` runs a fixture on.
fn fixture_globs(fixture: &str) -> Vec<String> {
    let each = |list: &[&str], f: &dyn Fn(&str) -> String| list.iter().map(|s| f(s)).collect();
    match fixture {
        "naive_join" => traversal(&[("plain", "slash")]),
        "decode_after_check" => traversal(&[
            ("encoded-lower", "slash"),
            ("encoded-upper", "slash"),
            ("encoded-mixed-1", "encoded-slash"),
            ("encoded-mixed-2", "encoded-slash-upper"),
            ("plain", "encoded-slash"),
        ]),
        "double_decode" => traversal(&[
            ("double-encoded", "slash"),
            ("double-encoded-upper", "slash"),
            ("double-nibble", "slash"),
            ("plain", "double-encoded-slash"),
        ]),
        "normalise_after_check" => traversal(&[
            ("fullwidth", "slash"),
            ("two-dot-leader", "slash"),
            ("one-dot-leaders", "fullwidth-slash"),
            ("small-full-stops", "fullwidth-slash"),
            ("plain", "fullwidth-slash"),
        ]),
        "backslash_as_separator" => traversal(&[("plain", "backslash"), ("plain", "mixed")]),
        "overlong_utf8" => traversal(&[
            ("overlong-2", "slash"),
            ("overlong-2-upper", "slash"),
            ("overlong-3", "slash"),
            ("overlong-4", "slash"),
            ("plain", "overlong-slash"),
        ]),
        "percent_u" => traversal(&[("percent-u", "slash")]),
        "strip_once" => traversal(&[
            ("strip-four-dots", "double-slash"),
            ("strip-nested", "slash"),
        ]),
        "nul_truncation" => traversal(&[("nul-suffix", "slash"), ("nul-suffix", "mixed")]),
        "semicolon_params" => traversal(&[("semicolon", "slash")]),
        "raw_os_errors" => ["component-256", "path-4097"]
            .iter()
            .flat_map(|p| {
                [
                    "view.path",
                    "create.path",
                    "str_replace.path",
                    "insert.path",
                    "delete.path",
                    "rename.old_path",
                ]
                .iter()
                .map(move |f| format!("payload/long/{p}/{f}"))
            })
            .collect(),
        "absolute_join" => vec!["payload/absolute/double-slash-run/*".to_owned()],
        "root_alias_delete" => each(
            &[
                "dot",
                "dot-slash",
                "double-slash",
                "child-dotdot",
                "via-parent",
            ],
            &|a| format!("payload/root-alias/{a}/delete.path"),
        ),
        "prefix_without_separator" => each(
            &["underscore-sibling", "dotdot-sibling", "dotdot-private"],
            &|p| format!("payload/prefix/{p}/*"),
        ),
        "follows_links" => [
            "symlink/outside-file/view",
            "symlink/outside-file/str_replace",
            "symlink/outside-file/insert",
            "symlink/outside-dir/view-below",
            "symlink/outside-dir/create-below",
            "symlink/relative/view-below",
        ]
        .map(str::to_owned)
        .to_vec(),
        other => panic!("no cases for {other}"),
    }
}

/// Each one-flaw fixture (file, class) with its expected causes, every verdict included: one
/// cause each (issue 11: one flaw is one cause, reported once with its count).
const FIXTURES: &[(&str, &str, &[Row])] = &[
    (
        "naive_join",
        "NaiveJoinMemoryTool",
        &[(Unsafe, "escape", "bug:B01", 7)],
    ),
    (
        "decode_after_check",
        "DecodeAfterCheckMemoryTool",
        &[(Unsafe, "escape", "bug:B19", 35)],
    ),
    (
        "double_decode",
        "DoubleDecodeMemoryTool",
        &[(Unsafe, "escape", "bug:B20", 28)],
    ),
    (
        "normalise_after_check",
        "NormaliseAfterCheckMemoryTool",
        &[(Unsafe, "escape", "bug:B20", 35)],
    ),
    (
        "backslash_as_separator",
        "BackslashSeparatorMemoryTool",
        &[(Unsafe, "escape", "bug:B21", 14)],
    ),
    (
        "overlong_utf8",
        "OverlongUtf8MemoryTool",
        &[(Unsafe, "escape", "bug:B20", 35)],
    ),
    (
        "percent_u",
        "PercentUMemoryTool",
        &[(Unsafe, "escape", "bug:B20", 7)],
    ),
    (
        "strip_once",
        "StripOnceMemoryTool",
        &[(Unsafe, "escape", "bug:B02", 14)],
    ),
    (
        "nul_truncation",
        "NulTruncationMemoryTool",
        &[(Unsafe, "escape", "bug:B16", 14)],
    ),
    (
        "semicolon_params",
        "SemicolonParamsMemoryTool",
        &[(Unsafe, "escape", "bug:B19", 7)],
    ),
    (
        "raw_os_errors",
        "RawOsErrorsMemoryTool",
        &[(Unsafe, "host-path-disclosed", "bug:B07", 12)],
    ),
    (
        "absolute_join",
        "AbsoluteJoinMemoryTool",
        &[(Unsafe, "escape", "bug:B03", 7)],
    ),
    (
        "root_alias_delete",
        "RootAliasDeleteMemoryTool",
        &[(Unsafe, "check", "bug:B07", 5)],
    ),
    (
        "prefix_without_separator",
        "PrefixWithoutSeparatorMemoryTool",
        &[(Unsafe, "escape", "bug:B04", 21)],
    ),
    (
        "follows_links",
        "FollowsLinksMemoryTool",
        &[(Unsafe, "escape", "bug:B09", 6)],
    ),
];

#[test]
fn flawed_fixture_causes() {
    one_cause_each(FIXTURES, |fixture| {
        let all = if fixture.starts_with("follows") {
            catalog::all()
        } else {
            catalog::payload::cases(RunLevel::Full)
        };
        certify::select(all, &fixture_globs(fixture), &[]).unwrap()
    });
}

/// Run each one-flaw fixture `(file, class, causes)` of `fixtures/handlers/flawed/` on the cases
/// `cases_of(file)` selects and check that exactly one of its causes is FAIL or worse and that
/// its cause list is `causes` ([`assert_causes`]); every mismatch is reported at once.
fn one_cause_each(fixtures: &[(&str, &str, &[Row])], cases_of: impl Fn(&str) -> Vec<Case>) {
    let mut failures = Vec::new();
    for (fixture, class, want) in fixtures {
        let spec = format!("fixtures/handlers/flawed/{fixture}.py:{class}");
        let (_dir, mut t) = python_target(&spec, Duration::from_secs(20));
        // Permission cases depend on the uid the handler runs as (SKIPPED only when it is
        // root), and meet each fixture's flaw under another rule: left out.
        let records: Vec<CaseRecord> = run_cases(&mut t, Profile::Docs, &cases_of(fixture))
            .into_iter()
            .filter(|r| {
                !r.id.starts_with("scenario/no-permission/")
                    && !r.id.starts_with("scenario/read-only-dir/")
            })
            .collect();
        let worse = causes::causes(&records)
            .iter()
            .filter(|c| c.verdict >= Verdict::Fail)
            .count();
        if worse != 1 {
            failures.push(format!("{fixture}: {worse} causes at FAIL or worse"));
        }
        if let Err(e) = std::panic::catch_unwind(|| assert_causes(fixture, &records, want)) {
            failures.push(
                e.downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_else(|| format!("{fixture}: failed")),
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn fail_on_sets_the_exit_status_and_every_report_states_it() {
    let py = python();
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("r.md");
    let json = dir.path().join("r.json");
    let xml = dir.path().join("r.xml");
    let html = dir.path().join("r.html");
    // One UNSAFE (a link's target deleted) and one FAIL (a newline accepted in a name).
    let run = |gate: &[&str]| {
        let mut args = vec![
            "certify",
            "--python",
            PYTHON_SDK_HANDLER,
            "--python-exe",
            &py,
            "--profile",
            "python-sdk",
            "--cases",
            "symlink/inner-file/delete",
            "--cases",
            "path/newline-in-name",
            "--markdown",
            md.to_str().unwrap(),
            "--report-json",
            json.to_str().unwrap(),
            "--junit",
            xml.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ];
        args.extend_from_slice(gate);
        let (code, stdout, _) = common::memcert(&args);
        (code, stdout)
    };
    let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap();
    let (code, stdout) = run(&[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("\nfail on: UNSAFE, ERROR, FAIL\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("\nverdict: NOT CERTIFIED (1 UNSAFE, 1 FAIL)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nCAUSES (2: 1 UNSAFE, 1 FAIL) over 2 cases not PASS\n"),
        "{stdout}"
    );

    let (code, stdout) = run(&["--fail-on", "fail"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.ends_with("\nverdict: NOT CERTIFIED (1 FAIL; --fail-on FAIL)\n"),
        "{stdout}"
    );

    for gate in [
        &["--fail-on", "error"][..],
        &["--fail-on", "error,fail"][..],
    ] {
        let (code, stdout) = run(gate);
        let want = if gate[1] == "error" { Some(0) } else { Some(1) };
        assert_eq!(code, want, "{gate:?}: {stdout}");
    }

    let (code, stdout) = run(&["--fail-on", "error", "--fail-on", "error"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("\nfail on: ERROR\n"), "{stdout}");
    assert!(
        stdout.ends_with("\nverdict: CERTIFIED (no ERROR)\n"),
        "{stdout}"
    );
    // The UNSAFE cause, outside the gate, is one line; the FAIL one too.
    assert!(
        stdout.contains("  1. UNSAFE     1 case  [check] bug:B14: "),
        "{stdout}"
    );
    assert!(read(&md).starts_with("## memcert certify\n\n**CERTIFIED** (fail on ERROR): "));
    let report: serde_json::Value = serde_json::from_str(&read(&json)).unwrap();
    assert_eq!(report["summary"]["fail_on"], serde_json::json!(["ERROR"]));
    assert_eq!(report["summary"]["certified"], true);
    assert_eq!(
        report["summary"]["unexcused"],
        serde_json::json!({"ERROR": 0, "FAIL": 1, "UNSAFE": 1})
    );
    assert_eq!(report["catalog"], memcert::suite::CATALOG_VERSION);
    assert!(read(&xml).contains("<property name=\"fail-on\" value=\"ERROR\"/>"));
    assert!(read(&html).contains("<tr><th>fail on</th><td>ERROR</td></tr>"));

    let (code, _, _) =
        common::memcert(&["certify", "--cases", "view/missing", "--fail-on", "info"]);
    assert_eq!(code, Some(2), "--fail-on names UNSAFE, FAIL or ERROR only");
}

/// The one-flaw fixtures whose flaw is behaviour, not an escape (issue 11), each built on the
/// careful reworded handler: over the hand-written catalog (races apart), exactly one FAIL
/// cause, naming the behaviour; the rest are the careful base's other words (NON-STRICT) and
/// notes (INFO). Every cause is listed.
const BEHAVIOURAL: &[(&str, &str, &[Row])] = &[
    (
        "str_replace_all",
        "ReplaceAllMemoryTool",
        &[
            (Fail, "check", "spec:2.3/E3", 2),
            (NonStrict, "reply", "spec:2.1/A1", 110),
            (NonStrict, "reply", "spec:2.1/C11", 2),
            (NonStrict, "reply", "spec:2.1/C7", 2),
            (NonStrict, "reply", "bug:B07", 1),
            (NonStrict, "reply", "spec:2.1/C18", 1),
            (NonStrict, "reply", "spec:2.1/C30", 1),
            (NonStrict, "reply", "spec:2.1/C6", 1),
            (NonStrict, "reply", "spec:2.1/D3", 1),
            (NonStrict, "check", "spec:2.2/B10", 1),
            (NonStrict, "reply", "spec:2.4/F15", 1),
            (NonStrict, "reply", "spec:2.4/X20", 1),
            (NonStrict, "check", "spec:2.5/X15", 1),
            (NonStrict, "reply", "spec:3/P-6", 1),
            (Info, "reply", "bug:B03", 4),
        ],
    ),
    (
        "insert_off_by_one",
        "OffByOneMemoryTool",
        &[
            (Fail, "check", "spec:2.4/F1", 4),
            (NonStrict, "reply", "spec:2.1/A1", 106),
            (NonStrict, "reply", "spec:2.1/C11", 2),
            (NonStrict, "reply", "spec:2.1/C7", 2),
            (NonStrict, "check", "spec:2.4/F6b", 2),
            (NonStrict, "reply", "bug:B07", 1),
            (NonStrict, "reply", "spec:2.1/C18", 1),
            (NonStrict, "reply", "spec:2.1/C30", 1),
            (NonStrict, "reply", "spec:2.1/C6", 1),
            (NonStrict, "reply", "spec:2.1/D3", 1),
            (NonStrict, "check", "spec:2.2/B10", 1),
            (NonStrict, "reply", "spec:2.4/F15", 1),
            (NonStrict, "reply", "spec:2.4/X20", 1),
            (NonStrict, "check", "spec:2.5/X15", 1),
            (NonStrict, "reply", "spec:3/P-6", 1),
            (Info, "reply", "bug:B03", 4),
        ],
    ),
    (
        "create_never_writes",
        "NeverWritesMemoryTool",
        &[
            (Fail, "check", "spec:2.2/B1", 5),
            (NonStrict, "reply", "spec:2.1/A1", 105),
            (NonStrict, "reply", "spec:2.1/C11", 2),
            (NonStrict, "reply", "spec:2.1/C7", 2),
            (NonStrict, "reply", "bug:B07", 1),
            (NonStrict, "reply", "spec:2.1/C18", 1),
            (NonStrict, "reply", "spec:2.1/C30", 1),
            (NonStrict, "reply", "spec:2.1/C6", 1),
            (NonStrict, "reply", "spec:2.1/D3", 1),
            (NonStrict, "reply", "spec:2.2/B10", 1),
            (NonStrict, "reply", "spec:2.4/F15", 1),
            (NonStrict, "reply", "spec:2.4/X20", 1),
            (NonStrict, "check", "spec:2.5/X15", 1),
            (NonStrict, "check", "spec:3.1", 1),
            (NonStrict, "check", "spec:3.1", 1),
            (NonStrict, "reply", "spec:3/P-6", 1),
            (Info, "reply", "bug:B03", 4),
        ],
    ),
    (
        "missing_as_success",
        "MissingOkMemoryTool",
        &[
            (Fail, "reply", "spec:2.1/C21", 5),
            (NonStrict, "reply", "spec:2.1/A1", 106),
            (NonStrict, "reply", "spec:2.1/C11", 2),
            (NonStrict, "reply", "spec:2.1/C7", 2),
            (NonStrict, "reply", "bug:B07", 1),
            (NonStrict, "reply", "spec:2.1/C18", 1),
            (NonStrict, "reply", "spec:2.1/C30", 1),
            (NonStrict, "reply", "spec:2.1/C6", 1),
            (NonStrict, "reply", "spec:2.1/D3", 1),
            (NonStrict, "check", "spec:2.2/B10", 1),
            (NonStrict, "reply", "spec:2.4/F15", 1),
            (NonStrict, "reply", "spec:2.4/X20", 1),
            (NonStrict, "check", "spec:2.5/X15", 1),
            (NonStrict, "reply", "spec:2.6/H5", 1),
            (NonStrict, "reply", "spec:3/P-6", 1),
            (Info, "reply", "bug:B03", 14),
        ],
    ),
];

#[test]
fn behavioural_fixture_causes() {
    let cases = certify::select(catalog::all(), &[], &["race/*".to_owned()]).unwrap();
    one_cause_each(BEHAVIOURAL, |_| cases.clone());
}
