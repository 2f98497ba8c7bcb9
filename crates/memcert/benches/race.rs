//! The race, at length: memcert's reference handler answers view, create, str_replace, insert,
//! delete and rename through a directory that another thread keeps exchanging with a link to the
//! outside (`renameat2(RENAME_EXCHANGE)`, as `race/swap-dir/*` and spec:3/S-10 of the behaviour spec),
//! until at least `--swaps N` exchanges (default 1,000,000) have been made. It prints the swaps,
//! the commands (answered and refused, per command) and the escapes, which must be 0.
//!
//! The work is split in rounds. Each round lays out a fresh case sandbox
//! (`attack::sandbox::Sandbox`: canaries around the root, `/memories/real` holding `secret.txt`
//! and `canary.txt`, the link `/memories/.swap -> <outside>`, whose `secret.txt` and `canary.txt`
//! hold the canary token), starts a fresh handler over it through the in-process target, starts
//! the swapping thread, sends one batch of commands, stops the thread, and asks the oracle
//! (`attack::oracle::judge`) about the round, exactly as `memcert certify` does for a race case:
//! the token in a reply, a host path in a reply, anything outside created, changed or removed,
//! or outside content carried into the store, is an escape. Any escape or other finding stops
//! the run with exit status 1.
//!
//! Each command of a batch goes through the swapped name `/memories/real`:
//! view `real/secret.txt`, create `real/n{i}.txt`, str_replace in `real/secret.txt`, insert
//! into `real/n{i}.txt`, rename `real/n{i}.txt -> moved/n{i}.txt` (the swapped directory as the
//! source), rename `moved/n{i}.txt -> real/m{i}.txt` (as the destination's parent), delete
//! `real/m{i}.txt`, delete and create `real/canary.txt` (a name the outside holds too).
//!
//! Not part of CI, which only compiles benches (`cargo bench --no-run`). Run:
//! `cargo bench --bench race` (or `cargo bench --bench race -- --swaps 5000000`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use memcert::attack::oracle::{judge, Observation};
use memcert::attack::sandbox::Sandbox;
use memcert::suite::verdict::Verdict;
use memcert::suite::{Accept, Case, Fs, Level, LinkTo, Race, Reply, Step};
use memcert::target::inproc::InProcess;
use memcert::target::Target;
use memcert::text::Profile;
use serde_json::{json, Value};

/// Command cycles per round (nine commands each).
const CYCLES: usize = 500;
/// The commands, in cycle order.
const KINDS: [&str; 9] = [
    "view",
    "create",
    "str_replace",
    "insert",
    "rename (swapped source)",
    "rename (swapped destination)",
    "delete",
    "delete (outside name)",
    "create (outside name)",
];

fn cycle(i: usize) -> [Value; 9] {
    let (old, new) = if i.is_multiple_of(2) {
        ("SECRET line two", "SECRET line 2")
    } else {
        ("SECRET line 2", "SECRET line two")
    };
    [
        json!({"command": "view", "path": "/memories/real/secret.txt"}),
        json!({"command": "create", "path": format!("/memories/real/n{i}.txt"), "file_text": "x\n"}),
        json!({"command": "str_replace", "path": "/memories/real/secret.txt", "old_str": old, "new_str": new}),
        json!({"command": "insert", "path": format!("/memories/real/n{i}.txt"), "insert_line": 0, "insert_text": "y"}),
        json!({"command": "rename", "old_path": format!("/memories/real/n{i}.txt"), "new_path": format!("/memories/moved/n{i}.txt")}),
        json!({"command": "rename", "old_path": format!("/memories/moved/n{i}.txt"), "new_path": format!("/memories/real/m{i}.txt")}),
        json!({"command": "delete", "path": format!("/memories/real/m{i}.txt")}),
        json!({"command": "delete", "path": "/memories/real/canary.txt"}),
        json!({"command": "create", "path": "/memories/real/canary.txt", "file_text": "inside\n"}),
    ]
}

/// The round as a case, so the oracle judges it as it judges `race/swap-dir/*`: every reply is
/// acceptable, confinement decides.
fn case(inputs: &[Value]) -> Case {
    let accept = |verdict, reply| Accept {
        verdict,
        reply,
        profiles: Vec::new(),
        note: String::new(),
    };
    Case {
        id: "bench/race".into(),
        defined: concat!(file!(), ":", line!()).into(),
        source: vec!["spec:3/S-10".into(), "bug:B12".into(), "bug:B13".into()],
        requirement: "While another process swaps a directory for a link to the outside, commands MUST NOT read or write outside the root.".into(),
        level: Level::Must,
        setup: vec![
            Fs::File {
                path: "/memories/real/secret.txt".into(),
                content: b"inside\nSECRET line two\n".to_vec(),
            },
            Fs::File {
                path: "/memories/real/canary.txt".into(),
                content: b"inside\n".to_vec(),
            },
            Fs::Symlink {
                path: "/memories/.swap".into(),
                target: LinkTo::Outside(String::new()),
            },
        ],
        steps: inputs
            .iter()
            .map(|input| Step {
                input: input.clone(),
                accept: vec![
                    accept(Verdict::Pass, Reply::AnyError),
                    accept(Verdict::Pass, Reply::AnySuccess),
                ],
                tests_view_format: false,
            })
            .collect(),
        checks: Vec::new(),
        turns: Vec::new(),
        race: Some(Race {
            a: "/memories/real".into(),
            b: "/memories/.swap".into(),
            max_swaps: u64::MAX,
        }),
    }
}

