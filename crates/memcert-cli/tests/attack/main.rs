//! Every payload family against the handler that makes that family's mistake
//! (`fixtures/handlers/flawed/`): the oracle catches each one with the right finding kind, and
//! the reference handler refuses or confines the very same cases.
//!
//! Each fixture's docstring names its mistake and the spellings it lets through. The cases are
//! the payload cases (`suite::catalog::payload`) of that family at depth 2, in all seven command
//! fields: a read through `view.path` is `outside-read`; a write, move or delete through any
//! other field is `outside-changed`.

#[path = "../common/mod.rs"]
mod common;
use common::*;

use std::collections::BTreeMap;
use std::time::Duration;

use memcert::attack::payloads::Field;
use memcert::certify::{self, CaseRecord};
use memcert::suite::catalog::{self, RunLevel};
use memcert::suite::verdict::Verdict;
use memcert::suite::Case;
use memcert::target::inproc::InProcess;
use memcert::text::Profile;

/// The full-level payload cases whose id matches one of `globs`.
fn payload_cases(globs: &[String]) -> Vec<Case> {
    let cases = certify::select(catalog::payload::cases(RunLevel::Full), globs, &[]).unwrap();
    assert!(!cases.is_empty(), "{globs:?} select nothing");
    cases
}

/// The finding kind an escape through this case's field must produce.
fn kind_for(id: &str) -> &'static str {
    if id.ends_with("/view.path") {
        "outside-read"
    } else {
        "outside-changed"
    }
}

/// Run `cases` on `fixtures/handlers/flawed/<fixture>.py:<class>` and on the reference. On the
/// fixture every case must get `verdict`, with a finding of that verdict and of kind
/// `kind(id)`; on the reference every case must be PASS or INFO. Returns both sets of records
/// (fixture, reference) for checks of their own.
fn caught_as(
    fixture: &str,
    class: &str,
    cases: &[Case],
    verdict: Verdict,
    kind: impl Fn(&str) -> &'static str,
) -> (Vec<CaseRecord>, Vec<CaseRecord>) {
    let spec = format!("fixtures/handlers/flawed/{fixture}.py:{class}");
    let (_dir, mut t) = python_target(&spec, Duration::from_secs(20));
    let got = run_cases(&mut t, Profile::Docs, cases);
    let mut wrong = BTreeMap::new();
    for r in &got {
        let want = kind(&r.id);
        let has = r
            .findings
            .iter()
            .any(|f| f.verdict == verdict && f.kind == want);
        if r.verdict != verdict || !has {
            let kinds: Vec<String> = r
                .findings
                .iter()
                .map(|f| format!("{} {}", f.verdict, f.kind))
                .collect();
            wrong.insert(r.id.clone(), (r.verdict, kinds));
        }
    }
    assert_eq!(
        wrong,
        BTreeMap::new(),
        "{fixture}: cases not caught as expected"
    );
    let reference = run_cases(
        &mut InProcess::reference(Profile::Docs),
        Profile::Docs,
        cases,
    );
    for r in &reference {
        assert!(
            matches!(r.verdict, Verdict::Pass | Verdict::Info),
            "reference on {}: {:?} {:?}",
            r.id,
            r.verdict,
            r.findings
        );
    }
    (got, reference)
}

/// Every case UNSAFE on the fixture, with the escape's kind for its field ([`kind_for`]).
fn caught(fixture: &str, class: &str, cases: &[Case]) {
    caught_as(fixture, class, cases, Verdict::Unsafe, kind_for);
}

/// `payload/traversal/<dot>/<slash>/depth-2/*` for each pair.
fn traversal(pairs: &[(&str, &str)]) -> Vec<Case> {
    let globs: Vec<String> = pairs
        .iter()
        .map(|(d, s)| format!("payload/traversal/{d}/{s}/depth-2/*"))
        .collect();
    let cases = payload_cases(&globs);
    assert_eq!(cases.len(), pairs.len() * 7);
    cases
}

#[test]
fn a_naive_join_is_caught_by_plain_dotdot() {
    caught(
        "naive_join",
        "NaiveJoinMemoryTool",
        &traversal(&[("plain", "slash")]),
    );
}

#[test]
fn decode_after_check_is_caught_by_single_encoded_dots_and_separators() {
    caught(
        "decode_after_check",
        "DecodeAfterCheckMemoryTool",
        &traversal(&[
            ("encoded-lower", "slash"),
            ("encoded-upper", "slash"),
            ("encoded-mixed-1", "encoded-slash"),
            ("encoded-mixed-2", "encoded-slash-upper"),
            ("plain", "encoded-slash"),
        ]),
    );
}

#[test]
fn a_second_decode_is_caught_by_double_encoded_dots_and_separators() {
    caught(
        "double_decode",
        "DoubleDecodeMemoryTool",
        &traversal(&[
            ("double-encoded", "slash"),
            ("double-encoded-upper", "slash"),
            ("double-nibble", "slash"),
            ("plain", "double-encoded-slash"),
        ]),
    );
}

#[test]
fn normalising_after_the_check_is_caught_by_unicode_look_alikes() {
    caught(
        "normalise_after_check",
        "NormaliseAfterCheckMemoryTool",
        &traversal(&[
            ("fullwidth", "slash"),
            ("two-dot-leader", "slash"),
            ("one-dot-leaders", "fullwidth-slash"),
            ("small-full-stops", "fullwidth-slash"),
            ("plain", "fullwidth-slash"),
        ]),
    );
}

