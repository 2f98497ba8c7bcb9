//! Prefix confusion and one-spelling rules for the `/memories` namespace
//! (`docs/spec/memory-tool.md` spec:3/P-1, spec:3/P-3, spec:3/P-5, spec:3/P-6, spec:3/P-11; bug:B04, bug:B05, bug:B06).

use serde_json::json;

use super::{exact, refused, success_is, B};
use crate::{verdict::Verdict, Case, Expected};
use memcert_tool::text::{Outcome, ReasonName};
use memcert_tool::vpath::Reason;

fn invalid(path: &str, reason: Reason) -> Outcome {
    Outcome::InvalidPath {
        path: path.into(),
        reason: ReasonName(reason),
    }
}

/// (`#[track_caller]`: the case is defined where this is called.)
#[track_caller]
fn prefix_create(id: &str, path: &str, src: &[&str]) -> Case {
    B::should(id, "A path that merely starts with the letters /memories SHOULD be refused; writing inside the root under another name is NON-STRICT, writing outside is UNSAFE.", src)
        .send(json!({"command": "create", "path": path, "file_text": "x"}), vec![
            exact(invalid(path, Reason::OutsideMemories)),
            refused(),
            success_is(Verdict::NonStrict, "accepted and confined inside the root (prefix test without a separator)"),
        ])
        .done()
}

pub(super) fn cases() -> Vec<Case> {
    vec![
        prefix_create("path/prefix/letter-suffix/create", "/memoriesX/y", &["spec:3/P-1", "bug:B06"]),
        prefix_create("path/prefix/bare-suffix/create", "/memoriesX", &["spec:3/P-1", "bug:B06"]),
        prefix_create("path/prefix/underscore-sibling/create", "/memories_evil/y", &["spec:3/P-1", "bug:B04", "bug:B06"]),
        prefix_create("path/prefix/backup-sibling/create", "/memories_backup/file.txt", &["bug:B06"]),
        B::should("path/prefix/underscore-sibling/view", "view of /memories_evil SHOULD be refused and MUST NOT list the sibling folder.", &["spec:3/P-1", "bug:B04"])
            .send(json!({"command": "view", "path": "/memories_evil"}), vec![
                exact(invalid("/memories_evil", Reason::OutsideMemories)),
                refused(),
                success_is(Verdict::NonStrict, "accepted and confined inside the root"),
            ])
            .done(),
        B::must("path/prefix/delete-real-directory", "delete /memoriessub MUST NOT delete the real directory /memories/sub under a name that exists nowhere.", &["bug:B06"])
            .file("/memories/sub/keep.txt", "k")
            .send(json!({"command": "delete", "path": "/memoriessub"}), vec![exact(invalid("/memoriessub", Reason::OutsideMemories)), refused()])
            .check("/memories/sub/keep.txt", Expected::File(b"k".to_vec()), Verdict::Fail, "/memories/sub survives")
            .done(),
        B::must("path/prefix/not-absolute", "A relative path MUST be refused.", &["spec:3/P-5"])
            .send(json!({"command": "view", "path": "memories/x"}), vec![exact(invalid("memories/x", Reason::OutsideMemories)), refused()])
            .done(),
        B::must("path/prefix/empty", "An empty path MUST be refused.", &["spec:3/P-5"])
            .send(json!({"command": "view", "path": ""}), vec![exact(invalid("", Reason::OutsideMemories)), refused()])
            .done(),
        B::must("path/prefix/upper-case", "The namespace is case-sensitive: /MEMORIES MUST be refused.", &["spec:3/P-5", "bug:B23"])
            .send(json!({"command": "view", "path": "/MEMORIES"}), vec![exact(invalid("/MEMORIES", Reason::OutsideMemories)), refused()])
            .done(),
        B::should("path/dotdot/stays-inside", "A .. component SHOULD be refused even when it stays inside the root (one spelling per file).", &["spec:3/P-3", "bug:B01"])
            .send(json!({"command": "create", "path": "/memories/pa/../pb.txt", "file_text": "x"}), vec![
                exact(invalid("/memories/pa/../pb.txt", Reason::DotDotComponent)),
                refused(),
                success_is(Verdict::NonStrict, "accepted a .. that stays inside the root"),
            ])
            .done(),
        B::should("path/dot/inside", "A . component SHOULD be refused (one spelling per file).", &["spec:3/P-6"])
            .file("/memories/pb.txt", "p")
            .send(json!({"command": "view", "path": "/memories/./pb.txt"}), vec![
                exact(invalid("/memories/./pb.txt", Reason::DotComponent)),
                refused(),
                success_is(Verdict::NonStrict, "accepted a . component"),
            ])
            .done(),
        B::should("path/empty-component", "An empty component (//) SHOULD be refused (one spelling per file).", &["spec:3/P-6"])
            .file("/memories/pb.txt", "p")
            .send(json!({"command": "view", "path": "/memories//pb.txt"}), vec![
                exact(invalid("/memories//pb.txt", Reason::EmptyComponent)),
                refused(),
                success_is(Verdict::NonStrict, "accepted an empty component"),
            ])
            .done(),
        B::must("path/newline-in-name", "A name with a newline MUST be refused: it forges lines in listings.", &["spec:3/P-11"])
            .send(json!({"command": "create", "path": "/memories/new\nline.txt", "file_text": "x"}), vec![
                exact(invalid("/memories/new\nline.txt", Reason::ControlCharacter)),
                refused(),
            ])
            .done(),
        B::must("path/tab-in-name", "A name with a tab MUST be refused: it forges size columns in listings.", &["spec:3/P-11"])
            .send(json!({"command": "create", "path": "/memories/a\tb.txt", "file_text": "x"}), vec![
                exact(invalid("/memories/a\tb.txt", Reason::ControlCharacter)),
                refused(),
            ])
            .done(),
        B::must("path/long/component", "A component over 255 bytes MUST be refused without host paths.", &["spec:3/P-10", "bug:B07"])
            .send(json!({"command": "create", "path": format!("/memories/{}", "a".repeat(300)), "file_text": "x"}), vec![
                exact(invalid(&format!("/memories/{}", "a".repeat(300)), Reason::ComponentTooLong)),
                refused(),
                success_is(Verdict::NonStrict, "takes a name over 255 bytes (a store that is not a folder has no such limit)"),
            ])
            .done(),
        B::must("path/long/path", "A path over 4096 bytes MUST be refused without host paths.", &["spec:3/P-10", "bug:B07"])
            .send(json!({"command": "view", "path": format!("/memories{}", "/abcdefghi".repeat(500))}), vec![
                exact(invalid(&format!("/memories{}", "/abcdefghi".repeat(500)), Reason::PathTooLong)),
                refused(),
            ])
            .done(),
    ]
}
