//! `memcert`: arguments in, exit code out. All behaviour lives in the library.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use std::io::Write as _;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

use memcert::certify::{self, Config, Fanout, Reporter};
use memcert::exit;
use memcert::expected::ExpectedFailures;
use memcert::report::{html, json, junit, markdown, terminal::Terminal, FileReport};

type ReportRender = fn(&certify::Summary, &[certify::CaseRecord]) -> String;
use memcert::suite::catalog;
use memcert::target::{inproc::InProcess, node, python, stdio::Stdio, Target};
use memcert::text::Profile;

mod progress;
use progress::Progress;

/// Certify Claude memory-tool handlers for path-traversal safety and spec conformance.
#[derive(Parser, Debug)]
#[command(name = "memcert", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run the case catalog against a handler and grade every case; or, with --app, run a whole
    /// app against a mock Messages API once per recorded transcript and grade what its memory
    /// handler sent back.
    ///
    /// Without --python, --node, --stdio or --app, certifies memcert's built-in reference handler.
    /// Exit status: 0 certified, 1 not certified, 2 usage error or a handler that cannot start.
    Certify(Box<CertifyArgs>),
    /// Run the case catalog against a handler and record its answers: one snapshot per case in
    /// insta's `.snap` format (`<case id with / as __>.snap`), redacted by named rules (temp
    /// paths, the canary token, directory and link sizes) so that the same handler always gives
    /// the same files. Compare a later run with `memcert certify --baseline DIR`.
    ///
    /// Race cases and SKIPPED cases are not recorded. Without --python, --node, --stdio or --app,
    /// records memcert's built-in reference handler; with --app, a whole app through the mock
    /// Messages API, one snapshot per transcript. Exit status: 0 recorded, 1 an app run ended in
    /// ERROR (its missing answers are recorded as `no reply`), 2 usage error, a handler that
    /// cannot start or a file that cannot be written.
    Snapshot(Box<SnapshotArgs>),
    /// Print the traversal payload corpus. `{DOWN:d}` in a payload stands for the way back down
    /// from the d-th ancestor of the store root to the sandbox, filled in per case. The corpus
    /// feeds the reference handler's tests, the fuzz seeds and the `payload/...` cases of
    /// `certify` (a share of them per --level).
    Payloads {
        /// Only this family (traversal, prefix, absolute, root-alias, control, windows, long).
        #[arg(long)]
        family: Option<String>,
        /// Only traversal payloads of this depth (1-8).
        #[arg(long, value_parser = clap::value_parser!(u8).range(1..=8))]
        depth: Option<u8>,
        /// `text`: one path per line; `jsonl`: one JSON object per payload with its parameters.
        #[arg(long, default_value = "text", value_parser = ["text", "jsonl"])]
        format: String,
    },
    /// Serve one transcript on the mock Messages API for an app you start yourself, then grade
    /// what its memory handler sent back (docs/transcripts.md).
    ///
    /// Prints `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/s/0` on its first line; point your app
    /// at it (any dummy ANTHROPIC_API_KEY works). Stops by itself once the final turn is served,
    /// or after --timeout, and prints the verdict. Exit status as for certify.
    MockApi(Box<MockApiArgs>),
    /// Record a real conversation as a transcript: a pass-through proxy to the Messages API
    /// that writes what the model asked and what the app's memory handler answered.
    ///
    /// Prints `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT` on its first line; point your app at
    /// it. Stops by itself once an answer ends the conversation (a stop_reason other than
    /// tool_use), or after --timeout. Credentials are never written. Replay the file with
    /// `certify --app ... --transcripts DIR` (docs/transcripts.md).
    Record {
        /// The real API's base URL (as for ANTHROPIC_BASE_URL), e.g. https://api.anthropic.com.
        #[arg(long, value_name = "URL")]
        upstream: String,
        /// The transcript file to write (rewritten after every turn).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// The transcript id; default: from the file name.
        #[arg(long)]
        id: Option<String>,
        /// Stop after this many seconds whatever happens.
        #[arg(long, default_value_t = 1800.0, value_name = "SECONDS")]
        timeout: f64,
    },
    /// List the case ids of a level (after --cases/--exclude), one per line.
    Cases(SelectArgs),
}

