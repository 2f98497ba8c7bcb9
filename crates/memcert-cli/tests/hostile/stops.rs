//! Clean stops: SIGINT or SIGTERM in every mode kills the handler's (or app's) process tree,
//! removes every scratch folder, writes the reports so far marked INTERRUPTED and exits 130;
//! `--deadline` bounds the run (ERROR "deadline", INCOMPLETE, exit 1); a reset obeys
//! `--timeout`. Runs under a `--timeout` or `--deadline` are `--jobs 1`: one handler at a time,
//! so the time they allow is not shared with other handlers of the run (tests/jobs tests the
//! pool).

use std::path::Path;
use std::time::{Duration, Instant};

use rustix::process::Signal;

use super::*;

/// A copy of fixture `from` named after `marker` in `dir`, so the handler's command line
/// carries the marker; returns its path.
fn marked_copy(from: &str, dir: &Path, marker: &str) -> String {
    let ext = Path::new(from).extension().unwrap().to_string_lossy();
    let to = dir.join(format!("{marker}.{ext}"));
    std::fs::copy(root().join(from), &to).unwrap();
    to.display().to_string()
}

/// Stop `cmd` (a run writing its file reports into `reports`, with `tmp` as its TMPDIR) with
/// `sig` once a process carrying marker `m` runs, and check that it stopped cleanly: exit 130,
/// every report marked INTERRUPTED, no process with the marker and no scratch left in `tmp`.
/// The run's output and reports, for what a test checks beyond that.
fn assert_clean_stop(
    cmd: std::process::Command,
    m: &str,
    sig: Signal,
    tmp: &Path,
    reports: &Path,
) -> (Output, Reports) {
    let out = stopped_mid_run(cmd, m, sig);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = Reports::read(reports);
    r.marked("INTERRUPTED", "interrupted");
    assert_no_process(m);
    assert_no_scratch(tmp);
    (out, r)
}

// See: issue 13 ("Ctrl-C in certify --python/--node/--stdio leaves the adapter folder, the
// handler's HOME, the case sandbox and a hung handler process, and writes no report").
#[test]
fn sigint_and_sigterm_stop_a_stdio_run_cleanly() {
    for (sig, name) in [(Signal::INT, "int"), (Signal::TERM, "term")] {
        let tmp = tempfile::tempdir().unwrap();
        let out_dir = tempfile::tempdir().unwrap();
        let m = marker(&format!("stdio_{name}"));
        let mut cmd = memcert(tmp.path());
        cmd.args([
            "certify",
            "--jobs",
            "1",
            "--timeout",
            "30",
            "--cases",
            "view/dir/*",
        ])
        .arg("--stdio")
        .arg(format!("python3 {} {m}", hostile("ignores_sigterm.py")))
        .args(report_flags(out_dir.path()));
        let (out, r) = assert_clean_stop(cmd, &m, sig, tmp.path(), out_dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("memcert: interrupted"), "{stderr}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("INTERRUPTED: a signal stopped the run after"),
            "{stdout}"
        );
        assert!(
            stdout.contains("verdict: NOT CERTIFIED (INTERRUPTED run)"),
            "{stdout}"
        );
        assert_eq!(r.json["summary"]["planned"], 8);
    }
}

#[test]
fn sigint_stops_a_python_handler_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = marker("python");
    let file = marked_copy("fixtures/handlers/hang.py", dir.path(), &m);
    let mut cmd = memcert(tmp.path());
    cmd.args([
        "certify",
        "--jobs",
        "1",
        "--timeout",
        "30",
        "--cases",
        "view/dir/*",
    ])
    .arg("--python")
    .arg(format!("{file}:HangingViewMemoryTool"))
    .arg("--python-exe")
    .arg(common::python())
    .args(report_flags(dir.path()));
    assert_clean_stop(cmd, &m, Signal::INT, tmp.path(), dir.path());
}

#[test]
fn sigterm_stops_a_node_handler_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = marker("node");
    let file = marked_copy(&hostile("hang.mjs"), dir.path(), &m);
    let mut cmd = memcert(tmp.path());
    cmd.args([
        "certify",
        "--jobs",
        "1",
        "--timeout",
        "30",
        "--cases",
        "view/dir/*",
    ])
    .arg("--node")
    .arg(format!("{file}:makeHandler"))
    .arg("--node-path")
    .arg(common::node_path())
    .args(report_flags(dir.path()));
    assert_clean_stop(cmd, &m, Signal::TERM, tmp.path(), dir.path());
}

