//! Hazards x commands: every planted hazard met by every command that can meet it
//! (`hazard/<hazard>/<command>`), so that a check made in one command and missing in another is
//! seen (issue 12). The hazards are what a sync client, another local process or a restored
//! backup can leave in the store ([`crate::scenarios`]):
//!
//! | hazard | planted (at the base depth) | source |
//! |---|---|---|
//! | `hardlink-outside` | `/memories/hard.txt`, a hard link to the outside canary `outside/hard-source.txt` | spec:3/S-9, bug:B15 |
//! | `fifo` | `/memories/pipe.md`, a FIFO with no writer | spec:2.1/C27, spec:2.3/C28, bug:B17 |
//! | `socket` | `/memories/sock.md`, a socket nothing listens on | spec:2.1/C27, spec:2.3/C28, bug:B17 |
//! | `char-device` | `/memories/zero.md`, a character device 1:5 (`/dev/zero`: its reads never end) | spec:2.1/C27, spec:2.3/C28, bug:B17 |
//! | `huge-file` | `/memories/huge.md`, a sparse file of 64 MiB | bug:B17 |
//! | `symlink-outside-file` | `/memories/evil.md`, a symlink to the outside canary `outside/secret.txt` | spec:3/S-1, bug:B09 (delete: bug:B14; rename from: bug:B13) |
//! | `symlink-outside-dir` | `/memories/linkdir`, a symlink to the outside folder `outside/` (commands aim below it, delete and rename at the link) | spec:3/S-1, bug:B09, bug:B10, bug:B13, bug:B14 (delete: bug:B14; rename from: bug:B13) |
//! | `symlink-inside` | `/memories/inner.md`, a symlink to the memory file `/memories/target.txt` | spec:3/S-2 to spec:3/S-7, bug:B14 |
//! | `unreadable-file` | `/memories/locked.md`, a file with mode 000 (SKIPPED when the handler runs as root) | bug:B07 |
//! | `deep-folder` | `/memories/deep/d/.../d/bottom.txt`, 32 folders deep | bug:B14, spec:3/P-10 |
//! | `wide-folder` | `/memories/wide/f00150.txt`, one of 300 files in one folder | spec:2.1/D3 |
//! | `linked-root` | `/memories` itself a symlink to the outside folder `outside/` | bug:B10 |
//!
//! Each is met by view, create over it, str_replace, insert, delete, rename from it and rename
//! onto it (`view`, `create`, `str_replace`, `insert`, `delete`, `rename-from`, `rename-onto`);
//! `/memories/notes.txt` sits beside it (but in `linked-root`, where nothing can be planted in
//! the store: its commands aim at the canaries of `outside/`). Every level runs all pairs at the
//! base depth, the hazard directly in `/memories` ([`cases`]); `full` runs them again one and
//! three folders down, `/memories/a/...` and `/memories/a/b/c/...`
//! (`hazard/<hazard>/<command>/depth-1`, `.../depth-3`: [`deeper`]), where the notes file, the
//! rename destination and the link targets in the store move down with the hazard.
//! `linked-root` has no depth variants: the hazard is the root.
//!
//! What is required: reads and edits of a hazard are refused at once (a hard link with the
//! documented hard-link error, a FIFO, socket or device as not a file); a huge file is refused or
//! answered within bounds; nothing is written through a hard link (the oracle sees the outside
//! canary change: UNSAFE) and no outside content is copied into the store; create over a hazard
//! is refused or replaces the name (an overwrite the doc allows, NON-STRICT as in
//! `create/existing-file`); delete and rename act on the name alone. A handler that reads more
//! than 16 MiB for one call, or does not answer within its time limit on a FIFO, device or huge
//! file, is FAIL (`bug:B17`, judged by the oracle from the runner's read measure).
//!
//! The links, the unreadable file, the deep and wide folders and the linked root are graded as
//! the cases of `symlink/...` and `scenario/...` grade the same situation: a read or write through
//! a link to the outside is UNSAFE (the oracle), a refusal with the documented wording PASS and
//! with other wording PASS too (wording not graded: `refused`); create, str_replace and insert
//! on a link to an outside file leave the link (`symlink/outside-file/*`); through an in-store
//! link reading is INFO and writing NON-STRICT (`symlink/inner-file/*`), delete and rename act on
//! the link and never touch its target (UNSAFE otherwise); an unreadable file is refused
//! (`scenario/no-permission/file/*`); a file deep down or in a wide folder is an ordinary file,
//! whose refusal is NON-STRICT (`scenario/deep-chain/view-bottom`); under a linked root every
//! command is refused or served from somewhere else than the outside (`scenario/root-symlink/*`).

