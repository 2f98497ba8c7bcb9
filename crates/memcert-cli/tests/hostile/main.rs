//! memcert pointed at hostile handlers (`fixtures/handlers/hostile/`), run as a user runs it:
//! the `memcert` binary with its own TMPDIR. Each test asserts the verdicts and the exit status,
//! that no process of the handler is left (each run carries a unique marker on the handler's
//! command line, looked for in `/proc`), that no scratch folder is left in that TMPDIR, and that
//! every report is valid (the JUnit parses, the Markdown renders no link or image from handler
//! text, no raw control or format character anywhere).
//!
//! - `stops`: SIGINT, SIGTERM and `--deadline` in every mode; a reset that never answers;
//! - `text`: terminal escapes, bidi overrides and Markdown links at start-up and in replies;
//! - `checks`: report paths checked before any work, a closed stdout;
//! - `memory`: reply floods and endless lines stay within the read cap; memcert's recorded peak
//!   memory for a flood is at most a quiet handler's plus three read caps.
//! - `contain`: containment: the credential reader, setsid children, fork bombs, the
//!   environment, writes outside the scratch root.

#[path = "../common/mod.rs"]
mod common;

mod checks;
mod contain;
mod memory;
mod stops;
mod text;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::root;

/// `memcert` run from the repository, with `tmp` as its TMPDIR.
fn memcert(tmp: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memcert"));
    cmd.current_dir(root()).env("TMPDIR", tmp);
    cmd
}

/// A hostile fixture's path, relative to the repository.
fn hostile(name: &str) -> String {
    format!("fixtures/handlers/hostile/{name}")
}

/// A marker unique to this test process and `name`, for the handler's command line.
fn marker(name: &str) -> String {
    format!("memcert_hostile_{}_{name}", std::process::id())
}

/// The processes whose command line holds `marker` (zombies have none).
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) {
            found.push(format!("{name}: {cmdline}"));
        }
    }
    found
}

/// Wait until `cond` holds, at most `limit`.
fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    cond()
}

/// No process with `marker` is left (after a moment for the kernel to reap).
fn assert_no_process(marker: &str) {
    assert!(
        wait_until(Duration::from_secs(3), || processes_with(marker).is_empty()),
        "left running: {:?}",
        processes_with(marker)
    );
}

/// Nothing is left in the TMPDIR memcert ran with.
fn assert_no_scratch(tmp: &Path) {
    let left: Vec<PathBuf> = std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "scratch left in TMPDIR: {left:?}");
}

/// Wait for `child` at most `limit`, then its output; kills it and panics when it runs longer.
fn finish(mut child: Child, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "memcert still ran after {limit:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (child.wait_with_output().unwrap(), started.elapsed())
}

/// Send `signal` to memcert's own process (not its group: the handler gets nothing from the
/// test).
fn signal(child: &Child, signal: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, signal).unwrap();
}

/// Spawn `cmd` (stdout and stderr piped), wait until a process with `marker` runs and a moment
/// more (so a case is under way), send `sig`, and return its output once it ends (10 s at most).
fn stopped_mid_run(mut cmd: Command, marker: &str, sig: rustix::process::Signal) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(20), || !processes_with(marker)
            .is_empty()),
        "the handler never started"
    );
    std::thread::sleep(Duration::from_millis(400));
    signal(&child, sig);
    let (out, took) = finish(child, Duration::from_secs(10));
    assert!(took < Duration::from_secs(5), "took {took:?} to stop");
    out
}

/// The report flags for every file report, in `dir`.
fn report_flags(dir: &Path) -> Vec<String> {
    [
        ("--report-json", "r.json"),
        ("--junit", "r.xml"),
        ("--markdown", "r.md"),
        ("--html", "r.html"),
    ]
    .iter()
    .flat_map(|(flag, file)| [flag.to_string(), dir.join(file).display().to_string()])
    .collect()
}

/// The four file reports `report_flags` asked for, read.
struct Reports {
    json: serde_json::Value,
    xml: String,
    md: String,
    html: String,
}

impl Reports {
    fn read(dir: &Path) -> Reports {
        let read =
            |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        let json_text = read("r.json");
        Reports {
            json: serde_json::from_str(&json_text).unwrap(),
            xml: read("r.xml"),
            md: read("r.md"),
            html: read("r.html"),
        }
        .checked(&json_text)
    }

    /// Every report valid: the JUnit parses, the Markdown renders no link or image and fits a
    /// job summary, no raw control or format character in any.
    fn checked(self, json_text: &str) -> Reports {
        junit_parses(&self.xml);
        assert_eq!(
            markdown_links(&self.md),
            Vec::<String>::new(),
            "{}",
            self.md
        );
        assert!(self.md.len() < 1_000_000);
        for (what, text) in [
            ("JSON", json_text),
            ("Markdown", &self.md),
            ("HTML", &self.html),
        ] {
            assert_eq!(raw_hidden(text, "\n"), Vec::<String>::new(), "{what}");
        }
        assert_eq!(
            raw_hidden(&self.xml, "\n\t\r"),
            Vec::<String>::new(),
            "JUnit"
        );
        self
    }

    /// Every report marks the run with `word` (INTERRUPTED, INCOMPLETE).
    fn marked(&self, word: &str, completion: &str) {
        assert_eq!(self.json["summary"]["completion"], completion);
        assert_eq!(self.json["summary"]["certified"], false);
        assert!(self.xml.contains(word), "{}", self.xml);
        assert!(self.md.contains(&format!("**{word}")), "{}", self.md);
        assert!(self.html.contains(word));
    }
}

/// The hidden characters ([`memcert::report::escape::hidden`]) in `text` but those in `allowed`,
/// each as its code point.
fn raw_hidden(text: &str, allowed: &str) -> Vec<String> {
    text.chars()
        .filter(|c| memcert::report::escape::hidden(*c) && !allowed.contains(*c))
        .map(|c| format!("U+{:04X}", c as u32))
        .collect()
}

/// Panics unless `xml` parses as XML to its end.
fn junit_parses(xml: &str) {
    let mut r = quick_xml::Reader::from_str(xml);
    loop {
        match r.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("the JUnit report does not parse: {e}\n{xml}"),
        }
    }
}

/// The links and images a GFM renderer with autolinks (comrak, as GitHub renders a job summary)
/// makes of `md`.
fn markdown_links(md: &str) -> Vec<String> {
    let mut o = comrak::Options::default();
    o.extension.autolink = true;
    o.extension.table = true;
    o.extension.strikethrough = true;
    o.extension.tasklist = true;
    let html = comrak::markdown_to_html(md, &o);
    html.match_indices("<a ")
        .chain(html.match_indices("<img"))
        .map(|(i, _)| html[i..].chars().take(120).collect())
        .collect()
}