#[test]
fn sigint_stops_an_app_run_and_reports_what_ran() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let m = marker("app");
    let mut cmd = memcert(tmp.path());
    cmd.args(["certify", "--cases", "app/create-view"])
        .arg("--app")
        .arg(format!("python3 fixtures/apps/misbehave.py hang {m}"))
        .arg("--memory-dir")
        .arg(store.path().join("run/base/memories"))
        .args(report_flags(dir.path()));
    let (_, r) = assert_clean_stop(cmd, &m, Signal::INT, tmp.path(), dir.path());
    assert_eq!(r.json["summary"]["planned"], 1);
    assert_eq!(r.json["cases"].as_array().unwrap().len(), 0);
    assert!(
        !store.path().join("run").exists(),
        "the run folder is removed"
    );
}

#[test]
fn sigint_stops_mock_api_and_reports_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let mut child = memcert(tmp.path())
        .args([
            "mock-api",
            "--transcript",
            "fixtures/transcripts/create-view.json",
        ])
        .arg("--memory-dir")
        .arg(dir.path().join("run/base/memories"))
        .arg("--report-json")
        .arg(&report)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::base_url_line(&mut std::io::BufReader::new(child.stdout.as_mut().unwrap()));
    signal(&child, Signal::INT);
    let (out, took) = finish(child, Duration::from_secs(10));
    assert!(took < Duration::from_secs(5));
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["summary"]["completion"], "interrupted");
    assert!(
        !dir.path().join("run").exists(),
        "the run folder is removed"
    );
    assert_no_scratch(tmp.path());
}

#[test]
fn sigint_stops_a_snapshot_run_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = marker("snapshot");
    let mut cmd = memcert(tmp.path());
    cmd.args([
        "snapshot",
        "--jobs",
        "1",
        "--timeout",
        "30",
        "--cases",
        "view/dir/*",
    ])
    .arg("--out")
    .arg(dir.path().join("base"))
    .arg("--stdio")
    .arg(format!("python3 {} {m}", hostile("ignores_sigterm.py")));
    let out = stopped_mid_run(cmd, &m, Signal::INT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("memcert: interrupted"), "{stderr}");
    assert_no_process(&m);
    assert_no_scratch(tmp.path());
}

// See: issue 13 ("a reset that never answers costs 30 s per case whatever --timeout says, with
// no overall run limit").
#[test]
fn a_deadline_bounds_the_whole_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = marker("deadline");
    let started = Instant::now();
    let child = memcert(tmp.path())
        .args([
            "certify",
            "--jobs",
            "1",
            "--timeout",
            "30",
            "--deadline",
            "1.5",
        ])
        .args(["--cases", "view/dir/*"])
        .arg("--stdio")
        .arg(format!("python3 {} {m}", hostile("ignores_sigterm.py")))
        .args(report_flags(dir.path()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (out, _) = finish(child, Duration::from_secs(15));
    let took = started.elapsed();
    assert!(took < Duration::from_secs(6), "took {took:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("INCOMPLETE: the run's --deadline passed"),
        "{stdout}"
    );
    let r = Reports::read(dir.path());
    r.marked("INCOMPLETE", "incomplete");
    let cases = r.json["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 8);
    for c in cases {
        assert_eq!(c["verdict"], "ERROR", "{c}");
        assert_eq!(c["findings"][0]["kind"], "deadline", "{c}");
    }
    assert_no_process(&m);
    assert_no_scratch(tmp.path());
}

#[test]
fn a_hung_reset_costs_the_timeout_not_30_seconds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let child = memcert(tmp.path())
        .args(["certify", "--jobs", "1", "--timeout", "0.3"])
        .args([
            "--cases",
            "view/dir/empty-root",
            "--cases",
            "view/dir/nested",
        ])
        .arg("--stdio")
        .arg(format!("python3 {}", hostile("hung_reset.py")))
        .args(report_flags(dir.path()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (out, _) = finish(child, Duration::from_secs(20));
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(1));
    let r = Reports::read(dir.path());
    assert_eq!(r.json["summary"]["completion"], "complete");
    for c in r.json["cases"].as_array().unwrap() {
        assert_eq!(c["verdict"], "ERROR", "{c}");
        assert!(c.to_string().contains("no answer within 300ms"), "{c}");
    }
    assert_no_scratch(tmp.path());
}
