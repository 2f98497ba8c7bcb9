//! Certify a whole app: its own process, its SDK tool runner and its memory handler, driven by
//! recorded transcripts through the mock Messages API ([`crate::mockapi`]).
//!
//! [`run`] starts one mock, then for each [`Transcript`]: lays out a sandbox whose store root is
//! the app's memory folder ([`Sandbox::create_at_unchecked`], canaries around it), starts the app
//! command with `ANTHROPIC_BASE_URL` pointing at the transcript's session, waits for it within
//! the time limit (killing its process group on timeout), then grades every captured
//! `tool_result` with the transcript's accepts and the canary oracle
//! ([`memcert::attack::oracle::judge`]) and reports a [`CaseRecord`] per transcript through the
//! usual [`Reporter`]s. It prints nothing itself.
//!
//! The app gets: `ANTHROPIC_BASE_URL`, a dummy `ANTHROPIC_API_KEY` (`ANTHROPIC_AUTH_TOKEN`
//! removed), `ANTHROPIC_CUSTOM_HEADERS` = `x-memcert-case: <case id>`, `MEMCERT_MEMORY_DIR` (the
//! store root), `MEMCERT_BASE_DIR` (its parent, `base_path` of the Python SDK's
//! `BetaLocalFilesystemMemoryTool`) and `MEMCERT_USER_MESSAGE` (the transcript's first message).
//!
//! ERROR, with the reason, for an app that: cannot start; never calls the API; exits before the
//! conversation ends; is still running at the time limit (its process group is killed); sends a
//! malformed request; exits non-zero after the final turn.
//!
//! # Non-guarantees
//! - Only what the app sends and what is on disk is judged: a handler whose store is not the
//!   memory folder is seen through its answers alone.
//! - The app's HOME and TMPDIR are not watched.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::mockapi::{tool_use_id, Fault, MockApi, MockConfig, ServedTurn, SessionLog, Threads};
use crate::transcript::Transcript;
use memcert::attack::oracle::{Finding, Observation};
use memcert::attack::sandbox::Sandbox;
use memcert::certify::Summary;
use memcert::certify::{
    baseline_summary_of, instantiate, listed_unchecked, record, strings_of, CaseRecord, Config,
    Event, Reporter, Snapshots,
};
use memcert::suite::verdict::Verdict;

/// How to run an app.
#[derive(Clone, Debug)]
pub struct AppConfig {
    /// The app's command line, split like a POSIX shell splits words (no expansion).
    pub command: String,
    /// The app's store root (what `/memories` maps to). Its grandparent must be absent or
    /// empty: the canaries go there.
    pub memory_dir: PathBuf,
    /// Time limit per transcript.
    pub timeout: Duration,
    /// What the mock does with threaded requests.
    pub threads: Threads,
    /// Faults the mock injects in every transcript (`--inject`), to certify the app's own
    /// retry and failure behaviour; empty for none.
    pub faults: Vec<Fault>,
    /// Profile, strictness, expected failures.
    pub config: Config,
    /// Set (by a signal handler) to stop: the running app's process group is killed, its
    /// sandbox removed, and [`run`] returns [`AppError::Interrupted`].
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Case ids of every transcript that exists, run or not: with a baseline
    /// ([`Config::snapshots`]), a snapshot of a case outside this list (and not run) is STALE.
    /// Empty: the transcripts run.
    pub known: Vec<String>,
}

impl Default for AppConfig {
    /// No command, no memory folder, 60 s per transcript, threads accepted, no faults.
    fn default() -> AppConfig {
        AppConfig {
            command: String::new(),
            memory_dir: PathBuf::new(),
            timeout: Duration::from_secs(60),
            threads: Threads::Accept,
            faults: Vec::new(),
            config: Config::default(),
            interrupt: None,
            known: Vec::new(),
        }
    }
}

