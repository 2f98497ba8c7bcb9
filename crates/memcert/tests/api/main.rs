//! The in-process API for Rust users: `memcert::certify(&mut handler, &options)`.

use std::path::{Path, PathBuf};

use memcert::handler::reference::{Options as RefOptions, Reference};
use memcert::handler::Handler;
use memcert::protocol::ToolResult;
use memcert::suite::catalog::{self, RunLevel};
use memcert::suite::verdict::Verdict;
use memcert::text::Profile;
use serde_json::Value;

fn reference() -> Reference {
    // Any existing folder: `reset` points it at each case's store.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("memories");
    std::fs::create_dir(&root).unwrap();
    let h = Reference::open_ambient(
        &root,
        Profile::Docs,
        RefOptions {
            fsync: false,
            ..RefOptions::default()
        },
    )
    .unwrap();
    std::mem::forget(dir); // the handle is re-pointed at the first reset
    h
}

#[test]
fn the_reference_handler_is_certified_in_process() {
    let mut h = reference();
    let run = memcert::certify(
        &mut h,
        &memcert::Options {
            level: RunLevel::Quick,
            exclude: vec!["race/*".into()],
            ..Default::default()
        },
    )
    .unwrap();
    run.assert_certified();
    let races = catalog::all().iter().filter(|c| c.race.is_some()).count();
    assert_eq!(
        run.summary.total,
        catalog::for_level(RunLevel::Quick).len() - races
    );
    assert_eq!(run.cases.len(), run.summary.total);
    assert_eq!(run.summary.target, "Rust handler");
    assert_eq!(run.summary.counts["UNSAFE"], 0);
}

/// A wrapper that appends its host folder to every error: a host-path disclosure.
struct Leaky {
    inner: Reference,
    root: PathBuf,
}

impl Handler for Leaky {
    fn apply(&mut self, input: &Value) -> ToolResult {
        let mut r = self.inner.apply(input);
        if r.is_error {
            r = ToolResult::error(format!("{} (store: {})", r.text(), self.root.display()));
        }
        r
    }
    fn reset(&mut self, base: &Path, root: &Path) -> std::io::Result<()> {
        self.root = root.to_path_buf();
        self.inner.reset(base, root)
    }
}

#[test]
fn a_flawed_rust_handler_is_caught_and_the_assertion_shows_the_report() {
    let mut h = Leaky {
        inner: reference(),
        root: PathBuf::new(),
    };
    let options = memcert::Options {
        cases: vec!["view/missing".into(), "view/dir/nested".into()],
        name: "leaky".into(),
        ..Default::default()
    };
    let run = memcert::certify(&mut h, &options).unwrap();
    let verdicts: Vec<(&str, Verdict)> = run
        .cases
        .iter()
        .map(|c| (c.id.as_str(), c.verdict))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("view/dir/nested", Verdict::Pass),
            ("view/missing", Verdict::Unsafe)
        ]
    );
    assert_eq!(run.cases[1].findings[0].kind, "host-path-disclosed");
    let panic = std::panic::catch_unwind(|| run.assert_certified()).unwrap_err();
    let text = panic.downcast_ref::<String>().unwrap();
    assert!(
        text.starts_with("the handler is not certified:\nmemcert "),
        "{text}"
    );
    assert!(text.contains("target:  leaky\n"), "{text}");
    assert!(
        text.ends_with("verdict: NOT CERTIFIED (1 UNSAFE)\n"),
        "{text}"
    );
}

/// Answers everything but cannot be given a fresh store.
struct NoReset;

impl Handler for NoReset {
    fn apply(&mut self, _: &Value) -> ToolResult {
        ToolResult::ok("ok")
    }
}

#[test]
fn a_handler_without_reset_is_error_with_the_reason_and_bad_globs_are_errors() {
    let options = memcert::Options {
        cases: vec!["view/missing".into()],
        ..Default::default()
    };
    let run = memcert::certify(&mut NoReset, &options).unwrap();
    assert_eq!(run.cases[0].verdict, Verdict::Error);
    // Nothing is sent without a store: the one step record holds the reset error.
    let step = &run.cases[0].steps[0];
    assert!(step.reply.is_none());
    assert!(
        step.error
            .as_deref()
            .unwrap()
            .starts_with("reset failed: this handler does not implement Handler::reset"),
        "{:?}",
        step.error
    );
    let bad = memcert::Options {
        cases: vec!["view/[".into()],
        ..Default::default()
    };
    assert!(matches!(
        memcert::certify(&mut NoReset, &bad),
        Err(memcert::Error::Glob(_))
    ));
    let none = memcert::Options {
        cases: vec!["no-such/*".into()],
        ..Default::default()
    };
    assert_eq!(
        memcert::certify(&mut NoReset, &none)
            .unwrap_err()
            .to_string(),
        "no case matches the case globs; `memcert cases` lists the ids"
    );
}
