//! Fuzz logic, always compiled: the `cargo fuzz` targets under `fuzz/` are one-line glue around
//! these functions, and `tests/fuzz_regressions.rs` replays the committed seeds and crash
//! reproducers through the very same functions (rule:14). Each function panics on a bug.
//! `command_sequence`, which decodes its bytes with `arbitrary`, needs the `arbitrary`
//! feature (the fuzz crate and `cargo test` turn it on); its logic is in [`sequence`].
//!
//! [`differential`] is the `cargo fuzz` target body for a Rust user's own handler: command
//! sequences judged against the documented model as `memcert fuzz` ([`search`]) judges them;
//! [`flawed`] (`arbitrary` feature) holds the deliberately flawed handler of its example
//! target.

mod differential;
#[cfg(feature = "arbitrary")]
pub mod flawed;
pub mod search;
pub mod sequence;

#[cfg(feature = "arbitrary")]
pub use differential::differential;
pub use differential::{differential_value, SHRINK_BUDGET};

use std::sync::Mutex;
use std::sync::OnceLock;

use serde_json::Value;

use self::sequence::{Harness, Sequence, Trial};
use crate::handler::reference::{Options, Reference};
use crate::handler::Handler;
use crate::protocol::Command;
use crate::text::Profile;
use crate::vpath::{forbidden_char, VPath, ROOT};

/// Target `vpath`: arbitrary bytes as a path. An accepted path has only plain names (no `.`,
/// `..`, empty name, separator, backslash or forbidden character), its canonical form starts
/// with `/memories` and parses back to the same components (idempotence), and joined lexically
/// under a root it never leaves that root.
pub fn vpath(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(p) = VPath::parse(text) else {
        return;
    };
    let canonical = p.canonical();
    assert!(
        canonical == ROOT || canonical.starts_with("/memories/"),
        "{text:?}"
    );
    for c in p.components() {
        assert!(
            !c.is_empty() && c != "." && c != "..",
            "{text:?}: component {c:?}"
        );
        assert!(!c.contains(['/', '\\']), "{text:?}: component {c:?}");
        assert!(!c.chars().any(forbidden_char), "{text:?}: component {c:?}");
    }
    let again = VPath::parse(&canonical).expect("a canonical path parses");
    assert_eq!(again.components(), p.components(), "{text:?}");
    assert_eq!(again.canonical(), canonical, "{text:?}");
    // Cross-check with a naive lexical normaliser (what a careless handler does): an accepted
    // path has exactly one spelling, so normalising the raw text changes nothing but a trailing
    // slash, and never climbs above the root.
    let mut stack: Vec<&str> = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => assert!(stack.pop().is_some(), "{text:?} climbs above /"),
            name => stack.push(name),
        }
    }
    assert_eq!(format!("/{}", stack.join("/")), canonical, "{text:?}");
}

/// Target `tool_input`: arbitrary bytes as a `tool_use` input (when they are JSON), run on the
/// reference handler over a throw-away store. Never a panic; malformed input is always an
/// `is_error` reply; no error reply names a host path the input did not hold.
pub fn tool_input(data: &[u8]) {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    tool_input_value(&input);
}

type Store = (crate::scratch::Scratch, Mutex<Reference>);

/// Start of the `tool_input` store's name: `memcert-fuzz-<pid>-XXXXXX`.
const STORE_PREFIX: &str = "memcert-fuzz-";

/// The one throw-away store the `tool_input` target writes to (made on first use).
fn store() -> &'static Store {
    static STORE: OnceLock<Store> = OnceLock::new();
    STORE.get_or_init(|| {
        // tmpfs when there is one: fuzzing writes a lot. Named after the process, so the stores
        // of finished fuzz processes (libFuzzer exits without destructors) are removed here.
        let shm = std::path::Path::new("/dev/shm");
        let parent = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        crate::scratch::remove_stale(&parent, STORE_PREFIX);
        let dir = crate::scratch::Scratch::new_in(
            &parent,
            &format!("{STORE_PREFIX}{}-", std::process::id()),
        )
        .expect("temp dir");
        let options = Options {
            fsync: false,
            max_file_bytes: 1 << 20,
        };
        let h = Reference::open_ambient(&dir.path().join("memories"), Profile::Docs, options)
            .expect("store");
        (dir, Mutex::new(h))
    })
}

