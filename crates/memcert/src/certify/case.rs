//! One case against a target: whether it can run here, its sandbox and inputs, the reset, the
//! commands turn by turn (with the race running when it has one), and what the disk shows
//! before and after, handed to [`record`].

use std::path::PathBuf;
use std::time::Instant;

use serde_json::Value;

use super::race::Swapper;
use super::snapshots::listed_unchecked;
use super::{black_box_prelude, record, CaseRecord, Config, Snapshots};
use crate::attack::oracle::Observation;
use crate::attack::sandbox::{Sandbox, Tree};
use crate::suite::Case;
use crate::target::Target;

/// Why `case` cannot run in this process, or `None` when it can. A case that plants permission
/// bits ([`Case::needs_unprivileged`]) proves nothing when the harness, and so every handler it
/// starts, runs as root (effective uid 0): permission bits do not bind root.
pub fn skip_reason(case: &Case) -> Option<String> {
    (case.needs_unprivileged() && rustix::process::geteuid().is_root()).then(|| {
        "the harness runs as root (effective uid 0), where permission bits do not bind; run it as \
         another user to test this"
            .to_owned()
    })
}

/// Run one case against a target and judge it. A case this process cannot run
/// ([`skip_reason`]) is SKIPPED without touching the target.
pub fn run_case(case: &Case, target: &mut dyn Target, config: &Config) -> CaseRecord {
    if !config.black_box {
        return run_prepared(case, &case.setup, &[], target, config);
    }
    match black_box_prelude(case) {
        Ok(prelude) => {
            let judged = Case {
                checks: Vec::new(),
                ..case.clone()
            };
            run_prepared(&judged, &[], &prelude, target, config)
        }
        Err(reason) => skipped(case, reason, config),
    }
}

/// The folders outside the sandbox a case watches: the target's scratch HOME and TMPDIR,
/// except in black-box mode, where the handler's store may be there.
fn watched(target: &dyn Target, config: &Config) -> Vec<std::path::PathBuf> {
    if config.black_box {
        Vec::new()
    } else {
        target.watched()
    }
}

/// A case not run, with the reason (graded by the oracle as any skip).
fn skipped(case: &Case, reason: String, config: &Config) -> CaseRecord {
    let obs = Observation {
        skipped: Some(reason),
        ..Observation::default()
    };
    record(case, &[], obs, config, Vec::new(), Instant::now())
}

/// Run a case over a sandbox laid out with `setup`, after sending `prelude` (ungraded set-up
/// commands; a refused one makes the case SKIPPED).
fn run_prepared(
    case: &Case,
    setup: &[crate::suite::Fs],
    prelude: &[Value],
    target: &mut dyn Target,
    config: &Config,
) -> CaseRecord {
    let started = Instant::now();
    let mut obs = Observation::default();
    if let Some(why) = skip_reason(case) {
        obs.skipped = Some(why);
        return record(case, &[], obs, config, Vec::new(), started);
    }
    let sandbox = match Sandbox::create_unchecked(setup) {
        Ok(s) => s,
        Err(e) => {
            obs.replies
                .push(Err(format!("the sandbox could not be laid out: {e}")));
            return record(case, &[], obs, config, Vec::new(), started);
        }
    };
    obs.before_unchecked(&sandbox);
    let inputs = case_inputs(case, &sandbox);
    obs.inputs = inputs.iter().map(strings_of).collect();
    let mut watched_before = Vec::new();
    match target.reset(sandbox.base(), sandbox.root()) {
        Ok(()) => {
            // Taken after the reset, which may (re)start the handler: what a start-up writes to
            // its HOME is not charged to the case.
            watched_before = watched_trees(target, config);
            if let Err(why) = send_prelude(prelude, target) {
                return skipped(case, why, config);
            }
            send_turns(case, &inputs, &sandbox, target, config, &mut obs);
        }
        Err(e) => obs
            .replies
            .push(Err(format!("reset failed: {}", explain(&e, target)))),
    }
    obs.after_unchecked(&sandbox, case);
    observe_watched(&mut obs, &watched(target, config), watched_before);
    record(case, &inputs, obs, config, Vec::new(), started)
}

/// The case's inputs as sent in `sandbox`: `{RUN}` and `{DOWN:d}` filled in ([`instantiate`]).
fn case_inputs(case: &Case, sandbox: &Sandbox) -> Vec<Value> {
    let run = sandbox.run_dir().to_string_lossy();
    let root = sandbox.root().to_string_lossy();
    case.steps
        .iter()
        .map(|s| instantiate(&s.input, run.trim_start_matches('/'), &root))
        .collect()
}

/// Everything under each watched folder ([`watched`]), in that order.
fn watched_trees(target: &dyn Target, config: &Config) -> Vec<Tree> {
    watched(target, config)
        .iter()
        .map(|w| watched_unchecked(w))
        .collect()
}

