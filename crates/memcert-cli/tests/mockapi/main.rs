//! Whole-app tests: `memcert certify --app` and `memcert_app::appcert::run` drive real apps through
//! the mock Messages API. The Python app (`fixtures/apps/python_tool_runner.py`) uses the pinned
//! `anthropic` 2.14.0 tool runner and its stock `BetaLocalFilesystemMemoryTool`, unmodified but for
//! `ANTHROPIC_BASE_URL` (`MEMCERT_PYTHON`, else `.venv/bin/python`, made by `scripts/test.sh`);
//! The Node app (`fixtures/apps/node_tool_runner.mjs`) does the same with the pinned
//! `@anthropic-ai/sdk` 1.14.0 (`adapters/node/node_modules`, made by `scripts/test.sh`).
//! `fixtures/apps/misbehave.py` (standard library only) hangs, exits early or sends malformed
//! requests. Each test asserts exact verdicts. New mock or app tests go here; the mock's request
//! rules have unit tests in `src/mockapi.rs`.

#[path = "../common/mod.rs"]
mod common;
use common::*;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use memcert::certify::{CaseRecord, Collect, Config};
use memcert::suite::verdict::Verdict;
use memcert::text::Profile;
use memcert_app::appcert::{self, AppConfig, AppRun};
use memcert_app::mockapi::Threads;
use memcert_app::transcript::Transcript;

fn app(args: &str) -> String {
    let script = root().join("fixtures/apps/python_tool_runner.py");
    format!("{} {} {args}", python(), script.display())
}

/// The Node app copied beside a link to the pinned SDK, so its imports resolve; the folder
/// lives as long as the returned guard.
fn node_app(args: &str) -> (tempfile::TempDir, String) {
    let modules = node_path().join("node_modules");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("fixtures/apps/node_tool_runner.mjs"),
        dir.path().join("app.mjs"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&modules, dir.path().join("node_modules")).unwrap();
    let cmd = format!("node {} {args}", dir.path().join("app.mjs").display());
    (dir, cmd)
}

fn transcripts(ids: &[&str]) -> Vec<Transcript> {
    Transcript::builtin()
        .into_iter()
        .filter(|t| ids.is_empty() || ids.contains(&t.id.as_str()))
        .collect()
}

/// Run `command` over the transcripts `ids` (all when empty) in a scratch memory folder; the
/// scratch folder must be left empty.
fn run(
    command: &str,
    ids: &[&str],
    threads: Threads,
    timeout: Duration,
) -> (Vec<CaseRecord>, AppRun) {
    run_as(command, Profile::PythonSdk, ids, threads, timeout)
}

fn run_as(
    command: &str,
    profile: Profile,
    ids: &[&str],
    threads: Threads,
    timeout: Duration,
) -> (Vec<CaseRecord>, AppRun) {
    let scratch = tempfile::tempdir().unwrap();
    let memory_dir = scratch.path().join("run/base/memories");
    let cfg = AppConfig {
        command: command.to_owned(),
        memory_dir,
        timeout,
        threads,
        faults: Vec::new(),
        config: Config {
            profile,
            ..Default::default()
        },
        known: Vec::new(),
        contain: Default::default(),
    };
    let mut c = Collect::default();
    let out = appcert::run(&cfg, &transcripts(ids), &mut c).unwrap();
    assert!(
        !scratch.path().join("run").exists(),
        "the sandbox folder memcert made is removed"
    );
    (c.0, out)
}

fn verdicts(records: &[CaseRecord]) -> BTreeMap<String, Verdict> {
    records.iter().map(|r| (r.id.clone(), r.verdict)).collect()
}

/// The transcripts every mode runs (the CI bound of issue 5: about 4 transcripts x 4 modes per
/// SDK): a four-step edit, one turn of dependent calls, planted links to the outside, and
/// traversal variants. The other transcripts run once, in `binary_certifies_the_python_sdk_app`
/// (Python, threaded) and over stdio in `tests/transcripts` (both SDKs).
const BOUNDED: [&str; 4] = [
    "create-edit-insert-view",
    "one-turn-dependent",
    "symlink-outside",
    "traversal-variants",
];

/// The verdicts of `ids` (transcript ids) with `profile`'s stock handler: the shared table of
/// `common::transcript_verdicts`, which the apps give in every mode.
fn expected(profile: Profile, ids: &[&str]) -> BTreeMap<String, Verdict> {
    let mut all = transcript_verdicts(profile);
    all.retain(|id, _| ids.iter().any(|t| id == &format!("app/{t}")));
    assert_eq!(all.len(), ids.len());
    all
}

