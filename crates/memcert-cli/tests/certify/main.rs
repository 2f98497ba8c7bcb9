//! Certifier tests (race cases apart, in `tests/race/`): the reference handler, the real Python
//! SDK handler (pinned `anthropic` 2.14.0 in `.venv`, made by `scripts/test.sh`), the real
//! TypeScript SDK handler (pinned in `adapters/node`), and handlers with known flaws in
//! `fixtures/handlers/`, each with the exact verdicts it must get; plus the binary's exit codes
//! and reports. New certifier tests go here; reply strings go in `tests/handler/`.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

#[path = "../common/mod.rs"]
mod common;
use common::*;

use memcert::attack::payloads::Field;
use memcert::certify;
use memcert::suite::catalog::{self, RunLevel};
use memcert::suite::verdict::Verdict;
use memcert::target::inproc::InProcess;
use memcert::target::stdio::Stdio;
use memcert::target::Target;
use memcert::text::Profile;

/// Run the cases matching `globs` (all but the races when empty: they have `tests/race/`).
fn run(target: &mut dyn Target, profile: Profile, globs: &[&str]) -> BTreeMap<String, Verdict> {
    let globs: Vec<String> = globs.iter().map(|s| s.to_string()).collect();
    let cases = certify::select(catalog::all(), &globs, &["race/*".to_owned()]).unwrap();
    run_cases(target, profile, &cases)
        .into_iter()
        .map(|r| (r.id, r.verdict))
        .collect()
}

/// Number of race cases (run apart, in `tests/race/`).
fn races() -> usize {
    catalog::all().iter().filter(|c| c.race.is_some()).count()
}

/// The cases this process SKIPs (`certify::skip_reason`): the permission scenarios when the
/// tests run as root, as in CI; none otherwise.
fn skipped_here() -> BTreeMap<&'static str, Verdict> {
    let ids: Vec<&'static str> = PERMISSION_CASES.to_vec();
    let cases = catalog::all();
    for id in &ids {
        let case = cases.iter().find(|c| c.id == *id).unwrap();
        assert!(case.needs_unprivileged(), "{id}");
    }
    let n = cases.iter().filter(|c| c.needs_unprivileged()).count();
    assert_eq!(n, ids.len(), "PERMISSION_CASES is incomplete");
    if certify::skip_reason(cases.iter().find(|c| c.id == ids[0]).unwrap()).is_none() {
        return BTreeMap::new();
    }
    ids.into_iter().map(|id| (id, Verdict::Skipped)).collect()
}

/// The cases that plant permission bits (SKIPPED as root).
const PERMISSION_CASES: [&str; 14] = [
    "scenario/no-permission/file/view",
    "scenario/no-permission/file/str_replace",
    "scenario/no-permission/dir/view",
    "scenario/no-permission/dir/listing",
    "scenario/read-only-dir/create",
    "scenario/read-only-dir/delete",
    "scenario/read-only-dir/rename-into",
    "hazard/unreadable-file/view",
    "hazard/unreadable-file/create",
    "hazard/unreadable-file/str_replace",
    "hazard/unreadable-file/insert",
    "hazard/unreadable-file/delete",
    "hazard/unreadable-file/rename-from",
    "hazard/unreadable-file/rename-onto",
];

/// `expected` plus the permission cases of a contained handler, which runs under another uid
/// than root whoever runs the tests (as root, it runs as `nobody`: `certify::skip_reason_for`),
/// so they always run: what `unprivileged` says (absent = PASS).
fn with_permission_cases(
    mut expected: BTreeMap<&'static str, Verdict>,
    unprivileged: &[(&'static str, Verdict)],
) -> BTreeMap<&'static str, Verdict> {
    expected.extend(unprivileged.iter().copied());
    expected
}

/// The payload cases' verdicts other than PASS and INFO, and the number of INFO.
fn payload_non_pass(v: &BTreeMap<String, Verdict>) -> (BTreeMap<String, Verdict>, usize) {
    let payload = v.iter().filter(|(k, _)| k.starts_with("payload/"));
    let info = payload
        .clone()
        .filter(|(_, v)| **v == Verdict::Info)
        .count();
    let graded = payload
        .filter(|(_, v)| !matches!(v, Verdict::Pass | Verdict::Info))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    (graded, info)
}

/// Run the payload cases of a level.
fn run_payloads(
    target: &mut dyn Target,
    profile: Profile,
    level: RunLevel,
) -> BTreeMap<String, Verdict> {
    run_cases(target, profile, &catalog::payload::cases(level))
        .into_iter()
        .map(|r| (r.id, r.verdict))
        .collect()
}

/// Both SDKs accept a sibling prefix (`/memoriesX/...`, `/memories_evil/...`) as a name inside
/// the store when creating or renaming onto it (spec:3/P-1, bug:B02): NON-STRICT, as in `path/prefix/*`.
fn sdk_prefix_non_strict() -> BTreeMap<String, Verdict> {
    let mut m = BTreeMap::new();
    for p in [
        "letter-suffix",
        "trailing-dot",
        "trailing-space",
        "underscore-sibling",
    ] {
        for f in ["create.path", "rename.new_path"] {
            m.insert(format!("payload/prefix/{p}/{f}"), Verdict::NonStrict);
        }
    }
    m
}

fn python_sdk_payload_expected() -> BTreeMap<String, Verdict> {
    sdk_prefix_non_strict()
}

fn non_pass(v: &BTreeMap<String, Verdict>) -> BTreeMap<&str, Verdict> {
    v.iter()
        .filter(|(k, v)| **v != Verdict::Pass && !k.starts_with("race/"))
        .map(|(k, v)| (k.as_str(), *v))
        .collect()
}

#[test]
fn reference_handler_refuses_or_confines_every_standard_payload_case() {
    let v = run_payloads(
        &mut InProcess::reference(Profile::Docs),
        Profile::Docs,
        RunLevel::Standard,
    );
    let (graded, info) = payload_non_pass(&v);
    assert_eq!(graded, BTreeMap::new());
    // INFO: names the reference keeps as literal names inside the store, only in the fields
    // that create a name (create.path, rename.new_path): Windows-only syntax (`C:canary.txt`,
    // `notes.md:hidden`, `CON`, `SECRE~1.MD`) and spellings no normaliser folds into a separator
    // or `..` (U+2215 DIVISION SLASH, `%u002f`, a stripped `....`).
    let info_ids: Vec<&str> = v
        .iter()
        .filter(|(_, v)| **v == Verdict::Info)
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(info, info_ids.len());
    let mut expected = vec![
        "payload/absolute/drive-relative/create.path".to_owned(),
        "payload/absolute/drive-relative/rename.new_path".to_owned(),
    ];
    for (pair, field, depths) in [
        (
            "one-dot-leaders/division-slash",
            "create.path",
            [2, 4, 6, 8],
        ),
        (
            "small-full-stops/division-slash",
            "rename.new_path",
            [1, 3, 5, 7],
        ),
        (
            "strip-four-dots/percent-u-slash",
            "create.path",
            [2, 4, 6, 8],
        ),
        (
            "strip-nested/percent-u-slash",
            "rename.new_path",
            [1, 3, 5, 7],
        ),
    ] {
        for d in depths {
            expected.push(format!("payload/traversal/{pair}/depth-{d}/{field}"));
        }
    }
    for w in ["device", "short-name", "stream"] {
        for f in ["create.path", "rename.new_path"] {
            expected.push(format!("payload/windows/{w}/{f}"));
        }
    }
    // The check/use spellings of `..` (families trim, ignorable, slug: `.. `, `.\u{200b}.`,
    // `.._`) are names like any other to a handler that trims and strips nothing: kept as
    // literal names where a name is made; a tab is a control character, refused.
    let spelled: Vec<String> = catalog::payload::pairs(RunLevel::Standard)
        .into_iter()
        .filter(|(p, f)| {
            p.spelling.is_some()
                && matches!(f, Field::CreatePath | Field::RenameNewPath)
                && !p.text.contains('\t')
        })
        .map(|(p, f)| catalog::payload::case_id(&p, f))
        .collect();
    assert_eq!(spelled.len(), 18);
    expected.extend(spelled);
    expected.sort();
    assert_eq!(info_ids, expected);
}

#[test]
fn reference_handler_passes_every_case_in_every_profile() {
    for profile in Profile::ALL {
        let v = run(&mut InProcess::reference(profile), profile, &[]);
        assert_eq!(v.len(), catalog::all().len() - races());
        assert_eq!(non_pass(&v), skipped_here(), "profile {profile}");
    }
}

/// Every verdict of the real Python SDK handler that is not PASS, with the spec row it shows
/// (the permission cases apart: [`python_sdk_expected_here`]).
fn python_sdk_expected() -> BTreeMap<&'static str, Verdict> {
    use Verdict::*;
    BTreeMap::from([
        // spec:3/S-4, spec:3/S-5, spec:3/S-6: delete and rename act on the target of an in-root link.
        ("symlink/inner-file/delete", Unsafe),
        ("symlink/inner-dir/delete", Unsafe),
        ("symlink/inner-file/rename", Unsafe),
        // spec:3/S-9: a hard link to an outside file is read (and shown in the str_replace excerpt).
        ("symlink/hardlink-outside/view", Unsafe),
        ("symlink/hardlink-outside/str_replace", Unsafe),
        // bug:B15, spec:3/S-9: the same in every command that reads it; insert rewrites the link
        // as a new file holding the outside content (outside-copied). create, delete and rename
        // act on the name.
        ("hazard/hardlink-outside/view", Unsafe),
        ("hazard/hardlink-outside/str_replace", Unsafe),
        ("hazard/hardlink-outside/insert", Unsafe),
        // bug:B17: a 64 MiB file is read whole by view, str_replace and insert (unbounded-read).
        ("hazard/huge-file/view", Fail),
        ("hazard/huge-file/str_replace", Fail),
        ("hazard/huge-file/insert", Fail),
        // spec:3/S-2, spec:3/S-4, spec:3/S-6, spec:3/S-7: an in-store link met by every command
        // (hazard/symlink-inside) as symlink/inner-file: view and edits follow it, delete and
        // rename act on its target.
        ("hazard/symlink-inside/view", Info),
        ("hazard/symlink-inside/str_replace", NonStrict),
        ("hazard/symlink-inside/insert", NonStrict),
        ("hazard/symlink-inside/delete", Unsafe),
        ("hazard/symlink-inside/rename-from", Unsafe),
        // bug:B10: a linked root met by every command (hazard/linked-root) as
        // scenario/root-symlink; rename onto an existing name is refused (PASS).
        ("hazard/linked-root/view", Unsafe),
        ("hazard/linked-root/create", Unsafe),
        ("hazard/linked-root/str_replace", Unsafe),
        ("hazard/linked-root/insert", Unsafe),
        ("hazard/linked-root/delete", Unsafe),
        ("hazard/linked-root/rename-from", Unsafe),
        // spec:3/P-14: RuntimeError("Symlink loop from '<ABS>/memories/loop'") discloses the host path.
        ("symlink/loop/view", Unsafe),
        // bug:B06: delete /memoriessub deletes /memories/sub.
        ("path/prefix/delete-real-directory", Fail),
        // spec:3/P-11: names with a newline or tab are created (listing injection).
        ("path/newline-in-name", Fail),
        ("path/tab-in-name", Fail),
        // spec:2.2/B9: create without file_text leaves an empty file behind.
        ("malformed/create/missing-file-text-leaves-nothing", Fail),
        // spec:3/P-1, bug:B06: /memoriesX and /memories_evil accepted, confined inside the root.
        ("path/prefix/letter-suffix/create", NonStrict),
        ("path/prefix/bare-suffix/create", NonStrict),
        ("path/prefix/underscore-sibling/create", NonStrict),
        ("path/prefix/backup-sibling/create", NonStrict),
        // spec:3/P-3, spec:3/P-6: ., .. and // that stay inside are accepted.
        ("path/dotdot/stays-inside", NonStrict),
        ("path/dot/inside", NonStrict),
        ("path/empty-component", NonStrict),
        ("root/view/dot", NonStrict),
        ("root/view/double-slash", NonStrict),
        ("root/view/via-parent", NonStrict),
        // spec:2.1: raw path prefix, lenient view_range, the 999,999-line off-by-one.
        ("view/dir/root-trailing-slash", NonStrict),
        ("view/file/view-range/inverted", NonStrict),
        ("view/file/view-range/start-zero", NonStrict),
        ("view/file/view-range/past-end", NonStrict),
        ("view/file/line-limit/exactly", NonStrict),
        // spec:2.2/B10, spec:2.5/X15: a trailing / on a file is ignored.
        ("create/trailing-slash", NonStrict),
        ("delete/file-trailing-slash", NonStrict),
        // spec:2.3/E4, spec:2.3/X1; spec:2.4/F8; spec:3/S-7.
        ("str_replace/multiple/same-line", NonStrict),
        ("str_replace/new-str-omitted", NonStrict),
        ("insert/text-trailing-newlines", NonStrict),
        ("symlink/inner-file/str_replace", NonStrict),
        // spec:2.6/H5, spec:2.6/H6: side effects of failed renames.
        ("rename/source-missing", NonStrict),
        ("rename/into-own-subtree", NonStrict),
        // Coercions and ignored ranges (construct_type_unchecked).
        ("malformed/view/view-range-one-item", NonStrict),
        ("malformed/view/view-range-not-list", NonStrict),
        ("malformed/view/view-range-strings", NonStrict),
        ("malformed/insert/insert-line-string", NonStrict),
        ("malformed/insert/insert-line-bool", NonStrict),
        // bug:B19, bug:B20, bug:B21 (spec:3/P-7, spec:3/P-8): encoded and look-alike names are literal names inside the store.
        ("traversal/encoded/single/create", Info),
        ("traversal/encoded/single/create-dir", Info),
        ("traversal/backslash/create", Info),
        ("traversal/unicode/fullwidth-slash/create", Info),
        // bug:B03: `/memories//<run>/x` is re-rooted inside the store (leading slashes stripped).
        ("traversal/absolute/double-slash-create", Info),
        // spec:3/S-2: view follows an in-root link.
        ("symlink/inner-file/view", Info),
        // bug:B10: a store root that is a link to the outside is resolved and used: the listing
        // shows the outside, create, str_replace, delete and rename act on it.
        ("scenario/root-symlink/view", Unsafe),
        ("scenario/root-symlink/create", Unsafe),
        ("scenario/root-symlink/str_replace", Unsafe),
        ("scenario/root-symlink/delete", Unsafe),
        ("scenario/root-symlink/rename", Unsafe),
        // spec:2.1/D3: a name that is not UTF-8 is listed lossily (`bad\u{fffd}.txt`).
        ("scenario/non-utf8-name/listing", NonStrict),
        // bug:B10: a store root that is a regular file is shown as the store's content by view.
        ("scenario/root-file/view", Fail),
    ])
}

