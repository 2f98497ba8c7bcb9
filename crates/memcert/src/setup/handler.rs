//! The handler under test, started: memcert's reference handler in-process, or an external one
//! behind the stdio protocol (a Python or Node SDK handler through memcert's adapter, or any
//! program speaking protocol v1).
//!
//! [`start`] starts an external handler at once, so one that cannot start at all is an error
//! before any case runs (the command line exits 2), not a run of ERROR cases.

use std::path::PathBuf;
use std::time::Duration;

use crate::contain::Policy;
use crate::stop::Stop;
use crate::target::{inproc::InProcess, node, python, stdio::Stdio, Target, TargetError};
use crate::text::Profile;

/// Which handler to run cases against.
#[derive(Clone, Debug)]
pub enum HandlerSpec {
    /// memcert's built-in reference handler, in-process, answering in `profile`'s wording.
    Reference(Profile),
    /// A Python SDK handler through memcert's adapter (`memcert certify --python`).
    Python {
        /// `path/to/file.py:ClassName`, `package.module:ClassName` or `file.py:make_handler`.
        spec: String,
        /// Keyword arguments for the constructor or factory: a JSON object, as text; `{base}`
        /// and `{store}` in its strings stand for the case's base and memories folders, and
        /// when one is used `base_path=` is not passed (`--python-init`).
        init: Option<String>,
        /// Module-level attributes to set before each build, `module:ATTR=VALUE` with the same
        /// placeholders (`--python-set`).
        set: Vec<String>,
        /// The interpreter (it must have the `anthropic` package).
        exe: String,
    },
    /// A TypeScript SDK handler through memcert's Node adapter (`memcert certify --node`).
    Node {
        /// `path/to/module.mjs:ExportName`, `module.mjs:makeHandler` or a package subpath.
        spec: String,
        /// The Node interpreter.
        exe: String,
        /// A folder whose `node_modules` holds `@anthropic-ai/sdk`, when the handler's folder
        /// and the current folder do not.
        node_path: Option<PathBuf>,
        /// The build arguments instead of the base folder, as JSON text (an array: the argument
        /// list; else the one argument), with `{base}` and `{store}` placeholders
        /// (`--node-init`).
        init: Option<String>,
    },
    /// A program speaking stdio protocol v1: program and arguments as one line, split like a
    /// POSIX shell splits words (quotes allowed, no expansion).
    Stdio {
        /// The command line.
        command: String,
    },
}

/// A started handler. Fields drop in order: the target (which stops an external handler)
/// before the folder holding its adapter.
pub struct Started {
    /// The handler to run cases against (`Send`: one worker of a parallel run,
    /// `certify::run_parallel`).
    pub target: Box<dyn Target + Send>,
    /// The private scratch folder that holds the adapter script (empty for other handlers);
    /// removed through its handle when dropped.
    pub adapter_dir: crate::scratch::Scratch,
}

/// Why the handler under test could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HandlerError {
    /// The adapter folder or script could not be written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// [`HandlerSpec::Python::init`] is not a JSON object.
    #[error(
        "the Python handler's init arguments must be a JSON object, e.g. '{{\"max_bytes\": 1000}}'"
    )]
    PythonInit,
    /// One [`HandlerSpec::Python::set`] entry is not `module:ATTR=VALUE` (the entry).
    #[error("--python-set {0:?} is not MODULE:ATTR=VALUE")]
    PythonSet(String),
    /// [`HandlerSpec::Node::init`] is not JSON.
    #[error(
        "the Node handler's init arguments must be JSON, e.g. '[{{\"root\": \"{{store}}\"}}]'"
    )]
    NodeInit,
    /// [`HandlerSpec::Stdio::command`] does not split into words (an open quote).
    #[error("cannot split the command line")]
    Split(#[source] shell_words::ParseError),
    /// [`HandlerSpec::Stdio::command`] has no program.
    #[error("the stdio command line is empty")]
    NoCommand,
    /// The external handler did not start (the hello failed); `stderr` is the end of what it
    /// wrote, when the error does not carry it already, else empty.
    #[error("the handler cannot be started{}{}", stderr_note(stderr), hint.map_or(String::new(), |h| format!("\n{h}")))]
    Start {
        /// Why it did not start.
        #[source]
        source: TargetError,
        /// Its stderr, trimmed; empty when none or already in `source`.
        stderr: String,
        /// When it ran contained and the error looks like a refusal of the sandbox
        /// ([`crate::contain::looks_denied`]): [`crate::contain::SANDBOX_HINT`].
        hint: Option<&'static str>,
    },
}

fn stderr_note(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; its stderr:\n{stderr}")
    }
}

/// Start the handler `spec` describes, each call (and reset) of an external one limited to
/// `timeout` and each of its answers to `max_reply_bytes` (`--max-reply-bytes`; see
/// `target::stdio`), every wait for it ended by `stop`, contained as far as the kernel allows
/// ([`start_contained`] with the default [`Policy`]). When `stop` fires during the start, the
/// handler is returned unstarted (the run then reports its cases as stopped).
///
/// # Errors
/// [`HandlerError`]: the adapter cannot be written, the spec is malformed, or the handler does
/// not start.
pub fn start(
    spec: &HandlerSpec,
    timeout: Duration,
    stop: &Stop,
    max_reply_bytes: usize,
) -> Result<Started, HandlerError> {
    start_contained(spec, timeout, stop, max_reply_bytes, &Policy::default())
}

