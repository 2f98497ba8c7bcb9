//! The flag groups several subcommands share, each defined once and flattened where it is used
//! (`#[command(flatten)]`), and what they turn into: the library's plain descriptions (a case
//! [`Selection`], a [`HandlerSpec`], an app run's [`AppConfig`], the file reports), with the
//! library's typed errors worded in terms of these flags.
//!
//! - [`SelectArgs`] (`--level`, `--cases`, `--exclude`, `--replay`): `certify`, `snapshot`,
//!   `cases`;
//! - [`HandlerArgs`] (`--python`, `--node`, `--stdio`, ..., `--jobs`): `certify`, `snapshot`;
//! - [`AppArgs`] (`--app`, `--memory-dir`, `--transcripts`, ...): `certify`, `snapshot`;
//! - [`GradeArgs`] (`--profile`, `--strict`, `--fail-on`): `certify`, `mock-api`;
//! - [`ReportArgs`] (`--report-json`, `--junit`, `--markdown`, `--html`): `certify`;
//! - [`StopArgs`] (`--deadline`): `certify`, `snapshot`.
//! - [`ScratchArgs`] (`--insecure-dirs`): `certify`, `snapshot`, `mock-api`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use memcert::certify::{self, Config};
use memcert::contain::Policy;
use memcert::report::{html, json, junit, markdown, sarif, FileReport};
use memcert::select::{SelectError, Selection};
use memcert::setup::handler::{self, HandlerError, HandlerSpec, Started};
use memcert::stop::Stop;
use memcert::suite::list::Cases;
use memcert::suite::{catalog, Case};
use memcert::text::Profile;
use memcert_app::appcert::AppConfig;
use memcert_app::mockapi::{Fault, Threads};
use memcert_app::transcript::{self, ChooseError, Transcript};

use crate::interrupt;

/// How long the whole run may take (`certify`, `snapshot`); SIGINT and SIGTERM stop it too.
#[derive(clap::Args, Debug, Clone)]
pub struct StopArgs {
    /// Bound the whole run to this many seconds (start-up included): the handler is stopped, the
    /// cases not run (and the one cut short) are ERROR with a `deadline` finding, the reports
    /// are written marked INCOMPLETE, and the exit status is 1.
    #[arg(long, value_name = "SECONDS")]
    pub deadline: Option<f64>,
}

impl StopArgs {
    /// The run's stop: SIGINT and SIGTERM from now on, and the deadline counted from now.
    pub fn stop(&self) -> Result<Stop> {
        let within = self
            .deadline
            .map(|d| seconds("--deadline", d))
            .transpose()?;
        interrupt::stop(within)
    }
}

/// memcert's own scratch folders (`certify`, `snapshot`, `mock-api`).
#[derive(clap::Args, Debug, Clone)]
pub struct ScratchArgs {
    /// Accept folders that fail memcert's ownership checks: a --memory-dir (or a folder above
    /// it, or the temp folder) not owned by you or root, or writable by group or others
    /// without the sticky bit; a run folder (two levels above --memory-dir) that is empty but
    /// not yours or not private. Another user could then swap what the handler is told for a
    /// link; memcert itself still never follows one.
    #[arg(long)]
    pub insecure_dirs: bool,
}

impl ScratchArgs {
    /// Set the process's policy ([`memcert::scratch::set_insecure_dirs`]) before any folder is
    /// made.
    pub fn apply(&self) {
        memcert::scratch::set_insecure_dirs(self.insecure_dirs);
    }
}

/// Which cases run (`certify`, `snapshot`, `cases`).
#[derive(clap::Args, Debug, Clone)]
pub struct SelectArgs {
    /// Which cases: quick (the hand-written catalog and a sample of every payload family,
    /// about 300), standard (about 1,900) or full (every payload in every field, over 21,000).
    #[arg(long, default_value = "standard", value_name = "LEVEL")]
    pub level: catalog::RunLevel,
    /// Only cases whose id matches this glob (repeatable; `*` matches across `/`); with --app,
    /// ids are `app/<transcript id>`.
    #[arg(long = "cases", value_name = "GLOB")]
    pub cases: Vec<String>,
    /// Leave out cases whose id matches this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Also run these transcripts (docs/transcripts.md) as regression cases, after the level's:
    /// a transcript file, or a folder of *.json transcripts taken in file-name order
    /// (repeatable; files in the order given). Case ids are `replay/<transcript id>`, which
    /// --cases/--exclude select too (`--cases 'replay/*'` runs only them). Not with --app,
    /// which takes transcripts with --transcripts.
    #[arg(long, value_name = "PATH")]
    pub replay: Vec<PathBuf>,
}

