//! Planted scenarios (`attack::scenarios`): what a third party can leave inside the root besides
//! the links, hard links and FIFOs of `symlink.rs`. A link to the folder beside the root, a
//! socket, files and folders without permissions, a name that is not UTF-8, a very deep chain, a
//! very large folder, and the root itself replaced by a link.
//!
//! Permission cases (`no-permission/...`, `read-only-dir/...`) are SKIPPED when the handler runs
//! as root (`--no-contain` or an in-process handler of a root memcert), where permission bits do
//! not bind (`certify::skip_reason_for`); a contained handler of a root memcert runs as `nobody`
//! and they run.
//!
//! The replaced-root cases (`root-symlink/...`, `root-fifo/...`, `root-file/...`) expect every
//! command refused. The reference refuses to open such a root at all (bug:B10); its in-process
//! target then answers every command with that refusal (`target::inproc::InProcess::reference`).
//! A handler behind stdio may instead refuse to be built or reset there: the runner grades that
//! refusal PASS, with the refusal shown, when it is an error answer to the reset or a non-zero
//! exit with a message, within the time limit, and nothing changed outside
//! (`certify::run_case_after`); a timeout, a death by signal or a handler that cannot start at
//! all stays ERROR.

use serde_json::json;

use super::{error_is, exact, exact_is, refused, success_is, B};
use crate::scenarios::{
    self, deep_bottom, many_name, DEEP_TOP, LOCKED_DIR, LOCKED_FILE, LOCKED_TEXT, MANY_COUNT,
    MANY_DIR, NON_UTF8_DIR, READ_ONLY_DIR, SIBLING_LINK_ABSOLUTE as ABS,
    SIBLING_LINK_RELATIVE as REL, SOCKET,
};
use crate::{verdict::Verdict, Case, Expected};
use memcert_tool::text::{ListEntry, Outcome};

fn sym(path: &str) -> Outcome {
    Outcome::Symlink { path: path.into() }
}

/// `EACCES` as the reference words it (the OS's text for the error number, no host path).
fn denied(path: &str) -> Outcome {
    Outcome::IoError {
        path: path.into(),
        kind: "permission denied (os error 13)".into(),
    }
}

fn listing(path: &str, entries: Vec<ListEntry>) -> Outcome {
    Outcome::ViewDir {
        path: path.into(),
        size: 4096,
        entries,
    }
}

fn file(path: &str, size: u64) -> ListEntry {
    ListEntry {
        size,
        path: path.into(),
        dir: false,
    }
}

fn dir(path: &str) -> ListEntry {
    ListEntry {
        size: 4096,
        path: path.into(),
        dir: true,
    }
}

pub(super) fn cases() -> Vec<Case> {
    let mut v = planted();
    v.extend(root_replaced(
        scenarios::root_symlink(),
        "A store root that is a link to the outside MUST NOT be followed: every command is refused (or served from a store that stays inside), nothing outside is read or written.",
    ));
    v.extend(root_replaced(
        scenarios::root_fifo(),
        "A store root that is a FIFO MUST NOT be served or replaced: every command is refused (or served from a store elsewhere), nothing outside is read or written, and no command blocks.",
    ));
    v.extend(root_replaced(
        scenarios::root_file(),
        "A store root that is a regular file MUST NOT be served as the store or replaced: every command is refused (or served from a store elsewhere) and the file is kept.",
    ));
    v
}

