//! [`differential`]: a `cargo fuzz` target over a Rust user's own [`Handler`], judged as
//! `memcert fuzz` judges a handler ([`super::search`]): fuzz bytes decoded into a command
//! sequence over a planted layout, planned against the documented model, run as a catalog case,
//! graded as `certify` grades one, and a FAIL or UNSAFE divergence shrunk and told in a panic.
//!
//! # Speed
//! One sandbox is kept per process (reset by undo, [`crate::certify::Lane`]): per input the
//! store is emptied and planted, the commands sent inside an inotify window on the outside, and
//! the store walked for the checks. An input whose replies take an accepted branch (an
//! overwrite, a refused unusual name) runs once more per branch. On the reference handler,
//! about 300 inputs a second without a sanitizer, 80 with the address sanitizer and debug
//! assertions (fuzz/README.md).
//!
//! # Ambient authority
//! The scratch folder the sandboxes are made in is made by host path, in the folder
//! [`crate::attack::sandbox::default_parent`] picks (`/dev/shm` when it has room); the
//! sandboxes themselves are laid out, reset and read through handles.
//!
//! # Non-guarantees
//! - The handler runs in this process with its rights: nothing contains it (certify untrusted
//!   code as a process: `memcert fuzz --stdio`).
//! - No black-box mode: the handler must keep its files in the folder it is made over (a
//!   handler over a database: `memcert fuzz --memory-dir-unknown` behind the stdio protocol).
//! - A handler that keeps state outside the value `make` returns (a global cache) carries it
//!   from one case to the next, where the model does not expect it.
//! - Decoded inputs are not bounded: a path may take any number of `..` steps or raw
//!   spellings, so a handler with a traversal flaw can be driven above the
//!   sandbox, to wherever this process may write. Fuzz such a handler as a process, contained.

use std::path::Path;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use super::search::{Checked, Found, Fuzzer};
use super::sequence::Sequence;
use crate::certify::{CaseRecord, Config, Lane, Startup};
use crate::handler::Handler;
use crate::protocol::ToolResult;
use crate::scratch::Scratch;
use crate::target::{Target, TargetError};

/// Most judged runs the shrink of one finding may take (as `memcert fuzz`'s default).
pub const SHRINK_BUDGET: usize = 400;

/// Start of the scratch folder's name: `memcert-diff-<pid>-XXXXXX`.
const STALE_PREFIX: &str = "memcert-diff-";

/// Fuzz a Rust [`Handler`] against the documented model: the body of a `cargo fuzz` target.
///
/// ```ignore
/// #![no_main]
/// use memcert::fuzz::differential;
/// libfuzzer_sys::fuzz_target!(|data: &[u8]| differential(my_crate::MyHandler::open, data));
/// ```
///
/// - `make` builds a fresh handler over the store folder memcert made for one case (an
///   existing, private folder that `/memories` maps to, already holding the planted layout):
///   `Ok(handler)`, or an error, which panics (below). It is called once per case run, several
///   times per input when branches are followed or a finding is shrunk; the previous handler is
///   dropped first. It is the handler's constructor, not [`Handler::reset`], which is not
///   called.
/// - `data`, the fuzzer's bytes, is decoded with `arbitrary` into a
///   [`Sequence`](super::sequence::Sequence): which items of the planted
///   [`LAYOUT`](super::sequence::LAYOUT) the store holds (files, a folder, links inside, outside
///   and dangling, a FIFO, a hard link to an outside canary, a file over the size limit; the
///   search's own character device 1:5 where one can be planted, and a link under an NFD
///   name: [`super::search::plan::DEVICE_BIT`]) and up
///   to [`MAX_COMMANDS`](super::sequence::MAX_COMMANDS) (16) commands. Bytes that do not decode
///   are skipped. Needs the `arbitrary` feature.
///
/// # What counts as a divergence
/// The sequence is planned as a catalog case whose expectations come from the model
/// ([`super::search::plan`]) and run in a sandbox with canaries around the store; the case is
/// graded as `memcert certify` grades one. A **divergence**, which panics, is a case graded:
/// - FAIL: a reply with another meaning than the model's (success where the model refuses,
///   an error where it succeeds, another file text or listing), or a store that differs from
///   the model's tree at the end;
/// - UNSAFE: anything outside the store read or changed (while `make` builds the handler too),
///   a canary or a host path in a reply.
///
/// Not a divergence (NON-STRICT, returns normally): other wording of the same meaning (the
/// replies are graded in profile `docs`; an SDK's wording is NON-STRICT), an error for another
/// reason than the model's, and the accepted branches the model then follows (`create`
/// overwriting a file, a refusal of a name outside `A-Za-z0-9._-` or of a planted link, a
/// spelling the model refuses taken as a name: [`super::search::plan`]).
///
/// # Panics
/// - On a divergence, after shrinking the input (at most [`SHRINK_BUDGET`] runs), with a short
///   story: `memcert differential: <VERDICT> <kind>[ (the model: <class>; the handler:
///   success|error)]`, a line with the command counts, the planted layout, each command with
///   the model's reply and the handler's (`model:` / `handler:`), and the findings.
/// - When the case cannot be run (ERROR): `make` failed (`memcert differential: ERROR: reset
///   failed: the handler could not be made over its store: <its error>`), or the sandbox could
///   not be laid out.
/// - When memcert's scratch folder cannot be made, or when the handler itself panics.
#[cfg(feature = "arbitrary")]
pub fn differential<H, E, F>(make: F, data: &[u8])
where
    H: Handler,
    E: std::fmt::Display,
    F: FnMut(&Path) -> Result<H, E>,
{
    if let Some(seq) = super::sequence::decode(data) {
        differential_value(make, &seq);
    }
}

