//! Checks before work: a report path that cannot be written (a folder, or one file named for two
//! reports) fails with exit 2 and one line before any handler starts; a closed stdout ends
//! memcert quietly, never with a panic.

use super::*;

// See: issue 13 ("a report path that is a folder, or the same path for two reports, fails only
// after the whole run").
#[test]
fn report_paths_are_checked_before_the_handler_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let handler = format!("touch {}", started.display());
    let a = dir.path().join("a.json");
    let same = dir.path().join(".").join("a.json");
    let bad: [(&[&str], &str); 3] = [
        (
            &["--report-json", &dir.path().display().to_string()],
            "cannot write the JSON report",
        ),
        (
            &["--junit", &format!("{}/", dir.path().display())],
            "it is a folder",
        ),
        (
            &[
                "--report-json",
                &a.display().to_string(),
                "--markdown",
                &same.display().to_string(),
            ],
            "are the same file",
        ),
    ];
    for (flags, says) in bad {
        let out = memcert(tmp.path())
            .args(["certify", "--stdio", &handler])
            .args(flags)
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{says}: {stderr}");
        assert!(!started.exists(), "{flags:?}: the handler was started");
    }
    let out = memcert(tmp.path())
        .args(["certify", "--app", "true", "--wire-log"])
        .arg(&a)
        .arg("--memory-dir")
        .arg(dir.path().join("run/base/memories"))
        .arg("--junit")
        .arg(&same)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("are the same file"));
    assert_no_scratch(tmp.path());
}

/// `memcert ARGS` with a stdout whose reading end is already closed: its exit status and
/// stderr.
fn closed_stdout(tmp: &Path, args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let child = memcert(tmp)
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (out, _) = finish(child, Duration::from_secs(30));
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// See: issue 13 ("`memcert cases | head` and `mock-api | true` panic on a closed stdout").
#[test]
fn a_closed_stdout_ends_memcert_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        &["cases", "--level", "full"][..],
        &["cases", "--format", "jsonl"],
        &["payloads"],
        &["explain", "bug:B01"],
    ] {
        let (code, stderr) = closed_stdout(tmp.path(), args);
        assert_eq!((code, stderr.as_str()), (Some(0), ""), "{args:?}");
    }
    // certify writes its file reports and exits with the run's status.
    let (code, stderr) = closed_stdout(tmp.path(), &["certify", "--cases", "view/dir/empty-root"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // mock-api's first line is its URL: no one reads it, so it stops at once as if interrupted.
    let store = tempfile::tempdir().unwrap();
    let memory_dir = store.path().join("run/base/memories");
    let (code, stderr) = closed_stdout(
        tmp.path(),
        &[
            "mock-api",
            "--transcript",
            "fixtures/transcripts/create-view.json",
            "--memory-dir",
            &memory_dir.display().to_string(),
        ],
    );
    assert_eq!(code, Some(130), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        !store.path().join("run").exists(),
        "the run folder is removed"
    );
    assert_no_scratch(tmp.path());
}
