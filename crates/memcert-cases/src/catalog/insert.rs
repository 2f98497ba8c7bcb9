//! insert (`docs/spec/memory-tool.md` spec:2.4).

use serde_json::json;

use super::{error_is, exact, refused, B};
use crate::{verdict::Verdict, Case};
use memcert_tool::text::Outcome;

const L3: &str = "l1\nl2\nl3\n";

fn ins(path: &str, line: i64, text: &str) -> serde_json::Value {
    json!({"command": "insert", "path": path, "insert_line": line, "insert_text": text})
}

fn inserted(path: &str) -> Outcome {
    Outcome::Inserted { path: path.into() }
}

pub(super) fn cases() -> Vec<Case> {
    vec![
        B::must("insert/at-top", "insert at line 0 MUST put the text before the first line.", &["spec:2.4/F1"])
            .file("/memories/ins.txt", L3)
            .send(ins("/memories/ins.txt", 0, "X"), vec![exact(inserted("/memories/ins.txt"))])
            .keeps("/memories/ins.txt", "X\nl1\nl2\nl3\n", Verdict::Fail)
            .done(),
        B::must("insert/at-end", "insert at line n MUST put the text after the last line.", &["spec:2.4/F2"])
            .file("/memories/ins.txt", L3)
            .send(ins("/memories/ins.txt", 3, "X"), vec![exact(inserted("/memories/ins.txt"))])
            .keeps("/memories/ins.txt", "l1\nl2\nl3\nX\n", Verdict::Fail)
            .done(),
        B::must("insert/past-end", "insert_line n+1 MUST be refused with the range [0, n].", &["spec:2.4/F3"])
            .file("/memories/ins.txt", L3)
            .send(ins("/memories/ins.txt", 4, "X"), vec![
                exact(Outcome::InvalidInsertLine { insert_line: 4, lines: 3 }),
                error_is(Verdict::NonStrict, "refused with another wording or range"),
            ])
            .keeps("/memories/ins.txt", L3, Verdict::Fail)
            .done(),
        B::must("insert/negative", "A negative insert_line MUST be refused with the range [0, n].", &["spec:2.4/F4"])
            .file("/memories/ins.txt", L3)
            .send(ins("/memories/ins.txt", -1, "X"), vec![
                exact(Outcome::InvalidInsertLine { insert_line: -1, lines: 3 }),
                error_is(Verdict::NonStrict, "refused with another wording or range"),
            ])
            .keeps("/memories/ins.txt", L3, Verdict::Fail)
            .done(),
        B::must("insert/huge-line", "An insert_line beyond every file MUST get the range error, not a malformed-input error.", &["spec:2.4/F4"])
            .file("/memories/ins.txt", L3)
            .send(ins("/memories/ins.txt", 1_000_000_000_000, "X"), vec![
                exact(Outcome::InvalidInsertLine { insert_line: 1_000_000_000_000, lines: 3 }),
                error_is(Verdict::NonStrict, "refused with another wording or range"),
            ])
            .keeps("/memories/ins.txt", L3, Verdict::Fail)
            .done(),
        B::should("insert/no-final-newline", "insert into a file without a final newline SHOULD keep every line whole.", &["spec:2.4/F6b"])
            .file("/memories/nonl.txt", "l1\nl2\nl3")
            .send(ins("/memories/nonl.txt", 1, "X"), vec![exact(inserted("/memories/nonl.txt"))])
            .keeps("/memories/nonl.txt", "l1\nX\nl2\nl3\n", Verdict::NonStrict)
            .done(),
        B::must("insert/empty-file", "insert at line 0 of an empty file MUST give one line.", &["spec:2.4/F10"])
            .file("/memories/empty.txt", "")
            .send(ins("/memories/empty.txt", 0, "X"), vec![exact(inserted("/memories/empty.txt"))])
            .keeps("/memories/empty.txt", "X\n", Verdict::Fail)
            .done(),
        B::should("insert/text-trailing-newlines", "insert_text ending in a blank line SHOULD keep that blank line (only one final newline is the line's own).", &["spec:2.4/F8"])
            .file("/memories/ins.txt", "l1\n")
            .send(ins("/memories/ins.txt", 0, "X\n\n"), vec![exact(inserted("/memories/ins.txt"))])
            .keeps("/memories/ins.txt", "X\n\nl1\n", Verdict::NonStrict)
            .done(),
        B::must("insert/multi-line", "insert_text with a newline inside MUST insert two lines.", &["spec:2.4/F9"])
            .file("/memories/ins.txt", L3)
            .send(ins("/memories/ins.txt", 1, "A\nB"), vec![exact(inserted("/memories/ins.txt"))])
            .keeps("/memories/ins.txt", "l1\nA\nB\nl2\nl3\n", Verdict::Fail)
            .done(),
        B::must("insert/crlf", "insert into a CRLF file MUST keep the other lines' endings.", &["spec:2.4/F17"])
            .file("/memories/crlf.txt", "a\r\nb\r\n")
            .send(ins("/memories/crlf.txt", 1, "X"), vec![exact(inserted("/memories/crlf.txt"))])
            .keeps("/memories/crlf.txt", "a\r\nX\nb\r\n", Verdict::Fail)
            .done(),
        B::must("insert/directory", "insert on a directory MUST be refused.", &["spec:2.4/F12"])
            .file("/memories/a/x.txt", "x")
            .send(ins("/memories/a", 0, "X"), vec![
                exact(Outcome::NotAFile { path: "/memories/a".into() }),
                exact(Outcome::InsertNotFound { path: "/memories/a".into() }),
                refused(),
            ])
            .done(),
        B::must("insert/fifo", "insert on a FIFO MUST be refused at once, never read.", &["spec:2.1/C27", "spec:2.3/C28"])
            .fifo("/memories/fifo")
            .send(ins("/memories/fifo", 0, "X"), vec![exact(Outcome::NotAFile { path: "/memories/fifo".into() }), refused()])
            .done(),
        B::must("insert/missing-file", "insert on a missing file MUST give the documented error.", &["spec:2.4/F13"])
            .send(ins("/memories/nope.txt", 0, "X"), vec![exact(Outcome::InsertNotFound { path: "/memories/nope.txt".into() })])
            .done(),
    ]
}
