//! `--jobs` and `--reset`: a run on several handlers at once gives the reports of a run on one,
//! and a run whose sandboxes are reset by undo gives the reports of a run that lays out a fresh
//! sandbox per case (issue 15). Two reports are equal once what no two runs share is taken out
//! ([`comparable`]): the timing fields, the random names of a run's temp folders and canary
//! token, and the summary's `jobs` (asserted apart: the handlers used). Race cases leak by
//! chance, so they are compared as the set of their verdicts; a batch case by its verdict.
//!
//! Runs are at `--level quick`, and the reference's and the pinned SDKs' at `standard` too. The
//! Python and Node handlers' runs leave out the race cases (a race that leaks in one run of the
//! pinned SDK and not in the next would change the totals) and the 64 MiB files of
//! `hazard/huge-file/*` (whether a handler still reading one is stopped after `READ_PATIENCE`
//! depends on its speed, `target::stdio`: the same verdict, other steps); the TypeScript SDK's
//! also its batches ([`sdk_args`]).

#[path = "../common/mod.rs"]
mod common;
use common::*;

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;

/// The JSON report of `memcert certify --level <level>` with `how` (`--jobs`, `--reset`) and
/// `args`.
fn report_of(level: &str, how: &[&str], args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_memcert"))
        .args(["certify", "--level", level])
        .args(how)
        .arg("--report-json")
        .arg(&json)
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "{level} {how:?} {args:?}: no report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(&text).unwrap()
}

/// The handlers a run with `how` (`--jobs N`) must report having used (`summary.jobs`): N, but
/// one where a handler gets no PID namespace of its own (the subreaper fallback cannot tell two
/// handlers' processes apart).
fn jobs_used(how: &[&str], report: &Value) -> String {
    let asked = how
        .iter()
        .position(|f| *f == "--jobs")
        .and_then(|i| how.get(i + 1))
        .copied()
        .unwrap_or("1");
    let alone = report["summary"]["containment"]["namespaces"] == "none (subreaper)";
    if alone { "1" } else { asked }.to_owned()
}

/// Assert that the reports of `args` at `level` run as `a` and as `b` (each with `--jobs`) are
/// [`comparable`]ly equal, the summary's `jobs` aside, which must be the handlers each asked
/// for ([`jobs_used`]), and that the run had cases; returns the first.
fn same_reports(level: &str, a: &[&str], b: &[&str], args: &[&str]) -> Value {
    let first = report_of(level, a, args);
    let second = report_of(level, b, args);
    for (how, r) in [(a, &first), (b, &second)] {
        assert_eq!(
            r["summary"]["jobs"].to_string(),
            jobs_used(how, r),
            "{how:?} {args:?}"
        );
    }
    let (mut x, mut y) = (comparable(&first), comparable(&second));
    x["summary"]["jobs"] = Value::Null;
    y["summary"]["jobs"] = Value::Null;
    assert!(
        x["cases"].as_array().is_some_and(|c| c.len() > 100),
        "{args:?}: {}",
        x["summary"]
    );
    if let Some(d) = first_difference(&x, &y, "") {
        panic!("{level}: {a:?} and {b:?} differ with {args:?}: {d}");
    }
    first
}

/// One job, a fresh sandbox per case: the run every other way is compared with.
const FRESH_ONE: [&str; 4] = ["--jobs", "1", "--reset", "fresh"];
/// One job, reset by undo.
const UNDO_ONE: [&str; 4] = ["--jobs", "1", "--reset", "undo"];
/// Two jobs, reset by undo (the default on this machine).
const UNDO_TWO: [&str; 4] = ["--jobs", "2", "--reset", "undo"];

/// The one-flaw fixtures of `fixtures/handlers/flawed/` as adapter specs: each file not named
/// `_*.py`, with the last class it defines whose name does not start with `_`.
fn flawed_fixtures() -> Vec<String> {
    let dir = root().join("fixtures/handlers/flawed");
    let mut specs: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".py") && !n.starts_with('_'))
        .filter_map(|n| {
            let text = std::fs::read_to_string(dir.join(&n)).ok()?;
            let class = text
                .lines()
                .filter_map(|l| l.strip_prefix("class "))
                .map(|l| l.split(['(', ':']).next().unwrap_or("").trim().to_owned())
                .filter(|c| !c.is_empty() && !c.starts_with('_'))
                .last()?;
            Some(format!("fixtures/handlers/flawed/{n}:{class}"))
        })
        .collect();
    specs.sort();
    specs
}