impl SelectArgs {
    fn selection(&self) -> Selection {
        Selection {
            level: self.level,
            include: self.cases.clone(),
            exclude: self.exclude.clone(),
        }
    }

    /// The level's cases, then those of --replay, that --cases/--exclude keep (each payload
    /// case built when a run takes it, [`Cases`]); none is an error, as is a --replay file that
    /// cannot be loaded.
    pub fn cases(&self) -> Result<Cases> {
        Ok(self.cases_and_known()?.0)
    }

    /// [`SelectArgs::cases`], and the ids of every --replay case, kept or not (they exist, for
    /// `Config::known`).
    pub fn cases_and_known(&self) -> Result<(Cases, Vec<String>)> {
        let replay = self.replay_cases()?;
        let known = replay.iter().map(|c| c.id.clone()).collect();
        let cases = self.selection().cases_and(replay).map_err(|e| {
            select_error(
                e,
                "no case matches --cases/--exclude; `memcert cases` lists the ids",
            )
        })?;
        Ok((cases, known))
    }

    /// The level's cases, then those of --replay, that --cases/--exclude keep, possibly none
    /// (a listing).
    pub fn matching(&self) -> Result<Cases> {
        self.selection()
            .matching_and(self.replay_cases()?)
            .map_err(|e| select_error(e, "no case matches --cases/--exclude"))
    }

    /// The cases of the --replay transcripts (`replay/<id>`), in the order given.
    fn replay_cases(&self) -> Result<Vec<Case>> {
        let transcripts = transcript::load_replay(&self.replay).context("--replay")?;
        Ok(transcripts
            .iter()
            .map(|t| t.to_case_as(transcript::REPLAY_PREFIX))
            .collect())
    }

    /// Refuse --replay in a run of --app (`app`), which takes its transcripts with
    /// --transcripts.
    pub fn check_app(&self, app: bool) -> Result<()> {
        if app && !self.replay.is_empty() {
            bail!("--replay runs transcripts against a handler, not with --app; give an app its transcripts with --transcripts");
        }
        Ok(())
    }
}

/// A selection error in the words of --cases/--exclude; `none` says what matched nothing.
fn select_error(e: SelectError, none: &str) -> anyhow::Error {
    match e {
        SelectError::Glob(e) => anyhow::Error::new(e).context("bad --cases or --exclude glob"),
        SelectError::NoCase => anyhow!("{none}"),
        e => anyhow::Error::new(e),
    }
}

