//! The shipped transcripts (`fixtures/transcripts/`) graded by the stdio certifier: each
//! `Transcript::to_case()` runs against the stock SDK handlers behind their adapters, and every
//! verdict is asserted exactly. `tests/mockapi` runs a bounded set of the same transcripts
//! through the real SDK tool runners (`memcert certify --app`, four modes per SDK) and checks
//! that the two certifiers agree case by case and step by step;
//! `binary_certifies_the_python_sdk_app` there runs the others once. New transcript-level tests go here; whole-app runs go in
//! `tests/mockapi`.
//!
//! Where the two could differ, and why they do not for the shipped transcripts:
//! - Concurrency. The TypeScript runner runs one turn's calls concurrently; its adapter does
//!   the same with each turn of several calls, which `to_case` keeps (`Case::turns`):
//!   `one-turn-dependent` is NON-STRICT both ways.
//! - Error rendering. Both adapters render a thrown error as their runner does (`repr(exc)`
//!   or a `ToolError`'s text for Python, `Error: ` + message for TypeScript), so replies match
//!   byte for byte, except where they echo a host path from `{RUN}`.

#[path = "../common/mod.rs"]
mod common;
use common::*;

use std::collections::BTreeMap;

use memcert::suite::verdict::Verdict;
use memcert::target::Target;
use memcert::text::Profile;
use memcert_app::transcript::Transcript;

fn stdio_verdicts(target: &mut dyn Target, profile: Profile) -> BTreeMap<String, Verdict> {
    let cases: Vec<_> = Transcript::builtin()
        .iter()
        .map(Transcript::to_case)
        .collect();
    run_cases(target, profile, &cases)
        .into_iter()
        .map(|r| (r.id, r.verdict))
        .collect()
}

/// The Python SDK handler: the table of `common::transcript_verdicts`, which the Python app
/// gives too (`tests/mockapi`).
#[test]
fn python_sdk_handler_over_stdio() {
    let (_dir, mut t) = sdk_target(Profile::PythonSdk);
    assert_eq!(
        stdio_verdicts(&mut t, Profile::PythonSdk),
        transcript_verdicts(Profile::PythonSdk)
    );
}

/// The TypeScript SDK handler: as Python, except that one turn's create and view of the same
/// file run concurrently (the adapter's batch, like the runner's `Promise.all`): the view
/// answers "does not exist", NON-STRICT.
#[test]
fn typescript_sdk_handler_over_stdio() {
    let (_dir, mut t) = sdk_target(Profile::TypescriptSdk);
    let verdicts = stdio_verdicts(&mut t, Profile::TypescriptSdk);
    assert_eq!(verdicts, transcript_verdicts(Profile::TypescriptSdk));
}
