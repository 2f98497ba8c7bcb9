//! Stdio protocol v1 (`docs/protocol.md`): one handler process per run, JSON lines, lockstep.
//!
//! memcert writes one request line and waits up to the time limit for one answer line; the
//! write obeys the same limit (a handler that never reads its stdin times out like one that
//! never answers). A handler that hangs, exits, or prints a line that is not protocol JSON
//! makes that case ERROR; the process is stopped and started again (with a new hello) at the
//! next reset, and the run goes on. Its stderr is kept (the last 8 KiB) for the report.
//!
//! # Memory
//! One answer line is read up to the read cap ([`Stdio::max_reply_bytes`], default
//! [`DEFAULT_MAX_REPLY_BYTES`], 32 MiB; `--max-reply-bytes`): memcert never holds more than the
//! cap plus one 64 KiB read of it, also for a line that never ends. A longer answer is
//! [`TargetError::ReplyTooLarge`] (the case is FAIL, `bug:B17`, finding `reply-too-large`), its
//! bytes are dropped, and the handler is stopped and restarted at the next reset. `hello` tells
//! the handler the cap (`max_reply_bytes`); one that answers a call with its answer's size alone,
//! `{"id": ID, "too_large": BYTES}` (memcert's Python and Node adapters do), gets the same FAIL
//! ([`TargetError::ReplyTooLargeUnsent`]) and is kept running. The pipes are
//! driven by `poll(2)` from the caller's thread (`stdio/wire.rs`), so no reader thread holds
//! answers nobody asked for.
//!
//! # Reads (`bug:B17`)
//! The handler's processes as they were when it said hello are kept by PID; their `rchar`
//! counts (`/proc/<pid>/io`) summed are [`Target::read_bytes`], which the runner reads around each
//! call. While an answer is awaited the count is looked at every [`crate::stop::POLL`]: once the
//! call has read more than 16 MiB ([`crate::attack::oracle::UNBOUNDED_READ_BYTES`]) and has waited
//! [`READ_PATIENCE`], memcert stops waiting, stops the handler ([`TargetError::UnboundedRead`])
//! and restarts it at the next reset, so a handler reading a `/dev/zero` or a huge file costs
//! about a second, not the time limit. The count just before a failed request stopped the handler stays readable until the
//! next start.
//!
//! # Containment
//! The process runs contained ([`crate::contain`]): in a [`Cell`] whose scratch root holds the
//! case sandboxes and its decoy HOME, under the [`Policy`] given with [`Stdio::contained`] (by
//! default, as far as the kernel allows).

mod wire;

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{ChildStdin, ChildStdout, Command, Stdio as Pipe};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Target, TargetError};
use crate::contain::{Cell, Containment, Policy, Running};
use crate::protocol::{Content, ToolResult};
use crate::stop::Stop;

/// Protocol version this harness speaks.
pub const PROTOCOL: u64 = 1;
/// Default per-call time limit.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Time limit for start-up and hello (interpreters import slowly).
pub const START_TIMEOUT: Duration = Duration::from_secs(60);
const STDERR_TAIL: usize = 8 * 1024;
/// How long a call that has read more than 16 MiB is still waited for before the handler is
/// stopped (`TargetError::UnboundedRead`): a handler that reads a huge file and answers at once
/// keeps running, one that reads a `/dev/zero` on and on is stopped within about this time.
pub const READ_PATIENCE: Duration = Duration::from_secs(1);
/// Default read cap on one answer line, in bytes (32 MiB; a 999,999-line file view is about
/// 10 MiB).
pub const DEFAULT_MAX_REPLY_BYTES: usize = 32 * 1024 * 1024;

struct Proc {
    running: Running,
    /// Non-blocking (`wire::nonblocking`), like `stdout`.
    stdin: ChildStdin,
    stdout: ChildStdout,
    /// Bytes read from stdout and not yet taken as an answer.
    pending: Vec<u8>,
}