impl AppConfig {
    fn interrupted(&self) -> bool {
        self.interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

/// Why the run could not start at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// The command line is empty or cannot be split.
    #[error("bad --app command {command:?}: {why}")]
    Command {
        /// The command line.
        command: String,
        /// What is wrong.
        why: String,
    },
    /// A signal stopped the run; the app was killed and its sandbox removed.
    #[error("interrupted: the app was stopped and its sandbox removed")]
    Interrupted,
    /// The mock could not start.
    #[error("the mock Messages API cannot start")]
    Mock(#[source] std::io::Error),
    /// The memory folder cannot hold a sandbox: `..` in it, fewer than two parents, or its
    /// grandparent a link, not a folder, or unreadable.
    #[error("--memory-dir {memory_dir}: {why}")]
    MemoryDir {
        /// The memory folder.
        memory_dir: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The folder two levels above the memory folder is not absent or empty.
    #[error("--memory-dir {memory_dir}: {run} (two levels up, where the canaries go) must be absent or empty; memcert never writes among files it did not make")]
    NotEmpty {
        /// The memory folder.
        memory_dir: PathBuf,
        /// The folder that is not empty.
        run: PathBuf,
    },
}

/// A finished app run.
#[derive(Clone, Debug)]
pub struct AppRun {
    /// The totals, as reported.
    pub summary: Summary,
    /// The mock's address (`http://127.0.0.1:P`); it is closed when the run returns.
    pub mock: String,
    /// What the mock saw for each transcript, in transcript order (conversation mode, refused
    /// requests, notes).
    pub wire: Vec<SessionLog>,
}

/// Run every transcript against the app, reporting as it goes; see the module docs.
///
/// # Errors
/// [`AppError`] when nothing can run; an app that fails is a verdict, not an error.
pub fn run(
    app: &AppConfig,
    transcripts: &[Transcript],
    reporter: &mut dyn Reporter,
) -> Result<AppRun, AppError> {
    let words = shell_words::split(&app.command).map_err(|e| AppError::Command {
        command: app.command.clone(),
        why: e.to_string(),
    })?;
    if words.is_empty() {
        return Err(AppError::Command {
            command: app.command.clone(),
            why: "no program".into(),
        });
    }
    if !runnable(&words[0]) {
        return Err(AppError::Command {
            command: app.command.clone(),
            why: format!(
                "{:?} is not an executable file{}",
                words[0],
                if words[0].contains('/') {
                    ""
                } else {
                    " in any PATH folder"
                }
            ),
        });
    }
    let mut name = format!(
        "app: {} (threads {}",
        app.command,
        match app.threads {
            Threads::Accept => "accepted",
            Threads::Refuse => "refused",
        }
    );
    if !app.faults.is_empty() {
        let f: Vec<String> = app.faults.iter().map(ToString::to_string).collect();
        name.push_str(&format!(", --inject {}", f.join(" ")));
    }
    name.push(')');
    drive(app, &name, transcripts, &mut Drive::App(&words), reporter)
}

/// The run shared by [`run`] and [`serve_by_hand`]: the memory folder checked, one mock, each
/// transcript driven and graded and reported, the mock closed, the totals (with the baseline's,
/// when comparing).
fn drive(
    app: &AppConfig,
    name: &str,
    transcripts: &[Transcript],
    drive: &mut Drive,
    reporter: &mut dyn Reporter,
) -> Result<AppRun, AppError> {
    check_memory_dir(&app.memory_dir)?;
    let mock = MockApi::start(MockConfig {
        threads: app.threads,
        faults: app.faults.clone(),
    })
    .map_err(AppError::Mock)?;
    reporter.event(&Event::Started {
        target: name,
        profile: app.config.profile,
        total: transcripts.len(),
    });
    let mut records = Vec::new();
    let mut wire = Vec::new();
    let mut compared = Vec::new();
    for t in transcripts {
        if app.interrupted() {
            return Err(AppError::Interrupted);
        }
        let (rec, log) = run_one(app, drive, &mock, t);
        if app.interrupted() {
            return Err(AppError::Interrupted);
        }
        if let Some(c) = &rec.baseline {
            compared.push((rec.id.clone(), c.clone()));
        }
        reporter.event(&Event::CaseFinished(&rec));
        records.push(rec);
        wire.push(log);
    }
    let uri = mock.uri();
    drop(mock);
    let mut summary = Summary::of(
        name.to_owned(),
        &app.config,
        records.iter().map(|r| (r.id.as_str(), r.verdict)),
    );
    if let Snapshots::Compare(b) = &app.config.snapshots {
        let run: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
        let known: Vec<&str> = if app.known.is_empty() {
            run.clone()
        } else {
            app.known.iter().map(String::as_str).collect()
        };
        summary.baseline = Some(baseline_summary_of(b, &run, &compared, &|left| {
            left.iter().map(|id| known.contains(&id.as_str())).collect()
        }));
    }
    reporter.event(&Event::Finished(&summary));
    Ok(AppRun {
        summary,
        mock: uri,
        wire,
    })
}

/// The memory folder must be named without `..` and have two parents; its grandparent, where
/// the canaries go, must be absent or an empty, readable, real folder (not a link).
fn check_memory_dir(memory_dir: &Path) -> Result<(), AppError> {
    let bad = |why: String| AppError::MemoryDir {
        memory_dir: memory_dir.to_owned(),
        why,
    };
    if memory_dir
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(bad("`..` is refused: the folders two levels up would not be the ones memcert checks; name the folder without `..`".into()));
    }
    let abs = std::path::absolute(memory_dir).unwrap_or(memory_dir.to_owned());
    let Some(run) = abs
        .parent()
        .and_then(Path::parent)
        .filter(|p| p.parent().is_some())
    else {
        return Err(bad(
            "it needs two parent folders below / (the canaries go two levels up)".into(),
        ));
    };
    match std::fs::symlink_metadata(run) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(bad(format!("{}: {e}", run.display()))),
        Ok(m) if m.file_type().is_symlink() => {
            return Err(bad(format!(
            "{} (two levels up, where the canaries go) is a symbolic link; name the real folder",
            run.display()
        )))
        }
        Ok(m) if !m.is_dir() => {
            return Err(bad(format!(
                "{} (two levels up, where the canaries go) is not a folder",
                run.display()
            )))
        }
        Ok(_) => {}
    }
    match std::fs::read_dir(run).map(|mut d| d.next().is_some()) {
        Ok(true) => Err(AppError::NotEmpty {
            memory_dir: memory_dir.to_owned(),
            run: run.to_owned(),
        }),
        Ok(false) => Ok(()),
        Err(e) => Err(bad(format!("{} cannot be listed: {e}", run.display()))),
    }
}

/// How the app process ended.
enum Ending {
    Exited(std::process::ExitStatus),
    TimedOut,
    NotStarted(String),
    /// [`serve_by_hand`]: the final turn was served.
    Served,
    /// [`serve_by_hand`]: the final turn was not served in time.
    HandTimedOut,
}

/// Who talks to the mock: the app command (its words), or a person's app, told the URL.
enum Drive<'a> {
    App(&'a [String]),
    ByHand(&'a mut dyn FnMut(&str)),
}

/// `memcert mock-api`: serve one transcript to an app a person starts by hand, then grade it
/// like [`run`] grades an app run. `ready` gets the base URL (for `ANTHROPIC_BASE_URL`) once
/// the mock listens. Waits until the final turn is served (then 0.5 s more, for late
/// retries) or `app.timeout` passes (ERROR). `app.command` is not used; `app.memory_dir` is
/// the app's store root, laid out as for [`run`] (setup, canaries).
///
/// # Errors
/// As [`run`]: the memory folder's grandparent is not empty, or the mock cannot start.
pub fn serve_by_hand(
    app: &AppConfig,
    transcript: &Transcript,
    ready: &mut dyn FnMut(&str),
    reporter: &mut dyn Reporter,
) -> Result<AppRun, AppError> {
    drive(
        app,
        "mock-api (an app driven by hand)",
        std::slice::from_ref(transcript),
        &mut Drive::ByHand(ready),
        reporter,
    )
}

/// Wait until the session's final turn is served (and a little more), or the time limit.
fn wait_by_hand(mock: &MockApi, session: usize, app: &AppConfig) -> Ending {
    let deadline = Instant::now() + app.timeout;
    while Instant::now() < deadline && !app.interrupted() {
        if mock.log(session).finished {
            std::thread::sleep(Duration::from_millis(500));
            return Ending::Served;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ending::HandTimedOut
}

/// `program` names an executable file: a path, or a name found in a `PATH` folder.
fn runnable(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    let ok = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return ok(Path::new(program));
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| ok(&d.join(program))))
}

fn run_one(
    app: &AppConfig,
    drive: &mut Drive,
    mock: &MockApi,
    t: &Transcript,
) -> (CaseRecord, SessionLog) {
    let started = Instant::now();
    let case = t.to_case();
    let mut obs = Observation::default();
    let memory_dir = std::path::absolute(&app.memory_dir).unwrap_or(app.memory_dir.clone());
    let sandbox = match Sandbox::create_at_unchecked(&memory_dir, &case.setup) {
        Ok(s) => s,
        Err(e) => {
            let finding = Finding {
                verdict: Verdict::Error,
                kind: "sandbox".into(),
                detail: format!("the sandbox could not be laid out: {e}"),
            };
            let rec = record(&case, &[], obs, &app.config, vec![finding], started);
            return (rec, SessionLog::default());
        }
    };
    obs.before_unchecked(&sandbox);
    let run_dir = sandbox.run_dir().to_string_lossy().into_owned();
    let root = sandbox.root().to_string_lossy().into_owned();
    let fill = |v: &Value| instantiate(v, run_dir.trim_start_matches('/'), &root);
    let served: Vec<ServedTurn> = t
        .turns
        .iter()
        .map(|turn| ServedTurn {
            text: turn.text.clone(),
            tool_use: turn
                .tool_use
                .iter()
                .map(|u| (u.name.clone(), fill(&u.input)))
                .collect(),
        })
        .collect();
    let inputs: Vec<Value> = served
        .iter()
        .flat_map(|s| s.tool_use.iter().map(|(_, i)| i.clone()))
        .collect();
    obs.inputs = inputs.iter().map(strings_of).collect();
    let session = mock.add_session(served);
    let logs = tempfile::Builder::new().prefix("memcert-app-").tempdir();
    let (ending, escaped) = match (drive, &logs) {
        (Drive::App(words), Ok(logs)) => {
            run_app(app, words, mock, session, t, &sandbox, logs.path())
        }
        (Drive::App(_), Err(e)) => (
            Ending::NotStarted(format!("no folder for the app's output: {e}")),
            0,
        ),
        (Drive::ByHand(ready), _) => {
            ready(&mock.base_url(session));
            (wait_by_hand(mock, session, app), 0)
        }
    };
    let stderr = logs
        .as_ref()
        .map(|l| tail(&l.path().join("stderr")))
        .unwrap_or_default();
    let log = mock.log(session);
    obs.after_unchecked(&sandbox, &case);
    let mut missing = why_missing(&ending, &log, app.timeout, &stderr);
    let stray = mock.stray();
    if log.requests == 0 && !stray.is_empty() {
        missing.push_str(&format!(
            "; the mock got {} request(s) it does not serve, e.g. `{}`: is ANTHROPIC_BASE_URL used as given?",
            stray.len(),
            stray[0]
        ));
    }
    let mut k_in_turn = Vec::new();
    for (turn, tu) in t.turns.iter().enumerate() {
        for k in 0..tu.tool_use.len() {
            k_in_turn.push(tool_use_id(session, turn, k));
        }
    }
    // After an injected fault the conversation may end early: what came is graded, what did
    // not is the fault's finding below, not a missing reply.
    let faulted = !log.faults.is_empty();
    for id in &k_in_turn {
        match log.results.get(id) {
            Some(c) => obs.replies.push(Ok(c.result.clone())),
            None => {
                if !faulted {
                    obs.replies.push(Err(missing.clone()));
                }
                break;
            }
        }
    }
    if !matches!(app.config.snapshots, Snapshots::Off) {
        // Which listed names are folders or links, for the snapshot's size redaction: read after
        // the app ended (a folder removed later in the conversation is not known).
        obs.listed = obs
            .replies
            .iter()
            .map(|r| match r {
                Ok(r) => listed_unchecked(&sandbox, r),
                Err(_) => Default::default(),
            })
            .collect();
    }
    let mut extra = Vec::new();
    if faulted {
        let f = fault_finding(&log, &ending, &missing, &stderr);
        let unreached = k_in_turn.len() - obs.replies.len();
        if unreached > 0 {
            // Calls never made are not graded; they must not let the run certify, unless the
            // case already fails.
            extra.push(Finding {
                verdict: if f.verdict >= Verdict::Fail {
                    Verdict::Skipped
                } else {
                    Verdict::Error
                },
                kind: "not-reached".into(),
                detail: format!(
                    "{unreached} of {} memory call(s) were never made after the injected fault, so they are not graded; certify without --inject, or with the fault at a later turn, to grade them",
                    k_in_turn.len()
                ),
            });
        }
        extra.push(f);
    }
    if escaped > 0 {
        extra.push(Finding {
            verdict: Verdict::Info,
            kind: "app-children".into(),
            detail: format!("{escaped} process(es) the app started had left its process group (setsid or a new session) and were still running after it; memcert killed them"),
        });
    }
    for f in &app.faults {
        if f.turn() > t.turns.len() {
            extra.push(Finding {
                verdict: Verdict::Info,
                kind: "fault-not-delivered".into(),
                detail: format!(
                    "--inject {f}: this transcript has {} turn(s), so the fault was never delivered",
                    t.turns.len()
                ),
            });
        }
    }
    for c in &log.context {
        extra.push(Finding {
            verdict: match c.verdict {
                Verdict::NonStrict if app.config.strict => Verdict::Fail,
                v => v,
            },
            kind: "context-management".into(),
            detail: c.detail.clone(),
        });
    }
    for m in &log.malformed {
        extra.push(Finding {
            verdict: Verdict::Error,
            kind: "malformed-request".into(),
            detail: format!("the app sent a request the mock refused: {m}"),
        });
    }
    if log.finished {
        match &ending {
            Ending::Exited(s) if !s.success() => extra.push(Finding {
                verdict: Verdict::Error,
                kind: "app-exit".into(),
                detail: format!(
                    "the app {} after the final turn{}",
                    status_words(s),
                    stderr_words(&stderr)
                ),
            }),
            Ending::TimedOut => extra.push(Finding {
                verdict: Verdict::Error,
                kind: "app-timeout".into(),
                detail: format!(
                    "the app was still running {:?} after start, although the conversation had ended; its process group was killed",
                    app.timeout
                ),
            }),
            _ => {}
        }
    } else if !faulted && obs.replies.iter().all(Result::is_ok) {
        // Every tool_result came, but the final turn was never asked for.
        extra.push(Finding {
            verdict: Verdict::Error,
            kind: "no-final-turn".into(),
            detail: missing.clone(),
        });
    }
    for n in &log.notes {
        extra.push(Finding {
            verdict: Verdict::Info,
            kind: "wire".into(),
            detail: n.clone(),
        });
    }
    drop(sandbox);
    (
        record(&case, &inputs, obs, &app.config, extra, started),
        log,
    )
}

/// How the app dealt with the injected faults (messages-api-wire §5, §6): finishing anyway is
/// recovery (INFO); stopping with a failure status is a loud failure (INFO: nothing was
/// pretended); exiting 0 without finishing swallowed the failure (FAIL: the user is told all
/// went well); a timeout or a failed start is an ERROR.
fn fault_finding(log: &SessionLog, ending: &Ending, missing: &str, stderr: &str) -> Finding {
    let faults = log.faults.join(", ");
    let (verdict, kind, detail) = if log.finished {
        (
            Verdict::Info,
            "fault-recovered",
            format!("injected {faults}; the app retried and finished the conversation"),
        )
    } else {
        match ending {
            Ending::Exited(s) if s.success() => (
                Verdict::Fail,
                "fault-swallowed",
                format!(
                    "injected {faults}; the app exited with status 0 without finishing the conversation ({} request(s), {} tool_result(s) received): the failure was swallowed and its user is told all went well",
                    log.requests,
                    log.results.len()
                ),
            ),
            Ending::Exited(s) => (
                Verdict::Info,
                "fault-failed-loudly",
                format!(
                    "injected {faults}; the app {} without finishing the conversation: it failed loudly{}",
                    status_words(s),
                    stderr_words(stderr)
                ),
            ),
            Ending::TimedOut | Ending::HandTimedOut | Ending::NotStarted(_) | Ending::Served => {
                (Verdict::Error, "fault-no-end", format!("injected {faults}; {missing}"))
            }
        }
    };
    Finding {
        verdict,
        kind: kind.into(),
        detail,
    }
}

/// Start the app for one session and wait for it within the time limit.
fn run_app(
    app: &AppConfig,
    words: &[String],
    mock: &MockApi,
    session: usize,
    t: &Transcript,
    sandbox: &Sandbox,
    logs: &Path,
) -> (Ending, usize) {
    let (Ok(out), Ok(err)) = (
        std::fs::File::create(logs.join("stdout")),
        std::fs::File::create(logs.join("stderr")),
    ) else {
        return (
            Ending::NotStarted("cannot create the app's output files".into()),
            0,
        );
    };
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..])
        .env("ANTHROPIC_BASE_URL", mock.base_url(session))
        .env("ANTHROPIC_API_KEY", "memcert-dummy-key")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env(
            "ANTHROPIC_CUSTOM_HEADERS",
            format!("x-memcert-case: {}", t.case_id()),
        )
        .env("MEMCERT_USER_MESSAGE", &t.user)
        .env("MEMCERT_MEMORY_DIR", sandbox.root())
        .env("MEMCERT_BASE_DIR", sandbox.base())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return (
                Ending::NotStarted(format!("cannot start `{}`: {e}", words[0])),
                0,
            )
        }
    };
    let pid = rustix::process::Pid::from_child(&child);
    let deadline = Instant::now() + app.timeout;
    // Descendants seen so far (pid -> start time), scanned every 100 ms: a process that leaves
    // the app's process group (setsid) is still found through its parent while it has one.
    let mut seen = std::collections::BTreeMap::new();
    let mut next_scan = Instant::now();
    let ending = loop {
        if Instant::now() >= next_scan {
            descendants(pid.as_raw_nonzero().get(), &mut seen);
            next_scan = Instant::now() + Duration::from_millis(100);
        }
        match child.try_wait() {
            Ok(Some(status)) => break Ending::Exited(status),
            Ok(None) if Instant::now() >= deadline => break Ending::TimedOut,
            Ok(None) if app.interrupted() => break Ending::NotStarted("interrupted".into()),
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => break Ending::NotStarted(format!("cannot wait for the app: {e}")),
        }
    };
    // Whatever happened, nothing the app started outlives its case: its process group, then
    // any descendant seen that left the group and is still the same process.
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    let _ = child.wait();
    let mut escaped = 0;
    let group = pid.as_raw_nonzero().get();
    for (p, start) in &seen {
        // The group's own members are already killed (maybe not yet reaped).
        if proc_stat(*p).is_some_and(|s| s.start == *start && s.pgrp != group && !s.zombie) {
            if let Some(p) = rustix::process::Pid::from_raw(*p) {
                if rustix::process::kill_process(p, rustix::process::Signal::KILL).is_ok() {
                    escaped += 1;
                }
            }
        }
    }
    (ending, escaped)
}

