//! Seed inputs for the `command_sequence` fuzz target: a small coverage-guided search over
//! fuzz bytes, run on the harness.

use super::{decode, Harness};

/// Deterministic seed inputs for the `command_sequence` target, at most `count`: a small
/// coverage-guided search from a fixed-seed RNG (random byte strings, and mutations and
/// splices of the inputs kept so far), keeping an input when it reaches a (command, outcome)
/// pair or a pair of consecutive outcomes that no kept input reached. `tests/fuzz_regressions.rs`
/// has the ignored test that writes them to `fuzz/seeds/command_sequence/`.
///
/// # Ambient authority
/// Runs every candidate on `harness`.
pub fn seed_inputs(harness: &mut Harness, count: usize) -> Vec<Vec<u8>> {
    use std::collections::BTreeSet;
    let mut rng = fastrand::Rng::with_seed(0x5e9_c0de);
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut kept: Vec<Vec<u8>> = Vec::new();
    for _ in 0..40_000 {
        if kept.len() >= count {
            break;
        }
        let data = if kept.is_empty() || rng.u8(..4) == 0 {
            let len = rng.usize(16..400);
            // Small bytes dominate, so enum choices and lengths stay in range more often.
            (0..len)
                .map(|_| {
                    if rng.u8(..4) == 0 {
                        rng.u8(..)
                    } else {
                        rng.u8(..24)
                    }
                })
                .collect()
        } else {
            let mut d = kept[rng.usize(..kept.len())].clone();
            for _ in 0..rng.usize(1..8) {
                match rng.u8(..4) {
                    0 if !d.is_empty() => {
                        let i = rng.usize(..d.len());
                        d[i] = rng.u8(..);
                    }
                    1 => {
                        let i = rng.usize(..=d.len());
                        d.insert(i, rng.u8(..24));
                    }
                    2 if !d.is_empty() => {
                        let i = rng.usize(..d.len());
                        d.remove(i);
                    }
                    _ => {
                        let other = &kept[rng.usize(..kept.len())];
                        let at = rng.usize(..=d.len());
                        let from = rng.usize(..=other.len());
                        let to = (from + rng.usize(..64)).min(other.len());
                        d.splice(at..at, other[from..to].iter().copied());
                    }
                }
            }
            d.truncate(2048);
            d
        };
        let Some(seq) = decode(&data) else { continue };
        let Ok(trial) = harness.run(&seq) else {
            continue;
        };
        let mut new = false;
        let mut previous = "start";
        for x in &trial.exchanges {
            let command = x.input["command"].as_str().unwrap_or("?");
            let kind = x.kind.key();
            new |= seen.insert(format!("{command} {kind}"));
            new |= seen.insert(format!("{previous} then {kind}"));
            previous = kind;
        }
        if new {
            kept.push(data);
        }
    }
    kept
}