/// `text` with what differs between any two runs replaced by a placeholder: the random part of
/// memcert's temp folder names (`memcert-XXXXXX`, `memcert-alias-XXXXXX`, ...), the canary
/// token, a UUID (the SDK's temp file names), the PID in the SDK's temp file names
/// (`.tmp-PID-`), and the byte count of an unbounded read (`/proc/<pid>/io` counts a few bytes
/// more or less from one run to the next).
fn redact(text: &str) -> String {
    let s: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let at = |i: usize, p: &str| s[i..].iter().take(p.chars().count()).copied().eq(p.chars());
    let run = |i: usize, ok: fn(char) -> bool| s[i..].iter().take_while(|c| ok(**c)).count();
    let mut i = 0;
    while i < s.len() {
        if at(i, "memcert-") {
            out.push_str("memcert-");
            i += 8;
            // Lower-case words and dashes of a prefix (`alias-`, `scratch-`), then six random
            // letters and digits.
            loop {
                let word = run(i, |c| c.is_ascii_lowercase());
                if word > 0 && s.get(i + word) == Some(&'-') {
                    out.extend(&s[i..=i + word]);
                    i += word + 1;
                } else {
                    break;
                }
            }
            if run(i, |c| c.is_ascii_alphanumeric()) == 6 {
                out.push_str("XXXXXX");
                i += 6;
            }
        } else if at(i, "MEMCERT-") && token_at(&s[i + 8..]).is_some() {
            // `MEMCERT-CANARY-<16 hex>`, or as a handler edited it (`MEMCERT-X-...`).
            let word = token_at(&s[i + 8..]).unwrap_or(0);
            out.push_str("MEMCERT-");
            out.extend(&s[i + 8..i + 8 + word + 1]);
            out.push_str("[TOKEN]");
            i += 8 + word + 1 + 16;
        } else if is_uuid(&s[i..]) {
            out.push_str("[UUID]");
            i += 36;
        } else if at(i, ".tmp-") && run(i + 5, |c| c.is_ascii_digit()) > 0 {
            out.push_str(".tmp-[PID]");
            i += 5 + run(i + 5, |c| c.is_ascii_digit());
        } else if at(i, "read ")
            && run(i + 5, |c| c.is_ascii_digit()) > 0
            && at(i + 5 + run(i + 5, |c| c.is_ascii_digit()), " bytes")
        {
            out.push_str("read [N]");
            i += 5 + run(i + 5, |c| c.is_ascii_digit());
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

/// The length of the upper-case word when `s` starts with one, a `-` and 16 hexadecimal digits
/// (the canary token after `MEMCERT-`).
fn token_at(s: &[char]) -> Option<usize> {
    let word = s.iter().take_while(|c| c.is_ascii_uppercase()).count();
    let hex = s
        .iter()
        .skip(word + 1)
        .take(16)
        .filter(|c| c.is_ascii_hexdigit())
        .count();
    (word > 0 && s.get(word) == Some(&'-') && hex == 16).then_some(word)
}

/// Whether `s` starts with a UUID (`8-4-4-4-12` lower-case hex digits).
fn is_uuid(s: &[char]) -> bool {
    let groups = [8, 4, 4, 4, 12];
    let mut i = 0;
    for (n, len) in groups.iter().enumerate() {
        let hex = s[i..]
            .iter()
            .take(*len)
            .filter(|c| c.is_ascii_digit() || ('a'..='f').contains(c))
            .count();
        if hex != *len {
            return false;
        }
        i += len;
        if n < groups.len() - 1 {
            if s.get(i) != Some(&'-') {
                return false;
            }
            i += 1;
        }
    }
    true
}

/// A report without its timing fields (`duration_ms`, `peak_memory_kib`), every string
/// [`redact`]ed.
fn without_timing(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "duration_ms" | "peak_memory_kib"))
                .map(|(k, x)| (k.clone(), without_timing(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_timing).collect()),
        Value::String(s) => Value::String(redact(s)),
        other => other.clone(),
    }
}

/// What two runs of one handler must share: the report [`without_timing`], its race cases
/// (`race/...`) taken out of `cases` and kept as the set of their verdicts under
/// `race_verdicts`, and of each batch case (`batch/...`) its verdict alone.
fn comparable(report: &Value) -> Value {
    let mut r = without_timing(report);
    let cases = r["cases"].as_array().cloned().unwrap_or_default();
    let (races, others): (Vec<Value>, Vec<Value>) = cases
        .into_iter()
        .partition(|c| c["id"].as_str().unwrap_or("").starts_with("race/"));
    let verdicts: BTreeSet<String> = races
        .iter()
        .map(|c| c["verdict"].as_str().unwrap_or("").to_owned())
        .collect();
    // A batch runs its commands at once in some handlers (the TypeScript SDK's inserts race:
    // which lost update survives is timing): the verdict is compared, not what it says.
    let others = others
        .into_iter()
        .map(|c| {
            if c["id"].as_str().unwrap_or("").starts_with("batch/") {
                serde_json::json!({"id": c["id"], "verdict": c["verdict"]})
            } else {
                c
            }
        })
        .collect();
    r["cases"] = Value::Array(others);
    r["race_verdicts"] = serde_json::json!(verdicts);
    r
}

/// The first difference between `a` and `b` (a JSON pointer and both values), for a failure
/// message that does not print two whole reports.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                first_difference(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    &format!("{at}/{k}"),
                )
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}/{i}"))),
        _ if a == b => None,
        _ => Some(format!("{at}: {a} != {b}")),
    }
}