/// The stdio certifier's verdicts for the same transcripts (`Transcript::to_case`) against the
/// same stock handler behind its adapter, which calls it as the SDK runner does (a one-turn
/// batch concurrently for TypeScript). They agree with the app's on [`BOUNDED`] in every mode;
/// `tests/transcripts` holds the full stdio tables.
fn assert_agrees_with_stdio(profile: Profile, app: &[CaseRecord]) {
    let ids: Vec<String> = app.iter().map(|r| r.id.clone()).collect();
    let cases: Vec<_> = Transcript::builtin()
        .iter()
        .map(Transcript::to_case)
        .filter(|c| ids.contains(&c.id))
        .collect();
    let (_dir, mut t) = sdk_target(profile);
    let stdio = run_cases(&mut t, profile, &cases);
    assert_eq!(
        verdicts(&stdio),
        verdicts(app),
        "stdio (left) and app (right)"
    );
    assert_eq!(
        replies(&stdio),
        replies(app),
        "stdio (left) and app (right)"
    );
}

/// Per case, each step's verdict, `is_error` and text; the text is left out when the input
/// names a host path (`{RUN}`), which differs between the two sandboxes.
fn replies(records: &[CaseRecord]) -> BTreeMap<String, Vec<(Verdict, bool, Option<String>)>> {
    let builtin = Transcript::builtin();
    records
        .iter()
        .map(|r| {
            let t = builtin.iter().find(|t| t.case_id() == r.id).unwrap();
            let steps = r
                .steps
                .iter()
                .zip(t.tool_uses())
                .map(|(s, (_, u))| {
                    let reply = s.reply.as_ref().unwrap();
                    let host = u.input.to_string().contains("{RUN}");
                    (s.verdict, reply.is_error, (!host).then(|| reply.text()))
                })
                .collect();
            (r.id.clone(), steps)
        })
        .collect()
}

/// The README command: the binary certifies the stock Python SDK app, threaded (the SDK's
/// default) and not streaming, over every shipped transcript but [`BOUNDED`] (which the mode
/// tests below run), so that each transcript goes through the app once.
#[test]
fn binary_certifies_the_python_sdk_app() {
    let scratch = tempfile::tempdir().unwrap();
    let report = scratch.path().join("report.json");
    let junit = scratch.path().join("junit.xml");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memcert"));
    cmd.args(["certify", "--app", &app("")]);
    for id in BOUNDED {
        cmd.args(["--exclude", &format!("app/{id}")]);
    }
    let out = cmd
        .arg("--memory-dir")
        .arg(scratch.path().join("run/base/memories"))
        .args(["--profile", "python-sdk", "--app-timeout", "60"])
        .arg("--report-json")
        .arg(&report)
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("verdict: CERTIFIED"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let got: BTreeMap<String, Verdict> = json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                serde_json::from_value(c["verdict"].clone()).unwrap(),
            )
        })
        .collect();
    let mut expected = transcript_verdicts(Profile::PythonSdk);
    expected.retain(|id, _| !BOUNDED.iter().any(|b| id == &format!("app/{b}")));
    assert_eq!(expected.len(), 11);
    assert_eq!(got, expected);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("app/traversal-refused"), "{xml}");
    assert!(!scratch.path().join("run").exists());
}

/// How the runner talked to the mock.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// Server-side threads (the SDKs' default): after the first turn only the new tool_results.
    Threaded,
    /// `thread: false` from the start: full history every turn, no `thread` field.
    Unthreaded,
    /// Threads refused by the mock (`thread_unsupported_request`): full history after it.
    Refused,
}

