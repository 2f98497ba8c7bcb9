//! Start-up is judged once, a refusal to start on a replaced store root is a refusal, and inputs
//! name the sandbox only through its alias: Python handlers from `fixtures/handlers/` behind
//! the adapter (pinned `anthropic` in `.venv`), each with the exact verdicts it must get.

use std::collections::BTreeMap;
use std::time::Duration;

#[path = "../common/mod.rs"]
mod common;
use common::*;

use memcert::certify::{self, CaseRecord, Config, STARTUP_CASE};
use memcert::suite::catalog;
use memcert::suite::verdict::Verdict;
use memcert::target::Target;
use memcert::text::Profile;

/// The cases that replace the store root before the handler starts.
const ROOT_CASES: [&str; 3] = [
    "scenario/root-symlink/*",
    "scenario/root-fifo/*",
    "scenario/root-file/*",
];

/// Every record (the start-up case included) of the cases matching `globs`.
fn records(target: &mut dyn Target, globs: &[&str]) -> Vec<CaseRecord> {
    let globs: Vec<String> = globs.iter().map(|s| s.to_string()).collect();
    let standard = catalog::for_level(catalog::RunLevel::Standard);
    let cases = certify::select(standard, &globs, &["race/*".to_owned()]).unwrap();
    let config = Config {
        profile: Profile::PythonSdk,
        ..Default::default()
    };
    certify::run_collect(&config, &cases, target).1
}

fn verdicts(records: &[CaseRecord]) -> BTreeMap<String, Verdict> {
    records.iter().map(|r| (r.id.clone(), r.verdict)).collect()
}

/// The 15 replaced-root cases, each with `verdict`.
fn all_root_cases(verdict: Verdict) -> BTreeMap<String, Verdict> {
    let mut m = BTreeMap::new();
    for root in ["root-symlink", "root-fifo", "root-file"] {
        for command in ["view", "create", "str_replace", "delete", "rename"] {
            m.insert(format!("scenario/{root}/{command}"), verdict);
        }
    }
    m
}

/// The detail of the `refused-at-start` finding of each record (all must have one).
fn refusals(records: &[CaseRecord]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            r.findings
                .iter()
                .find(|f| f.kind == "refused-at-start")
                .unwrap_or_else(|| panic!("{}: {:#?}", r.id, r.findings))
                .detail
                .clone()
        })
        .collect()
}

#[test]
fn a_careful_handler_that_refuses_a_replaced_root_in_its_constructor_passes() {
    let (_dir, mut t) = python_target(
        "fixtures/handlers/cold/careful_fs.py:CarefulFsMemoryTool",
        Duration::from_secs(20),
    );
    let recs = records(&mut t, &ROOT_CASES);
    assert_eq!(verdicts(&recs), all_root_cases(Verdict::Pass));
    let shown = refusals(&recs);
    assert_eq!(
        shown[..5],
        ["the handler refused to start on this store: RuntimeError('the memory store root is a symbolic link; refusing to start')"; 5]
    );
    assert_eq!(
        shown[5..],
        ["the handler refused to start on this store: FileExistsError(17, 'File exists')"; 10]
    );
}

