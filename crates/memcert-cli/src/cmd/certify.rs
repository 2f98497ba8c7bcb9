//! `memcert certify`: run the case catalog against a handler, or with --app every transcript
//! through a whole app, grade every case, write the reports asked for, and exit 0 when certified
//! (1 not certified or cut short by --deadline, 2 usage error or a handler that cannot start,
//! 130 stopped by SIGINT or SIGTERM).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use memcert::certify::{self, Config, Fanout, Reporter};
use memcert::expected::ExpectedFailures;
use memcert::report::snapshots::SnapshotWriter;
use memcert::setup::baseline::{self, BaselineError, BaselinePolicy};
use memcert::suite::list::CaseList;
use memcert_app::appcert;
use memcert_app::mockapi::{Fault, SessionLog};
use memcert_app::transcript::Transcript;

use crate::args::{
    seconds, AppArgs, GradeArgs, HandlerArgs, ReportArgs, ScratchArgs, SelectArgs, StopArgs,
};
use crate::reporting::{reported, say, warn};

/// The flags of `memcert certify`.
#[derive(clap::Args, Debug)]
pub struct CertifyArgs {
    #[command(flatten)]
    pub handler: HandlerArgs,
    #[command(flatten)]
    pub app: AppArgs,
    /// With --app: inject a fault in every transcript, to certify the app's own retry and
    /// failure behaviour (repeatable): `STATUS@TURN` (e.g. `529@3`: the first request for turn
    /// 3 gets an overloaded_error), `drop@TURN` (the answer is cut midway and the connection
    /// closed), `truncate@TURN` (the answer ends early but cleanly), each optionally `xTIMES`
    /// (`500@2x3`). Turns count from 1. Calls never made after a fault are not graded and keep
    /// the run from certifying.
    #[arg(long = "inject", value_name = "FAULT", requires = "app")]
    pub inject: Vec<Fault>,
    /// With --app: write every request the mock received and what it answered here, as JSON
    /// lines (`case`, `n`, `request` body, `anthropic_beta`, `status`, `answer`); headers with
    /// credentials are never written.
    #[arg(long, value_name = "FILE", requires = "app")]
    pub wire_log: Option<PathBuf>,
    #[command(flatten)]
    pub grade: GradeArgs,
    /// A TOML file of case ids or globs the handler is known to fail, each with a reason
    /// (`[[expected]] id = "..." reason = "..."`). Their FAIL, UNSAFE or ERROR does not stop
    /// certification; an entry whose cases all pass is stale and does.
    #[arg(long, value_name = "FILE")]
    pub expected_failures: Option<PathBuf>,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub reports: ReportArgs,
    #[command(flatten)]
    pub stop: StopArgs,
    /// Compare every answer with the snapshots in this folder (made by `memcert snapshot`): a
    /// changed answer is a REGRESSION, shown with a line diff, and a snapshot whose case no
    /// longer exists is STALE; either fails the run (exit 1). A case without a snapshot is NEW
    /// and does not. Race and SKIPPED cases are not compared. Works with --app too (one snapshot
    /// per transcript). Exit 1 also when the run is not certified: the verdicts still count
    /// (use --expected-failures for the known ones).
    #[arg(long, value_name = "DIR")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: write each REGRESSION and NEW case's snapshot as `<name>.snap.new` beside
    /// the old files, as insta does, to review with `cargo insta review` (or rename by hand). The
    /// run still fails on a REGRESSION.
    #[arg(long, requires = "baseline")]
    pub update_baseline: bool,
    #[command(flatten)]
    pub scratch: ScratchArgs,
}

/// `memcert certify`: check the flags and files, then run the catalog or, with --app, the app,
/// until it ends or SIGINT, SIGTERM or --deadline stops it.
pub fn run(mut args: CertifyArgs) -> Result<i32> {
    args.select.check_app(args.app.app.is_some())?;
    args.scratch.apply();
    if args.reports.sarif.is_some() {
        args.reports.sarif_uri = Some(crate::anchor::anchor(
            args.reports.sarif_location.as_deref(),
            &args.handler,
            &args.app,
        )?);
    }
    seconds("--timeout", args.handler.timeout)?;
    args.reports
        .check_writable(&[("wire log", args.wire_log.as_deref())])?;
    args.handler.check_reports(&args.reports)?;
    let jobs = args.handler.jobs(args.app.app.is_some())?;
    let config = config(&args)?;
    if args.app.app.is_some() {
        return run_app(&args, config);
    }
    run_catalog(&args, config, jobs)
}