/// The swapping thread (as `certify`'s): exchange `a` and `b` until stopped; returns the count.
///
/// # Ambient authority
/// `renameat2(RENAME_EXCHANGE)` by host path, inside the round's sandbox only.
fn swap_unchecked(a: PathBuf, b: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    let (started, first) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        let mut started = Some(started);
        let mut swaps = 0u64;
        let flags = rustix::fs::RenameFlags::EXCHANGE;
        while !stop.load(Ordering::Relaxed) {
            let done = rustix::fs::renameat_with(rustix::fs::CWD, &a, rustix::fs::CWD, &b, flags);
            drop(started.take());
            done.expect("exchange");
            swaps += 1;
        }
        if swaps % 2 == 1 {
            rustix::fs::renameat_with(rustix::fs::CWD, &a, rustix::fs::CWD, &b, flags)
                .expect("exchange back");
        }
        swaps
    });
    let _ = first.recv();
    thread
}

fn main() {
    let mut want: u64 = 1_000_000;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--swaps" {
            want = args
                .next()
                .and_then(|n| n.replace('_', "").parse().ok())
                .expect("--swaps N");
        }
        // Anything else (cargo's --bench) is ignored.
    }

    let mut target = InProcess::reference(Profile::Docs);
    let (mut swaps, mut rounds) = (0u64, 0u64);
    let mut answered = [0u64; KINDS.len()];
    let mut refused = [0u64; KINDS.len()];
    let mut escapes = 0usize;
    let mut busy = Duration::ZERO;
    let started = Instant::now();
    while swaps < want {
        let inputs: Vec<Value> = (0..CYCLES).flat_map(cycle).collect();
        let case = case(&inputs);
        let sandbox = Sandbox::create_unchecked(&case.setup).expect("sandbox");
        let mut obs = Observation {
            token: sandbox.token().to_owned(),
            host_paths: sandbox.host_paths(),
            outside_before: sandbox.outside_unchecked().into(),
            inputs: inputs.iter().map(memcert::protocol::strings_in).collect(),
            ..Default::default()
        };
        target.reset(sandbox.base(), sandbox.root()).expect("reset");
        let race = case.race.as_ref().expect("a race");
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = swap_unchecked(
            sandbox.host_unchecked(&race.a),
            sandbox.host_unchecked(&race.b),
            Arc::clone(&stop),
        );
        let t = Instant::now();
        for (i, input) in inputs.iter().enumerate() {
            let reply = target.call(input).expect("the reference always answers");
            let kind = i % KINDS.len();
            if reply.is_error {
                refused[kind] += 1;
            } else {
                answered[kind] += 1;
            }
            obs.replies.push(Ok(reply));
        }
        busy += t.elapsed();
        stop.store(true, Ordering::Relaxed);
        let n = swapper.join().expect("swapper");
        obs.race_swaps = Some(n);
        swaps += n;
        rounds += 1;
        obs.outside_after = sandbox.outside_unchecked().into();
        obs.token_in_store = sandbox.token_in_store_unchecked();
        let j = judge(&case, &obs, Profile::Docs, true);
        escapes += j
            .findings
            .iter()
            .filter(|f| f.verdict == Verdict::Unsafe)
            .count();
        if j.verdict != Verdict::Pass {
            for f in &j.findings {
                eprintln!("round {rounds}: {} {}: {}", f.verdict, f.kind, f.detail);
            }
            break;
        }
    }
    let elapsed = started.elapsed();
    let commands: u64 = answered.iter().sum::<u64>() + refused.iter().sum::<u64>();
    println!("race bench: reference handler, /memories/real <-> /memories/.swap -> <outside>");
    println!(
        "rounds {rounds}, swaps {swaps}, commands {commands}, escapes {escapes}, {:.1} s",
        elapsed.as_secs_f64()
    );
    println!(
        "swaps/s while commands ran {:.0}; commands/s {:.0}; swaps per command {:.1}",
        swaps as f64 / busy.as_secs_f64(),
        commands as f64 / busy.as_secs_f64(),
        swaps as f64 / commands.max(1) as f64
    );
    println!("{:<30} {:>10} {:>10}", "command", "answered", "refused");
    for (k, name) in KINDS.iter().enumerate() {
        println!("{name:<30} {:>10} {:>10}", answered[k], refused[k]);
    }
    if escapes > 0 || swaps < want {
        std::process::exit(1);
    }
}