#[derive(clap::Args, Debug)]
struct MockApiArgs {
    /// The transcript to serve (`memcert-transcript/1`, docs/transcripts.md).
    #[arg(long, value_name = "FILE")]
    transcript: PathBuf,
    /// Your app's memory store root (what /memories maps to), so memcert can plant the
    /// transcript's setup and canaries around it and check the store afterwards. The folder two
    /// levels up must be absent or empty. Without it, a scratch folder stands in: only the
    /// replies are graded, and a transcript with setup or checks is refused.
    #[arg(long, value_name = "DIR")]
    memory_dir: Option<PathBuf>,
    /// Give up (ERROR) when the final turn is not served within this many seconds.
    #[arg(long, default_value_t = 600.0, value_name = "SECONDS")]
    timeout: f64,
    /// `accept` or `refuse` the SDKs' server-side threads, as for certify --app.
    #[arg(long, default_value = "accept", value_name = "accept|refuse")]
    threads: memcert_app::mockapi::Threads,
    /// Inject a fault, as for certify --app (repeatable).
    #[arg(long = "inject", value_name = "FAULT")]
    inject: Vec<memcert_app::mockapi::Fault>,
    /// Which wording is PASS: docs, python-sdk or typescript-sdk.
    #[arg(long, default_value = "docs", value_name = "PROFILE")]
    profile: Profile,
    /// Grade NON-STRICT as FAIL.
    #[arg(long)]
    strict: bool,
    /// Also write the JSON report here.
    #[arg(long, value_name = "FILE")]
    report_json: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct CertifyArgs {
    #[command(flatten)]
    handler: HandlerArgs,
    #[command(flatten)]
    app: AppArgs,
    /// With --app: inject a fault in every transcript, to certify the app's own retry and
    /// failure behaviour (repeatable): `STATUS@TURN` (e.g. `529@3`: the first request for turn
    /// 3 gets an overloaded_error), `drop@TURN` (the answer is cut midway and the connection
    /// closed), `truncate@TURN` (the answer ends early but cleanly), each optionally `xTIMES`
    /// (`500@2x3`). Turns count from 1. Calls never made after a fault are not graded and keep
    /// the run from certifying.
    #[arg(long = "inject", value_name = "FAULT", requires = "app")]
    inject: Vec<memcert_app::mockapi::Fault>,
    /// With --app: write every request the mock received and what it answered here, as JSON
    /// lines (`case`, `n`, `request` body, `anthropic_beta`, `status`, `answer`); headers with
    /// credentials are never written.
    #[arg(long, value_name = "FILE", requires = "app")]
    wire_log: Option<PathBuf>,
    /// Which wording is PASS: docs, python-sdk or typescript-sdk.
    #[arg(long, default_value = "docs", value_name = "PROFILE")]
    profile: Profile,
    /// Grade NON-STRICT as FAIL.
    #[arg(long)]
    strict: bool,
    /// A TOML file of case ids or globs the handler is known to fail, each with a reason
    /// (`[[expected]] id = "..." reason = "..."`). Their FAIL, UNSAFE or ERROR does not stop
    /// certification; an entry whose cases all pass is stale and does.
    #[arg(long, value_name = "FILE")]
    expected_failures: Option<PathBuf>,
    #[command(flatten)]
    select: SelectArgs,
    /// Also write the full results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    report_json: Option<PathBuf>,
    /// Also write JUnit XML to this file (one test case per case id).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Also write a Markdown summary to this file (e.g. $GITHUB_STEP_SUMMARY).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Also write an HTML report to this file: one self-contained page (no external resources)
    /// with the table per category, filters by verdict, and every case with its steps and diffs.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Compare every answer with the snapshots in this folder (made by `memcert snapshot`): a
    /// changed answer is a REGRESSION, shown with a line diff, and a snapshot whose case no
    /// longer exists is STALE; either fails the run (exit 1). A case without a snapshot is NEW
    /// and does not. Race and SKIPPED cases are not compared. Works with --app too (one snapshot
    /// per transcript). Exit 1 also when the run is not certified: the verdicts still count
    /// (use --expected-failures for the known ones).
    #[arg(long, value_name = "DIR")]
    baseline: Option<PathBuf>,
    /// With --baseline: write each REGRESSION and NEW case's snapshot as `<name>.snap.new` beside
    /// the old files, as insta does, to review with `cargo insta review` (or rename by hand). The
    /// run still fails on a REGRESSION.
    #[arg(long, requires = "baseline")]
    update_baseline: bool,
}

#[derive(clap::Args, Debug)]
struct SnapshotArgs {
    /// The folder to write the snapshots to (made if missing). Existing snapshots of the cases
    /// run are replaced, others are left alone; a case's pending `.snap.new` is removed.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    #[command(flatten)]
    handler: HandlerArgs,
    #[command(flatten)]
    app: AppArgs,
    /// Which wording the built-in reference handler uses (docs, python-sdk or typescript-sdk);
    /// external handlers answer in their own.
    #[arg(long, default_value = "docs", value_name = "PROFILE")]
    profile: Profile,
    #[command(flatten)]
    select: SelectArgs,
}

/// Which cases run (`certify`, `snapshot`, `cases`).
#[derive(clap::Args, Debug, Clone)]
struct SelectArgs {
    /// Which cases: quick (the hand-written catalog and a sample of every payload family,
    /// about 300), standard (about 1,900) or full (every payload in every field, over 21,000).
    #[arg(long, default_value = "standard", value_name = "LEVEL")]
    level: catalog::RunLevel,
    /// Only cases whose id matches this glob (repeatable; `*` matches across `/`); with --app,
    /// ids are `app/<transcript id>`.
    #[arg(long = "cases", value_name = "GLOB")]
    cases: Vec<String>,
    /// Leave out cases whose id matches this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
}

impl SelectArgs {
    /// The level's cases that --cases/--exclude keep; none is an error.
    fn cases(&self) -> Result<Vec<memcert::suite::Case>> {
        let cases = certify::select(catalog::for_level(self.level), &self.cases, &self.exclude)
            .context("bad --cases or --exclude glob")?;
        if cases.is_empty() {
            bail!("no case matches --cases/--exclude; `memcert cases` lists the ids");
        }
        Ok(cases)
    }
}

/// How to reach the handler under test (`certify`, `snapshot`).
#[derive(clap::Args, Debug, Clone)]
struct HandlerArgs {
    /// A Python handler: `path/to/file.py:ClassName` or `package.module:ClassName`, a subclass of
    /// anthropic's BetaAbstractMemoryTool or BetaAsyncAbstractMemoryTool, built with base_path=;
    /// or `path/to/file.py:make_handler`, a function (sync or async) that takes the base
    /// directory and returns such a handler.
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["stdio", "node"])]
    python: Option<String>,
    /// Extra keyword arguments for the Python handler's constructor or factory, as a JSON object
    /// (`base_path=`, or the factory's first argument, is always given).
    #[arg(long, value_name = "JSON", requires = "python")]
    python_init: Option<String>,
    /// Python interpreter for --python (it must have the `anthropic` package).
    #[arg(long, value_name = "EXE", default_value = "python3")]
    python_exe: String,
    /// A Node handler for the TypeScript SDK: `path/to/module.mjs:ExportName` (a class like
    /// BetaLocalFilesystemMemoryTool, built with its static init(baseDir)) or
    /// `module.mjs:makeHandler` (a factory given the base directory), or a package subpath such as
    /// `@anthropic-ai/sdk/tools/memory/node:BetaLocalFilesystemMemoryTool`.
    #[arg(long, value_name = "SPEC", conflicts_with = "stdio")]
    node: Option<String>,
    /// Node interpreter for --node.
    #[arg(long, value_name = "EXE", default_value = "node")]
    node_exe: String,
    /// A folder whose node_modules holds @anthropic-ai/sdk, when the handler's folder and the
    /// current folder do not.
    #[arg(long, value_name = "DIR")]
    node_path: Option<PathBuf>,
    /// A handler process speaking stdio protocol v1 (docs/protocol.md): program and arguments,
    /// split like a POSIX shell splits words (quotes allowed, no expansion).
    #[arg(long, value_name = "COMMAND")]
    stdio: Option<String>,
    /// Per-call time limit in seconds for external handlers.
    #[arg(long, default_value_t = memcert::target::stdio::DEFAULT_TIMEOUT.as_secs_f64(), value_name = "SECONDS")]
    timeout: f64,
    /// The handler does not keep its files in the memories_dir memcert gives it (a database, a
    /// dict, a folder of its own): plant files through its own `create` commands, SKIP cases
    /// that need links, FIFOs, empty folders or races, and judge state only by its answers.
    #[arg(long)]
    memory_dir_unknown: bool,
}

