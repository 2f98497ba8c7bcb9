//! Check/use gaps on trimmed, invisible and normalised characters (bug:B22, bug:B24) and
//! aliasing stores (bug:B08): each one-flaw fixture caught with exact case ids and verdicts, at
//! `--level quick` (the whole run) and at the default level (restricted with `--cases` to the
//! families the flaw is about, which the whole run already shows at quick).
//!
//! The filesystem fixtures are built on `fixtures/handlers/flawed/_base.py`, whose shared body
//! has non-PASS verdicts of its own ([`BASE_QUICK`]); the dict-backed ones on `_dict_base.py`, a
//! copy of `fixtures/handlers/cold/careful_dict.py`, whose verdicts are that handler's
//! (`fixtures/handlers/cold/expected/careful_dict.txt`) apart from the flaw.

use super::*;

/// The non-PASS verdicts of the shared body `_base.py` at `--level quick`, races excluded: its
/// wording and edge choices (NON-STRICT; an unreadable folder listed as empty, the permission
/// cases running under containment), and a store root replaced by a link is followed (the
/// root is `realpath`ed once, `scenario/root-symlink/*` and `hazard/linked-root/*` but rename-onto
/// UNSAFE), as every fixture built on it.
const BASE_QUICK: &[(&str, &str)] = &[
    ("view/dir/root-trailing-slash", "NON-STRICT"),
    ("view/file/view-range/inverted", "NON-STRICT"),
    ("view/file/view-range/start-zero", "NON-STRICT"),
    ("view/file/view-range/past-end", "NON-STRICT"),
    ("view/file/line-limit/exactly", "NON-STRICT"),
    ("create/trailing-slash", "NON-STRICT"),
    ("insert/text-trailing-newlines", "NON-STRICT"),
    ("delete/file-trailing-slash", "NON-STRICT"),
    ("rename/into-own-subtree", "NON-STRICT"),
    ("root/view/dot", "NON-STRICT"),
    ("root/view/double-slash", "NON-STRICT"),
    ("path/dot/inside", "NON-STRICT"),
    ("path/empty-component", "NON-STRICT"),
    ("scenario/no-permission/dir/listing", "NON-STRICT"),
    ("scenario/non-utf8-name/listing", "NON-STRICT"),
    ("scenario/root-symlink/view", "UNSAFE"),
    ("scenario/root-symlink/create", "UNSAFE"),
    ("scenario/root-symlink/str_replace", "UNSAFE"),
    ("scenario/root-symlink/delete", "UNSAFE"),
    ("scenario/root-symlink/rename", "UNSAFE"),
    ("hazard/linked-root/view", "UNSAFE"),
    ("hazard/linked-root/create", "UNSAFE"),
    ("hazard/linked-root/str_replace", "UNSAFE"),
    ("hazard/linked-root/insert", "UNSAFE"),
    ("hazard/linked-root/delete", "UNSAFE"),
    ("hazard/linked-root/rename-from", "UNSAFE"),
    ("malformed/view/view-range-not-list", "NON-STRICT"),
    ("malformed/view/view-range-one-item", "NON-STRICT"),
    ("malformed/view/view-range-strings", "NON-STRICT"),
    ("malformed/insert/insert-line-string", "NON-STRICT"),
    ("malformed/insert/insert-line-bool", "NON-STRICT"),
];

/// [`BASE_QUICK`] with `flaw` added.
fn base_and(flaw: &[(&'static str, &'static str)]) -> BTreeMap<&'static str, &'static str> {
    BASE_QUICK.iter().chain(flaw).copied().collect()
}

/// The non-PASS, non-INFO, non-SKIPPED verdicts `careful_dict.py` gets on the cases of `run`
/// (from its expected list, taken at the standard level, black box), with `flaw` put over them.
fn careful_dict_and<'r>(run: &'r Run, flaw: &[(&'r str, &'r str)]) -> BTreeMap<String, String> {
    let text =
        std::fs::read_to_string(root().join("fixtures/handlers/cold/expected/careful_dict.txt"))
            .unwrap();
    let mut want: BTreeMap<String, String> = text
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .filter(|(id, v)| run.cases.contains_key(*id) && !matches!(*v, "PASS" | "INFO" | "SKIPPED"))
        .map(|(id, v)| (id.to_owned(), v.to_owned()))
        .collect();
    for (id, v) in flaw {
        want.insert((*id).to_owned(), (*v).to_owned());
    }
    want
}