/// Run [`BOUNDED`] through `profile`'s SDK app in one mode and assert: the exact verdicts; every
/// conversation in that mode, streamed or not as asked, finished, with nothing malformed or
/// noted; and that the stdio certifier agrees case by case and step by step.
fn check_mode(profile: Profile, mode: Mode, stream: bool) -> AppRun {
    let args = [
        if stream { "--stream" } else { "" },
        if matches!(mode, Mode::Unthreaded) {
            "--no-thread"
        } else {
            ""
        },
    ]
    .join(" ");
    let threads = if matches!(mode, Mode::Refused) {
        Threads::Refuse
    } else {
        Threads::Accept
    };
    let (_dir, cmd) = match profile {
        Profile::PythonSdk => (None, app(&args)),
        _ => {
            let (dir, cmd) = node_app(&args);
            (Some(dir), cmd)
        }
    };
    let (recs, out) = run_as(&cmd, profile, &BOUNDED, threads, Duration::from_secs(60));
    assert_eq!(verdicts(&recs), expected(profile, &BOUNDED));
    assert!(!out.wire.is_empty());
    for w in &out.wire {
        let (threaded, full_history, refused) = match mode {
            Mode::Threaded => (true, false, false),
            Mode::Unthreaded => (false, true, false),
            Mode::Refused => (true, true, true),
        };
        assert_eq!(
            (
                w.threaded,
                w.full_history,
                w.threads_refused > 0,
                w.streamed
            ),
            (threaded, full_history, refused, stream),
            "{mode:?}: {w:?}"
        );
        assert!(
            w.finished && w.malformed.is_empty() && w.notes.is_empty(),
            "{w:?}"
        );
    }
    assert_agrees_with_stdio(profile, &recs);
    out
}

/// Threaded, not streaming (the SDK's default): after the first turn only the new
/// tool_results are sent; the transcript's first message reaches the app.
#[test]
fn python_sdk_threads_send_only_new_results() {
    let out = check_mode(Profile::PythonSdk, Mode::Threaded, false);
    for (w, t) in out.wire.iter().zip(transcripts(&BOUNDED)) {
        assert_eq!(
            w.user.as_deref(),
            Some(t.user.as_str()),
            "the transcript's first message reaches the app as MEMCERT_USER_MESSAGE"
        );
    }
}

#[test]
fn python_sdk_streaming_threaded() {
    check_mode(Profile::PythonSdk, Mode::Threaded, true);
}

#[test]
fn python_sdk_unthreaded() {
    check_mode(Profile::PythonSdk, Mode::Unthreaded, false);
}

#[test]
fn python_sdk_streaming_with_threads_refused() {
    check_mode(Profile::PythonSdk, Mode::Refused, true);
}

/// The TypeScript SDK app: as Python, but its runner calls one turn's tools concurrently, so
/// `one-turn-dependent` is NON-STRICT in every mode.
#[test]
fn typescript_sdk_app_threaded() {
    check_mode(Profile::TypescriptSdk, Mode::Threaded, false);
}

#[test]
fn typescript_sdk_app_streaming_threaded() {
    check_mode(Profile::TypescriptSdk, Mode::Threaded, true);
}

#[test]
fn typescript_sdk_app_unthreaded() {
    check_mode(Profile::TypescriptSdk, Mode::Unthreaded, false);
}

#[test]
fn typescript_sdk_app_streaming_with_threads_refused() {
    check_mode(Profile::TypescriptSdk, Mode::Refused, true);
}

/// A planted flaw caught end to end: the app runs a handler that joins `..` paths naively.
#[test]
fn a_flawed_handler_in_the_app_is_unsafe() {
    let handler = root().join("fixtures/handlers/flawed/naive_join.py");
    let cmd = app(&format!(
        "--no-thread --handler {}:NaiveJoinMemoryTool",
        handler.display()
    ));
    let (recs, _) = run(
        &cmd,
        &["traversal-refused"],
        Threads::Accept,
        Duration::from_secs(60),
    );
    assert_eq!(
        verdicts(&recs),
        want([("app/traversal-refused", Verdict::Unsafe)])
    );
    let kinds: Vec<&str> = recs[0].findings.iter().map(|f| f.kind.as_str()).collect();
    assert!(kinds.contains(&"outside-read"), "{kinds:?}");
    assert!(kinds.contains(&"outside-changed"), "{kinds:?}");
}

fn misbehave(mode: &str, timeout: Duration) -> CaseRecord {
    let script = root().join("fixtures/apps/misbehave.py");
    let cmd = format!("python3 {} {mode}", script.display());
    let (mut recs, out) = run(&cmd, &["two-tool-uses"], Threads::Accept, timeout);
    let addr = out.mock.trim_start_matches("http://");
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "{mode}: the mock at {addr} is shut down when the run returns"
    );
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].verdict, Verdict::Error, "{mode}: {:?}", recs[0]);
    recs.remove(0)
}

