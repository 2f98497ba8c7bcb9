//! Aliasing: two names the doc treats as distinct must not share one file (bug:B08 for stores
//! that are not folders, bug:B22 for trimmed names, bug:B23 for case, bug:B24 for Unicode
//! twins and ignorable characters).
//!
//! Every case plants the plain name with `first\n` (in black-box mode the handler's own `create`
//! makes it), creates its twin with `second\n`, then views both through the handler, so the case
//! works for every store kind, a dict or a database as well as a folder:
//! - the create may be refused (the handler takes both names for one) or succeed: PASS;
//! - the plain name MUST still read `first`; reading `second` is FAIL (data loss: the twin's
//!   create overwrote it), anything else FAIL;
//! - the twin reads `second` (its own file) or is refused (it was never made): PASS; reading
//!   `first` is NON-STRICT: the store merges the two names, which the doc does not describe
//!   but bug:B08 and bug:B24 allow when done consistently.
//!
//! On disk (not in black-box mode) the plain name is also checked to keep `first\n` (FAIL).
//!
//! Twins aimed at the outside (`alias/<family>/link-view`, `alias/<family>/link-create`): the
//! plain name is a real folder holding `secret.txt`, its twin a planted symlink to the outside
//! folder, and the case goes through the twin. A handler that checks one spelling (the NFC
//! form, the trimmed or case-folded name) and uses the other follows the link: UNSAFE by the
//! oracle. Refusing, or taking the twin as the plain folder, is PASS. (Black-box mode cannot
//! plant a link: SKIPPED.) Spellings of `..` that a trim or strip turns into a real one are
//! payload families (`trim`, `ignorable`, `slug`).

use serde_json::json;

use super::{exact, exact_is, outside, refused, success_is, B};
use crate::{verdict::Verdict, Case, Expected};
use memcert_tool::text::Outcome;

/// What every twin-link case requires.
const LINK_REQUIREMENT: &str = "A name that is a twin of a folder (another Unicode form, case, or trailing space) and is itself a symlink to the outside MUST NOT be followed: the handler must check the very spelling it uses.";

/// The twin-link pairs: (family, plain folder, twin link, citations).
const LINKS: &[(&str, &str, &str, &[&str])] = &[
    (
        "nfc-nfd",
        "/memories/caf\u{e9}",
        "/memories/cafe\u{301}",
        &["bug:B24", "spec:3/S-1"],
    ),
    (
        "case",
        "/memories/proj",
        "/memories/Proj",
        &["bug:B23", "spec:3/S-1"],
    ),
    (
        "trailing-space",
        "/memories/proj",
        "/memories/proj ",
        &["bug:B22", "spec:3/S-1"],
    ),
    (
        "ignorable",
        "/memories/proj",
        "/memories/pr\u{200b}oj",
        &["bug:B24", "spec:3/S-1"],
    ),
];

/// The two cases of one twin link (module docs).
fn link_cases(family: &str, plain: &str, twin: &str, source: &[&str]) -> Vec<Case> {
    let sym = |p: &str| Outcome::Symlink { path: p.into() };
    let inside = success_is(
        Verdict::Pass,
        "took the twin as the plain folder inside the store",
    );
    let view_path = format!("{twin}/secret.txt");
    let create_path = format!("{twin}/pwned.txt");
    vec![
        B::must(
            &format!("alias/{family}/link-view"),
            LINK_REQUIREMENT,
            source,
        )
        .file(&format!("{plain}/secret.txt"), "inside\n")
        .link(twin, outside(""))
        .send(
            json!({"command": "view", "path": view_path}),
            vec![exact(sym(&view_path)), refused(), inside.clone()],
        )
        .done(),
        B::must(
            &format!("alias/{family}/link-create"),
            LINK_REQUIREMENT,
            source,
        )
        .file(&format!("{plain}/secret.txt"), "inside\n")
        .link(twin, outside(""))
        .send(
            json!({"command": "create", "path": create_path, "file_text": "pwned\n"}),
            vec![exact(sym(&create_path)), refused(), inside],
        )
        .check(
            twin,
            Expected::Symlink,
            Verdict::Fail,
            "the planted link is left alone",
        )
        .done(),
    ]
}

/// What every aliasing case requires.
const REQUIREMENT: &str = "Two names the doc treats as distinct MUST NOT share one file: creating the second either is refused and leaves the first as it was, or makes a file of its own, and each name then reads back its own content.";