use serde_json::{json, Value};

use super::{error_is, exact, outside, refused, success_is, B};
use crate::scenarios::{
    many_name, CHAR_DEVICE, CHAR_DEVICE_NUMBER, FIFO, HARD_LINK, HUGE_FILE, HUGE_FILE_BYTES,
    LOCKED_TEXT,
};
use crate::{verdict::Verdict, Accept, Case, Expected, Fs, LinkTo};
use memcert_tool::text::Outcome;

/// What kind of hazard it is: which refusal is documented for it, which replies are accepted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A hard link to an outside file: [`Outcome::HardLink`].
    HardLink,
    /// A FIFO, socket or device: [`Outcome::UnsupportedFileType`] for view, [`Outcome::NotAFile`]
    /// for edits.
    Special,
    /// A regular file too large to read whole.
    Huge,
    /// A symlink to an outside file: [`Outcome::Symlink`], the link left alone.
    OutsideFile,
    /// A symlink to an outside folder: [`Outcome::Symlink`] for a path below it.
    OutsideDir,
    /// A symlink to a memory file in the store.
    Inside,
    /// A file with mode 000: `EACCES` as the reference words it.
    Unreadable,
    /// An ordinary file at the bottom of a deep chain or in a wide folder.
    Ordinary,
    /// The store root itself a link to the outside.
    LinkedRoot,
}

/// One planted hazard at one depth.
struct Hazard {
    /// Middle of the case ids.
    id: &'static str,
    /// Virtual path of the hazard (of the file in it, for `deep-folder` and `wide-folder`).
    path: String,
    /// In words, for requirements.
    what: &'static str,
    kind: Kind,
    source: &'static [&'static str],
    /// Laid out after the notes file, in order.
    items: Vec<Fs>,
    /// The folder holding the hazard, the notes file and the rename destination.
    dir: String,
}

/// The socket of the hazard cases at the base depth (the `.md` name of a memory file a handler
/// would open).
const SOCKET: &str = "/memories/sock.md";
/// The file beside every hazard (the source of `rename-onto`), in the hazard's folder.
const NOTES_NAME: &str = "notes.txt";
const NOTES_TEXT: &str = "notes\n";
/// Where `rename-from` moves the hazard, in the hazard's folder.
const MOVED_NAME: &str = "moved.md";
/// Content of the in-store target of `symlink-inside`.
const TARGET_TEXT: &str = "target text\n";
/// Folders of the `deep-folder` chain: deep enough to be a chain, cheap to lay out.
pub const DEEP_FOLDER_DEPTH: usize = 32;
/// Files of the `wide-folder` folder: a few hundred, cheap to lay out.
pub const WIDE_FOLDER_COUNT: usize = 300;
/// The depths `full` adds ([`deeper`]): one and three folders below `/memories`.
pub const DEEPER: [usize; 2] = [1, 3];

/// The folder `depth` levels below `/memories`: `/memories`, `/memories/a`, `/memories/a/b/c`.
fn folder(depth: usize) -> String {
    let mut p = "/memories".to_owned();
    for name in ["a", "b", "c", "e", "f", "g"].iter().cycle().take(depth) {
        p.push('/');
        p.push_str(name);
    }
    p
}

