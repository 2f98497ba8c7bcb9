//! Process supervision of an app run: the app spawned contained ([`memcert::contain`]: its own
//! user and PID namespaces, no capabilities, Landlock with writes only in its sandbox, its alias
//! and its decoy HOME, TCP connect to the mock's port only, a scrubbed environment, limits) in a
//! process group of its own with its environment and output files, waited for within the time
//! limit while `/proc` is scanned for descendants that leave the group, then its group and every
//! escaped descendant killed with SIGKILL (and, in its PID namespace, every process it started),
//! so nothing it started outlives its case.
//!
//! As root an app runs as uid 0 mapped to `nobody` in its user namespace, without capabilities
//! (never as `nobody` itself: its memory folder is the user's and is not given away).

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use super::{AppConfig, Ending};
use crate::transcript::Transcript;
use memcert::attack::sandbox::Sandbox;
use memcert::contain::{proc_stat, processes, Cell, Containment, ProcStat, Running};
use memcert::scratch::Scratch;

/// What an app run left once it was over.
pub(super) struct Supervised {
    /// How it ended.
    pub(super) ending: Ending,
    /// Processes it started that had left its process group, killed after it.
    pub(super) escaped: usize,
    /// The last lines of its stderr.
    pub(super) stderr: String,
    /// The containment it ran under (`None`: it did not start).
    pub(super) containment: Option<Containment>,
    /// The canary token of its decoy credentials.
    pub(super) canaries: Vec<String>,
}

/// Where the app talks to and works in, for its environment.
pub(super) struct AppEnv<'a> {
    /// Its `ANTHROPIC_BASE_URL`: the transcript's session of the mock.
    pub(super) base_url: String,
    /// The transcript it runs.
    pub(super) transcript: &'a Transcript,
    /// The sandbox around its memory folder.
    pub(super) sandbox: &'a Sandbox,
}

/// Start the app (`words`), wait for it within the time limit, then kill whatever it left
/// running; its output goes to a temporary folder, of which the end of stderr is kept.
pub(super) fn run_app(app: &AppConfig, words: &[String], env: &AppEnv) -> Supervised {
    let logs = match memcert::scratch::Scratch::new("memcert-app-") {
        Ok(logs) => logs,
        Err(e) => {
            return Supervised {
                ending: Ending::NotStarted(format!("no folder for the app's output: {e}")),
                escaped: 0,
                stderr: String::new(),
                containment: None,
                canaries: Vec::new(),
            }
        }
    };
    let (ending, escaped, containment, canaries) = supervise(app, words, env, &logs);
    Supervised {
        ending,
        escaped,
        stderr: tail(&logs, "stderr"),
        containment,
        canaries,
    }
}

/// Spawn the app, wait for it, kill what it left; how it ended and how many escaped
/// processes were killed.
fn supervise(
    app: &AppConfig,
    words: &[String],
    env: &AppEnv,
    logs: &Scratch,
) -> (Ending, usize, Option<Containment>, Vec<String>) {
    let mut cell = match Cell::new() {
        Ok(c) => c,
        Err(e) => {
            let why = format!("no scratch folder for the app: {e}");
            return (Ending::NotStarted(why), 0, None, Vec::new());
        }
    };
    let canaries = vec![cell.token().to_owned()];
    let mut running = match spawn(app, words, env, logs, &mut cell) {
        Ok(c) => c,
        Err(ending) => return (ending, 0, cell.containment().cloned(), canaries),
    };
    let pid = Pid::from_child(&running.child);
    // Descendants seen so far (pid -> start time), scanned every 100 ms: a process that leaves
    // the app's process group (setsid) is still found through its parent while it has one.
    let mut seen = BTreeMap::new();
    // Those seen out of the app's process group while alive: in a PID namespace the kernel
    // kills them the moment the app ends, before they can be counted at the end.
    let mut left = BTreeSet::new();
    let ending = wait(app, &mut running, pid, &mut seen, &mut left);
    let escaped = kill_all(&mut running, pid, &seen, &left);
    (ending, escaped, cell.containment().cloned(), canaries)
}

/// The port of an `http://host:port/...` URL.
fn port_of(url: &str) -> Option<u16> {
    let rest = url.split_once("://")?.1;
    let host = rest.split('/').next()?;
    host.rsplit_once(':')?.1.parse().ok()
}

