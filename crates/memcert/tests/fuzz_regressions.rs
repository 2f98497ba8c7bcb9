//! Replays the committed fuzz inputs through the same library functions the `cargo fuzz` targets
//! call (`memcert::fuzz`): the curated seeds under `fuzz/seeds/<target>/`, the corpora
//! the long runs found (minimized with `cargo fuzz cmin`) under `fuzz/found/<target>/`, and the
//! minimized crash reproducers under `fuzz/regressions/<target>/`. A new reproducer goes into
//! `fuzz/regressions/<target>/` with a named test below when it shows a notable bug.

use std::path::PathBuf;

use memcert::fuzz;

fn inputs(kind: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join("fuzz")
        .join(kind)
        .join(target);
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn vpath_seeds_and_regressions() {
    let seeds = inputs("seeds", "vpath");
    assert!(
        seeds.len() >= 300,
        "the seed corpus is missing: run scripts/make-fuzz-seeds.sh"
    );
    for (_, data) in seeds.iter().chain(&inputs("regressions", "vpath")) {
        fuzz::vpath(data);
    }
}

#[test]
fn tool_input_seeds_and_regressions() {
    let seeds = inputs("seeds", "tool_input");
    assert!(
        seeds.len() >= 300,
        "the seed corpus is missing: run scripts/make-fuzz-seeds.sh"
    );
    for (path, data) in seeds.iter().chain(&inputs("regressions", "tool_input")) {
        let v: serde_json::Value =
            serde_json::from_slice(data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        fuzz::tool_input_value(&v);
    }
}

#[test]
fn the_corpora_the_long_runs_found() {
    // 30 minutes per target on the reference (see fuzz/README.md), minimized with `cargo fuzz
    // cmin`: every input as raw bytes, as the targets take them.
    for (target, run) in [
        ("vpath", fuzz::vpath as fn(&[u8])),
        ("tool_input", fuzz::tool_input),
        ("command_sequence", fuzz::command_sequence),
    ] {
        let found = inputs("found", target);
        assert!(found.len() >= 500, "{target}: {}", found.len());
        for (_, data) in &found {
            run(data);
        }
    }
}

#[test]
fn command_sequence_seeds_and_regressions() {
    let seeds = inputs("seeds", "command_sequence");
    assert!(
        seeds.len() >= 50,
        "the seed corpus is missing: run `cargo test --test fuzz_regressions -- --ignored write_command_sequence_seeds`"
    );
    for (_, data) in seeds
        .iter()
        .chain(&inputs("regressions", "command_sequence"))
    {
        fuzz::command_sequence(data);
    }
}

/// Regenerates `fuzz/seeds/command_sequence/` (deterministic: a fixed-seed RNG, kept while
/// they reach new (command, outcome) pairs; see `memcert::fuzz::sequence::seed_inputs`). Commit the
/// result. Also run by `scripts/make-fuzz-seeds.sh`.
#[test]
#[ignore = "writes fuzz/seeds/command_sequence/"]
fn write_command_sequence_seeds() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join("fuzz/seeds/command_sequence");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut harness = memcert::fuzz::sequence::Harness::new_unchecked().unwrap();
    let seeds = memcert::fuzz::sequence::seed_inputs(&mut harness, 200);
    for (i, data) in seeds.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{i:03}")), data).unwrap();
    }
    println!("{} seeds", seeds.len());
}

/// The `differential_reference` seeds: the first 16 sequences `memcert fuzz`'s generator
/// draws with seed 1 that [`memcert::fuzz::sequence::encode`] can write (no raw text), as
/// bytes. Chains over one file and its folder are among them, which random bytes seldom decode
/// into.
fn differential_seeds() -> Vec<Vec<u8>> {
    let mut rng = fastrand::Rng::with_seed(1);
    std::iter::repeat_with(|| memcert::fuzz::search::generate::sequence(&mut rng))
        .filter_map(|s| memcert::fuzz::sequence::encode(&s))
        .take(16)
        .collect()
}

