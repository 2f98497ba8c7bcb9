//! Response-format baselines (`memcert::baseline`, `memcert snapshot`, `certify --baseline`).
//!
//! - the pinned SDK handlers' answers against `fixtures/baselines/<sdk>/` (the test that fails,
//!   naming the case, when an SDK answer changes);
//! - a changed wording is a REGRESSION in exactly the affected cases, and passes once restored;
//! - NEW, STALE and `--update-baseline` through the command line;
//! - a whole app through the mock Messages API (`snapshot --app`, `certify --app --baseline`);
//! - the redaction rules: the same handler on tmpfs and on a disk gives the same files;
//! - insta reads our files and writes them back byte for byte (what `cargo insta review` does).
//!
//! Re-record an SDK baseline after a deliberate change with the command in
//! `fixtures/baselines/README.md`.

#[path = "../common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use memcert::baseline::{Baseline, BaselineSummary, Comparison};
use memcert::certify::{self, CaseRecord, Config, Snapshots};
use memcert::handler::reference::{Options, Reference};
use memcert::handler::Handler;
use memcert::protocol::ToolResult;
use memcert::report::snapshots::{SnapshotWriter, Write};
use memcert::suite::catalog::{self, RunLevel};
use memcert::suite::Case;
use memcert::target::inproc::InProcess;
use memcert::target::Target;
use memcert::text::Profile;
use serde_json::Value;

/// The hand-written catalog (quick level without the payload corpus), as the SDK baselines were
/// recorded; race cases are never recorded.
fn hand_written(exclude: &[&str]) -> Vec<Case> {
    let mut ex = vec!["payload/*".to_owned()];
    ex.extend(exclude.iter().map(|s| s.to_string()));
    certify::select(catalog::for_level(RunLevel::Quick), &[], &ex).unwrap()
}

/// Run `cases` compared with the baseline in `dir`.
fn compare(
    target: &mut dyn Target,
    profile: Profile,
    cases: &[Case],
    dir: &Path,
) -> (BaselineSummary, Vec<CaseRecord>) {
    let config = Config {
        profile,
        snapshots: Snapshots::Compare(Arc::new(Baseline::load(dir).unwrap())),
        ..Config::default()
    };
    let (summary, records) = certify::run_collect(&config, cases, target);
    (summary.baseline.expect("a baseline summary"), records)
}

/// Every REGRESSION with its diff, for assertion messages.
fn regressions(records: &[CaseRecord]) -> String {
    records
        .iter()
        .filter_map(|r| match &r.baseline {
            Some(Comparison::Regression { diff, .. }) => Some(format!("{}:\n{diff}", r.id)),
            _ => None,
        })
        .collect()
}

/// The SDK's answers must be the recorded ones: every snapshot of the folder compared and
/// unchanged, no REGRESSION, no STALE (NEW only for the permission cases when not root).
fn assert_sdk_matches(target: &mut dyn Target, profile: Profile, cases: &[Case], sdk: &str) {
    let dir = common::root().join("fixtures/baselines").join(sdk);
    let recorded = Baseline::load(&dir).unwrap().snapshots.len();
    let (b, records) = compare(target, profile, cases, &dir);
    assert!(
        b.regressions.is_empty(),
        "the {sdk} handler's answers changed in {:?}; if the change is deliberate, re-record \
         (fixtures/baselines/README.md):\n{}",
        b.regressions,
        regressions(&records)
    );
    assert_eq!(b.stale, Vec::<String>::new(), "stale {sdk} snapshots");
    assert_eq!(b.unchanged, recorded, "every {sdk} snapshot is compared");
    assert_eq!(b.not_run, 0);
}

#[test]
fn python_sdk_answers_match_their_baseline() {
    let (_dir, mut t) = common::python_target(common::PYTHON_SDK_HANDLER, Duration::from_secs(20));
    assert_sdk_matches(&mut t, Profile::PythonSdk, &hand_written(&[]), "python-sdk");
}