/// [`differential`] for a decoded sequence (its `profile` is ignored: replies are graded in
/// profile `docs`, by meaning).
///
/// # Panics
/// As [`differential`].
pub fn differential_value<H, E, F>(mut make: F, seq: &Sequence)
where
    H: Handler,
    E: std::fmt::Display,
    F: FnMut(&Path) -> Result<H, E>,
{
    // The lane is taken out while the case runs: a handler that panics drops it (and its
    // sandbox) instead of poisoning it.
    let lane = std::mem::take(&mut *kept_lane().lock().unwrap_or_else(|e| e.into_inner()));
    let config = Config {
        race_rounds: Some(1),
        ..Config::default()
    };
    let mut target = Made {
        make: &mut make,
        handler: None,
        scratch: scratch(),
    };
    let mut fuzzer = Fuzzer::with_lane(&mut target, &config, Startup::default(), lane);
    let checked = fuzzer.check(seq, SHRINK_BUDGET);
    let lane = fuzzer.into_lane();
    *kept_lane().lock().unwrap_or_else(|e| e.into_inner()) = lane;
    match checked {
        Checked::Clean => {}
        Checked::Found(f) => panic!("{}", story(&f)),
        Checked::Error(r) => panic!("memcert differential: ERROR: {}", why(&r)),
    }
}

/// The panic text of a finding: its cause, the command counts, then [`Found::story`].
fn story(f: &Found) -> String {
    let mut lines = vec![
        format!("memcert differential: {}", f.cause),
        counts(f.plan.case.steps.len(), f.unshrunk_commands, f.shrink_cut),
    ];
    lines.extend(f.story());
    lines.join("\n")
}

/// The story's second line: `n` commands, shrunk from `unshrunk`, and whether the shrink
/// stopped at [`SHRINK_BUDGET`] (`cut`: the input may shrink further).
fn counts(n: usize, unshrunk: usize, cut: bool) -> String {
    format!(
        "  {n} command{} (shrunk from {unshrunk}{}); each with the model's reply and the handler's:",
        if n == 1 { "" } else { "s" },
        if cut {
            format!("; shrinking stopped at its budget of {SHRINK_BUDGET} runs")
        } else {
            String::new()
        }
    )
}

/// Why an ERROR or SKIPPED case did not run: its first step's error, else its findings.
fn why(r: &CaseRecord) -> String {
    if let Some(e) = r.steps.iter().find_map(|s| s.error.as_deref()) {
        return e.to_owned();
    }
    let findings: Vec<String> = r
        .findings
        .iter()
        .map(|f| format!("{} {}: {}", f.verdict, f.kind, f.detail))
        .collect();
    findings.join("; ")
}

/// The sandbox kept from one input to the next.
fn kept_lane() -> &'static Mutex<Lane> {
    static LANE: OnceLock<Mutex<Lane>> = OnceLock::new();
    LANE.get_or_init(Mutex::default)
}

/// The folder the sandboxes are made in, made on first use and named after the process
/// (`memcert-diff-<pid>-XXXXXX`): libFuzzer exits without destructors, so the folders of
/// processes that are gone are removed first.
///
/// # Panics
/// When it cannot be made.
fn scratch() -> &'static Path {
    static SCRATCH: OnceLock<Scratch> = OnceLock::new();
    SCRATCH
        .get_or_init(|| {
            let parent = crate::attack::sandbox::default_parent();
            crate::scratch::remove_stale(parent, STALE_PREFIX);
            let prefix = format!("{STALE_PREFIX}{}-", std::process::id());
            Scratch::new_in(parent, &prefix).unwrap_or_else(|e| {
                panic!(
                    "memcert differential: cannot make a scratch folder in {}: {e}",
                    parent.display()
                )
            })
        })
        .path()
}

/// The target over `make`'s handlers: a fresh one per case, over the case's store.
struct Made<'m, H, F> {
    make: &'m mut F,
    handler: Option<H>,
    scratch: &'static Path,
}

impl<H, E, F> Target for Made<'_, H, F>
where
    H: Handler,
    E: std::fmt::Display,
    F: FnMut(&Path) -> Result<H, E>,
{
    fn describe(&self) -> String {
        "Rust handler (memcert::fuzz::differential)".into()
    }

    fn reset(&mut self, _base_dir: &Path, memories_dir: &Path) -> Result<(), TargetError> {
        self.handler = None;
        let h = (self.make)(memories_dir).map_err(|e| {
            TargetError::Protocol(format!("the handler could not be made over its store: {e}"))
        })?;
        self.handler = Some(h);
        Ok(())
    }

    fn call(&mut self, input: &Value) -> Result<ToolResult, TargetError> {
        match self.handler.as_mut() {
            Some(h) => Ok(h.apply(input)),
            None => Err(TargetError::Protocol(
                "call before a successful reset".into(),
            )),
        }
    }

    fn scratch(&self) -> Option<&Path> {
        Some(self.scratch)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_story_says_when_the_shrink_stopped_at_its_budget() {
        assert_eq!(
            super::counts(1, 3, false),
            "  1 command (shrunk from 3); each with the model's reply and the handler's:"
        );
        assert_eq!(
            super::counts(5, 9, true),
            "  5 commands (shrunk from 9; shrinking stopped at its budget of 400 runs); each with the model's reply and the handler's:"
        );
    }
}