/// Regenerates `fuzz/seeds/differential_reference/` ([`differential_seeds`]). Commit the
/// result. Also run by `scripts/make-fuzz-seeds.sh`.
#[test]
#[ignore = "writes fuzz/seeds/differential_reference/"]
fn write_differential_reference_seeds() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join("fuzz/seeds/differential_reference");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (i, data) in differential_seeds().iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{i:03}")), data).unwrap();
    }
}

#[test]
fn encode_writes_the_bytes_decode_reads_back() {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut written = 0;
    for _ in 0..2000 {
        let seq = memcert::fuzz::search::generate::sequence(&mut rng);
        if let Some(data) = memcert::fuzz::sequence::encode(&seq) {
            assert_eq!(memcert::fuzz::sequence::decode(&data), Some(seq));
            written += 1;
        }
    }
    assert!(written > 1000, "{written}");
}

#[test]
fn b16_encoded_nul_after_dotdot() {
    // See: bug:B16, bug:B19. `..%00` decodes to `..` plus a NUL that C truncates.
    fuzz::vpath(b"/memories/..%00/x");
    assert!(memcert::vpath::VPath::parse("/memories/..%00/x").is_err());
}

#[test]
fn echoed_host_path_is_not_a_disclosure() {
    // See: fuzz/regressions/tool_input/echoed-host-path.json, found by `cargo fuzz run
    // tool_input` in 20 s: the input spells the store's own host path, and the refusal echoes the
    // input. Only a host path the input did not hold is a disclosure (as in attack::oracle). The
    // store's name is random per process, so the replay aims at this process's store.
    let path = format!(
        "/memories/ts{}/canary.txt",
        fuzz::fuzz_store_path().display()
    );
    assert!(fuzz::tool_input_value(
        &serde_json::json!({"command": "view", "path": path})
    ));
}

#[test]
fn a_listing_of_names_that_spell_the_host_path_is_not_a_disclosure() {
    // See: fuzz/regressions/tool_input/listing-after-host-named-file.json, found by the 10 s
    // smoke run of `tool_input` in CI: an earlier input created a file named after the store's
    // host folder (the fuzzer learns the name by tracing the comparison), and a later
    // `view /memories` listed it. The store is shared by the inputs of a run, so only error
    // replies are checked for host paths.
    let name = fuzz::fuzz_store_path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let create = serde_json::json!({"command": "create", "path": format!("/memories/{name}.txt"), "file_text": "x"});
    assert!(!fuzz::tool_input_value(&create));
    assert!(!fuzz::tool_input_value(
        &serde_json::json!({"command": "view", "path": "/memories"})
    ));
}

#[test]
fn a_cut_short_echo_of_an_unknown_command_is_not_a_disclosure() {
    // See: fuzz/regressions/tool_input/truncated-echo-of-unknown-command.json, found by the 10 s
    // smoke run of `tool_input` in CI: `command` was an object whose text held the store's name,
    // and the refusal echoes a JSON rendering of it cut to 60 characters, which no input string
    // equals. A name the input's JSON text holds is exempt, whole or cut.
    let name = fuzz::fuzz_store_path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let input =
        serde_json::json!({"command": {"command": format!("dees//ou/{name}/{}", ".".repeat(80))}});
    assert!(fuzz::tool_input_value(&input));
}

#[test]
fn a_host_path_the_input_did_not_hold_is_a_disclosure() {
    // The exemption above must not swallow real disclosures: the check still fires on a host
    // path the input did not spell (a handler that echoes its own root).
    let result = std::panic::catch_unwind(|| {
        fuzz::assert_no_host_path(
            &serde_json::json!({"command": "view", "path": "/memories/x"}),
            &format!(
                "{}/memories/x: not found",
                fuzz::fuzz_store_path().display()
            ),
        )
    });
    assert!(result.is_err());
}