/// How to reach the handler under test (`certify`, `snapshot`).
#[derive(clap::Args, Debug, Clone)]
pub struct HandlerArgs {
    /// A Python handler: `path/to/file.py:ClassName` or `package.module:ClassName`, a subclass of
    /// anthropic's BetaAbstractMemoryTool or BetaAsyncAbstractMemoryTool, built with base_path=;
    /// or `path/to/file.py:make_handler`, a function (sync or async) that takes the base
    /// directory and returns such a handler.
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["stdio", "node"])]
    pub python: Option<String>,
    /// Keyword arguments for the Python handler's constructor or factory, as a JSON object. In
    /// string values `{base}` stands for the case's base folder and `{store}` for its memories
    /// folder (`'{"root": "{store}"}'`, `'{"base_dir": "{base}", "user_id": "alice"}'`); when
    /// any value uses one, `base_path=` is not passed, else it is (and a factory always gets
    /// the base folder first).
    #[arg(long, value_name = "JSON", requires = "python")]
    pub python_init: Option<String>,
    /// Set a module-level attribute before the Python handler is built, at every reset:
    /// `module:ATTR=VALUE` (repeatable), e.g. `my_mod:MEMORY_ROOT={store}`. The module is
    /// imported by name (the handler file's folder is on the path); `{base}` and `{store}` are
    /// replaced; the value is set as a `pathlib.Path` when the attribute holds a path, else as
    /// a string. A constructor without `base_path=` is then built with --python-init alone.
    #[arg(long, value_name = "MODULE:ATTR=VALUE", requires = "python")]
    pub python_set: Vec<String>,
    /// Python interpreter for --python (it must have the `anthropic` package and the
    /// handler's dependencies). Default: `$VIRTUAL_ENV/bin/python` when a virtual environment
    /// is active, else `$CONDA_PREFIX/bin/python` when a conda environment is, else `python3`
    /// on the PATH; never the environment memcert itself was installed into (pipx, `uv tool`).
    #[arg(long, value_name = "EXE")]
    pub python_exe: Option<String>,
    /// A Node handler for the TypeScript SDK: `path/to/module.mjs:ExportName` (a class like
    /// BetaLocalFilesystemMemoryTool, built with its static init(baseDir)) or
    /// `module.mjs:makeHandler` (a factory given the base directory), or a package subpath such as
    /// `@anthropic-ai/sdk/tools/memory/node:BetaLocalFilesystemMemoryTool`.
    #[arg(long, value_name = "SPEC", conflicts_with = "stdio")]
    pub node: Option<String>,
    /// Node interpreter for --node.
    #[arg(long, value_name = "EXE", default_value = "node")]
    pub node_exe: String,
    /// A folder whose node_modules holds @anthropic-ai/sdk, when the handler's folder and the
    /// current folder do not.
    #[arg(long, value_name = "DIR")]
    pub node_path: Option<PathBuf>,
    /// The arguments to build the Node handler with, as JSON, instead of the base folder: an
    /// array is the argument list, any other value the one argument; in strings `{base}` and
    /// `{store}` stand for the case's base and memories folders (`'[{"root": "{store}"}]'`,
    /// `'["{store}", "alice"]'`).
    #[arg(long, value_name = "JSON", requires = "node")]
    pub node_init: Option<String>,
    /// A handler process speaking stdio protocol v1 (docs/protocol.md): program and arguments,
    /// split like a POSIX shell splits words (quotes allowed, no expansion).
    #[arg(long, value_name = "COMMAND")]
    pub stdio: Option<String>,
    /// Time limit in seconds for each call and each reset (the handler built over a fresh
    /// store, before every case) of an external handler, writing the request and reading the
    /// answer; the first start and hello get 60 s.
    #[arg(long, default_value_t = memcert::target::stdio::DEFAULT_TIMEOUT.as_secs_f64(), value_name = "SECONDS")]
    pub timeout: f64,
    /// Read cap on one answer of an external handler, in bytes (default 32 MiB): a longer
    /// answer is cut, its case is FAIL (bug:B17, "unbounded reply"), and the handler is
    /// restarted for the next case.
    #[arg(long, value_name = "BYTES", default_value_t = memcert::target::stdio::DEFAULT_MAX_REPLY_BYTES, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1024..=(1 << 32)))]
    pub max_reply_bytes: usize,
    /// The handler does not keep its files in the memories_dir memcert gives it (a database, a
    /// dict, a folder of its own): plant files through its own `create` commands, SKIP cases
    /// that need links, FIFOs, empty folders or races, and judge state only by its answers.
    #[arg(long)]
    pub memory_dir_unknown: bool,
    /// Rounds of each race case (`race/*`): one leak in any round is UNSAFE, and the finding
    /// says in how many rounds it leaked.
    #[arg(long, value_name = "N", default_value_t = memcert::certify::DEFAULT_RACE_ROUNDS, value_parser = clap::value_parser!(u32).range(1..))]
    pub race_rounds: u32,
    /// Run the handler (or --app) uncontained: as memcert's uid, with memcert's environment and
    /// no restriction (by default it runs in its own user and PID namespaces, unprivileged,
    /// under Landlock, with a scrubbed environment and resource limits; docs/threat-model.md).
    #[arg(long)]
    pub no_contain: bool,
    /// As root, run the handler as root (by default: as nobody, or as uid 0 mapped to nobody
    /// in its user namespace, without capabilities, when nobody cannot read its interpreter).
    #[arg(long)]
    pub keep_root: bool,
    /// Let the contained handler read PATH (a file or folder, repeatable), beyond its
    /// interpreter, code, dependencies and system libraries.
    #[arg(long, value_name = "PATH")]
    pub allow_read: Vec<PathBuf>,
    /// Let the contained handler write PATH (a file or folder, repeatable), beyond its scratch
    /// root. A report path may not be under it.
    #[arg(long, value_name = "PATH")]
    pub allow_write: Vec<PathBuf>,
    /// Pass the environment variable NAME on to the contained handler (repeatable); one whose
    /// name looks secret (KEY, TOKEN, SECRET, PASSWORD, ...) gets a canary value instead, and
    /// that value in a reply is UNSAFE.
    #[arg(long, value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// Run this many handlers at once (default: the number of CPUs, at most 4; at most 64, and
    /// no more than the cases that can run in parallel), each its own
    /// process (or in-process instance) with its own scratch folders, taking cases from one
    /// queue; the same verdicts as with `--jobs 1` for handlers that keep no state from one
    /// case to the next, reported in catalog order. Race cases run
    /// first, alone on one handler. With --memory-dir-unknown (one store that every
    /// process of the handler shares) and with --app, runs are one at a time: the default is 1
    /// and more is refused. Where a handler gets no PID namespace of its own, one handler runs
    /// (a warning says so).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// How each case's sandbox is had: `undo` (the default) keeps one per handler and puts it
    /// back as laid out, `fresh` lays out a new one per case. Undocumented: for tests and
    /// measurements (memcert::certify::Reset).
    #[arg(long, value_name = "HOW", hide = true, default_value = "undo")]
    pub reset: memcert::certify::Reset,
}

