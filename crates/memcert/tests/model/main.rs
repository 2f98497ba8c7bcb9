//! The in-memory model (`handler::model`) against the reference handler: random command
//! sequences over a store with planted links (inside, outside, dangling), a FIFO and a hard
//! link, run on both through `memcert::fuzz::sequence::Harness` (a sandbox on `/dev/shm` when there is
//! one, canaries around the store). Three properties, each checked on its own cases:
//! - `replies_are_identical`: every `ToolResult` (is_error and text) of the reference equals the
//!   model's, and no reply holds a host path or the canary that the model's does not;
//! - `disk_equals_model`: the store on disk, walked without following links, equals the model's
//!   tree after the sequence;
//! - `nothing_outside_changes`: every file and folder around the store keeps its content.
//!
//! The same harness runs under `cargo fuzz` (target `command_sequence`); model unit tests sit at
//! the bottom of `src/handler/model.rs`. Cases per property: [`CASES`].

use std::cell::RefCell;

use memcert::fuzz::sequence::{
    CommandSpec, Harness, PathSpec, PathToken, Sequence, TextSpec, Trial,
};
use proptest::collection::vec;
use proptest::prelude::*;

/// Cases per property: the three run in parallel in about 10 s in a debug build on two cores
/// (measured at a load average of 3.5).
const CASES: u32 = 2000;

fn token() -> impl Strategy<Value = PathToken> {
    prop_oneof![
        1 => Just(PathToken::Root),
        2 => Just(PathToken::Slash),
        14 => any::<u8>().prop_map(PathToken::Name),
        1 => Just(PathToken::Dot),
        1 => Just(PathToken::DotDot),
        1 => Just(PathToken::Backslash),
        1 => Just(PathToken::Nul),
        1 => any::<u8>().prop_map(PathToken::Encoded),
        1 => any::<u8>().prop_map(PathToken::Lookalike),
        1 => any::<u8>().prop_map(PathToken::LongName),
        1 => "[a-z./%\\\\\u{0}\u{ff0e}]{0,6}".prop_map(PathToken::Raw),
    ]
}

/// A fixed name, two times in three one of the first three (`a.txt`, `d`, `b.txt`: the planted files
/// and folder), so edits find their files.
fn name() -> impl Strategy<Value = PathToken> {
    prop_oneof![2 => 0u8..3, 1 => any::<u8>()].prop_map(PathToken::Name)
}

/// Mostly well-formed paths over the fixed names (so commands collide and reach the planted
/// entries), sometimes with a trailing slash; otherwise any tokens of the alphabet.
fn path() -> impl Strategy<Value = PathSpec> {
    let plain = (vec(name(), 1..=2), prop::bool::weighted(0.1)).prop_map(|(mut tokens, slash)| {
        if slash {
            tokens.push(PathToken::Slash);
        }
        PathSpec {
            rooted: true,
            tokens,
        }
    });
    let adversarial = (prop::bool::weighted(0.9), vec(token(), 0..5))
        .prop_map(|(rooted, tokens)| PathSpec { rooted, tokens });
    prop_oneof![7 => plain, 3 => adversarial]
}

fn text() -> impl Strategy<Value = TextSpec> {
    prop_oneof![
        5 => any::<u8>().prop_map(TextSpec::Fixed),
        1 => "(a|b|\n|alpha|beta|x){0,6}".prop_map(TextSpec::Raw),
    ]
}

fn command() -> impl Strategy<Value = CommandSpec> {
    prop_oneof![
        3 => (path(), prop::option::weighted(0.4, (-2i8..6, -2i8..6)))
            .prop_map(|(path, range)| CommandSpec::View { path, range }),
        3 => (path(), text()).prop_map(|(path, text)| CommandSpec::Create { path, text }),
        2 => (path(), text(), text())
            .prop_map(|(path, old, new)| CommandSpec::StrReplace { path, old, new }),
        2 => (path(), -2i8..6, text())
            .prop_map(|(path, line, text)| CommandSpec::Insert { path, line, text }),
        2 => path().prop_map(|path| CommandSpec::Delete { path }),
        2 => (path(), path()).prop_map(|(old, new)| CommandSpec::Rename { old, new }),
    ]
}

fn sequence() -> impl Strategy<Value = Sequence> {
    // The two planted files are there three times in four, the other items half the time.
    let layout = prop_oneof![3 => any::<u16>().prop_map(|l| l | 0b11), 1 => any::<u16>()];
    (layout, 0u8..3, vec(command(), 1..=16)).prop_map(|(layout, profile, commands)| Sequence {
        layout: layout.into(),
        profile,
        commands,
    })
}

thread_local! {
    /// One sandbox per test thread, its store cleared between cases.
    static HARNESS: RefCell<Harness> = RefCell::new(Harness::new_unchecked().expect("sandbox"));
}

fn run(seq: &Sequence) -> Trial {
    HARNESS.with(|h| h.borrow_mut().run(seq).expect("harness"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn replies_are_identical(seq in sequence()) {
        let trial = run(&seq);
        prop_assert!(trial.check_no_leak().is_ok(), "{}", trial.check_no_leak().unwrap_err());
        prop_assert!(trial.check_replies().is_ok(), "{}", trial.check_replies().unwrap_err());
    }

    #[test]
    fn disk_equals_model(seq in sequence()) {
        let trial = run(&seq);
        prop_assert!(trial.check_tree().is_ok(), "{}", trial.check_tree().unwrap_err());
    }

    #[test]
    fn nothing_outside_changes(seq in sequence()) {
        let trial = run(&seq);
        prop_assert!(trial.check_outside().is_ok(), "{}", trial.check_outside().unwrap_err());
    }
}

#[test]
fn the_harness_compares_exactly_on_tmpfs() {
    // The model's directory sizes are exact only on tmpfs; the properties above are weaker
    // elsewhere (directories assumed to keep an empty one's size), so say where they ran.
    HARNESS.with(|h| {
        let h = h.borrow();
        if std::path::Path::new("/dev/shm").is_dir() {
            assert_eq!(h.dir_sizes(), memcert::handler::model::DirSizes::Tmpfs);
        }
    });
}