#[test]
fn typescript_sdk_answers_match_their_baseline() {
    // The TypeScript runner runs a turn's calls concurrently: which of two edits wins is timing
    // (batch/create-twice, batch/two-edits-one-file), so batch cases are not in its baseline.
    let (_dir, mut t) = common::node_target(common::TYPESCRIPT_SDK_HANDLER);
    let cases = hand_written(&["batch/*"]);
    assert_sdk_matches(&mut t, Profile::TypescriptSdk, &cases, "typescript-sdk");
}

/// The reference handler with the str_replace success text reworded.
struct Reworded(Reference);

impl Handler for Reworded {
    fn apply(&mut self, input: &Value) -> ToolResult {
        let mut r = self.0.apply(input);
        if let memcert::protocol::Content::Text(t) = &mut r.content {
            *t = t.replace(
                "The memory file has been edited.",
                "The memory file was edited.",
            );
        }
        r
    }
}

fn reference(reworded: bool) -> InProcess {
    let options = Options {
        fsync: false,
        ..Options::default()
    };
    InProcess::new(
        "reference",
        Box::new(move |_base, root| {
            let h = Reference::open_or_refuse(root, Profile::Docs, options)?;
            Ok(if reworded {
                Box::new(Reworded(h)) as Box<dyn Handler + Send>
            } else {
                Box::new(h) as Box<dyn Handler + Send>
            })
        }),
    )
}

#[test]
fn a_changed_wording_is_a_regression_in_exactly_the_affected_cases_and_passes_restored() {
    let cases = hand_written(&[]);
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        snapshots: Snapshots::Record,
        ..Config::default()
    };
    let mut writer = SnapshotWriter::new(dir.path().to_owned(), Write::Accepted);
    let summary = certify::run(&config, &cases, &mut reference(false), &mut writer);
    assert!(writer.errors.is_empty());
    assert_eq!(writer.written + writer.not_recorded, summary.total);

    let (b, records) = compare(&mut reference(true), Profile::Docs, &cases, dir.path());
    assert_eq!(
        b.regressions,
        [
            "str_replace/success",
            "str_replace/success/excerpt-top",
            "str_replace/success/excerpt-end",
            "str_replace/multiline-old-str",
            "str_replace/new-str-omitted",
            "str_replace/dollar-literal",
            "hazard/deep-folder/str_replace",
            "hazard/wide-folder/str_replace",
            "batch/create-edit-view",
            "batch/two-edits-one-file",
        ],
        "{}",
        regressions(&records)
    );
    // The same set, found the other way: the recorded snapshots that hold the success text.
    let recorded = Baseline::load(dir.path()).unwrap();
    let mut holding: Vec<&String> = recorded
        .snapshots
        .iter()
        .filter(|(_, s)| s.body().contains("The memory file has been edited."))
        .map(|(id, _)| id)
        .collect();
    let mut regressed: Vec<&String> = b.regressions.iter().collect();
    holding.sort();
    regressed.sort();
    assert_eq!(holding, regressed);
    assert_eq!((b.new.len(), b.stale.len()), (0, 0));
    assert_eq!(b.unchanged, writer.written - b.regressions.len());
    let diff = records
        .iter()
        .find(|r| r.id == "str_replace/success")
        .and_then(|r| r.baseline.clone());
    assert_eq!(
        diff,
        Some(Comparison::Regression {
            diff: concat!(
                "--- baseline\n+++ actual\n@@ -1,7 +1,7 @@\n",
                " --- step 1 ---\n is_error: false\n content: 6 lines\n",
                "-The memory file has been edited. Here is the snippet showing the change (with line numbers):\n",
                "+The memory file was edited. Here is the snippet showing the change (with line numbers):\n",
                "      1\talpha\n      2\tbeta\n      3\tGAMMA\n",
            )
                .into(),
            input_changed: false,
        })
    );

    let (b, _) = compare(&mut reference(false), Profile::Docs, &cases, dir.path());
    assert!(b.passed());
    assert_eq!(b.unchanged, writer.written);
}

