//! str_replace (`docs/spec/memory-tool.md` spec:2.3).

use serde_json::json;

use super::{error_is, exact, refused, B};
use crate::{verdict::Verdict, Case};
use memcert_tool::text::Outcome;

const FIVE: &str = "alpha\nbeta\ngamma\ndelta\nepsilon\n";

fn sr(path: &str, old: &str, new: &str) -> serde_json::Value {
    json!({"command": "str_replace", "path": path, "old_str": old, "new_str": new})
}

fn excerpt(from: usize, lines: &[&str]) -> Outcome {
    Outcome::Edited {
        lines: lines
            .iter()
            .enumerate()
            .map(|(i, l)| (from + i, l.to_string()))
            .collect(),
    }
}

pub(super) fn cases() -> Vec<Case> {
    vec![
        B::must("str_replace/success", "str_replace MUST replace the one occurrence and show lines k-2..k+2 of the new content.", &["spec:2.3/E1"])
            .file("/memories/sr.txt", FIVE)
            .send(sr("/memories/sr.txt", "gamma", "GAMMA"), vec![exact(excerpt(1, &["alpha", "beta", "GAMMA", "delta", "epsilon"]))])
            .keeps("/memories/sr.txt", "alpha\nbeta\nGAMMA\ndelta\nepsilon\n", Verdict::Fail)
            .done(),
        B::must("str_replace/success/excerpt-top", "The excerpt MUST be clipped at the first line.", &["spec:2.3/E13"])
            .file("/memories/sr.txt", FIVE)
            .send(sr("/memories/sr.txt", "alpha", "ALPHA"), vec![exact(excerpt(1, &["ALPHA", "beta", "gamma"]))])
            .keeps("/memories/sr.txt", "ALPHA\nbeta\ngamma\ndelta\nepsilon\n", Verdict::Fail)
            .done(),
        B::must("str_replace/success/excerpt-end", "The excerpt MUST be clipped at the end and may show the empty line after a final newline.", &["spec:2.3/E14"])
            .file("/memories/sr.txt", FIVE)
            .send(sr("/memories/sr.txt", "epsilon", "EPSILON"), vec![exact(excerpt(3, &["gamma", "delta", "EPSILON", ""]))])
            .keeps("/memories/sr.txt", "alpha\nbeta\ngamma\ndelta\nEPSILON\n", Verdict::Fail)
            .done(),
        B::must("str_replace/not-found-text", "An old_str that does not occur MUST give the documented error and change nothing.", &["spec:2.3/E2"])
            .file("/memories/sr.txt", FIVE)
            .send(sr("/memories/sr.txt", "nope", "x"), vec![exact(Outcome::NoMatch { old_str: "nope".into(), path: "/memories/sr.txt".into() })])
            .keeps("/memories/sr.txt", FIVE, Verdict::Fail)
            .done(),
        B::must("str_replace/multiple/different-lines", "Several matches MUST be refused, listing each line once, ascending.", &["spec:2.3/E3"])
            .file("/memories/m.txt", "foo\nbar\nfoo\n")
            .send(sr("/memories/m.txt", "foo", "x"), vec![exact(Outcome::MultipleMatches { old_str: "foo".into(), lines: vec![1, 3] })])
            .keeps("/memories/m.txt", "foo\nbar\nfoo\n", Verdict::Fail)
            .done(),
        B::must("str_replace/multiple/same-line", "Two matches on one line MUST be refused (old_str is not unique).", &["spec:2.3/E4"])
            .file("/memories/m.txt", "foo foo\nbar\n")
            .send(sr("/memories/m.txt", "foo", "X"), vec![
                exact(Outcome::MultipleMatches { old_str: "foo".into(), lines: vec![1] }),
                error_is(Verdict::NonStrict, "refused, but the line list repeats a line (Python SDK: 1, 1)"),
            ])
            .keeps("/memories/m.txt", "foo foo\nbar\n", Verdict::Fail)
            .done(),
        B::must("str_replace/multiline-old-str", "An old_str spanning lines MUST match across the newline.", &["spec:2.3/E6"])
            .file("/memories/ml.txt", "Hello\nWorld\n")
            .send(sr("/memories/ml.txt", "Hello\nWorld", "Hi\nThere"), vec![exact(excerpt(1, &["Hi", "There", ""]))])
            .keeps("/memories/ml.txt", "Hi\nThere\n", Verdict::Fail)
            .done(),
        B::should("str_replace/new-str-omitted", "Without new_str, old_str SHOULD be deleted, as the doc says.", &["spec:2.3/X1"])
            .file("/memories/d.txt", "alpha\nbeta\ngamma\n")
            .send(json!({"command": "str_replace", "path": "/memories/d.txt", "old_str": "beta"}), vec![
                exact(excerpt(1, &["alpha", "", "gamma", ""])),
                error_is(Verdict::NonStrict, "refused instead of deleting old_str"),
            ])
            .done(),
        B::must("str_replace/empty-old-str", "An empty old_str MUST be refused and change nothing.", &["spec:2.3/E8"])
            .file("/memories/e.txt", "ab\n")
            .send(sr("/memories/e.txt", "", "Z"), vec![exact(Outcome::EmptyOldStr { path: "/memories/e.txt".into() }), refused()])
            .keeps("/memories/e.txt", "ab\n", Verdict::Fail)
            .done(),
        B::must("str_replace/directory", "str_replace on a directory MUST be refused.", &["spec:2.3/E9"])
            .file("/memories/a/x.txt", "x")
            .send(sr("/memories/a", "x", "y"), vec![
                exact(Outcome::NotAFile { path: "/memories/a".into() }),
                exact(Outcome::StrReplaceNotFound { path: "/memories/a".into() }),
                refused(),
            ])
            .done(),
        B::must("str_replace/missing-file", "str_replace on a missing file MUST give the documented error.", &["spec:2.3/E10"])
            .send(sr("/memories/nope.txt", "a", "b"), vec![exact(Outcome::StrReplaceNotFound { path: "/memories/nope.txt".into() })])
            .done(),
        B::must("str_replace/dollar-literal", "new_str MUST be inserted literally ($&, $$ and $1 are not patterns).", &["spec:2.3/E11"])
            .file("/memories/p.txt", "price\n")
            .send(sr("/memories/p.txt", "price", "$&$$$1"), vec![exact(excerpt(1, &["$&$$$1", ""]))])
            .keeps("/memories/p.txt", "$&$$$1\n", Verdict::Fail)
            .done(),
        B::must("str_replace/not-utf8", "str_replace on a file that is not UTF-8 MUST be refused and leave its bytes alone.", &["spec:2.3/X12"])
            .file("/memories/bin.dat", b"\xffabc\n")
            .send(sr("/memories/bin.dat", "abc", "xyz"), vec![exact(Outcome::NotUtf8 { path: "/memories/bin.dat".into() }), refused()])
            .check("/memories/bin.dat", crate::Expected::File(b"\xffabc\n".to_vec()), Verdict::Fail, "the bytes are unchanged")
            .done(),
        B::must("str_replace/fifo", "str_replace on a FIFO MUST be refused at once.", &["spec:2.3/C28"])
            .fifo("/memories/fifo")
            .send(sr("/memories/fifo", "a", "b"), vec![exact(Outcome::NotAFile { path: "/memories/fifo".into() }), refused()])
            .done(),
    ]
}