/// A whole app run through the mock Messages API (`certify --app`, `snapshot --app`).
#[derive(clap::Args, Debug, Clone)]
struct AppArgs {
    /// A whole app (its SDK tool runner and memory handler), run unmodified once per transcript
    /// with ANTHROPIC_BASE_URL pointing at memcert's mock Messages API: program and arguments,
    /// split like --stdio. It also gets MEMCERT_MEMORY_DIR and MEMCERT_BASE_DIR (see
    /// docs/transcripts.md). Needs --memory-dir.
    #[arg(long, value_name = "COMMAND", conflicts_with_all = ["python", "node", "stdio", "memory_dir_unknown"], requires = "memory_dir")]
    app: Option<String>,
    /// With --app: the app's memory store root (what /memories maps to; for the Python SDK's
    /// BetaLocalFilesystemMemoryTool(base_path=B) that is B/memories). The folder two levels
    /// up must be absent or empty: memcert puts its canaries there, and empties it afterwards
    /// (removes it if memcert made it). No `..` in it, and that folder must not be a link.
    #[arg(long, value_name = "DIR", requires = "app")]
    memory_dir: Option<PathBuf>,
    /// With --app: a folder of transcripts (*.json, docs/transcripts.md), or one transcript
    /// file; default: the built-in ones.
    #[arg(long, value_name = "DIR", requires = "app")]
    transcripts: Option<PathBuf>,
    /// With --app: time limit per transcript, in seconds; the app's process group is killed
    /// after it.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS", requires = "app")]
    app_timeout: f64,
    /// With --app: `accept` answers the SDKs' server-side threads (their default), `refuse`
    /// answers them with thread_unsupported_request, so the runner falls back to full history.
    #[arg(
        long,
        default_value = "accept",
        value_name = "accept|refuse",
        requires = "app"
    )]
    threads: memcert_app::mockapi::Threads,
}