/// Every hazard with its folder `depth` levels below `/memories` (`linked-root` only at 0).
#[allow(clippy::too_many_lines)] // one table literal: the hazards
fn hazards(depth: usize) -> Vec<Hazard> {
    let d = folder(depth);
    let at = |name: &str| format!("{d}/{name}");
    // The first version's hazards at their documented paths (crate::scenarios), moved down.
    let down = |base: &str| format!("{d}{}", base.strip_prefix("/memories").unwrap_or(base));
    let special = &["spec:2.1/C27", "spec:2.3/C28", "bug:B17"][..];
    let mut v = vec![
        Hazard {
            id: "hardlink-outside",
            path: down(HARD_LINK),
            what: "a hard link to a file outside the store",
            kind: Kind::HardLink,
            source: &["spec:3/S-9", "bug:B15"],
            items: vec![Fs::HardLinkOutside {
                path: down(HARD_LINK),
                name: "hard-source.txt".into(),
            }],
            dir: d.clone(),
        },
        Hazard {
            id: "fifo",
            path: down(FIFO),
            what: "a FIFO",
            kind: Kind::Special,
            source: special,
            items: vec![Fs::Fifo { path: down(FIFO) }],
            dir: d.clone(),
        },
        Hazard {
            id: "socket",
            path: down(SOCKET),
            what: "a socket",
            kind: Kind::Special,
            source: special,
            items: vec![Fs::Socket { path: down(SOCKET) }],
            dir: d.clone(),
        },
        Hazard {
            id: "char-device",
            path: down(CHAR_DEVICE),
            what: "a character device whose reads never end",
            kind: Kind::Special,
            source: special,
            items: vec![Fs::CharDevice {
                path: down(CHAR_DEVICE),
                major: CHAR_DEVICE_NUMBER.0,
                minor: CHAR_DEVICE_NUMBER.1,
            }],
            dir: d.clone(),
        },
        Hazard {
            id: "huge-file",
            path: down(HUGE_FILE),
            what: "a 64 MiB file",
            kind: Kind::Huge,
            source: &["bug:B17"],
            items: vec![Fs::Sparse {
                path: down(HUGE_FILE),
                len: HUGE_FILE_BYTES,
            }],
            dir: d.clone(),
        },
        Hazard {
            id: "symlink-outside-file",
            path: at("evil.md"),
            what: "a symlink to a file outside the store",
            kind: Kind::OutsideFile,
            source: &["spec:3/S-1", "bug:B09"],
            items: vec![Fs::Symlink {
                path: at("evil.md"),
                target: outside("secret.txt"),
            }],
            dir: d.clone(),
        },
        Hazard {
            id: "symlink-outside-dir",
            path: at("linkdir"),
            what: "a symlink to a folder outside the store",
            kind: Kind::OutsideDir,
            source: &["spec:3/S-1", "bug:B09", "bug:B10", "bug:B13", "bug:B14"],
            items: vec![Fs::Symlink {
                path: at("linkdir"),
                target: outside(""),
            }],
            dir: d.clone(),
        },
        Hazard {
            id: "symlink-inside",
            path: at("inner.md"),
            what: "a symlink to a memory file in the store",
            kind: Kind::Inside,
            source: &[
                "spec:3/S-2",
                "spec:3/S-4",
                "spec:3/S-6",
                "spec:3/S-7",
                "bug:B14",
            ],
            items: vec![
                Fs::File {
                    path: at("target.txt"),
                    content: TARGET_TEXT.as_bytes().to_vec(),
                },
                Fs::Symlink {
                    path: at("inner.md"),
                    target: LinkTo::Inside(at("target.txt")),
                },
            ],
            dir: d.clone(),
        },
        Hazard {
            id: "unreadable-file",
            path: at("locked.md"),
            what: "a file the handler may not read (mode 000)",
            kind: Kind::Unreadable,
            source: &["bug:B07"],
            items: vec![
                Fs::File {
                    path: at("locked.md"),
                    content: LOCKED_TEXT.as_bytes().to_vec(),
                },
                Fs::Mode {
                    path: at("locked.md"),
                    mode: 0o000,
                },
            ],
            dir: d.clone(),
        },
        Hazard {
            id: "deep-folder",
            path: format!(
                "{}/bottom.txt",
                at(&format!("deep{}", "/d".repeat(DEEP_FOLDER_DEPTH)))
            ),
            what: "a file 32 folders deep",
            kind: Kind::Ordinary,
            source: &["bug:B14", "spec:3/P-10"],
            items: vec![Fs::DeepChain {
                path: at("deep"),
                depth: DEEP_FOLDER_DEPTH,
            }],
            dir: d.clone(),
        },
        Hazard {
            id: "wide-folder",
            path: format!("{}/{}", at("wide"), many_name(WIDE_FOLDER_COUNT / 2)),
            what: "a file in a folder of 300 files",
            kind: Kind::Ordinary,
            source: &["spec:2.1/D3"],
            items: vec![Fs::ManyFiles {
                dir: at("wide"),
                count: WIDE_FOLDER_COUNT,
            }],
            dir: d.clone(),
        },
    ];
    if depth == 0 {
        v.push(Hazard {
            id: "linked-root",
            path: "/memories".into(),
            what: "a store root that is a symlink to the outside",
            kind: Kind::LinkedRoot,
            source: &["bug:B10"],
            items: crate::scenarios::root_symlink().setup,
            dir: d,
        });
    }
    v
}