/// Remove everything inside the store's `memories/`, not the folder itself (the handler holds
/// it open), through handles, links removed and never followed.
fn empty_store(dir: &crate::scratch::Scratch) {
    if let Ok(m) = cap_fs_ext::DirExt::open_dir_nofollow(dir.dir(), "memories") {
        let _ = crate::scratch::empty(&m);
    }
}

/// Host path of the `tool_input` target's store (for replays that aim at it).
pub fn fuzz_store_path() -> std::path::PathBuf {
    store().0.path().to_path_buf()
}

/// [`tool_input`] for an already parsed value; returns whether the reply was an error.
///
/// The store's host path is exposed by [`fuzz_store_path`], so a replay can aim at it.
pub fn tool_input_value(input: &Value) -> bool {
    let (dir, handler) = store();
    let mut h = handler.lock().unwrap_or_else(|e| e.into_inner());
    // The store is shared by every input of a run: emptied every 4,096 inputs, so what earlier
    // inputs created does not pile up (a long run slowed from ~200,000 to ~13,000 inputs/s as
    // listings and lookups grew).
    static INPUTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    if INPUTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 4096 == 4095 {
        empty_store(dir);
    }
    let reply = h.apply(input);
    drop(h);
    if Command::parse(input).is_err() {
        assert!(
            reply.is_error,
            "malformed input answered as success: {input}"
        );
    }
    // Only error replies: the store is shared by every input of a run, so an earlier input may
    // have created names that spell the host path, and a later listing rightly shows them.
    if reply.is_error {
        assert_no_host_path(input, &reply.text());
    }
    reply.is_error
}

/// Panics when `reply_text` names the `tool_input` store's host folder (its full path, or its
/// random name alone) and `input`'s JSON text does not hold it.
///
/// A host path the input itself holds may be echoed, whole or cut short (an unknown command is
/// echoed as a JSON rendering of at most 60 characters), and the fuzzer finds the store's name by
/// tracing this very comparison: such an echo is no disclosure. Any other host path is.
///
/// # Panics
/// On a disclosure, with the input in the message.
pub fn assert_no_host_path(input: &Value, reply_text: &str) {
    let dir = store().0.path();
    let host = dir.to_string_lossy();
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    // The name is part of the full path: a reply without it holds neither (the common case,
    // checked without rendering the input).
    if name.is_empty() || !reply_text.contains(name.as_ref()) {
        return;
    }
    let input_text = input.to_string();
    for h in [host.as_ref(), name.as_ref()] {
        if !input_text.contains(h) {
            assert!(!reply_text.contains(h), "host path in reply to {input}");
        }
    }
}

/// The `command_sequence` target's one harness (made on first use; its store is cleared between
/// inputs, so every input starts from its own fresh layout).
fn sequence_harness() -> &'static Mutex<Harness> {
    static HARNESS: OnceLock<Mutex<Harness>> = OnceLock::new();
    HARNESS.get_or_init(|| Mutex::new(Harness::new_unchecked().expect("sequence sandbox")))
}

/// Target `command_sequence`: bytes decoded (`arbitrary`) into a [`Sequence`] of up to 16
/// commands over a planted store, run on the reference handler and on its in-memory model.
/// Panics when a reply leaks a host path or the canary, when the two replies to a command
/// differ, when the store on disk differs from the model's tree afterwards, or when anything
/// outside the store changed (see [`Trial::check`]). Input that does not decode is skipped.
#[cfg(feature = "arbitrary")]
pub fn command_sequence(data: &[u8]) {
    if let Some(seq) = sequence::decode(data) {
        command_sequence_value(&seq);
    }
}