impl AppArgs {
    /// The app run these flags describe, grading with `config`, stopped by SIGINT/SIGTERM.
    fn config(
        &self,
        config: Config,
        faults: Vec<memcert_app::mockapi::Fault>,
    ) -> Result<memcert_app::appcert::AppConfig> {
        Ok(memcert_app::appcert::AppConfig {
            command: self.app.clone().unwrap_or_default(),
            memory_dir: self
                .memory_dir
                .clone()
                .context("--app needs --memory-dir")?,
            timeout: seconds("--app-timeout", self.app_timeout)?,
            threads: self.threads,
            faults,
            config,
            interrupt: Some(interrupt_flag()?),
            known: Vec::new(),
        })
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("memcert: error: {e:#}");
            if matches!(
                e.downcast_ref::<memcert_app::appcert::AppError>(),
                Some(memcert_app::appcert::AppError::Interrupted)
            ) {
                return ExitCode::from(130);
            }
            ExitCode::from(exit::ERROR as u8)
        }
    }
}

fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Cmd::Snapshot(args) => snapshot_cmd(*args),
        Cmd::Cases(select) => {
            for c in certify::select(
                catalog::for_level(select.level),
                &select.cases,
                &select.exclude,
            )
            .context("bad --cases or --exclude glob")?
            {
                println!("{}", c.id);
            }
            Ok(exit::PASS)
        }
        Cmd::Certify(args) => certify_cmd(*args),
        Cmd::MockApi(args) => mock_api_cmd(*args),
        Cmd::Record {
            upstream,
            out,
            id,
            timeout,
        } => record_cmd(&upstream, &out, id, timeout),
        Cmd::Payloads {
            family,
            depth,
            format,
        } => {
            let list: Vec<_> = memcert::attack::payloads::corpus()
                .into_iter()
                .filter(|p| family.as_ref().is_none_or(|f| &p.family == f))
                .filter(|p| depth.is_none_or(|d| p.depth == Some(d)))
                .collect();
            if list.is_empty() {
                bail!("no payload matches --family/--depth");
            }
            let mut out = std::io::stdout().lock();
            for p in list {
                let line = if format == "jsonl" {
                    serde_json::to_string(&p)?
                } else {
                    memcert::vpath::display_path(&p.text)
                };
                if writeln!(out, "{line}").is_err() {
                    break; // a closed pipe (`| head`) ends the listing quietly
                }
            }
            Ok(exit::PASS)
        }
    }
}

fn certify_cmd(args: CertifyArgs) -> Result<i32> {
    seconds("--timeout", args.handler.timeout)?;
    for (what, path) in [
        ("JSON report", &args.report_json),
        ("JUnit report", &args.junit),
        ("Markdown report", &args.markdown),
        ("HTML report", &args.html),
    ] {
        if let Some(path) = path {
            // Fail now, not after the run, when a report cannot be written; an earlier report
            // at that path stays until the new one replaces it (written atomically at the end).
            memcert::report::check_writable(path)
                .with_context(|| format!("cannot write the {what} {}", path.display()))?;
        }
    }
    let expected = match &args.expected_failures {
        None => ExpectedFailures::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read --expected-failures {}", path.display()))?;
            ExpectedFailures::parse(&text)
                .with_context(|| format!("--expected-failures {}", path.display()))?
        }
    };
    let baseline = match &args.baseline {
        None => certify::Snapshots::Off,
        Some(dir) => certify::Snapshots::Compare(std::sync::Arc::new(load_baseline(dir)?)),
    };
    if args.update_baseline {
        if let Some(dir) = &args.baseline {
            memcert::report::check_writable(&dir.join("probe.snap.new")).with_context(|| {
                format!(
                    "--update-baseline: cannot write .snap.new files in {}",
                    dir.display()
                )
            })?;
        }
    }
    let config = Config {
        profile: args.profile,
        strict: args.strict,
        expected,
        black_box: args.handler.memory_dir_unknown,
        snapshots: baseline,
    };
    if args.app.app.is_some() {
        return app_cmd(args, config);
    }
    let cases = args.select.cases()?;
    let (_adapter_dir, mut target) = handler_target(&args.handler, args.profile)?;
    let mut pending = pending_writer(&args);
    let code = reported(&args, |reporter| {
        let mut both: Vec<&mut dyn Reporter> = vec![reporter];
        if let Some(p) = pending.as_mut() {
            both.push(p);
        }
        Ok(certify::run(
            &config,
            &cases,
            target.as_mut(),
            &mut Fanout(both),
        ))
    })?;
    pending_done(pending)?;
    Ok(code)
}

