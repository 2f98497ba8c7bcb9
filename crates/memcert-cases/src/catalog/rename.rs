//! rename (`docs/spec/memory-tool.md` spec:2.6).

use serde_json::json;

use super::{exact, refused, B};
use crate::{verdict::Verdict, Case, Expected};
use memcert_tool::text::Outcome;

fn rename(old: &str, new: &str) -> serde_json::Value {
    json!({"command": "rename", "old_path": old, "new_path": new})
}

fn renamed(old: &str, new: &str) -> Outcome {
    Outcome::Renamed {
        old_path: old.into(),
        new_path: new.into(),
    }
}

#[allow(clippy::too_many_lines)] // one table literal: the rename cases
pub(super) fn cases() -> Vec<Case> {
    vec![
        B::must(
            "rename/file",
            "rename MUST move the file and answer with the documented text.",
            &["spec:2.6/H1"],
        )
        .file("/memories/r1.txt", "r1\n")
        .send(
            rename("/memories/r1.txt", "/memories/r1b.txt"),
            vec![exact(renamed("/memories/r1.txt", "/memories/r1b.txt"))],
        )
        .check(
            "/memories/r1.txt",
            Expected::Absent,
            Verdict::Fail,
            "the old name is gone",
        )
        .keeps("/memories/r1b.txt", "r1\n", Verdict::Fail)
        .done(),
        B::must(
            "rename/into-new-directory",
            "rename MUST create missing destination parents.",
            &["spec:2.6/H4"],
        )
        .file("/memories/r1.txt", "r1\n")
        .send(
            rename("/memories/r1.txt", "/memories/sub/dir/r.txt"),
            vec![exact(renamed(
                "/memories/r1.txt",
                "/memories/sub/dir/r.txt",
            ))],
        )
        .keeps("/memories/sub/dir/r.txt", "r1\n", Verdict::Fail)
        .done(),
        B::must(
            "rename/directory",
            "rename MUST move a directory with its contents.",
            &["spec:2.6/H10"],
        )
        .file("/memories/rd/x.txt", "x")
        .send(
            rename("/memories/rd", "/memories/rd2"),
            vec![exact(renamed("/memories/rd", "/memories/rd2"))],
        )
        .keeps("/memories/rd2/x.txt", "x", Verdict::Fail)
        .check(
            "/memories/rd",
            Expected::Absent,
            Verdict::Fail,
            "the old name is gone",
        )
        .done(),
        B::must(
            "rename/destination-exists",
            "rename onto an existing path MUST give the documented error and change nothing.",
            &["spec:2.6/H3"],
        )
        .file("/memories/r1.txt", "one")
        .file("/memories/r2.txt", "two")
        .send(
            rename("/memories/r1.txt", "/memories/r2.txt"),
            vec![exact(Outcome::RenameDestinationExists {
                new_path: "/memories/r2.txt".into(),
            })],
        )
        .keeps("/memories/r1.txt", "one", Verdict::Fail)
        .keeps("/memories/r2.txt", "two", Verdict::Fail)
        .done(),
        B::must(
            "rename/onto-itself",
            "rename of a path onto itself MUST give the destination-exists error.",
            &["spec:2.6/H12"],
        )
        .file("/memories/r1.txt", "one")
        .send(
            rename("/memories/r1.txt", "/memories/r1.txt"),
            vec![exact(Outcome::RenameDestinationExists {
                new_path: "/memories/r1.txt".into(),
            })],
        )
        .keeps("/memories/r1.txt", "one", Verdict::Fail)
        .done(),
        B::should(
            "rename/source-missing",
            "rename of a missing source SHOULD give the documented error and create nothing.",
            &["spec:2.6/H5"],
        )
        .send(
            rename("/memories/ghost.txt", "/memories/ghostdir/x.txt"),
            vec![exact(Outcome::RenameNotFound {
                old_path: "/memories/ghost.txt".into(),
            })],
        )
        .check(
            "/memories/ghostdir",
            Expected::Absent,
            Verdict::NonStrict,
            "the destination's parent is not created",
        )
        .done(),
        B::should(
            "rename/into-own-subtree",
            "Moving a directory into its own subtree MUST be refused, and SHOULD create nothing.",
            &["spec:2.6/H6", "bug:B07"],
        )
        .file("/memories/rd/x.txt", "x")
        .send(
            rename("/memories/rd", "/memories/rd/sub/rd"),
            vec![
                exact(Outcome::RenameIntoItself {
                    old_path: "/memories/rd".into(),
                    new_path: "/memories/rd/sub/rd".into(),
                }),
                refused(),
            ],
        )
        .keeps("/memories/rd/x.txt", "x", Verdict::Fail)
        .check(
            "/memories/rd/sub",
            Expected::Absent,
            Verdict::NonStrict,
            "nothing is created",
        )
        .done(),
        B::must(
            "rename/destination-parent-is-file",
            "rename below a file MUST fail without disclosing host paths.",
            &["spec:2.6/H13", "bug:B07"],
        )
        .file("/memories/r1.txt", "one")
        .file("/memories/r1b.txt", "file")
        .send(
            rename("/memories/r1.txt", "/memories/r1b.txt/sub"),
            vec![
                exact(Outcome::ParentNotADirectory {
                    path: "/memories/r1b.txt/sub".into(),
                }),
                refused(),
            ],
        )
        .keeps("/memories/r1.txt", "one", Verdict::Fail)
        .done(),
    ]
}
