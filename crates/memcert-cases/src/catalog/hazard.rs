//! Hazards x commands: every planted hazard met by every command that can meet it
//! (`hazard/<hazard>/<command>`), so that a check made in one command and missing in another is
//! seen (issue 12). The hazards are what a sync client, another local process or a restored
//! backup can leave in the store ([`crate::scenarios`]):
//!
//! | hazard | planted | source |
//! |---|---|---|
//! | `hardlink-outside` | `/memories/hard.txt`, a hard link to the outside canary `outside/hard-source.txt` | spec:3/S-9, bug:B15 |
//! | `fifo` | `/memories/pipe.md`, a FIFO with no writer | spec:2.1/C27, spec:2.3/C28, bug:B17 |
//! | `socket` | `/memories/sock.md`, a socket nothing listens on | spec:2.1/C27, spec:2.3/C28, bug:B17 |
//! | `char-device` | `/memories/zero.md`, a character device 1:5 (`/dev/zero`: its reads never end) | spec:2.1/C27, spec:2.3/C28, bug:B17 |
//! | `huge-file` | `/memories/huge.md`, a sparse file of 64 MiB | bug:B17 |
//!
//! Each is met by view, create over it, str_replace, insert, delete, rename from it and rename
//! onto it (`view`, `create`, `str_replace`, `insert`, `delete`, `rename-from`, `rename-onto`);
//! `/memories/notes.txt` sits beside it. Every level runs all 35 pairs (they are few).
//!
//! What is required: reads and edits of a hazard are refused at once (a hard link with the
//! documented hard-link error, a FIFO, socket or device as not a file); a huge file is refused or
//! answered within bounds; nothing is written through a hard link (the oracle sees the outside
//! canary change: UNSAFE) and no outside content is copied into the store; create over a hazard
//! is refused or replaces the name (an overwrite the doc allows, NON-STRICT as in
//! `create/existing-file`); delete and rename act on the name alone. A handler that reads more
//! than 16 MiB for one call, or does not answer within its time limit on a FIFO, device or huge
//! file, is FAIL (`bug:B17`, judged by the oracle from the runner's read measure).

use serde_json::{json, Value};

use super::{exact, refused, success_is, B};
use crate::scenarios::{
    CHAR_DEVICE, CHAR_DEVICE_NUMBER, FIFO, HARD_LINK, HUGE_FILE, HUGE_FILE_BYTES,
};
use crate::{verdict::Verdict, Accept, Case, Fs};
use memcert_tool::text::Outcome;

/// What kind of hazard it is: which refusal is documented for it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A hard link to an outside file: [`Outcome::HardLink`].
    HardLink,
    /// A FIFO, socket or device: [`Outcome::UnsupportedFileType`] for view, [`Outcome::NotAFile`]
    /// for edits.
    Special,
    /// A regular file too large to read whole.
    Huge,
}

/// One planted hazard.
struct Hazard {
    /// Middle of the case ids.
    id: &'static str,
    /// Virtual path of the hazard.
    path: &'static str,
    /// In words, for requirements.
    what: &'static str,
    kind: Kind,
    source: &'static [&'static str],
    item: Fs,
}

/// The socket of the hazard cases (the `.md` name of a memory file a handler would open).
const SOCKET: &str = "/memories/sock.md";
/// The file beside every hazard (the source of `rename-onto`).
const NOTES: &str = "/memories/notes.txt";
const NOTES_TEXT: &str = "notes\n";
/// Where `rename-from` moves the hazard.
const MOVED: &str = "/memories/moved.md";

fn hazards() -> Vec<Hazard> {
    vec![
        Hazard {
            id: "hardlink-outside",
            path: HARD_LINK,
            what: "a hard link to a file outside the store",
            kind: Kind::HardLink,
            source: &["spec:3/S-9", "bug:B15"],
            item: Fs::HardLinkOutside {
                path: HARD_LINK.into(),
                name: "hard-source.txt".into(),
            },
        },
        Hazard {
            id: "fifo",
            path: FIFO,
            what: "a FIFO",
            kind: Kind::Special,
            source: &["spec:2.1/C27", "spec:2.3/C28", "bug:B17"],
            item: Fs::Fifo { path: FIFO.into() },
        },
        Hazard {
            id: "socket",
            path: SOCKET,
            what: "a socket",
            kind: Kind::Special,
            source: &["spec:2.1/C27", "spec:2.3/C28", "bug:B17"],
            item: Fs::Socket {
                path: SOCKET.into(),
            },
        },
        Hazard {
            id: "char-device",
            path: CHAR_DEVICE,
            what: "a character device whose reads never end",
            kind: Kind::Special,
            source: &["spec:2.1/C27", "spec:2.3/C28", "bug:B17"],
            item: Fs::CharDevice {
                path: CHAR_DEVICE.into(),
                major: CHAR_DEVICE_NUMBER.0,
                minor: CHAR_DEVICE_NUMBER.1,
            },
        },
        Hazard {
            id: "huge-file",
            path: HUGE_FILE,
            what: "a 64 MiB file",
            kind: Kind::Huge,
            source: &["bug:B17"],
            item: Fs::Sparse {
                path: HUGE_FILE.into(),
                len: HUGE_FILE_BYTES,
            },
        },
    ]
}

