//! view: listings and file views (`docs/spec/memory-tool.md` spec:2.1).

use serde_json::json;

use super::{error_is, exact, exact_is, only, refused, success_is, B};
use crate::{verdict::Verdict, Case};
use memcert_tool::text::{ListEntry, Outcome, Profile};

fn dir(path: &str) -> ListEntry {
    ListEntry {
        size: 4096,
        path: path.into(),
        dir: true,
    }
}

fn file(path: &str, size: u64) -> ListEntry {
    ListEntry {
        size,
        path: path.into(),
        dir: false,
    }
}

fn listing(path: &str, entries: Vec<ListEntry>) -> Outcome {
    Outcome::ViewDir {
        path: path.into(),
        size: 4096,
        entries,
    }
}

fn lines(path: &str, from: usize, text: &[&str]) -> Outcome {
    Outcome::view_file(path, from, text)
}

const TEN: &str = "line1\nline2\nline3\nline4\nline5\nline6\nline7\nline8\nline9\nline10\n";

fn view(path: &str) -> serde_json::Value {
    json!({"command": "view", "path": path})
}

fn ranged(path: &str, range: serde_json::Value) -> serde_json::Value {
    json!({"command": "view", "path": path, "view_range": range})
}

#[allow(clippy::too_many_lines)] // one table literal: the view cases
pub(super) fn cases() -> Vec<Case> {
    vec![
        B::must("view/dir/empty-root", "view of an empty /memories MUST list the root itself under the documented header.", &["spec:2.1/A1"])
            .send(view("/memories"), vec![exact(listing("/memories", vec![]))])
            .done(),
        B::should("view/dir/root-trailing-slash", "view of /memories/ SHOULD list the root with one spelling of each entry (no double slash).", &["spec:2.1/A2"])
            .file("/memories/a.txt", "x")
            .send(view("/memories/"), vec![
                exact(listing("/memories/", vec![file("/memories/a.txt", 1)])),
                success_is(Verdict::NonStrict, "a listing that prefixes entries with the raw path (/memories//a.txt)"),
            ])
            .done(),
        B::must("view/dir/nested", "A listing MUST show children and grandchildren in pre-order, sorted by name, and nothing deeper.", &["spec:2.1/D3"])
            .file("/memories/a/x.txt", "0123456789")
            .file("/memories/a/b/y.txt", "1")
            .file("/memories/a/b/c/z.txt", "deep")
            .send(view("/memories/a"), vec![exact(listing("/memories/a", vec![
                dir("/memories/a/b"),
                dir("/memories/a/b/c"),
                file("/memories/a/b/y.txt", 1),
                file("/memories/a/x.txt", 10),
            ]))])
            .done(),
        B::must("view/dir/hidden-names", "A listing MUST leave out names that start with a dot, at every level.", &["spec:2.1/D3"])
            .file("/memories/.hidden", "h")
            .file("/memories/.hdir/inner.txt", "i")
            .file("/memories/seen/.dot.txt", "d")
            .file("/memories/seen/ok.txt", "ok")
            .send(view("/memories"), vec![exact(listing("/memories", vec![
                dir("/memories/seen"),
                file("/memories/seen/ok.txt", 2),
            ]))])
            .done(),
        B::must("view/dir/node-modules", "A listing MUST leave out node_modules where its header says so.", &["spec:2.1/A1", "spec:2.1/D3"])
            .file("/memories/node_modules/m.txt", "m")
            .file("/memories/n.txt", "n")
            .send(view("/memories"), vec![
                exact(listing("/memories", vec![file("/memories/n.txt", 1)])),
                only(exact_is(Verdict::Pass, listing("/memories", vec![
                    file("/memories/n.txt", 1),
                    dir("/memories/node_modules"),
                    file("/memories/node_modules/m.txt", 1),
                ]), "the python-sdk header does not promise to hide node_modules"), &[Profile::PythonSdk]),
            ])
            .done(),
        B::must("view/dir/sizes", "A listing MUST print file sizes with the profile's size rule.", &["spec:2.1/D4"])
            .file("/memories/s/empty.txt", "")
            .file("/memories/s/small.txt", "x".repeat(120))
            .file("/memories/s/mid.txt", "x".repeat(1536))
            .file("/memories/s/page.txt", "x".repeat(4096))
            .send(view("/memories/s"), vec![exact(listing("/memories/s", vec![
                file("/memories/s/empty.txt", 0),
                file("/memories/s/mid.txt", 1536),
                file("/memories/s/page.txt", 4096),
                file("/memories/s/small.txt", 120),
            ]))])
            .done(),
        B::must("view/dir/sort-order", "A listing MUST sort names by code point.", &["spec:2.1/D5"])
            .file("/memories/o/a", "")
            .file("/memories/o/_", "")
            .file("/memories/o/B", "")
            .send(view("/memories/o"), vec![exact(listing("/memories/o", vec![
                file("/memories/o/B", 0),
                file("/memories/o/_", 0),
                file("/memories/o/a", 0),
            ]))])
            .done(),
        B::must("view/dir/ignores-view-range", "view_range on a directory MUST be ignored.", &["spec:2.1/C20"])
            .file("/memories/d/x.txt", "x")
            .send(ranged("/memories/d", json!([1, 2])), vec![exact(listing("/memories/d", vec![file("/memories/d/x.txt", 1)]))])
            .done(),
        // The cases whose requirement is the numbered format itself declare it
        // (`tests_view_format`): a view without line numbers is FAIL there, other words elsewhere.
        B::must("view/file/trailing-newline", "A file view MUST number every line, 6 wide, after the documented header.", &["spec:2.1/C1"])
            .tests_view_format()
            .file("/memories/notes.txt", "Hello\nWorld\n")
            .send(view("/memories/notes.txt"), vec![exact(lines("/memories/notes.txt", 1, &["Hello", "World", ""]))])
            .done(),
        B::must("view/file/no-trailing-newline", "A file view MUST show a last line without a newline.", &["spec:2.1/C2"])
            .file("/memories/abc.txt", "a\nb\nc")
            .send(view("/memories/abc.txt"), vec![exact(lines("/memories/abc.txt", 1, &["a", "b", "c"]))])
            .done(),
        B::must("view/file/empty", "A view of an empty file MUST show one empty line 1.", &["spec:2.1/C3"])
            .tests_view_format()
            .file("/memories/empty.txt", "")
            .send(view("/memories/empty.txt"), vec![exact(lines("/memories/empty.txt", 1, &[""]))])
            .done(),
        B::must("view/file/crlf", "A file view MUST keep a carriage return inside its line.", &["spec:2.1/C24"])
            .file("/memories/crlf.txt", "a\r\nb\r\n")
            .send(view("/memories/crlf.txt"), vec![exact(lines("/memories/crlf.txt", 1, &["a\r", "b\r", ""]))])
            .done(),
        B::must("view/file/hidden-direct", "A hidden file MUST be viewable by its path (hiding applies to listings only).", &["spec:2.1/D7"])
            .file("/memories/.hidden", "secret of mine\n")
            .send(view("/memories/.hidden"), vec![exact(lines("/memories/.hidden", 1, &["secret of mine", ""]))])
            .done(),
        B::must("view/file/view-range/to-end", "view_range [start, -1] MUST show from start to the end of the file.", &["spec:2.1/C4"])
            .file("/memories/ten.txt", TEN)
            .send(ranged("/memories/ten.txt", json!([9, -1])), vec![exact(lines("/memories/ten.txt", 9, &["line9", "line10", ""]))])
            .done(),
        B::must("view/file/view-range/middle", "view_range [2, 3] MUST show lines 2 and 3 with their numbers.", &["spec:2.1/C5"])
            .tests_view_format()
            .file("/memories/ten.txt", TEN)
            .send(ranged("/memories/ten.txt", json!([2, 3])), vec![exact(lines("/memories/ten.txt", 2, &["line2", "line3"]))])
            .done(),
        B::should("view/file/view-range/end-clipped", "An end past the last line SHOULD be clipped to the last line.", &["spec:2.1/C8"])
            .file("/memories/ten.txt", TEN)
            .send(ranged("/memories/ten.txt", json!([8, 20])), vec![exact(lines("/memories/ten.txt", 8, &["line8", "line9", "line10", ""]))])
            .done(),
        B::should("view/file/view-range/inverted", "An inverted view_range SHOULD be refused with an error the model can act on.", &["spec:2.1/C7"])
            .file("/memories/ten.txt", TEN)
            .send(ranged("/memories/ten.txt", json!([5, 2])), vec![
                exact(Outcome::InvalidViewRange { path: "/memories/ten.txt".into(), start: 5, end: 2, lines: 11 }),
                refused(),
                exact_is(Verdict::NonStrict, lines("/memories/ten.txt", 5, &[]), "an empty view instead of an error (both SDKs)"),
            ])
            .done(),
        B::should("view/file/view-range/start-zero", "view_range lines are 1-based; a start of 0 SHOULD be refused.", &["spec:2.1/C6"])
            .file("/memories/ten.txt", TEN)
            .send(ranged("/memories/ten.txt", json!([0, 5])), vec![
                exact(Outcome::InvalidViewRange { path: "/memories/ten.txt".into(), start: 0, end: 5, lines: 11 }),
                refused(),
                exact_is(Verdict::NonStrict, lines("/memories/ten.txt", 1, &["line1", "line2", "line3", "line4", "line5"]), "start clamped to 1 (both SDKs)"),
            ])
            .done(),
        B::should("view/file/view-range/past-end", "A view_range starting after the last line SHOULD be refused.", &["spec:2.1/C9"])
            .file("/memories/ten.txt", TEN)
            .send(ranged("/memories/ten.txt", json!([20, 25])), vec![
                exact(Outcome::InvalidViewRange { path: "/memories/ten.txt".into(), start: 20, end: 25, lines: 11 }),
                refused(),
                exact_is(Verdict::NonStrict, lines("/memories/ten.txt", 20, &[]), "an empty view instead of an error (both SDKs)"),
            ])
            .done(),
        B::must("view/missing", "view of a missing path MUST give the documented error.", &["spec:2.1/C21"])
            .send(view("/memories/nope.txt"), vec![exact(Outcome::ViewNotFound { path: "/memories/nope.txt".into() })])
            .done(),
        B::must("view/missing/parent-is-file", "view below a file MUST be answered as a missing path, without host paths.", &["spec:2.1/C23", "bug:B07"])
            .file("/memories/notes.txt", "n\n")
            .send(view("/memories/notes.txt/child"), vec![exact(Outcome::ViewNotFound { path: "/memories/notes.txt/child".into() }), refused()])
            .done(),
        B::must("view/file/line-limit/over", "A file of more than 999,999 lines MUST be refused with the documented error.", &["spec:2.1/C30"])
            .lines("/memories/max.txt", 1_000_000)
            .send(view("/memories/max.txt"), vec![exact(Outcome::TooManyLines { path: "/memories/max.txt".into(), lines: 1_000_000 }), refused()])
            .done(),
        B::should("view/file/line-limit/exactly", "A file of exactly 999,999 lines SHOULD be shown (the limit is 999,999 lines, not 999,998).", &["spec:2.1/C30", "spec:2.1/C33"])
            .lines("/memories/max.txt", 999_999)
            .send(view("/memories/max.txt"), vec![
                success_is(Verdict::Pass, "shown"),
                error_is(Verdict::NonStrict, "refuses a file of exactly 999,999 lines (off by one, both SDKs)"),
            ])
            .done(),
        B::must("view/file/not-utf8", "A file that is not UTF-8 MUST be refused with an error, not shown with replacement characters.", &["spec:2.1/C25"])
            .file("/memories/bin.dat", b"\xff\xfe\x00abc")
            .send(view("/memories/bin.dat"), vec![exact(Outcome::NotUtf8 { path: "/memories/bin.dat".into() }), refused()])
            .done(),
        B::must("view/fifo", "A FIFO MUST be refused at once, never read (which would hang).", &["spec:2.1/C27"])
            .fifo("/memories/fifo")
            .send(view("/memories/fifo"), vec![exact(Outcome::UnsupportedFileType { path: "/memories/fifo".into() }), refused()])
            .done(),
    ]
}
