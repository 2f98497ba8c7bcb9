//! Malformed input: unknown commands, missing or mistyped fields (`docs/spec/memory-tool.md`
//! spec:2.7 and the X/Z rows of spec:2). Wording is not graded (an SDK's crash text is an error too);
//! `is_error` and an untouched store are.

use serde_json::{json, Value};

use super::{exact, refused, success_is, B};
use crate::{verdict::Verdict, Accept, Case, Expected};
use memcert_tool::protocol::Command;
use memcert_tool::text::Outcome;

/// The reference wording for a malformed input: its `InputError` message.
fn malformed(input: &Value) -> Accept {
    let detail = Command::parse(input)
        .expect_err("a malformed case holds a malformed input")
        .to_string();
    exact(Outcome::MalformedInput { detail })
}

/// (`#[track_caller]`: the case is defined where this is called.)
#[track_caller]
fn bad(id: &str, src: &[&str], input: Value) -> Case {
    B::must(
        &format!("malformed/{id}"),
        "Malformed input MUST get an is_error reply and change nothing.",
        src,
    )
    .file("/memories/m.txt", "l1\nl2\nl3\n")
    .send(input.clone(), vec![malformed(&input), refused()])
    .check(
        "/memories/m.txt",
        Expected::File(b"l1\nl2\nl3\n".to_vec()),
        Verdict::Fail,
        "the store is unchanged",
    )
    .done()
}

/// (`#[track_caller]`: the case is defined where this is called.)
#[track_caller]
fn lenient(id: &str, src: &[&str], input: Value, note: &str) -> Case {
    B::should(
        &format!("malformed/{id}"),
        "A mistyped field SHOULD be refused; coercing it is NON-STRICT.",
        src,
    )
    .file("/memories/m.txt", "l1\nl2\nl3\n")
    .send(
        input.clone(),
        vec![
            malformed(&input),
            refused(),
            success_is(Verdict::NonStrict, note),
        ],
    )
    .done()
}

#[allow(clippy::too_many_lines)] // one table literal: the malformed-input cases
pub(super) fn cases() -> Vec<Case> {
    vec![
        bad(
            "unknown-command",
            &["spec:2.7/Z1"],
            json!({"command": "foo", "path": "/memories/m.txt"}),
        ),
        bad(
            "missing-command",
            &["spec:2.7/Z2"],
            json!({"path": "/memories/m.txt"}),
        ),
        bad(
            "command-not-string",
            &["spec:2.7/Z2"],
            json!({"command": 7, "path": "/memories/m.txt"}),
        ),
        bad(
            "view/missing-path",
            &["spec:2.7/Z3"],
            json!({"command": "view"}),
        ),
        bad(
            "view/path-number",
            &["spec:2.7/P21"],
            json!({"command": "view", "path": 123}),
        ),
        bad(
            "view/view-range-float",
            &["spec:2.1/X18"],
            json!({"command": "view", "path": "/memories/m.txt", "view_range": [1, 2.7]}),
        ),
        bad(
            "view/view-range-string-item",
            &["spec:2.1/X21"],
            json!({"command": "view", "path": "/memories/m.txt", "view_range": [1, "x"]}),
        ),
        lenient(
            "view/view-range-not-list",
            &["spec:2.1/C11"],
            json!({"command": "view", "path": "/memories/m.txt", "view_range": "1-2"}),
            "a range whose length is not 2 is ignored (both SDKs)",
        ),
        lenient(
            "view/view-range-one-item",
            &["spec:2.1/C11"],
            json!({"command": "view", "path": "/memories/m.txt", "view_range": [3]}),
            "a range whose length is not 2 is ignored (both SDKs)",
        ),
        lenient(
            "view/view-range-strings",
            &["spec:2.1/C18"],
            json!({"command": "view", "path": "/memories/m.txt", "view_range": ["2", "3"]}),
            "strings coerced to numbers (both SDKs)",
        ),
        bad(
            "create/missing-file-text",
            &["spec:2.2/B9"],
            json!({"command": "create", "path": "/memories/new.txt"}),
        ),
        bad(
            "create/file-text-number",
            &["spec:2.2/X14"],
            json!({"command": "create", "path": "/memories/new.txt", "file_text": 5}),
        ),
        bad(
            "create/missing-path",
            &["spec:2.7/Z3"],
            json!({"command": "create", "file_text": "x"}),
        ),
        bad(
            "str_replace/missing-old-str",
            &["spec:2.3/E12"],
            json!({"command": "str_replace", "path": "/memories/m.txt", "new_str": "x"}),
        ),
        bad(
            "str_replace/new-str-number",
            &["spec:2.3/X24"],
            json!({"command": "str_replace", "path": "/memories/m.txt", "old_str": "l1", "new_str": 7}),
        ),
        bad(
            "str_replace/missing-path",
            &["spec:2.7/Z3"],
            json!({"command": "str_replace", "old_str": "l1", "new_str": "x"}),
        ),
        bad(
            "insert/missing-insert-line",
            &["spec:2.4/F14"],
            json!({"command": "insert", "path": "/memories/m.txt", "insert_text": "X"}),
        ),
        bad(
            "insert/insert-line-float",
            &["spec:2.4/F16"],
            json!({"command": "insert", "path": "/memories/m.txt", "insert_line": 1.5, "insert_text": "X"}),
        ),
        lenient(
            "insert/insert-line-string",
            &["spec:2.4/F15"],
            json!({"command": "insert", "path": "/memories/m.txt", "insert_line": "1", "insert_text": "X"}),
            "string coerced to a number (both SDKs)",
        ),
        lenient(
            "insert/insert-line-bool",
            &["spec:2.4/X20"],
            json!({"command": "insert", "path": "/memories/m.txt", "insert_line": true, "insert_text": "X"}),
            "true coerced to 1 (both SDKs)",
        ),
        bad(
            "insert/missing-insert-text",
            &["spec:2.4/F18"],
            json!({"command": "insert", "path": "/memories/m.txt", "insert_line": 0}),
        ),
        bad(
            "delete/missing-path",
            &["spec:2.7/Z3"],
            json!({"command": "delete"}),
        ),
        bad(
            "rename/missing-new-path",
            &["spec:2.6/H11"],
            json!({"command": "rename", "old_path": "/memories/m.txt"}),
        ),
        bad(
            "rename/old-path-list",
            &["spec:2.7/P21"],
            json!({"command": "rename", "old_path": ["/memories/m.txt"], "new_path": "/memories/n.txt"}),
        ),
        B::must(
            "malformed/create/missing-file-text-leaves-nothing",
            "A create that fails on its input MUST NOT leave an empty file behind.",
            &["spec:2.2/B9"],
        )
        .send(
            json!({"command": "create", "path": "/memories/new.txt"}),
            vec![refused()],
        )
        .check(
            "/memories/new.txt",
            Expected::Absent,
            Verdict::Fail,
            "no file is left behind",
        )
        .done(),
        B::must(
            "malformed/extra-fields-ignored",
            "Unknown extra fields MUST be ignored.",
            &["spec:2.7/Z4"],
        )
        .file("/memories/m.txt", "l1\n")
        .send(
            json!({"command": "view", "path": "/memories/m.txt", "extra": {"x": 1}}),
            vec![success_is(Verdict::Pass, "served")],
        )
        .done(),
    ]
}
