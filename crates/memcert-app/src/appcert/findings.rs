//! What an app run says beyond its graded replies, as findings: why a reply did not come, how
//! the app dealt with injected faults, processes that escaped it, faults never delivered,
//! `context_management`, malformed requests, how it ended after the conversation, and the
//! mock's notes.

use std::time::Duration;

use memcert::attack::oracle::Finding;
use memcert::protocol::ToolResult;
use memcert::suite::verdict::Verdict;

use super::supervise::Supervised;
use super::{AppConfig, Ending};
use crate::mockapi::{Fault, SessionLog};

/// What one transcript's run left, for the findings beyond the graded replies.
pub(super) struct Outcome<'a> {
    /// What the mock saw.
    pub(super) log: &'a SessionLog,
    /// How the app ended, what escaped it, its stderr.
    pub(super) ran: &'a Supervised,
    /// Why a tool_result the transcript expects did not come ([`why_missing`]).
    pub(super) missing: &'a str,
    /// The transcript's memory calls.
    pub(super) calls: usize,
    /// The replies graded, in order, up to the first that did not come.
    pub(super) replies: &'a [Result<ToolResult, String>],
}

impl Outcome<'_> {
    /// A fault was delivered: the conversation may have ended early.
    fn faulted(&self) -> bool {
        !self.log.faults.is_empty()
    }
}

/// The findings beyond the graded replies, in report order; `turns` is the transcript's.
pub(super) fn extra(app: &AppConfig, turns: usize, o: &Outcome) -> Vec<Finding> {
    let mut extra = Vec::new();
    if o.faulted() {
        extra.extend(fault_findings(o));
    }
    if o.ran.escaped > 0 {
        extra.push(escaped(o.ran.escaped));
    }
    extra.extend(undelivered(&app.faults, turns));
    extra.extend(context(o.log, app.config.strict));
    extra.extend(malformed(o.log));
    extra.extend(ending(o, app.timeout));
    extra.extend(notes(o.log));
    extra
}

/// After an injected fault: the calls never made (not graded, so they must not let the run
/// certify, unless the case already fails), then how the app dealt with the fault.
fn fault_findings(o: &Outcome) -> Vec<Finding> {
    let mut extra = Vec::new();
    let f = fault_finding(o.log, &o.ran.ending, o.missing, &o.ran.stderr);
    let unreached = o.calls - o.replies.len();
    if unreached > 0 {
        extra.push(Finding {
            verdict: if f.verdict >= Verdict::Fail {
                Verdict::Skipped
            } else {
                Verdict::Error
            },
            kind: "not-reached".into(),
            detail: format!(
                "{unreached} of {} memory call(s) were never made after the injected fault, so they are not graded; certify without --inject, or with the fault at a later turn, to grade them",
                o.calls
            ),
        });
    }
    extra.push(f);
    extra
}

/// Processes the app started that left its process group and were killed after it.
fn escaped(escaped: usize) -> Finding {
    Finding {
        verdict: Verdict::Info,
        kind: "app-children".into(),
        detail: format!("{escaped} process(es) the app started had left its process group (setsid or a new session) and were still running after it; memcert killed them"),
    }
}

/// Faults at a turn the transcript does not have.
fn undelivered(faults: &[Fault], turns: usize) -> Vec<Finding> {
    faults
        .iter()
        .filter(|f| f.turn() > turns)
        .map(|f| Finding {
            verdict: Verdict::Info,
            kind: "fault-not-delivered".into(),
            detail: format!(
                "--inject {f}: this transcript has {turns} turn(s), so the fault was never delivered"
            ),
        })
        .collect()
}

/// The mock's findings about `context_management`; a broken rule FAILs when `strict`.
fn context(log: &SessionLog, strict: bool) -> Vec<Finding> {
    log.context
        .iter()
        .map(|c| Finding {
            verdict: match c.verdict {
                Verdict::NonStrict if strict => Verdict::Fail,
                v => v,
            },
            kind: "context-management".into(),
            detail: c.detail.clone(),
        })
        .collect()
}

/// Requests the mock refused.
fn malformed(log: &SessionLog) -> Vec<Finding> {
    log.malformed
        .iter()
        .map(|m| Finding {
            verdict: Verdict::Error,
            kind: "malformed-request".into(),
            detail: format!("the app sent a request the mock refused: {m}"),
        })
        .collect()
}

/// After the final turn: the app must exit 0 within the time limit. Without it (and without a
/// fault): every tool_result came, but the final turn was never asked for.
fn ending(o: &Outcome, timeout: Duration) -> Option<Finding> {
    if o.log.finished {
        match &o.ran.ending {
            Ending::Exited(s) if !s.success() => Some(Finding {
                verdict: Verdict::Error,
                kind: "app-exit".into(),
                detail: format!(
                    "the app {} after the final turn{}",
                    status_words(s),
                    stderr_words(&o.ran.stderr)
                ),
            }),
            Ending::TimedOut => Some(Finding {
                verdict: Verdict::Error,
                kind: "app-timeout".into(),
                detail: format!(
                    "the app was still running {timeout:?} after start, although the conversation had ended; its process group was killed"
                ),
            }),
            _ => None,
        }
    } else if !o.faulted() && o.replies.iter().all(Result::is_ok) {
        Some(Finding {
            verdict: Verdict::Error,
            kind: "no-final-turn".into(),
            detail: o.missing.to_owned(),
        })
    } else {
        None
    }
}

/// The mock's conformance notes.
fn notes(log: &SessionLog) -> Vec<Finding> {
    log.notes
        .iter()
        .map(|n| Finding {
            verdict: Verdict::Info,
            kind: "wire".into(),
            detail: n.clone(),
        })
        .collect()
}

/// A hint for an app whose requests all went astray: the mock got none for the session, but
/// some it does not serve.
pub(super) fn stray_hint(log: &SessionLog, stray: &[String]) -> String {
    if log.requests == 0 && !stray.is_empty() {
        format!(
            "; the mock got {} request(s) it does not serve, e.g. `{}`: is ANTHROPIC_BASE_URL used as given?",
            stray.len(),
            stray[0]
        )
    } else {
        String::new()
    }
}

/// How the app dealt with the injected faults (wire:5, spec:6): finishing anyway is
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
pub(super) fn why_missing(
    ending: &Ending,
    log: &SessionLog,
    timeout: Duration,
    stderr: &str,
) -> String {
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
