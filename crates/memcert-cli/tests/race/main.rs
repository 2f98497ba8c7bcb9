//! Race cases (`race/*`, spec:3/S-10): a directory swapped for a link to the outside while commands
//! run. Apart from `tests/certify/` and in one test, so no sibling test competes for the two
//! cores while the harness swaps: a race finds a check-then-use handler with some probability
//! only, and that probability falls under load.

#[path = "../common/mod.rs"]
mod common;
use common::*;

use std::time::Duration;

use memcert::certify::{run_case, Config};
use memcert::suite::catalog;
use memcert::suite::verdict::Verdict;
use memcert::target::inproc::InProcess;
use memcert::target::Target;
use memcert::text::Profile;

fn verdicts(target: &mut dyn Target, profile: Profile) -> Vec<(String, Verdict)> {
    let config = Config {
        profile,
        strict: false,
        ..Default::default()
    };
    let out = catalog::all()
        .iter()
        .filter(|c| c.race.is_some())
        .map(|c| (c.id.clone(), run_case(c, target, &config).verdict))
        .collect();
    target.shutdown();
    out
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

    // Python SDK 2.14.0: each race leaks on some runs only (measured here over 8 runs of the 7
    // races under load: the redirected delete and rename-source leaked on every run, the others
    // on 5 to 7 of 8; a run under a load spike leaked in 3 of the 7), so no single case is
    // asserted UNSAFE; every case is UNSAFE or PASS, and a run where none leaks is a regression
    // of the harness.
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
