//! Shrinking a finding to a minimal input: delta debugging over the commands (chunks halved
//! down to single commands), then the planted layout item by item, then each path's tokens
//! one by one. A smaller input is kept when it still shows the same [`Cause`]; every try is a
//! full judged run ([`Fuzzer::evaluate`]), so the shrunk input's case is the one replayed.
//! Shrinking stops early, keeping the smallest input so far, when its budget of tries is spent,
//! the run is stopped (a signal) or `--duration` has run out: a handler whose every try hangs
//! until `--timeout` does not hold the run past its deadline for hundreds of tries.

use std::time::Instant;

use super::{Cause, Found, Fuzzer, Judged, Judgement};
use crate::fuzz::sequence::Sequence;

impl Fuzzer<'_> {
    /// Shrink `seq`, first met as `first` (sequence `at`) with `cause`, within `budget` tries
    /// and before `deadline` (none: no limit) or a stop of the run; [`Found::shrink_cut`] says
    /// whether one of those ended it before it was done.
    pub(super) fn shrink(
        &mut self,
        seq: &Sequence,
        cause: &Cause,
        first: Judgement,
        at: u64,
        budget: usize,
        deadline: Option<Instant>,
    ) -> Found {
        let unshrunk_commands = first.plan.case.steps.len();
        let mut best = seq.clone();
        // Only the commands that ran count (a plan can end early; black-box checkpoints add
        // views of no command).
        best.commands.truncate(first.plan.commands_sent().max(1));
        let mut kept = first;
        let mut tries = 0;
        let mut cut = false;
        let id = format!("shrunk-{at}");
        let mut attempt = |f: &mut Self, s: &Sequence| -> Option<Judgement> {
            if tries >= budget
                || f.config.stop.reason().is_some()
                || deadline.is_some_and(|d| Instant::now() >= d)
            {
                cut = true;
                return None;
            }
            tries += 1;
            let j = f.evaluate(s, &id);
            (j.judged == Judged::Found(cause.clone())).then_some(j)
        };
        // Commands: remove chunks, from halves down to one command.
        let mut chunk = best.commands.len().div_ceil(2).max(1);
        loop {
            let mut i = 0;
            while i < best.commands.len() && best.commands.len() > 1 {
                let mut s = best.clone();
                let end = (i + chunk).min(s.commands.len());
                s.commands.drain(i..end);
                if s.commands.is_empty() {
                    i += chunk;
                    continue;
                }
                match attempt(self, &s) {
                    Some(j) => {
                        best = s;
                        kept = j;
                    }
                    None => i += chunk,
                }
            }
            if chunk == 1 {
                break;
            }
            chunk = chunk.div_ceil(2);
        }
        // Layout items.
        for bit in 0..u32::BITS {
            if best.layout & (1 << bit) == 0 {
                continue;
            }
            let mut s = best.clone();
            s.layout &= !(1 << bit);
            if let Some(j) = attempt(self, &s) {
                best = s;
                kept = j;
            }
        }
        // Path tokens.
        for c in 0..best.commands.len() {
            for p in 0..best.commands[c].paths().len() {
                let mut t = 0;
                while t < best.commands[c].paths()[p].tokens.len() {
                    let mut s = best.clone();
                    s.commands[c].paths_mut()[p].tokens.remove(t);
                    match attempt(self, &s) {
                        Some(j) => {
                            best = s;
                            kept = j;
                        }
                        None => t += 1,
                    }
                }
            }
        }
        Found {
            cause: cause.clone(),
            sequence: best,
            plan: kept.plan,
            record: kept.record,
            first_at: at,
            count: 1,
            unshrunk_commands,
            shrink_cut: cut,
            follows: None,
            also: Vec::new(),
        }
    }
}