/// [`python_sdk_expected`] with the permission cases: as another user than root, a folder it may
/// not list is shown empty (no error); the others are refused with a bare
/// `PermissionError(13, 'Permission denied')`.
fn python_sdk_expected_here() -> BTreeMap<&'static str, Verdict> {
    with_permission_cases(
        python_sdk_expected(),
        &[("scenario/no-permission/dir/view", Verdict::NonStrict)],
    )
}

#[test]
fn python_sdk_handler_gets_exactly_the_expected_verdicts() {
    for spec in [
        PYTHON_SDK_HANDLER,
        "anthropic.tools:BetaAsyncLocalFilesystemMemoryTool",
    ] {
        let (_dir, mut t) = python_target(spec, Duration::from_secs(20));
        let v = run(&mut t, Profile::PythonSdk, &[]);
        assert_eq!(v.len(), catalog::all().len() - races());
        assert_eq!(non_pass(&v), python_sdk_expected_here(), "{spec}");
        // The plain wording cases pass.
        for id in [
            "view/dir/nested",
            "view/dir/sizes",
            "view/file/trailing-newline",
            "view/missing",
            "view/file/line-limit/over",
            "create/new-file",
            "create/existing-file",
            "str_replace/success",
            "str_replace/not-found-text",
            "str_replace/multiple/different-lines",
            "insert/at-top",
            "insert/past-end",
            "delete/file",
            "delete/missing",
            "rename/file",
            "rename/destination-exists",
            "root/delete/plain",
            "root/rename/plain",
        ] {
            assert_eq!(v[id], Verdict::Pass, "{spec}: {id}");
        }
    }
}

#[test]
fn handler_that_escapes_through_dotdot_is_unsafe() {
    let (_dir, mut t) = python_target(
        "fixtures/handlers/flawed/naive_join.py:NaiveJoinMemoryTool",
        Duration::from_secs(20),
    );
    let v = run(
        &mut t,
        Profile::Docs,
        &["traversal/dotdot/*", "traversal/deep/*", "create/new-file"],
    );
    for (id, verdict) in &v {
        let want = match id.as_str() {
            "create/new-file" => Verdict::Pass,
            // `/memories/a/..` is the root itself: the naive create fails on the directory.
            "traversal/dotdot/create-trailing" => Verdict::Pass,
            _ => Verdict::Unsafe,
        };
        assert_eq!(*verdict, want, "{id}");
    }
    assert_eq!(v.len(), 26);
}

#[test]
fn handler_that_never_sets_is_error_fails_every_error_case() {
    let (_dir, mut t) = python_target(
        "fixtures/handlers/never_is_error.py:NoErrorFlagMemoryTool",
        Duration::from_secs(20),
    );
    let v = run(
        &mut t,
        Profile::PythonSdk,
        &[
            "view/missing",
            "delete/missing",
            "rename/destination-exists",
            "view/file/trailing-newline",
            "create/new-file",
        ],
    );
    assert_eq!(
        v,
        want([
            ("create/new-file", Verdict::Pass),
            ("delete/missing", Verdict::Fail),
            ("rename/destination-exists", Verdict::Fail),
            ("view/file/trailing-newline", Verdict::Pass),
            ("view/missing", Verdict::Fail),
        ])
    );
}

#[test]
fn hanging_handler_is_error_and_the_run_goes_on() {
    let (_dir, mut t) = python_target(
        "fixtures/handlers/hang.py:HangingViewMemoryTool",
        Duration::from_secs(1),
    );
    let v = run(
        &mut t,
        Profile::PythonSdk,
        &[
            "view/missing",
            "create/new-file",
            "view/file/empty",
            "delete/file",
        ],
    );
    assert_eq!(
        v,
        want([
            ("create/new-file", Verdict::Pass),
            ("delete/file", Verdict::Pass),
            ("view/file/empty", Verdict::Error),
            ("view/missing", Verdict::Error),
        ])
    );
}

// See: issue 15 ("the timeout tax"): the reports name the cases that hit --timeout.
#[test]
fn the_reports_name_the_cases_that_timed_out() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let md = dir.path().join("r.md");
    let py = python();
    let out = memcert(&[
        "certify",
        "--python",
        "fixtures/handlers/hang.py:HangingViewMemoryTool",
        "--python-exe",
        &py,
        "--profile",
        "python-sdk",
        "--jobs",
        "1",
        "--timeout",
        "2",
        "--cases",
        "view/missing",
        "--cases",
        "create/new-file",
        "--cases",
        "view/file/empty",
        "--report-json",
        json.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        report["summary"]["timed_out"],
        serde_json::json!(["view/file/empty", "view/missing"])
    );
    assert_eq!(report["summary"]["timeout_ms"], 2000);
    let line = "timed out (--timeout 2 s): 2 cases: view/file/empty, view/missing\n";
    assert!(stdout.contains(line), "{stdout}");
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(markdown.contains(line), "{markdown}");
}

#[test]
fn raw_handlers_that_print_garbage_or_exit_are_error() {
    for script in [
        "fixtures/handlers/raw_garbage.py",
        "fixtures/handlers/raw_exit.py",
    ] {
        let mut cmd = Command::new("python3");
        cmd.arg(root().join(script));
        let mut t = Stdio::new(cmd, Duration::from_secs(5));
        let v = run(&mut t, Profile::Docs, &["view/missing", "delete/missing"]);
        assert_eq!(
            v,
            want([
                ("delete/missing", Verdict::Error),
                ("view/missing", Verdict::Error)
            ]),
            "{script}"
        );
    }
}