/// A `command_sequence` input that creates `name` and lists the root.
fn create_and_list(name: &str) -> memcert::fuzz::sequence::Sequence {
    use memcert::fuzz::sequence::{CommandSpec, PathSpec, PathToken, Sequence, TextSpec};
    let root = PathSpec {
        rooted: true,
        tokens: vec![],
    };
    let file = PathSpec {
        rooted: true,
        tokens: vec![PathToken::Slash, PathToken::Raw(name.to_owned())],
    };
    Sequence {
        layout: 0,
        profile: 0,
        commands: vec![
            CommandSpec::Create {
                path: file,
                text: TextSpec::Fixed(1),
            },
            CommandSpec::View {
                path: root,
                range: None,
            },
        ],
    }
}

#[test]
fn a_sequence_that_spells_its_sandbox_name_is_not_a_leak() {
    // As in `a_listing_of_names_that_spell_the_host_path_is_not_a_disclosure` for tool_input: the
    // fuzzer learns the sandbox's random name by tracing comparisons and creates a file named
    // after it; the listing then shows the name. The model, which knows no host path, shows it
    // too, so it came from the input.
    let name = fuzz::sequence_sandbox_path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let trial = fuzz::command_sequence_value(&create_and_list(&name));
    assert!(trial.exchanges[1].reference.text().contains(&name));
}

#[test]
fn a_host_path_only_the_reference_shows_is_a_leak() {
    // The leak rule must still fire when the reference's reply holds a secret (host path or
    // canary token) that the model's reply to the same command does not.
    let mut trial = fuzz::command_sequence_value(&create_and_list("plain.txt"));
    assert!(trial.check().is_ok());
    let secret = trial.secrets[0].clone();
    trial.exchanges[1].reference = memcert::protocol::ToolResult::error(format!("{secret}/x"));
    let why = trial.check_no_leak().unwrap_err();
    assert!(why.contains("host path or canary"), "{why}");
}

#[test]
fn a_store_deeper_than_path_max_is_walked_by_handle() {
    // See: fuzz/regressions/command_sequence/store-deeper-than-path-max, found by `cargo fuzz run
    // command_sequence` after 16 minutes: one create made a chain of directories whose host path
    // (the sandbox's folder, then nearly 4,096 bytes of store path) is longer than PATH_MAX. The
    // reference walks it handle by handle and answers as the model does; the harness's own walk
    // of the store went by host path and failed with ENAMETOOLONG. It now walks by handle too.
    let data = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join("fuzz/regressions/command_sequence/store-deeper-than-path-max"),
    )
    .unwrap();
    let seq = memcert::fuzz::sequence::decode(&data).unwrap();
    let trial = fuzz::command_sequence_value(&seq);
    let deepest = memcert::handler::model::paths(&trial.disk)
        .keys()
        .map(|p| p.as_os_str().len())
        .max()
        .unwrap();
    // Longer than PATH_MAX once the sandbox's own host path is put in front.
    assert!(deepest > 4096 - 60, "{deepest}");
}

/// The reference handler as the `differential_reference` target makes it over each store.
fn reference_over(
    profile: memcert::text::Profile,
) -> impl FnMut(&std::path::Path) -> std::io::Result<memcert::handler::reference::Reference> {
    use memcert::handler::reference::{Options, Reference};
    let options = Options {
        fsync: false,
        ..Options::default()
    };
    move |memories| Reference::open_ambient(memories, profile, options)
}

/// The panic text of `f`, which must panic.
fn panic_text(f: impl FnOnce()) -> String {
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_err();
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p.downcast_ref::<&str>().unwrap().to_string(),
    }
}

#[test]
fn differential_reference_seeds_and_regressions() {
    let seeds = inputs("seeds", "differential_reference");
    assert_eq!(seeds.len(), 16);
    for (_, data) in seeds
        .iter()
        .chain(&inputs("found", "differential_reference"))
        .chain(&inputs("regressions", "differential_reference"))
    {
        fuzz::differential(reference_over(memcert::text::Profile::Docs), data);
    }
}