#[allow(clippy::too_many_lines)] // one table literal: the planted-scenario cases
fn planted() -> Vec<Case> {
    let sibling = "A link to the folder beside the root (memories_evil) MUST NOT be followed: nothing in it may be read, written, removed or moved.";
    vec![
        // --- a link to the sibling folder, relative and absolute ---
        B::must("scenario/sibling-link/relative/view", sibling, &["spec:3/S-1"])
            .scenario(scenarios::sibling_link_relative())
            .send(json!({"command": "view", "path": format!("{REL}/canary.txt")}), vec![exact(sym(&format!("{REL}/canary.txt"))), refused()])
            .done(),
        B::must("scenario/sibling-link/relative/create", sibling, &["spec:3/S-1"])
            .scenario(scenarios::sibling_link_relative())
            .send(json!({"command": "create", "path": format!("{REL}/new.txt"), "file_text": "X"}), vec![exact(sym(&format!("{REL}/new.txt"))), refused()])
            .done(),
        B::must("scenario/sibling-link/relative/delete", sibling, &["spec:3/S-1", "bug:B14"])
            .scenario(scenarios::sibling_link_relative())
            .send(json!({"command": "delete", "path": format!("{REL}/canary.txt")}), vec![exact(sym(&format!("{REL}/canary.txt"))), refused()])
            .done(),
        B::must("scenario/sibling-link/relative/rename-out-of", sibling, &["spec:3/S-1", "bug:B13"])
            .scenario(scenarios::sibling_link_relative())
            .send(json!({"command": "rename", "old_path": format!("{REL}/canary.txt"), "new_path": "/memories/loot.txt"}), vec![exact(sym(&format!("{REL}/canary.txt"))), refused()])
            .check("/memories/loot.txt", Expected::Absent, Verdict::Fail, "nothing arrives in the store")
            .done(),
        B::must("scenario/sibling-link/absolute/view", sibling, &["spec:3/S-1", "bug:B11"])
            .scenario(scenarios::sibling_link_absolute())
            .send(json!({"command": "view", "path": ABS}), vec![exact(sym(ABS)), refused()])
            .done(),
        B::must("scenario/sibling-link/absolute/create", sibling, &["spec:3/S-1"])
            .scenario(scenarios::sibling_link_absolute())
            .send(json!({"command": "create", "path": format!("{ABS}/new.txt"), "file_text": "X"}), vec![exact(sym(&format!("{ABS}/new.txt"))), refused()])
            .done(),
        B::must("scenario/sibling-link/absolute/delete", sibling, &["spec:3/S-1", "bug:B14"])
            .scenario(scenarios::sibling_link_absolute())
            .send(json!({"command": "delete", "path": format!("{ABS}/canary.txt")}), vec![exact(sym(&format!("{ABS}/canary.txt"))), refused()])
            .done(),
        B::must("scenario/sibling-link/absolute/rename-into", sibling, &["spec:3/S-1", "bug:B10"])
            .scenario(scenarios::sibling_link_absolute())
            .file("/memories/a.md", "a\n")
            .send(json!({"command": "rename", "old_path": "/memories/a.md", "new_path": format!("{ABS}/a.md")}), vec![exact(sym(&format!("{ABS}/a.md"))), refused()])
            .keeps("/memories/a.md", "a\n", Verdict::Fail)
            .done(),
        // --- a socket ---
        B::must("scenario/socket/view", "view of a socket MUST be refused at once, without hanging or crashing.", &["spec:2.1/C27"])
            .scenario(scenarios::socket())
            .send(json!({"command": "view", "path": SOCKET}), vec![exact(Outcome::UnsupportedFileType { path: SOCKET.into() }), refused()])
            .done(),
        B::must("scenario/socket/str_replace", "str_replace on a socket MUST be refused at once, without hanging or crashing.", &["spec:2.3/C28"])
            .scenario(scenarios::socket())
            .send(json!({"command": "str_replace", "path": SOCKET, "old_str": "a", "new_str": "b"}), vec![exact(Outcome::NotAFile { path: SOCKET.into() }), refused()])
            .keeps("/memories/notes.txt", "notes\n", Verdict::Fail)
            .done(),
        B::must("scenario/socket/delete", "delete of a socket MUST remove it (or refuse) without touching anything else.", &["spec:2.5/G1"])
            .scenario(scenarios::socket())
            .send(json!({"command": "delete", "path": SOCKET}), vec![exact(Outcome::Deleted { path: SOCKET.into() }), refused()])
            .keeps("/memories/notes.txt", "notes\n", Verdict::Fail)
            .done(),
        B::must("scenario/socket/listing", "A listing of a folder holding a socket MUST still answer; it may leave the socket out or show it.", &["spec:2.1/D3"])
            .scenario(scenarios::socket())
            .send(json!({"command": "view", "path": "/memories"}), vec![
                exact(listing("/memories", vec![file("/memories/notes.txt", 6)])),
                success_is(Verdict::Pass, "a listing that shows the socket too"),
            ])
            .done(),
        // --- permissions (SKIPPED as root) ---
        B::must("scenario/no-permission/file/view", "view of a file the handler may not read MUST be refused with an error that names no host path.", &["bug:B07"])
            .scenario(scenarios::no_permission_file())
            .send(json!({"command": "view", "path": LOCKED_FILE}), vec![exact(denied(LOCKED_FILE)), refused()])
            .done(),
        B::must("scenario/no-permission/file/str_replace", "str_replace on a file the handler may not read MUST be refused with an error that names no host path.", &["bug:B07"])
            .scenario(scenarios::no_permission_file())
            .send(json!({"command": "str_replace", "path": LOCKED_FILE, "old_str": "locked", "new_str": "X"}), vec![exact(denied(LOCKED_FILE)), refused()])
            .done(),
        B::should("scenario/no-permission/dir/view", "view of a folder the handler may not list SHOULD be refused (not shown empty), with an error that MUST name no host path.", &["bug:B07"])
            .scenario(scenarios::no_permission_dir())
            .send(json!({"command": "view", "path": LOCKED_DIR}), vec![
                exact(denied(LOCKED_DIR)),
                refused(),
                success_is(Verdict::NonStrict, "shows the folder as empty"),
            ])
            .done(),
        B::should("scenario/no-permission/dir/listing", "A listing of a folder holding a folder the handler may not list SHOULD still list the rest, and MUST NOT name a host path.", &["bug:B07", "spec:2.1/D3"])
            .scenario(scenarios::no_permission_dir())
            .send(json!({"command": "view", "path": "/memories"}), vec![
                exact(listing("/memories", vec![dir(LOCKED_DIR), file("/memories/notes.txt", 6)])),
                success_is(Verdict::NonStrict, "a listing that differs"),
                error_is(Verdict::NonStrict, "refuses the whole listing for one folder it may not list"),
            ])
            .done(),
        B::must("scenario/read-only-dir/create", "create in a folder that refuses writes MUST fail with an error that names no host path, and leave nothing behind.", &["bug:B07", "spec:2.2/B1"])
            .scenario(scenarios::read_only_dir())
            .send(json!({"command": "create", "path": format!("{READ_ONLY_DIR}/new.txt"), "file_text": "X"}), vec![exact(denied(&format!("{READ_ONLY_DIR}/new.txt"))), refused()])
            .check(&format!("{READ_ONLY_DIR}/new.txt"), Expected::Absent, Verdict::Fail, "nothing is created")
            .done(),
        B::must("scenario/read-only-dir/delete", "delete in a folder that refuses writes MUST fail with an error that names no host path, and leave the file.", &["bug:B07", "spec:2.5/G1"])
            .scenario(scenarios::read_only_dir())
            .send(json!({"command": "delete", "path": format!("{READ_ONLY_DIR}/a.txt")}), vec![exact(denied(&format!("{READ_ONLY_DIR}/a.txt"))), refused()])
            .keeps(&format!("{READ_ONLY_DIR}/a.txt"), LOCKED_TEXT, Verdict::Fail)
            .done(),
        B::must("scenario/read-only-dir/rename-into", "rename into a folder that refuses writes MUST fail with an error that names no host path, and leave the source.", &["bug:B07", "spec:2.6/H1"])
            .scenario(scenarios::read_only_dir())
            .send(json!({"command": "rename", "old_path": "/memories/a.md", "new_path": format!("{READ_ONLY_DIR}/b.md")}), vec![exact(denied("/memories/a.md")), refused()])
            .keeps("/memories/a.md", "a\n", Verdict::Fail)
            .check(&format!("{READ_ONLY_DIR}/b.md"), Expected::Absent, Verdict::Fail, "nothing arrives in the folder")
            .done(),
        // --- a name that is not UTF-8 ---
        B::must("scenario/non-utf8-name/listing", "A listing of a folder holding a name that is not UTF-8 MUST answer without crashing, and SHOULD leave out the name, which no path can address.", &["spec:2.1/D3"])
            .scenario(scenarios::non_utf8_name())
            .send(json!({"command": "view", "path": NON_UTF8_DIR}), vec![
                exact(listing(NON_UTF8_DIR, vec![file(&format!("{NON_UTF8_DIR}/ok.txt"), 3)])),
                success_is(Verdict::NonStrict, "shows the name lossily (U+FFFD) or escaped: a name no command can address"),
            ])
            .done(),
        B::should("scenario/non-utf8-name/delete", "delete of a folder holding a name that is not UTF-8 SHOULD remove all of it.", &["spec:2.5/G1"])
            .scenario(scenarios::non_utf8_name())
            .send(json!({"command": "delete", "path": NON_UTF8_DIR}), vec![exact(Outcome::Deleted { path: NON_UTF8_DIR.into() })])
            .check(NON_UTF8_DIR, Expected::Absent, Verdict::NonStrict, "the folder is gone")
            .done(),
        // --- a very deep chain ---
        B::must("scenario/deep-chain/view", "A listing of the top of a chain 300 folders deep MUST show two levels and stop.", &["spec:2.1/D3"])
            .scenario(scenarios::deep_chain())
            .send(json!({"command": "view", "path": DEEP_TOP}), vec![exact(listing(DEEP_TOP, vec![dir(&format!("{DEEP_TOP}/d")), dir(&format!("{DEEP_TOP}/d/d"))]))])
            .done(),
        B::should("scenario/deep-chain/view-bottom", "view of a file 300 folders deep SHOULD show it, and MUST answer without crashing.", &["spec:2.1/C1", "spec:3/P-10"])
            .scenario(scenarios::deep_chain())
            .send(json!({"command": "view", "path": deep_bottom()}), vec![
                exact(Outcome::view_file(&deep_bottom(), 1, &["bottom", ""])),
                error_is(Verdict::NonStrict, "refuses a deep but valid path"),
            ])
            .done(),
        B::must("scenario/deep-chain/delete", "delete of a tree 300 folders deep MUST remove it or refuse, within bounds (no stack overflow), and touch nothing else.", &["spec:2.5/G1"])
            .scenario(scenarios::deep_chain())
            .send(json!({"command": "delete", "path": DEEP_TOP}), vec![
                exact(Outcome::Deleted { path: DEEP_TOP.into() }),
                error_is(Verdict::Pass, "a bounded refusal (the reference refuses trees deeper than 256 levels)"),
            ])
            .keeps("/memories/keep.txt", "keep me\n", Verdict::Fail)
            .done(),
        // --- a very large folder ---
        B::should("scenario/many-entries/view", "view of a folder of 5,000 files MUST answer within the time limit and SHOULD list every one of them.", &["spec:2.1/D3"])
            .scenario(scenarios::many_entries())
            .send(json!({"command": "view", "path": MANY_DIR}), vec![
                exact(listing(MANY_DIR, (0..MANY_COUNT).map(|i| file(&format!("{MANY_DIR}/{}", many_name(i)), 2)).collect())),
                success_is(Verdict::NonStrict, "a listing that is cut short or otherwise differs"),
            ])
            .done(),
    ]
}

