//! `cargo bench --bench certify`: the certifier's own cost. Runs a level (default `standard`)
//! against the reference handler in-process and reports the wall time of the run and, per case,
//! the harness's own time: everything outside the handler's calls (sandbox layout, canaries,
//! reset, digests of the outside, the oracle, grading), as median, p90 and max in microseconds.
//!
//! ```text
//! cargo bench --bench certify                    # standard level, reset by undo
//! cargo bench --bench certify -- --level full
//! cargo bench --bench certify -- --reset fresh   # a new sandbox per case
//! ```
//!
//! The cases run one after another on one worker's lane (`certify::Lane`), as `certify --jobs 1`
//! runs them. Goal (issue 15): harness time per case at most 0.25 ms at the median with reset by
//! undo (it was 0.96 ms with a fresh sandbox per case). Not run in CI (CI only compiles
//! benches).

use std::path::Path;
use std::time::{Duration, Instant};

use memcert::certify::{run_case_in, Config, Lane, Reset, Startup};
use memcert::protocol::ToolResult;
use memcert::suite::catalog::{self, RunLevel};
use memcert::target::inproc::InProcess;
use memcert::target::{Target, TargetError};
use memcert::text::Profile;
use serde_json::Value;

/// The reference target, timing its reset and calls (the handler's own time).
struct Timed {
    inner: InProcess,
    handler: Duration,
}

impl Target for Timed {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn reset(&mut self, base: &Path, root: &Path) -> Result<(), TargetError> {
        let t = Instant::now();
        let r = self.inner.reset(base, root);
        self.handler += t.elapsed();
        r
    }
    fn call(&mut self, input: &Value) -> Result<ToolResult, TargetError> {
        let t = Instant::now();
        let r = self.inner.call(input);
        self.handler += t.elapsed();
        r
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let level = args
        .iter()
        .position(|a| a == "--level")
        .and_then(|i| args.get(i + 1))
        .map(|l| l.parse::<RunLevel>().expect("quick, standard or full"))
        .unwrap_or(RunLevel::Standard);
    let cases: Vec<_> = catalog::for_level(level)
        .into_iter()
        .filter(|c| c.race.is_none())
        .collect();
    let reset: Reset = args
        .iter()
        .position(|a| a == "--reset")
        .and_then(|i| args.get(i + 1))
        .map(|r| r.parse::<Reset>().expect("undo or fresh"))
        .unwrap_or_default();
    let config = Config {
        reset,
        ..Config::default()
    };
    let mut lane = Lane::new(reset);
    let startup = Startup::default();
    let mut target = Timed {
        inner: InProcess::reference(Profile::Docs),
        handler: Duration::ZERO,
    };
    let started = Instant::now();
    let mut harness_us = Vec::with_capacity(cases.len());
    let mut handler_total = Duration::ZERO;
    for case in &cases {
        target.handler = Duration::ZERO;
        let t = Instant::now();
        let rec = run_case_in(case, &mut target, &config, &startup, &mut lane);
        let total = t.elapsed();
        assert!(
            !rec.verdict.blocks_certification(),
            "{}: {:?}",
            rec.id,
            rec.verdict
        );
        handler_total += target.handler;
        harness_us.push(total.saturating_sub(target.handler).as_micros() as u64);
    }
    let wall = started.elapsed();
    harness_us.sort_unstable();
    let q = |p: f64| harness_us[((harness_us.len() - 1) as f64 * p).round() as usize];
    println!(
        "level {level}, reset {reset:?}: {} cases (races left out) in {:.2} s in-process; handler {:.2} s",
        cases.len(),
        wall.as_secs_f64(),
        handler_total.as_secs_f64()
    );
    println!(
        "harness time per case: median {} us, p90 {} us, max {} us",
        q(0.5),
        q(0.9),
        q(1.0)
    );
}
