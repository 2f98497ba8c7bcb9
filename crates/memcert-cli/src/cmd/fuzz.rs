//! `memcert fuzz`: command sequences against a handler, judged against the documented model
//! ([`memcert::fuzz::search`]); each flaw shrunk to a minimal sequence, printed with the model's
//! and the handler's replies side by side, and saved for `certify --replay`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use memcert::certify::{self, Config};
use memcert::exit;
use memcert::fuzz::search::{Found, Fuzzer, Outcome, Settings, Stats};
use memcert::report::escape::terminal;
use memcert::text::Profile;

use crate::args::{seconds, HandlerArgs, ScratchArgs};
use crate::reporting::{out, say, warn};

/// The flags of `memcert fuzz`.
#[derive(clap::Args, Debug)]
pub struct FuzzArgs {
    #[command(flatten)]
    pub handler: HandlerArgs,
    /// Which wording the built-in reference handler uses (docs, python-sdk or typescript-sdk);
    /// external handlers answer in their own, graded by meaning.
    #[arg(long, default_value = "docs", value_name = "PROFILE")]
    pub profile: Profile,
    /// Stop after this many sequences (all workers together). Default: 1000, or no limit with
    /// --duration.
    #[arg(long, value_name = "N")]
    pub runs: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// The RNG seed: with --jobs 1 the same seed runs the same sequences. Worker i uses
    /// SEED + i. Default: 1.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Write each finding here as a transcript file, `fuzz-<hash>.json` (the folder is made if
    /// missing; a file already there is kept), to run again with `memcert certify --replay`.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub scratch: ScratchArgs,
}