#[test]
fn backslash_as_a_separator_is_caught_by_backslash_and_mixed_separators() {
    caught(
        "backslash_as_separator",
        "BackslashSeparatorMemoryTool",
        &traversal(&[("plain", "backslash"), ("plain", "mixed")]),
    );
}

#[test]
fn overlong_utf8_decoding_is_caught_by_overlong_forms() {
    caught(
        "overlong_utf8",
        "OverlongUtf8MemoryTool",
        &traversal(&[
            ("overlong-2", "slash"),
            ("overlong-2-upper", "slash"),
            ("overlong-3", "slash"),
            ("overlong-4", "slash"),
            ("plain", "overlong-slash"),
        ]),
    );
}

#[test]
fn percent_u_decoding_is_caught_by_percent_u_forms() {
    caught(
        "percent_u",
        "PercentUMemoryTool",
        &traversal(&[("percent-u", "slash")]),
    );
}

#[test]
fn stripping_once_is_caught_by_nested_dot_sequences() {
    caught(
        "strip_once",
        "StripOnceMemoryTool",
        &traversal(&[
            ("strip-four-dots", "double-slash"),
            ("strip-nested", "slash"),
        ]),
    );
}

#[test]
fn truncating_at_nul_is_caught_by_nul_suffixed_dots() {
    caught(
        "nul_truncation",
        "NulTruncationMemoryTool",
        &traversal(&[("nul-suffix", "slash"), ("nul-suffix", "mixed")]),
    );
}

#[test]
fn stripping_path_parameters_is_caught_by_semicolon_dots() {
    caught(
        "semicolon_params",
        "SemicolonParamsMemoryTool",
        &traversal(&[("semicolon", "slash")]),
    );
}

#[test]
fn raw_os_errors_are_caught_by_long_names_as_host_path_disclosures() {
    // No escape: the `long` family's mistake is an OS error passed on with the host path (bug:B07).
    // Every field but rename.new_path (whose other side, /memories/a.md, is what is opened).
    let globs: Vec<String> = ["component-256", "path-4097"]
        .iter()
        .flat_map(|p| {
            Field::ALL[..6]
                .iter()
                .map(move |f| format!("payload/long/{p}/{}", f.as_str()))
        })
        .collect();
    let cases = payload_cases(&globs);
    assert_eq!(cases.len(), 12);
    let (_, reference) = caught_as(
        "raw_os_errors",
        "RawOsErrorsMemoryTool",
        &cases,
        Verdict::Unsafe,
        |_| "host-path-disclosed",
    );
    for r in reference {
        assert_eq!(r.verdict, Verdict::Pass, "reference on {}", r.id);
    }
}

#[test]
fn joining_an_absolute_remainder_is_caught_by_the_double_slash_payload() {
    let cases = payload_cases(&["payload/absolute/double-slash-run/*".to_owned()]);
    assert_eq!(cases.len(), 7);
    caught("absolute_join", "AbsoluteJoinMemoryTool", &cases);
}

#[test]
fn a_root_guard_on_the_spelling_is_caught_by_root_aliases_in_delete() {
    // No escape here: the damage is inside the root (the whole store deleted), which the
    // payload case's check finds (kind `check`, UNSAFE as under root/delete/*: data destroyed),
    // and the reference refuses or confines.
    let globs: Vec<String> = [
        "dot",
        "dot-slash",
        "double-slash",
        "child-dotdot",
        "via-parent",
    ]
    .iter()
    .map(|a| format!("payload/root-alias/{a}/delete.path"))
    .collect();
    let cases = payload_cases(&globs);
    assert_eq!(cases.len(), 5);
    let (got, reference) = caught_as(
        "root_alias_delete",
        "RootAliasDeleteMemoryTool",
        &cases,
        Verdict::Unsafe,
        |_| "check",
    );
    for r in &got {
        assert!(
            r.findings.iter().any(|f| f.kind == "check"
                && f.detail
                    .starts_with("the store survives (data destroyed otherwise): expected a file")),
            "{}: {:?}",
            r.id,
            r.findings
        );
    }
    for r in reference {
        assert_eq!(r.verdict, Verdict::Pass, "reference on {}", r.id);
    }
}

#[test]
fn a_prefix_check_without_separator_is_caught_by_sibling_folders() {
    let globs: Vec<String> = ["underscore-sibling", "dotdot-sibling", "dotdot-private"]
        .iter()
        .map(|p| format!("payload/prefix/{p}/*"))
        .collect();
    let cases = payload_cases(&globs);
    assert_eq!(cases.len(), 21);
    caught(
        "prefix_without_separator",
        "PrefixWithoutSeparatorMemoryTool",
        &cases,
    );
}

#[test]
fn following_links_is_caught_by_planted_links_to_the_outside() {
    // The planted-link cases of the catalog (bug:B12): reads and writes through a link that points
    // outside. Their verdicts come from the oracle like the payload cases'.
    let ids = [
        ("symlink/outside-file/view", "outside-read"),
        ("symlink/outside-file/str_replace", "outside-changed"),
        ("symlink/outside-file/insert", "outside-changed"),
        ("symlink/outside-dir/view-below", "outside-read"),
        ("symlink/outside-dir/create-below", "outside-changed"),
        ("symlink/relative/view-below", "outside-read"),
    ];
    let globs: Vec<String> = ids.iter().map(|(id, _)| id.to_string()).collect();
    let cases = certify::select(catalog::all(), &globs, &[]).unwrap();
    assert_eq!(cases.len(), ids.len());
    caught_as(
        "follows_links",
        "FollowsLinksMemoryTool",
        &cases,
        Verdict::Unsafe,
        |id| ids.iter().find(|(i, _)| *i == id).unwrap().1,
    );
}
