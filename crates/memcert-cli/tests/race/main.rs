//! Race cases (`race/*`, spec:3/S-10): a directory swapped for a link to the outside while commands
//! run. Apart from `tests/certify/` and in one test, so no sibling test competes for the two
//! cores while the harness swaps: a race finds a check-then-use handler with some probability
//! only, and that probability falls under load.

#[path = "../common/mod.rs"]
mod common;
use common::*;

use std::time::Duration;

use std::path::{Path, PathBuf};

use memcert::certify::{run_rounds, CaseRecord, Config, DEFAULT_RACE_ROUNDS};
use memcert::protocol::ToolResult;
use memcert::suite::catalog;
use memcert::suite::verdict::Verdict;
use memcert::target::inproc::InProcess;
use memcert::target::{Target, TargetError};
use memcert::text::Profile;
use serde_json::Value;

/// Each race case run for `rounds` rounds (`None`: the default), in catalog order.
fn records(target: &mut dyn Target, profile: Profile, rounds: Option<u32>) -> Vec<CaseRecord> {
    let config = Config {
        profile,
        strict: false,
        race_rounds: rounds,
        ..Default::default()
    };
    let out = catalog::all()
        .iter()
        .filter(|c| c.race.is_some())
        .map(|c| run_rounds(c, target, &config))
        .collect();
    target.shutdown();
    out
}

fn verdicts(target: &mut dyn Target, profile: Profile) -> Vec<(String, Verdict)> {
    let recs = records(target, profile, None);
    for r in &recs {
        check_rounds_finding(r, DEFAULT_RACE_ROUNDS);
    }
    recs.into_iter().map(|r| (r.id, r.verdict)).collect()
}

/// A race record carries one `race-rounds` finding: first and UNSAFE, "leaked in k of n
/// rounds" with 1 <= k <= n, when the case is UNSAFE; last and PASS, "no leak in n rounds",
/// when it is PASS.
fn check_rounds_finding(r: &CaseRecord, n: u32) {
    let rounds: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == "race-rounds")
        .collect();
    assert_eq!(rounds.len(), 1, "{}: {:?}", r.id, r.findings);
    let f = rounds[0];
    match r.verdict {
        Verdict::Unsafe => {
            assert_eq!(r.findings[0].kind, "race-rounds", "{}", r.id);
            assert_eq!(f.verdict, Verdict::Unsafe, "{}", r.id);
            let k: u32 = f
                .detail
                .strip_prefix("leaked in ")
                .and_then(|rest| rest.split(' ').next())
                .and_then(|k| k.parse().ok())
                .unwrap_or_else(|| panic!("{}: {}", r.id, f.detail));
            assert!((1..=n).contains(&k), "{}: {}", r.id, f.detail);
            assert!(
                f.detail
                    .starts_with(&format!("leaked in {k} of {n} rounds")),
                "{}: {}",
                r.id,
                f.detail
            );
        }
        Verdict::Pass => {
            assert_eq!(r.findings.last(), Some(f), "{}", r.id);
            assert_eq!(f.verdict, Verdict::Pass);
            assert_eq!(f.detail, format!("no leak in {n} rounds"), "{}", r.id);
        }
        v => panic!("{}: {v:?} {:?}", r.id, r.findings),
    }
}

/// The reference handler, except that in the rounds listed (counted by resets, from 1) its
/// first answer is the text of every file in the sandbox's outside folder: a leak in exactly
/// those rounds.
struct LeaksInRounds {
    inner: InProcess,
    leaky: Vec<u32>,
    resets: u32,
    leak_now: bool,
    base: PathBuf,
}

impl LeaksInRounds {
    fn new(leaky: &[u32]) -> Self {
        LeaksInRounds {
            inner: InProcess::reference(Profile::Docs),
            leaky: leaky.to_vec(),
            resets: 0,
            leak_now: false,
            base: PathBuf::new(),
        }
    }
}

fn outside_text(dir: &Path, out: &mut String) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_symlink() {
            continue;
        }
        if p.is_dir() {
            outside_text(&p, out);
        } else if let Ok(t) = std::fs::read_to_string(&p) {
            out.push_str(&t);
        }
    }
}

impl Target for LeaksInRounds {
    fn describe(&self) -> String {
        "leaks in chosen rounds".into()
    }
    fn reset(&mut self, base_dir: &Path, memories_dir: &Path) -> Result<(), TargetError> {
        self.resets += 1;
        self.leak_now = self.leaky.contains(&self.resets);
        self.base = base_dir.to_path_buf();
        self.inner.reset(base_dir, memories_dir)
    }
    fn call(&mut self, input: &Value) -> Result<ToolResult, TargetError> {
        if std::mem::take(&mut self.leak_now) {
            let mut text = String::new();
            outside_text(&self.base.join("outside"), &mut text);
            assert!(!text.is_empty(), "no outside files under {:?}", self.base);
            return Ok(ToolResult::ok(text));
        }
        self.inner.call(input)
    }
}

