//! `memcert explain` and `memcert cases --format jsonl` work from the binary alone: the spec and
//! the catalog are compiled in, so a copy of the binary run in an empty folder, far from the
//! repository, explains a case id, a spec row and a bug id.

use std::process::{Command, Output};

/// The binary's two jobs that need no repository, checked on one copy of the binary by one
/// test. Two tests each copying the binary raced: a test that forked while the other still held
/// its copy's write descriptor handed that descriptor to its child, and exec of the copy then
/// failed with ETXTBSY ("Text file busy"), as it did once in CI.
#[test]
fn a_lone_binary_explains_and_lists_cases() {
    let (dir, bin) = lone_binary();
    explain_works_without_the_repository(&bin);
    cases_jsonl_gives_each_case_its_citations_and_definition(&bin);
    drop(dir);
}

fn lone_binary() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("memcert");
    std::fs::copy(env!("CARGO_BIN_EXE_memcert"), &bin).unwrap();
    (dir, bin)
}

fn run(bin: &std::path::Path, cwd: &std::path::Path, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn explain_works_without_the_repository(bin: &std::path::Path) {
    let empty = tempfile::tempdir().unwrap();

    let bug = run(bin, empty.path(), &["explain", "bug:B10"]);
    assert!(bug.status.success());
    let text = stdout(&bug);
    let mut lines = text.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("bug:B10  (docs/spec/bugs.md:"));
    assert_eq!(lines.next(), Some(""));
    assert_eq!(
        lines.next(),
        Some("## `bug:B10` — intermediate symlinked directory (and a symlinked store root)")
    );
    assert_eq!(
        stdout(&run(bin, empty.path(), &["explain", "bug:B10"])),
        text
    );

    let row = stdout(&run(bin, empty.path(), &["explain", "spec:3/S-4"]));
    assert!(
        row.starts_with("spec:3/S-4  (docs/spec/memory-tool.md:"),
        "{row}"
    );
    assert!(
        row.lines().nth(4).unwrap().starts_with("| `spec:3/S-4` |"),
        "{row}"
    );

    let case = stdout(&run(bin, empty.path(), &["explain", "view/dir/empty-root"]));
    let want = "view/dir/empty-root\n  \
requirement: view of an empty /memories MUST list the root itself under the documented header.\n  \
level:       MUST\n  \
defined:     crates/memcert-cases/src/catalog/view.rs:";
    assert!(case.starts_with(want), "{case}");
    assert!(
        case.contains("\n  source:      spec:2.1/A1\n\nspec:2.1/A1  (docs/spec/memory-tool.md:")
    );

    let near = run(bin, empty.path(), &["explain", "bug:B1"]); // (not a citation)
    assert_eq!(near.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&near.stderr),
        "memcert: error: \"bug:B1\" names nothing; bug ids have two digits and a capital B: bug:B01\n" // (not a citation)
    );
    let long = "x".repeat(100_000);
    let cut = run(bin, empty.path(), &["explain", &long]);
    assert_eq!(cut.status.code(), Some(2));
    assert!(cut.stderr.len() < 400, "{}", cut.stderr.len());

    let none = run(bin, empty.path(), &["explain", "view/nope"]);
    assert_eq!(none.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&none.stderr).lines().next().unwrap(),
        "memcert: error: \"view/nope\" is neither a case id (`memcert cases --level full` lists them) nor a spec or bug id (spec:2.1/D3, spec:3/S-4, bug:B10, wire:5, ctx:request, rule:8)"
    );
}

fn cases_jsonl_gives_each_case_its_citations_and_definition(bin: &std::path::Path) {
    let empty = tempfile::tempdir().unwrap();
    let out = run(
        bin,
        empty.path(),
        &[
            "cases",
            "--format",
            "jsonl",
            "--level",
            "full",
            "--cases",
            "payload/traversal/plain/slash/depth-1/view.path",
        ],
    );
    assert!(out.status.success());
    assert_eq!(
        stdout(&out),
        "{\"id\":\"payload/traversal/plain/slash/depth-1/view.path\",\"level\":\"should\",\
\"requirement\":\"A path that names something outside /memories as written (a real .. or a sibling \
prefix) SHOULD be refused even when the handler keeps it inside, and nothing outside the root may \
be read or written (MUST, judged by the oracle).\",\"source\":[\"bug:B01\"],\
\"defined\":\"crates/memcert-cases/src/payloads.toml:13\"}\n"
    );
    let all = stdout(&run(
        bin,
        empty.path(),
        &["cases", "--format", "jsonl", "--level", "full"],
    ));
    for line in all.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let defined = v["defined"].as_str().unwrap();
        let (file, line_no) = defined.rsplit_once(':').unwrap();
        assert!(file.starts_with("crates/"), "{defined}");
        assert!(line_no.parse::<usize>().unwrap() > 0, "{defined}");
    }
}
