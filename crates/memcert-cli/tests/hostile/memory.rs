//! Reply floods (`fixtures/handlers/hostile/`, issue 13): memcert stays bounded, gives the
//! verdict each fixture's docstring names, and writes every report. The memory tests
//! (`memory_*`) run the binary on the reply floods and compare memcert's own recorded peak
//! memory (`summary.peak_memory_kib`) with a quiet handler's.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::common::root;

/// The default read cap, in KiB.
const READ_CAP_KIB: u64 = (memcert::target::stdio::DEFAULT_MAX_REPLY_BYTES / 1024) as u64;

/// `memcert certify --stdio "python3 <fixture>" <args>` from the repository, with every file
/// report in `dir`; the exit code, stdout, and the JSON report.
fn certify(dir: &Path, handler: &str, args: &[&str]) -> (Option<i32>, String, Value) {
    let json = dir.join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_memcert"))
        .arg("certify")
        .arg("--stdio")
        .arg(format!("python3 fixtures/handlers/hostile/{handler}"))
        .args(args)
        .arg("--report-json")
        .arg(&json)
        .arg("--junit")
        .arg(dir.join("report.xml"))
        .arg("--markdown")
        .arg(dir.join("report.md"))
        .arg("--html")
        .arg(dir.join("report.html"))
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let report = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}); stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (
        out.status.code(),
        stdout,
        serde_json::from_str(&report).unwrap(),
    )
}

/// Every report in `dir` was written, is small, and parses: the JSON (read already), the JUnit
/// XML (by Python's parser), the Markdown and HTML (present, under GitHub's 1 MiB step-summary
/// limit).
fn assert_reports_valid(dir: &Path) {
    for name in ["report.json", "report.xml", "report.md", "report.html"] {
        let len = std::fs::metadata(dir.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .len();
        assert!(len > 0 && len < 1 << 20, "{name}: {len} bytes");
    }
    let xml = Command::new("python3")
        .args([
            "-c",
            "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])",
        ])
        .arg(dir.join("report.xml"))
        .output()
        .unwrap();
    assert!(
        xml.status.success(),
        "{}",
        String::from_utf8_lossy(&xml.stderr)
    );
}

/// Each case of `report` is FAIL with one `reply-too-large` finding "unbounded reply: more than
/// `cap` bytes" on its first step, cites bug:B17, and its step has no reply.
fn assert_all_cut(report: &Value, cap: usize) {
    let cases = report["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    for c in cases {
        let id = &c["id"];
        assert_eq!(c["verdict"], "FAIL", "{id}: {c}");
        assert_eq!(c["findings"][0]["kind"], "reply-too-large", "{id}");
        assert_eq!(
            c["findings"][0]["detail"],
            format!("step 1: unbounded reply: more than {cap} bytes"),
            "{id}"
        );
        assert!(
            c["source"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s == "bug:B17"),
            "{id}: {}",
            c["source"]
        );
        let step = &c["steps"][0];
        assert!(step["reply"].is_null(), "{id}");
        assert_eq!(step["reply_verdict"], "FAIL", "{id}");
        assert_eq!(step["verdict"], "FAIL", "{id}");
    }
    assert_eq!(report["summary"]["counts"]["FAIL"], cases.len());
    assert_eq!(report["summary"]["counts"]["ERROR"], 0);
}

const CASES: [&str; 8] = [
    "--cases",
    "view/missing",
    "--cases",
    "delete/missing",
    "--cases",
    "create/new-file",
    "--cases",
    "rename/source-missing",
];

// See: issue 13 ("a handler that answers 60 MB of valid JSON per call took memcert to 449 MB
// for one case"), bug:B17.
#[test]
fn memory_flood_is_fail_b17_and_every_report_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, report) = certify(dir.path(), "flood.py", &CASES[..4]);
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(report["schema_version"], 6);
    assert_all_cut(&report, memcert::target::stdio::DEFAULT_MAX_REPLY_BYTES);
    assert_reports_valid(dir.path());
    assert!(
        stdout.len() < 64 * 1024,
        "{} bytes of terminal report",
        stdout.len()
    );
    assert!(stdout.contains("[reply-too-large] bug:B17"), "{stdout}");
}