/// The most handlers `--jobs` starts by default, whatever the number of CPUs.
pub const MAX_DEFAULT_JOBS: usize = 4;

/// The most handlers `--jobs` may ask for: more is refused (exit 2).
pub const MAX_JOBS: usize = 64;

impl HandlerArgs {
    /// How many handlers run at once (`--jobs`): the flag, else the number of CPUs up to
    /// [`MAX_DEFAULT_JOBS`]; 1 with --memory-dir-unknown and with `app` (--app), where more is
    /// an error, as are 0 and more than [`MAX_JOBS`].
    pub fn jobs(&self, app: bool) -> Result<usize> {
        let one_at_a_time = if app {
            Some("--app runs one app at a time")
        } else if self.memory_dir_unknown {
            Some("with --memory-dir-unknown every handler process would share one store")
        } else {
            None
        };
        match (self.jobs, one_at_a_time) {
            (Some(0), _) => bail!("--jobs must be at least 1"),
            (Some(n), _) if n > MAX_JOBS => bail!("--jobs {n}: at most {MAX_JOBS}"),
            (Some(n), Some(why)) if n > 1 => bail!("--jobs {n}: {why}; use --jobs 1"),
            (_, Some(_)) => Ok(1),
            (Some(n), None) => Ok(n),
            (None, None) => Ok(std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(MAX_DEFAULT_JOBS)),
        }
    }

    /// The interpreter of --python: --python-exe, else [`default_python`] of this process's
    /// environment.
    pub fn python_exe(&self) -> String {
        self.python_exe.clone().unwrap_or_else(|| {
            default_python(|name| std::env::var_os(name).filter(|v| !v.is_empty()))
        })
    }

    /// The handler these flags name: --python, else --node, else --stdio, else the built-in
    /// reference handler answering in `profile`'s wording.
    fn spec(&self, profile: Profile) -> HandlerSpec {
        if let Some(spec) = &self.python {
            HandlerSpec::Python {
                spec: spec.clone(),
                init: self.python_init.clone(),
                set: self.python_set.clone(),
                exe: self.python_exe(),
            }
        } else if let Some(spec) = &self.node {
            HandlerSpec::Node {
                spec: spec.clone(),
                exe: self.node_exe.clone(),
                node_path: self.node_path.clone(),
                init: self.node_init.clone(),
            }
        } else if let Some(line) = &self.stdio {
            HandlerSpec::Stdio {
                command: line.clone(),
            }
        } else {
            HandlerSpec::Reference(profile)
        }
    }

    /// The containment these flags ask for (--no-contain, --keep-root, --allow-read,
    /// --allow-write, --pass-env).
    pub fn policy(&self) -> Policy {
        if self.no_contain {
            return Policy::off();
        }
        Policy {
            keep_root: self.keep_root,
            allow_read: self.allow_read.clone(),
            allow_write: self.allow_write.clone(),
            pass_env: self.pass_env.clone(),
            ..Policy::default()
        }
    }

