//! Races (TOCTOU): a directory swapped with a symlink to the outside while commands run
//! (`shared/spec/memory-tool-behaviour.md` §3 S-10; `known-bugs.md` B12, B13). Every reply is
//! acceptable on its own (refused, "does not exist", or the in-root content); what grades the case
//! is the oracle: the canary token in any reply, or anything created outside, is UNSAFE.

use serde_json::json;

use super::{outside, refused, success_is, B};
use crate::suite::{verdict::Verdict, Case};

/// Commands per race case. A race finds a check-then-use handler with some probability only,
/// and less under load. Measured here on 2 cores, per run: the Python SDK read the canary in 0 to
/// about 60 of 1,000 views and created about 30 to 70 of 400 files outside; the TypeScript SDK
/// leaked in both on every run. A PASS is evidence, not proof; an UNSAFE is proof. A handler that
/// opens by handle never leaks, however many commands it gets.
const VIEWS: usize = 1000;
const CREATES: usize = 400;
const MAX_SWAPS: u64 = 2_000_000;

/// A race case: `/memories/real` (holding `file`) is exchanged with a planted link to the
/// outside while the inputs run; every reply is acceptable on its own, the oracle grades.
fn swap_dir(id: &str, file: &str, inputs: impl Iterator<Item = serde_json::Value>) -> Case {
    let requirement = "While another process swaps a directory for a link to the outside, commands MUST NOT read or write outside the root.";
    let mut b = B::must(id, requirement, &["§3 S-10", "B12", "B13"])
        .file(file, "inside\n")
        .link("/memories/.swap", outside(""))
        .race("/memories/real", "/memories/.swap", MAX_SWAPS);
    for input in inputs {
        b = b.send(
            input,
            vec![
                refused(),
                success_is(Verdict::Pass, "answered from inside the root"),
            ],
        );
    }
    b.done()
}

pub(super) fn cases() -> Vec<Case> {
    vec![
        swap_dir(
            "race/swap-dir/view",
            "/memories/real/secret.txt",
            (0..VIEWS).map(|_| json!({"command": "view", "path": "/memories/real/secret.txt"})),
        ),
        swap_dir(
            "race/swap-dir/create",
            "/memories/real/keep.txt",
            (0..CREATES).map(|i| {
                json!({"command": "create", "path": format!("/memories/real/f{i}.txt"), "file_text": "x\n"})
            }),
        ),
    ]
}