/// The aliasing pairs: (family, variant, plain name, twin, citations).
const PAIRS: &[(&str, &str, &str, &str, &[&str])] = &[
    (
        "case",
        "name",
        "/memories/Notes.md",
        "/memories/notes.md",
        &["bug:B08", "bug:B23"],
    ),
    (
        "trailing-space",
        "name",
        "/memories/a.md",
        "/memories/a.md ",
        &["bug:B08", "bug:B22"],
    ),
    (
        "trailing-space",
        "folder",
        "/memories/d/a.md",
        "/memories/d /a.md",
        &["bug:B08", "bug:B22"],
    ),
    (
        "nfc-nfd",
        "name",
        "/memories/caf\u{e9}.md",
        "/memories/cafe\u{301}.md",
        &["bug:B08", "bug:B24"],
    ),
    (
        "nfkc",
        "fullwidth",
        "/memories/a.md",
        "/memories/\u{ff41}.md",
        &["bug:B08", "bug:B24"],
    ),
    (
        "ignorable",
        "zwsp",
        "/memories/ab.md",
        "/memories/a\u{200b}b.md",
        &["bug:B08", "bug:B24"],
    ),
    (
        "ignorable",
        "soft-hyphen",
        "/memories/ab.md",
        "/memories/a\u{ad}b.md",
        &["bug:B08", "bug:B24"],
    ),
    (
        "slug",
        "space",
        "/memories/a_b.md",
        "/memories/a b.md",
        &["bug:B08"],
    ),
    (
        "slug",
        "dot",
        "/memories/notes.txt",
        "/memories/notes_txt",
        &["bug:B08"],
    ),
    (
        "flatten",
        "slash",
        "/memories/a_b.md",
        "/memories/a/b.md",
        &["bug:B08"],
    ),
];

/// One aliasing case: plant `plain`, create `twin`, view both (module docs).
fn case(family: &str, variant: &str, plain: &str, twin: &str, source: &[&str]) -> Case {
    let view = |p: &str| json!({"command": "view", "path": p});
    B::must(&format!("alias/{family}/{variant}"), REQUIREMENT, source)
        .file(plain, "first\n")
        .send(
            json!({"command": "create", "path": twin, "file_text": "second\n"}),
            vec![
                success_is(Verdict::Pass, "created a file of its own"),
                refused(),
            ],
        )
        .send(
            view(plain),
            vec![
                exact(Outcome::view_file(plain, 1, &["first", ""])),
                exact_is(
                    Verdict::Fail,
                    Outcome::view_file(plain, 1, &["second", ""]),
                    &format!("data loss: {plain:?} now holds what was written to {twin:?}; the store keeps one file for both names"),
                ),
            ],
        )
        .send(
            view(twin),
            vec![
                exact(Outcome::view_file(twin, 1, &["second", ""])),
                refused(),
                exact_is(
                    Verdict::NonStrict,
                    Outcome::view_file(twin, 1, &["first", ""]),
                    &format!("{twin:?} reads the file {plain:?}: the store merges the two names, which the doc does not describe"),
                ),
            ],
        )
        .check(
            plain,
            Expected::File(b"first\n".to_vec()),
            Verdict::Fail,
            &format!("{plain} keeps its content after a create of {twin:?} (data loss otherwise)"),
        )
        .done()
}

pub(super) fn cases() -> Vec<Case> {
    let mut v: Vec<Case> = PAIRS
        .iter()
        .map(|(family, variant, plain, twin, source)| case(family, variant, plain, twin, source))
        .collect();
    for (family, plain, twin, source) in LINKS {
        v.extend(link_cases(family, plain, twin, source));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_is_two_distinct_names_and_the_plain_one_is_planted() {
        for c in cases().into_iter().take(PAIRS.len()) {
            let planted = match &c.setup[0] {
                crate::Fs::File { path, .. } => path.clone(),
                other => panic!("{other:?}"),
            };
            let twin = c.steps[0].input["path"].as_str().unwrap();
            assert_ne!(planted, twin, "{}", c.id);
            assert_eq!(c.steps[1].input["path"], planted.as_str());
            assert_eq!(c.steps[2].input["path"], twin);
            assert_eq!(c.steps[1].accept[1].verdict, Verdict::Fail);
            assert_eq!(c.steps[2].accept[2].verdict, Verdict::NonStrict);
        }
        assert_eq!(cases().len(), 18);
        assert_eq!(cases()[10].id, "alias/nfc-nfd/link-view");
        assert_eq!(cases()[3].id, "alias/nfc-nfd/name");
    }
}