/// `run.caught()` as owned strings, to compare with [`careful_dict_and`].
fn owned(run: &Run) -> BTreeMap<String, String> {
    run.caught()
        .into_iter()
        .map(|(id, v)| (id.to_owned(), v.to_owned()))
        .collect()
}

/// A default-level run restricted to the case globs `cases` (`--cases` each).
fn at_default<'a>(file: &str, class: &str, black_box: bool, cases: &[&'a str]) -> Run {
    let mut extra: Vec<&str> = Vec::new();
    if black_box {
        extra.push("--memory-dir-unknown");
    }
    for c in cases {
        extra.extend(["--cases", c]);
    }
    certify_fixture(file, class, None, &extra)
}

/// The cases of `run` whose id starts with `prefix`, each with its verdict.
fn family<'r>(run: &'r Run, prefix: &str) -> BTreeMap<&'r str, &'r str> {
    run.cases
        .iter()
        .filter(|(id, _)| id.starts_with(prefix))
        .map(|(id, r)| (id.as_str(), r.verdict.as_str()))
        .collect()
}

#[test]
fn trim_after_check_escapes_through_trailing_spaces() {
    let merged = [
        ("alias/trailing-space/name", "NON-STRICT"),
        ("alias/trailing-space/folder", "NON-STRICT"),
    ];
    let quick = certify_fixture(
        "trim_after_check.py",
        "TrimAfterCheckMemoryTool",
        Some("quick"),
        &[],
    );
    let mut flaw = merged.to_vec();
    flaw.extend([
        ("payload/trim/trailing-space/depth-1/view.path", "UNSAFE"),
        (
            "payload/trim/trailing-spaces/depth-2/str_replace.path",
            "UNSAFE",
        ),
    ]);
    assert_eq!(quick.caught(), base_and(&flaw));
    assert_eq!(quick.code, Some(1));

    let full = at_default(
        "trim_after_check.py",
        "TrimAfterCheckMemoryTool",
        false,
        &["payload/trim/*", "alias/*"],
    );
    let mut flaw = merged.to_vec();
    flaw.extend([
        ("payload/trim/trailing-space/depth-1/view.path", "UNSAFE"),
        ("payload/trim/trailing-space/depth-3/create.path", "UNSAFE"),
        (
            "payload/trim/trailing-space/depth-5/str_replace.path",
            "UNSAFE",
        ),
        ("payload/trim/trailing-space/depth-7/insert.path", "UNSAFE"),
        (
            "payload/trim/trailing-spaces/depth-1/str_replace.path",
            "UNSAFE",
        ),
        (
            "payload/trim/trailing-spaces/depth-2/rename.new_path",
            "UNSAFE",
        ),
        ("payload/trim/trailing-spaces/depth-5/view.path", "UNSAFE"),
        ("payload/trim/trailing-spaces/depth-7/create.path", "UNSAFE"),
    ]);
    assert_eq!(full.caught(), flaw.into_iter().collect());
    assert_eq!(full.cases.len(), 50);
}