#[test]
fn redact_replaces_what_differs_between_runs_only() {
    assert_eq!(
        redact("/dev/shm/memcert-alias-nq0iFY/canary.txt and /tmp/memcert-Ab12cd/base"),
        "/dev/shm/memcert-alias-XXXXXX/canary.txt and /tmp/memcert-XXXXXX/base"
    );
    assert_eq!(
        redact("MEMCERT-CANARY-a513559573411c5c hard-source.txt, MEMCERT-X-5f103d381b79359e"),
        "MEMCERT-CANARY-[TOKEN] hard-source.txt, MEMCERT-X-[TOKEN]"
    );
    assert_eq!(
        redact("base/outside/.tmp-2-2e7509ad-301b-4405-a006-58483320a78c was created"),
        "base/outside/.tmp-[PID]-[UUID] was created"
    );
    assert_eq!(
        redact("the handler read 67108984 bytes for one call"),
        "the handler read [N] bytes for one call"
    );
    // Names memcert did not make random stay.
    assert_eq!(
        redact("memcert-reference and memcert-cases, read 3 files"),
        "memcert-reference and memcert-cases, read 3 files"
    );
}

// See: issue 15: two fresh one-job runs agree first (what [`comparable`] keeps is not left to
// chance); then at each level a fresh sandbox per case and reset by undo on one job give the
// same reports, and so do one job and two, both reset by undo.
#[test]
fn the_reference_gives_the_same_reports_fresh_or_undone_on_one_job_or_two() {
    let (a, b) = (
        report_of("quick", &FRESH_ONE, &[]),
        report_of("quick", &FRESH_ONE, &[]),
    );
    if let Some(d) = first_difference(&comparable(&a), &comparable(&b), "") {
        panic!("two fresh --jobs 1 runs of the reference differ: {d}");
    }
    for level in ["quick", "standard"] {
        let one = same_reports(level, &FRESH_ONE, &UNDO_ONE, &[]);
        assert_eq!(one["summary"]["certified"], true, "{}", one["summary"]);
        assert_eq!(
            comparable(&one)["race_verdicts"],
            serde_json::json!(["PASS"])
        );
        same_reports(level, &UNDO_ONE, &UNDO_TWO, &[]);
    }
}