fn details(r: &CaseRecord) -> String {
    r.findings
        .iter()
        .map(|f| format!("{} {}: {}", f.verdict, f.kind, f.detail))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_hung_app_is_killed_at_the_time_limit() {
    let started = std::time::Instant::now();
    let r = misbehave("hang", Duration::from_millis(1500));
    assert!(started.elapsed() < Duration::from_secs(10));
    let d = details(&r);
    assert!(
        d.contains("did not finish the conversation within 1.5s (0 request(s), 0 tool_result(s) received); its process group was killed"),
        "{d}"
    );
}

#[test]
fn an_app_that_never_calls_or_quits_early_is_an_error() {
    let d = details(&misbehave("exit", Duration::from_secs(20)));
    assert!(
        d.contains("the app exited with status 3 without calling the Messages API"),
        "{d}"
    );
    let d = details(&misbehave("quit-early", Duration::from_secs(20)));
    assert!(
        d.contains("the app exited with status 0 before the conversation ended (1 request(s), 0 tool_result(s) received)"),
        "{d}"
    );
}

#[test]
fn malformed_requests_get_a_400_and_an_error() {
    let r = misbehave("malformed", Duration::from_secs(20));
    let d = details(&r);
    assert!(d.contains("ERROR malformed-request: the app sent a request the mock refused: memcert mock: tool_use_id \"toolu_invented\" was not issued"), "{d}");
}

#[test]
fn transcripts_load_from_a_folder_with_clear_errors() {
    let all = Transcript::load_dir(&root().join("fixtures/transcripts")).unwrap();
    assert_eq!(all.len(), 15);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.json"), "{\"format\": 1}").unwrap();
    let e = Transcript::load_dir(dir.path()).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "{}: invalid type",
            dir.path().join("bad.json").display()
        )),
        "{e}"
    );
    let e = Transcript::load_dir(Path::new("/nonexistent-memcert"))
        .unwrap_err()
        .to_string();
    assert_eq!(e, "cannot read /nonexistent-memcert");
}

/// Run `command` over one transcript with faults injected.
fn run_faulted(command: &str, profile: Profile, id: &str, faults: &[&str]) -> CaseRecord {
    let scratch = tempfile::tempdir().unwrap();
    let cfg = AppConfig {
        command: command.to_owned(),
        memory_dir: scratch.path().join("run/base/memories"),
        timeout: Duration::from_secs(60),
        threads: Threads::Accept,
        faults: faults.iter().map(|f| f.parse().unwrap()).collect(),
        config: Config {
            profile,
            ..Default::default()
        },
        known: Vec::new(),
        contain: Default::default(),
    };
    let mut c = Collect::default();
    appcert::run(&cfg, &transcripts(&[id]), &mut c).unwrap();
    assert!(!scratch.path().join("run").exists());
    assert_eq!(c.0.len(), 1);
    c.0.remove(0)
}

/// The one finding about the fault, as `VERDICT kind: detail`, cut before the stderr quote.
fn fault_of(r: &CaseRecord) -> String {
    let f: Vec<String> = r
        .findings
        .iter()
        .filter(|f| f.kind.starts_with("fault") && f.kind != "fault-not-delivered")
        .map(|f| {
            let d = f.detail.split("; stderr ends with").next().unwrap();
            format!("{} {}: {d}", f.verdict, f.kind)
        })
        .collect();
    assert_eq!(f.len(), 1, "{r:?}");
    f[0].clone()
}

/// A 529 at turn 2: the Python runner retries (the mock says `retry-after-ms: 10`) and
/// finishes; every reply is still graded.
#[test]
fn python_sdk_app_recovers_from_an_overloaded_turn() {
    let r = run_faulted(
        &app(""),
        Profile::PythonSdk,
        "edit-steps",
        &["529@2", "500@9"],
    );
    assert!(
        details(&r).contains("INFO fault-not-delivered: --inject 500@9: this transcript has 4 turn(s), so the fault was never delivered"),
        "{}",
        details(&r)
    );
    assert_eq!(
        fault_of(&r),
        "INFO fault-recovered: injected 529 at turn 2 (attempt 1); the app retried and finished the conversation"
    );
    assert_eq!(r.verdict, Verdict::Info, "{r:?}");
    assert!(r.steps.iter().all(|s| s.verdict == Verdict::Pass), "{r:?}");
}