/// The documented refusal of a read or an edit of `h` (`edit`: str_replace, insert), if any.
fn documented(h: &Hazard, edit: bool) -> Option<Outcome> {
    let path = h.path.clone();
    match (h.kind, edit) {
        (Kind::HardLink, _) => Some(Outcome::HardLink { path }),
        (Kind::Special, false) => Some(Outcome::UnsupportedFileType { path }),
        (Kind::Special, true) => Some(Outcome::NotAFile { path }),
        (Kind::OutsideFile | Kind::Inside, _) => Some(Outcome::Symlink { path }),
        (Kind::Unreadable, _) => Some(denied(&path)),
        (Kind::Huge | Kind::OutsideDir | Kind::Ordinary | Kind::LinkedRoot, _) => None,
    }
}

/// `EACCES` as the reference words it (as `scenario/no-permission/*`).
fn denied(path: &str) -> Outcome {
    Outcome::IoError {
        path: path.into(),
        kind: "permission denied (os error 13)".into(),
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

/// One command against one hazard: its id segment, whether its requirement is a SHOULD, the spec
/// rows it cites when they are the command's own (else the hazard's), its input, its
/// requirement, the replies it accepts and the checks after it.
struct Cmd {
    name: &'static str,
    should: bool,
    source: Option<&'static [&'static str]>,
    input: Value,
    requirement: String,
    accept: Vec<Accept>,
    checks: Vec<(String, Expected, Verdict, String)>,
}

impl Cmd {
    fn new(name: &'static str, input: Value, requirement: String, accept: Vec<Accept>) -> Cmd {
        Cmd {
            name,
            should: false,
            source: None,
            input,
            requirement,
            accept,
            checks: Vec::new(),
        }
    }
    fn should(mut self) -> Cmd {
        self.should = true;
        self
    }
    /// Cite these rows instead of the hazard's (the row of the command's own `symlink/...` case).
    fn cites(mut self, source: &'static [&'static str]) -> Cmd {
        self.source = Some(source);
        self
    }
    fn check(mut self, path: &str, expect: Expected, verdict: Verdict, what: &str) -> Cmd {
        self.checks
            .push((path.to_owned(), expect, verdict, what.to_owned()));
        self
    }
    fn keeps(self, path: &str, content: &str, verdict: Verdict) -> Cmd {
        let what = format!("{path} keeps its content");
        self.check(
            path,
            Expected::File(content.as_bytes().to_vec()),
            verdict,
            &what,
        )
    }
}

fn view(p: &str) -> Value {
    json!({"command": "view", "path": p})
}
fn create(p: &str) -> Value {
    json!({"command": "create", "path": p, "file_text": "X\n"})
}
fn str_replace(p: &str, old: &str) -> Value {
    json!({"command": "str_replace", "path": p, "old_str": old, "new_str": "X"})
}
fn insert(p: &str) -> Value {
    json!({"command": "insert", "path": p, "insert_line": 0, "insert_text": "X"})
}
fn delete(p: &str) -> Value {
    json!({"command": "delete", "path": p})
}
fn rename(from: &str, to: &str) -> Value {
    json!({"command": "rename", "old_path": from, "new_path": to})
}
fn renamed(from: &str, to: &str) -> Outcome {
    Outcome::Renamed {
        old_path: from.into(),
        new_path: to.into(),
    }
}
fn replaced_by_rename() -> Accept {
    success_is(
        Verdict::NonStrict,
        "replaced the existing name by the renamed file",
    )
}

/// The seven commands against `h`, in id order.
fn commands(h: &Hazard) -> Vec<Cmd> {
    match h.kind {
        Kind::HardLink | Kind::Special | Kind::Huge => special_commands(h),
        Kind::OutsideFile | Kind::OutsideDir => outside_link_commands(h),
        Kind::Inside => inside_link_commands(h),
        Kind::Unreadable => unreadable_commands(h),
        Kind::Ordinary => ordinary_commands(h),
        Kind::LinkedRoot => linked_root_commands(),
    }
}

