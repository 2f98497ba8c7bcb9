//! Planted symlinks, hard links and FIFOs inside the root: what a sync client, another process or
//! a restored backup can leave there (`docs/spec/memory-tool.md` spec:3/S-1 to spec:3/S-9 each,
//! spec:3/P-14; bug:B05, bug:B09, bug:B10, bug:B11, bug:B14).

use serde_json::json;

use super::{exact, outside, refused, success_is, B};
use crate::{verdict::Verdict, Case, Expected, LinkTo};
use memcert_tool::text::{ListEntry, Outcome};

fn sym(path: &str) -> Outcome {
    Outcome::Symlink { path: path.into() }
}

const TARGET: &str = "target text\n";

#[allow(clippy::too_many_lines)] // one table literal: the planted-link cases
pub(super) fn cases() -> Vec<Case> {
    let refuse_link =
        "A symlink to the outside MUST NOT be followed: nothing outside may be read or written.";
    vec![
        B::must("symlink/outside-file/view", refuse_link, &["spec:3/S-1", "bug:B09"])
            .link("/memories/evil_link.txt", outside("secret.txt"))
            .send(json!({"command": "view", "path": "/memories/evil_link.txt"}), vec![exact(sym("/memories/evil_link.txt")), refused()])
            .done(),
        B::must("symlink/outside-file/str_replace", refuse_link, &["spec:3/S-1", "bug:B09"])
            .link("/memories/evil_link.txt", outside("secret.txt"))
            .send(json!({"command": "str_replace", "path": "/memories/evil_link.txt", "old_str": "SECRET", "new_str": "X"}), vec![exact(sym("/memories/evil_link.txt")), refused()])
            .check("/memories/evil_link.txt", Expected::Symlink, Verdict::Fail, "the planted link is left alone")
            .done(),
        B::must("symlink/outside-file/insert", refuse_link, &["spec:3/S-1", "bug:B09"])
            .link("/memories/evil_link.txt", outside("secret.txt"))
            .send(json!({"command": "insert", "path": "/memories/evil_link.txt", "insert_line": 0, "insert_text": "X"}), vec![exact(sym("/memories/evil_link.txt")), refused()])
            .check("/memories/evil_link.txt", Expected::Symlink, Verdict::Fail, "the planted link is left alone")
            .done(),
        B::must("symlink/outside-file/create", refuse_link, &["spec:3/S-1", "bug:B09"])
            .link("/memories/evil_link.txt", outside("secret.txt"))
            .send(json!({"command": "create", "path": "/memories/evil_link.txt", "file_text": "X"}), vec![exact(sym("/memories/evil_link.txt")), refused()])
            .check("/memories/evil_link.txt", Expected::Symlink, Verdict::Fail, "the planted link is left alone")
            .done(),
        B::must("symlink/outside-file/delete", "delete of a link MUST remove at most the link itself, never its target.", &["spec:3/S-1", "bug:B14"])
            .link("/memories/evil_link.txt", outside("secret.txt"))
            .send(json!({"command": "delete", "path": "/memories/evil_link.txt"}), vec![exact(Outcome::Deleted { path: "/memories/evil_link.txt".into() }), refused()])
            .done(),
        B::must("symlink/outside-dir/view", refuse_link, &["spec:3/S-1", "bug:B09", "bug:B11"])
            .link("/memories/evil_dir", outside(""))
            .send(json!({"command": "view", "path": "/memories/evil_dir"}), vec![exact(sym("/memories/evil_dir")), refused()])
            .done(),
        B::must("symlink/outside-dir/view-below", refuse_link, &["bug:B09", "bug:B10", "bug:B05"])
            .link("/memories/evil_dir", outside(""))
            .send(json!({"command": "view", "path": "/memories/evil_dir/secret.txt"}), vec![exact(sym("/memories/evil_dir/secret.txt")), refused()])
            .done(),
        B::must("symlink/outside-dir/create-below", refuse_link, &["spec:3/S-1", "bug:B09", "bug:B10"])
            .link("/memories/evil_dir", outside(""))
            .send(json!({"command": "create", "path": "/memories/evil_dir/new.txt", "file_text": "X"}), vec![exact(sym("/memories/evil_dir/new.txt")), refused()])
            .done(),
        B::must("symlink/intermediate/create-deep", refuse_link, &["bug:B10"])
            .link("/memories/proj", outside(""))
            .send(json!({"command": "create", "path": "/memories/proj/deep/new.md", "file_text": "X"}), vec![exact(sym("/memories/proj/deep/new.md")), refused()])
            .done(),
        B::must("symlink/intermediate/delete", refuse_link, &["bug:B10", "bug:B14"])
            .link("/memories/proj", outside(""))
            .send(json!({"command": "delete", "path": "/memories/proj/canary.txt"}), vec![exact(sym("/memories/proj/canary.txt")), refused()])
            .done(),
        B::must("symlink/intermediate/str_replace", refuse_link, &["bug:B10"])
            .link("/memories/proj", outside(""))
            .send(json!({"command": "str_replace", "path": "/memories/proj/secret.txt", "old_str": "SECRET", "new_str": "X"}), vec![exact(sym("/memories/proj/secret.txt")), refused()])
            .done(),
        B::must("symlink/intermediate/insert", refuse_link, &["bug:B10"])
            .link("/memories/proj", outside(""))
            .send(json!({"command": "insert", "path": "/memories/proj/secret.txt", "insert_line": 0, "insert_text": "X"}), vec![exact(sym("/memories/proj/secret.txt")), refused()])
            .done(),
        B::must("symlink/intermediate/rename-source", "rename MUST NOT carry an outside file into the store through a link.", &["bug:B13"])
            .link("/memories/src", outside(""))
            .send(json!({"command": "rename", "old_path": "/memories/src/secret.txt", "new_path": "/memories/loot.md"}), vec![exact(sym("/memories/src/secret.txt")), refused()])
            .check("/memories/loot.md", Expected::Absent, Verdict::Fail, "nothing arrives in the store")
            .done(),
        B::must("symlink/in-directory/delete", "delete of a directory MUST unlink links inside it, never follow them.", &["bug:B14"])
            .file("/memories/old/a.txt", "a")
            .link("/memories/old/sub", outside(""))
            .link("/memories/old/f", outside("secret.txt"))
            .send(json!({"command": "delete", "path": "/memories/old"}), vec![exact(Outcome::Deleted { path: "/memories/old".into() }), refused()])
            .done(),
        B::must("symlink/outside-dir/rename-into", refuse_link, &["bug:B10", "bug:B13"])
            .file("/memories/a.md", "a\n")
            .link("/memories/proj", outside(""))
            .send(json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/proj/a.md"}), vec![exact(sym("/memories/proj/a.md")), refused()])
            .keeps("/memories/a.md", "a\n", Verdict::Fail)
            .done(),
        B::must("symlink/relative/view-below", refuse_link, &["spec:3/S-1", "bug:B09"])
            .link("/memories/rel_evil", LinkTo::Raw("../outside".into()))
            .send(json!({"command": "view", "path": "/memories/rel_evil/secret.txt"}), vec![exact(sym("/memories/rel_evil/secret.txt")), refused()])
            .done(),
        B::must("symlink/listing/outside-dir", "A listing MUST NOT show names or sizes from outside the root through a link.", &["bug:B11", "spec:3/S-1"])
            .file("/memories/n.txt", "n")
            .link("/memories/lnk", outside(""))
            .send(json!({"command": "view", "path": "/memories"}), vec![
                exact(Outcome::ViewDir { path: "/memories".into(), size: 4096, entries: vec![ListEntry { size: 1, path: "/memories/n.txt".into(), dir: false }] }),
                success_is(Verdict::Info, "a listing that shows the link itself"),
            ])
            .done(),
        B::must("symlink/dangling/view", "A dangling link MUST be refused with an error.", &["spec:3/S-8", "spec:2.1/S17"])
            .link("/memories/dangling", LinkTo::Raw("/nonexistent/zzz".into()))
            .send(json!({"command": "view", "path": "/memories/dangling"}), vec![exact(sym("/memories/dangling")), refused()])
            .done(),
        B::must("symlink/dangling-outside/create", "create on a dangling link to the outside MUST NOT create its target.", &["bug:B09", "spec:3/S-8"])
            .link("/memories/new.md", outside("planted.txt"))
            .send(json!({"command": "create", "path": "/memories/new.md", "file_text": "X"}), vec![exact(sym("/memories/new.md")), refused()])
            .done(),
        B::must("symlink/dangling-outside/rename-onto", "rename onto a dangling link MUST NOT write through it.", &["bug:B09", "spec:2.6/X17"])
            .file("/memories/a.md", "a\n")
            .link("/memories/dd", outside("planted.txt"))
            .send(json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/dd"}), vec![
                exact(Outcome::RenameDestinationExists { new_path: "/memories/dd".into() }),
                refused(),
                success_is(Verdict::NonStrict, "replaced the link itself"),
            ])
            .done(),
        B::must("symlink/loop/view", "A symlink loop MUST be refused without disclosing host paths.", &["spec:3/P-14", "bug:B07"])
            .link("/memories/loop", LinkTo::Raw("loop".into()))
            .send(json!({"command": "view", "path": "/memories/loop"}), vec![exact(sym("/memories/loop")), refused()])
            .done(),
        B::must("symlink/inner-file/delete", "delete of an in-root link MUST remove the link, never its target.", &["spec:3/S-4", "bug:B14"])
            .file("/memories/target.txt", TARGET)
            .link("/memories/inner_link", LinkTo::Inside("/memories/target.txt".into()))
            .send(json!({"command": "delete", "path": "/memories/inner_link"}), vec![exact(Outcome::Deleted { path: "/memories/inner_link".into() }), refused()])
            .keeps("/memories/target.txt", TARGET, Verdict::Unsafe)
            .done(),
        B::must("symlink/inner-dir/delete", "delete of an in-root directory link MUST remove the link, never the tree it points to.", &["spec:3/S-5", "bug:B14"])
            .file("/memories/idir/sub/f.txt", TARGET)
            .link("/memories/ilnkdir", LinkTo::Inside("/memories/idir/sub".into()))
            .send(json!({"command": "delete", "path": "/memories/ilnkdir"}), vec![exact(Outcome::Deleted { path: "/memories/ilnkdir".into() }), refused()])
            .keeps("/memories/idir/sub/f.txt", TARGET, Verdict::Unsafe)
            .done(),
        B::must("symlink/inner-file/rename", "rename of an in-root link MUST move the link, never its target.", &["spec:3/S-6"])
            .file("/memories/target.txt", TARGET)
            .link("/memories/inner_link", LinkTo::Inside("/memories/target.txt".into()))
            .send(json!({"command": "rename", "old_path": "/memories/inner_link", "new_path": "/memories/renamed_link"}), vec![
                exact(Outcome::Renamed { old_path: "/memories/inner_link".into(), new_path: "/memories/renamed_link".into() }),
                refused(),
            ])
            .keeps("/memories/target.txt", TARGET, Verdict::Unsafe)
            .done(),
        B::must("symlink/inner-file/view", "view through an in-root link SHOULD be refused; following it is worth knowing.", &["spec:3/S-2", "spec:3/S-3"])
            .file("/memories/target.txt", TARGET)
            .link("/memories/inner_link", LinkTo::Inside("/memories/target.txt".into()))
            .send(json!({"command": "view", "path": "/memories/inner_link"}), vec![
                exact(sym("/memories/inner_link")),
                refused(),
                success_is(Verdict::Info, "follows an in-root link for reading"),
            ])
            .done(),
        B::should("symlink/inner-file/str_replace", "str_replace through an in-root link SHOULD be refused and SHOULD leave the target alone.", &["spec:3/S-7"])
            .file("/memories/target.txt", TARGET)
            .link("/memories/inner_link", LinkTo::Inside("/memories/target.txt".into()))
            .send(json!({"command": "str_replace", "path": "/memories/inner_link", "old_str": "target", "new_str": "TARGET"}), vec![
                exact(sym("/memories/inner_link")),
                refused(),
                success_is(Verdict::NonStrict, "edits through an in-root link"),
            ])
            .keeps("/memories/target.txt", TARGET, Verdict::NonStrict)
            .check("/memories/inner_link", Expected::Symlink, Verdict::NonStrict, "the link is not replaced by a file")
            .done(),
        B::must("symlink/hardlink-outside/view", "A hard link to an outside file MUST NOT disclose its content.", &["spec:3/S-9", "bug:B15"])
            .hard_link_outside("/memories/hard.txt", "hard-source.txt")
            .send(json!({"command": "view", "path": "/memories/hard.txt"}), vec![
                exact(Outcome::HardLink { path: "/memories/hard.txt".into() }),
                refused(),
            ])
            .done(),
        B::must("symlink/hardlink-outside/str_replace", "str_replace on a hard link to an outside file MUST NOT change the outside file.", &["spec:3/S-9", "bug:B15"])
            .hard_link_outside("/memories/hard.txt", "hard-source.txt")
            .send(json!({"command": "str_replace", "path": "/memories/hard.txt", "old_str": "SECRET", "new_str": "X"}), vec![
                exact(Outcome::HardLink { path: "/memories/hard.txt".into() }),
                refused(),
            ])
            .done(),
    ]
}