/// Three 529s at turn 2 use up the SDK's two retries: the app stops with status 1, a loud
/// failure; the reply it sent before the fault is graded, the others are not asked for.
#[test]
fn python_sdk_app_fails_loudly_when_retries_run_out() {
    let r = run_faulted(&app(""), Profile::PythonSdk, "edit-steps", &["529@2x3"]);
    assert_eq!(
        fault_of(&r),
        "INFO fault-failed-loudly: injected 529 at turn 2 (attempt 1), 529 at turn 2 (attempt 2), 529 at turn 2 (attempt 3); the app exited with status 1 without finishing the conversation: it failed loudly"
    );
    assert_eq!(r.steps.len(), 1, "{r:?}");
    // The calls never made are not graded, and do not let the run certify.
    assert_eq!(r.verdict, Verdict::Error, "{r:?}");
    assert!(details(&r).contains("ERROR not-reached: 2 of 3 memory call(s) were never made after the injected fault, so they are not graded"), "{}", details(&r));
}

/// A stream that ends cleanly after its first delta (no message_stop): the Python runner takes
/// the partial reply, stops and exits 0, so the app tells its user all went well
/// (wire:5). memcert reports that as FAIL.
#[test]
fn python_sdk_app_swallows_a_truncated_stream() {
    let r = run_faulted(
        &app("--stream"),
        Profile::PythonSdk,
        "edit-steps",
        &["truncate@2"],
    );
    assert_eq!(
        fault_of(&r),
        "FAIL fault-swallowed: injected answer truncated at turn 2 (attempt 1); the app exited with status 0 without finishing the conversation (2 request(s), 1 tool_result(s) received): the failure was swallowed and its user is told all went well"
    );
    assert_eq!(r.verdict, Verdict::Fail);
}

/// A connection cut midway through a JSON answer (hyper listener): the TypeScript runner does
/// not retry a broken body and the app stops with status 1; the Python runner retries it.
#[test]
fn a_cut_answer_is_retried_by_python_and_fatal_in_typescript() {
    let (_dir, cmd) = node_app("");
    let r = run_faulted(&cmd, Profile::TypescriptSdk, "edit-steps", &["drop@2"]);
    assert_eq!(
        fault_of(&r),
        "INFO fault-failed-loudly: injected answer cut at turn 2 (attempt 1); the app exited with status 1 without finishing the conversation: it failed loudly"
    );
    let r = run_faulted(&app(""), Profile::PythonSdk, "edit-steps", &["drop@2"]);
    assert_eq!(
        fault_of(&r),
        "INFO fault-recovered: injected answer cut at turn 2 (attempt 1); the app retried and finished the conversation"
    );
}

/// `context_management` sent by a real app (Python runner, streaming) is checked against the
/// documented rules; the SDK takes the mock's `applied_edits` and finishes. A good setting
/// gives no finding at all.
#[test]
fn python_sdk_app_context_management_is_checked() {
    let beta = "--beta context-management-2025-06-27";
    let bad = r#"{"edits":[{"type":"clear_tool_uses_20250919","keep":{"type":"tool_uses","value":3}},{"type":"clear_thinking_20251015","keep":"all"}]}"#;
    let (recs, out) = run(
        &app(&format!("--stream {beta} --context-management '{bad}'")),
        &["create-view"],
        Threads::Accept,
        Duration::from_secs(60),
    );
    let found: Vec<String> = recs[0]
        .findings
        .iter()
        .map(|f| format!("{} {}: {}", f.verdict, f.kind, f.detail))
        .collect();
    assert_eq!(
        found,
        [
            "NON-STRICT context-management: context_management.edits[1] (clear_thinking_20251015) comes after context_management.edits[0] (clear_tool_uses_20250919); it must be listed first",
            "INFO context-management: context_management.edits[0] (clear_tool_uses_20250919): `memory` is not in `exclude_tools`, so the agent's own memory calls can be cleared (the documented advice is to exclude it)",
        ]
    );
    assert_eq!(recs[0].verdict, Verdict::NonStrict);
    assert!(out.wire[0].finished && out.wire[0].streamed);
    let good = r#"{"edits":[{"type":"clear_thinking_20251015","keep":"all"},{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},"exclude_tools":["memory"]}]}"#;
    let (recs, _) = run(
        &app(&format!("{beta} --context-management '{good}'")),
        &["create-view"],
        Threads::Accept,
        Duration::from_secs(60),
    );
    assert_eq!(verdicts(&recs), want([("app/create-view", Verdict::Pass)]));
}

