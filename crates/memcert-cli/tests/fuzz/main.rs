//! `memcert fuzz` end to end: nothing found on the reference; on a stateful handler written
//! from the docs alone (`fixtures/handlers/stateful/`), whose flaw the catalog misses, the
//! flaw is found with seed 1 and an empty corpus, shrunk to three commands, saved, and
//! replayed by `certify --replay` with the same verdict.

#[path = "../common/mod.rs"]
mod common;
use common::*;

const STALE: &str =
    "fixtures/handlers/stateful/stale_after_folder_delete.py:StaleAfterFolderDeleteMemoryTool";

/// The search's last stderr line (`memcert: fuzz: N sequences, ...`).
fn summary(err: &str) -> &str {
    err.lines()
        .rev()
        .find(|l| l.starts_with("memcert: fuzz: "))
        .unwrap_or("")
}

/// `certify --replay saved --cases 'replay/*'` on the Python handler `spec`: the exit code and
/// the JSON report.
fn replay(spec: &str, py: &str, saved: &std::path::Path) -> (Option<i32>, serde_json::Value) {
    replay_with(spec, py, &[], saved)
}

/// [`replay`] with more flags (`--memory-dir-unknown`).
fn replay_with(
    spec: &str,
    py: &str,
    flags: &[&str],
    saved: &std::path::Path,
) -> (Option<i32>, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let mut args = vec![
        "certify",
        "--python",
        spec,
        "--python-exe",
        py,
        "--jobs",
        "1",
    ];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--replay", saved.to_str().unwrap(), "--cases", "replay/*"]);
    args.extend_from_slice(&["--report-json", report.to_str().unwrap()]);
    let (code, out, err) = memcert(&args);
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    (code, serde_json::from_str(&text).unwrap())
}

/// `memcert fuzz --python spec --runs runs --seed 1 --jobs 1 --out found`.
fn fuzz_python(
    spec: &str,
    py: &str,
    runs: &str,
    found: &std::path::Path,
) -> (Option<i32>, String, String) {
    memcert(&[
        "fuzz",
        "--python",
        spec,
        "--python-exe",
        py,
        "--runs",
        runs,
        "--seed",
        "1",
        "--jobs",
        "1",
        "--out",
        found.to_str().unwrap(),
    ])
}

/// The one file `--out` wrote in `dir` (`fuzz-<12 hex digits>.json`).
fn only_file(dir: &std::path::Path) -> std::path::PathBuf {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap().to_owned();
    assert!(
        name.starts_with("fuzz-") && name.ends_with(".json") && name.len() == 22,
        "{name}"
    );
    files[0].clone()
}

#[test]
fn the_reference_gives_no_finding() {
    let (code, out, err) = memcert(&["fuzz", "--runs", "300", "--seed", "1", "--jobs", "1"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(out, "");
    let s = summary(&err);
    assert!(s.starts_with("memcert: fuzz: 300 sequences, "), "{err}");
    assert!(s.contains("NON-STRICT 0, ERROR 0; 0 causes found"), "{err}");
}

#[test]
fn a_stale_cache_after_a_folder_delete_is_found_shrunk_saved_and_replayed() {
    let py = python();
    // The catalog misses it.
    let (code, out, err) = memcert(&[
        "certify",
        "--python",
        STALE,
        "--python-exe",
        &py,
        "--jobs",
        "1",
        "--level",
        "quick",
        "--exclude",
        "race/*",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let dir = tempfile::tempdir().unwrap();
    let found = dir.path().join("found");
    let (code, out, err) = fuzz_python(STALE, &py, "1200", &found);
    assert_eq!(code, Some(1), "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with(
            "FINDING 1: FAIL reply (the model: not-found; the handler: success) (met "
        ),
        "{out}"
    );
    assert!(
        lines[0].contains("first in sequence 1174; 3 commands, shrunk from "),
        "{out}"
    );
    assert!(!out.contains("FINDING 2"), "{out}");
    // The three commands: a file in a folder, the folder deleted, the file viewed.
    let commands: Vec<serde_json::Value> = lines
        .iter()
        .filter_map(|l| l.trim_start().split_once(". {"))
        .map(|(_, rest)| serde_json::from_str(&format!("{{{rest}")).unwrap())
        .collect();
    let kinds: Vec<&str> = commands
        .iter()
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["create", "delete", "view"], "{out}");
    let file = commands[0]["path"].as_str().unwrap();
    let folder = commands[1]["path"].as_str().unwrap();
    assert!(file.starts_with(&format!("{folder}/")), "{out}");
    assert_eq!(commands[2]["path"], commands[0]["path"], "{out}");
    assert!(summary(&err).ends_with("; 1 cause found"), "{err}");

    // The saved finding, replayed: the same FAIL on the same step.
    let saved = only_file(&found);
    let (code, r) = replay(STALE, &py, &saved);
    assert_eq!(code, Some(1));
    let case = &r["cases"][0];
    let id = case["id"].as_str().unwrap();
    assert!(
        id.starts_with("replay/fuzz-") && id.len() == "replay/fuzz-".len() + 12,
        "{id}"
    );
    assert_eq!(case["verdict"], "FAIL");
    let first = &case["findings"][0];
    assert_eq!(first["kind"], "reply");
    assert!(
        first["detail"]
            .as_str()
            .unwrap()
            .starts_with("step 3: reported success ("),
        "{first}"
    );
    // And the reference passes it.
    let (code, out, err) = memcert(&[
        "certify",
        "--jobs",
        "1",
        "--replay",
        saved.to_str().unwrap(),
        "--cases",
        "replay/*",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
}

/// One-flaw fixtures of four kinds, each with seed 1 and an empty corpus: OS errors passed on
/// raw with the host path (`raw_os_errors.py`), a traversal spelling decoded after the check
/// (`decode_after_check.py`, a payload), a black-box store whose key is case-folded
/// (`alias_casefold.py`, two twins), and a link check made on the NFC form of a path opened raw
/// (`nfc_check_raw_use.py`, the search's own link under an NFD name). Each is one cause, met and shrunk exactly as stated (at most 6 commands, the issue's bound),
/// and its saved finding replays with the same verdict and the finding kind stated.
#[test]
fn one_flaw_fixtures_are_one_cause_each_and_replay_the_same() {
    let py = python();
    // (handler, flags, runs, first line, commands after shrinking, kind replayed)
    let table: [(&str, &[&str], &str, &str, usize, &str); 6] = [
        (
            "fixtures/handlers/flawed/raw_os_errors.py:RawOsErrorsMemoryTool",
            &[],
            "100",
            "FINDING 1: UNSAFE host-path-disclosed (met 11 times, first in sequence 44; 1 command, shrunk from 2)",
            1,
            "host-path-disclosed",
        ),
        (
            "fixtures/handlers/flawed/decode_after_check.py:DecodeAfterCheckMemoryTool",
            &[],
            "50",
            "FINDING 1: UNSAFE outside-touched (met 6 times, first in sequence 2; 1 command, shrunk from 1)",
            1,
            "outside-read",
        ),
        (
            "fixtures/handlers/flawed/alias_casefold.py:AliasCasefoldMemoryTool",
            &["--memory-dir-unknown"],
            "60",
            "FINDING 1: FAIL reply (the model: success; the handler: success) (met 8 times, first in sequence 6; 5 commands, shrunk from 7)",
            5,
            "reply",
        ),
        (
            "fixtures/handlers/flawed/nfc_check_raw_use.py:NfcCheckRawUseMemoryTool",
            &[],
            "760",
            "FINDING 1: UNSAFE outside-touched (met 1 time, first in sequence 755; 1 command, shrunk from 2)",
            1,
            "outside-read",
        ),
        (
            "fixtures/handlers/flawed/absolute_join.py:AbsoluteJoinMemoryTool",
            &[],
            "50",
            "FINDING 1: UNSAFE outside-touched (met 3 times, first in sequence 39; 1 command, shrunk from 1)",
            1,
            "outside-read",
        ),
        (
            "fixtures/handlers/flawed/huge_read.py:HugeReadMemoryTool",
            &[],
            "50",
            "FINDING 1: FAIL huge-file-read (met 3 times, first in sequence 40; 1 command, shrunk from 1)",
            1,
            "unbounded-read",
        ),
    ];
    for (spec, flags, runs, first_line, shrunk, kind) in table {
        let dir = tempfile::tempdir().unwrap();
        let found = dir.path().join("found");
        let mut args = vec!["fuzz", "--python", spec, "--python-exe", &py];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--runs", runs, "--seed", "1", "--jobs", "1"]);
        args.extend_from_slice(&["--out", found.to_str().unwrap()]);
        let (code, out, err) = memcert(&args);
        assert_eq!(code, Some(1), "{spec}: {out}{err}");
        assert_eq!(
            out.lines().next().unwrap_or(""),
            first_line,
            "{spec}: {out}"
        );
        assert!(!out.contains("FINDING 2"), "{spec}: {out}");
        let commands = out
            .lines()
            .filter(|l| l.trim_start().split_once(". {").is_some())
            .count();
        assert_eq!(commands, shrunk, "{spec}: {out}");
        let (code, r) = replay_with(spec, &py, flags, &only_file(&found));
        assert_eq!(code, Some(1), "{spec}");
        let verdict = first_line["FINDING 1: ".len()..].split(' ').next().unwrap();
        assert_eq!(r["cases"][0]["verdict"], verdict, "{spec}: {r}");
        assert_eq!(r["cases"][0]["findings"][0]["kind"], kind, "{spec}: {r}");
    }
}

/// `--out` is checked before the handler starts: never where the handler may write.
#[test]
fn out_under_allow_write_is_refused_before_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().to_str().unwrap();
    let out = dir.path().join("found");
    let (code, stdout, err) = memcert(&[
        "fuzz",
        "--allow-write",
        w,
        "--out",
        out.to_str().unwrap(),
        "--runs",
        "5",
    ]);
    assert_eq!(code, Some(2), "{stdout}{err}");
    assert_eq!(
        err,
        format!(
            "memcert: error: --allow-write {w} would let the handler write in --out {}; memcert's own files are never writable by the handler\n",
            out.display()
        )
    );
    assert!(!out.exists());
}

/// The number after `label ` in the summary line (`coverage 35 keys`: `coverage`).
fn count_in(summary: &str, label: &str) -> usize {
    let at = summary
        .find(&format!("{label} "))
        .unwrap_or_else(|| panic!("{summary}"))
        + label.len()
        + 1;
    summary[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{summary}"))
}

/// `--corpus`: the inputs that reached new coverage are written there; a second run reads them
/// first (skipping what is not an input it could make, never opening a FIFO or following a
/// link) and reaches the same coverage with them alone, adding no file.
#[test]
fn the_corpus_is_kept_between_runs() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    let c = corpus.to_str().unwrap();
    let (code, out, err) = memcert(&["fuzz", "--runs", "80", "--jobs", "1", "--corpus", c]);
    assert_eq!(code, Some(0), "{out}{err}");
    let first = summary(&err).to_owned();
    let kept = count_in(&first, "corpus");
    let coverage = count_in(&first, "coverage");
    let files: Vec<String> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files.len(), kept, "{files:?}");
    assert!(kept >= 5, "{first}");
    assert!(
        files
            .iter()
            .all(|f| f.starts_with("input-") && f.ends_with(".json") && f.len() == 23),
        "{files:?}"
    );
    // Skipped: a file of another format, a FIFO (never opened: the run would hang), a link
    // to an input, and an input aiming above the watched run folder, which the generator
    // never makes.
    std::fs::write(corpus.join("bad.json"), "{\"format\": \"other\"}").unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(corpus.join("fifo.json"))
        .status()
        .unwrap();
    assert!(fifo.success());
    std::os::unix::fs::symlink(corpus.join(&files[0]), corpus.join("link.json")).unwrap();
    std::fs::write(
        corpus.join("deep.json"),
        r#"{"format": "memcert-fuzz-input/1", "sequence": {"layout": 0, "profile": 0, "commands": [{"create": {"path": {"rooted": false, "tokens": [{"raw": "/memories/../../../outside/x"}]}, "text": {"fixed": 1}}}]}}"#,
    )
    .unwrap();
    // The same input one level up, which the generator makes: read (after the kept ones, in
    // name order, so `--runs 38+kept` does not reach it).
    std::fs::write(
        corpus.join("ok.json"),
        r#"{"format": "memcert-fuzz-input/1", "sequence": {"layout": 0, "profile": 0, "commands": [{"create": {"path": {"rooted": false, "tokens": [{"raw": "/memories/../outside/canary.txt"}]}, "text": {"fixed": 1}}}]}}"#,
    )
    .unwrap();
    std::fs::write(corpus.join("notes.txt"), "not an input").unwrap();
    // The 41 built-in first inputs run before the corpus, as in the first run.
    let runs = (41 + kept).to_string();
    let (code, out, err) = memcert(&["fuzz", "--runs", &runs, "--jobs", "1", "--corpus", c]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        err.contains("memcert: warning: --corpus: 4 files skipped (not a regular memcert-fuzz-input/1 file of at most 65536 bytes holding an input memcert fuzz could make, or over 100000 files or 67108864 bytes)\n"),
        "{err}"
    );
    assert!(
        err.contains(&format!("memcert: --corpus: {} inputs read\n", kept + 1)),
        "{err}"
    );
    let second = summary(&err);
    assert_eq!(count_in(second, "coverage"), coverage, "{first}\n{second}");
    // In file-name order, some inputs reach nothing the ones before did not: not kept again.
    assert!(count_in(second, "corpus") <= kept, "{second}");
    assert_eq!(std::fs::read_dir(&corpus).unwrap().count(), kept + 6);
}