    /// Refuse an --allow-write path that holds a report path: reports are never writable by
    /// the handler.
    pub fn check_reports(&self, reports: &ReportArgs) -> Result<()> {
        for (what, path, _) in reports.table() {
            let Some(path) = path else { continue };
            if let Some(w) = self.writable_by_handler(path) {
                bail!(
                    "--allow-write {} would let the handler write the {what} {}; reports are never writable by the handler",
                    w.display(),
                    path.display()
                );
            }
        }
        Ok(())
    }

    /// The `--allow-write` folder `path` lies in (its folder resolved, `path` itself need not
    /// exist), if any: a file there can be replaced by the handler, with a link for one.
    pub fn writable_by_handler(&self, path: &Path) -> Option<&PathBuf> {
        let abs = |p: &Path| {
            let p = std::env::current_dir().unwrap_or_default().join(p);
            p.canonicalize().unwrap_or(p)
        };
        let full = match path.parent() {
            Some(dir) => abs(dir).join(path.file_name().unwrap_or_default()),
            None => abs(path),
        };
        self.allow_write.iter().find(|w| full.starts_with(abs(w)))
    }

    /// The handler under test, started (an external one that cannot start is an error, exit 2),
    /// with the temp folder holding its adapter; `stop` ends every wait for it. A containment feature this machine lacks is
    /// one warning line.
    pub fn start(&self, profile: Profile, stop: &Stop) -> Result<Started> {
        let started = self.start_quiet(profile, stop)?;
        let c = started.target.containment();
        if c.enabled && !c.missing.is_empty() {
            crate::reporting::warn(&format!(
                "containment is partial here: {}",
                c.missing.join("; ")
            ));
        }
        Ok(started)
    }

    /// Up to `jobs` handlers ([`HandlerArgs::start`]) for a parallel run
    /// (`certify::run_parallel`): each its own process (or in-process instance) with its own
    /// scratch folders and containment. They start on this thread: a contained handler dies
    /// with the thread that started it (`PR_SET_PDEATHSIG`, `memcert::contain`), and this
    /// thread outlives the run. The helpers' processes are spawned first, then the first
    /// handler is started and each helper greeted in turn, so that their start-up (an
    /// interpreter importing an SDK: some 2-3 s for the Python SDK here) overlaps. The first
    /// error is the error; a partial containment is said once.
    ///
    /// Fewer handlers, each with one warning line: only the first when it runs without a PID
    /// namespace of its own (`memcert::contain::Containment::shares_process_tree`: stopping
    /// one would kill the others); a helper whose containment differs from the first's is shut
    /// down and not used (the report gives the first's containment as every handler's).
    pub fn start_pool(&self, profile: Profile, stop: &Stop, jobs: usize) -> Result<Vec<Started>> {
        // Every helper's process is started before the first is greeted, so that handlers that
        // load slowly (an interpreter importing its SDK) load at the same time; each is then
        // greeted in turn.
        let spawned: Vec<Started> = (1..jobs)
            .map(|_| self.spawn(profile, stop))
            .collect::<Result<_>>()?;
        let first = self.start(profile, stop)?;
        let contained = first.target.containment();
        let mut pool = vec![first];
        if jobs > 1 && contained.shares_process_tree() {
            for mut s in spawned {
                s.target.shutdown();
            }
            crate::reporting::warn(&format!(
                "--jobs {jobs}: running one handler at a time: without a PID namespace per handler memcert cannot tell their processes apart"
            ));
            return Ok(pool);
        }
        let enabled = self.policy().enabled;
        for mut helper in spawned {
            helper.finish_start(enabled)?;
            if let Some(diff) = contained.difference(&helper.target.containment()) {
                crate::reporting::warn(&format!(
                    "--jobs {jobs}: a handler whose containment differs from the first's is not used ({diff})"
                ));
                helper.target.shutdown();
                continue;
            }
            pool.push(helper);
        }
        Ok(pool)
    }

    fn start_quiet(&self, profile: Profile, stop: &Stop) -> Result<Started> {
        let mut started = self.spawn(profile, stop)?;
        started.finish_start(self.policy().enabled)?;
        Ok(started)
    }