/// Load `--baseline DIR`, with advice that fits what is wrong: a missing folder is recorded with
/// `memcert snapshot`; a bad file is fixed or removed (re-recording everything would accept any
/// real regression); a folder without snapshots is refused (a green run would compare nothing).
fn load_baseline(dir: &std::path::Path) -> Result<memcert::baseline::Baseline> {
    if !dir.is_dir() {
        bail!(
            "--baseline {}: no such folder; record one with `memcert snapshot --out {0}` and commit it",
            dir.display()
        );
    }
    let b = memcert::baseline::Baseline::load(dir).with_context(|| {
        format!(
            "--baseline {}: fix or remove that file (re-recording the whole folder would accept any real regression)",
            dir.display()
        )
    })?;
    if b.snapshots.is_empty() {
        bail!(
            "--baseline {}: no .snap file in this folder; record one with `memcert snapshot --out {0}` and commit it",
            dir.display()
        );
    }
    Ok(b)
}

/// With --baseline and --update-baseline: the writer of `.snap.new` files.
fn pending_writer(args: &CertifyArgs) -> Option<memcert::report::snapshots::SnapshotWriter> {
    args.baseline
        .clone()
        .filter(|_| args.update_baseline)
        .map(|dir| {
            memcert::report::snapshots::SnapshotWriter::new(
                dir,
                memcert::report::snapshots::Write::Pending,
            )
        })
}

fn pending_done(pending: Option<memcert::report::snapshots::SnapshotWriter>) -> Result<()> {
    if let Some(p) = pending {
        if let Some((id, e)) = p.errors.first() {
            bail!(
                "cannot write the pending snapshot of {id} ({} in {}): {e}{}",
                memcert::baseline::file_name(id) + ".new",
                p.dir().display(),
                match p.errors.len() {
                    1 => String::new(),
                    n => format!(" ({} more failed the same way)", n - 1),
                }
            );
        }
        if p.written > 0 {
            eprintln!(
                "memcert: wrote {} pending snapshot{} (.snap.new) to {}; review them with `cargo insta review`, or diff each against its .snap and accept it with `mv x.snap.new x.snap`",
                p.written,
                if p.written == 1 { "" } else { "s" },
                p.dir().display()
            );
        }
    }
    Ok(())
}

/// The handler under test, started (an external one that cannot start is an error, exit 2),
/// with the temp folder holding its adapter.
fn handler_target(
    args: &HandlerArgs,
    profile: Profile,
) -> Result<(tempfile::TempDir, Box<dyn Target>)> {
    let timeout = seconds("--timeout", args.timeout)?;
    let adapter_dir = tempfile::Builder::new()
        .prefix("memcert-adapter-")
        .tempdir()?;
    let target: Box<dyn Target> = if let Some(spec) = &args.python {
        let mut cmd = python::adapter_command(adapter_dir.path(), &args.python_exe, spec)?;
        if let Some(init) = &args.python_init {
            match serde_json::from_str::<serde_json::Value>(init) {
                Ok(serde_json::Value::Object(_)) => {}
                _ => bail!("--python-init must be a JSON object, e.g. '{{\"max_bytes\": 1000}}'"),
            }
            cmd.arg("--init").arg(init);
        }
        let name = format!("python adapter, {}", args.python_exe);
        Box::new(started(Stdio::new(cmd, timeout).named(name))?)
    } else if let Some(spec) = &args.node {
        let cmd = node::adapter_command(
            adapter_dir.path(),
            &args.node_exe,
            spec,
            args.node_path.as_deref(),
        )?;
        let name = format!("node adapter, {}", args.node_exe);
        Box::new(started(Stdio::new(cmd, timeout).named(name))?)
    } else if let Some(line) = &args.stdio {
        let words = shell_words::split(line).context("--stdio: cannot split the command line")?;
        let Some((program, rest)) = words.split_first() else {
            bail!("--stdio needs a command");
        };
        let mut cmd = std::process::Command::new(program);
        cmd.args(rest);
        Box::new(started(
            Stdio::new(cmd, timeout).named(format!("stdio: {line}")),
        )?)
    } else {
        Box::new(InProcess::reference(profile))
    };
    Ok((adapter_dir, target))
}