/// A handler process speaking stdio protocol v1.
pub struct Stdio {
    /// The running process said hello ([`Stdio::greet`]).
    greeted: bool,
    program: OsString,
    /// The working folder `command` named, if any (`None`: memcert's own).
    cwd: Option<std::path::PathBuf>,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    display: String,
    timeout: Duration,
    proc: Option<Proc>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    handler: String,
    /// What the handler said it runs on in `hello` (`"sdk"`, `"runtime"`), cleaned, joined
    /// with ", "; empty when it said nothing.
    runtime: String,
    next_id: u64,
    /// Its scratch root and decoy HOME (`None` when they could not be made: it then runs
    /// uncontained in memcert's temp folder, as [`Target::containment`] says).
    cell: Option<Cell>,
    policy: Policy,
    batch: bool,
    /// Ends every wait early (a signal, the run's deadline).
    run_stop: Stop,
    max_reply: usize,
    /// The handler's processes (memcert's PID namespace) when it said hello: what
    /// [`Target::read_bytes`] sums.
    pids: Vec<i32>,
    /// Their read count when a failed request stopped them (a timeout, an answer over the cap),
    /// until the next start: what the call read before it was given up on.
    read_at_stop: Option<u64>,
}

/// The `rchar` count (bytes read through `read(2)` and its kin) of `/proc/<pid>/io`; `None` when
/// the process is gone or the file cannot be read. Reads at most 4 KiB.
pub fn rchar(pid: i32) -> Option<u64> {
    use std::io::Read as _;
    let mut text = String::new();
    std::fs::File::open(format!("/proc/{pid}/io"))
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("rchar:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The `rchar` counts of `pids` now ([`rchar`]), summed; `None` when none can be read.
fn read_of(pids: &[i32]) -> Option<u64> {
    let counts: Vec<u64> = pids.iter().filter_map(|p| rchar(*p)).collect();
    (!counts.is_empty()).then(|| counts.iter().sum())
}

/// `root` and every process descended from it now (`crate::contain::processes`).
fn tree_of_pids(root: i32) -> Vec<i32> {
    let all = crate::contain::processes();
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        out.extend(
            all.iter()
                .filter(|(pid, s)| s.ppid == parent && !out.contains(pid))
                .map(|(pid, _)| *pid)
                .collect::<Vec<_>>(),
        );
        i += 1;
    }
    out
}

impl Stdio {
    /// A target that runs `command` (started lazily, at the first reset) with a per-call time
    /// limit.
    pub fn new(command: Command, timeout: Duration) -> Self {
        let program = command.get_program().to_owned();
        let cwd = command.get_current_dir().map(|d| d.to_owned());
        let args: Vec<OsString> = command.get_args().map(|a| a.to_owned()).collect();
        let envs = command
            .get_envs()
            .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned())))
            .collect();
        let display = std::iter::once(program.to_string_lossy().into_owned())
            .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
            .collect::<Vec<_>>()
            .join(" ");
        Stdio {
            program,
            cwd,
            args,
            envs,
            display,
            timeout,
            proc: None,
            stderr: Arc::new(Mutex::new(VecDeque::new())),
            handler: String::new(),
            runtime: String::new(),
            next_id: 0,
            batch: false,
            greeted: false,
            run_stop: Stop::never(),
            max_reply: DEFAULT_MAX_REPLY_BYTES,
            cell: Cell::new().ok(),
            policy: Policy::default(),
            pids: Vec::new(),
            read_at_stop: None,
        }
    }

    /// Every wait for the handler (hello included) ends when `stop` fires.
    pub fn stoppable(mut self, stop: &Stop) -> Self {
        self.run_stop = stop.clone();
        self
    }

    /// Run the handler under `policy` instead of the default (which contains it as far as the
    /// kernel allows); call before it starts.
    pub fn contained(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// Name the target in reports instead of its command line (which may show a temporary path).
    pub fn named(mut self, display: impl Into<String>) -> Self {
        self.display = display.into();
        self
    }

    /// Cap one answer line at `bytes` (`--max-reply-bytes`; default [`DEFAULT_MAX_REPLY_BYTES`]):
    /// a longer one is [`TargetError::ReplyTooLarge`] and stops the handler.
    pub fn max_reply_bytes(mut self, bytes: usize) -> Self {
        self.max_reply = bytes;
        self
    }

    /// The `rchar` counts of the processes in [`Stdio::pids`] now, summed; `None` when none can
    /// be read.
    fn read_now(&self) -> Option<u64> {
        read_of(&self.pids)
    }

    /// Start the process and exchange hello; returns the handler's name.
    ///
    /// # Errors
    /// [`TargetError::Spawn`] if it cannot start, [`TargetError::Protocol`] if hello is refused.
    pub fn start(&mut self) -> Result<String, TargetError> {
        self.spawn()?;
        self.greet()
    }

    /// The first half of [`Stdio::start`]: start the process, without waiting for it. A
    /// handler that loads slowly (an interpreter importing its SDK) loads while memcert starts
    /// others; [`Stdio::greet`] (or [`Target::finish_start`]) exchanges hello.
    ///
    /// # Errors
    /// [`TargetError::Spawn`] if it cannot start.
    pub fn spawn(&mut self) -> Result<(), TargetError> {
        self.stop();
        if let Some(why) = self.run_stop.reason() {
            return Err(TargetError::Stopped(why));
        }
        let mut cmd = Command::new(&self.program);
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        cmd.args(&self.args)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .stdin(Pipe::piped())
            .stdout(Pipe::piped())
            .stderr(Pipe::piped());
        // Its own process group (so a timeout stops wrappers such as sh, npx or uv run and
        // their children alike), contained, with a HOME and TMPDIR of its own that the runner
        // watches: a write there during a case is a write outside the root.
        let spawned = match self.cell.as_mut() {
            Some(cell) => {
                cell.prepare(&self.policy, &cmd, &[]);
                cell.adopt();
                cell.spawn(cmd)
            }
            None => {
                std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
                cmd.spawn().map(Running::uncontained)
            }
        };
        let mut running = spawned.map_err(|source| TargetError::Spawn {
            command: self.display.clone(),
            source,
        })?;
        let child = &mut running.child;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        self.proc = Some(Proc {
            running,
            stdin,
            stdout,
            pending: Vec::new(),
        });
        if let Some(p) = self.proc.as_ref() {
            if let Err(e) = wire::nonblocking(&p.stdin).and_then(|()| wire::nonblocking(&p.stdout))
            {
                self.stop();
                return Err(TargetError::Io(e));
            }
        }
        let tail = Arc::clone(&self.stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                t.extend(&buf[..n]);
                while t.len() > STDERR_TAIL {
                    t.pop_front();
                }
            }
        });
        self.greeted = false;
        Ok(())
    }

    /// The second half of [`Stdio::start`]: exchange hello with the process [`Stdio::spawn`]
    /// started; returns the handler's name.
    ///
    /// # Errors
    /// [`TargetError::Protocol`] if hello is refused, or any error of the exchange (the
    /// process is then stopped).
    pub fn greet(&mut self) -> Result<String, TargetError> {
        // The read cap is an optional field (v1): an adapter that knows it sends the size of a
        // longer call answer instead of the answer ([`TargetError::ReplyTooLargeUnsent`]).
        let hello = json!({"op": "hello", "protocol": PROTOCOL, "max_reply_bytes": self.max_reply});
        let answer = self.request(&hello, START_TIMEOUT)?;
        if answer.get("ok") != Some(&Value::Bool(true)) {
            let why = answer
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("hello was refused")
                .to_owned();
            self.stop();
            return Err(TargetError::Protocol(why));
        }
        if answer.get("protocol").and_then(Value::as_u64) != Some(PROTOCOL) {
            self.stop();
            return Err(TargetError::Protocol(format!(
                "the handler speaks protocol {}, memcert speaks {PROTOCOL}",
                answer.get("protocol").unwrap_or(&Value::Null)
            )));
        }
        self.handler = answer
            .get("handler")
            .and_then(Value::as_str)
            .unwrap_or("unnamed handler")
            .to_owned();
        self.runtime = runtime_of(&answer);
        self.read_at_stop = None;
        self.pids = self
            .proc
            .as_ref()
            .map(|p| tree_of_pids(p.running.child.id() as i32))
            .unwrap_or_default();
        // v1.1: the optional ops the handler answers.
        self.batch = answer
            .get("ops")
            .and_then(Value::as_array)
            .is_some_and(|ops| ops.iter().any(|o| o == "batch"));
        self.greeted = true;
        Ok(self.handler.clone())
    }

    /// Check that `answer` is for request `id` (else the process is stopped: the lockstep is
    /// lost) and is not a failure (`{"ok":false,"error":...}`); `what` names the request.
    fn answered(&mut self, id: &str, answer: &Value, what: &str) -> Result<(), TargetError> {
        if answer.get("id").and_then(Value::as_str) != Some(id) {
            self.stop();
            return Err(TargetError::Protocol(format!(
                "answer for another {what}: {}",
                cut(&answer.to_string())
            )));
        }
        match answer.get("error").and_then(Value::as_str) {
            Some(err) => Err(TargetError::Protocol(format!(
                "the handler could not answer the {what}: {err}"
            ))),
            None => Ok(()),
        }
    }

    /// The tool result in a `call` answer (or one `batch` result) for call `id`.
    ///
    /// An answer `{"id": id, "too_large": BYTES}` with BYTES over the read cap is
    /// [`TargetError::ReplyTooLargeUnsent`] and keeps the process; with BYTES within the cap it
    /// is a protocol error (the answer it stands for would have been read).
    fn call_answer(&mut self, id: &str, answer: &Value) -> Result<ToolResult, TargetError> {
        self.answered(id, answer, "call")?;
        if let Some(size) = answer.get("too_large") {
            return match size.as_u64() {
                Some(bytes) if bytes > self.max_reply as u64 => {
                    Err(TargetError::ReplyTooLargeUnsent {
                        limit: self.max_reply,
                        bytes,
                    })
                }
                _ => Err(TargetError::Protocol(format!(
                    "too_large is not a length over the read cap of {} bytes: {}",
                    self.max_reply,
                    cut(&size.to_string())
                ))),
            };
        }
        let content: Content = match answer.get("content") {
            None => {
                self.stop();
                return Err(TargetError::Protocol("answer without content".into()));
            }
            Some(c) => serde_json::from_value(c.clone()).map_err(|_| {
                TargetError::Protocol(format!(
                    "content is not a string, a list of blocks or null: {}",
                    cut(&c.to_string())
                ))
            })?,
        };
        let is_error = match answer.get("is_error") {
            Some(Value::Bool(b)) => *b,
            None => false,
            Some(other) => {
                return Err(TargetError::Protocol(format!(
                    "is_error is not a boolean: {other}"
                )))
            }
        };
        Ok(ToolResult { content, is_error })
    }

    /// The last bytes the handler wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        tail_of(&self.stderr)
    }

    fn stop(&mut self) {
        self.pids.clear();
        if let Some(mut p) = self.proc.take() {
            p.running.kill();
        }
    }

    fn request(&mut self, msg: &Value, timeout: Duration) -> Result<Value, TargetError> {
        let result = self.exchange(msg, timeout);
        if result.is_err() {
            self.read_at_stop = self.read_now();
            self.stop();
        }
        result
    }

    fn exchange(&mut self, msg: &Value, timeout: Duration) -> Result<Value, TargetError> {
        let tail = self.stderr_tail();
        let cap = self.max_reply;
        let run_stop = self.run_stop.clone();
        let Some(p) = self.proc.as_mut() else {
            return Err(TargetError::Protocol("the handler is not running".into()));
        };
        let mut line = serde_json::to_vec(msg).expect("requests serialise");
        line.push(b'\n');
        let deadline = Instant::now() + timeout;
        // A handler that has read more than a call may (bug:B17) is not waited for past
        // `READ_PATIENCE`: its read count is looked at while the answer is awaited. (One that
        // answers sooner is not stopped, and so not restarted; the verdict is the same.)
        let pids = self.pids.clone();
        let start = read_of(&pids);
        let patient_until = Instant::now() + READ_PATIENCE;
        let give_up = || {
            Instant::now() >= patient_until
                && start.zip(read_of(&pids)).is_some_and(|(a, b)| {
                    b.saturating_sub(a) > crate::attack::oracle::UNBOUNDED_READ_BYTES
                })
        };
        let got = wire::exchange_watched(
            &mut p.stdin,
            &mut p.stdout,
            &mut p.pending,
            &line,
            deadline,
            cap,
            &run_stop,
            &give_up,
        )?;
        match got {
            wire::Got::Line(bytes) => {
                let parsed = serde_json::from_slice::<Value>(&bytes);
                match parsed {
                    Ok(v @ Value::Object(_)) => Ok(v),
                    _ => Err(TargetError::BadJson(cut(&String::from_utf8_lossy(&bytes)))),
                }
            }
            wire::Got::TooLarge(head) => Err(TargetError::ReplyTooLarge {
                limit: cap,
                head: cut(&String::from_utf8_lossy(&head)),
            }),
            wire::Got::Timeout => Err(TargetError::Timeout(timeout)),
            wire::Got::GaveUp => Err(TargetError::UnboundedRead {
                limit: crate::attack::oracle::UNBOUNDED_READ_BYTES,
            }),
            wire::Got::Stopped(why) => Err(TargetError::Stopped(why)),
            wire::Got::WriteClosed => Err(exited(p, tail)),
            wire::Got::Closed => {
                std::thread::sleep(Duration::from_millis(50));
                let tail = tail_of(&self.stderr);
                let p = self.proc.as_mut().expect("checked above");
                Err(exited(p, tail))
            }
        }
    }
}