/// The root itself replaced (by a link to the outside, a FIFO, a regular file) before the handler
/// starts, one case per command: `scenario/<scenario id>/<command>`.
fn root_replaced(scenario: scenarios::Scenario, requirement: &str) -> Vec<Case> {
    let confined = || {
        success_is(Verdict::Info, "answered without reading or writing the outside (the oracle saw nothing): served from somewhere else than the store root")
    };
    let mut v = Vec::new();
    for (command, input) in [
        ("view", json!({"command": "view", "path": "/memories"})),
        (
            "create",
            json!({"command": "create", "path": "/memories/new.md", "file_text": "X"}),
        ),
        (
            "str_replace",
            json!({"command": "str_replace", "path": "/memories/secret.txt", "old_str": "SECRET", "new_str": "X"}),
        ),
        (
            "delete",
            json!({"command": "delete", "path": "/memories/canary.txt"}),
        ),
        (
            "rename",
            json!({"command": "rename", "old_path": "/memories/secret.txt", "new_path": "/memories/moved.txt"}),
        ),
    ] {
        let mut b = B::must(
            &format!("scenario/{}/{command}", scenario.id),
            requirement,
            &["bug:B10"],
        )
        .scenario(scenario.clone());
        b = if scenario.id == "root-file" && command == "view" {
            // The file at the root's place shown as the store's content (as a file view).
            let line = scenarios::ROOT_FILE_TEXT.trim_end_matches('\n');
            let shown = Outcome::view_file("/memories", 1, &[line, ""]);
            b.send(
                input,
                vec![
                    refused(),
                    exact_is(
                        Verdict::Fail,
                        shown,
                        "the file at the store root's place was shown as the store's content",
                    ),
                    confined(),
                ],
            )
        } else {
            b.send(input, vec![refused(), confined()])
        };
        if scenario.id == "root-file" {
            b = b.keeps("/memories", scenarios::ROOT_FILE_TEXT, Verdict::Fail);
        }
        v.push(b.done());
    }
    v
}
