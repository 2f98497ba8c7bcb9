//! Every citation resolves: the sources of every case of the full catalog and every `kind:ref`
//! id written in the code, the data files, the README and `docs/` name an anchor of the spec
//! pages (`docs/spec/`, `CONTRIBUTING.md`), each anchor is defined once, and nothing points at
//! the spec's old home outside the repository.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use memcert::suite::catalog::{self, RunLevel};
use memcert::suite::spec;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The files git tracks (and the untracked ones it does not ignore) whose citations count.
fn cited_files() -> Vec<String> {
    let out = Command::new("git")
        .args(["ls-files", "--cached", "--others", "--exclude-standard"])
        .current_dir(root())
        .output()
        .expect("git runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|f| {
            let counted =
                f.starts_with("crates/") || f.starts_with("docs/") || f.starts_with("fixtures/");
            let kind = [".rs", ".toml", ".md", ".json"]
                .iter()
                .any(|e| f.ends_with(e));
            (counted && kind)
                || *f == "README.md"
                || *f == "CONTRIBUTING.md"
                || *f == "fuzz/README.md"
        })
        .filter(|f| !f.starts_with("fixtures/baselines/") && !f.ends_with(".snap"))
        // This file spells the old forms it looks for.
        .filter(|f| *f != "crates/memcert-cli/tests/citations.rs")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_anchor_is_defined_once() {
    assert_eq!(spec::spec().duplicates, Default::default());
    assert!(
        spec::spec().items.len() > 200,
        "{}",
        spec::spec().items.len()
    );
}

#[test]
fn every_case_cites_existing_ids() {
    let mut dangling = BTreeSet::new();
    for case in catalog::for_level(RunLevel::Full) {
        assert!(!case.source.is_empty(), "{} cites nothing", case.id);
        for id in &case.source {
            if spec::lookup(id).is_none() {
                dangling.insert(format!("{}: {id}", case.id.split('/').next().unwrap()));
            }
        }
    }
    assert_eq!(
        dangling,
        BTreeSet::new(),
        "case sources that name no anchor"
    );
}

#[test]
fn every_id_in_the_tree_resolves() {
    let mut dangling = BTreeSet::new();
    for file in cited_files() {
        let Ok(text) = std::fs::read_to_string(root().join(&file)) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            // A deliberate non-id (a near miss a test feeds to `explain`) says so on its line.
            if line.contains("(not a citation)") {
                continue;
            }
            for id in spec::cited_ids(line) {
                if spec::lookup(&id).is_none() {
                    dangling.insert(format!("{file}:{}: {id}", n + 1));
                }
            }
        }
    }
    assert_eq!(dangling, BTreeSet::new(), "citations that name no anchor");
}

/// A path row cited without its kind and section (`S-4`, `P-14` not preceded by `spec:3/`).
fn bare_row_id(line: &str) -> bool {
    let b = line.as_bytes();
    (1..b.len().saturating_sub(1)).any(|i| {
        b[i] == b'-'
            && matches!(b[i - 1], b'S' | b'P')
            && b[i + 1].is_ascii_digit()
            && (i < 2 || !(b[i - 2].is_ascii_alphanumeric() || b[i - 2] == b'/'))
    })
}

#[test]
fn old_citation_forms_are_gone() {
    let mut old = BTreeSet::new();
    for file in cited_files() {
        let Ok(text) = std::fs::read_to_string(root().join(&file)) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let section_sign =
                line.contains('\u{a7}') || bare_row_id(line) || line.contains(" [G3-");
            let style_rule = line.contains(concat!("style", " rule"));
            let outside = ["spec", "style", "hooks"]
                .iter()
                .any(|d| line.contains(&format!("{}/{d}", "shared")));
            if section_sign || style_rule || outside {
                old.insert(format!("{file}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert_eq!(
        old,
        BTreeSet::new(),
        "old citation forms or paths outside the repository"
    );
}
