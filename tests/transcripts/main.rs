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
//!   the same with a batch case, which `to_case` makes of a transcript whose calls all sit in
//!   one turn (`one-turn-dependent`: NON-STRICT both ways). A transcript of several turns runs
//!   its calls one by one over stdio, which matches the runner only while each turn's calls are
//!   independent (`two-tool-uses`, the only such transcript, keeps them independent).
//! - Error rendering. Both adapters render a thrown error as their runner does (`repr(exc)`
//!   or a `ToolError`'s text for Python, `Error: ` + message for TypeScript), so replies match
//!   byte for byte, except where they echo a host path from `{RUN}`.

#[path = "../common/mod.rs"]
mod common;
use common::*;

use std::collections::BTreeMap;
use std::time::Duration;

use memcert::suite::verdict::Verdict;
use memcert::target::Target;
use memcert::text::Profile;
use memcert::transcript::Transcript;

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

/// Every shipped transcript with the Python SDK handler: NON-STRICT for the `/memories` prefix
/// without a separator (§3 P-1), INFO for backslash and percent-encoded names taken literally
/// inside the store (B19, B21), as the catalog grades them. The Python app gives the same table
/// (`tests/mockapi`, `PYTHON_SDK_ALL`), in all four modes when run by hand (docs/transcripts.md).
const PYTHON_SDK: [(&str, Verdict); 15] = [
    ("app/create-edit-insert-view", Verdict::Pass),
    ("app/create-view", Verdict::Pass),
    ("app/delete-file-and-folder", Verdict::Pass),
    ("app/edit-steps", Verdict::Pass),
    ("app/insert-top-and-end", Verdict::Pass),
    ("app/one-turn-dependent", Verdict::Pass),
    ("app/one-turn-independent", Verdict::Pass),
    ("app/prefix-confusion", Verdict::NonStrict),
    ("app/rename-steps", Verdict::Pass),
    ("app/str-replace-refused", Verdict::Pass),
    ("app/symlink-outside", Verdict::Pass),
    ("app/traversal-refused", Verdict::Pass),
    ("app/traversal-variants", Verdict::Info),
    ("app/two-tool-uses", Verdict::Pass),
    ("app/view-range", Verdict::Pass),
];

#[test]
fn python_sdk_handler_over_stdio() {
    let (_dir, mut t) = python_target(
        "anthropic.tools:BetaLocalFilesystemMemoryTool",
        Duration::from_secs(20),
    );
    assert_eq!(stdio_verdicts(&mut t, Profile::PythonSdk), want(PYTHON_SDK));
}

/// The TypeScript SDK handler: as [`PYTHON_SDK`], except that one turn's create and view of the
/// same file run concurrently (the adapter's batch, like the runner's `Promise.all`): the view
/// answers "does not exist", NON-STRICT.
#[test]
fn typescript_sdk_handler_over_stdio() {
    let (_dir, mut t) =
        node_target("@anthropic-ai/sdk/tools/memory/node:BetaLocalFilesystemMemoryTool");
    let mut expected = want(PYTHON_SDK);
    expected.insert("app/one-turn-dependent".into(), Verdict::NonStrict);
    assert_eq!(stdio_verdicts(&mut t, Profile::TypescriptSdk), expected);
}
