//! The root under every spelling: delete and rename guards (`docs/spec/memory-tool.md`
//! spec:2.5/G3, spec:2.5/G4, spec:2.5/G5, spec:2.5/G7, spec:2.5/Q5, spec:2.5/Q6,
//! spec:2.6/H2, spec:2.6/H9, spec:5; bug:B02, bug:B07).

use serde_json::json;

use super::{error_is, exact, refused, success_is, B, SENTINEL, SENTINEL_TEXT};
use crate::{verdict::Verdict, Case, Expected};
use memcert_tool::text::{ListEntry, Outcome};

/// (`#[track_caller]`: the case is defined where this is called.)
#[track_caller]
fn guarded(id: &str, input: serde_json::Value, best: Option<Outcome>, src: &[&str]) -> Case {
    let mut accept = Vec::new();
    if let Some(o) = best {
        accept.push(exact(o));
    }
    accept.push(refused());
    B::must(id, "Every spelling of the root MUST be refused by delete and rename, and the store MUST survive.", src)
        .file(SENTINEL, SENTINEL_TEXT)
        .dir("/memories/deep")
        .send(input, accept)
        .check(SENTINEL, Expected::File(SENTINEL_TEXT.as_bytes().to_vec()), Verdict::Unsafe, super::STORE_SURVIVES)
        .check("/memories/deep", Expected::Dir, Verdict::Unsafe, super::STORE_SURVIVES)
        .done()
}

/// The folder that holds the store, named as `/memories/..`: refused by delete and rename, with
/// the store intact (the oracle sees anything done to the folder around it).
/// (`#[track_caller]`: the case is defined where this is called.)
#[track_caller]
fn above(id: &str, input: serde_json::Value) -> Case {
    B::must(id, "A path above the store (/memories/..) MUST be refused by delete and rename: the folder that holds the store, and the store, MUST survive.", &["bug:B02", "bug:B01"])
        .file(SENTINEL, SENTINEL_TEXT)
        .send(input, vec![refused()])
        .check(SENTINEL, Expected::File(SENTINEL_TEXT.as_bytes().to_vec()), Verdict::Unsafe, super::STORE_SURVIVES)
        .done()
}

fn delete(p: &str) -> serde_json::Value {
    json!({"command": "delete", "path": p})
}

fn rename(o: &str, n: &str) -> serde_json::Value {
    json!({"command": "rename", "old_path": o, "new_path": n})
}

/// (`#[track_caller]`: the case is defined where this is called.)
#[track_caller]
fn root_view(id: &str, path: &str, src: &[&str]) -> Case {
    B::should(id, "A path SHOULD have one spelling; a root alias SHOULD be refused (listing the root is acceptable).", src)
        .file("/memories/r.txt", "r")
        .send(json!({"command": "view", "path": path}), vec![
            refused(),
            success_is(Verdict::NonStrict, "lists the root under an alias spelling"),
        ])
        .done()
}

#[allow(clippy::too_many_lines)] // one table literal: the root cases
pub(super) fn cases() -> Vec<Case> {
    vec![
        guarded(
            "root/delete/plain",
            delete("/memories"),
            Some(Outcome::DeleteRoot),
            &["spec:2.5/G3"],
        ),
        guarded(
            "root/delete/trailing-slash",
            delete("/memories/"),
            Some(Outcome::DeleteRoot),
            &["spec:2.5/G4", "spec:5", "bug:B07"],
        ),
        guarded(
            "root/delete/dot",
            delete("/memories/."),
            None,
            &["spec:2.5/G5", "bug:B07"],
        ),
        guarded(
            "root/delete/double-slash",
            delete("/memories//"),
            None,
            &["spec:2.5/G7", "bug:B07"],
        ),
        guarded(
            "root/delete/dotdot",
            delete("/memories/deep/.."),
            None,
            &["spec:2.5/Q5", "bug:B07", "bug:B02"],
        ),
        guarded(
            "root/delete/via-parent",
            delete("/memories/../memories"),
            None,
            &["spec:2.5/Q6", "bug:B07"],
        ),
        above("root/delete/parent", delete("/memories/..")),
        above("root/rename/parent", rename("/memories/..", "/memories/x")),
        guarded(
            "root/rename/plain",
            rename("/memories", "/memories/x"),
            Some(Outcome::RenameRoot),
            &["spec:2.6/H2", "bug:B07"],
        ),
        guarded(
            "root/rename/trailing-slash",
            rename("/memories/", "/memories/x"),
            Some(Outcome::RenameRoot),
            &["spec:2.6/H9", "bug:B07"],
        ),
        guarded(
            "root/rename/dot-slash",
            rename("/memories/./", "/memories/x"),
            None,
            &["spec:2.6/Q7", "bug:B07"],
        ),
        guarded(
            "root/rename/onto-root",
            rename("/memories/deep", "/memories"),
            Some(Outcome::RenameDestinationExists {
                new_path: "/memories".into(),
            }),
            &["spec:2.6/H7"],
        ),
        B::must(
            "root/create/plain",
            "create on the root MUST fail and leave the store.",
            &["spec:2.2/B6"],
        )
        .file(SENTINEL, SENTINEL_TEXT)
        .send(
            json!({"command": "create", "path": "/memories", "file_text": "x"}),
            vec![
                exact(Outcome::FileExists {
                    path: "/memories".into(),
                }),
                refused(),
            ],
        )
        .check(
            SENTINEL,
            Expected::File(SENTINEL_TEXT.as_bytes().to_vec()),
            Verdict::Unsafe,
            super::STORE_SURVIVES,
        )
        .done(),
        B::must(
            "root/str_replace/plain",
            "str_replace on the root MUST be refused.",
            &["spec:2.3/E9"],
        )
        .send(
            json!({"command": "str_replace", "path": "/memories", "old_str": "a", "new_str": "b"}),
            vec![
                exact(Outcome::NotAFile {
                    path: "/memories".into(),
                }),
                error_is(Verdict::Pass, "refused"),
            ],
        )
        .done(),
        root_view("root/view/dot", "/memories/.", &["spec:3/P-6", "bug:B07"]),
        root_view(
            "root/view/double-slash",
            "/memories//",
            &["spec:3/P-6", "bug:B07"],
        ),
        root_view(
            "root/view/via-parent",
            "/memories/../memories",
            &["spec:3/P-3", "bug:B07"],
        ),
        B::must(
            "root/view/listing-of-store",
            "view /memories MUST list the store's files.",
            &["spec:2.1/A1"],
        )
        .file("/memories/r.txt", "r")
        .send(
            json!({"command": "view", "path": "/memories"}),
            vec![exact(Outcome::ViewDir {
                path: "/memories".into(),
                size: 4096,
                entries: vec![ListEntry {
                    size: 1,
                    path: "/memories/r.txt".into(),
                    dir: false,
                }],
            })],
        )
        .done(),
    ]
}
