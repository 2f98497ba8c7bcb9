//! create (`docs/spec/memory-tool.md` spec:2.2).

use serde_json::json;

use super::{exact, exact_is, refused, success_is, B};
use crate::{verdict::Verdict, Case, Expected};
use memcert_tool::text::Outcome;

fn create(path: &str, text: &str) -> serde_json::Value {
    json!({"command": "create", "path": path, "file_text": text})
}

pub(super) fn cases() -> Vec<Case> {
    vec![
        B::must("create/new-file", "create MUST write the file with exactly file_text and answer with the documented text.", &["spec:2.2/B1"])
            .send(create("/memories/notes.txt", "Hello\nWorld\n"), vec![exact(Outcome::Created { path: "/memories/notes.txt".into() })])
            .check("/memories/notes.txt", Expected::File(b"Hello\nWorld\n".to_vec()), Verdict::Fail, "the file holds file_text")
            .done(),
        B::should("create/existing-file", "create on an existing file SHOULD give the documented error and leave the file as it was.", &["spec:2.2/B2"])
            .file("/memories/notes.txt", "old\n")
            .send(create("/memories/notes.txt", "new\n"), vec![
                exact(Outcome::FileExists { path: "/memories/notes.txt".into() }),
                refused(),
                success_is(Verdict::NonStrict, "overwrites: the doc allows it as an implementation choice"),
            ])
            .keeps("/memories/notes.txt", "old\n", Verdict::NonStrict)
            .done(),
        B::must("create/existing-directory", "create on an existing directory MUST fail and leave the directory.", &["spec:2.2/B7"])
            .file("/memories/deep/inner.txt", "i")
            .send(create("/memories/deep", "x"), vec![exact(Outcome::FileExists { path: "/memories/deep".into() }), refused()])
            .keeps("/memories/deep/inner.txt", "i", Verdict::Fail)
            .done(),
        B::must("create/missing-parents", "create MUST make missing parent directories.", &["spec:2.2/B5"])
            .send(create("/memories/a/b/c.txt", "c\n"), vec![exact(Outcome::Created { path: "/memories/a/b/c.txt".into() })])
            .check("/memories/a/b/c.txt", Expected::File(b"c\n".to_vec()), Verdict::Fail, "the file holds file_text")
            .done(),
        B::should("create/trailing-slash", "A path ending in / names a directory; create SHOULD refuse it rather than make a file.", &["spec:2.2/B10", "spec:3/P-12"])
            .send(create("/memories/trailing/", "x"), vec![
                exact(Outcome::CreateTrailingSlash { path: "/memories/trailing/".into() }),
                refused(),
                success_is(Verdict::NonStrict, "creates a regular file named after the path without its /"),
            ])
            .check("/memories/trailing", Expected::Absent, Verdict::NonStrict, "nothing is created")
            .done(),
        B::must("create/parent-is-file", "create below a file MUST fail without disclosing host paths.", &["spec:2.2/B8", "bug:B07"])
            .file("/memories/notes.txt", "n\n")
            .send(create("/memories/notes.txt/child", "x"), vec![exact(Outcome::ParentNotADirectory { path: "/memories/notes.txt/child".into() }), refused()])
            .keeps("/memories/notes.txt", "n\n", Verdict::Fail)
            .done(),
        B::must("create/crlf-unicode", "create MUST store CRLF and non-ASCII text byte for byte as UTF-8.", &["spec:2.2/B11", "spec:2.2/B12"])
            .send(create("/memories/u.txt", "a\r\nb ü 😀\n"), vec![exact(Outcome::Created { path: "/memories/u.txt".into() })])
            .check("/memories/u.txt", Expected::File("a\r\nb ü 😀\n".as_bytes().to_vec()), Verdict::Fail, "the file holds file_text byte for byte")
            .done(),
        B::must("create/hidden-directory", "create under a dot-directory MUST work (hiding applies to listings only).", &["spec:3/P-13"])
            .send(create("/memories/.hid/x.txt", "x"), vec![exact(Outcome::Created { path: "/memories/.hid/x.txt".into() })])
            .check("/memories/.hid/x.txt", Expected::File(b"x".to_vec()), Verdict::Fail, "the file holds file_text")
            .done(),
        B::must("create/then-view", "A created file MUST read back through view.", &["spec:2.2/B1", "spec:2.1/C1"])
            .send(create("/memories/rt.txt", "one\ntwo\n"), vec![exact(Outcome::Created { path: "/memories/rt.txt".into() })])
            .send(json!({"command": "view", "path": "/memories/rt.txt"}), vec![exact(Outcome::view_file("/memories/rt.txt", 1, &["one", "two", ""]))])
            // The disk says why a view fails: a create that wrote nothing is that flaw, not a view's.
            .check("/memories/rt.txt", Expected::File(b"one\ntwo\n".to_vec()), Verdict::Fail, "the file holds file_text")
            .done(),
        B::should("create/existing-through-view", "After a refused create, view SHOULD still show the old content.", &["spec:2.2/B2"])
            .file("/memories/keep.txt", "old\n")
            .send(create("/memories/keep.txt", "new\n"), vec![exact(Outcome::FileExists { path: "/memories/keep.txt".into() }), refused(),
                success_is(Verdict::NonStrict, "overwrites: the doc allows it")])
            .send(json!({"command": "view", "path": "/memories/keep.txt"}), vec![
                exact(Outcome::view_file("/memories/keep.txt", 1, &["old", ""])),
                exact_is(Verdict::NonStrict, Outcome::view_file("/memories/keep.txt", 1, &["new", ""]), "overwritten"),
            ])
            .done(),
    ]
}