fn memcert(args: &[&str], tmpdir: Option<&Path>) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memcert"));
    cmd.args(args).current_dir(common::root());
    if let Some(t) = tmpdir {
        cmd.env("TMPDIR", t);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_reworded_python_handler_fails_the_cli_run_with_the_regressions_in_every_report() {
    let python = common::python();
    let out = tempfile::tempdir().unwrap();
    let file = |name: &str| out.path().join(name).to_string_lossy().into_owned();
    // The same run for the reworded handler and the pinned one it rewords.
    let certify = |spec: &str, reports: &[&str]| {
        let mut args = vec![
            "certify",
            "--python",
            spec,
            "--python-exe",
            &python,
            "--profile",
            "python-sdk",
            "--level",
            "quick",
            "--cases",
            "str_replace/*",
            "--cases",
            "view/*",
            "--baseline",
            "fixtures/baselines/python-sdk",
        ];
        args.extend(reports);
        memcert(&args, None)
    };
    let (json_f, xml_f, md_f, html_f) =
        (file("r.json"), file("r.xml"), file("r.md"), file("r.html"));
    let (code, stdout, stderr) = certify(
        "fixtures/handlers/reworded.py:RewordedMemoryTool",
        &[
            "--report-json",
            &json_f,
            "--junit",
            &xml_f,
            "--markdown",
            &md_f,
            "--html",
            &html_f,
        ],
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let affected = [
        "str_replace/success",
        "str_replace/success/excerpt-top",
        "str_replace/success/excerpt-end",
        "str_replace/multiline-old-str",
        "str_replace/dollar-literal",
    ];
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(file("r.json")).unwrap()).unwrap();
    assert_eq!(
        json["summary"]["baseline"]["regressions"],
        serde_json::json!(affected)
    );
    assert_eq!(json["summary"]["baseline"]["stale"], serde_json::json!([]));
    let removed = "-The memory file has been edited. Here is the snippet showing the change (with line numbers):";
    let added =
        "+The memory file was edited. Here is the snippet showing the change (with line numbers):";
    assert!(stdout.contains("baseline: FAILED (5 REGRESSION): the run fails; for a deliberate change, rerun with --update-baseline and accept the .snap.new files\n"));
    let junit = std::fs::read_to_string(file("r.xml")).unwrap();
    let markdown = std::fs::read_to_string(file("r.md")).unwrap();
    let html = std::fs::read_to_string(file("r.html")).unwrap();
    for id in affected {
        assert!(stdout.contains(&format!("\nREGRESSION {id}\n")), "{id}");
        assert!(junit.contains(&format!("<testcase name=\"{id}\"")), "{id}");
        assert!(markdown.contains(&format!("**REGRESSION** `{id}`")), "{id}");
        assert!(
            html.contains(&format!("<li><code>{id}</code></li>")),
            "{id}"
        );
    }
    assert_eq!(junit.matches("type=\"REGRESSION\"").count(), 5);
    for report in [&stdout, &markdown] {
        assert!(
            report.contains(removed) && report.contains(added),
            "{report}"
        );
    }
    assert!(html.contains(&format!("<del>{removed}</del>")));
    assert!(html.contains(&format!("<ins>{added}</ins>")));

    // The pinned SDK handler itself, the wording restored, on the same cases: passes.
    let (code, stdout, _) = certify(common::PYTHON_SDK_HANDLER, &[]);
    assert!(
        stdout.contains("baseline: PASSED (39 unchanged, 0 NEW)\n"),
        "{stdout}"
    );
    assert_eq!(code, 0);
}

#[test]
fn new_does_not_fail_stale_does_and_update_baseline_writes_snap_new() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_string_lossy().into_owned();
    let (code, stdout, stderr) = memcert(&["snapshot", "--cases", "view/*", "--out", &d], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("memcert snapshot: 25 snapshots of memcert reference handler"));
    let path = |name: &str| dir.path().join(name);
    let certify = |update: bool| {
        let mut a = vec!["certify", "--cases", "view/*", "--baseline", &d];
        if update {
            a.push("--update-baseline");
        }
        memcert(&a, None)
    };
    assert_eq!(certify(false).0, 0);

    // A case without its snapshot is NEW; with --update-baseline its .snap.new is written.
    let gone = path("view__missing.snap");
    let recorded = std::fs::read_to_string(&gone).unwrap();
    std::fs::remove_file(&gone).unwrap();
    let (code, stdout, stderr) = certify(true);
    assert_eq!(code, 0, "NEW does not fail:\n{stdout}");
    assert!(
        stdout.contains("\nNEW (1): no snapshot in the baseline (not a failure)\n  view/missing\n")
    );
    assert!(stderr.contains("wrote 1 pending snapshot (.snap.new)"));
    assert_eq!(
        std::fs::read_to_string(path("view__missing.snap.new")).unwrap(),
        recorded
    );

    // A snapshot whose case no longer exists is STALE, and fails the run.
    std::fs::rename(path("view__missing.snap.new"), &gone).unwrap();
    let retired = recorded.replace("expression: view/missing", "expression: view/retired");
    std::fs::write(path("view__retired.snap"), retired).unwrap();
    let (code, stdout, _) = certify(false);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains(
        "\nSTALE snapshots (1): their cases no longer exist; remove the files\n  view/retired  (view__retired.snap)\n"
    ));
    assert!(stdout.contains("baseline: FAILED (1 STALE): the run fails; for a deliberate change, rerun with --update-baseline and accept the .snap.new files\n"));
    std::fs::remove_file(path("view__retired.snap")).unwrap();

    // A changed snapshot is a REGRESSION: exit 1, and --update-baseline writes the new answer
    // beside the old file, which stays.
    let changed = recorded.replace("does not exist", "is not there");
    assert_ne!(changed, recorded);
    std::fs::write(&gone, &changed).unwrap();
    let (code, stdout, _) = certify(true);
    assert_eq!(code, 1);
    assert!(stdout.contains("\nREGRESSION view/missing\n"));
    assert_eq!(std::fs::read_to_string(&gone).unwrap(), changed);
    assert_eq!(
        std::fs::read_to_string(path("view__missing.snap.new")).unwrap(),
        recorded
    );
    // Accepted (renamed, as `cargo insta accept` does): passes, and nothing is pending.
    std::fs::rename(path("view__missing.snap.new"), &gone).unwrap();
    let (code, stdout, _) = certify(true);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("baseline: PASSED (25 unchanged, 0 NEW)\n"));
    assert!(!path("view__missing.snap.new").exists());
}

