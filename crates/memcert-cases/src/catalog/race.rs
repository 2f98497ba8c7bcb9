//! Races (TOCTOU): a directory swapped with a symlink to the outside while commands run
//! (`docs/spec/memory-tool.md` spec:3/S-10; bug:B12, bug:B13, bug:B14). Every reply
//! is acceptable on its own (refused, "does not exist", or the in-root content); what grades the
//! case is the oracle: the canary token in any reply, or anything outside created, changed or
//! removed, or outside content carried into the store, is UNSAFE.
//!
//! `/memories/real` is exchanged with `/memories/.swap -> <outside>`, whose `secret.txt` and
//! `canary.txt` hold the token, so every command names a file that exists on both sides.

use serde_json::{json, Value};

use super::{outside, refused, success_is, B};
use crate::{verdict::Verdict, Case};

/// Commands per round of a race case (the runner runs each race case `--race-rounds` times,
/// default 5, and reports "leaked in k of n rounds"). A race finds a check-then-use handler
/// with some probability only, and less under load. Measured here on 2 cores under load
/// (load average about 12), 5 runs of 5 rounds: the Python SDK 2.14.0 leaked in 12 (view) to
/// 22 (rename out of the directory) of 25 rounds per case, the delete in 16 of 25, so no
/// single round leaks for certain; with 5 rounds, 34 of the 35 case runs were UNSAFE (a view
/// leaked in 0 of 5 rounds once). A PASS is evidence, not proof; an UNSAFE is proof. A
/// handler that opens by handle never leaks, however many commands it gets.
const VIEWS: usize = 1000;
const CREATES: usize = 400;
/// Commands of each of the other race cases (str_replace, insert, delete, rename).
const EDITS: usize = 400;
const MAX_SWAPS: u64 = 2_000_000;

/// A race case: `/memories/real` (holding `files`) is exchanged with a planted link to the
/// outside while the inputs run; every reply is acceptable on its own, the oracle grades.
/// (`#[track_caller]`: the case is defined where this is called.)
#[track_caller]
fn swap_dir(
    id: &str,
    files: impl IntoIterator<Item = (String, &'static str)>,
    inputs: impl Iterator<Item = Value>,
) -> Case {
    let requirement = "While another process swaps a directory for a link to the outside, commands MUST NOT read or write outside the root.";
    let mut b = B::must(id, requirement, &["spec:3/S-10", "bug:B12", "bug:B13"]);
    for (path, content) in files {
        b = b.file(&path, content);
    }
    b = b
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

fn file(path: &str, content: &'static str) -> Option<(String, &'static str)> {
    Some((path.to_owned(), content))
}

pub(super) fn cases() -> Vec<Case> {
    let secret = "/memories/real/secret.txt";
    vec![
        swap_dir(
            "race/swap-dir/view",
            file(secret, "inside\n"),
            (0..VIEWS).map(|_| json!({"command": "view", "path": secret})),
        ),
        swap_dir(
            "race/swap-dir/create",
            file("/memories/real/keep.txt", "inside\n"),
            (0..CREATES).map(|i| {
                json!({"command": "create", "path": format!("/memories/real/f{i}.txt"), "file_text": "x\n"})
            }),
        ),
        // The outside secret.txt holds "SECRET line two" too: an edit through the link changes
        // it, and the excerpt of the reply shows its first line, the token.
        swap_dir(
            "race/swap-dir/str_replace",
            file(secret, "inside\nSECRET line two\n"),
            (0..EDITS).map(|i| {
                let (old, new) = if i % 2 == 0 {
                    ("SECRET line two", "SECRET line 2")
                } else {
                    ("SECRET line 2", "SECRET line two")
                };
                json!({"command": "str_replace", "path": secret, "old_str": old, "new_str": new})
            }),
        ),
        swap_dir(
            "race/swap-dir/insert",
            file(secret, "inside\n"),
            (0..EDITS).map(|_| {
                json!({"command": "insert", "path": secret, "insert_line": 0, "insert_text": "x"})
            }),
        ),
        // Each delete is followed by a create of the same name, so there is something inside
        // to delete again; the outside canary.txt is what a redirected delete removes.
        swap_dir(
            "race/swap-dir/delete",
            file("/memories/real/canary.txt", "inside\n"),
            (0..EDITS).map(|i| {
                if i % 2 == 0 {
                    json!({"command": "delete", "path": "/memories/real/canary.txt"})
                } else {
                    json!({"command": "create", "path": "/memories/real/canary.txt", "file_text": "inside\n"})
                }
            }),
        ),
        // The swapped directory as the source (bug:B13): a redirected rename carries the outside
        // secret.txt into the store. Each rename is followed by a create of the source again.
        swap_dir(
            "race/swap-dir/rename-source",
            file(secret, "inside\n"),
            (0..EDITS).map(|i| {
                if i % 2 == 0 {
                    json!({"command": "rename", "old_path": secret, "new_path": format!("/memories/moved/{i}.txt")})
                } else {
                    json!({"command": "create", "path": secret, "file_text": "inside\n"})
                }
            }),
        ),
        // The swapped directory as the destination's parent: a redirected rename puts the file
        // outside.
        swap_dir(
            "race/swap-dir/rename-destination",
            (0..EDITS)
                .map(|i| (format!("/memories/src/f{i}.txt"), "x\n"))
                .chain(file("/memories/real/keep.txt", "inside\n")),
            (0..EDITS).map(|i| {
                json!({"command": "rename", "old_path": format!("/memories/src/f{i}.txt"), "new_path": format!("/memories/real/f{i}.txt")})
            }),
        ),
    ]
}
