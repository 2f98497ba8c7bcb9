//! `memcert fuzz`: command sequences against a handler, judged against the documented model
//! ([`memcert::fuzz::search`]); each flaw shrunk to a minimal sequence, printed with the model's
//! and the handler's replies side by side, and saved for `certify --replay`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use memcert::certify::{self, Config};
use memcert::exit;
use memcert::fuzz::search::generate::drawable;
use memcert::fuzz::search::{merge_found, Event, Found, Fuzzer, Outcome, Settings, Stats};
use memcert::fuzz::sequence::Sequence;
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
    /// Keep the inputs that reached new coverage here between runs, as libFuzzer keeps its
    /// corpus: the inputs already there run first (shared out among the workers), each new one
    /// is added as `input-<hash>.json` (the folder is made if missing). Files that do not
    /// parse are skipped with a warning.
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
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
        .map(|d| own_dir(&args.handler, "--out", d))
        .transpose()?;
    let corpus_dir = args
        .corpus
        .as_deref()
        .map(|d| own_dir(&args.handler, "--corpus", d))
        .transpose()?;
    // The built-in first inputs (a view through each plain-beside-odd traversal spelling, by
    // an absolute host path, of a planted huge file), then the corpus; black-box mode aims at
    // no planted canary and plants nothing: only the absolute host path of the sandbox's
    // canary, which names it wherever the handler keeps its store.
    let built_in = if args.handler.memory_dir_unknown {
        memcert::fuzz::search::generate::black_box_seeds()
    } else {
        memcert::fuzz::search::generate::seeds()
    };
    let corpus = corpus_dir.as_ref().map(load_corpus).unwrap_or_default();
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
                let corpus_dir = corpus_dir.as_ref();
                let settings = Settings {
                    duration,
                    ..Settings::worker(runs, args.seed, workers, i as u64, &built_in, &corpus)
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
                    fuzzer.search(&settings, &mut |e| match e {
                        Event::Met(c) => say(&format!("worker {i}: found {c}; shrinking")),
                        Event::Kept(seq) => {
                            if let Some(dir) = corpus_dir {
                                keep(dir, seq, i);
                            }
                        }
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

/// `--out DIR` or `--corpus DIR` (`flag`), checked and made before the handler starts: never
/// under an `--allow-write` folder (the handler could plant links there), made if missing,
/// opened once; everything in it is read and written through that handle.
fn own_dir(handler: &HandlerArgs, flag: &str, dir: &std::path::Path) -> Result<cap_std::fs::Dir> {
    if let Some(w) = handler.writable_by_handler(dir) {
        bail!(
            "--allow-write {} would let the handler write in {flag} {}; memcert's own files are never writable by the handler",
            w.display(),
            dir.display()
        );
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{flag} {}: cannot make it", dir.display()))?;
    cap_std::fs::Dir::open_ambient_dir(dir, cap_std::ambient_authority())
        .with_context(|| format!("{flag} {}: cannot open it", dir.display()))
}

/// The format tag of a corpus file.
const CORPUS_FORMAT: &str = "memcert-fuzz-input/1";
/// Largest corpus file read, in bytes (a larger one is skipped; a drawn input is a few KiB).
const CORPUS_FILE_MAX: u64 = 64 * 1024;
/// Most corpus files read; the rest (in name order) are skipped with a warning.
const CORPUS_FILES_MAX: usize = 100_000;
/// Most bytes read from all corpus files together; the files after are skipped.
const CORPUS_BYTES_MAX: u64 = 64 * 1024 * 1024;

/// One corpus file: `{"format": "memcert-fuzz-input/1", "sequence": {...}}`.
#[derive(serde::Serialize, serde::Deserialize)]
struct CorpusFile {
    format: String,
    sequence: Sequence,
}

/// The inputs of `--corpus`, in file-name order: every `*.json` entry that is a regular file
/// (by its directory entry, so a FIFO is never opened, and opened without following a link),
/// of at most [`CORPUS_FILE_MAX`] bytes, within [`CORPUS_BYTES_MAX`] in all, that parses as a
/// [`CorpusFile`] whose sequence the generator could have made
/// ([`memcert::fuzz::search::generate::drawable`]); the others are skipped and counted in one
/// warning.
fn load_corpus(dir: &cap_std::fs::Dir) -> Vec<Sequence> {
    use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt as _};
    use std::io::Read as _;
    let mut skipped = 0;
    let mut names: Vec<String> = Vec::new();
    match dir.entries() {
        Ok(it) => {
            for e in it.flatten() {
                let Ok(name) = e.file_name().into_string() else {
                    skipped += 1;
                    continue;
                };
                if !name.ends_with(".json") || name.starts_with('.') {
                    continue;
                }
                if e.file_type().is_ok_and(|t| t.is_file()) && names.len() < CORPUS_FILES_MAX {
                    names.push(name);
                } else {
                    skipped += 1;
                }
            }
        }
        Err(e) => {
            warn(&format!("--corpus: cannot list it: {e}; starting empty"));
            return Vec::new();
        }
    }
    names.sort();
    let mut left = CORPUS_BYTES_MAX;
    let mut out = Vec::new();
    for name in names {
        let mut o = cap_std::fs::OpenOptions::new();
        o.read(true).follow(FollowSymlinks::No);
        let parsed = dir.open_with(&name, &o).ok().and_then(|f| {
            if !f.metadata().ok()?.is_file() {
                return None;
            }
            let mut bytes = Vec::new();
            f.take(CORPUS_FILE_MAX.min(left) + 1)
                .read_to_end(&mut bytes)
                .ok()?;
            if bytes.len() as u64 > CORPUS_FILE_MAX.min(left) {
                return None;
            }
            left -= bytes.len() as u64;
            let c: CorpusFile = serde_json::from_slice(&bytes).ok()?;
            (c.format == CORPUS_FORMAT && drawable(&c.sequence)).then_some(c.sequence)
        });
        match parsed {
            Some(seq) => out.push(seq),
            None => skipped += 1,
        }
    }
    if skipped > 0 {
        warn(&format!(
            "--corpus: {skipped} file{} skipped (not a regular {CORPUS_FORMAT} file of at most {CORPUS_FILE_MAX} bytes holding an input memcert fuzz could make, or over {CORPUS_FILES_MAX} files or {CORPUS_BYTES_MAX} bytes)",
            if skipped == 1 { "" } else { "s" }
        ));
    }
    say(&format!(
        "--corpus: {} input{} read",
        out.len(),
        if out.len() == 1 { "" } else { "s" }
    ));
    out
}

/// Add `seq` to the corpus folder as `input-<12 hex digits of the SHA-256 of its JSON>.json`:
/// written under a temporary name made new (`.tmp-<pid>-<worker>-<name>`, so that two runs
/// sharing the folder never write one file), then renamed over the name, so a stopped run
/// leaves no half file under a corpus name (an input already there has the same bytes). A
/// failure is a warning (the search goes on); the temporary file is removed only when this
/// process made it.
fn keep(dir: &cap_std::fs::Dir, seq: &Sequence, worker: usize) {
    use std::io::Write as _;
    let file = CorpusFile {
        format: CORPUS_FORMAT.to_owned(),
        sequence: seq.clone(),
    };
    let Ok(text) = serde_json::to_string(&file) else {
        return;
    };
    let name = format!(
        "input-{}.json",
        &memcert::certify::sha256_hex(text.as_bytes())[..12]
    );
    let tmp = format!(".tmp-{}-{worker}-{name}", std::process::id());
    let mut o = cap_std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    let made = match dir.open_with(&tmp, &o) {
        Ok(f) => f,
        Err(e) => {
            warn(&format!("--corpus: cannot add {name}: {e}"));
            return;
        }
    };
    let written = (&made)
        .write_all((text + "\n").as_bytes())
        .and_then(|()| dir.rename(&tmp, dir, &name));
    if let Err(e) = written {
        let _ = dir.remove_file(&tmp);
        warn(&format!("--corpus: cannot add {name}: {e}"));
    }
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

/// The workers' outcomes as one: the findings joined per flaw
/// ([`memcert::fuzz::search::merge_found`]), stats added, coverage joined, the longest wall
/// time.
fn merge(outcomes: Vec<Outcome>) -> (Vec<Found>, Stats, Duration) {
    let mut found: Vec<Found> = Vec::new();
    let mut stats = Stats::default();
    let mut coverage = std::collections::BTreeSet::new();
    let mut elapsed = Duration::ZERO;
    for o in outcomes {
        stats.sequences += o.stats.sequences;
        stats.commands += o.stats.commands;
        stats.case_runs += o.stats.case_runs;
        stats.non_strict += o.stats.non_strict;
        stats.errors += o.stats.errors;
        coverage.extend(o.coverage);
        stats.corpus += o.stats.corpus;
        elapsed = elapsed.max(o.elapsed);
        found.extend(o.found);
    }
    stats.coverage = coverage.len();
    (merge_found(found), stats, elapsed)
}

/// One finding on stdout: the cause, the planted layout, each command with the model's reply
/// and the handler's, and the findings of its run.
fn print_found(n: usize, f: &Found) {
    let shrunk = f.plan.case.steps.len();
    out(&format!(
        "FINDING {n}: {} (met {} time{}, first in sequence {}; {} command{}, shrunk from {}{})",
        f.cause,
        f.count,
        if f.count == 1 { "" } else { "s" },
        f.first_at,
        shrunk,
        if shrunk == 1 { "" } else { "s" },
        f.unshrunk_commands,
        if f.shrink_cut {
            "; shrinking was cut short: its budget, --duration or a signal"
        } else {
            ""
        }
    ));
    if !f.also.is_empty() {
        let also: Vec<String> = f.also.iter().map(ToString::to_string).collect();
        out(&format!(
            "  also counted here (later symptoms of this flaw): {}",
            also.join("; ")
        ));
    }
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