fn memcert(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_memcert"))
        .args(args)
        // --sarif locations are relative to it when set; the tests expect the repository.
        .env_remove("GITHUB_WORKSPACE")
        .current_dir(root())
        .output()
        .unwrap()
}

#[test]
fn binary_exit_codes_and_json_report() {
    let out = memcert(&["certify", "--cases", "view/*"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("verdict: CERTIFIED"));

    // The acceptance run of the core issue, as a user types it, on the whole catalog.
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let py = python();
    let out = memcert(&[
        "certify",
        "--python",
        PYTHON_SDK_HANDLER,
        "--python-exe",
        &py,
        "--profile",
        "python-sdk",
        "--level",
        "standard",
        "--exclude",
        "race/*",
        "--report-json",
        report.to_str().unwrap(),
        "--junit",
        dir.path().join("r.xml").to_str().unwrap(),
        "--markdown",
        dir.path().join("r.md").to_str().unwrap(),
    ]);
    let standard = catalog::for_level(RunLevel::Standard).len() - races();
    let xml = std::fs::read_to_string(dir.path().join("r.xml")).unwrap();
    // One test case per case, after the `causes` suite (one per cause, asserted in
    // tests/causes).
    let cases_xml = xml.split("</testsuite>").skip(1).collect::<String>();
    assert!(xml.contains("<testsuite name=\"causes\""), "{xml}");
    assert_eq!(cases_xml.matches("<testcase ").count(), standard);
    assert_eq!(
        cases_xml.matches("<failure ").count(),
        30,
        "22 UNSAFE and 8 FAIL"
    );
    assert!(
        xml.contains(r#"<testcase name="symlink/inner-file/delete" classname="memcert.symlink""#)
    );
    let md = std::fs::read_to_string(dir.path().join("r.md")).unwrap();
    assert!(md.starts_with("## memcert certify\n\n**NOT CERTIFIED** (fail on UNSAFE, ERROR, FAIL: 22 UNSAFE, 8 FAIL): `anthropic.tools:BetaLocalFilesystemMemoryTool"), "{md}");
    assert!(
        md.contains("| UNSAFE | `symlink/inner-file/delete` |"),
        "{md}"
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Causes and counts by default: the case shows as a cause's example.
    assert!(
        stdout.contains("     example: symlink/inner-file/delete (1 step)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("verdict: NOT CERTIFIED (22 UNSAFE, 8 FAIL)"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["summary"]["total"], standard);
    let all: BTreeMap<String, Verdict> = json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let v = Verdict::ALL
                .into_iter()
                .find(|v| c["verdict"] == v.as_str())
                .unwrap();
            (c["id"].as_str().unwrap().to_owned(), v)
        })
        .collect();
    assert_eq!(
        payload_non_pass(&all),
        (python_sdk_payload_expected(), 457),
        "the payload cases of the standard level"
    );
    let verdicts: BTreeMap<&str, Verdict> = json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            let id = c["id"].as_str().unwrap();
            c["verdict"] != "PASS" && !id.starts_with("race/") && !id.starts_with("payload/")
        })
        .map(|c| {
            let v = Verdict::ALL
                .into_iter()
                .find(|v| c["verdict"] == v.as_str())
                .unwrap();
            (c["id"].as_str().unwrap(), v)
        })
        .collect();
    assert_eq!(verdicts, python_sdk_expected_here());
    let case = json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "symlink/inner-file/delete")
        .unwrap();
    assert_eq!(
        case["steps"][0]["reply"]["content"],
        "Successfully deleted /memories/inner_link"
    );
    assert_eq!(case["findings"][0]["kind"], "check");

    let out = memcert(&[
        "certify",
        "--python",
        "fixtures/handlers/nope.py:Missing",
        "--python-exe",
        &py,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be started"));

    let out = memcert(&["certify", "--cases", "no-such-case/*"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `base64(sha256(text))`, as a Content-Security-Policy hash source spells it (python3, which
/// the tests here need anyway).
fn csp_hash(text: &str) -> String {
    use std::io::Write as _;
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import base64, hashlib, sys; \
             print(base64.b64encode(hashlib.sha256(sys.stdin.buffer.read()).digest()).decode())",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn html_report_is_one_offline_page() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.html");
    let out = memcert(&[
        "certify",
        "--level",
        "quick",
        "--exclude",
        "race/*",
        "--html",
        path.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">\n"));
    assert!(html.ends_with("</body>\n</html>\n"));
    assert_eq!(html.matches("<html").count(), 1);
    assert_eq!(html.matches("</html>").count(), 1);
    // Links only within the page (a case's sources to the embedded "Rules cited", the causes
    // to their lists and their cases).
    assert_eq!(
        html.matches("href=").count(),
        ["href=\"#cite-", "href=\"#cause-", "href=\"#case-"]
            .iter()
            .map(|l| html.matches(l).count())
            .sum::<usize>()
    );
    assert!(html.contains("<h2>Causes</h2>"));
    assert!(html.contains("<h2>Rules cited</h2>"));
    for external in ["http://", "https://", "src=", "url("] {
        assert!(!html.contains(external), "{external}");
    }
    let n = catalog::for_level(RunLevel::Quick).len() - races();
    // Four INFO kept as literal names inside the store: a Windows-only name, and the check/use
    // spellings ` ..`, `\u{200b}..` and `.\u{200c}.` where a name is made (quick picks them in
    // create.path or rename.new_path); the permission cases SKIPPED when run as root.
    let skipped = skipped_here().len();
    assert!(html.contains(&format!(
        "<tr class=\"total\"><th>total</th><td>{}</td><td>0</td><td>4</td><td>0</td><td>0</td>\
<td>0</td><td>{skipped}</td></tr>\n",
        n - 4 - skipped
    )));
    assert_eq!(html.matches("<details class=\"case\" ").count(), n);
    // The Content-Security-Policy allows the page's one style sheet and one script by hash.
    let inner = |tag: &str| {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        assert_eq!(html.matches(&open).count(), 1, "{tag}");
        let start = html.find(&open).unwrap() + open.len();
        html[start..start + html[start..].find(&close).unwrap()].to_owned()
    };
    assert!(html.contains(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
style-src 'sha256-{}'; script-src 'sha256-{}'; base-uri 'none'; form-action 'none'\">",
        csp_hash(&inner("style")),
        csp_hash(&inner("script"))
    )));
}

#[test]
fn python_handlers_built_by_factories_or_with_extra_arguments() {
    let py = python();
    let certify = |spec: &str, init: Option<&str>| {
        let spec = format!("fixtures/handlers/constructors.py:{spec}");
        let mut args = vec![
            "certify",
            "--python",
            &spec,
            "--python-exe",
            &py,
            "--profile",
            "python-sdk",
            "--cases",
            "view/dir/*",
        ];
        if let Some(init) = init {
            args.extend(["--python-init", init]);
        }
        let out = memcert(&args);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (spec, init) in [
        ("make_handler", None),
        ("make_async_handler", None),
        ("make_with_quota", Some(r#"{"quota": 3}"#)),
        ("NeedsQuota", Some(r#"{"quota": 3}"#)),
    ] {
        let (code, stdout, _) = certify(spec, init);
        assert_eq!(code, Some(0), "{spec}: {stdout}");
        assert!(stdout.contains("cases: 8    jobs: "), "{spec}: {stdout}");
    }
    let forms = "accepted forms are 'path/to/file.py:ClassName' and 'package.module:ClassName', naming a subclass of anthropic.tools.BetaAbstractMemoryTool or anthropic.tools.BetaAsyncAbstractMemoryTool built with base_path= (add other constructor arguments with --python-init JSON), or 'path/to/file.py:make_handler', a function that takes the base directory and returns such a handler (it may be async).";
    let (code, stdout, stderr) = certify("NeedsQuota", None);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(
        stderr,
        format!("memcert: error: the handler cannot be started: Cannot build handler 'fixtures/handlers/constructors.py:NeedsQuota': TypeError(\"NeedsQuota.__init__() missing 1 required positional argument: 'quota'\"); {forms}\n")
    );
    let (code, _, stderr) = certify("make_nothing", None);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!("memcert: error: the handler cannot be started: Cannot use handler 'fixtures/handlers/constructors.py:make_nothing': the factory 'fixtures/handlers/constructors.py:make_nothing' returned NoneType, not a BetaAbstractMemoryTool or BetaAsyncAbstractMemoryTool instance; {forms}\n")
    );
}

#[test]
fn python_constructors_without_base_path_run_with_placeholders_or_a_module_root() {
    // fixtures/handlers/constructors.py: StoreRoot(root: Path), BaseDirUser(base_dir, user_id),
    // ModuleRooted() over the module-level MEMORY_ROOT; each refuses any other arguments, so a
    // clean run shows the flags reached them as written. They are the SDK's class underneath:
    // the same 8 cases, certified.
    let py = python();
    let certify = |spec: &str, extra: &[&str]| {
        let spec = format!("fixtures/handlers/constructors.py:{spec}");
        let mut args = vec![
            "certify",
            "--python",
            &spec,
            "--python-exe",
            &py,
            "--profile",
            "python-sdk",
            "--cases",
            "view/dir/*",
        ];
        args.extend(extra);
        let out = memcert(&args);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (spec, extra) in [
        (
            "StoreRoot",
            &["--python-init", r#"{"root": "{store}"}"#][..],
        ),
        (
            "BaseDirUser",
            &[
                "--python-init",
                r#"{"base_dir": "{base}", "user_id": "alice"}"#,
            ][..],
        ),
        (
            "ModuleRooted",
            &["--python-set", "constructors:MEMORY_ROOT={store}"][..],
        ),
        // A placeholder inside a longer string, and a factory given --python-set as well.
        (
            "ModuleRooted",
            &["--python-set", "constructors:MEMORY_ROOT={base}/memories"][..],
        ),
        (
            "make_handler",
            &["--python-set", "constructors:MEMORY_ROOT={store}"][..],
        ),
    ] {
        let (code, stdout, stderr) = certify(spec, extra);
        assert_eq!(code, Some(0), "{spec} {extra:?}: {stdout}{stderr}");
        assert!(stdout.contains("cases: 8    jobs: "), "{spec}: {stdout}");
        assert!(
            stdout.contains("verdict: CERTIFIED"),
            "{spec} {extra:?}: {stdout}"
        );
    }

    // Without the flags: exit 2, and the error names the flags and shows the factory form.
    let (code, stdout, stderr) = certify("StoreRoot", &[]);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(
        stderr,
        "memcert: error: the handler cannot be started: Cannot use handler 'fixtures/handlers/constructors.py:StoreRoot': the constructor of 'StoreRoot' takes no base_path= keyword argument, which memcert uses to give each test case a fresh directory; give the constructor its folder with --python-init, where {base} is the case's base folder and {store} its memories folder (then base_path= is not passed): --python-init '{\"root\": \"{store}\"}'; set a module-level root with --python-set 'MODULE:ATTR={store}' (at every reset, before the handler is built); or write a factory, 'path/to/file.py:make_handler':\n    def make_handler(base_dir):\n        return StoreRoot(root=os.path.join(base_dir, \"memories\"))\n"
    );
    let (code, _, stderr) = certify("ModuleRooted", &[]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "memcert: error: the handler cannot be started: Cannot use handler 'fixtures/handlers/constructors.py:ModuleRooted': the constructor of 'ModuleRooted' takes no base_path= keyword argument, which memcert uses to give each test case a fresh directory; it takes no arguments: if it keeps its root in a module-level variable, set it at every reset, before the handler is built, with --python-set 'constructors:ATTR={store}' ({store} is the case's memories folder, {base} its base folder); or write a factory, 'path/to/file.py:make_handler':\n    def make_handler(base_dir):\n        constructors.ATTR = os.path.join(base_dir, \"memories\")\n        return ModuleRooted()\n"
    );
    // A wrong value reaches the constructor, which refuses: exit 2 with its own words.
    let (code, _, stderr) = certify(
        "BaseDirUser",
        &[
            "--python-init",
            r#"{"base_dir": "{store}", "user_id": "bob"}"#,
        ],
    );
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("Cannot build handler 'fixtures/handlers/constructors.py:BaseDirUser': ValueError(\"unexpected arguments "),
        "{stderr}"
    );
    assert!(stderr.contains(", 'bob'\")"), "{stderr}");
    // A malformed --python-set stops before anything starts.
    let (code, _, stderr) = certify("ModuleRooted", &["--python-set", "constructors=x"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "memcert: error: --python-set \"constructors=x\" is not MODULE:ATTR=VALUE, e.g. 'my_mod:MEMORY_ROOT={store}'\n"
    );
}

#[test]
fn the_target_names_the_sdk_and_interpreter_the_handler_runs_on() {
    // The adapter's hello names the anthropic version and the interpreter; every report's
    // target line shows them, so reports from two SDK versions can be told apart.
    let py = python();
    let version = Command::new(&py)
        .args([
            "-c",
            "import importlib.metadata as m, platform; print(m.version('anthropic'), platform.python_implementation(), platform.python_version())",
        ])
        .output()
        .unwrap();
    let words = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    let mut words = words.split(' ');
    let (sdk, imp, ver) = (
        words.next().unwrap().to_owned(),
        words.next().unwrap().to_owned(),
        words.next().unwrap().to_owned(),
    );
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = memcert(&[
        "certify",
        "--python",
        PYTHON_SDK_HANDLER,
        "--python-exe",
        &py,
        "--profile",
        "python-sdk",
        "--cases",
        "view/dir/empty-root",
        "--report-json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let want = format!("{PYTHON_SDK_HANDLER} (python adapter, {py}, anthropic {sdk}, {imp} {ver})");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["summary"]["target"], want.as_str());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&want),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn the_python_sdk_is_certified_with_its_expected_failures_listed() {
    // fixtures/expected/python-sdk.toml lists the Python SDK's known faults (including the
    // races, whose view half leaks only on some runs: the glob keeps the entry from going
    // stale). With it the SDK handler certifies; nothing in the list is stale.
    let py = python();
    let out = memcert(&[
        "certify",
        "--python",
        PYTHON_SDK_HANDLER,
        "--python-exe",
        &py,
        "--profile",
        "python-sdk",
        "--level",
        "quick",
        "--exclude",
        "payload/*",
        "--expected-failures",
        "fixtures/expected/python-sdk.toml",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("verdict: CERTIFIED (no UNSAFE, ERROR or FAIL outside "),
        "{stdout}"
    );
    assert!(!stdout.contains("STALE"), "{stdout}");
    assert!(!stdout.contains("matched no case"), "{stdout}");
}

#[test]
fn a_handler_with_a_store_of_its_own_runs_black_box() {
    // fixtures/handlers/own_folder.py ignores base_path and keeps its files in a folder of its
    // own. Run as usual, the planted files are missing and its own folder (in the watched
    // TMPDIR) changes: the verdicts are wrong. With --memory-dir-unknown, files are planted
    // through its own create commands, what create cannot make is SKIPPED, and the grades are
    // those of the SDK class it wraps (python_sdk_expected: the same three path FAILs).
    let dir = tempfile::tempdir().unwrap();
    let py = python();
    let run = |black_box: bool| {
        let report = dir.path().join(format!("bb-{black_box}.json"));
        let mut args = vec![
            "certify",
            "--python",
            "fixtures/handlers/own_folder.py:OwnFolder",
            "--python-exe",
            &py,
            "--profile",
            "python-sdk",
            "--level",
            "quick",
            "--exclude",
            "payload/*",
            "--report-json",
            report.to_str().unwrap(),
        ];
        if black_box {
            args.push("--memory-dir-unknown");
        }
        let out = memcert(&args);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        (out.status.code(), json)
    };
    let (code, json) = run(false);
    assert_eq!(code, Some(1));
    assert!(json["summary"]["counts"]["FAIL"].as_u64().unwrap() > 20);
    let (code, json) = run(true);
    assert_eq!(code, Some(1));
    let graded: BTreeMap<&str, &str> = json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            !matches!(
                c["verdict"].as_str(),
                Some("PASS" | "NON-STRICT" | "INFO" | "SKIPPED")
            )
        })
        .map(|c| (c["id"].as_str().unwrap(), c["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(
        graded,
        BTreeMap::from([
            ("path/newline-in-name", "FAIL"),
            ("path/prefix/delete-real-directory", "FAIL"),
            ("path/tab-in-name", "FAIL"),
        ])
    );
    let skipped: Vec<&str> = json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "SKIPPED")
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(skipped.len(), 87 + 77);
    // Links (the twin links of `alias/*/link-*` too), FIFOs, races, the planted scenarios
    // (sockets, modes, raw names, a replaced root, 5,000 files), the planted hazards (all but
    // `hazard/deep-folder/*`, whose chain is planted through create), bytes that are not UTF-8,
    // and the two root cases that name the empty folder they plant (`/memories/deep/..`).
    for id in &skipped {
        assert!(
            id.starts_with("symlink/")
                || id.starts_with("race/")
                || id.starts_with("scenario/")
                || id.starts_with("hazard/")
                || id.ends_with("/fifo")
                || id.ends_with("/not-utf8")
                || (id.starts_with("alias/") && id.contains("/link-"))
                || ["root/delete/dotdot", "root/rename/onto-root"].contains(id),
            "{id}"
        );
    }
    let race = json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "race/swap-dir/view")
        .unwrap();
    assert_eq!(
        race["findings"][0]["detail"],
        "a race swaps folders on disk; the handler's store is not on the filesystem (black-box mode)"
    );
}

#[test]
fn expected_failures_excuse_known_faults_and_cannot_go_stale() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("xfail.toml");
    let py = python();
    let certify = |list: &std::path::Path, globs: &[&str]| {
        let mut args = vec![
            "certify",
            "--python",
            PYTHON_SDK_HANDLER,
            "--python-exe",
            &py,
            "--profile",
            "python-sdk",
            "--level",
            "quick",
            "--expected-failures",
            list.to_str().unwrap(),
        ];
        for g in globs {
            args.extend(["--cases", g]);
        }
        memcert(&args)
    };
    // The Python SDK's six UNSAFE symlink cases (spec:3/S-4, spec:3/S-5, spec:3/S-6, hard links, the loop's host
    // path), excused.
    std::fs::write(
        &list,
        "[[expected]]\nid = \"symlink/inner-*\"\nreason = \"deletes and moves link targets\"\n\n\
         [[expected]]\nid = \"symlink/hardlink-outside/*\"\nreason = \"writes through hard links\"\n\n\
         [[expected]]\nid = \"symlink/loop/view\"\nreason = \"host path in the loop error\"\n\n\
         [[expected]]\nid = \"rename/*\"\nreason = \"not in this run\"\n",
    )
    .unwrap();
    let out = certify(&list, &["symlink/*"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "\nEXPECTED FAILURES (6)\n  symlink/loop/view                                UNSAFE host path in the loop error\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "expected-failure entries that matched no case of this run (1):\n  rename/*\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.ends_with(
            "verdict: CERTIFIED (no UNSAFE, ERROR or FAIL outside 6 expected failures)\n"
        ),
        "{stdout}"
    );
    // An entry whose cases pass is stale and fails the run.
    std::fs::write(
        &list,
        "[[expected]]\nid = \"view/missing\"\nreason = \"was broken once\"\n",
    )
    .unwrap();
    let out = certify(&list, &["view/missing"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("STALE expected failures (1): these entries' cases all pass now; remove them\n  view/missing\n"), "{stdout}");
    assert!(
        stdout.ends_with("verdict: NOT CERTIFIED (1 stale expected-failure entry)\n"),
        "{stdout}"
    );
    // A malformed list is a usage error before anything runs.
    std::fs::write(&list, "[[expected]]\nid = \"view/*\"\n").unwrap();
    let out = certify(&list, &["view/missing"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("missing field `reason`"), "{stderr}");
    assert!(out.stdout.is_empty());
}

/// An expected-failures list records the catalog it was made for (`catalog = "..."`): another
/// catalog is one warning line on stderr and a note in the reports, an entry whose id no case
/// of the catalog has is named as retired or renamed, a list without `catalog` is read as made
/// for an unknown catalog without a warning, and a malformed version is a one-line usage error.
// See: issue 11 ("verdicts you can trust"), catalog version in expected-failures files.
#[test]
fn expected_failures_name_their_catalog_and_warn_once_when_it_is_another() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("xfail.toml");
    let md = dir.path().join("r.md");
    let entries = "[[expected]]\nid = \"view/retired-case\"\nreason = \"renamed since\"\n\n\
                   [[expected]]\nid = \"rename/*\"\nreason = \"not in this run\"\n";
    let certify = |text: &str| {
        std::fs::write(&list, text).unwrap();
        memcert(&[
            "certify",
            "--cases",
            "view/missing",
            "--expected-failures",
            list.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ])
    };
    let note = format!(
        "the expected-failures list was made for catalog 2026.11.1, but this memcert runs catalog {}; see CHANGELOG.md for the cases added, retired or changed in verdict between them",
        memcert::suite::CATALOG_VERSION
    );
    let out = certify(&format!("catalog = \"2026.11.1\"\n\n{entries}"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(
        warnings,
        [format!(
            "memcert: warning: --expected-failures {} was made for catalog 2026.11.1, but this memcert runs catalog {}; see CHANGELOG.md for the cases added, retired or changed in verdict between them",
            list.display(),
            memcert::suite::CATALOG_VERSION
        )]
    );
    assert!(
        stdout.contains(&format!(
            "\n{note}\n\nexpected-failure entries that matched no case of this run (2):\n  view/retired-case  (no case of catalog {} has this id: retired or renamed, see CHANGELOG.md)\n  rename/*\n",
            memcert::suite::CATALOG_VERSION
        )),
        "{stdout}"
    );
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(
        markdown.contains(&format!("\n**Catalog:** {note}\n")),
        "{markdown}"
    );

    // The running catalog, or none (a list written by hand before the key existed): no warning.
    for head in [
        format!("catalog = \"{}\"\n\n", memcert::suite::CATALOG_VERSION),
        String::new(),
    ] {
        let out = certify(&format!("{head}{entries}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}");
        assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));
        assert!(!stdout.contains("was made for catalog"), "{stdout}");
        assert!(!std::fs::read_to_string(&md)
            .unwrap()
            .contains("**Catalog:**"));
    }

    // A malformed version: one line, exit 2, nothing run.
    let out = certify(&format!("catalog = \"2026.13.1\"\n{entries}"));
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "memcert: error: --expected-failures {}: catalog: \"2026.13.1\" is not a catalog version (YEAR.MONTH.N, such as {})\n",
            list.display(),
            memcert::suite::CATALOG_VERSION
        )
    );
}

#[test]
fn a_timeout_stops_the_whole_process_group_behind_a_wrapper_shell() {
    // The handler runs behind `sh -c` (as with npx or uv run): killing only the shell would leave
    // it running.
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let script = root().join("fixtures/handlers/raw_hang.py");
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(format!(
        "python3 '{}' '{}'",
        script.display(),
        pids.display()
    ));
    // Uncontained: the process group alone must do it (contained, the handler's PID namespace
    // kills everything; tests/hostile).
    let mut t =
        Stdio::new(cmd, Duration::from_millis(500)).contained(memcert::contain::Policy::off());
    let v = run(&mut t, Profile::Docs, &["view/missing", "delete/missing"]);
    assert_eq!(
        v,
        want([
            ("delete/missing", Verdict::Error),
            ("view/missing", Verdict::Error)
        ])
    );
    drop(t);
    let started: Vec<String> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(started.len(), 2, "one handler per timed-out case");
    std::thread::sleep(Duration::from_millis(200));
    for pid in started {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie that is no longer running.
        assert!(
            state.is_empty() || state.contains(") Z"),
            "handler {pid} still runs: {state}"
        );
    }
}

#[test]
fn binary_refuses_bad_flags_before_running() {
    let out = memcert(&["certify", "--timeout", "1e20"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--timeout must be between 0.01 and 86400 seconds"));
    let out = memcert(&["certify", "--report-json", "/nonexistent-dir/r.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("cannot write the JSON report /nonexistent-dir/r.json"));
    assert!(out.stdout.is_empty(), "nothing ran");
    let out = memcert(&["certify", "--html", "/nonexistent-dir/r.html"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("cannot write the HTML report /nonexistent-dir/r.html"));
    assert!(out.stdout.is_empty(), "nothing ran");
    let out = memcert(&["certify", "--stdio", "python3 'unterminated"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--stdio: cannot split the command line"));
}

#[test]
fn stdio_command_lines_are_split_like_a_shell() {
    // A quoted path with a space reaches the handler as one argument.
    let dir = tempfile::tempdir().unwrap();
    let spaced = dir.path().join("my handler.py");
    std::fs::copy(root().join("fixtures/handlers/raw_exit.py"), &spaced).unwrap();
    let out = memcert(&[
        "certify",
        "--stdio",
        &format!("python3 '{}'", spaced.display()),
        "--cases",
        "view/missing",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("target:  raw_exit"), "{stdout}");
    assert!(
        stdout.contains("the handler exited (exit status: 3)"),
        "{stdout}"
    );
}

/// The Node adapter's pinned SDK (`adapters/node/node_modules`, made by scripts/test.sh).
/// Every verdict of the real TypeScript SDK handler that is not PASS, with the spec row it shows
/// (the permission cases apart: [`typescript_sdk_expected_here`]).
fn typescript_sdk_expected() -> BTreeMap<&'static str, Verdict> {
    use Verdict::*;
    BTreeMap::from([
        // spec:3.1: the runner runs one turn's calls concurrently (Promise.all). The
        // str_replace and view after a create in the same turn fail; concurrent edits of one
        // file are lost updates (each reported as done). `batch/create-twice` races and is
        // checked on its own.
        ("batch/create-edit-view", NonStrict),
        ("batch/insert-three-at-top", Fail),
        ("batch/two-edits-one-file", Fail),
        // bug:B07, spec:2.1/C23, spec:2.2/B8, spec:2.6/H6, spec:2.6/H13, spec:3/P-9, spec:3/P-10, spec:3/P-14: raw Node errors
        // (ENOTDIR, EINVAL, ENAMETOOLONG, ELOOP, the NUL-byte error) carry the host path.
        ("view/missing/parent-is-file", Unsafe),
        ("create/parent-is-file", Unsafe),
        ("rename/into-own-subtree", Unsafe),
        ("rename/destination-parent-is-file", Unsafe),
        ("path/long/component", Unsafe),
        ("path/long/path", Unsafe),
        ("traversal/nul/view", Unsafe),
        ("traversal/nul/create", Unsafe),
        ("symlink/loop/view", Unsafe),
        // spec:3/S-9: a hard link to an outside file is read.
        ("symlink/hardlink-outside/view", Unsafe),
        ("symlink/hardlink-outside/str_replace", Unsafe),
        // spec:2.1/C25, spec:2.3/X12: non-UTF-8 files shown and rewritten with U+FFFD.
        ("view/file/not-utf8", Fail),
        ("str_replace/not-utf8", Fail),
        // spec:2.3/E4, spec:2.3/E6: line-by-line matching (two on one line succeed, multi-line never).
        ("str_replace/multiple/same-line", Fail),
        ("str_replace/multiline-old-str", Fail),
        // spec:2.4/F3: insert at n+1 succeeds.
        ("insert/past-end", Fail),
        // bug:B06, spec:3/P-11, spec:2.2/B9: as the Python SDK.
        ("path/prefix/delete-real-directory", Fail),
        ("path/newline-in-name", Fail),
        ("path/tab-in-name", Fail),
        ("malformed/create/missing-file-text-leaves-nothing", Fail),
        // spec:2.1/X18, spec:2.1/X21, spec:2.3/X24, spec:2.4/F14, spec:2.4/F16: mistyped fields used as they come.
        ("malformed/view/view-range-float", Fail),
        ("malformed/view/view-range-string-item", Fail),
        ("malformed/str_replace/new-str-number", Fail),
        ("malformed/insert/missing-insert-line", Fail),
        ("malformed/insert/insert-line-float", Fail),
        // spec:2.4/F4: the range counts the empty line after a final newline ([0, 4]).
        ("insert/negative", NonStrict),
        ("insert/huge-line", NonStrict),
        // spec:2.4/F6: the file keeps its missing final newline.
        ("insert/no-final-newline", NonStrict),
        // spec:2.3/X1: writes the text "undefined" for a missing new_str.
        ("str_replace/new-str-omitted", NonStrict),
        // spec:2.6/X17: rename onto a dangling link replaces the link.
        ("symlink/dangling-outside/rename-onto", NonStrict),
        // The rest as the Python SDK: prefix, aliases, trailing slashes, lenient ranges.
        ("view/dir/root-trailing-slash", NonStrict),
        ("view/file/view-range/inverted", NonStrict),
        ("view/file/view-range/start-zero", NonStrict),
        ("view/file/view-range/past-end", NonStrict),
        ("view/file/line-limit/exactly", NonStrict),
        ("create/trailing-slash", NonStrict),
        ("delete/file-trailing-slash", NonStrict),
        ("rename/source-missing", NonStrict),
        ("root/view/dot", NonStrict),
        ("root/view/double-slash", NonStrict),
        ("root/view/via-parent", NonStrict),
        ("path/prefix/letter-suffix/create", NonStrict),
        ("path/prefix/bare-suffix/create", NonStrict),
        ("path/prefix/underscore-sibling/create", NonStrict),
        ("path/prefix/backup-sibling/create", NonStrict),
        ("path/dotdot/stays-inside", NonStrict),
        ("path/dot/inside", NonStrict),
        ("path/empty-component", NonStrict),
        ("symlink/inner-file/str_replace", NonStrict),
        ("malformed/view/view-range-not-list", NonStrict),
        ("malformed/view/view-range-one-item", NonStrict),
        ("malformed/view/view-range-strings", NonStrict),
        ("malformed/insert/insert-line-string", NonStrict),
        ("malformed/insert/insert-line-bool", NonStrict),
        ("traversal/absolute/double-slash-create", Info),
        ("traversal/encoded/single/create", Info),
        ("traversal/encoded/single/create-dir", Info),
        ("traversal/backslash/create", Info),
        ("traversal/unicode/fullwidth-slash/create", Info),
        ("symlink/inner-file/view", Info),
        // bug:B15, bug:B17: as the Python SDK, every command that reads a hard link to an
        // outside file reads through it, and a 64 MiB file is read whole.
        ("hazard/hardlink-outside/view", Unsafe),
        ("hazard/hardlink-outside/str_replace", Unsafe),
        ("hazard/hardlink-outside/insert", Unsafe),
        ("hazard/huge-file/view", Fail),
        ("hazard/huge-file/str_replace", Fail),
        ("hazard/huge-file/insert", Fail),
        // spec:3/S-2, spec:3/S-7: view and edits follow an in-store link (the edits replace the
        // link by a file holding the edited text); delete and rename act on the link (PASS).
        ("hazard/symlink-inside/view", Info),
        ("hazard/symlink-inside/str_replace", NonStrict),
        ("hazard/symlink-inside/insert", NonStrict),
        // bug:B10: a linked root met by every command, as by the Python SDK.
        ("hazard/linked-root/view", Unsafe),
        ("hazard/linked-root/create", Unsafe),
        ("hazard/linked-root/str_replace", Unsafe),
        ("hazard/linked-root/insert", Unsafe),
        ("hazard/linked-root/delete", Unsafe),
        ("hazard/linked-root/rename-from", Unsafe),
        // bug:B10: a store root that is a link to the outside is followed, as by the Python SDK.
        ("scenario/root-symlink/view", Unsafe),
        ("scenario/root-symlink/create", Unsafe),
        ("scenario/root-symlink/str_replace", Unsafe),
        ("scenario/root-symlink/delete", Unsafe),
        ("scenario/root-symlink/rename", Unsafe),
    ])
}

/// [`typescript_sdk_expected`] with the permission cases: as another user than root, every
/// `EACCES` comes back as Node's raw error, which carries the host path (bug:B07): every
/// `scenario/` permission case, and view, str_replace and insert of the unreadable hazard
/// (its create, delete and rename need no read: PASS).
fn typescript_sdk_expected_here() -> BTreeMap<&'static str, Verdict> {
    let unsafe_: Vec<(&'static str, Verdict)> = PERMISSION_CASES
        .iter()
        .filter(|id| {
            id.starts_with("scenario/")
                || id.ends_with("/view")
                || id.ends_with("/str_replace")
                || id.ends_with("/insert")
        })
        .map(|id| (*id, Verdict::Unsafe))
        .collect();
    with_permission_cases(typescript_sdk_expected(), &unsafe_)
}

#[test]
fn typescript_sdk_handler_gets_exactly_the_expected_verdicts() {
    let (_dir, mut t) = node_target(TYPESCRIPT_SDK_HANDLER);
    let mut v = run(&mut t, Profile::TypescriptSdk, &[]);
    assert_eq!(v.len(), catalog::all().len() - races());
    // Two concurrent creates of one path: which one wins depends on timing (mostly the first;
    // sometimes the second, and the first is refused).
    let twice = v.remove("batch/create-twice").unwrap();
    assert!(
        matches!(twice, Verdict::Pass | Verdict::NonStrict),
        "{twice:?}"
    );
    assert_eq!(non_pass(&v), typescript_sdk_expected_here());
    // The TS SDK removes and renames in-root links themselves (spec:3/S-4, spec:3/S-5, spec:3/S-6): PASS where the
    // Python SDK is UNSAFE.
    for id in [
        "symlink/inner-file/delete",
        "symlink/inner-dir/delete",
        "symlink/inner-file/rename",
    ] {
        assert_eq!(v[id], Verdict::Pass, "{id}");
    }
}

#[test]
fn typescript_sdk_payload_cases_at_the_standard_level() {
    let (_dir, mut t) = node_target(TYPESCRIPT_SDK_HANDLER);
    let v = run_payloads(&mut t, Profile::TypescriptSdk, RunLevel::Standard);
    // The TS SDK puts the host path in the errors of a NUL byte and of over-long names (spec:3,
    // host-path disclosure): UNSAFE in every field.
    let mut expected = sdk_prefix_non_strict();
    for p in [
        "control/nul",
        "long/component-256",
        "long/component-1000",
        "long/path-4097",
        "long/path-10000",
    ] {
        for f in Field::ALL {
            expected.insert(format!("payload/{p}/{}", f.as_str()), Verdict::Unsafe);
        }
    }
    assert_eq!(payload_non_pass(&v), (expected, 457));
}

#[test]
fn node_handler_that_escapes_through_dotdot_is_unsafe() {
    let (_dir, mut t) = node_target("fixtures/handlers/escape_dotdot.mjs:makeHandler");
    let v = run(
        &mut t,
        Profile::TypescriptSdk,
        &[
            "traversal/dotdot/view-sibling-private",
            "traversal/dotdot/create-escape",
            "traversal/deep/view-run-canary",
            "create/new-file",
        ],
    );
    assert_eq!(
        v,
        want([
            ("create/new-file", Verdict::Pass),
            ("traversal/deep/view-run-canary", Verdict::Unsafe),
            ("traversal/dotdot/create-escape", Verdict::Unsafe),
            ("traversal/dotdot/view-sibling-private", Verdict::Unsafe),
        ])
    );
}

#[test]
fn node_handler_built_with_node_init_arguments() {
    // fixtures/handlers/rooted.mjs: makeRooted({root, user}) refuses anything but the store
    // folder and user "alice"; behind it is escape_dotdot.mjs's handler, whose view/dir verdicts
    // these are.
    let np = node_path();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let run = |init: &str, cases: &str| {
        memcert(&[
            "certify",
            "--node",
            "fixtures/handlers/rooted.mjs:makeRooted",
            "--node-path",
            np.to_str().unwrap(),
            "--node-init",
            init,
            "--profile",
            "typescript-sdk",
            "--cases",
            cases,
            "--report-json",
            json.to_str().unwrap(),
        ])
    };
    let report = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
    };
    let out = run(r#"[{"root": "{store}", "user": "alice"}]"#, "view/dir/*");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let r = report();
    let got: Vec<(String, String)> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("view/dir/empty-root", "PASS"),
        ("view/dir/root-trailing-slash", "NON-STRICT"),
        ("view/dir/nested", "PASS"),
        ("view/dir/hidden-names", "PASS"),
        ("view/dir/node-modules", "PASS"),
        ("view/dir/sizes", "PASS"),
        ("view/dir/sort-order", "PASS"),
        ("view/dir/ignores-view-range", "PASS"),
    ]
    .iter()
    .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
    .collect();
    assert_eq!(got, want);
    // The target names the SDK copy and the Node version the handler ran with.
    let target = r["summary"]["target"].as_str().unwrap();
    assert!(
        target.starts_with("fixtures/handlers/rooted.mjs:makeRooted (node adapter, node, @anthropic-ai/sdk 1.14.0, Node v"),
        "{target}"
    );

    // Other arguments reach the factory as written, and its refusal is the reset's reason.
    let out = run(
        r#"[{"root": "{store}", "user": "bob"}]"#,
        "view/dir/empty-root",
    );
    assert_eq!(out.status.code(), Some(1));
    let r = report();
    let case = &r["cases"][0];
    assert_eq!(case["verdict"], "ERROR");
    let detail = case["findings"][0]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("step 1: reset failed: reset refused: makeRooted({\"root\":\"")
            && detail.contains("/memories\",\"user\":\"bob\"}) threw TypeError: makeRooted needs"),
        "{detail}"
    );

    // --node-init must be JSON: refused before anything starts.
    let out = run("[{root}]", "view/dir/empty-root");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "memcert: error: --node-init must be JSON, e.g. '[{\"root\": \"{store}\"}]' or '\"{store}\"'\n"
    );
}

/// The careful handler whose every reply is in other words (issue 11, grade by meaning).
const CAREFUL_REWORDED: &str = "fixtures/handlers/careful/reworded.py:RewordedMemoryTool";

/// The hazard cases the careful reworded handler answers in other words (NON-STRICT): delete and
/// rename of a planted hazard act on its name, and an ordinary file deep down or in a wide folder
/// is answered as any file.
const CAREFUL_REWORDED_HAZARDS: [&str; 30] = [
    // delete and rename of a planted hazard act on its name, answered in other words.
    "hazard/hardlink-outside/delete",
    "hazard/hardlink-outside/rename-from",
    "hazard/fifo/delete",
    "hazard/fifo/rename-from",
    "hazard/socket/delete",
    "hazard/socket/rename-from",
    "hazard/char-device/delete",
    "hazard/char-device/rename-from",
    "hazard/huge-file/delete",
    "hazard/huge-file/rename-from",
    "hazard/symlink-outside-file/delete",
    "hazard/symlink-outside-file/rename-from",
    "hazard/symlink-outside-dir/delete",
    "hazard/symlink-outside-dir/rename-from",
    "hazard/symlink-inside/delete",
    "hazard/symlink-inside/rename-from",
    // An ordinary file deep down or in a wide folder, answered in other words.
    "hazard/deep-folder/view",
    "hazard/deep-folder/create",
    "hazard/deep-folder/str_replace",
    "hazard/deep-folder/insert",
    "hazard/deep-folder/delete",
    "hazard/deep-folder/rename-from",
    "hazard/deep-folder/rename-onto",
    "hazard/wide-folder/view",
    "hazard/wide-folder/create",
    "hazard/wide-folder/str_replace",
    "hazard/wide-folder/insert",
    "hazard/wide-folder/delete",
    "hazard/wide-folder/rename-from",
    "hazard/wide-folder/rename-onto",
];

/// The careful reworded handler's verdicts over the hand-written catalog (races apart, the
/// permission cases apart) other than PASS: its other words are NON-STRICT; the INFO are encoded
/// names it keeps as literal names (and `//` collapsed). It refuses a linked store root in its
/// constructor: a refusal at start, PASS (`scenario/root-symlink/*`); its errors repeat the input
/// path, which names the alias, never the real sandbox: no disclosure.
fn careful_reworded_expected() -> BTreeMap<&'static str, Verdict> {
    use Verdict::*;
    let mut m = BTreeMap::from([
        ("traversal/absolute/double-slash-create", Info),
        ("traversal/encoded/single/create", Info),
        ("traversal/encoded/single/create-dir", Info),
        ("traversal/unicode/fullwidth-slash/create", Info),
    ]);
    for id in [
        "view/dir/empty-root",
        "view/dir/root-trailing-slash",
        "view/dir/nested",
        "view/dir/hidden-names",
        "view/dir/node-modules",
        "view/dir/sizes",
        "view/dir/sort-order",
        "view/dir/ignores-view-range",
        "view/file/trailing-newline",
        "view/file/no-trailing-newline",
        "view/file/empty",
        "view/file/crlf",
        "view/file/hidden-direct",
        "view/file/view-range/to-end",
        "view/file/view-range/middle",
        "view/file/view-range/end-clipped",
        "view/file/view-range/inverted",
        "view/file/view-range/start-zero",
        "view/file/view-range/past-end",
        "view/missing",
        "view/file/line-limit/exactly",
        "create/new-file",
        "create/missing-parents",
        "create/trailing-slash",
        "create/crlf-unicode",
        "create/hidden-directory",
        "create/then-view",
        "create/existing-through-view",
        "str_replace/success",
        "str_replace/success/excerpt-top",
        "str_replace/success/excerpt-end",
        "str_replace/not-found-text",
        "str_replace/multiple/different-lines",
        "str_replace/multiple/same-line",
        "str_replace/multiline-old-str",
        "str_replace/new-str-omitted",
        "str_replace/missing-file",
        "str_replace/dollar-literal",
        "insert/at-top",
        "insert/at-end",
        "insert/past-end",
        "insert/negative",
        "insert/huge-line",
        "insert/no-final-newline",
        "insert/empty-file",
        "insert/text-trailing-newlines",
        "insert/multi-line",
        "insert/crlf",
        "insert/missing-file",
        "delete/file",
        "delete/directory",
        "delete/missing",
        "delete/file-trailing-slash",
        "delete/then-view",
        "rename/file",
        "rename/into-new-directory",
        "rename/directory",
        "rename/destination-exists",
        "rename/onto-itself",
        "rename/source-missing",
        "root/view/double-slash",
        "root/view/listing-of-store",
        "path/empty-component",
        "symlink/outside-file/delete",
        "symlink/in-directory/delete",
        "symlink/listing/outside-dir",
        "symlink/inner-file/delete",
        "symlink/inner-dir/delete",
        "symlink/inner-file/rename",
        "scenario/socket/delete",
        "scenario/non-utf8-name/listing",
        "scenario/non-utf8-name/delete",
        "scenario/deep-chain/view",
        "scenario/deep-chain/view-bottom",
        "scenario/deep-chain/delete",
        "scenario/many-entries/view",
        "batch/create-edit-view",
        "batch/insert-three-at-top",
        "batch/create-twice",
        "malformed/view/view-range-not-list",
        "malformed/view/view-range-one-item",
        "malformed/view/view-range-strings",
        "malformed/insert/insert-line-string",
        "malformed/insert/insert-line-bool",
        // Twins kept apart, each read back in other words.
        "alias/case/name",
        "alias/trailing-space/name",
        "alias/trailing-space/folder",
        "alias/nfc-nfd/name",
        "alias/nfkc/fullwidth",
        "alias/ignorable/zwsp",
        "alias/ignorable/soft-hyphen",
        "alias/slug/space",
        "alias/slug/dot",
        "alias/flatten/slash",
    ] {
        m.insert(id, NonStrict);
    }
    for id in CAREFUL_REWORDED_HAZARDS {
        m.insert(id, NonStrict);
    }
    m
}

/// Verdicts by id, the permission cases apart: their verdict depends on the uid the handler runs
/// as, and a one-flaw handler may meet its flaw there too (`create_never_writes.py` reports a
/// create in a read-only folder as done: FAIL).
fn without_permission_cases(records: &[memcert::certify::CaseRecord]) -> BTreeMap<String, Verdict> {
    records
        .iter()
        .filter(|r| !PERMISSION_CASES.contains(&r.id.as_str()))
        .map(|r| (r.id.clone(), r.verdict))
        .collect()
}

/// The hand-written catalog without the races.
fn hand_written() -> Vec<memcert::suite::Case> {
    certify::select(catalog::all(), &[], &["race/*".to_owned()]).unwrap()
}

#[test]
fn careful_handler_in_other_words_is_never_worse_than_non_strict() {
    let (_dir, mut t) = python_target(CAREFUL_REWORDED, Duration::from_secs(20));
    let cases: Vec<_> = catalog::for_level(RunLevel::Standard)
        .into_iter()
        .filter(|c| c.race.is_none())
        .collect();
    let records = run_cases(&mut t, Profile::Docs, &cases);
    let v = without_permission_cases(&records);
    let hand: BTreeMap<&str, Verdict> = non_pass(&v)
        .into_iter()
        .filter(|(id, _)| !id.starts_with("payload/"))
        .collect();
    assert_eq!(hand, careful_reworded_expected());
    for r in &records {
        // Wording is never a FAIL, and no finding says only "matches none"; nothing is UNSAFE.
        assert!(r.verdict != Verdict::Fail, "{}: {:?}", r.id, r.findings);
        assert!(r.verdict != Verdict::Unsafe, "{}: {:?}", r.id, r.findings);
        for f in &r.findings {
            assert!(!f.detail.contains("matches none"), "{}: {}", r.id, f.detail);
        }
        if r.id.starts_with("payload/") {
            assert!(r.verdict <= Verdict::NonStrict, "{}: {}", r.id, r.verdict);
        }
    }
}

#[test]
fn one_flaw_handlers_fail_where_they_meet_the_flaw_and_the_finding_names_it() {
    let cases = hand_written();
    let (_dir, mut t) = python_target(CAREFUL_REWORDED, Duration::from_secs(20));
    let base = without_permission_cases(&run_cases(&mut t, Profile::Docs, &cases));
    use Verdict::*;
    let not_found_ok = "the reply reads as an error ('does not exist') but is_error is false";
    let literal = "taken as a literal name inside the store";
    let flaws: [(&str, Vec<(&str, Verdict, &str)>); 4] = [
        (
            "fixtures/handlers/flawed/str_replace_all.py:ReplaceAllMemoryTool",
            vec![
                ("str_replace/multiple/different-lines", Fail, "replaced all 2 occurrences; the doc requires refusing when old_str is not unique"),
                ("str_replace/multiple/same-line", Fail, "replaced all 2 occurrences; the doc requires refusing when old_str is not unique"),
            ],
        ),
        (
            "fixtures/handlers/flawed/insert_off_by_one.py:OffByOneMemoryTool",
            vec![
                ("insert/at-top", Fail, "inserted after line 1, asked for after line 0"),
                ("insert/multi-line", Fail, "inserted after line 2, asked for after line 1"),
                ("insert/crlf", Fail, "inserted after line 2, asked for after line 1"),
                ("batch/insert-three-at-top", Fail, "no insert reported as done is lost"),
            ],
        ),
        (
            "fixtures/handlers/flawed/create_never_writes.py:NeverWritesMemoryTool",
            vec![
                ("create/new-file", Fail, "reported success but nothing is on disk"),
                ("create/missing-parents", Fail, "reported success but nothing is on disk"),
                ("create/crlf-unicode", Fail, "reported success but nothing is on disk"),
                ("create/hidden-directory", Fail, "reported success but nothing is on disk"),
                ("create/then-view", Fail, "step 2: reported an error (\"FileNotFoundError(2, 'No such memory: /memories/rt.txt')\"); the case expects the lines of /memories/rt.txt"),
            ],
        ),
        (
            "fixtures/handlers/flawed/missing_as_success.py:MissingOkMemoryTool",
            vec![
                ("view/missing", Fail, not_found_ok),
                ("str_replace/missing-file", Fail, not_found_ok),
                ("insert/missing-file", Fail, not_found_ok),
                ("delete/missing", Fail, not_found_ok),
                ("delete/then-view", Fail, not_found_ok),
                // The traversal cases that view an encoded name take any success for a literal
                // name inside the store: the not-found sent as a success is one.
                ("traversal/encoded/single/view-sibling", Info, literal),
                ("traversal/encoded/slash/view", Info, literal),
                ("traversal/encoded/double/view", Info, literal),
                ("traversal/encoded/overlong/view", Info, literal),
                ("traversal/encoded/double-nibble/view", Info, literal),
                ("traversal/encoded/upper-case/view", Info, literal),
                ("traversal/unicode/fullwidth-dots/view", Info, literal),
                ("traversal/unicode/two-dot-leader/view", Info, literal),
                ("traversal/unicode/small-reverse-solidus/view", Info, literal),
                // The absolute double-slash view aims at the alias through the store: the
                // careful handler refuses it; this one answers "not found" as a success.
                ("traversal/absolute/double-slash-view", Info, literal),
            ],
        ),
    ];
    for (spec, want) in flaws {
        let (_dir, mut t) = python_target(spec, Duration::from_secs(20));
        let records = run_cases(&mut t, Profile::Docs, &cases);
        let v = without_permission_cases(&records);
        let changed: BTreeMap<&str, Verdict> = v
            .iter()
            .filter(|(id, verdict)| base.get(*id) != Some(verdict))
            .map(|(id, verdict)| (id.as_str(), *verdict))
            .collect();
        let expected: BTreeMap<&str, Verdict> = want.iter().map(|(id, v, _)| (*id, *v)).collect();
        assert_eq!(changed, expected, "{spec}");
        for (id, verdict, words) in &want {
            let r = records.iter().find(|r| r.id == *id).unwrap();
            assert!(
                r.findings
                    .iter()
                    .any(|f| f.verdict == *verdict && f.detail.contains(words)),
                "{spec}: {id}: {:?}",
                r.findings
            );
        }
    }
}

/// The cold handlers of `fixtures/handlers/cold/` (written from the memory-tool documentation
/// alone, never changed to suit the grader) certify at the standard level, races apart: exit 0,
/// every non-PASS case exactly as listed in `fixtures/handlers/cold/expected/<name>.txt`
/// (`<case id> <VERDICT>`, sorted), nothing worse than NON-STRICT, and a Markdown summary whose
/// head (before its first `<details>`) fits 40 lines and 4 KB. The dict-backed one runs black-box
/// (`--memory-dir-unknown`): it keeps no files on disk, so what cannot be planted through its own
/// commands is SKIPPED.
#[test]
fn cold_careful_handlers_certify_with_their_exact_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let py = python();
    for (name, class, black_box) in [
        ("careful_fs", "CarefulFsMemoryTool", false),
        ("careful_dict", "CarefulDictMemoryTool", true),
    ] {
        let spec = format!("fixtures/handlers/cold/{name}.py:{class}");
        let json = dir.path().join(format!("{name}.json"));
        let md = dir.path().join(format!("{name}.md"));
        let mut args = vec![
            "certify",
            "--python",
            &spec,
            "--python-exe",
            &py,
            "--exclude",
            "race/*",
            "--report-json",
            json.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ];
        if black_box {
            args.push("--memory-dir-unknown");
        }
        let out = memcert(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{name}: {stdout}");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let mut got: Vec<String> = report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["verdict"] != "PASS")
            .map(|c| {
                format!(
                    "{} {}",
                    c["id"].as_str().unwrap(),
                    c["verdict"].as_str().unwrap()
                )
            })
            .collect();
        got.sort();
        let want_file = root().join(format!("fixtures/handlers/cold/expected/{name}.txt"));
        let want: Vec<String> = std::fs::read_to_string(&want_file)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        if got != want {
            let added: Vec<&String> = got.iter().filter(|l| !want.contains(l)).collect();
            let gone: Vec<&String> = want.iter().filter(|l| !got.contains(l)).collect();
            panic!("{name}: the non-PASS verdicts changed\n  now: {added:?}\n  was: {gone:?}");
        }
        for line in &got {
            assert!(
                ["NON-STRICT", "INFO", "SKIPPED"]
                    .iter()
                    .any(|v| line.ends_with(&format!(" {v}"))),
                "{name}: {line}"
            );
        }
        let md = std::fs::read_to_string(&md).unwrap();
        let head = md.split("<details>").next().unwrap();
        assert!(
            head.lines().count() <= 40 && head.len() <= 4096,
            "{name}: the Markdown head is {} lines, {} bytes",
            head.lines().count(),
            head.len()
        );
    }
}

/// `--sarif`: one result per FAIL or UNSAFE cause of the JSON report, each pointing at the
/// handler's file as a repository-relative URI; a run whose flags name no repository file, or
/// a `--sarif-location` outside the repository, is refused before it starts (exit 2).
#[test]
fn sarif_results_are_the_causes_and_point_at_the_handler_file() {
    let dir = tempfile::tempdir().unwrap();
    let sarif = dir.path().join("r.sarif");
    let py = python();
    let (code, log, report) = certify_with_sarif(&[
        "--python",
        "fixtures/handlers/flawed/naive_join.py:NaiveJoinMemoryTool",
        "--python-exe",
        &py,
        "--cases",
        "traversal/dotdot/*",
    ]);
    assert_eq!(code, Some(1));
    let want = blocking_causes(&report);
    let got: Vec<(String, u64)> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let v = match r["level"].as_str().unwrap() {
                "error" => "UNSAFE",
                "warning" => "FAIL",
                other => other,
            };
            (v.to_owned(), r["properties"]["count"].as_u64().unwrap())
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    for r in log["runs"][0]["results"].as_array().unwrap() {
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "fixtures/handlers/flawed/naive_join.py"
        );
    }

    let none = memcert(&[
        "certify",
        "--cases",
        "view/missing",
        "--sarif",
        sarif.to_str().unwrap(),
    ]);
    assert_eq!(none.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&none.stderr);
    assert!(
        stderr.starts_with("memcert: error: --sarif needs a file of the repository for its results to point at (code scanning rejects results without one), and the handler's flags name none inside "),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("; give --sarif-location FILE\n"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");

    let outside = tempfile::NamedTempFile::new().unwrap();
    let elsewhere = memcert(&[
        "certify",
        "--cases",
        "view/missing",
        "--sarif",
        sarif.to_str().unwrap(),
        "--sarif-location",
        outside.path().to_str().unwrap(),
    ]);
    assert_eq!(elsewhere.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&elsewhere.stderr)
        .contains(" is not a file inside the repository "));

    let anchored = memcert(&[
        "certify",
        "--cases",
        "view/missing",
        "--sarif",
        sarif.to_str().unwrap(),
        "--sarif-location",
        "README.md",
    ]);
    assert_eq!(anchored.status.code(), Some(0));
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
    assert_eq!(
        log["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
}

/// Without --python-exe, the handler runs under the active virtual environment's interpreter
/// (`$VIRTUAL_ENV/bin/python`), and the header names it.
#[test]
fn python_exe_defaults_to_the_active_virtual_environment() {
    let py = std::path::PathBuf::from(python());
    let venv = py.parent().unwrap().parent().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_memcert"))
        .args([
            "certify",
            "--python",
            "fixtures/handlers/cold/careful_fs.py:CarefulFsMemoryTool",
            "--cases",
            "view/missing",
        ])
        .current_dir(root())
        .env("VIRTUAL_ENV", venv)
        .env_remove("CONDA_PREFIX")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let want = format!(
        "target:  fixtures/handlers/cold/careful_fs.py:CarefulFsMemoryTool (python adapter, {}, ",
        venv.join("bin/python").display()
    );
    assert!(stdout.lines().any(|l| l.starts_with(&want)), "{stdout}");
}

/// `memcert.toml` in the current folder gives flags; the command line's win; `--no-config`
/// reads none; a key that is no flag is one line and exit 2.
#[test]
fn memcert_toml_gives_flags_and_the_command_line_wins() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_memcert"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let cases_in = |file: &str| -> Vec<String> {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect()
    };
    std::fs::write(
        dir.path().join("memcert.toml"),
        "[certify]\ncases = [\"view/missing\", \"delete/missing\"]\nreport-json = \"r.json\"\n",
    )
    .unwrap();
    assert_eq!(run(&["certify"]).status.code(), Some(0));
    assert_eq!(cases_in("r.json"), ["view/missing", "delete/missing"]);
    assert_eq!(
        run(&["certify", "--cases", "str_replace/missing-file"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(cases_in("r.json"), ["str_replace/missing-file"]);
    assert_eq!(
        run(&[
            "certify",
            "--no-config",
            "--cases",
            "view/missing",
            "--report-json",
            "n.json"
        ])
        .status
        .code(),
        Some(0)
    );
    assert_eq!(cases_in("n.json"), ["view/missing"]);

    std::fs::write(dir.path().join("memcert.toml"), "[certify]\nbogus = 1\n").unwrap();
    let bad = run(&["certify"]);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr),
        "memcert: error: memcert.toml: [certify] `bogus` is not a flag of memcert certify (memcert certify --help lists them)\n"
    );
}

/// The SARIF report of a run on the pinned Python SDK handler validates against the SARIF 2.1.0
/// schema (vendored in `crates/memcert/tests/sarif_schema/`, from the serde-sarif crate), holds
/// one result per FAIL or UNSAFE cause of the JSON report, and every result has a
/// repository-relative location and fingerprints. The handler lives in an installed package,
/// so the location is the one `--sarif-location` names.
#[test]
fn sarif_of_the_pinned_python_sdk_validates_with_one_result_per_cause() {
    let py = python();
    let (code, log, report) = certify_with_sarif(&[
        "--python",
        "anthropic.tools:BetaLocalFilesystemMemoryTool",
        "--python-exe",
        &py,
        "--profile",
        "python-sdk",
        "--level",
        "quick",
        "--exclude",
        "race/*",
        "--sarif-location",
        "adapters/python/requirements.txt",
    ]);
    assert_eq!(code, Some(1));
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            root().join("crates/memcert/tests/sarif_schema/sarif-2.1.0.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
    assert_eq!(errors, Vec::<String>::new());
    let causes = blocking_causes(&report).len();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(causes > 0);
    assert_eq!(results.len(), causes);
    for r in results {
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"],
            serde_json::json!({"uri": "adapters/python/requirements.txt", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            r["partialFingerprints"]["memcertCause/v1"]
                .as_str()
                .unwrap()
                .len(),
            32
        );
    }
}

/// Run `memcert certify ARGS --sarif F --report-json G`; the exit code, the SARIF log and the
/// JSON report.
fn certify_with_sarif(args: &[&str]) -> (Option<i32>, serde_json::Value, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let (sarif, json) = (dir.path().join("r.sarif"), dir.path().join("r.json"));
    let mut all = vec!["certify"];
    all.extend_from_slice(args);
    all.extend([
        "--sarif",
        sarif.to_str().unwrap(),
        "--report-json",
        json.to_str().unwrap(),
    ]);
    let out = memcert(&all);
    let read = |p: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    (out.status.code(), read(&sarif), read(&json))
}

/// The FAIL and UNSAFE causes of a JSON report, `(verdict, count)` in report order.
fn blocking_causes(report: &serde_json::Value) -> Vec<(String, u64)> {
    report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "UNSAFE" || c["verdict"] == "FAIL")
        .map(|c| {
            (
                c["verdict"].as_str().unwrap().to_owned(),
                c["count"].as_u64().unwrap(),
            )
        })
        .collect()
}