/// [`start`] with an external handler contained under `policy` ([`crate::contain`]); an
/// in-process handler cannot be contained.
///
/// # Errors
/// As [`start`].
pub fn start_contained(
    spec: &HandlerSpec,
    timeout: Duration,
    stop: &Stop,
    max_reply_bytes: usize,
    policy: &Policy,
) -> Result<Started, HandlerError> {
    let mut started = spawn_contained(spec, timeout, stop, max_reply_bytes, policy)?;
    started.finish_start(policy.enabled)?;
    Ok(started)
}

impl Started {
    /// Exchange hello with a handler [`spawn_contained`] started (nothing for one that is
    /// ready, or one whose start a stop cut short).
    ///
    /// # Errors
    /// As [`start_contained`]'s start-up errors, the handler's stderr and the sandbox hint
    /// included.
    pub fn finish_start(&mut self, contained: bool) -> Result<(), HandlerError> {
        match self.target.finish_start() {
            Ok(()) | Err(TargetError::Stopped(_)) => Ok(()),
            Err(source) => Err(start_error(source, &self.target.stderr_tail(), contained)),
        }
    }
}

/// [`start_contained`] without waiting for the handler: its process is started, and hello
/// is exchanged by [`Started::finish_start`]. A pool of handlers that load slowly (an
/// interpreter importing its SDK) loads in parallel: spawn every one, then finish each.
///
/// # Errors
/// As [`start_contained`], but for what only hello shows ([`Started::finish_start`]).
pub fn spawn_contained(
    spec: &HandlerSpec,
    timeout: Duration,
    stop: &Stop,
    max_reply_bytes: usize,
    policy: &Policy,
) -> Result<Started, HandlerError> {
    let stdio = |cmd| {
        Stdio::new(cmd, timeout)
            .max_reply_bytes(max_reply_bytes)
            .stoppable(stop)
            .contained(policy.clone())
    };
    let start_now = |s: Stdio| spawned(s, policy.enabled);
    let adapter_dir = crate::scratch::Scratch::new("memcert-adapter-")?;
    let target: Box<dyn Target + Send> = match spec {
        HandlerSpec::Python {
            spec,
            init,
            set,
            exe,
        } => {
            let mut cmd = python::adapter_command(&adapter_dir, exe, spec)?;
            if let Some(init) = init {
                match serde_json::from_str::<serde_json::Value>(init) {
                    Ok(serde_json::Value::Object(_)) => {}
                    _ => return Err(HandlerError::PythonInit),
                }
                cmd.arg("--init").arg(init);
            }
            for entry in set {
                if !is_module_set(entry) {
                    return Err(HandlerError::PythonSet(entry.clone()));
                }
                cmd.arg("--set").arg(entry);
            }
            let name = format!("python adapter, {exe}");
            Box::new(start_now(stdio(cmd).named(name))?)
        }
        HandlerSpec::Node {
            spec,
            exe,
            node_path,
            init,
        } => {
            let mut cmd = node::adapter_command(&adapter_dir, exe, spec, node_path.as_deref())?;
            if let Some(init) = init {
                if serde_json::from_str::<serde_json::Value>(init).is_err() {
                    return Err(HandlerError::NodeInit);
                }
                cmd.arg("--init").arg(init);
            }
            let name = format!("node adapter, {exe}");
            Box::new(start_now(stdio(cmd).named(name))?)
        }
        HandlerSpec::Stdio { command: line } => {
            let words = shell_words::split(line).map_err(HandlerError::Split)?;
            let Some((program, rest)) = words.split_first() else {
                return Err(HandlerError::NoCommand);
            };
            let mut cmd = std::process::Command::new(program);
            cmd.args(rest);
            Box::new(start_now(stdio(cmd).named(format!("stdio: {line}")))?)
        }
        HandlerSpec::Reference(profile) => Box::new(InProcess::reference(*profile)),
    };
    Ok(Started {
        target,
        adapter_dir,
    })
}

/// Whether `entry` has the shape `module:ATTR=VALUE`: a dotted module name of identifiers, an
/// identifier, `=`, and any value (empty allowed).
fn is_module_set(entry: &str) -> bool {
    let Some((target, _value)) = entry.split_once('=') else {
        return false;
    };
    let Some((module, attr)) = target.split_once(':') else {
        return false;
    };
    let ident = |s: &str| {
        let mut chars = s.chars();
        chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
            && chars.all(|c| c == '_' || c.is_alphanumeric())
    };
    module.split('.').all(ident) && ident(attr)
}

/// Start an external handler's process now (hello comes with [`Started::finish_start`]), so
/// one that cannot be started at all ends the run before it begins; one whose start a stop cut
/// short is returned unstarted. `contained`: whether it runs in memcert's sandbox (a start-up
/// error that looks like a refusal then gets [`crate::contain::SANDBOX_HINT`]).
fn spawned(mut s: Stdio, contained: bool) -> Result<Stdio, HandlerError> {
    match s.spawn() {
        Ok(()) | Err(TargetError::Stopped(_)) => Ok(s),
        Err(source) => Err(start_error(source, &s.stderr_tail(), contained)),
    }
}

/// The error of a handler that could not start: `source`, the handler's stderr (`tail`)
/// unless an exit carries it already, and the sandbox hint when it looks like the sandbox
/// refused it.
fn start_error(source: TargetError, tail: &str, contained: bool) -> HandlerError {
    let tail = tail.trim();
    // An exit already carries its stderr; other errors get it appended.
    let stderr = if tail.is_empty() || matches!(source, TargetError::Exited { .. }) {
        String::new()
    } else {
        tail.to_owned()
    };
    let denied = crate::contain::looks_denied(tail)
        || crate::contain::looks_denied(&format!("{source} {:?}", source));
    let hint = (contained && denied).then_some(crate::contain::SANDBOX_HINT);
    HandlerError::Start {
        source,
        stderr,
        hint,
    }
}