/// Hard link, FIFO, socket, device, huge file: the 35 cases of the first version.
fn special_commands(h: &Hazard) -> Vec<Cmd> {
    let p = h.path.as_str();
    let w = h.what;
    let notes = format!("{}/{NOTES_NAME}", h.dir);
    let moved = format!("{}/{MOVED_NAME}", h.dir);
    let view_req = match h.kind {
        Kind::Huge => format!("view of {w} MUST be refused or answered within bounds: no more than 16 MiB read for one call (bug:B17)."),
        Kind::HardLink => format!("view of {w} MUST be refused: its content is outside content (spec:3/S-9)."),
        _ => format!("view of {w} MUST be refused at once, never read (bug:B17)."),
    };
    let mut view_ok = refusals(h, false);
    if h.kind == Kind::Huge {
        view_ok.push(success_is(
            Verdict::Pass,
            "answered (the read measure judges how much was read)",
        ));
    }
    let edit_req = |cmd: &str| {
        match h.kind {
        Kind::HardLink => format!("{cmd} on {w} MUST be refused: writing through it changes the outside file, rewriting it copies outside content in (spec:3/S-9)."),
        Kind::Huge => format!("{cmd} on {w} MUST be refused or done within bounds: no more than 16 MiB read for one call (bug:B17)."),
        _ => format!("{cmd} on {w} MUST be refused at once, never read (bug:B17)."),
    }
    };
    let mut insert_ok = refusals(h, true);
    if h.kind == Kind::Huge {
        insert_ok.push(success_is(
            Verdict::Pass,
            "edited (the read measure judges how much was read)",
        ));
    }
    vec![
        Cmd::new("view", view(p), view_req, view_ok),
        Cmd::new(
            "create",
            create(p),
            format!("create over {w} MUST be refused or replace the name, never write through it or into it (bug:B17, spec:3/S-9)."),
            vec![
                exact(Outcome::FileExists { path: p.into() }),
                refused(),
                success_is(Verdict::NonStrict, "overwrites: the doc allows it as an implementation choice (nothing was written through the name: the oracle saw nothing outside)"),
            ],
        ),
        Cmd::new("str_replace", str_replace(p, "SECRET"), edit_req("str_replace"), refusals(h, true)),
        Cmd::new("insert", insert(p), edit_req("insert"), insert_ok),
        Cmd::new(
            "delete",
            delete(p),
            format!("delete of {w} MUST remove the name alone (or refuse), without opening it or touching anything else."),
            vec![exact(Outcome::Deleted { path: p.into() }), refused()],
        ),
        Cmd::new(
            "rename-from",
            rename(p, &moved),
            format!("rename of {w} MUST move the name alone (or refuse), never copy its content."),
            vec![exact(renamed(p, &moved)), refused()],
        ),
        Cmd::new(
            "rename-onto",
            rename(&notes, p),
            format!("rename onto {w} MUST be refused as onto any existing name (or replace the name), never write through it or into it."),
            vec![
                exact(Outcome::RenameDestinationExists { new_path: p.into() }),
                refused(),
                replaced_by_rename(),
            ],
        ),
    ]
}

/// A link to an outside file or folder: as `symlink/outside-file/*`, `symlink/outside-dir/*`,
/// `symlink/intermediate/*` and `symlink/dangling-outside/rename-onto`.
fn outside_link_commands(h: &Hazard) -> Vec<Cmd> {
    let p = h.path.as_str();
    let w = h.what;
    let notes = format!("{}/{NOTES_NAME}", h.dir);
    let moved = format!("{}/{MOVED_NAME}", h.dir);
    let follow =
        "A symlink to the outside MUST NOT be followed: nothing outside may be read or written.";
    let sym = |q: &str| exact(Outcome::Symlink { path: q.into() });
    // Reads and writes aim at the link itself (a file link) or at a name below it (a folder link).
    let (read, made) = if h.kind == Kind::OutsideDir {
        (format!("{p}/secret.txt"), format!("{p}/new.md"))
    } else {
        (p.to_owned(), p.to_owned())
    };
    let left = |c: Cmd| {
        if h.kind == Kind::OutsideFile {
            c.check(
                p,
                Expected::Symlink,
                Verdict::Fail,
                "the planted link is left alone",
            )
        } else {
            c
        }
    };
    vec![
        Cmd::new("view", view(&read), follow.into(), vec![sym(&read), refused()]),
        left(Cmd::new("create", create(&made), follow.into(), vec![sym(&made), refused()])),
        left(Cmd::new("str_replace", str_replace(&read, "SECRET"), follow.into(), vec![sym(&read), refused()])),
        left(Cmd::new("insert", insert(&read), follow.into(), vec![sym(&read), refused()])),
        Cmd::new(
            "delete",
            delete(p),
            format!("delete of {w} MUST remove at most the link itself, never its target."),
            vec![exact(Outcome::Deleted { path: p.into() }), refused()],
        )
        // The rows of symlink/outside-file/delete and symlink/intermediate/rename-source: the
        // same flaw is then one cause.
        .cites(&["spec:3/S-1", "bug:B14"]),
        Cmd::new(
            "rename-from",
            rename(p, &moved),
            format!("rename of {w} MUST move the link itself (or refuse), never its target nor its content."),
            vec![exact(renamed(p, &moved)), refused()],
        )
        .cites(&["spec:3/S-1", "bug:B13"]),
        Cmd::new(
            "rename-onto",
            rename(&notes, p),
            format!("rename onto {w} MUST NOT write through it: refused as onto any existing name, or the link itself replaced."),
            vec![
                exact(Outcome::RenameDestinationExists { new_path: p.into() }),
                refused(),
                success_is(Verdict::NonStrict, "replaced the link itself"),
            ],
        ),
    ]
}