    /// The handler's process started ([`handler::spawn_contained`]); hello comes with
    /// [`Started::finish_start`].
    fn spawn(&self, profile: Profile, stop: &Stop) -> Result<Started> {
        let timeout = seconds("--timeout", self.timeout)?;
        handler::spawn_contained(
            &self.spec(profile),
            timeout,
            stop,
            self.max_reply_bytes,
            &self.policy(),
        )
        .map_err(|e| match e {
            HandlerError::PythonInit => {
                anyhow!("--python-init must be a JSON object, e.g. '{{\"root\": \"{{store}}\"}}'")
            }
            HandlerError::PythonSet(bad) => anyhow!(
                "--python-set {bad:?} is not MODULE:ATTR=VALUE, e.g. 'my_mod:MEMORY_ROOT={{store}}'"
            ),
            HandlerError::NodeInit => anyhow!(
                "--node-init must be JSON, e.g. '[{{\"root\": \"{{store}}\"}}]' or '\"{{store}}\"'"
            ),
            HandlerError::Split(e) => {
                anyhow::Error::new(e).context("--stdio: cannot split the command line")
            }
            HandlerError::NoCommand => anyhow!("--stdio needs a command"),
            e => anyhow::Error::new(e),
        })
    }
}

/// A whole app run through the mock Messages API (`certify --app`, `snapshot --app`).
#[derive(clap::Args, Debug, Clone)]
pub struct AppArgs {
    /// A whole app (its SDK tool runner and memory handler), run unmodified once per transcript
    /// with ANTHROPIC_BASE_URL pointing at memcert's mock Messages API: program and arguments,
    /// split like --stdio. It also gets MEMCERT_MEMORY_DIR and MEMCERT_BASE_DIR (see
    /// docs/transcripts.md). Needs --memory-dir.
    #[arg(long, value_name = "COMMAND", conflicts_with_all = ["python", "node", "stdio", "memory_dir_unknown"], requires = "memory_dir")]
    pub app: Option<String>,
    /// With --app: the app's memory store root (what /memories maps to; for the Python SDK's
    /// BetaLocalFilesystemMemoryTool(base_path=B) that is B/memories). The folder two levels
    /// up must be absent, or empty, yours and private (mode 0700): memcert puts its canaries
    /// there, and empties it afterwards (removes what it made). No `..` in it, that folder
    /// must not be a link, and every folder above it must be owned by you or root and not
    /// writable by others unless sticky, like /tmp (see --insecure-dirs).
    #[arg(long, value_name = "DIR", requires = "app")]
    pub memory_dir: Option<PathBuf>,
    /// With --app: a folder of transcripts (*.json, docs/transcripts.md), or one transcript
    /// file; default: the built-in ones.
    #[arg(long, value_name = "DIR", requires = "app")]
    pub transcripts: Option<PathBuf>,
    /// With --app: time limit per transcript, in seconds; the app's process group is killed
    /// after it.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS", requires = "app")]
    pub app_timeout: f64,
    /// With --app: `accept` answers the SDKs' server-side threads (their default), `refuse`
    /// answers them with thread_unsupported_request, so the runner falls back to full history.
    #[arg(
        long,
        default_value = "accept",
        value_name = "accept|refuse",
        requires = "app"
    )]
    pub threads: Threads,
}

impl AppArgs {
    /// The transcripts --transcripts and --cases/--exclude select, and the app run that takes
    /// them, grading with `config` (whose `stop` ends it), injecting `faults`.
    pub fn prepare(
        &self,
        select: &SelectArgs,
        config: Config,
        faults: Vec<Fault>,
    ) -> Result<(Vec<Transcript>, AppConfig)> {
        let chosen =
            transcript::choose(self.transcripts.as_deref(), &select.cases, &select.exclude)
                .map_err(|e| match e {
                    ChooseError::Select(e) => select_error(
                        e,
                        "no transcript matches --cases/--exclude (ids are app/<transcript id>)",
                    ),
                    e => anyhow::Error::new(e),
                })?;
        let app = AppConfig {
            known: chosen.known,
            ..self.config(config, faults)?
        };
        Ok((chosen.transcripts, app))
    }

    /// The app run these flags describe, grading with `config`.
    fn config(&self, config: Config, faults: Vec<Fault>) -> Result<AppConfig> {
        Ok(AppConfig {
            command: self.app.clone().unwrap_or_default(),
            memory_dir: self
                .memory_dir
                .clone()
                .context("--app needs --memory-dir")?,
            timeout: seconds("--app-timeout", self.app_timeout)?,
            threads: self.threads,
            faults,
            config,
            known: Vec::new(),
            contain: memcert::contain::Policy::default(),
        })
    }
}