/// A process as `/proc/<pid>/stat` shows it.
struct ProcStat {
    ppid: i32,
    pgrp: i32,
    start: u64,
    zombie: bool,
}

fn proc_stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcStat {
        zombie: *f.first()? == "Z",
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

/// Add to `seen` every live process descended from `root` or from a process already seen.
fn descendants(root: i32, seen: &mut std::collections::BTreeMap<i32, u64>) {
    let procs: Vec<(i32, i32, u64)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|p| proc_stat(p).map(|st| (p, st.ppid, st.start)))
        .collect();
    loop {
        let before = seen.len();
        for (p, pp, st) in &procs {
            if (*pp == root || seen.contains_key(pp)) && !seen.contains_key(p) {
                seen.insert(*p, *st);
            }
        }
        if seen.len() == before {
            break;
        }
    }
}

fn status_words(s: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => "ended".into(),
    }
}

fn stderr_words(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; stderr ends with: {stderr}")
    }
}

/// Why a tool_result the transcript expects did not come.
fn why_missing(ending: &Ending, log: &SessionLog, timeout: Duration, stderr: &str) -> String {
    let progress = format!(
        "{} request(s), {} tool_result(s) received",
        log.requests,
        log.results.len()
    );
    match ending {
        Ending::NotStarted(why) => why.clone(),
        Ending::Served => format!("the conversation stopped ({progress})"),
        Ending::HandTimedOut => format!(
            "the conversation was not finished within {timeout:?} ({progress})"
        ),
        Ending::TimedOut => format!(
            "the app did not finish the conversation within {timeout:?} ({progress}); its process group was killed{}",
            stderr_words(stderr)
        ),
        Ending::Exited(s) if log.requests == 0 => format!(
            "the app {} without calling the Messages API{}",
            status_words(s),
            stderr_words(stderr)
        ),
        Ending::Exited(s) => format!(
            "the app {} before the conversation ended ({progress}){}",
            status_words(s),
            stderr_words(stderr)
        ),
    }
}

/// The last lines of a file, joined with ` | `.
fn tail(path: &Path) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    memcert::target::last_lines(&String::from_utf8_lossy(&text))
}