#[test]
fn a_careful_handler_with_other_wording_is_no_divergence() {
    // The reference answering in the Python SDK's words is graded NON-STRICT in profile docs:
    // other words for the same meaning never crash the target. The example's crash input too.
    let example = inputs("regressions", "differential_example");
    for (_, data) in inputs("seeds", "differential_reference")
        .iter()
        .chain(&example)
    {
        fuzz::differential(reference_over(memcert::text::Profile::PythonSdk), data);
    }
}

#[test]
fn the_differential_example_crashes_with_the_story_of_its_flaw() {
    // See: fuzz/regressions/differential_example/stale-view-after-folder-delete: the seed
    // `fuzz/seeds/differential_reference/seed-008` on which `cargo fuzz run differential_example`
    // crashes, minimized (`-minimize_crash=1`): a file's view cached when it was created is
    // answered after its folder was deleted.
    let [(_, data)] = &inputs("regressions", "differential_example")[..] else {
        panic!("one reproducer expected");
    };
    let text = panic_text(|| fuzz::differential(fuzz::flawed::StaleFolderCache::open, data));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "memcert differential: FAIL reply (the model: not-found; the handler: success)",
            "  3 commands (shrunk from 3); each with the model's reply and the handler's:",
            r#"  1. {"command":"create","file_text":"a\r\nb","path":"/memories/b.txt/canary.txt"}"#,
        ],
        "{text}"
    );
}

/// View `/memories/d/b.txt` (planted), delete `/memories/d`, view the file again.
fn view_delete_folder_view() -> memcert::fuzz::sequence::Sequence {
    use memcert::fuzz::sequence::{CommandSpec, PathSpec, PathToken, Sequence};
    let at = |tokens: Vec<PathToken>| PathSpec {
        rooted: true,
        tokens,
    };
    let file = || at(vec![PathToken::Name(1), PathToken::Name(2)]);
    Sequence {
        layout: 0b10,
        profile: 0,
        commands: vec![
            CommandSpec::View {
                path: file(),
                range: None,
            },
            CommandSpec::Delete {
                path: at(vec![PathToken::Name(1)]),
            },
            CommandSpec::View {
                path: file(),
                range: None,
            },
        ],
    }
}

#[test]
fn a_stale_view_after_a_folder_delete_is_told_step_by_step() {
    let seq = view_delete_folder_view();
    fuzz::differential_value(reference_over(memcert::text::Profile::Docs), &seq);
    let text = panic_text(|| fuzz::differential_value(fuzz::flawed::StaleFolderCache::open, &seq));
    let view = r"Here's the content of /memories/d/b.txt with line numbers:⏎     1\tbeta⏎     2\t";
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "memcert differential: FAIL reply (the model: not-found; the handler: success)",
            "  3 commands (shrunk from 3); each with the model's reply and the handler's:",
            r#"  planted: File { path: "/memories/d/b.txt", content: [98, 101, 116, 97, 10] }"#,
            r#"  1. {"command":"view","path":"/memories/d/b.txt"}"#,
            &format!("     model:   {view}"),
            &format!("     handler: {view}"),
            r#"  2. {"command":"delete","path":"/memories/d"}"#,
            "     model:   Successfully deleted /memories/d",
            "     handler: Successfully deleted /memories/d",
            r#"  3. {"command":"view","path":"/memories/d/b.txt"}"#,
            "     model:   is_error: true⏎The path /memories/d/b.txt does not exist. Please provide a valid path.",
            &format!("     handler: {view}"),
            r#"  FAIL reply: step 3: reported success ("Here's the content of /memories/d/b.txt with line numbers:\n     1\tbeta\n     2\t"); the case expects an error (does not exist)"#,
        ]
    );
}

#[test]
fn a_handler_that_cannot_be_made_over_its_store_is_an_error_with_the_reason() {
    let text = panic_text(|| {
        fuzz::differential_value(
            |_: &std::path::Path| -> Result<memcert::handler::reference::Reference, String> {
                Err("no database here".into())
            },
            &view_delete_folder_view(),
        )
    });
    assert_eq!(
        text,
        "memcert differential: ERROR: reset failed: the handler could not be made over its store: no database here"
    );
}