/// How answers are graded (`certify`, `mock-api`).
#[derive(clap::Args, Debug, Clone)]
pub struct GradeArgs {
    /// Which wording is PASS: docs, python-sdk or typescript-sdk.
    #[arg(long, default_value = "docs", value_name = "PROFILE")]
    pub profile: Profile,
    /// Grade NON-STRICT as FAIL.
    #[arg(long)]
    pub strict: bool,
    /// The verdicts that fail the run (exit 1, NOT CERTIFIED): `unsafe`, `fail`, `error`,
    /// repeatable or a comma list (`--fail-on unsafe,error`). Default: all three. Every report
    /// states the gate used; the other verdicts are still reported.
    #[arg(long, value_name = "VERDICT", value_delimiter = ',')]
    pub fail_on: Vec<FailOn>,
}

impl GradeArgs {
    /// The gate of `--fail-on`, as verdicts; empty for the default gate.
    pub fn gate(&self) -> Vec<memcert::suite::verdict::Verdict> {
        self.fail_on.iter().map(|f| f.verdict()).collect()
    }
}

/// The report files a run also writes (`certify`).
#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// Also write the full results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub report_json: Option<PathBuf>,
    /// Also write JUnit XML to this file (a first suite `causes`, one test case per cause, then
    /// one test case per case id).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write a Markdown summary to this file (e.g. $GITHUB_STEP_SUMMARY).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write an HTML report to this file: one self-contained page (no external resources)
    /// with the table per category, filters by verdict, and every case with its steps and diffs.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write SARIF 2.1.0 to this file, for code scanning: one result per cause (UNSAFE as
    /// `error`, FAIL as `warning`), each pointing at the handler's file (see --sarif-location),
    /// with fingerprints that stay stable across runs. ERROR causes are tool notifications.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// With --sarif: also report NON-STRICT causes, as `note` results.
    #[arg(long, requires = "sarif")]
    pub sarif_non_strict: bool,
    /// With --sarif: the repository file every result points at (default: the handler's file,
    /// from --python, --node, --stdio or --app), relative to $GITHUB_WORKSPACE when set, else
    /// to the current folder.
    #[arg(long, value_name = "FILE", requires = "sarif")]
    pub sarif_location: Option<PathBuf>,
    /// The URI --sarif results point at, resolved before the run ([`crate::anchor::anchor`]).
    #[arg(skip)]
    pub sarif_uri: Option<String>,
    /// In the HTML report, also link each cited rule to a hosted copy of the spec pages:
    /// `URL/docs/spec/PAGE.md?plain=1#LLINE` (an http(s) URL, for example a repository's blob
    /// URL at the tag you run). Without it the report links nothing outside itself; the rules'
    /// text is always embedded.
    #[arg(long, value_name = "URL", requires = "html", value_parser = http_url)]
    pub spec_url: Option<String>,
    /// List every case in the terminal report (UNSAFE, ERROR and FAIL in full, the others one
    /// line each) after the causes; without it the terminal shows the causes and the counts.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

/// A verdict `--fail-on` can name.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    /// UNSAFE: something outside the root touched or disclosed.
    Unsafe,
    /// FAIL: wrong behaviour.
    Fail,
    /// ERROR: no answer.
    Error,
}

impl FailOn {
    /// The verdict it names.
    pub fn verdict(self) -> memcert::suite::verdict::Verdict {
        use memcert::suite::verdict::Verdict;
        match self {
            FailOn::Unsafe => Verdict::Unsafe,
            FailOn::Fail => Verdict::Fail,
            FailOn::Error => Verdict::Error,
        }
    }
}

type ReportRender = fn(&certify::Summary, &[certify::CaseRecord]) -> String;

