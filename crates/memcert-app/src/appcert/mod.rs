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
//!
//! # Layout
//! This module holds the configuration, the errors and the orchestration of a run and of each
//! transcript; `supervise` owns the app's process (spawned in its own process group, the `/proc`
//! scan for descendants that escape it, the kills), and `findings` what a run says beyond its
//! graded replies.

mod findings;
mod supervise;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::mockapi::{tool_use_id, Fault, MockApi, MockConfig, ServedTurn, SessionLog, Threads};
use crate::transcript::Transcript;
use findings::{why_missing, Outcome};
use memcert::attack::oracle::{Finding, Observation};
use memcert::attack::sandbox::Sandbox;
use memcert::baseline::Entries as Listed;
use memcert::certify::Summary;
use memcert::certify::{
    baseline_summary_of, deadline_record, instantiate_in, listed_unchecked, record, strings_of,
    CaseRecord, Config, Event, Reporter, Snapshots,
};
use memcert::suite::verdict::Verdict;
use memcert::suite::Case;
use supervise::{run_app, AppEnv, Supervised};

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
    /// Profile, strictness, expected failures; its `stop` (a signal, the run's deadline) kills
    /// the running app's process group and removes its sandbox, then [`run`] reports what ran
    /// ([`memcert::certify::Summary::completion`]).
    pub config: Config,
    /// Case ids of every transcript that exists, run or not: with a baseline
    /// ([`Config::snapshots`]), a snapshot of a case outside this list (and not run) is STALE.
    /// Empty: the transcripts run.
    pub known: Vec<String>,
    /// How the app is contained ([`memcert::contain`]; as root it runs as uid 0 mapped to
    /// `nobody` without capabilities, never as `nobody`).
    pub contain: memcert::contain::Policy,
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
            known: Vec::new(),
            contain: memcert::contain::Policy::default(),
        }
    }
}

impl AppConfig {
    /// Whether the run must stop now (a signal, the run's deadline).
    fn interrupted(&self) -> bool {
        self.config.stop.reason().is_some()
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
    /// The mock could not start.
    #[error("the mock Messages API cannot start")]
    Mock(#[source] std::io::Error),
    /// The memory folder cannot hold a sandbox: `..` in it, fewer than two parents, its
    /// grandparent a link, not a folder, unreadable, not yours or not private, or a folder
    /// above it another user could change (`--insecure-dirs` accepts the last two).
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
    let stop = &app.config.stop;
    let mut stopped = None;
    let mut containment = None;
    for t in transcripts {
        let Some((rec, log)) = memcert::stop::run_item(
            stop,
            &mut stopped,
            || {
                let (rec, log, contained) = run_one(app, drive, &mock, t);
                containment = containment.take().or(contained);
                (rec, log)
            },
            |(rec, _)| rec.verdict == Verdict::Error,
            |cut| {
                let was_cut = cut.is_some();
                let log = cut.map(|(_, log)| log).unwrap_or_default();
                (deadline_record(&t.to_case(), was_cut), log)
            },
        ) else {
            break;
        };
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
    )
    .stopped(stopped, transcripts.len());
    summary.containment = containment;
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
    summary.peak_memory_kib = memcert::certify::peak_memory_kib();
    reporter.event(&Event::Finished(&summary));
    Ok(AppRun {
        summary,
        mock: uri,
        wire,
    })
}

/// The memory folder must be named without `..` and have two parents; its grandparent, where
/// the canaries go, must be absent or an empty, readable, real folder (not a link) of the
/// current user with no group or other bits, below folders that pass the StrictModes check.
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
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return check_private(run, &bad),
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
        Ok(false) => check_private(run, &bad),
        Err(e) => Err(bad(format!("{} cannot be listed: {e}", run.display()))),
    }
}

/// The run folder (absent or empty) and the folders above it pass memcert's checks of a folder
/// a user names ([`memcert::scratch::check_run_folder`]): each folder above is owned by you or
/// root and not writable by others unless sticky; an existing run folder is yours and private.
fn check_private(run: &Path, bad: &dyn Fn(String) -> AppError) -> Result<(), AppError> {
    memcert::scratch::check_run_folder(run).map_err(|e| bad(e.to_string()))
}

/// How the app process (or the wait for a person's app) ended.
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