#[test]
fn a_race_case_runs_its_rounds_and_counts_the_leaking_ones() {
    let case = catalog::all()
        .into_iter()
        .find(|c| c.id == "race/swap-dir/view")
        .expect("race/swap-dir/view");
    let config = |rounds| Config {
        race_rounds: Some(rounds),
        ..Default::default()
    };
    // Rounds 2 and 4 of 5 leak: UNSAFE, "leaked in 2 of 5 rounds", first.
    let mut t = LeaksInRounds::new(&[2, 4]);
    let r = run_rounds(&case, &mut t, &config(5));
    assert_eq!(t.resets, 5);
    assert_eq!(r.verdict, Verdict::Unsafe);
    assert_eq!(r.findings[0].kind, "race-rounds");
    assert_eq!(
        r.findings[0].detail,
        "leaked in 2 of 5 rounds (one leak is UNSAFE; the steps shown are those of the first \
         leaking round)"
    );
    check_rounds_finding(&r, 5);
    // One leak in the last of 3 rounds is enough.
    let mut t = LeaksInRounds::new(&[3]);
    let r = run_rounds(&case, &mut t, &config(3));
    assert_eq!((t.resets, r.verdict), (3, Verdict::Unsafe));
    assert!(r.findings[0].detail.starts_with("leaked in 1 of 3 rounds"));
    // No leak in 4 rounds: PASS, and the finding says how many rounds it rests on.
    let mut t = LeaksInRounds::new(&[]);
    let r = run_rounds(&case, &mut t, &config(4));
    assert_eq!((t.resets, r.verdict), (4, Verdict::Pass));
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    assert_eq!(r.findings[0].detail, "no leak in 4 rounds");
    // A case that is not a race runs once, with no rounds finding.
    let plain = catalog::all()
        .into_iter()
        .find(|c| c.id == "view/dir/empty-root")
        .expect("view/dir/empty-root");
    let mut t = LeaksInRounds::new(&[]);
    let r = run_rounds(&plain, &mut t, &config(5));
    assert_eq!(t.resets, 1);
    assert!(r.findings.iter().all(|f| f.kind != "race-rounds"));
}

/// The race case ids, in catalog order.
fn race_ids() -> Vec<String> {
    catalog::all()
        .into_iter()
        .filter(|c| c.race.is_some())
        .map(|c| c.id)
        .collect()
}

#[test]
fn the_reference_never_leaks_and_the_sdks_are_caught() {
    let ids = race_ids();
    assert_eq!(
        ids,
        [
            "race/swap-dir/view",
            "race/swap-dir/create",
            "race/swap-dir/str_replace",
            "race/swap-dir/insert",
            "race/swap-dir/delete",
            "race/swap-dir/rename-source",
            "race/swap-dir/rename-destination",
        ]
    );
    // The reference opens by handle: PASS every time, however the swaps fall.
    for _ in 0..3 {
        let v = verdicts(&mut InProcess::reference(Profile::Docs), Profile::Docs);
        let want: Vec<(String, Verdict)> =
            ids.iter().map(|id| (id.clone(), Verdict::Pass)).collect();
        assert_eq!(v, want);
    }

    // Python SDK 2.14.0: each race leaks in some rounds only (measured here, 5 runs of 5 rounds
    // under load: 12 to 22 of 25 rounds per case; view leaked in 0 of 5 rounds in one run), so
    // no single case is asserted UNSAFE; every case is UNSAFE or PASS with its rounds finding,
    // and a run where none leaks is a regression of the harness.
    let (_dir, mut t) = python_target(PYTHON_SDK_HANDLER, Duration::from_secs(20));
    let v = verdicts(&mut t, Profile::PythonSdk);
    assert_eq!(v.len(), ids.len());
    assert!(
        v.iter()
            .all(|(_, v)| matches!(v, Verdict::Unsafe | Verdict::Pass)),
        "{v:?}"
    );
    assert!(v.iter().any(|(_, v)| *v == Verdict::Unsafe), "{v:?}");

    // TypeScript SDK 1.14.0: the raced creates, inserts and renames into the swapped directory
    // leak dozens of times per run (20 to 133 of 400), so they are UNSAFE every time. Views and
    // edits leaked on every run measured too, and so did the delete and the rename out of it,
    // but those two can leak only once per run (the outside file is then gone): UNSAFE or PASS.
    let (_dir, mut t) = node_target(TYPESCRIPT_SDK_HANDLER);
    let v = verdicts(&mut t, Profile::TypescriptSdk);
    assert_eq!(v.len(), ids.len());
    for (id, verdict) in &v {
        let certain = [
            "race/swap-dir/create",
            "race/swap-dir/insert",
            "race/swap-dir/rename-destination",
        ];
        if certain.contains(&id.as_str()) {
            assert_eq!(*verdict, Verdict::Unsafe, "{id}: {v:?}");
        } else {
            assert!(
                matches!(verdict, Verdict::Unsafe | Verdict::Pass),
                "{id}: {v:?}"
            );
        }
    }
}