fn tail_of(buf: &Mutex<VecDeque<u8>>) -> String {
    let t = buf.lock().unwrap_or_else(|e| e.into_inner());
    let (a, b) = t.as_slices();
    let mut v = a.to_vec();
    v.extend_from_slice(b);
    String::from_utf8_lossy(&v).into_owned()
}

fn exited(p: &mut Proc, stderr: String) -> TargetError {
    let status = match p.running.child.try_wait() {
        Ok(Some(s)) => s.to_string(),
        _ => "closed its stdout".to_owned(),
    };
    TargetError::Exited {
        status,
        stderr: super::last_lines(&stderr),
    }
}

/// The optional `"sdk"` and `"runtime"` strings of a hello answer (`"anthropic 2.14.0"`,
/// `"CPython 3.12.3"`), each cut to 80 characters with control characters dropped (untrusted
/// text that ends up in every report's header), joined with ", ".
fn runtime_of(hello: &Value) -> String {
    ["sdk", "runtime"]
        .iter()
        .filter_map(|k| hello.get(*k).and_then(Value::as_str))
        .map(|v| {
            v.chars()
                .filter(|c| !c.is_control())
                .take(80)
                .collect::<String>()
                .trim()
                .to_owned()
        })
        .filter(|v| !v.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

fn cut(s: &str) -> String {
    if s.chars().count() > 200 {
        format!("{}...", s.chars().take(200).collect::<String>())
    } else {
        s.to_owned()
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl Target for Stdio {
    fn finish_start(&mut self) -> Result<(), TargetError> {
        if self.proc.is_some() && !self.greeted {
            self.greet().map(drop)
        } else {
            Ok(())
        }
    }

    fn stderr_tail(&self) -> String {
        tail_of(&self.stderr)
    }

    fn watched(&self) -> Vec<&crate::scratch::Scratch> {
        self.cell.iter().map(Cell::home_scratch).collect()
    }

    fn decoys(&self) -> Vec<(std::path::PathBuf, std::os::fd::OwnedFd)> {
        self.cell.iter().flat_map(Cell::decoys).collect()
    }

    fn scratch(&self) -> Option<&Path> {
        self.cell.as_ref().map(Cell::scratch)
    }

    /// What its containment achieved: known once it started; before, what was asked.
    fn containment(&self) -> Containment {
        let why = match &self.cell {
            Some(cell) => match cell.containment() {
                Some(c) => return c.clone(),
                None => "the handler has not started",
            },
            None => "no scratch folder could be made for it",
        };
        let mut c = Containment::off(rustix::process::geteuid().as_raw());
        c.missing = vec![why.into()];
        c
    }

    fn canaries(&self) -> Vec<String> {
        self.cell.iter().map(|c| c.token().to_owned()).collect()
    }

    /// `handler (display, sdk, runtime)`: the name from `hello`, then how it is run, then the
    /// SDK and interpreter it reported (left out when it reported none, as protocol v1 allows).
    fn describe(&self) -> String {
        let how = if self.runtime.is_empty() {
            self.display.clone()
        } else {
            format!("{}, {}", self.display, self.runtime)
        };
        if self.handler.is_empty() {
            how
        } else {
            format!("{} ({how})", self.handler)
        }
    }

    fn timeout(&self) -> Option<Duration> {
        Some(self.timeout)
    }

    /// The `rchar` counts of the handler's processes ([`rchar`]), summed; once a failed
    /// request stopped them, their count just before (until the next start); `None` before it
    /// started, or when none of them can be read.
    fn read_bytes(&self) -> Option<u64> {
        if self.proc.is_none() {
            return self.read_at_stop;
        }
        self.read_now()
    }

    fn set_stop(&mut self, stop: &Stop) {
        self.run_stop = stop.clone();
    }

    fn reset(&mut self, base_dir: &Path, memories_dir: &Path) -> Result<(), TargetError> {
        if self.proc.is_none() {
            self.start()?;
        } else if !self.greeted {
            self.greet()?;
        }
        // The case's sandbox was just laid out in the scratch root: give it to the handler's
        // uid when it runs as another.
        if let Some(cell) = &self.cell {
            cell.adopt_store(memories_dir);
        }
        let msg = json!({
            "op": "reset",
            "base_dir": base_dir.to_string_lossy(),
            "memories_dir": memories_dir.to_string_lossy(),
        });
        // A reset obeys --timeout like a call (docs/protocol.md).
        let answer = self.request(&msg, self.timeout)?;
        if answer.get("ok") == Some(&Value::Bool(true)) {
            Ok(())
        } else {
            let why = answer
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("no reason given");
            Err(TargetError::Protocol(format!("reset refused: {why}")))
        }
    }

    fn call(&mut self, input: &Value) -> Result<ToolResult, TargetError> {
        self.next_id += 1;
        let id = format!("c{}", self.next_id);
        let answer = self.request(
            &json!({"op": "call", "id": id, "input": input}),
            self.timeout,
        )?;
        self.call_answer(&id, &answer)
    }

    /// One `batch` request (v1.1) when the handler announced it in `hello`; the calls one by one
    /// otherwise. The time limit is the per-call limit times the number of calls.
    fn call_batch(&mut self, inputs: &[Value]) -> Result<Vec<ToolResult>, TargetError> {
        if !self.batch {
            return inputs.iter().map(|i| self.call(i)).collect();
        }
        self.next_id += 1;
        let id = format!("b{}", self.next_id);
        let calls: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, input)| json!({"id": format!("{id}.{}", i + 1), "input": input}))
            .collect();
        let timeout = self.timeout * (inputs.len().max(1) as u32);
        let answer = self.request(&json!({"op": "batch", "id": id, "calls": calls}), timeout)?;
        self.answered(&id, &answer, "batch")?;
        let Some(results) = answer.get("results").and_then(Value::as_array) else {
            self.stop();
            return Err(TargetError::Protocol("batch answer without results".into()));
        };
        if results.len() != inputs.len() {
            return Err(TargetError::Protocol(format!(
                "batch answer with {} results for {} calls",
                results.len(),
                inputs.len()
            )));
        }
        results
            .iter()
            .enumerate()
            .map(|(i, r)| self.call_answer(&format!("{id}.{}", i + 1), r))
            .collect()
    }

    fn shutdown(&mut self) {
        let run_stop = self.run_stop.clone();
        if let Some(p) = self.proc.as_mut() {
            // Half a second to take the request and answer it (or exit), none once the run
            // was stopped; then it is killed.
            let _ = wire::exchange(
                &mut p.stdin,
                &mut p.stdout,
                &mut p.pending,
                b"{\"op\":\"shutdown\"}\n",
                Instant::now() + Duration::from_millis(500),
                self.max_reply,
                &run_stop,
            );
        }
        self.stop();
    }
}
