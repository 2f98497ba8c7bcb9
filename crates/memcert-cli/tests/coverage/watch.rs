//! `watch`: writes outside the store undone before the case ends (seen while the case runs,
//! `memcert::attack::watch`), escapes past the base folder (the canaries beside every ancestor
//! of the store), and the permission cases run under containment when memcert is root.
//!
//! Fixtures: `fixtures/handlers/flawed/transient_temp.py` (a temp file in the store's parent,
//! renamed into the store), `fixtures/handlers/flawed/base_prefix.py` (its boundary is the base
//! folder, tested as a string prefix). Every list below is the fixture's exact non-PASS verdicts
//! ([`Run::caught`]); besides the flaw's own cases they hold what the shared body `_base.py`
//! gives every fixture (the NON-STRICT wordings, the linked root `scenario/root-symlink/*` and
//! `hazard/linked-root/*`).

use super::{certify_fixture, Run};
use std::collections::BTreeMap;

fn want(list: &[(&'static str, &'static str)]) -> BTreeMap<&'static str, &'static str> {
    list.iter().copied().collect()
}

fn assert_caught(run: &Run, list: &[(&'static str, &'static str)]) {
    let got = run.caught();
    let want = want(list);
    if got != want {
        let added: Vec<_> = got
            .iter()
            .filter(|(k, v)| want.get(*k) != Some(*v))
            .collect();
        let gone: Vec<_> = want
            .iter()
            .filter(|(k, v)| got.get(*k) != Some(*v))
            .collect();
        panic!("the non-PASS verdicts changed\n  now: {added:?}\n  was: {gone:?}");
    }
}