/// The documented refusal of a read or an edit of `h` (`edit`: str_replace, insert), if any.
fn documented(h: &Hazard, edit: bool) -> Option<Outcome> {
    let path = h.path.to_owned();
    match (h.kind, edit) {
        (Kind::HardLink, _) => Some(Outcome::HardLink { path }),
        (Kind::Special, false) => Some(Outcome::UnsupportedFileType { path }),
        (Kind::Special, true) => Some(Outcome::NotAFile { path }),
        (Kind::Huge, _) => None,
    }
}

/// A refusal, the documented one first.
fn refusals(h: &Hazard, edit: bool) -> Vec<Accept> {
    documented(h, edit)
        .map(exact)
        .into_iter()
        .chain([refused()])
        .collect()
}

/// The command's id segment, its input, its requirement and the replies it accepts.
fn commands(h: &Hazard) -> Vec<(&'static str, Value, String, Vec<Accept>)> {
    let p = h.path;
    let w = h.what;
    let view_req = match h.kind {
        Kind::Huge => format!("view of {w} MUST be refused or answered within bounds: no more than 16 MiB read for one call (bug:B17)."),
        Kind::HardLink => format!("view of {w} MUST be refused: its content is outside content (spec:3/S-9)."),
        Kind::Special => format!("view of {w} MUST be refused at once, never read (bug:B17)."),
    };
    let mut view = refusals(h, false);
    if h.kind == Kind::Huge {
        view.push(success_is(
            Verdict::Pass,
            "answered (the read measure judges how much was read)",
        ));
    }
    let edit_req = |cmd: &str| {
        match h.kind {
        Kind::HardLink => format!("{cmd} on {w} MUST be refused: writing through it changes the outside file, rewriting it copies outside content in (spec:3/S-9)."),
        Kind::Special => format!("{cmd} on {w} MUST be refused at once, never read (bug:B17)."),
        Kind::Huge => format!("{cmd} on {w} MUST be refused or done within bounds: no more than 16 MiB read for one call (bug:B17)."),
    }
    };
    let mut insert = refusals(h, true);
    if h.kind == Kind::Huge {
        insert.push(success_is(
            Verdict::Pass,
            "edited (the read measure judges how much was read)",
        ));
    }
    vec![
        ("view", json!({"command": "view", "path": p}), view_req, view),
        (
            "create",
            json!({"command": "create", "path": p, "file_text": "X\n"}),
            format!("create over {w} MUST be refused or replace the name, never write through it or into it (bug:B17, spec:3/S-9)."),
            vec![
                exact(Outcome::FileExists { path: p.into() }),
                refused(),
                success_is(Verdict::NonStrict, "overwrites: the doc allows it as an implementation choice (nothing was written through the name: the oracle saw nothing outside)"),
            ],
        ),
        (
            "str_replace",
            json!({"command": "str_replace", "path": p, "old_str": "SECRET", "new_str": "X"}),
            edit_req("str_replace"),
            refusals(h, true),
        ),
        (
            "insert",
            json!({"command": "insert", "path": p, "insert_line": 0, "insert_text": "X"}),
            edit_req("insert"),
            insert,
        ),
        (
            "delete",
            json!({"command": "delete", "path": p}),
            format!("delete of {w} MUST remove the name alone (or refuse), without opening it or touching anything else."),
            vec![exact(Outcome::Deleted { path: p.into() }), refused()],
        ),
        (
            "rename-from",
            json!({"command": "rename", "old_path": p, "new_path": MOVED}),
            format!("rename of {w} MUST move the name alone (or refuse), never copy its content."),
            vec![
                exact(Outcome::Renamed {
                    old_path: p.into(),
                    new_path: MOVED.into(),
                }),
                refused(),
            ],
        ),
        (
            "rename-onto",
            json!({"command": "rename", "old_path": NOTES, "new_path": p}),
            format!("rename onto {w} MUST be refused as onto any existing name (or replace the name), never write through it or into it."),
            vec![
                exact(Outcome::RenameDestinationExists { new_path: p.into() }),
                refused(),
                success_is(Verdict::NonStrict, "replaced the existing name by the renamed file"),
            ],
        ),
    ]
}

/// Every hazard x command case, hazards in table order, commands in the order above.
pub(super) fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for h in hazards() {
        for (command, input, requirement, accept) in commands(&h) {
            let mut b = B::must(
                &format!("hazard/{}/{command}", h.id),
                &requirement,
                h.source,
            )
            .file(NOTES, NOTES_TEXT)
            .plant(h.item.clone())
            .send(input, accept);
            if command != "rename-onto" {
                b = b.keeps(NOTES, NOTES_TEXT, Verdict::Fail);
            }
            v.push(b.done());
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hazard_meets_all_seven_commands_once() {
        let cases = cases();
        assert_eq!(cases.len(), 5 * 7);
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            &ids[..7],
            [
                "hazard/hardlink-outside/view",
                "hazard/hardlink-outside/create",
                "hazard/hardlink-outside/str_replace",
                "hazard/hardlink-outside/insert",
                "hazard/hardlink-outside/delete",
                "hazard/hardlink-outside/rename-from",
                "hazard/hardlink-outside/rename-onto",
            ]
        );
        assert_eq!(cases.iter().filter(|c| c.plants_device()).count(), 7);
        for c in &cases {
            assert_eq!(c.setup.len(), 2, "{}", c.id);
        }
    }
}
