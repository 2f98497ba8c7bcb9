//! Process supervision of an app run: the app spawned in a process group of its own with its
//! environment and output files, waited for within the time limit while `/proc` is scanned for
//! descendants that leave the group, then its group and every escaped descendant killed with
//! SIGKILL, so nothing it started outlives its case.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use super::{AppConfig, Ending};
use crate::transcript::Transcript;
use memcert::attack::sandbox::Sandbox;
use memcert::scratch::Scratch;

/// What an app run left once it was over.
pub(super) struct Supervised {
    /// How it ended.
    pub(super) ending: Ending,
    /// Processes it started that had left its process group, killed after it.
    pub(super) escaped: usize,
    /// The last lines of its stderr.
    pub(super) stderr: String,
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
            }
        }
    };
    let (ending, escaped) = supervise(app, words, env, &logs);
    Supervised {
        ending,
        escaped,
        stderr: tail(&logs, "stderr"),
    }
}

/// Spawn the app, wait for it, kill what it left; how it ended and how many escaped
/// processes were killed.
fn supervise(app: &AppConfig, words: &[String], env: &AppEnv, logs: &Scratch) -> (Ending, usize) {
    let mut child = match spawn(words, env, logs) {
        Ok(c) => c,
        Err(ending) => return (ending, 0),
    };
    let pid = Pid::from_child(&child);
    // Descendants seen so far (pid -> start time), scanned every 100 ms: a process that leaves
    // the app's process group (setsid) is still found through its parent while it has one.
    let mut seen = BTreeMap::new();
    let ending = wait(app, &mut child, pid, &mut seen);
    let escaped = kill_all(&mut child, pid, &seen);
    (ending, escaped)
}

/// Start the app in a process group of its own, its stdout and stderr in `logs`.
fn spawn(words: &[String], env: &AppEnv, logs: &Scratch) -> Result<Child, Ending> {
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
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.spawn()
        .map_err(|e| Ending::NotStarted(format!("cannot start `{}`: {e}", words[0])))
}

/// Wait for the app until it exits, the time limit passes or the run is interrupted, adding
/// its descendants to `seen` every 100 ms.
fn wait(app: &AppConfig, child: &mut Child, pid: Pid, seen: &mut BTreeMap<i32, u64>) -> Ending {
    let deadline = Instant::now() + app.timeout;
    let mut next_scan = Instant::now();
    loop {
        if Instant::now() >= next_scan {
            descendants(pid.as_raw_nonzero().get(), seen);
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
fn kill_all(child: &mut Child, pid: Pid, seen: &BTreeMap<i32, u64>) -> usize {
    let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    let _ = child.wait();
    let mut escaped = 0;
    let group = pid.as_raw_nonzero().get();
    for (p, start) in seen {
        // The group's own members are already killed (maybe not yet reaped).
        if proc_stat(*p).is_some_and(|s| s.start == *start && s.pgrp != group && !s.zombie) {
            if let Some(p) = Pid::from_raw(*p) {
                if rustix::process::kill_process(p, Signal::KILL).is_ok() {
                    escaped += 1;
                }
            }
        }
    }
    escaped
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
fn descendants(root: i32, seen: &mut BTreeMap<i32, u64>) {
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

/// The last lines of the file `name` in `logs` (read through its handle), joined with ` | `.
fn tail(logs: &Scratch, name: &str) -> String {
    let mut text = Vec::new();
    if let Ok(mut f) = logs.open_file(name) {
        let _ = std::io::Read::read_to_end(&mut f, &mut text);
    }
    memcert::target::last_lines(&String::from_utf8_lossy(&text))
}