/// Every snapshot records the catalog it was recorded with (`info.catalog`); a baseline from
/// another catalog still compares, with one warning line on stderr and a note in the reports; a
/// snapshot without the key (recorded before memcert wrote it) is read as from an unknown
/// catalog, without a warning; a malformed version refuses the file with its line (exit 2).
// See: issue 11 ("verdicts you can trust"), catalog version in baselines.
#[test]
fn snapshots_record_their_catalog_and_another_catalog_is_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_string_lossy().into_owned();
    let catalog = memcert::suite::CATALOG_VERSION;
    let snapshot = |cases: &[&str]| {
        let mut a = vec!["snapshot", "--out", &d];
        for c in cases {
            a.extend(["--cases", c]);
        }
        memcert(&a, None)
    };
    let (code, _, stderr) = snapshot(&["view/missing", "view/dir/empty-root"]);
    assert_eq!(code, 0, "{stderr}");
    let path = dir.path().join("view__missing.snap");
    let recorded = std::fs::read_to_string(&path).unwrap();
    assert!(
        recorded.starts_with(&format!(
            "---\nsource: memcert {}\nexpression: view/missing\ninfo:\n  catalog: {catalog}\n  input:\n    - \"{{\\\"command\\\":\\\"view\\\",\\\"path\\\":\\\"/memories/nope.txt\\\"}}\"\n  redactions: []\n---\n",
            env!("CARGO_PKG_VERSION")
        )),
        "{recorded}"
    );
    let certify = || {
        memcert(
            &[
                "certify",
                "--cases",
                "view/missing",
                "--cases",
                "view/dir/empty-root",
                "--baseline",
                &d,
            ],
            None,
        )
    };
    let (code, stdout, stderr) = certify();
    assert_eq!(code, 0, "{stdout}");
    assert!(!stderr.contains("warning"), "{stderr}");

    // One snapshot from an older catalog: compared all the same, one warning, a note.
    let older = recorded.replace(&format!("  catalog: {catalog}\n"), "  catalog: 2026.11.1\n");
    assert_ne!(older, recorded);
    std::fs::write(&path, &older).unwrap();
    let (code, stdout, stderr) = certify();
    assert_eq!(code, 0, "{stdout}");
    let tail = format!(
        "recorded with catalog 2026.11.1 (1 of 2 snapshots), but this memcert runs catalog {catalog}; see CHANGELOG.md for the cases added, retired or changed in verdict between them"
    );
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(
        warnings,
        [format!("memcert: warning: --baseline {d} was {tail}")]
    );
    assert!(
        stdout.contains(&format!(
            "\nthe baseline was {tail}\n\nbaseline {d}: 2 unchanged, 0 REGRESSION"
        )),
        "{stdout}"
    );
    assert!(stdout.contains("baseline: PASSED (2 unchanged, 0 NEW)\n"));

    // Recording again over a folder that keeps the older snapshot warns about the mix.
    let (code, _, stderr) = snapshot(&["view/dir/empty-root"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "memcert: warning: --out {d} still holds snapshots this run did not replace, {tail}\n"
        )
    );

    // No catalog key at all (an older memcert's file): unknown, accepted, no warning.
    std::fs::write(
        &path,
        recorded.replace(&format!("  catalog: {catalog}\n"), ""),
    )
    .unwrap();
    let (code, stdout, stderr) = certify();
    assert_eq!(code, 0, "{stdout}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(!stdout.contains("recorded with catalog"), "{stdout}");

    // A malformed version: the file is refused with its line, exit 2.
    std::fs::write(
        &path,
        recorded.replace(&format!("  catalog: {catalog}\n"), "  catalog: 2026.12\n"),
    )
    .unwrap();
    let (code, stdout, stderr) = certify();
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert_eq!(
        stderr,
        format!(
            "memcert: error: --baseline {d}: fix or remove that file (re-recording the whole folder would accept any real regression): {}: not a memcert snapshot: line 5: info.catalog: \"2026.12\" is not a catalog version (YEAR.MONTH.N, such as {catalog})\n",
            path.display()
        )
    );
}