/// Send the black-box set-up commands, in order.
///
/// # Errors
/// Why the case is SKIPPED: the first command the handler refused or did not answer.
fn send_prelude(prelude: &[Value], target: &mut dyn Target) -> Result<(), String> {
    for input in prelude {
        let refused = match target.call(input) {
            Ok(r) if !r.is_error => None,
            Ok(r) => Some(format!("the handler refused it: {}", r.text())),
            Err(e) => Some(explain(&e, target)),
        };
        if let Some(why) = refused {
            let path = input["path"].as_str().unwrap_or("");
            return Err(format!("black-box set-up: create {path} failed ({why})"));
        }
    }
    Ok(())
}

/// Send the case's commands turn by turn, with the race running when the case has one; stop
/// at the first command that got no answer. Replies (and, when the run takes snapshots, the
/// entries each listing names) go to `obs`.
fn send_turns(
    case: &Case,
    inputs: &[Value],
    sandbox: &Sandbox,
    target: &mut dyn Target,
    config: &Config,
    obs: &mut Observation,
) {
    let snapshot_listings = !matches!(config.snapshots, Snapshots::Off) && !config.black_box;
    let listings = snapshot_listings.then_some(sandbox);
    let swapper = case.race.as_ref().map(|r| {
        Swapper::start_unchecked(
            sandbox.host_unchecked(&r.a),
            sandbox.host_unchecked(&r.b),
            r.max_swaps,
        )
    });
    let mut at = 0;
    for size in case.turn_sizes() {
        let turn = &inputs[at.min(inputs.len())..(at + size).min(inputs.len())];
        at += size;
        if !send_turn(turn, target, listings, obs) {
            break;
        }
    }
    if let Some(s) = swapper {
        obs.race_swaps = Some(s.stop());
    }
}

/// Send one turn: several commands as one batch, one command alone. False when a command got
/// no answer (the case stops there). With `listings`, the entries each answer lists that are
/// directories or links on disk go to `obs.listed`.
fn send_turn(
    turn: &[Value],
    target: &mut dyn Target,
    listings: Option<&Sandbox>,
    obs: &mut Observation,
) -> bool {
    if turn.len() > 1 {
        return match target.call_batch(turn) {
            Ok(rs) => {
                if let Some(sandbox) = listings {
                    obs.listed
                        .extend(rs.iter().map(|r| listed_unchecked(sandbox, r)));
                }
                obs.replies.extend(rs.into_iter().map(Ok));
                true
            }
            Err(e) => {
                obs.replies.push(Err(explain(&e, target)));
                false
            }
        };
    }
    for input in turn {
        match target.call(input) {
            Ok(r) => {
                if let Some(sandbox) = listings {
                    obs.listed.push(listed_unchecked(sandbox, &r));
                }
                obs.replies.push(Ok(r))
            }
            Err(e) => {
                obs.replies.push(Err(explain(&e, target)));
                return false;
            }
        }
    }
    true
}

/// Record the watched folders outside the sandbox in `obs`, before (`before`, one tree per
/// folder of `watched`) and now, each path under the folder's name.
fn observe_watched(obs: &mut Observation, watched: &[PathBuf], before: Vec<Tree>) {
    for (w, before) in watched.iter().zip(before) {
        let name = w
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (rel, node) in before {
            obs.outside_before
                .insert(std::path::Path::new(&name).join(rel), node);
        }
        for (rel, node) in watched_unchecked(w) {
            obs.outside_after
                .insert(std::path::Path::new(&name).join(rel), node);
        }
    }
}

/// Every string value of an input and its escaped rendering (replies may escape control
/// characters of a path, vpath::display_path), longest first, so a longer echo is taken out
/// before a shorter one inside it (`Observation::inputs`).
pub fn strings_of(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for s in crate::protocol::strings_in(v) {
        let shown = crate::vpath::display_path(&s);
        if shown != s {
            out.push(shown);
        }
        out.push(s);
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// A target error with its causes, and the handler's last stderr lines when the error does not
/// carry them already.
fn explain(e: &crate::target::TargetError, target: &dyn Target) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    if !matches!(e, crate::target::TargetError::Exited { .. }) {
        let last = crate::target::last_lines(&target.stderr_tail());
        if !last.is_empty() {
            text.push_str(&format!("; stderr ends with: {last}"));
        }
    }
    text
}

/// Everything under a watched folder.
///
/// # Ambient authority
/// Walks a host folder by path, never following links.
fn watched_unchecked(dir: &std::path::Path) -> crate::attack::sandbox::Tree {
    crate::attack::sandbox::tree_unchecked(dir)
}

/// Fill in the run-time parts of a case input: `{RUN}` becomes the run folder's absolute path
/// without its leading `/` (so `/memories/../../(...)/{RUN}/canary.txt` reaches a canary from any
/// depth), and `{DOWN:d}` the way back down from the d-th ancestor of the store root at `root`
/// (see `attack::payloads::instantiate`).
pub fn instantiate(input: &Value, run: &str, root: &str) -> Value {
    match input {
        Value::String(s) if s.contains("{RUN}") || s.contains("{DOWN:") => Value::String(
            crate::attack::payloads::instantiate(&s.replace("{RUN}", run), root),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| instantiate(v, run, root)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), instantiate(v, run, root)))
                .collect(),
        ),
        other => other.clone(),
    }
}