/// Run one transcript: its sandbox laid out, its turns served to the app (or a person's app),
/// then every captured tool_result graded with the canary oracle, plus what the run says
/// beyond the replies ([`findings::extra`]).
fn run_one(
    app: &AppConfig,
    drive: &mut Drive,
    mock: &MockApi,
    t: &Transcript,
) -> (
    CaseRecord,
    SessionLog,
    Option<memcert::contain::Containment>,
) {
    let started = Instant::now();
    let case = t.to_case();
    let mut obs = Observation::default();
    let sandbox = match lay_out(app, &case) {
        Ok(s) => s,
        Err(finding) => {
            let rec = record(&case, &[], obs, &app.config, vec![finding], started);
            return (rec, SessionLog::default(), None);
        }
    };
    obs.before_unchecked(&sandbox);
    let served = served_turns(t, &sandbox);
    let inputs: Vec<Value> = served
        .iter()
        .flat_map(|s| s.tool_use.iter().map(|(_, i)| i.clone()))
        .collect();
    obs.inputs = inputs.iter().map(strings_of).collect();
    let session = mock.add_session(served);
    let ran = drive_session(app, drive, mock, session, t, &sandbox);
    obs.credentials = ran.canaries.clone();
    let log = mock.log(session);
    obs.after_unchecked(&sandbox, &case);
    let missing = why_missing(&ran.ending, &log, app.timeout, &ran.stderr)
        + &findings::stray_hint(&log, &mock.stray());
    let ids = tool_use_ids(t, session);
    collect_replies(&mut obs, &log, &ids, &missing);
    if !matches!(app.config.snapshots, Snapshots::Off) {
        obs.listed = listed(&obs, &sandbox);
    }
    let outcome = Outcome {
        log: &log,
        ran: &ran,
        missing: &missing,
        calls: ids.len(),
        replies: &obs.replies,
    };
    let extra = findings::extra(app, t.turns.len(), &outcome);
    drop(sandbox);
    (
        record(&case, &inputs, obs, &app.config, extra, started),
        log,
        ran.containment.clone(),
    )
}

/// The case's sandbox, its store root the memory folder; an ERROR finding when it cannot be
/// laid out.
fn lay_out(app: &AppConfig, case: &Case) -> Result<Sandbox, Finding> {
    let memory_dir = std::path::absolute(&app.memory_dir).unwrap_or(app.memory_dir.clone());
    Sandbox::create_at_unchecked(&memory_dir, &case.setup).map_err(|e| Finding {
        verdict: Verdict::Error,
        kind: "sandbox".into(),
        detail: format!("the sandbox could not be laid out: {e}"),
    })
}

/// The transcript's turns as the mock serves them, the sandbox's paths filled in.
fn served_turns(t: &Transcript, sandbox: &Sandbox) -> Vec<ServedTurn> {
    let fill = |v: &Value| instantiate_in(v, sandbox);
    t.turns
        .iter()
        .map(|turn| ServedTurn {
            text: turn.text.clone(),
            tool_use: turn
                .tool_use
                .iter()
                .map(|u| (u.name.clone(), fill(&u.input)))
                .collect(),
        })
        .collect()
}

/// Let the app (or a person's app, told the URL) hold the session's conversation.
fn drive_session(
    app: &AppConfig,
    drive: &mut Drive,
    mock: &MockApi,
    session: usize,
    t: &Transcript,
    sandbox: &Sandbox,
) -> Supervised {
    match drive {
        Drive::App(words) => {
            let env = AppEnv {
                base_url: mock.base_url(session),
                transcript: t,
                sandbox,
            };
            run_app(app, words, &env)
        }
        Drive::ByHand(ready) => {
            ready(&mock.base_url(session));
            Supervised {
                ending: wait_by_hand(mock, session, app),
                escaped: 0,
                stderr: String::new(),
                containment: None,
                canaries: Vec::new(),
            }
        }
    }
}

/// The ids of every tool_use the transcript has the mock send, in order.
fn tool_use_ids(t: &Transcript, session: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for (turn, tu) in t.turns.iter().enumerate() {
        for k in 0..tu.tool_use.len() {
            ids.push(tool_use_id(session, turn, k));
        }
    }
    ids
}

/// The replies to grade: each expected tool_result in order, up to the first that did not
/// come, which is an error with `missing`. After an injected fault the conversation may end
/// early: what came is graded, what did not is the fault's finding, not a missing reply.
fn collect_replies(obs: &mut Observation, log: &SessionLog, ids: &[String], missing: &str) {
    let faulted = !log.faults.is_empty();
    for id in ids {
        match log.results.get(id) {
            Some(c) => obs.replies.push(Ok(c.result.clone())),
            None => {
                if !faulted {
                    obs.replies.push(Err(missing.to_owned()));
                }
                break;
            }
        }
    }
}

/// Which listed names are folders or links, for the snapshot's size redaction: read after the
/// app ended (a folder removed later in the conversation is not known).
fn listed(obs: &Observation, sandbox: &Sandbox) -> Vec<Listed> {
    obs.replies
        .iter()
        .map(|r| match r {
            Ok(r) => listed_unchecked(sandbox, r),
            Err(_) => Default::default(),
        })
        .collect()
}