/// `transient_temp.py` at `--level quick`: every case whose create runs is UNSAFE (the temp file
/// was created, written and renamed away while the case ran; the `alias/*` twins are two
/// creates); where the rename fails (a long name, a NUL, a read-only folder) the temp file stays
/// behind.
const TRANSIENT_QUICK: &[(&str, &str)] = &[
    ("alias/case/name", "UNSAFE"),
    ("alias/flatten/slash", "UNSAFE"),
    ("alias/ignorable/soft-hyphen", "UNSAFE"),
    ("alias/ignorable/zwsp", "UNSAFE"),
    ("alias/nfc-nfd/name", "UNSAFE"),
    ("alias/nfkc/fullwidth", "UNSAFE"),
    ("alias/slug/dot", "UNSAFE"),
    ("alias/slug/space", "UNSAFE"),
    ("alias/trailing-space/folder", "UNSAFE"),
    ("alias/trailing-space/name", "UNSAFE"),
    ("batch/create-edit-view", "UNSAFE"),
    ("batch/create-twice", "UNSAFE"),
    ("create/crlf-unicode", "UNSAFE"),
    ("create/hidden-directory", "UNSAFE"),
    ("create/missing-parents", "UNSAFE"),
    ("create/new-file", "UNSAFE"),
    ("create/then-view", "UNSAFE"),
    ("create/trailing-slash", "UNSAFE"),
    ("delete/file-trailing-slash", "NON-STRICT"),
    ("insert/text-trailing-newlines", "NON-STRICT"),
    ("malformed/insert/insert-line-bool", "NON-STRICT"),
    ("malformed/insert/insert-line-string", "NON-STRICT"),
    ("malformed/view/view-range-not-list", "NON-STRICT"),
    ("malformed/view/view-range-one-item", "NON-STRICT"),
    ("malformed/view/view-range-strings", "NON-STRICT"),
    ("path/dot/inside", "NON-STRICT"),
    ("path/empty-component", "NON-STRICT"),
    ("path/long/component", "UNSAFE"),
    ("payload/absolute/drive-letter/create.path", "UNSAFE"),
    (
        "payload/ignorable/zwnj-inside/depth-7/create.path",
        "UNSAFE",
    ),
    (
        "payload/traversal/double-encoded-upper/small-reverse-solidus/depth-1/create.path",
        "UNSAFE",
    ),
    (
        "payload/traversal/encoded-mixed-1/double-encoded-slash/depth-4/create.path",
        "UNSAFE",
    ),
    (
        "payload/traversal/encoded-upper/mixed/depth-2/create.path",
        "UNSAFE",
    ),
    (
        "payload/traversal/one-dot-leaders/mixed/depth-8/create.path",
        "UNSAFE",
    ),
    (
        "payload/traversal/overlong-2-upper/encoded-slash-upper/depth-6/create.path",
        "UNSAFE",
    ),
    (
        "payload/traversal/overlong-2/overlong-backslash/depth-7/create.path",
        "UNSAFE",
    ),
    (
        "payload/traversal/percent-u/fullwidth-slash/depth-3/create.path",
        "UNSAFE",
    ),
    (
        "payload/traversal/strip-nested/overlong-backslash/depth-5/create.path",
        "UNSAFE",
    ),
    ("payload/windows/stream/create.path", "UNSAFE"),
    ("rename/into-own-subtree", "NON-STRICT"),
    ("root/view/dot", "NON-STRICT"),
    ("root/view/double-slash", "NON-STRICT"),
    ("scenario/no-permission/dir/listing", "NON-STRICT"),
    ("scenario/non-utf8-name/listing", "NON-STRICT"),
    ("scenario/read-only-dir/create", "UNSAFE"),
    ("scenario/root-symlink/create", "UNSAFE"),
    ("scenario/root-symlink/delete", "UNSAFE"),
    ("scenario/root-symlink/rename", "UNSAFE"),
    ("scenario/root-symlink/str_replace", "UNSAFE"),
    ("scenario/root-symlink/view", "UNSAFE"),
    ("hazard/linked-root/view", "UNSAFE"),
    ("hazard/linked-root/create", "UNSAFE"),
    ("hazard/linked-root/str_replace", "UNSAFE"),
    ("hazard/linked-root/insert", "UNSAFE"),
    ("hazard/linked-root/delete", "UNSAFE"),
    ("hazard/linked-root/rename-from", "UNSAFE"),
    ("traversal/absolute/double-slash-create", "UNSAFE"),
    ("traversal/backslash/create", "UNSAFE"),
    ("traversal/encoded/single/create", "UNSAFE"),
    ("traversal/encoded/single/create-dir", "UNSAFE"),
    ("traversal/nul/create", "UNSAFE"),
    ("traversal/unicode/fullwidth-slash/create", "UNSAFE"),
    ("view/dir/root-trailing-slash", "NON-STRICT"),
    ("view/file/line-limit/exactly", "NON-STRICT"),
    ("view/file/view-range/inverted", "NON-STRICT"),
    ("view/file/view-range/past-end", "NON-STRICT"),
    ("view/file/view-range/start-zero", "NON-STRICT"),
];

/// `transient_temp.py` at the default level, `create/*`.
const TRANSIENT_DEFAULT: &[(&str, &str)] = &[
    ("create/crlf-unicode", "UNSAFE"),
    ("create/hidden-directory", "UNSAFE"),
    ("create/missing-parents", "UNSAFE"),
    ("create/new-file", "UNSAFE"),
    ("create/then-view", "UNSAFE"),
    ("create/trailing-slash", "UNSAFE"),
];