/// `memcert fuzz`: search until --runs or --duration; exit 0 when nothing was found, 1 on a
/// finding, 2 on a usage error or a handler that cannot start, 130 when stopped by a signal.
pub fn run(args: FuzzArgs) -> Result<i32> {
    args.scratch.apply();
    seconds("--timeout", args.handler.timeout)?;
    let duration = args
        .duration
        .map(|d| seconds("--duration", d))
        .transpose()?;
    if args.runs == Some(0) {
        bail!("--runs must be at least 1");
    }
    let jobs = args.handler.jobs(false)?;
    let out_dir = args
        .out
        .as_deref()
        .map(|d| out_dir(&args.handler, d))
        .transpose()?;
    let config = Config {
        profile: args.profile,
        black_box: args.handler.memory_dir_unknown,
        race_rounds: Some(1),
        stop: crate::interrupt::stop(None)?,
        reset: args.handler.reset,
        ..Config::default()
    };
    let mut pool = args.handler.start_pool(args.profile, &config.stop, jobs)?;
    let runs = match (args.runs, duration) {
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) => Some(1000),
    };
    let workers = pool.len() as u64;
    let outcomes: Vec<Option<Outcome>> = std::thread::scope(|scope| {
        let handles: Vec<_> = pool
            .iter_mut()
            .enumerate()
            .map(|(i, started)| {
                let config = &config;
                let settings = Settings {
                    runs: runs.map(|r| share(r, workers, i as u64)),
                    duration,
                    seed: args.seed.wrapping_add(i as u64),
                    ..Settings::default()
                };
                scope.spawn(move || {
                    let target = started.target.as_mut();
                    let (startup, side_effects) = certify::probe_startup(target, config);
                    if let Some(r) = side_effects {
                        warn(&format!(
                            "the handler's start-up changed files outside its store: {}",
                            r.findings
                                .first()
                                .map(|f| terminal(&f.detail))
                                .unwrap_or_default()
                        ));
                    }
                    let mut fuzzer = Fuzzer::new(target, config, startup);
                    fuzzer.search(&settings, &mut |c| {
                        say(&format!("worker {i}: found {c}; shrinking"));
                    })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().ok()).collect()
    });
    for s in &mut pool {
        s.target.shutdown();
    }
    let Some(outcomes) = outcomes.into_iter().collect::<Option<Vec<Outcome>>>() else {
        bail!("a fuzz worker stopped on an internal error (a bug in memcert); nothing is reported");
    };
    let (found, stats, elapsed) = merge(outcomes);
    for (n, f) in found.iter().enumerate() {
        print_found(n + 1, f);
    }
    if let Some(dir) = &out_dir {
        save(dir, &found)?;
    }
    print_stats(&stats, elapsed, found.len(), jobs);
    if config.stop.reason().is_some() {
        return Ok(exit::INTERRUPTED);
    }
    Ok(if found.is_empty() {
        exit::PASS
    } else {
        exit::FAILED
    })
}

/// `--out DIR`, checked and made before the handler starts: never under an `--allow-write`
/// folder (the handler could plant links there), made if missing, opened once; findings are
/// written through that handle.
fn out_dir(handler: &HandlerArgs, dir: &std::path::Path) -> Result<cap_std::fs::Dir> {
    if let Some(w) = handler.writable_by_handler(dir) {
        bail!(
            "--allow-write {} would let the handler write in --out {}; findings are never writable by the handler",
            w.display(),
            dir.display()
        );
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--out {}: cannot make it", dir.display()))?;
    cap_std::fs::Dir::open_ambient_dir(dir, cap_std::ambient_authority())
        .with_context(|| format!("--out {}: cannot open it", dir.display()))
}

/// Write each finding as a transcript for `certify --replay`, named after its case
/// (`fuzz-<12 hex digits of the SHA-256 of its steps and layout>.json`, the transcript id too),
/// so runs into one folder add files, and the same finding is written once. Each file is made
/// new through the folder's handle (`O_CREAT|O_EXCL`, no link followed); one that exists is
/// left as it is. A finding a transcript cannot hold is said, not written.
fn save(dir: &cap_std::fs::Dir, found: &[Found]) -> Result<()> {
    use std::io::Write as _;
    for (n, f) in found.iter().enumerate() {
        let case = &f.plan.case;
        let key = serde_json::to_string(&(&case.setup, &case.steps, &case.checks))?;
        let id = format!(
            "fuzz-{}",
            &memcert::certify::sha256_hex(key.as_bytes())[..12]
        );
        let user = format!("memcert fuzz finding: {}", f.cause);
        let Some(t) = memcert_app::transcript::transcript_of(case, &id, &user) else {
            warn(&format!(
                "finding {}: its layout cannot be written as a transcript",
                n + 1
            ));
            continue;
        };
        let name = format!("{id}.json");
        let mut o = cap_std::fs::OpenOptions::new();
        o.write(true).create_new(true);
        match dir.open_with(&name, &o) {
            Ok(mut file) => {
                file.write_all((serde_json::to_string_pretty(&t)? + "\n").as_bytes())
                    .with_context(|| format!("--out: cannot write {name}"))?;
                say(&format!(
                    "finding {} saved as {name} in --out (replay: memcert certify ... --replay FILE --cases 'replay/*')",
                    n + 1
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                say(&format!(
                    "finding {} is already saved as {name} in --out",
                    n + 1
                ));
            }
            Err(e) => return Err(anyhow::anyhow!("--out: cannot make {name}: {e}")),
        }
    }
    Ok(())
}

/// Worker `i`'s share of `total` sequences over `workers`.
fn share(total: u64, workers: u64, i: u64) -> u64 {
    total / workers + u64::from(i < total % workers)
}

/// The workers' outcomes as one: causes found by several kept once (the shortest shrink,
/// counts added), stats added, the longest wall time.
fn merge(outcomes: Vec<Outcome>) -> (Vec<Found>, Stats, Duration) {
    let mut found: Vec<Found> = Vec::new();
    let mut stats = Stats::default();
    let mut elapsed = Duration::ZERO;
    for o in outcomes {
        stats.sequences += o.stats.sequences;
        stats.commands += o.stats.commands;
        stats.case_runs += o.stats.case_runs;
        stats.non_strict += o.stats.non_strict;
        stats.errors += o.stats.errors;
        stats.coverage = stats.coverage.max(o.stats.coverage);
        stats.corpus += o.stats.corpus;
        elapsed = elapsed.max(o.elapsed);
        for f in o.found {
            match found.iter_mut().find(|g| g.cause == f.cause) {
                Some(g) => {
                    g.count += f.count;
                    if f.plan.case.steps.len() < g.plan.case.steps.len() {
                        let count = g.count;
                        *g = f;
                        g.count = count;
                    }
                }
                None => found.push(f),
            }
        }
    }
    (found, stats, elapsed)
}

/// One finding on stdout: the cause, the planted layout, each command with the model's reply
/// and the handler's, and the findings of its run.
fn print_found(n: usize, f: &Found) {
    let shrunk = f.plan.case.steps.len();
    out(&format!(
        "FINDING {n}: {} (met {} time{}, first in sequence {}; {} command{}, shrunk from {})",
        f.cause,
        f.count,
        if f.count == 1 { "" } else { "s" },
        f.first_at,
        shrunk,
        if shrunk == 1 { "" } else { "s" },
        f.unshrunk_commands
    ));
    for line in f.story() {
        out(&line);
    }
}

fn print_stats(s: &Stats, elapsed: Duration, causes: usize, jobs: usize) {
    let secs = elapsed.as_secs_f64().max(1e-9);
    say(&format!(
        "fuzz: {} sequence{}, {} commands, {} case runs in {:.1} s ({:.0} commands/s, --jobs {jobs}); coverage {} keys, corpus {}; NON-STRICT {}, ERROR {}; {} cause{} found",
        s.sequences,
        if s.sequences == 1 { "" } else { "s" },
        s.commands,
        s.case_runs,
        secs,
        s.commands as f64 / secs,
        s.coverage,
        s.corpus,
        s.non_strict,
        s.errors,
        causes,
        if causes == 1 { "" } else { "s" }
    ));
}