/// A link to a memory file in the store: as `symlink/inner-file/*`.
fn inside_link_commands(h: &Hazard) -> Vec<Cmd> {
    let p = h.path.as_str();
    let notes = format!("{}/{NOTES_NAME}", h.dir);
    let moved = format!("{}/{MOVED_NAME}", h.dir);
    let target = format!("{}/target.txt", h.dir);
    let sym = || exact(Outcome::Symlink { path: p.into() });
    let write = |name: &'static str, input: Value, what: &str| {
        Cmd::new(
            name,
            input,
            format!("{what} through an in-store link SHOULD be refused and SHOULD leave the target alone."),
            vec![
                sym(),
                refused(),
                // The wording of `symlink/inner-file/*`: one flaw, one cause.
                success_is(Verdict::NonStrict, "edits through an in-root link"),
            ],
        )
        .should()
        .cites(&["spec:3/S-7"])
        .keeps(&target, TARGET_TEXT, Verdict::NonStrict)
    };
    vec![
        Cmd::new(
            "view",
            view(p),
            "view through an in-store link SHOULD be refused; following it is worth knowing.".into(),
            vec![sym(), refused(), success_is(Verdict::Info, "follows an in-root link for reading")],
        )
        .cites(&["spec:3/S-2", "spec:3/S-3"]),
        write("create", create(p), "create")
            .check(p, Expected::Symlink, Verdict::NonStrict, "the link is not replaced by a file"),
        write("str_replace", str_replace(p, "target"), "str_replace")
            .check(p, Expected::Symlink, Verdict::NonStrict, "the link is not replaced by a file"),
        write("insert", insert(p), "insert")
            .check(p, Expected::Symlink, Verdict::NonStrict, "the link is not replaced by a file"),
        Cmd::new(
            "delete",
            delete(p),
            "delete of an in-store link MUST remove the link, never its target.".into(),
            vec![exact(Outcome::Deleted { path: p.into() }), refused()],
        )
        .cites(&["spec:3/S-4", "bug:B14"])
        .keeps(&target, TARGET_TEXT, Verdict::Unsafe),
        Cmd::new(
            "rename-from",
            rename(p, &moved),
            "rename of an in-store link MUST move the link, never its target.".into(),
            vec![exact(renamed(p, &moved)), refused()],
        )
        .cites(&["spec:3/S-6"])
        .keeps(&target, TARGET_TEXT, Verdict::Unsafe),
        Cmd::new(
            "rename-onto",
            rename(&notes, p),
            "rename onto an in-store link SHOULD be refused as onto any existing name (or replace the link itself), and SHOULD leave the target alone.".into(),
            vec![
                exact(Outcome::RenameDestinationExists { new_path: p.into() }),
                refused(),
                success_is(Verdict::NonStrict, "replaced the link itself"),
            ],
        )
        .should()
        .cites(&["spec:3/S-6", "spec:3/S-7"])
        .keeps(&target, TARGET_TEXT, Verdict::NonStrict),
    ]
}

