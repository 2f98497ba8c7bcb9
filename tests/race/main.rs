//! Race cases (`race/*`, §3 S-10): a directory swapped for a link to the outside while commands
//! run. Apart from `tests/certify/` and in one test, so no sibling test competes for the two
//! cores while the harness swaps: a race finds a check-then-use handler with some probability
//! only, and that probability falls under load.

use std::path::PathBuf;
use std::time::Duration;

use memcert::certify::{run_case, Config};
use memcert::suite::catalog;
use memcert::suite::verdict::Verdict;
use memcert::target::inproc::InProcess;
use memcert::target::stdio::Stdio;
use memcert::target::{node, python, Target};
use memcert::text::Profile;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn verdicts(target: &mut dyn Target, profile: Profile) -> Vec<(String, Verdict)> {
    let config = Config {
        profile,
        strict: false,
        ..Default::default()
    };
    let out = catalog::all()
        .iter()
        .filter(|c| c.id.starts_with("race/"))
        .map(|c| (c.id.clone(), run_case(c, target, &config).verdict))
        .collect();
    target.shutdown();
    out
}

#[test]
fn the_reference_never_leaks_and_the_sdks_are_caught() {
    // The reference opens by handle: PASS every time, however the swaps fall.
    for _ in 0..3 {
        let v = verdicts(&mut InProcess::reference(Profile::Docs), Profile::Docs);
        assert_eq!(
            v,
            [
                ("race/swap-dir/view".to_owned(), Verdict::Pass),
                ("race/swap-dir/create".to_owned(), Verdict::Pass)
            ]
        );
    }

    // Python SDK 2.14.0: 400 raced creates always put files outside; the raced views leak on
    // some runs (a few of 1,000), so PASS is allowed there.
    let dir = tempfile::tempdir().unwrap();
    let py = std::env::var("MEMCERT_PYTHON").unwrap_or_else(|_| {
        root()
            .join(".venv/bin/python")
            .to_string_lossy()
            .into_owned()
    });
    let cmd = python::adapter_command(
        dir.path(),
        &py,
        "anthropic.tools:BetaLocalFilesystemMemoryTool",
    )
    .unwrap();
    let v = verdicts(
        &mut Stdio::new(cmd, Duration::from_secs(20)),
        Profile::PythonSdk,
    );
    assert_eq!(v[1], ("race/swap-dir/create".to_owned(), Verdict::Unsafe));
    assert!(matches!(v[0].1, Verdict::Unsafe | Verdict::Pass), "{v:?}");

    // TypeScript SDK 1.14.0: both leak.
    let cmd = node::adapter_command(
        dir.path(),
        "node",
        "@anthropic-ai/sdk/tools/memory/node:BetaLocalFilesystemMemoryTool",
        Some(&root().join("adapters/node")),
    )
    .unwrap();
    let v = verdicts(
        &mut Stdio::new(cmd, Duration::from_secs(20)),
        Profile::TypescriptSdk,
    );
    assert_eq!(v[1], ("race/swap-dir/create".to_owned(), Verdict::Unsafe));
    assert!(matches!(v[0].1, Verdict::Unsafe | Verdict::Pass), "{v:?}");
}
