//! `cargo bench -p memcert --bench fuzz`: the throughput of `memcert fuzz`'s search
//! ([`memcert::fuzz::search`]), in commands and sequences per second, at one worker and at two.
//!
//! Each run searches a fixed number of sequences from a fixed seed, as `memcert fuzz --runs N
//! --seed 1 --jobs J` does: `J` workers, each with its own handler, searcher and lane, worker
//! `i` running its share of the sequences from seed `1 + i`. Printed per run: sequences,
//! commands (the last plan of each sequence), case runs (re-plans and shrinks included), wall
//! time, this process's CPU time (user + system), commands/s and sequences/s by wall time, and
//! the `--jobs 2` / `--jobs 1` ratio of commands/s.
//!
//! Handlers:
//! - the in-process reference handler (profile `docs`);
//! - the Python SDK's `anthropic.tools:BetaLocalFilesystemMemoryTool` through memcert's adapter,
//!   when `MEMCERT_PYTHON` names an interpreter that has the `anthropic` package (left out with
//!   a note otherwise); its process's CPU time is not in the CPU figure.
//!
//! ```text
//! cargo bench -p memcert --bench fuzz
//! cargo bench -p memcert --bench fuzz -- --sequences 4000 --python-sequences 400
//! MEMCERT_PYTHON=.venv/bin/python cargo bench -p memcert --bench fuzz
//! ```
//!
//! Goals (issue 14) on a 2-core machine at one worker: the reference at least 20,000
//! commands/s, the Python SDK at least 1,000 commands/s; two workers at least 1.6x one.
//! Figures only: nothing here asserts a time. Not run in CI (CI only compiles benches).

use std::time::{Duration, Instant};

use memcert::certify::{probe_startup, Config};
use memcert::fuzz::search::{Fuzzer, Outcome, Settings};
use memcert::setup::handler::{start, HandlerSpec, Started};
use memcert::stop::Stop;
use memcert::target::stdio::DEFAULT_MAX_REPLY_BYTES;
use memcert::text::Profile;

/// The RNG seed of worker 0 (worker `i` uses `SEED + i`, as `memcert fuzz` does).
const SEED: u64 = 1;

/// One run's figures.
struct Figures {
    sequences: u64,
    commands: u64,
    case_runs: u64,
    wall: Duration,
    cpu: Duration,
}

impl Figures {
    fn commands_per_s(&self) -> f64 {
        self.commands as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// User + system CPU time of this process so far (all its threads; zero if unknown).
fn cpu_time() -> Duration {
    // SAFETY: getrusage writes one `rusage` into the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Search `sequences` sequences with `jobs` workers, each over a handler `spec` starts.
fn run(spec: &HandlerSpec, jobs: u64, sequences: u64) -> Figures {
    let config = Config {
        profile: Profile::Docs,
        race_rounds: Some(1),
        ..Config::default()
    };
    let stop = Stop::never();
    let mut pool: Vec<Started> = (0..jobs)
        .map(|_| {
            start(
                spec,
                Duration::from_secs(30),
                &stop,
                DEFAULT_MAX_REPLY_BYTES,
            )
            .unwrap_or_else(|e| panic!("the handler did not start: {e}"))
        })
        .collect();
    let seeds = &memcert::fuzz::search::generate::seeds();
    let cpu = cpu_time();
    let started = Instant::now();
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = pool
            .iter_mut()
            .enumerate()
            .map(|(i, s)| {
                let config = &config;
                scope.spawn(move || {
                    let target = s.target.as_mut();
                    let (startup, _) = probe_startup(target, config);
                    // As `memcert fuzz` shares out its runs and its built-in inputs.
                    let settings =
                        Settings::worker(Some(sequences), SEED, jobs, i as u64, seeds, &[]);
                    Fuzzer::new(target, config, startup).search(&settings, &mut |_| {})
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker panicked"))
            .collect()
    });
    let wall = started.elapsed();
    let cpu = cpu_time().saturating_sub(cpu);
    for s in &mut pool {
        s.target.shutdown();
    }
    Figures {
        sequences: outcomes.iter().map(|o| o.stats.sequences).sum(),
        commands: outcomes.iter().map(|o| o.stats.commands).sum(),
        case_runs: outcomes.iter().map(|o| o.stats.case_runs).sum(),
        wall,
        cpu,
    }
}

/// Run `spec` at one worker and at two and print the figures.
fn bench(name: &str, spec: &HandlerSpec, sequences: u64) {
    let mut per_s = Vec::new();
    for jobs in [1, 2] {
        let f = run(spec, jobs, sequences);
        println!(
            "{name} --jobs {jobs}: {} sequences, {} commands, {} case runs in {:.2} s wall, {:.2} s CPU: {:.0} commands/s, {:.0} sequences/s ({:.0} commands per CPU-second)",
            f.sequences,
            f.commands,
            f.case_runs,
            f.wall.as_secs_f64(),
            f.cpu.as_secs_f64(),
            f.commands_per_s(),
            f.sequences as f64 / f.wall.as_secs_f64().max(1e-9),
            f.commands as f64 / f.cpu.as_secs_f64().max(1e-9),
        );
        per_s.push(f.commands_per_s());
    }
    println!(
        "{name}: --jobs 2 / --jobs 1 = {:.2}x commands/s",
        per_s[1] / per_s[0].max(1e-9)
    );
}

/// The value after `flag` on the command line, as a number.
fn arg(args: &[String], flag: &str) -> Option<u64> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().expect("a whole number"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sequences = arg(&args, "--sequences").unwrap_or(2000);
    let python_sequences = arg(&args, "--python-sequences").unwrap_or(300);
    println!(
        "load before: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    bench(
        "reference (in-process)",
        &HandlerSpec::Reference(Profile::Docs),
        sequences,
    );
    match std::env::var("MEMCERT_PYTHON") {
        Ok(exe) if !exe.is_empty() => bench(
            "python sdk (adapter)",
            &HandlerSpec::Python {
                spec: "anthropic.tools:BetaLocalFilesystemMemoryTool".into(),
                init: None,
                set: Vec::new(),
                exe,
            },
            python_sequences,
        ),
        _ => println!("python sdk: left out (set MEMCERT_PYTHON to an interpreter with anthropic)"),
    }
}