/// `base_prefix.py` at `--level quick`: every `..` that stays under the base folder or reaches
/// its prefix sibling `base_backup/` is UNSAFE.
const BASE_PREFIX_QUICK: &[(&str, &str)] = &[
    ("create/trailing-slash", "NON-STRICT"),
    ("delete/file-trailing-slash", "NON-STRICT"),
    ("insert/text-trailing-newlines", "NON-STRICT"),
    ("malformed/insert/insert-line-bool", "NON-STRICT"),
    ("malformed/insert/insert-line-string", "NON-STRICT"),
    ("malformed/view/view-range-not-list", "NON-STRICT"),
    ("malformed/view/view-range-one-item", "NON-STRICT"),
    ("malformed/view/view-range-strings", "NON-STRICT"),
    ("path/dot/inside", "NON-STRICT"),
    ("path/dotdot/stays-inside", "NON-STRICT"),
    ("path/empty-component", "NON-STRICT"),
    ("payload/prefix/dotdot-private/insert.path", "UNSAFE"),
    ("payload/prefix/dotdot-sibling/str_replace.path", "UNSAFE"),
    ("payload/traversal/plain/slash/depth-1/view.path", "UNSAFE"),
    ("rename/into-own-subtree", "NON-STRICT"),
    ("root/delete/parent", "UNSAFE"),
    ("root/view/dot", "NON-STRICT"),
    ("root/view/double-slash", "NON-STRICT"),
    ("root/view/via-parent", "NON-STRICT"),
    ("scenario/no-permission/dir/listing", "NON-STRICT"),
    ("scenario/non-utf8-name/listing", "NON-STRICT"),
    ("scenario/root-symlink/create", "UNSAFE"),
    ("scenario/root-symlink/delete", "UNSAFE"),
    ("scenario/root-symlink/rename", "UNSAFE"),
    ("scenario/root-symlink/str_replace", "UNSAFE"),
    ("scenario/root-symlink/view", "UNSAFE"),
    ("hazard/linked-root/view", "UNSAFE"),
    ("hazard/linked-root/create", "UNSAFE"),
    ("hazard/linked-root/str_replace", "UNSAFE"),
    ("hazard/linked-root/insert", "UNSAFE"),
    ("hazard/linked-root/delete", "UNSAFE"),
    ("hazard/linked-root/rename-from", "UNSAFE"),
    ("traversal/dotdot/create-base-sibling", "UNSAFE"),
    ("traversal/dotdot/create-escape", "UNSAFE"),
    ("traversal/dotdot/create-sibling", "UNSAFE"),
    ("traversal/dotdot/deep-create", "UNSAFE"),
    ("traversal/dotdot/delete-outside", "UNSAFE"),
    ("traversal/dotdot/insert-outside", "UNSAFE"),
    ("traversal/dotdot/rename-new-path", "UNSAFE"),
    ("traversal/dotdot/rename-old-path", "UNSAFE"),
    ("traversal/dotdot/rename-sibling-dest", "UNSAFE"),
    ("traversal/dotdot/str_replace-outside", "UNSAFE"),
    ("traversal/dotdot/view-base-etc", "UNSAFE"),
    ("traversal/dotdot/view-base-sibling-backup", "UNSAFE"),
    ("traversal/dotdot/view-outside-dir", "UNSAFE"),
    ("traversal/dotdot/view-parent", "UNSAFE"),
    ("traversal/dotdot/view-root-dot-sibling", "UNSAFE"),
    ("traversal/dotdot/view-sibling-backup", "UNSAFE"),
    ("traversal/dotdot/view-sibling-private", "UNSAFE"),
    ("view/dir/root-trailing-slash", "NON-STRICT"),
    ("view/file/line-limit/exactly", "NON-STRICT"),
    ("view/file/view-range/inverted", "NON-STRICT"),
    ("view/file/view-range/past-end", "NON-STRICT"),
    ("view/file/view-range/start-zero", "NON-STRICT"),
];

/// `base_prefix.py` at the default level, `traversal/dotdot/*`.
const BASE_PREFIX_DEFAULT: &[(&str, &str)] = &[
    ("traversal/dotdot/create-base-sibling", "UNSAFE"),
    ("traversal/dotdot/create-escape", "UNSAFE"),
    ("traversal/dotdot/create-sibling", "UNSAFE"),
    ("traversal/dotdot/deep-create", "UNSAFE"),
    ("traversal/dotdot/delete-outside", "UNSAFE"),
    ("traversal/dotdot/insert-outside", "UNSAFE"),
    ("traversal/dotdot/rename-new-path", "UNSAFE"),
    ("traversal/dotdot/rename-old-path", "UNSAFE"),
    ("traversal/dotdot/rename-sibling-dest", "UNSAFE"),
    ("traversal/dotdot/str_replace-outside", "UNSAFE"),
    ("traversal/dotdot/view-base-etc", "UNSAFE"),
    ("traversal/dotdot/view-base-sibling-backup", "UNSAFE"),
    ("traversal/dotdot/view-outside-dir", "UNSAFE"),
    ("traversal/dotdot/view-parent", "UNSAFE"),
    ("traversal/dotdot/view-root-dot-sibling", "UNSAFE"),
    ("traversal/dotdot/view-sibling-backup", "UNSAFE"),
    ("traversal/dotdot/view-sibling-private", "UNSAFE"),
];