/// `memcert mock-api` for a person's own app: it prints the URL first, the app (started here by
/// hand, as a user would) finishes the conversation, and the server stops by itself with the
/// verdict; with nobody calling, it gives up at --timeout with an ERROR and exit 1.
#[test]
fn mock_api_serves_an_app_started_by_hand_and_stops_by_itself() {
    use std::process::Stdio;
    let scratch = tempfile::tempdir().unwrap();
    let memory_dir = scratch.path().join("run/base/memories");
    let mut mock = Command::new(env!("CARGO_BIN_EXE_memcert"))
        .args(["mock-api", "--transcript"])
        .arg(root().join("fixtures/transcripts/two-tool-uses.json"))
        .arg("--memory-dir")
        .arg(&memory_dir)
        .args(["--profile", "python-sdk", "--timeout", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(mock.stdout.take().unwrap());
    let url = base_url_line(&mut out);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/s/0"),
        "{url}"
    );
    let app = Command::new(python())
        .arg(root().join("fixtures/apps/python_tool_runner.py"))
        .env("ANTHROPIC_BASE_URL", &url)
        .env("ANTHROPIC_API_KEY", "any")
        .env("MEMCERT_BASE_DIR", memory_dir.parent().unwrap())
        .output()
        .unwrap();
    assert!(app.status.success(), "{app:?}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert_eq!(mock.wait().unwrap().code(), Some(0), "{rest}");
    assert!(rest.contains("verdict: CERTIFIED"), "{rest}");
    assert!(!scratch.path().join("run").exists());

    let idle = Command::new(env!("CARGO_BIN_EXE_memcert"))
        .args(["mock-api", "--timeout", "0.5", "--transcript"])
        .arg(root().join("fixtures/transcripts/two-tool-uses.json"))
        .arg("--memory-dir")
        .arg(&memory_dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&idle.stdout);
    assert_eq!(idle.status.code(), Some(1), "{text}");
    assert!(
        text.contains("the conversation was not finished within 500ms (0 request(s), 0 tool_result(s) received)"),
        "{text}"
    );
    let e = Command::new(env!("CARGO_BIN_EXE_memcert"))
        .args(["mock-api", "--transcript"])
        .arg(root().join("fixtures/transcripts/two-tool-uses.json"))
        .output()
        .unwrap();
    assert_eq!(e.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&e.stderr).contains("this transcript plants files or checks the store afterwards; give your app's store with --memory-dir"));
}

/// `--fail-on` is one flag for `certify`, `certify --app` and `mock-api`, with one meaning: a
/// run whose only blocking verdict is ERROR (nobody calls the mock; an app that exits at once)
/// exits 1 by default and under `--fail-on error`, 0 under `--fail-on unsafe`, and every report
/// states the gate. Fast: no SDK, half a second per mock-api run.
// See: issue 11 ("verdicts you can trust"), mock-api ignored --fail-on.
#[test]
fn mock_api_and_certify_app_honour_fail_on() {
    let scratch = tempfile::tempdir().unwrap();
    let memory_dir = scratch.path().join("run/base/memories");
    let json = scratch.path().join("r.json");
    let mock_api = |gate: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_memcert"))
            .args(["mock-api", "--timeout", "0.5", "--transcript"])
            .arg(root().join("fixtures/transcripts/two-tool-uses.json"))
            .arg("--memory-dir")
            .arg(&memory_dir)
            .arg("--report-json")
            .arg(&json)
            .args(gate)
            .output()
            .unwrap();
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            report["summary"]["fail_on"].clone(),
        )
    };
    let (code, stdout, fail_on) = mock_api(&[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("\nfail on: UNSAFE, ERROR, FAIL\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("\nverdict: NOT CERTIFIED (1 ERROR)\n"),
        "{stdout}"
    );
    assert_eq!(fail_on, serde_json::json!(["UNSAFE", "ERROR", "FAIL"]));

    let (code, stdout, fail_on) = mock_api(&["--fail-on", "unsafe"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("\nfail on: UNSAFE\n"), "{stdout}");
    assert!(
        stdout.ends_with("\nverdict: CERTIFIED (no UNSAFE)\n"),
        "{stdout}"
    );
    assert_eq!(fail_on, serde_json::json!(["UNSAFE"]));

    let (code, stdout, fail_on) = mock_api(&["--fail-on", "unsafe,error"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.ends_with("\nverdict: NOT CERTIFIED (1 ERROR; --fail-on UNSAFE, ERROR)\n"),
        "{stdout}"
    );
    assert_eq!(fail_on, serde_json::json!(["UNSAFE", "ERROR"]));

    // certify --app goes through the same gate.
    let app = format!(
        "python3 {} exit",
        root().join("fixtures/apps/misbehave.py").display()
    );
    let certify_app = |gate: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_memcert"))
            .args(["certify", "--app", &app, "--memory-dir"])
            .arg(&memory_dir)
            .arg("--transcripts")
            .arg(root().join("fixtures/transcripts/two-tool-uses.json"))
            .args(gate)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, stdout) = certify_app(&[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("\nfail on: UNSAFE, ERROR, FAIL\n"),
        "{stdout}"
    );
    let (code, stdout) = certify_app(&["--fail-on", "unsafe"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("\nfail on: UNSAFE\n"), "{stdout}");
}

/// `memcert record` between the Python app and the mock as its upstream: the conversation is
/// written as a transcript (the key redacted), which loads, holds the inputs as the model sent
/// them and the replies as the handler gave them, and replays to the same app as a PASS.
#[test]
fn record_writes_a_replayable_transcript_without_the_key() {
    use memcert_app::mockapi::{MockApi, ServedTurn};
    use std::process::Stdio;
    let original = transcripts(&["two-tool-uses"]).remove(0);
    let mock = MockApi::start(Threads::Accept).unwrap();
    let session = mock.add_session(
        original
            .turns
            .iter()
            .map(|t| ServedTurn {
                text: t.text.clone(),
                tool_use: t
                    .tool_use
                    .iter()
                    .map(|u| (u.name.clone(), u.input.clone()))
                    .collect(),
            })
            .collect(),
    );
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("recorded/Work Notes.json");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let mut rec = Command::new(env!("CARGO_BIN_EXE_memcert"))
        .args(["record", "--timeout", "60", "--upstream"])
        .arg(mock.base_url(session))
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = base_url_line(&mut std::io::BufReader::new(rec.stdout.take().unwrap()));
    let base = scratch.path().join("app");
    let secret = "sk-ant-memcert-test-0123456789";
    let by_hand = Command::new(python())
        .arg(root().join("fixtures/apps/python_tool_runner.py"))
        .env("ANTHROPIC_BASE_URL", &url)
        .env("ANTHROPIC_API_KEY", secret)
        .env("MEMCERT_BASE_DIR", &base)
        .env("MEMCERT_USER_MESSAGE", &original.user)
        .output()
        .unwrap();
    assert!(by_hand.status.success(), "{by_hand:?}");
    let status = rec.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut rec.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    assert!(
        err.contains("the conversation ended; 3 answer(s) recorded"),
        "{err}"
    );
    assert!(mock.log(session).finished);

    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains(secret), "the key is never written");
    let t = Transcript::load(&out).unwrap();
    assert_eq!(t.id, "work-notes");
    assert_eq!(t.user, original.user);
    assert_eq!(t.turns.len(), 3);
    for (got, want) in t.turns.iter().zip(&original.turns) {
        let g: Vec<&serde_json::Value> = got.tool_use.iter().map(|u| &u.input).collect();
        let w: Vec<&serde_json::Value> = want.tool_use.iter().map(|u| &u.input).collect();
        assert_eq!(g, w);
        assert_eq!(got.text, want.text);
    }
    let reply = serde_json::to_value(&t.turns[1].tool_use[0].accept[0].reply).unwrap();
    assert_eq!(
        reply,
        serde_json::json!({"match": "recorded", "outcome": {"text": "Here's the content of /memories/home.md with line numbers:\n     1\twater the plants\n     2\t", "is_error": false}})
    );

    // Replayed to the same app it passes; recorded answers are the expectation.
    let s2 = tempfile::tempdir().unwrap();
    let cfg = AppConfig {
        command: app(""),
        memory_dir: s2.path().join("run/base/memories"),
        timeout: Duration::from_secs(60),
        threads: Threads::Accept,
        faults: Vec::new(),
        config: Config::default(),
        known: Vec::new(),
        contain: Default::default(),
    };
    let mut c = Collect::default();
    appcert::run(&cfg, &[t], &mut c).unwrap();
    assert_eq!(verdicts(&c.0), want([("app/work-notes", Verdict::Pass)]));
}

/// An app that calls another path: the ERROR says the mock got a request it does not serve.
#[test]
fn a_request_to_another_path_is_named_in_the_error() {
    let d = details(&misbehave("wrong-path", Duration::from_secs(20)));
    assert!(
        d.contains("the app exited with status 1 without calling the Messages API; the mock got 1 request(s) it does not serve, e.g. `POST /s/0/v2/messages`: is ANTHROPIC_BASE_URL used as given?"),
        "{d}"
    );
}

/// A child the app moved to a new session (out of its process group) is found through its
/// parent, killed after the case, and reported.
#[test]
fn a_child_that_left_the_process_group_is_killed_and_reported() {
    let r = misbehave("orphan", Duration::from_secs(20));
    let d = details(&r);
    assert!(d.contains("INFO app-children: 1 process(es) the app started had left its process group (setsid or a new session) and were still running after it; memcert killed them"), "{d}");
}

fn app_error(memory_dir: &Path, command: &str) -> String {
    let cfg = AppConfig {
        command: command.to_owned(),
        memory_dir: memory_dir.to_owned(),
        ..Default::default()
    };
    appcert::run(
        &cfg,
        &transcripts(&["create-view"]),
        &mut Collect::default(),
    )
    .map(|_| ())
    .unwrap_err()
    .to_string()
}

/// A memory folder that cannot hold the sandbox, or a program that does not exist, is a usage
/// error before anything runs, and nothing is written.
#[test]
fn bad_memory_folders_and_programs_are_refused_before_anything_runs() {
    let s = tempfile::tempdir().unwrap();
    let p = s.path();
    std::fs::create_dir_all(p.join("full/x/a")).unwrap();
    std::fs::write(p.join("full/keep.txt"), "mine").unwrap();
    let e = app_error(&p.join("full/x/a/../memories"), "true");
    assert!(e.ends_with("`..` is refused: the folders two levels up would not be the ones memcert checks; name the folder without `..`"), "{e}");
    let e = app_error(&p.join("full/base/memories"), "true");
    assert!(e.contains("must be absent or empty"), "{e}");
    std::fs::create_dir(p.join("real")).unwrap();
    std::os::unix::fs::symlink(p.join("real"), p.join("link")).unwrap();
    let e = app_error(&p.join("link/base/memories"), "true");
    assert!(
        e.ends_with(
            "(two levels up, where the canaries go) is a symbolic link; name the real folder"
        ),
        "{e}"
    );
    std::fs::write(p.join("file"), "").unwrap();
    let e = app_error(&p.join("file/base/memories"), "true");
    assert!(
        e.ends_with("(two levels up, where the canaries go) is not a folder"),
        "{e}"
    );
    let e = app_error(Path::new("/memories"), "true");
    assert!(
        e.ends_with("it needs two parent folders below / (the canaries go two levels up)"),
        "{e}"
    );
    let e = app_error(&p.join("run/base/memories"), "memcert-no-such-program --x");
    assert!(
        e.ends_with("\"memcert-no-such-program\" is not an executable file in any PATH folder"),
        "{e}"
    );
    let e = app_error(&p.join("run/base/memories"), "./no/such/app.sh");
    assert!(
        e.ends_with("\"./no/such/app.sh\" is not an executable file"),
        "{e}"
    );
    let mut left: Vec<String> = std::fs::read_dir(p)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["file", "full", "link", "real"]);
    assert_eq!(
        std::fs::read_dir(p.join("full")).unwrap().count(),
        2,
        "only keep.txt and x"
    );
}

/// A signal (the flag a SIGINT handler sets) stops a hung app at once: its process group is
/// killed, the sandbox removed, the mock closed, and the run reports what ran, marked
/// interrupted.
#[test]
fn an_interrupt_stops_the_app_and_cleans_up() {
    let s = tempfile::tempdir().unwrap();
    let stop = memcert::stop::Stop::never();
    let cfg = AppConfig {
        command: format!(
            "python3 {} hang",
            root().join("fixtures/apps/misbehave.py").display()
        ),
        memory_dir: s.path().join("run/base/memories"),
        timeout: Duration::from_secs(60),
        config: memcert::certify::Config {
            stop: stop.clone(),
            ..Default::default()
        },
        ..Default::default()
    };
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        stop.interrupt();
    });
    let started = std::time::Instant::now();
    let mut seen = Collect::default();
    let run = appcert::run(&cfg, &transcripts(&[]), &mut seen).unwrap();
    t.join().unwrap();
    assert_eq!(
        run.summary.completion,
        memcert::certify::Completion::Interrupted
    );
    assert!(!run.summary.certified);
    assert!(
        seen.0.is_empty(),
        "the transcript cut short is not reported"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!s.path().join("run").exists(), "the sandbox is removed");
}