/// `command_sequence` for a decoded sequence: run it on the target's harness and check it.
///
/// # Panics
/// On a failed check (with the sequence in the message) or a harness I/O error.
pub fn command_sequence_value(seq: &Sequence) -> Trial {
    let mut h = sequence_harness().lock().unwrap_or_else(|e| e.into_inner());
    let trial = h
        .run(seq)
        .unwrap_or_else(|e| panic!("the sequence harness failed: {e}"));
    drop(h);
    if let Err(why) = trial.check() {
        panic!("{why}\nsequence: {seq:#?}");
    }
    trial
}

/// Host path of the `command_sequence` target's sandbox (for replays that aim at it).
pub fn sequence_sandbox_path() -> std::path::PathBuf {
    let h = sequence_harness().lock().unwrap_or_else(|e| e.into_inner());
    h.sandbox().run_dir().to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed-seed smoke loop over both functions (the fuzzers run the same code for longer).
    #[test]
    fn smoke_with_a_fixed_seed() {
        let mut rng = fastrand::Rng::with_seed(0x6d656d63);
        let alphabet: &[&str] = &[
            "/memories",
            "/",
            "..",
            ".",
            "a",
            "%2e",
            "%2f",
            "%25",
            "\\",
            "\u{ff0e}",
            "\u{0}",
            "\n",
            "b.txt",
            "%c0%af",
            "\u{2025}",
            "_evil",
            "X",
        ];
        for _ in 0..20_000 {
            let n = rng.usize(0..8);
            let s: String = (0..n)
                .map(|_| alphabet[rng.usize(..alphabet.len())])
                .collect();
            vpath(s.as_bytes());
        }
        let commands: Vec<&str> = crate::protocol::COMMANDS
            .into_iter()
            .chain(["nope"])
            .collect();
        let mut successes = 0;
        for _ in 0..2_000 {
            // Mostly well-formed paths over a few names, so commands reach real files; now and
            // then a token from the traversal alphabet.
            let names = ["a", "b.txt", "d", "d/e.txt"];
            let mut path = String::from("/memories");
            for _ in 0..rng.usize(0..3) {
                path.push('/');
                if rng.u8(..10) == 0 {
                    path.push_str(alphabet[rng.usize(..alphabet.len())]);
                } else {
                    path.push_str(names[rng.usize(..names.len())]);
                }
            }
            let mut v =
                serde_json::json!({"command": commands[rng.usize(..commands.len())], "path": path});
            if rng.bool() {
                v["file_text"] = "x\n".into();
            }
            if rng.bool() {
                v["insert_line"] = rng.i64(-2..4).into();
                v["insert_text"] = "y".into();
            }
            if rng.bool() {
                v["old_str"] = "x".into();
                v["new_str"] = "z".into();
            }
            if rng.bool() {
                v["old_path"] = "/memories/a".into();
                v["new_path"] = path.clone().into();
            }
            if rng.bool() {
                v["view_range"] = serde_json::json!([rng.i64(-1..3), rng.i64(-1..5)]);
            }
            successes += usize::from(!tool_input_value(&v));
        }
        // The loop reaches the handler's real work, not only its refusals.
        assert!(successes > 100, "{successes}");
    }

    /// A fixed-seed smoke loop over `command_sequence`: random bytes, mostly small so they
    /// decode into in-range choices.
    #[cfg(feature = "arbitrary")]
    #[test]
    fn command_sequence_smoke_with_a_fixed_seed() {
        let mut rng = fastrand::Rng::with_seed(0x73657173);
        let mut commands = 0;
        for _ in 0..300 {
            let data: Vec<u8> = (0..rng.usize(8..300)).map(|_| rng.u8(..24)).collect();
            if let Some(seq) = super::sequence::decode(&data) {
                commands += command_sequence_value(&seq).exchanges.len();
            }
        }
        assert!(commands > 150, "{commands}");
    }
}