#[test]
fn an_exit_with_a_message_is_a_refusal_but_a_signal_a_late_answer_or_no_start_is_not() {
    let spec = |class: &str| format!("fixtures/handlers/odd_root.py:{class}");
    // Each refusal restarts the adapter: a few cases of each kind.
    let some = [
        "scenario/root-symlink/*",
        "scenario/root-fifo/view",
        "scenario/root-file/view",
    ];
    let (_dir, mut t) = python_target(&spec("ExitsOnOddRoot"), Duration::from_secs(20));
    let recs = records(&mut t, &some);
    let mut want = all_root_cases(Verdict::Pass);
    want.retain(|id, _| id.starts_with("scenario/root-symlink/") || id.ends_with("/view"));
    assert_eq!(verdicts(&recs), want);
    for shown in refusals(&recs) {
        // The stderr tail (earlier starts' lines too), from the handler's own message.
        assert!(
            shown.starts_with(
                "the handler refused to start on this store (exit status: 3): odd_root: the memory folder is not a plain folder; not starting"
            ),
            "{shown}"
        );
    }

    let (_dir, mut t) = python_target(&spec("KilledOnOddRoot"), Duration::from_secs(20));
    let recs = records(&mut t, &["scenario/root-fifo/*"]);
    let mut want = all_root_cases(Verdict::Error);
    want.retain(|id, _| id.starts_with("scenario/root-fifo/"));
    assert_eq!(verdicts(&recs), want);

    // Refused after 3 s: too late with a 1 s limit, a refusal with 20 s.
    let (_dir, mut t) = python_target(&spec("SlowOnOddRoot"), Duration::from_secs(1));
    let recs = records(&mut t, &["scenario/root-file/view"]);
    assert_eq!(
        verdicts(&recs),
        BTreeMap::from([("scenario/root-file/view".to_owned(), Verdict::Error)])
    );
    let (_dir, mut t) = python_target(&spec("SlowOnOddRoot"), Duration::from_secs(20));
    let recs = records(&mut t, &["scenario/root-file/view"]);
    assert_eq!(
        verdicts(&recs),
        BTreeMap::from([("scenario/root-file/view".to_owned(), Verdict::Pass)])
    );

    let (_dir, mut t) = python_target(&spec("AlwaysRefuses"), Duration::from_secs(20));
    let recs = records(&mut t, &["scenario/root-symlink/*", "view/missing"]);
    let mut want = all_root_cases(Verdict::Error);
    want.retain(|id, _| id.starts_with("scenario/root-symlink/"));
    want.insert("view/missing".into(), Verdict::Error);
    assert_eq!(verdicts(&recs), want);
}

#[test]
fn a_constructor_that_writes_beside_the_store_is_one_unsafe_startup_case() {
    let globs = [
        "view/*",
        "create/*",
        "delete/*",
        "traversal/dotdot/*",
        "scenario/root-*",
    ];
    let (_dir, mut t) = python_target(
        "fixtures/handlers/startup_litter.py:StartupLitter",
        Duration::from_secs(20),
    );
    let litter = records(&mut t, &globs);
    let (_dir, mut t) = sdk_target(Profile::PythonSdk);
    let sdk = records(&mut t, &globs);
    // The SDK's handler makes nothing outside at start-up: no start-up case.
    assert!(sdk.iter().all(|r| r.id != STARTUP_CASE));
    // The litter: one UNSAFE start-up case, first, naming what was made ...
    assert_eq!(litter[0].id, STARTUP_CASE);
    assert_eq!(litter[0].verdict, Verdict::Unsafe);
    let details: Vec<&str> = litter[0]
        .findings
        .iter()
        .map(|f| f.detail.as_str())
        .collect();
    assert_eq!(
        details,
        [
            "outside the root, base/handler-cache was created",
            "outside the root, base/handler-cache/started.log was created"
        ]
    );
    assert_eq!(litter.iter().filter(|r| r.id == STARTUP_CASE).count(), 1);
    // ... and otherwise exactly the SDK's verdicts.
    assert_eq!(verdicts(&litter[1..]), verdicts(&sdk));
    assert!(sdk.len() > 60, "{}", sdk.len());
}

#[test]
fn inputs_name_the_sandbox_through_the_alias_and_echoes_of_them_are_not_disclosure() {
    // careful_fs.py repeats the path it was sent in its errors (through repr, `//` collapsed):
    // 72 false host-path-disclosed UNSAFE when inputs held the run folder's real path.
    let globs = [
        "payload/absolute/*",
        "payload/traversal/plain/*",
        "payload/traversal/encoded-lower/*",
        "traversal/deep/*",
        "traversal/absolute/*",
    ];
    let (_dir, mut t) = python_target(
        "fixtures/handlers/cold/careful_fs.py:CarefulFsMemoryTool",
        Duration::from_secs(20),
    );
    let recs = records(&mut t, &globs);
    assert!(recs.len() > 100, "{}", recs.len());
    let mut through_alias = 0;
    for r in &recs {
        assert!(r.verdict < Verdict::Fail, "{}: {:#?}", r.id, r.findings);
        for s in &r.steps {
            let input = s.input.to_string();
            // The run folder is `memcert-` and six characters; the alias `memcert-alias-...`,
            // beside it in the handler's scratch root `memcert-scratch-...`.
            let real = input.match_indices("memcert-").any(|(i, _)| {
                !input[i..].starts_with("memcert-alias-")
                    && !input[i..].starts_with("memcert-scratch-")
            });
            assert!(!real, "{}: {input}", r.id);
            through_alias += usize::from(input.contains("memcert-alias-"));
        }
    }
    assert!(through_alias > 50, "{through_alias}");
}
