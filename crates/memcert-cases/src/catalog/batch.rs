//! One assistant turn with several `tool_use` blocks (`memory-tool-behaviour.md` spec:3,
//! "Concurrency"): the Python runner runs them in order, the TypeScript runner concurrently
//! (`Promise.all`), which the certifier reproduces with `Target::call_batch` (protocol v1.1
//! `batch`). Results go back in the model's order, so the model reads them as done in order:
//! a later call SHOULD see an earlier one, and an edit reported as done MUST NOT be lost.
//!
//! memcert sees the replies and the disk, never the order the calls ran in: a diagnosis says
//! what the replies and the file show (a str_replace after a create was refused; both creates
//! reported success and the file holds the second text), never which call ran first.

use serde_json::json;

use super::{error_is, exact, refused, success_is, B};
use crate::{verdict::Verdict, Case, Expected};
use memcert_tool::text::Outcome;

const EDIT_REFUSED: &str = "the str_replace of the file created earlier in the turn was refused";
const VIEW_REFUSED: &str = "the view of the file created earlier in the turn was refused";

pub(super) fn cases() -> Vec<Case> {
    let inserted = || {
        exact(Outcome::Inserted {
            path: "/memories/empty.txt".into(),
        })
    };
    let ins = |text: &str| json!({"command": "insert", "path": "/memories/empty.txt", "insert_line": 0, "insert_text": text});
    vec![
        B::should("batch/create-edit-view", "The calls of one turn SHOULD take effect in the model's order: a str_replace and a view after a create in the same turn see the new file.", &["spec:3.1"])
            .batch()
            .send(json!({"command": "create", "path": "/memories/p.txt", "file_text": "a\n"}), vec![exact(Outcome::Created { path: "/memories/p.txt".into() })])
            .send(json!({"command": "str_replace", "path": "/memories/p.txt", "old_str": "a", "new_str": "b"}), vec![
                success_is(Verdict::Pass, "edited the file created earlier in the turn"),
                error_is(Verdict::NonStrict, EDIT_REFUSED),
            ])
            .send(json!({"command": "view", "path": "/memories/p.txt"}), vec![
                exact(Outcome::view_file("/memories/p.txt", 1, &["b", ""])),
                error_is(Verdict::NonStrict, VIEW_REFUSED),
                success_is(Verdict::NonStrict, "the view does not show the file as the str_replace earlier in the turn left it"),
            ])
            .check("/memories/p.txt", Expected::File(b"b\n".to_vec()), Verdict::NonStrict, "/memories/p.txt holds the turn's edit")
            .done(),
        B::must("batch/insert-three-at-top", "Edits reported as done MUST all be in the file: three inserts at line 0 in one turn leave three lines, the last insert first.", &["spec:3.1"])
            .batch()
            .file("/memories/empty.txt", "")
            .send(ins("one"), vec![inserted()])
            .send(ins("two"), vec![inserted()])
            .send(ins("three"), vec![inserted()])
            .check("/memories/empty.txt", Expected::File(b"three\ntwo\none\n".to_vec()), Verdict::Fail, "no insert reported as done is lost (lost update)")
            .done(),
        B::must("batch/two-edits-one-file", "Edits reported as done MUST all be in the file: two str_replace calls on different lines of one file in one turn both hold.", &["spec:3.1"])
            .batch()
            .file("/memories/two.txt", "alpha\nbeta\n")
            .send(json!({"command": "str_replace", "path": "/memories/two.txt", "old_str": "alpha", "new_str": "ALPHA"}), vec![success_is(Verdict::Pass, "edited")])
            .send(json!({"command": "str_replace", "path": "/memories/two.txt", "old_str": "beta", "new_str": "BETA"}), vec![success_is(Verdict::Pass, "edited")])
            .check("/memories/two.txt", Expected::File(b"ALPHA\nBETA\n".to_vec()), Verdict::Fail, "no edit reported as done is lost (lost update)")
            .done(),
        // Graded step by step, so two creates that both report success (one text lost) are
        // NON-STRICT here, not FAIL. Each reply's note says what that reply shows; the check's
        // finding says what the replies and the file show together (meaning::explain_check:
        // "both creates reported success and the file holds the second create's text: the
        // second create overwrote the first"), never which create ran first.
        B::should("batch/create-twice", "Of two creates of one new path in one turn, the second SHOULD be the one refused, so the file holds the first.", &["spec:3.1", "spec:2.2/B2"])
            .batch()
            .send(json!({"command": "create", "path": "/memories/n.txt", "file_text": "first\n"}), vec![
                exact(Outcome::Created { path: "/memories/n.txt".into() }),
                error_is(Verdict::NonStrict, "the first create of the turn was refused, though the path did not exist before the turn"),
            ])
            .send(json!({"command": "create", "path": "/memories/n.txt", "file_text": "second\n"}), vec![
                exact(Outcome::FileExists { path: "/memories/n.txt".into() }),
                refused(),
                success_is(Verdict::NonStrict, "the second create of the same path in the turn reported success"),
            ])
            .check("/memories/n.txt", Expected::File(b"first\n".to_vec()), Verdict::NonStrict, "the first create's text is kept")
            .done(),
    ]
}