/// A file with mode 000: as `scenario/no-permission/file/*`; create, delete and rename as over
/// any existing file (they need no read).
fn unreadable_commands(h: &Hazard) -> Vec<Cmd> {
    let p = h.path.as_str();
    let notes = format!("{}/{NOTES_NAME}", h.dir);
    let moved = format!("{}/{MOVED_NAME}", h.dir);
    let read = |cmd: &str| {
        format!("{cmd} on a file the handler may not read MUST be refused with an error that names no host path.")
    };
    vec![
        Cmd::new("view", view(p), read("view"), refusals(h, false)),
        Cmd::new(
            "create",
            create(p),
            "create over a file the handler may not read MUST be refused (or replace it, an overwrite the doc allows), with an error that names no host path.".into(),
            vec![
                exact(Outcome::FileExists { path: p.into() }),
                refused(),
                success_is(Verdict::NonStrict, "overwrites: the doc allows it as an implementation choice"),
            ],
        ),
        Cmd::new("str_replace", str_replace(p, "locked"), read("str_replace"), refusals(h, true)),
        Cmd::new("insert", insert(p), read("insert"), refusals(h, true)),
        Cmd::new(
            "delete",
            delete(p),
            "delete of a file the handler may not read MUST remove it (or refuse with an error that names no host path), touching nothing else.".into(),
            vec![exact(Outcome::Deleted { path: p.into() }), refused()],
        ),
        Cmd::new(
            "rename-from",
            rename(p, &moved),
            "rename of a file the handler may not read MUST move it (or refuse with an error that names no host path).".into(),
            vec![exact(renamed(p, &moved)), refused()],
        ),
        Cmd::new(
            "rename-onto",
            rename(&notes, p),
            "rename onto a file the handler may not read MUST be refused as onto any existing name (or replace it), with an error that names no host path.".into(),
            vec![
                exact(Outcome::RenameDestinationExists { new_path: p.into() }),
                refused(),
                replaced_by_rename(),
            ],
        ),
    ]
}

/// An ordinary file deep down or in a wide folder: as `scenario/deep-chain/view-bottom` and
/// `scenario/many-entries/view`, every command SHOULD do what it does on any file, a refusal is
/// NON-STRICT.
fn ordinary_commands(h: &Hazard) -> Vec<Cmd> {
    let p = h.path.as_str();
    let w = h.what;
    let notes = format!("{}/{NOTES_NAME}", h.dir);
    let moved = format!("{}/{MOVED_NAME}", h.dir);
    let (text, old) = if h.id == "deep-folder" {
        ("bottom", "bottom")
    } else {
        ("x", "x")
    };
    let refuses = || error_is(Verdict::NonStrict, &format!("refuses a valid path to {w}"));
    let req = |cmd: &str| {
        format!("{cmd} of {w} SHOULD work as on any file, and MUST answer within bounds without crashing.")
    };
    vec![
        Cmd::new(
            "view",
            view(p),
            req("view"),
            vec![exact(Outcome::view_file(p, 1, &[text, ""])), refuses()],
        )
        .should(),
        Cmd::new(
            "create",
            create(p),
            req("create over an existing file"),
            vec![
                exact(Outcome::FileExists { path: p.into() }),
                refuses(),
                success_is(
                    Verdict::NonStrict,
                    "overwrites: the doc allows it as an implementation choice",
                ),
            ],
        )
        .should(),
        Cmd::new(
            "str_replace",
            str_replace(p, old),
            req("str_replace"),
            vec![
                exact(Outcome::Edited {
                    lines: vec![(1, "X".into()), (2, String::new())],
                }),
                refuses(),
            ],
        )
        .should(),
        Cmd::new(
            "insert",
            insert(p),
            req("insert"),
            vec![exact(Outcome::Inserted { path: p.into() }), refuses()],
        )
        .should(),
        Cmd::new(
            "delete",
            delete(p),
            req("delete"),
            vec![exact(Outcome::Deleted { path: p.into() }), refuses()],
        )
        .should(),
        Cmd::new(
            "rename-from",
            rename(p, &moved),
            req("rename"),
            vec![exact(renamed(p, &moved)), refuses()],
        )
        .should(),
        Cmd::new(
            "rename-onto",
            rename(&notes, p),
            req("rename onto"),
            vec![
                exact(Outcome::RenameDestinationExists { new_path: p.into() }),
                refuses(),
                replaced_by_rename(),
            ],
        )
        .should(),
    ]
}

/// The root a link to `outside/`: as `scenario/root-symlink/*`, every command refused or served
/// from somewhere else; the commands aim at the canaries the link shows (`secret.txt`,
/// `canary.txt`).
fn linked_root_commands() -> Vec<Cmd> {
    let req = "A store root that is a link to the outside MUST NOT be followed: every command is refused (or served from a store that stays inside), nothing outside is read or written.";
    let confined = || {
        success_is(Verdict::Info, "answered without reading or writing the outside (the oracle saw nothing): served from somewhere else than the store root")
    };
    let secret = "/memories/secret.txt";
    let canary = "/memories/canary.txt";
    [
        ("view", view("/memories")),
        ("create", create("/memories/new.md")),
        ("str_replace", str_replace(secret, "SECRET")),
        ("insert", insert(secret)),
        ("delete", delete(canary)),
        ("rename-from", rename(secret, "/memories/moved.md")),
        ("rename-onto", rename(canary, secret)),
    ]
    .into_iter()
    .map(|(name, input)| Cmd::new(name, input, req.into(), vec![refused(), confined()]))
    .collect()
}