// See: issue 13 (memory); the acceptance criterion: the flood's recorded VmHWM is at most the
// quiet fixture's plus three read caps.
#[test]
fn memory_flood_peak_stays_within_quiet_plus_three_read_caps() {
    let peak = |handler: &str| {
        let dir = tempfile::tempdir().unwrap();
        let (_, _, report) = certify(dir.path(), handler, &CASES);
        report["summary"]["peak_memory_kib"]
            .as_u64()
            .unwrap_or_else(|| panic!("{handler}: no peak_memory_kib in {}", report["summary"]))
    };
    let quiet = peak("quiet.py");
    let flood = peak("flood.py");
    eprintln!("peak memory: quiet {quiet} KiB, flood {flood} KiB");
    assert!(
        flood <= quiet + 3 * READ_CAP_KIB,
        "flood {flood} KiB > quiet {quiet} KiB + 3 read caps ({READ_CAP_KIB} KiB each)"
    );
}

// See: issue 13 ("endless lines"): a line without a newline is cut at the cap, not read until
// --timeout or memory runs out.
#[test]
fn memory_endless_line_is_cut_at_the_read_cap() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (code, stdout, report) = certify(
        dir.path(),
        "endless_line.py",
        &[
            "--jobs",
            "1",
            "--max-reply-bytes",
            "1048576",
            "--timeout",
            "60",
            "--cases",
            "view/missing",
            "--cases",
            "delete/missing",
        ],
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "cut at the cap, not at --timeout: {:?}",
        started.elapsed()
    );
    assert_eq!(code, Some(1), "{stdout}");
    assert_all_cut(&report, 1 << 20);
    assert_reports_valid(dir.path());
    let peak = report["summary"]["peak_memory_kib"].as_u64().unwrap();
    assert!(peak < 200 * 1024, "{peak} KiB");
}

// See: issue 13 ("a 251 MB JSON report for four cases"): a reply under the read cap but over
// the 64 KiB keep cap is graded whole and kept cut, with its length and SHA-256.
#[test]
fn memory_long_reply_is_kept_cut_with_its_length_and_sha256() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, report) = certify(dir.path(), "flood.py 200000", &CASES[..2]);
    assert_eq!(code, Some(1), "{stdout}");
    let case = &report["cases"][0];
    assert_eq!(case["verdict"], "FAIL", "{case}");
    let step = &case["steps"][0];
    let kept = memcert::certify::KEEP_BYTES;
    assert_eq!(step["reply"]["content"].as_str().unwrap().len(), kept);
    assert_eq!(step["reply_cut"]["bytes"], 200_000);
    assert_eq!(step["reply_cut"]["kept"], kept);
    assert_eq!(
        step["reply_cut"]["sha256"],
        memcert::certify::sha256_hex(&[b'x'; 200_000])
    );
    assert_reports_valid(dir.path());
    let json_len = std::fs::metadata(dir.path().join("report.json"))
        .unwrap()
        .len();
    assert!(json_len < 4 * kept as u64, "{json_len} bytes of JSON");
}