/// The flags of the pinned SDK handler of `profile` that leave out what no two runs share: the
/// race cases, the 64 MiB files (see the module docs) and the TypeScript SDK's batches.
fn sdk_args(profile: &str, py: &str, node: &str) -> Vec<String> {
    let mut v: Vec<String> = match profile {
        "python-sdk" => vec!["--python", PYTHON_SDK_HANDLER, "--python-exe", py],
        _ => vec!["--node", TYPESCRIPT_SDK_HANDLER, "--node-path", node],
    }
    .into_iter()
    .map(str::to_owned)
    .collect();
    v.extend(
        [
            "--profile",
            profile,
            "--exclude",
            "race/*",
            "--exclude",
            "hazard/huge-file/*",
        ]
        .map(str::to_owned),
    );
    if profile == "typescript-sdk" {
        // Its adapter runs a batch's commands at once: which of two creates of one file wins
        // is timing (`batch/create-twice` PASS in one run, NON-STRICT in the next).
        v.extend(["--exclude", "batch/*"].map(str::to_owned));
    }
    v
}

#[test]
fn the_pinned_sdks_give_the_same_reports_fresh_on_one_job_or_undone_on_two() {
    let (py, node) = (python(), node_path().to_string_lossy().into_owned());
    for profile in ["python-sdk", "typescript-sdk"] {
        let args = sdk_args(profile, &py, &node);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for level in ["quick", "standard"] {
            let one = same_reports(level, &FRESH_ONE, &UNDO_TWO, &args);
            assert_eq!(one["summary"]["certified"], false, "{profile} {level}");
        }
    }
}

/// The flawed fixtures whose flaw is in what they leave on disk or how they reach it (links,
/// hard links, temp files, deletes, writes in place, the store root): the ones
/// [`flawed_fixtures_give_the_same_reports_fresh_on_one_job_or_undone_on_two`] runs in CI.
/// `MEMCERT_EVERY_FIXTURE=1` runs all 33 (about 16 s each in a debug build).
const STATEFUL_FIXTURES: [&str; 6] = [
    "create_in_place.py",
    "follows_links.py",
    "hardlink_insert.py",
    "naive_join.py",
    "root_alias_delete.py",
    "transient_temp.py",
];

#[test]
fn flawed_fixtures_give_the_same_reports_fresh_on_one_job_or_undone_on_two() {
    let py = python();
    let fixtures = flawed_fixtures();
    assert_eq!(fixtures.len(), 33, "{fixtures:?}");
    let every = std::env::var_os("MEMCERT_EVERY_FIXTURE").is_some_and(|v| v == "1");
    let chosen: Vec<&String> = fixtures
        .iter()
        .filter(|f| {
            every
                || STATEFUL_FIXTURES
                    .iter()
                    .any(|s| f.contains(&format!("/{s}:")))
        })
        .collect();
    assert_eq!(chosen.len(), if every { 33 } else { 6 }, "{chosen:?}");
    for spec in chosen {
        let args = [
            "--python",
            spec,
            "--python-exe",
            &py,
            "--exclude",
            "race/*",
            "--exclude",
            "hazard/huge-file/*",
        ];
        let one = same_reports("quick", &FRESH_ONE, &UNDO_TWO, &args);
        assert_eq!(one["summary"]["counts"]["ERROR"], 0, "{spec}");
    }
}