/// A whole app through the mock: `snapshot --app` records one snapshot per transcript; the same
/// app compared with it passes whether its store is on tmpfs or on disk (the listing sizes are
/// redacted); the app with the reworded handler is a REGRESSION in exactly the transcript whose
/// str_replace succeeds, with its diff.
#[test]
fn app_snapshots_record_and_compare_through_the_mock() {
    let python = common::python();
    let app = |extra: &str| {
        format!(
            "{python} {} {extra}",
            common::root()
                .join("fixtures/apps/python_tool_runner.py")
                .display()
        )
    };
    let shm = Path::new("/dev/shm");
    let disk = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let scratch_on = |base: &Path| tempfile::tempdir_in(base).unwrap();
    let out = tempfile::tempdir().unwrap();
    let snaps = out.path().join("app-baseline");
    let select = ["--cases", "app/create-view", "--cases", "app/edit-steps"];
    let s1 = scratch_on(&disk);
    let mem1 = s1.path().join("run/base/memories");
    let mut args = vec![
        "snapshot",
        "--out",
        snaps.to_str().unwrap(),
        "--profile",
        "python-sdk",
        "--memory-dir",
        mem1.to_str().unwrap(),
    ];
    args.extend(select);
    let cmd = app("");
    args.extend(["--app", &cmd]);
    let (code, stdout, stderr) = memcert(&args, None);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("memcert snapshot: 2 snapshots of app: "),
        "{stdout}"
    );
    let mut files: Vec<String> = std::fs::read_dir(&snaps)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["app__create-view.snap", "app__edit-steps.snap"]);

    let compare = |extra: &str, base: &Path| {
        let s = scratch_on(base);
        let mem = s.path().join("run/base/memories");
        let cmd = app(extra);
        let mut args = vec![
            "certify",
            "--baseline",
            snaps.to_str().unwrap(),
            "--profile",
            "python-sdk",
            "--memory-dir",
            mem.to_str().unwrap(),
            "--app",
            &cmd,
        ];
        args.extend(select);
        memcert(&args, None)
    };
    let bases: Vec<&Path> = if shm.is_dir() {
        vec![shm, &disk]
    } else {
        vec![&disk]
    };
    for base in bases {
        let (code, stdout, _) = compare("", base);
        assert_eq!(code, 0, "{}: {stdout}", base.display());
        assert!(
            stdout.contains("baseline: PASSED (2 unchanged, 0 NEW)"),
            "{}: {stdout}",
            base.display()
        );
    }
    let reworded = format!(
        "--handler {}:RewordedMemoryTool",
        common::root()
            .join("fixtures/handlers/reworded.py")
            .display()
    );
    let (code, stdout, _) = compare(&reworded, &disk);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("\nREGRESSION app/edit-steps\n"), "{stdout}");
    assert!(!stdout.contains("REGRESSION app/create-view"), "{stdout}");
    assert!(
        stdout.contains("-The memory file has been edited.")
            && stdout.contains("+The memory file was edited."),
        "{stdout}"
    );
}