/// `memcert snapshot`: run the cases (or, with --app, the transcripts through the app) and
/// write one snapshot per case.
fn snapshot_cmd(args: SnapshotArgs) -> Result<i32> {
    use memcert::report::snapshots::{SnapshotWriter, Write as SnapWrite};
    let config = Config {
        profile: args.profile,
        black_box: args.handler.memory_dir_unknown,
        snapshots: certify::Snapshots::Record,
        ..Config::default()
    };
    let started = std::time::Instant::now();
    let mut writer = SnapshotWriter::new(args.out.clone(), SnapWrite::Accepted);
    let mut progress = Progress::new();
    let make_out = || {
        std::fs::create_dir_all(&args.out)
            .with_context(|| format!("cannot make --out {}", args.out.display()))
    };
    let app = args.app.app.is_some();
    let summary = if app {
        let (transcripts, known) = app_transcripts(&args.app, &args.select)?;
        let app = memcert_app::appcert::AppConfig {
            known,
            ..args.app.config(config, Vec::new())?
        };
        make_out()?;
        let reporter = &mut Fanout(vec![&mut progress, &mut writer]);
        memcert_app::appcert::run(&app, &transcripts, reporter)?.summary
    } else {
        let cases = args.select.cases()?;
        let (_adapter_dir, mut target) = handler_target(&args.handler, args.profile)?;
        make_out()?;
        let reporter = &mut Fanout(vec![&mut progress, &mut writer]);
        certify::run(&config, &cases, target.as_mut(), reporter)
    };
    if let Some((id, e)) = writer.errors.first() {
        bail!(
            "cannot write the snapshot of {id} in {}: {e}",
            args.out.display()
        );
    }
    let errors = summary.counts.get("ERROR").copied().unwrap_or(0);
    println!(
        "memcert snapshot: {} snapshots of {} written to {} in {:.1} s ({} cases not recorded: race or SKIPPED){}",
        writer.written,
        summary.target,
        args.out.display(),
        started.elapsed().as_secs_f64(),
        writer.not_recorded,
        if errors > 0 {
            format!("; {errors} cases got no answer (ERROR), recorded as `no reply`")
        } else {
            String::new()
        }
    );
    if app && errors > 0 {
        // A handler that answers nothing in time is recorded as such; an app run that ends in
        // ERROR is a broken app, not a baseline.
        eprintln!(
            "memcert: {errors} transcript(s) ended in ERROR: look at the app (`memcert certify --app` shows why) before committing this baseline"
        );
        return Ok(exit::FAILED);
    }
    Ok(exit::PASS)
}

/// The transcripts of `--transcripts` (a folder or one file; default the built-in ones) that
/// --cases/--exclude select, and the case ids of every transcript that exists (for STALE
/// snapshots: with one file, its folder's transcripts exist too).
fn app_transcripts(
    app: &AppArgs,
    select: &SelectArgs,
) -> Result<(Vec<memcert_app::transcript::Transcript>, Vec<String>)> {
    use memcert_app::transcript::Transcript;
    let (transcripts, all) = match app.transcripts.as_deref() {
        Some(file) if file.is_file() => {
            let one = Transcript::load(file)?;
            let folder = file.parent().and_then(|d| Transcript::load_dir(d).ok());
            (vec![one], folder.unwrap_or_default())
        }
        Some(dir) => (Transcript::load_dir(dir)?, Vec::new()),
        None => (Transcript::builtin(), Vec::new()),
    };
    let known = all
        .iter()
        .chain(&transcripts)
        .map(Transcript::case_id)
        .collect();
    let ids: Vec<memcert::suite::Case> = transcripts.iter().map(Transcript::to_case).collect();
    let keep: Vec<String> = certify::select(ids, &select.cases, &select.exclude)
        .context("bad --cases or --exclude glob")?
        .into_iter()
        .map(|c| c.id)
        .collect();
    let transcripts: Vec<Transcript> = transcripts
        .into_iter()
        .filter(|t| keep.contains(&t.case_id()))
        .collect();
    if transcripts.is_empty() {
        bail!("no transcript matches --cases/--exclude (ids are app/<transcript id>)");
    }
    Ok((transcripts, known))
}

