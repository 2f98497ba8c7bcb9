//! The shipped transcripts (`fixtures/transcripts/`) graded by the stdio certifier: each
//! `Transcript::to_case()` runs against the stock SDK handlers behind their adapters, and every
//! verdict is asserted exactly. `tests/mockapi` runs a bounded set of the same transcripts
//! through the real SDK tool runners (`memcert certify --app`, four modes per SDK) and checks
//! that the two certifiers agree case by case and step by step;
//! `binary_certifies_the_python_sdk_app` there runs the others once. New transcript-level tests go here; whole-app runs go in
//! `tests/mockapi`. The `replay_*` tests run `memcert certify --replay` (transcripts as
//! regression cases against a handler, `fixtures/replay/`) through the binary.
//!
//! Where the two could differ, and why they do not for the shipped transcripts:
//! - Concurrency. The TypeScript runner runs one turn's calls concurrently; its adapter does
//!   the same with each turn of several calls, which `to_case` keeps (`Case::turns`):
//!   `one-turn-dependent` is NON-STRICT both ways when the view wins the race, PASS when the
//!   create does.
//! - Error rendering. Both adapters render a thrown error as their runner does (`repr(exc)`
//!   or a `ToolError`'s text for Python, `Error: ` + message for TypeScript), so replies match
//!   byte for byte, except where they echo a host path from `{RUN}`.

#[path = "../common/mod.rs"]
mod common;
use common::*;

use std::collections::BTreeMap;

use memcert::suite::verdict::Verdict;
use memcert::target::Target;
use memcert::text::Profile;
use memcert_app::transcript::Transcript;

fn stdio_verdicts(target: &mut dyn Target, profile: Profile) -> BTreeMap<String, Verdict> {
    let cases: Vec<_> = Transcript::builtin()
        .iter()
        .map(Transcript::to_case)
        .collect();
    run_cases(target, profile, &cases)
        .into_iter()
        .map(|r| (r.id, r.verdict))
        .collect()
}

/// The Python SDK handler: the table of `common::transcript_verdicts`, which the Python app
/// gives too (`tests/mockapi`).
#[test]
fn python_sdk_handler_over_stdio() {
    let (_dir, mut t) = sdk_target(Profile::PythonSdk);
    assert_eq!(
        stdio_verdicts(&mut t, Profile::PythonSdk),
        transcript_verdicts(Profile::PythonSdk)
    );
}

/// The TypeScript SDK handler: as Python, except that one turn's create and view of the same
/// file run concurrently (the adapter's batch, like the runner's `Promise.all`): the view
/// usually answers "does not exist", NON-STRICT, but when the create wins the race it is PASS
/// (seen in a CI run), so that one case may be either.
#[test]
fn typescript_sdk_handler_over_stdio() {
    let (_dir, mut t) = sdk_target(Profile::TypescriptSdk);
    let mut verdicts = stdio_verdicts(&mut t, Profile::TypescriptSdk);
    let expected = transcript_verdicts(Profile::TypescriptSdk);
    let racy = "app/one-turn-dependent";
    assert_eq!(expected.get(racy), Some(&Verdict::NonStrict));
    if verdicts.get(racy) == Some(&Verdict::Pass) {
        verdicts.insert(racy.to_owned(), Verdict::NonStrict);
    }
    assert_eq!(verdicts, expected);
}

/// A `--report-json` report's cases: id and verdict, in report order.
fn report_verdicts(report: &serde_json::Value) -> Vec<(String, String)> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A case's findings in a `--report-json` report: verdict, kind and detail, in report order.
fn report_findings(report: &serde_json::Value, id: &str) -> Vec<(String, String, String)> {
    let case = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap();
    case["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap().to_owned();
            (s("verdict"), s("kind"), s("detail"))
        })
        .collect()
}

