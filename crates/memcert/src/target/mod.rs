//! How the certifier reaches a handler under test.
//!
//! A [`Target`] gets a fresh handler over a fresh directory before each case ([`Target::reset`])
//! and answers commands ([`Target::call`]). A failure to get an answer is a [`TargetError`]: the
//! case is ERROR, never FAIL, so a broken harness is told apart from a broken handler; the one
//! exception is an answer over the read cap ([`TargetError::ReplyTooLarge`], or its size alone:
//! [`TargetError::ReplyTooLargeUnsent`]), which the handler chose to send, and which is FAIL
//! (`bug:B17`).
//!
//! - [`inproc::InProcess`]: any [`crate::handler::Handler`] built by a closure, in this process
//!   (the built-in reference handler is one);
//! - [`stdio::Stdio`]: a handler process speaking stdio protocol v1 (`docs/protocol.md`);
//! - [`python::adapter_command`]: a Python `BetaAbstractMemoryTool` subclass behind the
//!   embedded adapter, over [`stdio::Stdio`];
//! - [`node::adapter_command`]: a TypeScript SDK memory handler behind the embedded Node
//!   adapter, over [`stdio::Stdio`].

pub mod inproc;
pub mod node;
pub mod python;
pub mod stdio;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::protocol::ToolResult;

/// The last five non-empty lines of a handler's (or app's) stderr, joined with ` | `: the
/// one-line tail reports quote.
pub fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