// See: issue 13 ("writing a request to the handler's stdin is a blocking write_all with no
// deadline"): a handler that stops reading its stdin times out within --timeout.
#[test]
fn memory_deaf_handler_times_out_while_memcert_writes() {
    let mut cmd = Command::new("python3");
    cmd.arg(root().join("fixtures/handlers/hostile/deaf.py"));
    let mut target = memcert::target::stdio::Stdio::new(cmd, Duration::from_secs(1));
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("memories");
    std::fs::create_dir(&store).unwrap();
    use memcert::target::Target;
    target.reset(dir.path(), &store).unwrap();
    let input = serde_json::json!({
        "command": "create",
        "path": "/memories/big.txt",
        "file_text": "x".repeat(4 << 20),
    });
    let started = Instant::now();
    let err = target.call(&input).unwrap_err();
    assert!(
        matches!(err, memcert::target::TargetError::Timeout(_)),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// `POST {url}/v1/messages` with `body` (or, with `declared`, only a head claiming that many
/// bytes); the status code the mock answered.
fn post_to_mock(url: &str, body: &[u8], declared: Option<usize>) -> u16 {
    use std::io::{Read, Write};
    let rest = url.trim_start_matches("http://");
    let (addr, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "POST /{prefix}/v1/messages HTTP/1.1\r\nhost: {addr}\r\nx-api-key: k\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        declared.unwrap_or(body.len())
    )
    .unwrap();
    let _ = s.write_all(body);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out);
    text.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// The `VmHWM` of process `pid`, in KiB.
fn vm_hwm_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .unwrap();
    line.trim().trim_end_matches("kB").trim().parse().unwrap()
}

// See: issue 13 ("the mock Messages API keeps every request body (40 x 10 MB plus one 100 MB
// body: 1.58 GB)"): the mock reads at most 32 MiB of a body and keeps at most 64 MiB of them.
#[test]
fn memory_mock_api_refuses_large_bodies_and_keeps_bounded_history() {
    let scratch = tempfile::tempdir().unwrap();
    let memory_dir = scratch.path().join("run/base/memories");
    let mut mock = Command::new(env!("CARGO_BIN_EXE_memcert"))
        .args(["mock-api", "--timeout", "60", "--transcript"])
        .arg(root().join("fixtures/transcripts/two-tool-uses.json"))
        .arg("--memory-dir")
        .arg(&memory_dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url =
        super::common::base_url_line(&mut std::io::BufReader::new(mock.stdout.take().unwrap()));
    let request = |text: &str| {
        serde_json::json!({"model": "m", "max_tokens": 1,
            "messages": [{"role": "user", "content": text}]})
        .to_string()
        .into_bytes()
    };
    assert_eq!(post_to_mock(&url, &request("hi"), None), 200);
    let before = vm_hwm_kib(mock.id());
    let big = request(&"x".repeat(10_000_000));
    for _ in 0..12 {
        assert_eq!(post_to_mock(&url, &big, None), 200);
    }
    assert_eq!(post_to_mock(&url, b"", Some(100 << 20)), 413);
    let after = vm_hwm_kib(mock.id());
    let _ = mock.kill();
    let _ = mock.wait();
    eprintln!("mock-api peak memory: {before} KiB after one request, {after} KiB after 12 x 10 MB and a 100 MB body");
    // The history (64 MiB) plus a few bodies in flight; 1.58 GB before the bound.
    assert!(after <= before + 160 * 1024, "{before} KiB -> {after} KiB");
}

// See: issue 13 ("a .snap claiming 2^64-1 lines panics (exit 101), 10^15 lines aborts (134), a
// .snap that is a FIFO hangs, one linked to /dev/zero reads until out of memory").
#[test]
fn memory_hostile_snap_files_are_one_line_errors_with_exit_2() {
    use rustix::fs::{FileType, Mode, CWD};
    let header = |count: &str| {
        format!("---\nexpression: view/missing\n---\n--- step 1 ---\nis_error: true\ncontent: {count} lines\nx\n")
    };
    type Plant = Box<dyn Fn(&Path)>;
    let plants: [(&str, Plant, &str); 5] = [
        (
            "fifo.snap",
            Box::new(|p| {
                rustix::fs::mknodat(CWD, p, FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap()
            }),
            "not a regular file (a FIFO)",
        ),
        (
            "zero.snap",
            Box::new(|p| std::os::unix::fs::symlink("/dev/zero", p).unwrap()),
            "not a regular file (a symbolic link)",
        ),
        (
            "view__missing.snap",
            Box::new(move |p| std::fs::write(p, header("18446744073709551615")).unwrap()),
            "the file ends inside the content",
        ),
        (
            "view__missing.snap",
            Box::new(move |p| std::fs::write(p, header("1000000000000000")).unwrap()),
            "the file ends inside the content",
        ),
        (
            "view__missing.snap",
            Box::new(|p| {
                std::fs::File::create(p)
                    .unwrap()
                    .set_len(memcert::baseline::MAX_SNAP_BYTES + 1)
                    .unwrap()
            }),
            "over the 134217728-byte limit of a snapshot file",
        ),
    ];
    for (name, plant, why) in plants {
        let dir = tempfile::tempdir().unwrap();
        plant(&dir.path().join(name));
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_memcert"))
            .args(["certify", "--cases", "view/missing", "--baseline"])
            .arg(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(started.elapsed() < Duration::from_secs(10), "{name}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("{name}: ")) && stderr.contains(why),
            "{name}: {stderr}"
        );
    }
}

// See: issue 14 (the Python SDK's huge-file view restarted the handler, 1.8 s of imports each
// time): the adapter sends an over-cap answer's size alone, the case is the same FAIL, and the
// process is kept for the cases after it.
#[test]
fn memory_an_adapter_that_sends_only_the_size_is_fail_b17_and_not_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_memcert"))
        .args([
            "certify",
            "--python",
            "fixtures/handlers/hostile/flood_sdk.py:FloodTool",
            "--python-exe",
            &super::common::python(),
            "--jobs",
            "1",
            "--cases",
            "view/dir/empty-root",
            "--cases",
            "view/missing",
            "--cases",
            "delete/missing",
            "--report-json",
        ])
        .arg(&json)
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cases = report["cases"].as_array().unwrap();
    let ids: Vec<&str> = cases.iter().map(|c| c["id"].as_str().unwrap()).collect();
    // Run in this order (--jobs 1, catalog order): the huge view between the two others.
    assert_eq!(
        ids,
        ["view/dir/empty-root", "view/missing", "delete/missing"]
    );
    let view = &cases[1];
    assert_eq!(view["verdict"], "FAIL", "{view}");
    assert_eq!(view["findings"][0]["kind"], "reply-too-large");
    assert_eq!(
        view["findings"][0]["detail"],
        "step 1: unbounded reply: more than 33554432 bytes"
    );
    assert!(view["steps"][0]["reply"].is_null());
    let process = |c: &Value| {
        c["steps"][0]["reply"]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (before, after) = (process(&cases[0]), process(&cases[2]));
    assert_eq!(before.len(), "process ".len() + 16, "{before}");
    assert_eq!(before, after, "the handler was restarted after the view");
    assert_eq!(report["summary"]["counts"]["ERROR"], 0);
}

// See: docs/protocol.md (`too_large`): a size within the cap, or not a number, stands for an
// answer memcert would have read whole: a protocol ERROR, never the FAIL of an answer over the
// cap.
#[test]
fn memory_a_too_large_within_the_cap_or_not_a_number_is_error_not_fail() {
    for (said, shown) in [("5", "5"), ("big", "\"big\""), ("-1", "-1")] {
        let dir = tempfile::tempdir().unwrap();
        let (code, stdout, report) = certify(
            dir.path(),
            &format!("too_large_liar.py {said}"),
            &CASES[..4],
        );
        assert_eq!(code, Some(1), "{stdout}");
        let cases = report["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 2);
        for c in cases {
            assert_eq!(c["verdict"], "ERROR", "{c}");
            assert_eq!(c["findings"].as_array().unwrap().len(), 1, "{c}");
            assert_eq!(c["findings"][0]["kind"], "no-reply");
            assert_eq!(
                c["findings"][0]["detail"],
                format!("step 1: too_large is not a length over the read cap of 33554432 bytes: {shown}")
            );
        }
    }
}