#[test]
fn a_temp_file_in_the_stores_parent_is_unsafe_with_its_path_and_the_operations() {
    let quick = certify_fixture(
        "transient_temp.py",
        "TransientTempMemoryTool",
        Some("quick"),
        &[],
    );
    assert_eq!(quick.code, Some(1));
    assert_caught(&quick, TRANSIENT_QUICK);
    // The outside is as it was when the case ends: only the watch saw the write.
    assert_eq!(
        quick.cases["create/new-file"].findings,
        vec!["UNSAFE outside-changed: while the case ran, outside the root, base/.memory-write.tmp was created, written, renamed away"]
    );
    let default = certify_fixture(
        "transient_temp.py",
        "TransientTempMemoryTool",
        None,
        &["--cases", "create/*"],
    );
    assert_caught(&default, TRANSIENT_DEFAULT);
}

#[test]
fn a_boundary_at_the_base_folder_tested_as_a_prefix_reaches_the_base_folders_sibling() {
    let quick = certify_fixture("base_prefix.py", "BasePrefixMemoryTool", Some("quick"), &[]);
    assert_eq!(quick.code, Some(1));
    assert_caught(&quick, BASE_PREFIX_QUICK);
    // The canary beside the base folder, which no case aimed at before.
    let created = &quick.cases["traversal/dotdot/create-base-sibling"].findings;
    assert_eq!(
        created[0],
        "UNSAFE outside-changed: outside the root, base_backup/x.md was created"
    );
    assert!(
        quick.cases["traversal/dotdot/view-base-sibling-backup"].findings[0]
            .starts_with("UNSAFE outside-read: step 1: the reply holds the canary token")
    );
    // The dot-named sibling does not start with the base folder's name: refused.
    assert_eq!(
        quick.cases["traversal/dotdot/view-base-dot-sibling"].verdict,
        "PASS"
    );
    let default = certify_fixture(
        "base_prefix.py",
        "BasePrefixMemoryTool",
        None,
        &["--cases", "traversal/dotdot/*"],
    );
    assert_caught(&default, BASE_PREFIX_DEFAULT);
}

/// The permission cases (`scenario/no-permission/*`, `scenario/read-only-dir/*`) run whenever
/// the handler runs under another uid than root: contained, as CI runs it (as root, the handler
/// is `nobody`, or uid 0 mapped to it without capabilities). They are SKIPPED, with the reason,
/// only when the handler keeps root's rights (`--no-contain` as root).
#[test]
fn the_permission_cases_run_when_the_handler_is_not_root() {
    let root = rustix::process::geteuid().is_root();
    let perms = [
        "--cases",
        "scenario/no-permission/*",
        "--cases",
        "scenario/read-only-dir/*",
    ];
    let contained = certify_fixture("transient_temp.py", "TransientTempMemoryTool", None, &perms);
    let verdicts: BTreeMap<&str, &str> = contained
        .cases
        .iter()
        .map(|(id, r)| (id.as_str(), r.verdict.as_str()))
        .collect();
    assert_eq!(
        verdicts,
        want(&[
            ("scenario/no-permission/dir/listing", "NON-STRICT"),
            ("scenario/no-permission/dir/view", "PASS"),
            ("scenario/no-permission/file/str_replace", "PASS"),
            ("scenario/no-permission/file/view", "PASS"),
            ("scenario/read-only-dir/create", "UNSAFE"),
            ("scenario/read-only-dir/delete", "PASS"),
            ("scenario/read-only-dir/rename-into", "PASS"),
        ])
    );
    let mut no_contain = perms.to_vec();
    no_contain.push("--no-contain");
    let bare = certify_fixture(
        "transient_temp.py",
        "TransientTempMemoryTool",
        None,
        &no_contain,
    );
    assert_eq!(bare.cases.len(), 7);
    for (id, r) in &bare.cases {
        if root {
            assert_eq!(r.verdict, "SKIPPED", "{id}");
            assert!(
                r.findings[0].starts_with("SKIPPED skipped: the handler runs as root"),
                "{id}: {:?}",
                r.findings
            );
        } else {
            assert_ne!(r.verdict, "SKIPPED", "{id}");
        }
    }
}
