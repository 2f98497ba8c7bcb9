//! What the integration test binaries share: where the repository and the pinned SDKs are, the
//! SDK adapters as targets, and running cases to records. Included with
//! `#[path = "../common/mod.rs"] mod common;` (each binary uses a part of it).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use memcert::certify::{self, CaseRecord, Config};
use memcert::scratch::Scratch;
use memcert::suite::verdict::Verdict;
use memcert::suite::Case;
use memcert::target::stdio::Stdio;
use memcert::target::{node, python, Target};
use memcert::text::Profile;

/// The repository (the workspace root, two levels above this crate).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `memcert ARGS` run from the repository: its exit code, stdout and stderr.
pub fn memcert(args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memcert"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The pinned interpreter: `MEMCERT_PYTHON`, else `.venv/bin/python` (made by scripts/test.sh).
pub fn python() -> String {
    if let Ok(p) = std::env::var("MEMCERT_PYTHON") {
        return p;
    }
    let venv = root().join(".venv/bin/python");
    assert!(
        venv.exists(),
        "no .venv: run scripts/test.sh, which installs the pinned anthropic==2.14.0"
    );
    venv.to_string_lossy().into_owned()
}

/// `adapters/node`, whose `node_modules` holds the pinned @anthropic-ai/sdk.
pub fn node_path() -> PathBuf {
    let p = root().join("adapters/node");
    assert!(
        p.join("node_modules/@anthropic-ai/sdk").exists(),
        "no adapters/node/node_modules: run scripts/test.sh, which installs the pinned @anthropic-ai/sdk 1.14.0"
    );
    p
}

/// A Python handler (`file.py:Class` or `module:Class`) behind the adapter, run from the
/// repository; the folder guard holds the adapter's copy.
pub fn python_target(spec: &str, timeout: Duration) -> (Scratch, Stdio) {
    let dir = Scratch::new("memcert-adapter-").unwrap();
    let mut cmd = python::adapter_command(&dir, &python(), spec).unwrap();
    cmd.current_dir(root());
    (dir, Stdio::new(cmd, timeout))
}

/// A Node handler behind the adapter, with the pinned SDK, run from the repository.
pub fn node_target(spec: &str) -> (Scratch, Stdio) {
    let dir = Scratch::new("memcert-adapter-").unwrap();
    let mut cmd = node::adapter_command(&dir, "node", spec, Some(&node_path())).unwrap();
    cmd.current_dir(root());
    (dir, Stdio::new(cmd, Duration::from_secs(20)))
}

/// Run `cases` in `profile` and return every record, in run order.
pub fn run_cases(target: &mut dyn Target, profile: Profile, cases: &[Case]) -> Vec<CaseRecord> {
    let config = Config {
        profile,
        ..Default::default()
    };
    let (_, records) = certify::run_collect(&config, cases, target);
    assert_eq!(records.len(), cases.len());
    records
}

/// An expected verdict map from (id, verdict) pairs.
pub fn want<const N: usize>(pairs: [(&str, Verdict); N]) -> BTreeMap<String, Verdict> {
    pairs
        .into_iter()
        .map(|(id, v)| (id.to_owned(), v))
        .collect()
}

/// The pinned Python SDK's filesystem handler, as an adapter spec.
pub const PYTHON_SDK_HANDLER: &str = "anthropic.tools:BetaLocalFilesystemMemoryTool";
/// The pinned TypeScript SDK's filesystem handler, as an adapter spec.
pub const TYPESCRIPT_SDK_HANDLER: &str =
    "@anthropic-ai/sdk/tools/memory/node:BetaLocalFilesystemMemoryTool";

/// The stock handler of the SDK a profile names (`python-sdk` or `typescript-sdk`) behind its
/// adapter.
pub fn sdk_target(profile: Profile) -> (Scratch, Stdio) {
    match profile {
        Profile::PythonSdk => python_target(PYTHON_SDK_HANDLER, Duration::from_secs(20)),
        Profile::TypescriptSdk => node_target(TYPESCRIPT_SDK_HANDLER),
        Profile::Docs => panic!("no SDK handler for the docs profile"),
    }
}

/// Every shipped transcript's verdict with the stock Python SDK handler, over stdio and through
/// the app alike (docs/transcripts.md): NON-STRICT for the `/memories` prefix without a
/// separator (spec:3/P-1), INFO for backslash and percent-encoded names taken literally inside the
/// store (bug:B19, bug:B21), as the catalog grades them.
const PYTHON_SDK_TRANSCRIPTS: [(&str, Verdict); 15] = [
    ("app/create-edit-insert-view", Verdict::Pass),
    ("app/create-view", Verdict::Pass),
    ("app/delete-file-and-folder", Verdict::Pass),
    ("app/edit-steps", Verdict::Pass),
    ("app/insert-top-and-end", Verdict::Pass),
    ("app/one-turn-dependent", Verdict::Pass),
    ("app/one-turn-independent", Verdict::Pass),
    ("app/prefix-confusion", Verdict::NonStrict),
    ("app/rename-steps", Verdict::Pass),
    ("app/str-replace-refused", Verdict::Pass),
    ("app/symlink-outside", Verdict::Pass),
    ("app/traversal-refused", Verdict::Pass),
    ("app/traversal-variants", Verdict::Info),
    ("app/two-tool-uses", Verdict::Pass),
    ("app/view-range", Verdict::Pass),
];

/// Every shipped transcript's verdict with the stock handler of `profile`'s SDK. TypeScript is
/// as Python except that one turn's create and view of the same file run concurrently (its
/// runner's `Promise.all`, its adapter's batch): the view answers "does not exist", NON-STRICT
/// (a SHOULD transcript; 3/3 in the wire notes, every run here).
pub fn transcript_verdicts(profile: Profile) -> BTreeMap<String, Verdict> {
    let mut v = want(PYTHON_SDK_TRANSCRIPTS);
    if profile == Profile::TypescriptSdk {
        v.insert("app/one-turn-dependent".into(), Verdict::NonStrict);
    }
    v
}

/// The URL that `memcert mock-api` and `memcert record` print as their first line,
/// `ANTHROPIC_BASE_URL=URL`, read from `out` (the child's stdout); panics with the line when it
/// is something else.
pub fn base_url_line(out: &mut impl std::io::BufRead) -> String {
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    first
        .trim()
        .strip_prefix("ANTHROPIC_BASE_URL=")
        .unwrap_or_else(|| panic!("{first}"))
        .to_owned()
}
