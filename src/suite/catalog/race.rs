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

pub(super) fn cases() -> Vec<Case> {
    let either = || {
        vec![
            refused(),
            success_is(Verdict::Pass, "answered from inside the root"),
        ]
    };
    let requirement = "While another process swaps a directory for a link to the outside, commands MUST NOT read or write outside the root.";
    let mut view = B::must(
        "race/swap-dir/view",
        requirement,
        &["§3 S-10", "B12", "B13"],
    )
    .file("/memories/real/secret.txt", "inside\n")
    .link("/memories/.swap", outside(""))
    .race("/memories/real", "/memories/.swap", MAX_SWAPS);
    for _ in 0..VIEWS {
        view = view.send(
            json!({"command": "view", "path": "/memories/real/secret.txt"}),
            either(),
        );
    }
    let mut create = B::must(
        "race/swap-dir/create",
        requirement,
        &["§3 S-10", "B12", "B13"],
    )
    .file("/memories/real/keep.txt", "inside\n")
    .link("/memories/.swap", outside(""))
    .race("/memories/real", "/memories/.swap", MAX_SWAPS);
    for i in 0..CREATES {
        create = create.send(
            json!({"command": "create", "path": format!("/memories/real/f{i}.txt"), "file_text": "x\n"}),
            either(),
        );
    }
    vec![view.done(), create.done()]
}