#[test]
fn strip_ignorables_escapes_through_every_invisible_dotdot() {
    let merged = [
        ("alias/ignorable/zwsp", "NON-STRICT"),
        ("alias/ignorable/soft-hyphen", "NON-STRICT"),
    ];
    let quick = certify_fixture(
        "strip_ignorables.py",
        "StripIgnorablesMemoryTool",
        Some("quick"),
        &[],
    );
    let mut flaw = merged.to_vec();
    flaw.extend([
        (
            "payload/ignorable/zwsp-inside/depth-3/str_replace.path",
            "UNSAFE",
        ),
        ("payload/ignorable/zwsp-after/depth-4/delete.path", "UNSAFE"),
        (
            "payload/ignorable/zwsp-before/depth-5/rename.new_path",
            "UNSAFE",
        ),
        (
            "payload/ignorable/zwnj-inside/depth-7/create.path",
            "UNSAFE",
        ),
        ("payload/ignorable/zwj-after/depth-8/insert.path", "UNSAFE"),
        (
            "payload/ignorable/word-joiner-inside/depth-1/rename.old_path",
            "UNSAFE",
        ),
        ("payload/ignorable/bom-before/depth-3/view.path", "UNSAFE"),
        (
            "payload/ignorable/soft-hyphen-inside/depth-4/str_replace.path",
            "UNSAFE",
        ),
    ]);
    assert_eq!(quick.caught(), base_and(&flaw));

    let full = at_default(
        "strip_ignorables.py",
        "StripIgnorablesMemoryTool",
        false,
        &["payload/ignorable/*", "alias/*"],
    );
    // Every ignorable spelling, at each of its 4 (depth, field) pairs of the standard level.
    let payloads = family(&full, "payload/ignorable/");
    assert_eq!(payloads.len(), 32);
    assert!(payloads.values().all(|v| *v == "UNSAFE"), "{payloads:#?}");
    let mut want: BTreeMap<&str, &str> = merged.into_iter().collect();
    want.extend(payloads);
    assert_eq!(full.caught(), want);
}

#[test]
fn nfc_check_raw_use_follows_the_nfd_twin_link() {
    let escapes = [
        ("alias/nfc-nfd/link-view", "UNSAFE"),
        ("alias/nfc-nfd/link-create", "UNSAFE"),
    ];
    let quick = certify_fixture(
        "nfc_check_raw_use.py",
        "NfcCheckRawUseMemoryTool",
        Some("quick"),
        &[],
    );
    assert_eq!(quick.caught(), base_and(&escapes));
    // The NFC/NFD twins themselves are two files: no aliasing.
    assert_eq!(quick.cases["alias/nfc-nfd/name"].verdict, "PASS");

    let full = at_default(
        "nfc_check_raw_use.py",
        "NfcCheckRawUseMemoryTool",
        false,
        &["alias/*", "payload/trim/*", "payload/ignorable/*"],
    );
    assert_eq!(full.caught(), escapes.into_iter().collect());
    let found = &full.cases["alias/nfc-nfd/link-view"].findings;
    assert!(
        found.iter().any(|f| f.starts_with("UNSAFE outside-read:")),
        "{found:#?}"
    );
}

/// The four dict-backed aliasing stores, black box: FAIL (data loss) on their own twins only.
#[test]
fn aliasing_dict_stores_lose_data_on_their_twins() {
    for (file, class, flawed) in [
        (
            "alias_casefold.py",
            "AliasCasefoldMemoryTool",
            &["alias/case/name"][..],
        ),
        (
            "alias_padspace.py",
            "AliasPadspaceMemoryTool",
            &["alias/trailing-space/name", "alias/trailing-space/folder"][..],
        ),
        (
            "alias_slug.py",
            "AliasSlugMemoryTool",
            &["alias/slug/space", "alias/slug/dot"][..],
        ),
        (
            "alias_flatten.py",
            "AliasFlattenMemoryTool",
            &["alias/flatten/slash"][..],
        ),
    ] {
        let flaw: Vec<(&str, &str)> = flawed.iter().map(|id| (*id, "FAIL")).collect();
        let quick = certify_fixture(file, class, Some("quick"), &["--memory-dir-unknown"]);
        assert_eq!(owned(&quick), careful_dict_and(&quick, &flaw), "{file}");
        assert_eq!(quick.code, Some(1), "{file}");
        for id in flawed {
            let found = &quick.cases[*id].findings;
            assert!(
                found
                    .iter()
                    .any(|f| f.starts_with("FAIL reply: step 2: data loss:")),
                "{file} {id}: {found:#?}"
            );
        }

        let full = at_default(file, class, true, &["alias/*"]);
        assert_eq!(owned(&full), careful_dict_and(&full, &flaw), "{file}");
        assert_eq!(full.cases.len(), 18, "{file}");
    }
}
