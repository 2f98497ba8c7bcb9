//! delete (`docs/spec/memory-tool.md` spec:2.5).

use serde_json::json;

use super::{exact, refused, success_is, B};
use crate::{verdict::Verdict, Case, Expected};
use memcert_tool::text::Outcome;

fn delete(path: &str) -> serde_json::Value {
    json!({"command": "delete", "path": path})
}

pub(super) fn cases() -> Vec<Case> {
    vec![
        B::must(
            "delete/file",
            "delete MUST remove a file and answer with the documented text.",
            &["spec:2.5/G1"],
        )
        .file("/memories/nonl.txt", "x")
        .file("/memories/other.txt", "o")
        .send(
            delete("/memories/nonl.txt"),
            vec![exact(Outcome::Deleted {
                path: "/memories/nonl.txt".into(),
            })],
        )
        .check(
            "/memories/nonl.txt",
            Expected::Absent,
            Verdict::Fail,
            "the file is gone",
        )
        .keeps("/memories/other.txt", "o", Verdict::Fail)
        .done(),
        B::must(
            "delete/directory",
            "delete MUST remove a directory and everything in it.",
            &["spec:2.5/G2"],
        )
        .file("/memories/d/a.txt", "a")
        .file("/memories/d/e/b.txt", "b")
        .send(
            delete("/memories/d"),
            vec![exact(Outcome::Deleted {
                path: "/memories/d".into(),
            })],
        )
        .check(
            "/memories/d",
            Expected::Absent,
            Verdict::Fail,
            "the directory is gone",
        )
        .done(),
        B::must(
            "delete/missing",
            "delete of a missing path MUST give the documented error.",
            &["spec:2.5/G6"],
        )
        .send(
            delete("/memories/ghost.txt"),
            vec![exact(Outcome::DeleteNotFound {
                path: "/memories/ghost.txt".into(),
            })],
        )
        .done(),
        B::should(
            "delete/file-trailing-slash",
            "A path ending in / names a directory; delete SHOULD refuse it on a file.",
            &["spec:2.5/X15", "spec:3/P-12"],
        )
        .file("/memories/sr.txt", "s")
        .send(
            delete("/memories/sr.txt/"),
            vec![
                exact(Outcome::NotADirectory {
                    path: "/memories/sr.txt/".into(),
                }),
                refused(),
                success_is(
                    Verdict::NonStrict,
                    "deletes the file despite the trailing /",
                ),
            ],
        )
        .keeps("/memories/sr.txt", "s", Verdict::NonStrict)
        .done(),
        B::must(
            "delete/then-view",
            "A deleted file MUST be gone for view.",
            &["spec:2.5/G1", "spec:2.1/C21"],
        )
        .file("/memories/gone.txt", "g")
        .send(
            delete("/memories/gone.txt"),
            vec![exact(Outcome::Deleted {
                path: "/memories/gone.txt".into(),
            })],
        )
        .send(
            json!({"command": "view", "path": "/memories/gone.txt"}),
            vec![exact(Outcome::ViewNotFound {
                path: "/memories/gone.txt".into(),
            })],
        )
        .done(),
    ]
}