// See: issue 15's review: inotify does not see a write through a shared mmap, so the "after"
// of a case is walked with reset by undo too.
#[test]
fn a_write_through_a_shared_mmap_is_unsafe_fresh_or_undone() {
    let py = python();
    let args = view_cases_of(
        &py,
        "fixtures/handlers/hostile/mmap_writer.py:MmapWriterMemoryTool",
    );
    for how in [FRESH_ONE, UNDO_ONE] {
        let r = report_of("standard", &how, &args);
        let cases = r["cases"].as_array().cloned().unwrap_or_default();
        assert_eq!(cases.len(), 14, "{how:?}");
        for c in &cases {
            assert_eq!(c["verdict"], "UNSAFE", "{how:?} {}", c["id"]);
            let kinds: Vec<&str> = c["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f["kind"].as_str())
                .collect();
            assert_eq!(kinds, ["outside-changed"], "{how:?} {}", c["id"]);
        }
    }
}

// The held outside files are read again only once a window saw one of them opened
// (`Session::opened`): a mapping made in one case and written through in a later one, with no
// open in that later case, must still show.
#[test]
fn a_mapping_kept_from_an_earlier_case_and_written_later_is_unsafe_where_it_lands() {
    let py = python();
    let args = view_cases_of(
        &py,
        "fixtures/handlers/hostile/mmap_keeper.py:MmapKeeperMemoryTool",
    );
    let verdicts = |how: &[&str]| -> Vec<(String, Vec<String>)> {
        let r = report_of("standard", how, &args);
        r["cases"]
            .as_array()
            .into_iter()
            .flatten()
            .map(verdict_of)
            .collect()
    };
    // With a sandbox per case the writes land in removed files: the careful base's verdicts
    // (4 of its replies are worded otherwise: NON-STRICT).
    let fresh = verdicts(&FRESH_ONE);
    let of = |v: &str| fresh.iter().filter(|(w, _)| w == v).count();
    assert_eq!((fresh.len(), of("PASS"), of("NON-STRICT")), (14, 10, 4));
    assert_eq!(fresh[1], ("PASS".to_owned(), Vec::new()));
    // Undone: the second case, the first write, is caught; then a new layout.
    let mut undo = fresh.clone();
    undo[1] = ("UNSAFE".to_owned(), vec!["outside-changed".to_owned()]);
    assert_eq!(verdicts(&UNDO_ONE), undo);
}

// A write a handler's thread makes 50 ms after the case's last answer is charged to exactly one
// case, whatever the timing: the case that wrote it, when memcert saw it before judging that
// case (in the "after" walk, or after the last answer), or the next case on the same sandbox,
// which names it. On a busy machine memcert's close, store read and checks after the last
// answer can take longer than 50 ms, so which of the two varies from run to run: the test
// asserts what holds under either.
#[test]
fn a_write_after_the_last_answer_is_charged_to_the_case_that_wrote_it_or_the_next() {
    let py = python();
    let cases = |how: &[&str], spec: &str| -> Vec<Value> {
        report_of("standard", how, &view_cases_of(&py, spec))["cases"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    // The careful base's verdicts, with no late writer (4 of its replies are worded otherwise).
    let careful: Vec<_> = cases(
        &UNDO_ONE,
        "fixtures/handlers/flawed/_careful_base.py:CarefulMemoryToolBase",
    )
    .iter()
    .map(verdict_of)
    .collect();
    let of = |v: &str| careful.iter().filter(|(w, _)| w == v).count();
    assert_eq!((careful.len(), of("PASS"), of("NON-STRICT")), (14, 10, 4));
    let spec = "fixtures/handlers/hostile/late_writer.py:LateWriterMemoryTool";
    // Each case's charges of the secret's write: (its own, the case before it's).
    let charges = |cases: &[Value]| -> Vec<(usize, usize)> {
        assert_eq!(cases.len(), 14);
        cases
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let before = i
                    .checked_sub(1)
                    .and_then(|j| cases[j]["id"].as_str())
                    .map(|id| {
                        format!(
                            "after the last answer of the case before it on this sandbox ({id}), before this case's commands, "
                        )
                    });
                let mut charged = (0, 0);
                for f in c["findings"].as_array().into_iter().flatten() {
                    if f["kind"] != "outside-changed" {
                        continue;
                    }
                    let d = f["detail"].as_str().unwrap_or_default();
                    // The comparison, the window or the gap after the last answer: its own.
                    let (rest, theirs) = match before.as_deref().and_then(|b| d.strip_prefix(b)) {
                        Some(rest) => (rest, true),
                        None => (
                            ["while the case ran, ", "after the case's last answer, "]
                                .iter()
                                .find_map(|p| d.strip_prefix(p))
                                .unwrap_or(d),
                            false,
                        ),
                    };
                    assert!(
                        ["written", "changed"].iter().any(|w| rest
                            == format!("outside the root, base/outside/secret.txt was {w}")),
                        "case {i}: {d}"
                    );
                    if theirs {
                        charged.1 += 1;
                    } else {
                        charged.0 += 1;
                    }
                }
                // Charged: UNSAFE for that alone; else the careful base's verdict.
                let want = if charged == (0, 0) {
                    careful[i].clone()
                } else {
                    ("UNSAFE".to_owned(), vec!["outside-changed".to_owned(); charged.0 + charged.1])
                };
                assert_eq!(verdict_of(c), want, "case {i}");
                charged
            })
            .collect()
    };
    // With a sandbox per case a write is its case's, when it lands before the "after" walk;
    // else it lands in the removed sandbox.
    let fresh = charges(&cases(&FRESH_ONE, spec));
    assert!(fresh.iter().all(|&(_, theirs)| theirs == 0), "{fresh:?}");
    // Undone: a write is charged once, to its case or to the next, which names it; the next
    // case's reset waits for it, so the write of a case left uncharged is never lost (the last
    // case's may be). A case charged with the one before it has a new sandbox if it was seen
    // before the reset, the same one (not kept after) if during it.
    let undone = charges(&cases(&UNDO_ONE, spec));
    for i in 1..14 {
        let ((own, _), (_, theirs)) = (undone[i - 1], undone[i]);
        assert!(theirs <= 1, "{undone:?}");
        assert!(own == 0 || theirs == 0, "charged twice: {undone:?}");
        assert!(
            undone[i - 1] != (0, 0) || undone[i] != (0, 0),
            "the write of case {} was lost: {undone:?}",
            i - 1
        );
    }
    // So no two cases in a row pass uncharged: at least 7 of the 14 are UNSAFE.
    let unsafe_ = undone.iter().filter(|c| **c != (0, 0)).count();
    assert!(unsafe_ >= 7, "{undone:?}");
}

/// A case of a JSON report as its verdict and the kinds of its findings that are not PASS.
fn verdict_of(c: &Value) -> (String, Vec<String>) {
    let kinds = c["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["verdict"] != "PASS")
        .filter_map(|f| f["kind"].as_str().map(str::to_owned))
        .collect();
    (c["verdict"].as_str().unwrap_or_default().to_owned(), kinds)
}

/// The arguments that run the Python handler `spec` (with interpreter `py`) on the
/// `view/file/*` cases.
fn view_cases_of<'a>(py: &'a str, spec: &'a str) -> [&'a str; 6] {
    [
        "--python",
        spec,
        "--python-exe",
        py,
        "--cases",
        "view/file/*",
    ]
}

/// The exit code and stderr of `memcert` with `args`.
fn usage(args: &[&str]) -> (Option<i32>, String) {
    let (code, _, stderr) = common::memcert(args);
    (code, stderr)
}

#[test]
fn jobs_0_and_more_than_one_job_where_runs_go_one_at_a_time_are_usage_errors() {
    assert_eq!(
        usage(&["certify", "--jobs", "0"]),
        (
            Some(2),
            "memcert: error: --jobs must be at least 1\n".into()
        )
    );
    assert_eq!(
        usage(&["certify", "--jobs", "65"]),
        (Some(2), "memcert: error: --jobs 65: at most 64\n".into())
    );
    assert_eq!(
        usage(&["snapshot", "--out", "unused", "--jobs", "0"]),
        (
            Some(2),
            "memcert: error: --jobs must be at least 1\n".into()
        )
    );
    assert_eq!(
        usage(&["certify", "--memory-dir-unknown", "--jobs", "2"]),
        (
            Some(2),
            "memcert: error: --jobs 2: with --memory-dir-unknown every handler process would \
             share one store; use --jobs 1\n"
                .into()
        )
    );
    let app = [
        "certify",
        "--app",
        "true",
        "--memory-dir",
        "unused/base/memories",
        "--jobs",
        "3",
    ];
    assert_eq!(
        usage(&app),
        (
            Some(2),
            "memcert: error: --jobs 3: --app runs one app at a time; use --jobs 1\n".into()
        )
    );
}