/// Start the app contained in `cell`, in a process group of its own, its stdout and stderr in
/// `logs`.
fn spawn(
    app: &AppConfig,
    words: &[String],
    env: &AppEnv,
    logs: &Scratch,
    cell: &mut Cell,
) -> Result<Running, Ending> {
    let (Ok(out), Ok(err)) = (logs.create_file("stdout"), logs.create_file("stderr")) else {
        return Err(Ending::NotStarted(
            "cannot create the app's output files".into(),
        ));
    };
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..])
        .env("ANTHROPIC_BASE_URL", &env.base_url)
        .env("ANTHROPIC_API_KEY", "memcert-dummy-key")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env(
            "ANTHROPIC_CUSTOM_HEADERS",
            format!("x-memcert-case: {}", env.transcript.case_id()),
        )
        .env("MEMCERT_USER_MESSAGE", &env.transcript.user)
        .env("MEMCERT_MEMORY_DIR", env.sandbox.root())
        .env("MEMCERT_BASE_DIR", env.sandbox.base())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    let mut policy = app.contain.clone();
    policy.connect_port = port_of(&env.base_url);
    policy.map_root = true;
    let run = env.sandbox.base().parent().unwrap_or(env.sandbox.base());
    let writes = [run.to_path_buf(), env.sandbox.alias().to_path_buf()];
    cell.prepare(&policy, &cmd, &writes);
    cell.spawn(cmd).map_err(|e| {
        let hint = if policy.enabled && memcert::contain::looks_denied(&e.to_string()) {
            format!("; {}", memcert::contain::SANDBOX_HINT)
        } else {
            String::new()
        };
        Ending::NotStarted(format!("cannot start `{}`: {e}{hint}", words[0]))
    })
}

/// Wait for the app until it exits, the time limit passes or the run is interrupted, adding
/// its descendants to `seen` every 100 ms.
fn wait(
    app: &AppConfig,
    running: &mut Running,
    pid: Pid,
    seen: &mut BTreeMap<i32, u64>,
    left: &mut BTreeSet<i32>,
) -> Ending {
    let child = &mut running.child;
    let deadline = Instant::now() + app.timeout;
    let mut next_scan = Instant::now();
    let group = pid.as_raw_nonzero().get();
    loop {
        if Instant::now() >= next_scan {
            descendants(group, seen);
            left.extend(
                seen.iter()
                    .filter(|(p, start)| out_of(**p, **start, group))
                    .map(|(p, _)| *p),
            );
            next_scan = Instant::now() + Duration::from_millis(100);
        }
        match child.try_wait() {
            Ok(Some(status)) => break Ending::Exited(status),
            Ok(None) if Instant::now() >= deadline => break Ending::TimedOut,
            Ok(None) if app.interrupted() => break Ending::NotStarted("interrupted".into()),
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => break Ending::NotStarted(format!("cannot wait for the app: {e}")),
        }
    }
}

/// Whatever happened, nothing the app started outlives its case: its process group, then
/// any descendant seen that left the group and is still the same process. Returns how many
/// of those were killed.
fn kill_all(
    running: &mut Running,
    pid: Pid,
    seen: &BTreeMap<i32, u64>,
    left: &BTreeSet<i32>,
) -> usize {
    let group = pid.as_raw_nonzero().get();
    // Counted before the kill: in a PID namespace they die with it.
    let mut escaped: BTreeSet<i32> = seen
        .iter()
        .filter(|(p, start)| out_of(**p, **start, group))
        .map(|(p, _)| *p)
        .collect();
    escaped.extend(left);
    let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    running.kill();
    for p in &escaped {
        // Still the same process (its start time), never a PID used again since.
        let same = |s: &ProcStat| seen.get(p).is_some_and(|start| s.start == *start);
        if proc_stat(*p).is_some_and(|s| same(&s) && !s.zombie) {
            if let Some(p) = Pid::from_raw(*p) {
                let _ = rustix::process::kill_process(p, Signal::KILL);
            }
        }
    }
    escaped.len()
}

/// Whether `p` (started at `start`) is alive and out of the process group `group`.
fn out_of(p: i32, start: u64, group: i32) -> bool {
    proc_stat(p).is_some_and(|s| s.start == start && s.pgrp != group && !s.zombie)
}

/// Add to `seen` every live process descended from `root` or from a process already seen.
fn descendants(root: i32, seen: &mut BTreeMap<i32, u64>) {
    let procs = processes();
    loop {
        let before = seen.len();
        for (p, st) in &procs {
            if (st.ppid == root || seen.contains_key(&st.ppid)) && !seen.contains_key(p) {
                seen.insert(*p, st.start);
            }
        }
        if seen.len() == before {
            break;
        }
    }
}

/// The last lines of the file `name` in `logs` (read through its handle), joined with ` | `.
fn tail(logs: &Scratch, name: &str) -> String {
    let mut text = Vec::new();
    if let Ok(mut f) = logs.open_file(name) {
        let _ = std::io::Read::read_to_end(&mut f, &mut text);
    }
    memcert::target::last_lines(&String::from_utf8_lossy(&text))
}