/// How the run grades: the flags, the expected failures and the baseline loaded. A list or a
/// baseline made with another catalog version is a warning on stderr, once each.
fn config(args: &CertifyArgs) -> Result<Config> {
    let expected = expected_failures(args.expected_failures.as_deref())?;
    if let (Some(path), Some(v)) = (&args.expected_failures, expected.other_catalog()) {
        let made = format!("--expected-failures {}", path.display());
        warn(&memcert::report::expected_other_catalog(&made, v));
    }
    let snapshots = baseline_policy(args).snapshots().map_err(baseline_error)?;
    if let (Some(dir), certify::Snapshots::Compare(b)) = (&args.baseline, &snapshots) {
        let made = format!("--baseline {} was recorded with", dir.display());
        let note =
            memcert::report::baseline_other_catalog(&made, &b.other_catalogs(), b.snapshots.len());
        if let Some(note) = note {
            warn(&note);
        }
    }
    Ok(Config {
        profile: args.grade.profile,
        strict: args.grade.strict,
        expected,
        black_box: args.handler.memory_dir_unknown,
        snapshots,
        race_rounds: Some(args.handler.race_rounds),
        stop: args.stop.stop()?,
        keep_reply_bytes: None,
        reset: args.handler.reset,
        known: Vec::new(),
    })
}

/// `--expected-failures FILE`, read and parsed; none without the flag.
fn expected_failures(path: Option<&Path>) -> Result<ExpectedFailures> {
    let Some(path) = path else {
        return Ok(ExpectedFailures::default());
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read --expected-failures {}", path.display()))?;
    ExpectedFailures::parse(&text)
        .with_context(|| format!("--expected-failures {}", path.display()))
}

fn baseline_policy(args: &CertifyArgs) -> BaselinePolicy {
    BaselinePolicy {
        dir: args.baseline.clone(),
        update: args.update_baseline,
    }
}

/// A baseline error in the words of --baseline and --update-baseline.
fn baseline_error(e: BaselineError) -> anyhow::Error {
    let flag = match e {
        BaselineError::NotWritable { .. } => "--update-baseline: ",
        _ => "--baseline ",
    };
    anyhow::Error::new(Flagged { flag, error: e })
}

/// A library error with the flag it is about in front; its causes follow as they were.
#[derive(Debug)]
struct Flagged<E> {
    flag: &'static str,
    error: E,
}

impl<E: std::fmt::Display> std::fmt::Display for Flagged<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.flag, self.error)
    }
}

impl<E: std::error::Error> std::error::Error for Flagged<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

/// The catalog cases --level/--cases/--exclude select, against `jobs` handlers at once
/// (`--jobs`).
fn run_catalog(args: &CertifyArgs, config: Config, jobs: usize) -> Result<i32> {
    let (cases, known) = args.select.cases_and_known()?;
    let config = Config { known, ..config };
    let h = &args.handler;
    if h.python.is_none() && h.node.is_none() && h.stdio.is_none() {
        // A run in the wrong folder (its memcert.toml one level up) must not pass unnoticed.
        say("note: no handler given (--python, --node, --stdio, --app, or a memcert.toml here): certifying memcert's built-in reference handler");
    }
    let mut pool =
        args.handler
            .start_pool(args.grade.profile, &config.stop, pool_size(jobs, &cases))?;
    let mut pending = baseline_policy(args).pending_writer();
    let code = reported(&args.reports, &args.grade, |reporter| {
        run_pool(
            &config,
            &cases,
            &mut pool,
            &mut with_pending(reporter, &mut pending),
        )
    })?;
    pending_done(pending)?;
    Ok(code)
}

/// How many handlers to start for `cases` with `--jobs` `jobs`: no more than the cases that
/// can run in parallel (race cases run on the first handler alone), and at least one.
pub fn pool_size<C: CaseList + ?Sized>(jobs: usize, cases: &C) -> usize {
    let parallel = (0..cases.len()).filter(|&i| !cases.is_race(i)).count();
    jobs.min(parallel).max(1)
}