/// A baseline folder without snapshots is refused (a green run would compare nothing), and a
/// broken file is named with the advice to fix or remove it, not to re-record everything.
#[test]
fn empty_or_broken_baselines_are_refused_with_the_right_advice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, _, stderr) = memcert(
        &["certify", "--cases", "view/missing", "--baseline", d],
        None,
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no .snap file in this folder; record one with `memcert snapshot --out"),
        "{stderr}"
    );
    std::fs::write(
        dir.path().join("view__missing.snap"),
        "---\nexpression: x\n",
    )
    .unwrap();
    let (code, _, stderr) = memcert(
        &["certify", "--cases", "view/missing", "--baseline", d],
        None,
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("fix or remove that file (re-recording the whole folder would accept any real regression)"), "{stderr}");
    assert!(stderr.contains("view__missing.snap"), "{stderr}");
}

/// The filesystem type of a folder (`statfs` f_type).
fn fs_type(dir: &Path) -> u64 {
    rustix::fs::statfs(dir).unwrap().f_type as u64
}

const TMPFS_MAGIC: u64 = 0x0102_1994;

/// `st_size` of a fresh empty folder in `parent`.
fn empty_dir_size(parent: &Path) -> u64 {
    let d = tempfile::tempdir_in(parent).unwrap();
    std::fs::metadata(d.path()).unwrap().len()
}

/// Every file of a folder, by name.
fn files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_same_handler_on_tmpfs_and_on_disk_gives_identical_snapshots() {
    let shm = Path::new("/dev/shm");
    let disk: PathBuf = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    if !shm.is_dir() || fs_type(shm) != TMPFS_MAGIC {
        eprintln!("skipped: /dev/shm is not a tmpfs folder here");
        return;
    }
    if fs_type(&disk) == TMPFS_MAGIC {
        eprintln!(
            "skipped: the target folder {} is on tmpfs too",
            disk.display()
        );
        return;
    }
    let on_shm = tempfile::tempdir_in(shm).unwrap();
    let on_disk = tempfile::tempdir_in(&disk).unwrap();
    // The two places really differ: directory sizes (tmpfs 40 + 20 per entry, ext4 4096) and
    // the length of the temp paths.
    assert_ne!(
        empty_dir_size(on_shm.path()),
        empty_dir_size(on_disk.path())
    );
    assert_ne!(
        on_shm.path().as_os_str().len(),
        on_disk.path().as_os_str().len()
    );
    let node_path = common::node_path().to_string_lossy().into_owned();
    // Both runs leave out the 5,000-file folder (scenario/many-entries), which takes most of the
    // time on a disk; it lists no other kind of size than view/dir/* does. (Checked by hand at
    // the standard level, with it: the reference, Python and TypeScript SDK handlers give the
    // same files on /dev/shm and on ext4.)
    let runs: [(&str, Vec<&str>); 2] = [
        // The reference lists folders without a trailing `/`: dir-size needs the disk.
        (
            "reference",
            vec!["--level", "quick", "--exclude", "scenario/many-entries/*"],
        ),
        // The TypeScript SDK discloses host paths in its errors and lists links.
        (
            "typescript-sdk",
            vec![
                "--node",
                common::TYPESCRIPT_SDK_HANDLER,
                "--node-path",
                &node_path,
                "--level",
                "quick",
                "--exclude",
                "payload/*",
                "--exclude",
                "batch/*",
                "--exclude",
                "scenario/many-entries/*",
            ],
        ),
    ];
    for (name, args) in runs {
        let mut out = Vec::new();
        for tmp in [on_shm.path(), on_disk.path()] {
            let snaps = tempfile::tempdir().unwrap();
            let mut a = vec!["snapshot", "--out"];
            let dir = snaps.path().to_string_lossy().into_owned();
            a.push(&dir);
            a.extend(args.iter().copied());
            let (code, stdout, stderr) = memcert(&a, Some(tmp));
            assert_eq!(code, 0, "{name}: {stdout}\n{stderr}");
            out.push(files(snaps.path()));
        }
        let first = &out[0];
        assert!(first.len() > 200, "{name}: {} snapshots", first.len());
        for rule in ["dir-size", "store-path"] {
            assert!(
                first
                    .values()
                    .any(|f| String::from_utf8_lossy(f).contains(&format!("    - {rule}\n"))),
                "{name}: no snapshot uses {rule}"
            );
        }
        let differ: Vec<&String> = first
            .keys()
            .filter(|k| out[1].get(*k) != first.get(*k))
            .collect();
        assert_eq!(first.len(), out[1].len(), "{name}");
        assert!(
            differ.is_empty(),
            "{name}: the snapshots differ in {differ:?}"
        );
    }
}

#[test]
fn insta_reads_our_snapshots_and_writes_them_back_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let mut n = 0;
    for sdk in ["python-sdk", "typescript-sdk"] {
        let dir = common::root().join("fixtures/baselines").join(sdk);
        let ours = Baseline::load(&dir).unwrap();
        for (id, snap) in &ours.snapshots {
            let path = dir.join(memcert::baseline::file_name(id));
            let insta = insta::Snapshot::from_file(&path).unwrap();
            assert_eq!(insta.metadata().expression(), Some(id.as_str()));
            assert_eq!(
                insta.metadata().source(),
                Some(format!("memcert {}", env!("CARGO_PKG_VERSION")).as_str())
            );
            let body = insta.contents().as_text().unwrap().to_string();
            assert_eq!(body + "\n", snap.body(), "{id}");
            // What `cargo insta accept` does with a .snap.new: save it as the .snap.
            let again = tmp.path().join("again.snap");
            insta.save(&again).unwrap();
            assert_eq!(
                std::fs::read(&again).unwrap(),
                std::fs::read(&path).unwrap(),
                "{id}"
            );
            n += 1;
        }
    }
    assert!(n > 400, "{n} snapshots");
}