/// `certify --app`: every transcript through the mock, reported like catalog cases.
fn app_cmd(args: CertifyArgs, config: Config) -> Result<i32> {
    use memcert_app::appcert;
    let (transcripts, known) = app_transcripts(&args.app, &args.select)?;
    let app = appcert::AppConfig {
        known,
        ..args.app.config(config, args.inject.clone())?
    };
    let mut wire = Vec::new();
    let mut pending = pending_writer(&args);
    let code = reported(&args, |reporter| {
        let mut both: Vec<&mut dyn Reporter> = vec![reporter];
        if let Some(p) = pending.as_mut() {
            both.push(p);
        }
        let run = appcert::run(&app, &transcripts, &mut Fanout(both))?;
        wire = run.wire;
        Ok(run.summary)
    })?;
    pending_done(pending)?;
    if let Some(path) = &args.wire_log {
        let mut out = String::new();
        for (t, log) in transcripts.iter().zip(&wire) {
            for (n, e) in log.exchanges.iter().enumerate() {
                let mut line = serde_json::to_value(e)?;
                line["case"] = t.case_id().into();
                line["n"] = (n + 1).into();
                out.push_str(&serde_json::to_string(&line)?);
                out.push('\n');
            }
        }
        std::fs::write(path, out)
            .with_context(|| format!("cannot write the wire log {}", path.display()))?;
    }
    Ok(code)
}

/// `mock-api`: one transcript served to an app driven by hand, then graded.
fn mock_api_cmd(args: MockApiArgs) -> Result<i32> {
    use memcert_app::appcert::{self, AppConfig};
    use memcert_app::transcript::Transcript;
    let timeout = seconds("--timeout", args.timeout)?;
    let transcript = Transcript::load(&args.transcript)?;
    let scratch;
    let memory_dir = match &args.memory_dir {
        Some(d) => d.clone(),
        None => {
            if !transcript.setup.is_empty() || !transcript.checks.is_empty() {
                bail!(
                    "{}: this transcript plants files or checks the store afterwards; give your app's store with --memory-dir",
                    args.transcript.display()
                );
            }
            scratch = tempfile::tempdir().context("no scratch folder")?;
            scratch.path().join("run/base/memories")
        }
    };
    let app = AppConfig {
        command: String::new(),
        memory_dir,
        timeout,
        threads: args.threads,
        faults: args.inject.clone(),
        config: Config {
            profile: args.profile,
            strict: args.strict,
            ..Default::default()
        },
        interrupt: Some(interrupt_flag()?),
        known: Vec::new(),
    };
    let mut files: Vec<FileReport> = args
        .report_json
        .iter()
        .map(|p| FileReport::new(p.clone(), json::render_file))
        .collect();
    let mut terminal = Terminal::new(std::io::stdout());
    let mut ready = |url: &str| {
        println!("ANTHROPIC_BASE_URL={url}");
        let _ = std::io::stdout().flush();
        eprintln!(
            "memcert: serving transcript {} at {url}; start your app with ANTHROPIC_BASE_URL set to it and any ANTHROPIC_API_KEY (stops by itself once the final turn is served, or after {}s)",
            transcript.id, args.timeout
        );
    };
    let summary = {
        let mut reporters: Vec<&mut dyn Reporter> =
            files.iter_mut().map(|f| f as &mut dyn Reporter).collect();
        reporters.push(&mut terminal);
        appcert::serve_by_hand(&app, &transcript, &mut ready, &mut Fanout(reporters))?.summary
    };
    finish(&files, &summary)
}

/// `record`: proxy one conversation to the upstream and write it as a transcript.
fn record_cmd(
    upstream: &str,
    out: &std::path::Path,
    id: Option<String>,
    timeout: f64,
) -> Result<i32> {
    use memcert_app::record::{self, Recorder};
    let limit = seconds("--timeout", timeout)?;
    if !(upstream.starts_with("http://") || upstream.starts_with("https://")) {
        bail!("--upstream must be an http:// or https:// base URL, got {upstream:?}");
    }
    let out = record::out_path(out);
    memcert::report::check_writable(&out)
        .with_context(|| format!("cannot write the transcript {}", out.display()))?;
    let id = id.unwrap_or_else(|| record::id_for(&out));
    let stop = interrupt_flag()?;
    let rec =
        Recorder::start(upstream, &out, &id, limit).context("the recording proxy cannot start")?;
    println!("ANTHROPIC_BASE_URL={}", rec.url());
    std::io::stdout().flush()?;
    eprintln!(
        "memcert: recording to {} through {upstream}; start your app with ANTHROPIC_BASE_URL set to the URL above (stops by itself when the conversation ends, or after {timeout}s)",
        out.display()
    );
    let deadline = std::time::Instant::now() + limit;
    while !rec.ended()
        && std::time::Instant::now() < deadline
        && !stop.load(std::sync::atomic::Ordering::Relaxed)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Late retries of the last request still go through.
    std::thread::sleep(Duration::from_millis(500));
    let n = rec.exchanges().len();
    if let Some(e) = rec.write_error() {
        bail!(e);
    }
    if n == 0 {
        eprintln!("memcert: nothing was recorded (no Messages API answer went through)");
        return Ok(exit::FAILED);
    }
    let ended = if rec.ended() {
        "the conversation ended"
    } else if stop.load(std::sync::atomic::Ordering::Relaxed) {
        "interrupted"
    } else {
        "time is up"
    };
    eprintln!(
        "memcert: {ended}; {n} answer(s) recorded in {}",
        out.display()
    );
    Ok(exit::PASS)
}