/// The cases against the started handlers `pool` ([`certify::run_parallel`]: the first one
/// runs the start-up probe and the race cases).
///
/// # Errors
/// An empty pool.
pub fn run_pool<C: CaseList + ?Sized>(
    config: &Config,
    cases: &C,
    pool: &mut [memcert::setup::handler::Started],
    reporter: &mut dyn Reporter,
) -> Result<certify::Summary> {
    let Some((first, rest)) = pool.split_first_mut() else {
        anyhow::bail!("no handler was started");
    };
    type Helper<'a> = &'a mut (dyn memcert::target::Target + Send);
    let mut helpers: Vec<Helper<'_>> = rest
        .iter_mut()
        .map(|s| -> Helper<'_> { s.target.as_mut() })
        .collect();
    Ok(certify::run_parallel(
        config,
        cases,
        first.target.as_mut(),
        &mut helpers,
        reporter,
    ))
}

/// `certify --app`: every transcript through the mock, reported like catalog cases.
fn run_app(args: &CertifyArgs, config: Config) -> Result<i32> {
    let (transcripts, mut app) = args
        .app
        .prepare(&args.select, config, args.inject.clone())?;
    app.contain = args.handler.policy();
    let mut wire = Vec::new();
    let mut pending = baseline_policy(args).pending_writer();
    let code = reported(&args.reports, &args.grade, |reporter| {
        let run = appcert::run(
            &app,
            &transcripts,
            &mut with_pending(reporter, &mut pending),
        )?;
        wire = run.wire;
        Ok(run.summary)
    })?;
    pending_done(pending)?;
    if let Some(path) = &args.wire_log {
        write_wire_log(path, &transcripts, &wire)?;
    }
    Ok(code)
}

/// The run's reporter, and the `.snap.new` writer of --update-baseline when there is one.
fn with_pending<'a>(
    reporter: &'a mut dyn Reporter,
    pending: &'a mut Option<SnapshotWriter>,
) -> Fanout<'a> {
    let mut both: Vec<&mut dyn Reporter> = vec![reporter];
    if let Some(p) = pending.as_mut() {
        both.push(p);
    }
    Fanout(both)
}

/// After the run: fail when a `.snap.new` could not be written, else say how many were.
fn pending_done(pending: Option<SnapshotWriter>) -> Result<()> {
    let Some(p) = pending else {
        return Ok(());
    };
    let dir = p.dir().to_owned();
    let written = baseline::pending_written(p)?;
    if written > 0 {
        say(&format!(
            "wrote {} pending snapshot{} (.snap.new) to {}; review them with `cargo insta review`, or diff each against its .snap and accept it with `mv x.snap.new x.snap`",
            written,
            if written == 1 { "" } else { "s" },
            dir.display()
        ));
    }
    Ok(())
}