/// The hazard x command cases with the hazard `depth` folders below `/memories`, ids suffixed
/// `suffix` (empty at the base depth).
fn at_depth(depth: usize, suffix: &str) -> Vec<Case> {
    let mut v = Vec::new();
    for h in hazards(depth) {
        for c in commands(&h) {
            let id = format!("hazard/{}/{}{suffix}", h.id, c.name);
            let source = c.source.unwrap_or(h.source);
            let mut b = if c.should {
                B::should(&id, &c.requirement, source)
            } else {
                B::must(&id, &c.requirement, source)
            };
            let notes = format!("{}/{NOTES_NAME}", h.dir);
            if h.kind == Kind::LinkedRoot {
                // Planted first; nothing can be planted in the store after it.
                for item in &h.items {
                    b = b.plant(item.clone());
                }
            } else {
                b = b.file(&notes, NOTES_TEXT);
                for item in &h.items {
                    b = b.plant(item.clone());
                }
            }
            b = b.send(c.input, c.accept);
            if h.kind != Kind::LinkedRoot && c.name != "rename-onto" {
                b = b.keeps(&notes, NOTES_TEXT, Verdict::Fail);
            }
            if h.id == "wide-folder" {
                let first = format!("{}/wide/{}", h.dir, many_name(0));
                b = b.keeps(&first, "x\n", Verdict::Fail);
            }
            for (path, expect, verdict, what) in c.checks {
                b = b.check(&path, expect, verdict, &what);
            }
            v.push(b.done());
        }
    }
    v
}

/// Every hazard x command case at the base depth (the hazard directly in `/memories`), hazards
/// in table order, commands in the order above: what every level runs.
pub(super) fn cases() -> Vec<Case> {
    at_depth(0, "")
}

/// The same cases one and three folders down ([`DEEPER`]), `hazard/<hazard>/<command>/depth-N`
/// (no `linked-root`): what `full` adds.
pub(super) fn deeper() -> Vec<Case> {
    DEEPER
        .iter()
        .flat_map(|&n| at_depth(n, &format!("/depth-{n}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hazard_meets_all_seven_commands_once() {
        let cases = cases();
        assert_eq!(cases.len(), 12 * 7);
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
        let hazards: Vec<&str> = ids
            .iter()
            .step_by(7)
            .map(|id| id.split('/').nth(1).unwrap())
            .collect();
        assert_eq!(
            hazards,
            [
                "hardlink-outside",
                "fifo",
                "socket",
                "char-device",
                "huge-file",
                "symlink-outside-file",
                "symlink-outside-dir",
                "symlink-inside",
                "unreadable-file",
                "deep-folder",
                "wide-folder",
                "linked-root",
            ]
        );
        assert_eq!(cases.iter().filter(|c| c.plants_device()).count(), 7);
        assert_eq!(cases.iter().filter(|c| c.needs_unprivileged()).count(), 7);
        // The first 35 (the first version's) plant the notes file and the hazard.
        for c in &cases[..35] {
            assert_eq!(c.setup.len(), 2, "{}", c.id);
        }
        // The linked root is planted first and alone.
        for c in &cases[77..] {
            assert!(matches!(c.setup[..], [Fs::RootSymlink { .. }]), "{}", c.id);
        }
    }

    #[test]
    fn full_adds_every_hazard_but_the_root_one_and_three_folders_down() {
        let deeper = deeper();
        assert_eq!(deeper.len(), 2 * 11 * 7);
        assert_eq!(deeper[0].id, "hazard/hardlink-outside/view/depth-1");
        assert_eq!(deeper[77].id, "hazard/hardlink-outside/view/depth-3");
        assert_eq!(
            deeper[77].steps[0].input,
            json!({"command": "view", "path": "/memories/a/b/c/hard.txt"})
        );
        assert!(deeper.iter().all(|c| !c.id.contains("linked-root")));
        let base: Vec<String> = cases()
            .into_iter()
            .filter(|c| !c.id.contains("linked-root"))
            .map(|c| c.id)
            .collect();
        for (i, c) in deeper.iter().enumerate() {
            let n = if i < 77 { 1 } else { 3 };
            assert_eq!(c.id, format!("{}/depth-{n}", base[i % 77]));
        }
    }
}