/// `memcert certify ARGS --report-json <tmp>`: exit code, stdout, stderr and the report.
fn certify_json(args: &[&str]) -> (Option<i32>, String, String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let mut all = vec!["certify"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--report-json", report.to_str().unwrap()]);
    let (code, out, err) = memcert(&all);
    let json = std::fs::read_to_string(&report)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or_default();
    (code, out, err, json)
}

fn owned(rows: &[(&str, &str)]) -> Vec<(String, String)> {
    rows.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// On the reference handler a replayed transcript is a PASS case `replay/<id>`, defined by its
/// file; a folder's transcripts run in file-name order, after the catalog cases chosen.
#[test]
fn replay_runs_transcripts_as_cases_after_the_catalog() {
    let (code, out, err, json) = certify_json(&[
        "--replay",
        "fixtures/replay/insert-at-top.json",
        "--cases",
        "replay/*",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("verdict: CERTIFIED"), "{out}");
    assert_eq!(
        report_verdicts(&json),
        owned(&[("replay/insert-at-top", "PASS")])
    );
    let case = &json["cases"][0];
    assert_eq!(case["defined"], "fixtures/replay/insert-at-top.json");
    let steps: Vec<&str> = case["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["PASS", "PASS", "PASS"]);
    assert_eq!(case["findings"], serde_json::json!([]));

    // The folder, with two catalog cases: the catalog's first, then the folder's by file name;
    // every setup kind of `planted-links` is planted, and the reference passes it.
    let (code, out, err, json) = certify_json(&[
        "--replay",
        "fixtures/replay",
        "--cases",
        "replay/*",
        "--cases",
        "view/missing",
        "--cases",
        "create/new-file",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(
        report_verdicts(&json),
        owned(&[
            ("view/missing", "PASS"),
            ("create/new-file", "PASS"),
            ("replay/insert-at-top", "PASS"),
            ("replay/planted-links", "PASS"),
        ])
    );
    // --exclude leaves them out like any case.
    let (code, _, _, json) = certify_json(&[
        "--replay",
        "fixtures/replay",
        "--cases",
        "view/missing",
        "--cases",
        "replay/*",
        "--exclude",
        "replay/planted-*",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(
        report_verdicts(&json),
        owned(&[("view/missing", "PASS"), ("replay/insert-at-top", "PASS")])
    );
    // `memcert cases` lists them too.
    let (code, out, _) = memcert(&[
        "cases",
        "--replay",
        "fixtures/replay",
        "--cases",
        "replay/*",
    ]);
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "replay/insert-at-top\nreplay/planted-links\n")
    );
}

/// Against a handler with a flaw the transcript meets, the replayed case FAILs with the
/// findings the catalog would give; against the Python SDK, the planted links, FIFO and hard
/// link reach an external handler and show its known weaknesses (hard-link read, delete of an
/// in-root link acting on its target).
#[test]
fn replay_fails_a_handler_with_the_flaw_it_records() {
    let py = python();
    let (code, out, err, json) = certify_json(&[
        "--python",
        "fixtures/handlers/flawed/insert_off_by_one.py:OffByOneMemoryTool",
        "--python-exe",
        &py,
        "--replay",
        "fixtures/replay/insert-at-top.json",
        "--cases",
        "replay/*",
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("verdict: NOT CERTIFIED (1 FAIL)"), "{out}");
    assert_eq!(
        report_verdicts(&json),
        owned(&[("replay/insert-at-top", "FAIL")])
    );
    let row = |v: &str, k: &str, d: &str| (v.to_owned(), k.to_owned(), d.to_owned());
    assert_eq!(
        report_findings(&json, "replay/insert-at-top"),
        [
            row("FAIL", "reply", "step 3: line 1 reads \"one\", the file's line 1 is \"zero\""),
            row("FAIL", "check", "/memories/notes.txt holds what the conversation wrote: expected a file holding \"zero\\none\\ntwo\\n\", found a file holding \"one\\nzero\\ntwo\\n\""),
            row("NON-STRICT", "reply", "step 1: the documented reply in other words"),
            row("NON-STRICT", "reply", "step 2: the documented reply in other words"),
        ]
    );

    let (code, out, err, json) = certify_json(&[
        "--python",
        PYTHON_SDK_HANDLER,
        "--python-exe",
        &py,
        "--profile",
        "python-sdk",
        "--replay",
        "fixtures/replay",
        "--cases",
        "replay/*",
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert_eq!(
        report_verdicts(&json),
        owned(&[
            ("replay/insert-at-top", "PASS"),
            ("replay/planted-links", "UNSAFE"),
        ])
    );
    let findings = report_findings(&json, "replay/planted-links");
    let kinds: Vec<(&str, &str)> = findings
        .iter()
        .map(|(v, k, _)| (v.as_str(), k.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("UNSAFE", "outside-read"),
            ("FAIL", "reply"),
            ("FAIL", "check"),
            ("FAIL", "check")
        ]
    );
    assert_eq!(
        findings[0].2,
        "step 2: the reply holds the canary token: content or names from outside the root were read"
    );
    assert!(
        findings[1]
            .2
            .starts_with("step 2: reported success (\"Here's the content of /memories/hard.txt"),
        "{}",
        findings[1].2
    );
    assert_eq!(
        findings[2].2,
        "/memories/d is a folder: expected a directory, found nothing"
    );
    assert_eq!(
        findings[3].2,
        "/memories/d/b.txt holds what the conversation wrote: expected a file holding \"beta\\n\", found nothing"
    );
}

/// A file that does not load, two transcripts with one id, and --replay with --app are usage
/// errors: exit 2, one line, nothing run.
#[test]
fn replay_refuses_bad_files_and_app_runs_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"format": "memcert-transcript/1", "id": "x","#).unwrap();
    let (code, out, err) = memcert(&["certify", "--replay", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        format!(
            "memcert: error: --replay: {}: EOF while parsing a value at line 1 column 45\n",
            bad.display()
        )
    );
    assert_eq!(out, "", "nothing ran");

    let copy = dir.path().join("copy.json");
    std::fs::copy(root().join("fixtures/replay/insert-at-top.json"), &copy).unwrap();
    let (code, out, err) = memcert(&[
        "certify",
        "--replay",
        "fixtures/replay",
        "--replay",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        format!(
            "memcert: error: --replay: fixtures/replay/insert-at-top.json and {} have the same id \"insert-at-top\"; give each transcript its own id\n",
            copy.display()
        )
    );
    assert_eq!(out, "", "nothing ran");

    let app_line = "memcert: error: --replay runs transcripts against a handler, not with --app; give an app its transcripts with --transcripts\n";
    let memory_dir = dir.path().join("run/base/memories");
    for cmd in [&["certify"][..], &["snapshot", "--out", "snaps"][..]] {
        let mut args = cmd.to_vec();
        args.extend_from_slice(&[
            "--replay",
            "fixtures/replay",
            "--app",
            "python3 app.py",
            "--memory-dir",
            memory_dir.to_str().unwrap(),
        ]);
        let (code, out, err) = memcert(&args);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (Some(2), "", app_line),
            "{cmd:?}"
        );
    }
    assert!(!dir.path().join("run").exists(), "nothing was laid out");
    assert!(!root().join("snaps").exists(), "no --out was made");
}

/// `snapshot --replay` records the replayed cases, `certify --baseline --replay` compares them;
/// a replayed case that --cases leaves out still exists (its snapshot is not STALE, its
/// expected-failure entry not retired), while a run without --replay has no such case.
#[test]
fn replay_cases_have_snapshots_and_exist_when_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let snaps = dir.path().join("snaps");
    let snaps = snaps.to_str().unwrap();
    let (code, out, err) = memcert(&[
        "snapshot",
        "--out",
        snaps,
        "--replay",
        "fixtures/replay",
        "--cases",
        "replay/*",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let mut files: Vec<String> = std::fs::read_dir(snaps)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        ["replay__insert-at-top.snap", "replay__planted-links.snap"]
    );
    let line = |out: &str| {
        out.lines()
            .find(|l| l.starts_with("baseline ") && l.contains(" unchanged, "))
            .unwrap_or_default()
            .trim_start_matches(&format!("baseline {snaps}: "))
            .to_owned()
    };
    let (code, out, _) = memcert(&[
        "certify",
        "--baseline",
        snaps,
        "--replay",
        "fixtures/replay",
        "--cases",
        "replay/*",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(line(&out), "2 unchanged, 0 REGRESSION, 0 NEW, 0 STALE (0 not compared: race, huge file or SKIPPED; 0 snapshots of cases not run)");
    let (code, out, _) = memcert(&[
        "certify",
        "--baseline",
        snaps,
        "--replay",
        "fixtures/replay",
        "--cases",
        "view/missing",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(line(&out), "0 unchanged, 0 REGRESSION, 1 NEW, 0 STALE (0 not compared: race, huge file or SKIPPED; 2 snapshots of cases not run)");
    let (code, out, _) = memcert(&["certify", "--baseline", snaps, "--cases", "view/missing"]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(line(&out), "0 unchanged, 0 REGRESSION, 1 NEW, 2 STALE (0 not compared: race, huge file or SKIPPED; 0 snapshots of cases not run)");

    let expected = dir.path().join("expected.toml");
    std::fs::write(
        &expected,
        "[[expected]]\nid = \"replay/insert-at-top\"\nreason = \"known\"\n",
    )
    .unwrap();
    let expected = expected.to_str().unwrap();
    let retired = "replay/insert-at-top  (no case of catalog";
    let (_, out, _) = memcert(&[
        "certify",
        "--expected-failures",
        expected,
        "--replay",
        "fixtures/replay",
        "--cases",
        "view/missing",
    ]);
    assert!(!out.contains(retired), "{out}");
    let (_, out, _) = memcert(&[
        "certify",
        "--expected-failures",
        expected,
        "--cases",
        "view/missing",
    ]);
    assert!(out.contains(retired), "{out}");
}