/// A flag set by SIGINT or SIGTERM, so a run can stop its app and clean up before exiting.
fn interrupt_flag() -> Result<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, std::sync::Arc::clone(&flag))
            .context("cannot install the signal handler")?;
    }
    Ok(flag)
}

/// A time limit flag in seconds, 0.01 to 86,400.
fn seconds(flag: &str, value: f64) -> Result<Duration> {
    if !(0.01..=86_400.0).contains(&value) {
        bail!("{flag} must be between 0.01 and 86400 seconds, got {value}");
    }
    Ok(Duration::from_secs_f64(value))
}

/// Run with every report the command line asks for (progress, the file reports, the terminal
/// report), then the exit code ([`finish`]).
fn reported(
    args: &CertifyArgs,
    run: impl FnOnce(&mut dyn Reporter) -> Result<certify::Summary>,
) -> Result<i32> {
    let mut files = file_reports(args);
    let mut terminal = Terminal::new(std::io::stdout());
    let mut progress = Progress::new();
    let summary = {
        // Files first: they are written even if printing the terminal report is cut short.
        let mut reporters: Vec<&mut dyn Reporter> = vec![&mut progress];
        reporters.extend(files.iter_mut().map(|f| f as &mut dyn Reporter));
        reporters.push(&mut terminal);
        run(&mut Fanout(reporters))?
    };
    finish(&files, &summary)
}

/// The file reports asked for on the command line.
fn file_reports(args: &CertifyArgs) -> Vec<FileReport> {
    [
        (args.report_json.clone(), json::render_file as ReportRender),
        (args.junit.clone(), junit::render),
        (args.markdown.clone(), markdown::render),
        (args.html.clone(), html::render),
    ]
    .into_iter()
    .filter_map(|(path, render)| path.map(|p| FileReport::new(p, render)))
    .collect()
}

/// The exit code of a finished run, after checking that every report was written.
fn finish(files: &[FileReport], summary: &certify::Summary) -> Result<i32> {
    for f in files {
        if let Some(e) = &f.error {
            bail!("cannot write the report {}: {e}", f.path().display());
        }
    }
    Ok(if summary.passed() {
        exit::PASS
    } else {
        exit::FAILED
    })
}

/// Start an external handler now, so one that cannot start at all ends the run with exit 2.
fn started(mut s: Stdio) -> Result<Stdio> {
    if let Err(e) = s.start() {
        let tail = s.stderr_tail();
        let tail = tail.trim();
        // An exit already carries its stderr; other errors get it appended.
        if tail.is_empty() || matches!(e, memcert::target::TargetError::Exited { .. }) {
            return Err(anyhow::Error::new(e).context("the handler cannot be started"));
        }
        return Err(anyhow::Error::new(e).context(format!(
            "the handler cannot be started; its stderr:\n{tail}"
        )));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(a.profile, Profile::PythonSdk);
        assert_eq!(a.select.cases, ["view/*"]);
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
    fn parses_faults_and_the_mock_commands() {
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
        let cli = Cli::try_parse_from(["memcert", "mock-api", "--transcript", "t.json"]).unwrap();
        let Cmd::MockApi(m) = cli.command else {
            panic!()
        };
        assert_eq!((m.timeout, m.memory_dir), (600.0, None));
        let cli = Cli::try_parse_from([
            "memcert",
            "record",
            "--upstream",
            "http://h",
            "--out",
            "o.json",
        ])
        .unwrap();
        assert!(matches!(cli.command, Cmd::Record { timeout, .. } if timeout == 1800.0));
        assert!(Cli::try_parse_from(["memcert", "record", "--out", "o.json"]).is_err());
    }

    #[test]
    fn parses_snapshot_and_baseline_flags() {
        let cli = Cli::try_parse_from([
            "memcert",
            "snapshot",
            "--out",
            "base",
            "--node",
            "m.mjs:makeHandler",
            "--exclude",
            "batch/*",
        ])
        .unwrap();
        let Cmd::Snapshot(a) = cli.command else {
            panic!()
        };
        assert_eq!(a.out, PathBuf::from("base"));
        assert_eq!(a.handler.node.as_deref(), Some("m.mjs:makeHandler"));
        assert_eq!(a.select.exclude, ["batch/*"]);
        assert!(
            Cli::try_parse_from(["memcert", "snapshot"]).is_err(),
            "--out is required"
        );
        assert!(Cli::try_parse_from([
            "memcert", "snapshot", "--out", "b", "--python", "a:B", "--stdio", "x"
        ])
        .is_err());
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