/// `--wire-log FILE`: one JSON line per request the mock received, with its case and number.
fn write_wire_log(path: &Path, transcripts: &[Transcript], wire: &[SessionLog]) -> Result<()> {
    let mut out = String::new();
    for (t, log) in transcripts.iter().zip(wire) {
        for (n, e) in log.exchanges.iter().enumerate() {
            let mut line = serde_json::to_value(e)?;
            line["case"] = t.case_id().into();
            line["n"] = (n + 1).into();
            out.push_str(&serde_json::to_string(&line)?);
            out.push('\n');
        }
    }
    std::fs::write(path, out)
        .with_context(|| format!("cannot write the wire log {}", path.display()))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use clap::Parser;

    use crate::{Cli, Cmd};
    use memcert::text::Profile;

    #[test]
    fn parses_certify_flags() {
        let cli = Cli::try_parse_from([
            "memcert",
            "certify",
            "--python",
            "m:C",
            "--profile",
            "python-sdk",
            "--cases",
            "view/*",
            "--timeout",
            "2",
        ])
        .unwrap();
        let Cmd::Certify(a) = cli.command else {
            panic!()
        };
        assert_eq!(a.handler.python.as_deref(), Some("m:C"));
        assert_eq!(a.grade.profile, Profile::PythonSdk);
        assert_eq!(a.select.cases, ["view/*"]);
        assert!(a.select.replay.is_empty());
        let cli = Cli::try_parse_from([
            "memcert", "certify", "--replay", "a.json", "--replay", "findings",
        ])
        .unwrap();
        let Cmd::Certify(a) = cli.command else {
            panic!()
        };
        assert_eq!(
            a.select.replay,
            [PathBuf::from("a.json"), PathBuf::from("findings")]
        );
        assert_eq!(
            a.handler.max_reply_bytes,
            memcert::target::stdio::DEFAULT_MAX_REPLY_BYTES
        );
        let cli =
            Cli::try_parse_from(["memcert", "certify", "--max-reply-bytes", "1048576"]).unwrap();
        let Cmd::Certify(a) = cli.command else {
            panic!()
        };
        assert_eq!(a.handler.max_reply_bytes, 1 << 20);
        assert!(Cli::try_parse_from(["memcert", "certify", "--max-reply-bytes", "10"]).is_err());
        assert!(Cli::try_parse_from(["memcert", "certify", "--profile", "nope"]).is_err());
        assert!(
            Cli::try_parse_from(["memcert", "certify", "--python", "a:B", "--stdio", "x"]).is_err()
        );
        let cli = Cli::try_parse_from([
            "memcert",
            "certify",
            "--app",
            "python app.py",
            "--memory-dir",
            "/tmp/m/base/memories",
            "--threads",
            "refuse",
        ])
        .unwrap();
        let Cmd::Certify(a) = cli.command else {
            panic!()
        };
        assert_eq!(a.app.app.as_deref(), Some("python app.py"));
        assert_eq!(a.app.threads, memcert_app::mockapi::Threads::Refuse);
        assert!(Cli::try_parse_from(["memcert", "certify", "--app", "x"]).is_err());
        assert!(Cli::try_parse_from([
            "memcert",
            "certify",
            "--app",
            "x",
            "--memory-dir",
            "d",
            "--stdio",
            "y"
        ])
        .is_err());
    }

    #[test]
    fn no_more_handlers_start_than_cases_that_run_in_parallel() {
        let all = memcert::suite::catalog::all();
        let race = all.iter().find(|c| c.race.is_some()).cloned().unwrap();
        let plain: Vec<memcert::suite::Case> = all
            .iter()
            .filter(|c| c.race.is_none())
            .take(2)
            .cloned()
            .collect();
        let mixed = [plain.clone(), vec![race.clone()]].concat();
        assert_eq!(super::pool_size(4, &mixed), 2);
        assert_eq!(super::pool_size(1, &mixed), 1);
        assert_eq!(super::pool_size(4, &[race][..]), 1);
        assert_eq!(super::pool_size(4, &[][..]), 1);
        assert_eq!(super::pool_size(64, &plain), 2);
    }

    #[test]
    fn jobs_default_to_the_cpus_up_to_4_and_to_1_where_runs_go_one_at_a_time() {
        let jobs = |args: &[&str], app: bool| {
            let cli = Cli::try_parse_from(["memcert", "certify"].iter().chain(args)).unwrap();
            let Cmd::Certify(a) = cli.command else {
                panic!()
            };
            a.handler.jobs(app).map_err(|e| e.to_string())
        };
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(jobs(&[], false), Ok(cpus.min(4)));
        assert_eq!(jobs(&["--jobs", "7"], false), Ok(7));
        assert_eq!(jobs(&["--jobs", "1"], true), Ok(1));
        assert_eq!(jobs(&[], true), Ok(1));
        assert_eq!(jobs(&["--memory-dir-unknown"], false), Ok(1));
        assert_eq!(
            jobs(&["--jobs", "0"], false),
            Err("--jobs must be at least 1".into())
        );
        assert_eq!(jobs(&["--jobs", "64"], false), Ok(64));
        assert_eq!(
            jobs(&["--jobs", "65"], false),
            Err("--jobs 65: at most 64".into())
        );
        assert!(Cli::try_parse_from(["memcert", "certify", "--jobs", "-1"]).is_err());
    }

    #[test]
    fn parses_faults() {
        let cli = Cli::try_parse_from([
            "memcert",
            "certify",
            "--app",
            "x",
            "--memory-dir",
            "d",
            "--inject",
            "529@3",
            "--inject",
            "drop@2x2",
        ])
        .unwrap();
        let Cmd::Certify(a) = cli.command else {
            panic!()
        };
        let faults: Vec<String> = a.inject.iter().map(ToString::to_string).collect();
        assert_eq!(faults, ["529@3", "drop@2x2"]);
        let e = Cli::try_parse_from([
            "memcert",
            "certify",
            "--app",
            "x",
            "--memory-dir",
            "d",
            "--inject",
            "529",
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("bad fault \"529\": expected STATUS@TURN"), "{e}");
        assert!(Cli::try_parse_from(["memcert", "certify", "--inject", "529@1"]).is_err());
    }

    #[test]
    fn parses_baseline_flags() {
        let cli = Cli::try_parse_from([
            "memcert",
            "certify",
            "--baseline",
            "base",
            "--update-baseline",
        ])
        .unwrap();
        let Cmd::Certify(a) = cli.command else {
            panic!()
        };
        assert_eq!(a.baseline, Some(PathBuf::from("base")));
        assert!(a.update_baseline);
        assert!(
            Cli::try_parse_from(["memcert", "certify", "--update-baseline"]).is_err(),
            "--update-baseline needs --baseline"
        );
    }
}