/// Why a target gave no answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// The handler process could not be started.
    #[error("cannot start the handler `{command}`")]
    Spawn {
        /// The command line.
        command: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The handler refused the hello or reset, or broke the protocol.
    #[error("{0}")]
    Protocol(String),
    /// No answer within the time limit; the process was killed.
    #[error("no answer within {0:?}; the handler was stopped and will be restarted")]
    Timeout(Duration),
    /// The process exited.
    #[error("the handler exited ({status}); stderr ends with: {stderr}")]
    Exited {
        /// Exit status in words.
        status: String,
        /// Last lines of its stderr.
        stderr: String,
    },
    /// An answer longer than the read cap (`--max-reply-bytes`): its bytes were dropped and the
    /// handler was stopped. The case is FAIL (`bug:B17`), not ERROR: a handler must bound what
    /// it answers.
    #[error("unbounded reply: more than {limit} bytes; the handler was stopped and will be restarted (it began: {head})")]
    ReplyTooLarge {
        /// The read cap, in bytes.
        limit: usize,
        /// The answer's first bytes (up to 200 characters), lossily decoded.
        head: String,
    },
    /// The handler answered a call with `{"id": ID, "too_large": bytes}` (`docs/protocol.md`):
    /// its answer line would have been `bytes` bytes, more than the read cap `limit` it was
    /// given in `hello`, so it sent only that size. Graded as [`TargetError::ReplyTooLarge`]
    /// (FAIL, `bug:B17`), but the process is kept: memcert's adapters answer so, and a handler
    /// that views a 64 MiB file is not restarted for the next case.
    #[error("unbounded reply: more than {limit} bytes; the handler said its answer was {bytes} bytes and sent only that")]
    ReplyTooLargeUnsent {
        /// The read cap, in bytes.
        limit: usize,
        /// The length of the answer line the handler did not send, as it said (more than `limit`).
        bytes: u64,
    },
    /// The handler read more than `limit` bytes for one call (its `/proc/<pid>/io` read count,
    /// [`Target::read_bytes`]) before it answered: memcert stopped waiting and stopped it. The
    /// case is FAIL (`bug:B17`, unbounded read), not ERROR.
    #[error("unbounded read: the handler read more than {limit} bytes for one call; the handler was stopped and will be restarted")]
    UnboundedRead {
        /// The bound, in bytes (16 MiB).
        limit: u64,
    },
    /// A line that is not a JSON answer.
    #[error("the handler answered with a line that is not protocol JSON: {0}")]
    BadJson(String),
    /// An I/O error on the harness side.
    #[error("harness I/O error")]
    Io(#[from] std::io::Error),
    /// The run stopped (a signal, its deadline) while waiting for the handler; the handler's
    /// process tree was killed.
    #[error("no answer: {0}")]
    Stopped(crate::stop::StopReason),
}

/// Something the certifier can run cases against.
pub trait Target {
    /// One line naming the handler, for reports.
    fn describe(&self) -> String;

    /// Start over with a fresh handler whose store root is `memories_dir` (= `base_dir/memories`).
    ///
    /// # Errors
    /// [`TargetError`] when no handler can be made; the case is ERROR.
    fn reset(&mut self, base_dir: &Path, memories_dir: &Path) -> Result<(), TargetError>;

    /// The time limit for one answer (`--timeout`), when the target has one: a refusal to
    /// start counts as one only when it came within it (`certify`).
    fn timeout(&self) -> Option<std::time::Duration> {
        None
    }

    /// Send one `tool_use` input and wait for the `tool_result`.
    ///
    /// # Errors
    /// [`TargetError`] when no answer came; the case is ERROR.
    fn call(&mut self, input: &Value) -> Result<ToolResult, TargetError>;

    /// Send the `tool_use` inputs of one assistant turn together, as a tool runner does (the
    /// TypeScript runner runs them concurrently, the Python runner in order); the replies come
    /// in input order. The default sends them one by one, in order.
    ///
    /// # Errors
    /// As [`Target::call`], for the first call that gets no answer.
    fn call_batch(&mut self, inputs: &[Value]) -> Result<Vec<ToolResult>, TargetError> {
        inputs.iter().map(|i| self.call(i)).collect()
    }

    /// Host folders this handler may not write to either (an external handler's HOME and
    /// TMPDIR): the runner compares them before and after each case like the sandbox outside
    /// the root. Walked through the scratch folders' handles.
    fn watched(&self) -> Vec<&crate::scratch::Scratch> {
        Vec::new()
    }

    /// The folder the runner makes each case's sandbox in (an external handler's scratch root,
    /// the only place it may write); `None`: the default temp folder.
    fn scratch(&self) -> Option<&Path> {
        None
    }

    /// The containment the handler runs under, for reports. The default is that of an
    /// in-process handler: none (in-process Rust handlers cannot be contained).
    fn containment(&self) -> crate::contain::Containment {
        crate::contain::Containment::in_process()
    }

    /// Whether the handler keeps root's rights over files, so that permission bits do not bind
    /// it ([`crate::contain::Containment::privileged`]): the cases that plant them are SKIPPED
    /// (`certify::skip_reason_for`). The default asks [`Target::containment`].
    fn handler_is_root(&self) -> bool {
        self.containment().privileged
    }

    /// The decoy credential files of the handler's HOME, each as its label (`~/.ssh/id_ed25519`)
    /// and an `O_PATH` handle opened through the HOME's handle with no link followed: the
    /// runner watches them while each case runs (`attack::watch`), and an open, a read or a
    /// write of one is UNSAFE (`credential-read`). Empty (the default) for in-process handlers,
    /// which have no HOME of their own.
    fn decoys(&self) -> Vec<(std::path::PathBuf, std::os::fd::OwnedFd)> {
        Vec::new()
    }

    /// Canary tokens planted where credentials are looked for (the decoy HOME, canary
    /// environment values): one in a reply shows the handler read credentials.
    fn canaries(&self) -> Vec<String> {
        Vec::new()
    }

    /// How many bytes the handler's processes have read so far, when the target can tell: for a
    /// handler process, the `rchar` counts of `/proc/<pid>/io` summed over it and the processes
    /// it had started when it said hello (a wrapper, an interpreter). The runner reads it around
    /// each call: a call that read more than 16 MiB is FAIL (`bug:B17`, unbounded read). `None`
    /// (the default: in-process handlers) makes the runner measure the reply's length instead.
    fn read_bytes(&self) -> Option<u64> {
        None
    }

    /// The last bytes the handler wrote to stderr (external handlers), for ERROR reasons.
    fn stderr_tail(&self) -> String {
        String::new()
    }

    /// Stop the handler (end of run).
    fn shutdown(&mut self) {}

    /// Finish a start that was begun without waiting for the handler (a process spawned but not
    /// yet greeted: `setup::handler::spawn_contained`); nothing for a target that is ready.
    ///
    /// # Errors
    /// As the start itself: the handler refused hello, exited, or did not answer in time.
    fn finish_start(&mut self) -> Result<(), TargetError> {
        Ok(())
    }

    /// End every wait for the handler when `stop` fires ([`TargetError::Stopped`]); called by
    /// the runner before the first case. A target that never waits ignores it.
    fn set_stop(&mut self, _stop: &crate::stop::Stop) {}
}

#[cfg(test)]
mod tests {
    #[test]
    fn last_lines_keeps_the_last_five_non_empty_lines() {
        assert_eq!(
            super::last_lines("a\n\nb\nc\n  \nd\ne\nf\n"),
            "b | c | d | e | f"
        );
        assert_eq!(super::last_lines("only\n"), "only");
        assert_eq!(super::last_lines(""), "");
    }
}