impl ReportArgs {
    /// Each report: what it is called in errors, the file asked for, and how it is rendered from
    /// the run alone (`None`: it needs options, and [`ReportArgs::files`] builds it).
    fn table(&self) -> [(&'static str, &Option<PathBuf>, Option<ReportRender>); 5] {
        [
            ("JSON report", &self.report_json, Some(json::render_file)),
            ("JUnit report", &self.junit, Some(junit::render)),
            ("Markdown report", &self.markdown, Some(markdown::render)),
            // These two take options besides the run ([`ReportArgs::files`]).
            ("HTML report", &self.html, None),
            ("SARIF report", &self.sarif, None),
        ]
    }

    /// Fail now, not after the run, when a report cannot be written ([`check_outputs`]), with
    /// `others` (the other files the run writes, what they are called in errors) checked
    /// alongside; an earlier report at that path stays until the new one replaces it (written
    /// atomically at the end).
    pub fn check_writable(&self, others: &[(&str, Option<&Path>)]) -> Result<()> {
        let mut all: Vec<(&str, Option<&Path>)> = self
            .table()
            .iter()
            .map(|(what, path, _)| (*what, path.as_deref()))
            .collect();
        all.extend_from_slice(others);
        check_outputs(&all)
    }

    /// The file reports asked for on the command line.
    pub fn files(&self) -> Vec<FileReport> {
        let mut files: Vec<FileReport> = self
            .table()
            .into_iter()
            .filter_map(|(_, path, render)| Some(FileReport::new(path.clone()?, render?)))
            .collect();
        if let Some(path) = &self.html {
            let url = self.spec_url.clone();
            files.push(FileReport::new(path.clone(), move |s, c| {
                html::render_with(s, c, url.as_deref())
            }));
        }
        if let Some(path) = &self.sarif {
            let opts = sarif::Options {
                location: self.sarif_uri.clone().unwrap_or_default(),
                non_strict: self.sarif_non_strict,
            };
            files.push(FileReport::new(path.clone(), move |s, c| {
                sarif::render_with(s, c, &opts)
            }));
        }
        files
    }
}

/// Fail before any work when an output file cannot be written: its folder missing or
/// read-only, the path a folder, or one file named for two outputs (through another spelling or
/// a link too). `outputs`: what each is called in errors, and its path when asked for.
pub fn check_outputs(outputs: &[(&str, Option<&Path>)]) -> Result<()> {
    let mut seen: Vec<(&str, &Path, PathBuf)> = Vec::new();
    for (what, path) in outputs {
        let Some(path) = path else { continue };
        memcert::report::check_writable(path)
            .with_context(|| format!("cannot write the {what} {}", path.display()))?;
        let id = same_file_key(path);
        if let Some((first, p, _)) = seen.iter().find(|(_, _, k)| *k == id) {
            bail!(
                "the {what} {} and the {first} {} are the same file; give each its own",
                path.display(),
                p.display()
            );
        }
        seen.push((what, path, id));
    }
    Ok(())
}

/// What makes two output paths the same file: the real path of its folder and its name (links
/// resolved when the file exists).
fn same_file_key(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_owned());
    match path.file_name() {
        Some(name) => folder.join(name),
        None => folder,
    }
}

/// An `http://` or `https://` URL (`--spec-url`), without whitespace or control characters.
fn http_url(s: &str) -> Result<String, String> {
    let ok = (s.starts_with("https://") || s.starts_with("http://"))
        && !s.chars().any(|c| c.is_whitespace() || c.is_control());
    if ok {
        Ok(s.to_owned())
    } else {
        Err("must be an http:// or https:// URL".into())
    }
}

/// A time limit flag in seconds, 0.01 to 86,400.
pub fn seconds(flag: &str, value: f64) -> Result<Duration> {
    if !(0.01..=86_400.0).contains(&value) {
        bail!("{flag} must be between 0.01 and 86400 seconds, got {value}");
    }
    Ok(Duration::from_secs_f64(value))
}

/// The default Python interpreter, from the environment `var` reads: `$VIRTUAL_ENV/bin/python`,
/// else `$CONDA_PREFIX/bin/python`, else `python3` (looked up on the PATH when started).
pub fn default_python(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> String {
    ["VIRTUAL_ENV", "CONDA_PREFIX"]
        .iter()
        .find_map(|name| var(name))
        .map(|prefix| {
            PathBuf::from(prefix)
                .join("bin/python")
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_else(|| "python3".to_owned())
}

#[cfg(test)]
mod python_tests {
    use super::default_python;

    #[test]
    fn the_active_environment_comes_first() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        assert_eq!(
            default_python(env(&[("VIRTUAL_ENV", "/p/.venv"), ("CONDA_PREFIX", "/c")])),
            "/p/.venv/bin/python"
        );
        assert_eq!(
            default_python(env(&[("CONDA_PREFIX", "/c")])),
            "/c/bin/python"
        );
        assert_eq!(default_python(env(&[])), "python3");
    }
}
