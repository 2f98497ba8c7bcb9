//! `memcert`: arguments in, exit code out. `main` parses the command line and dispatches to one
//! module per subcommand (`cmd/`); the flag groups they share are defined once (`args`); all
//! behaviour lives in the library crates.

use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};

use memcert::exit;

mod anchor;
mod args;
mod cmd;
mod config;
mod interrupt;
mod progress;
mod reporting;

/// Certify Claude memory-tool handlers for path-traversal safety and spec conformance.
#[derive(Parser, Debug)]
#[command(name = "memcert", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
    /// Read flags from this TOML file (default: memcert.toml in the current folder, when there
    /// is one): a table per subcommand (`[certify]`) whose keys are its long flags
    /// (`python = "h.py:H"`, `exclude = ["race/*"]`, `strict = true`). The command line wins.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Read no config file, not even memcert.toml in the current folder.
    #[arg(long, global = true, conflicts_with = "config")]
    no_config: bool,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run the case catalog against a handler and grade every case; or, with --app, run a whole
    /// app against a mock Messages API once per recorded transcript and grade what its memory
    /// handler sent back.
    ///
    /// Without --python, --node, --stdio or --app, certifies memcert's built-in reference handler.
    /// Exit status: 0 certified, 1 not certified (or cut short by --deadline), 2 usage error or
    /// a handler that cannot start, 130 stopped by SIGINT or SIGTERM (the reports so far are
    /// written, marked INTERRUPTED).
    Certify(Box<cmd::certify::CertifyArgs>),
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
    Snapshot(Box<cmd::snapshot::SnapshotArgs>),
    /// Print the traversal payload corpus. `{DOWN:d}` in a payload stands for the way back down
    /// from the d-th ancestor of the store root to the sandbox, filled in per case. The corpus
    /// feeds the reference handler's tests, the fuzz seeds and the `payload/...` cases of
    /// `certify` (a share of them per --level).
    Payloads(cmd::payloads::PayloadsArgs),
    /// Serve one transcript on the mock Messages API for an app you start yourself, then grade
    /// what its memory handler sent back (docs/transcripts.md).
    ///
    /// Prints `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/s/0` on its first line; point your app
    /// at it (any dummy ANTHROPIC_API_KEY works). Stops by itself once the final turn is served,
    /// or after --timeout, and prints the verdict. Exit status as for certify, --fail-on
    /// included.
    MockApi(Box<cmd::mock_api::MockApiArgs>),
    /// Record a real conversation as a transcript: a pass-through proxy to the Messages API
    /// that writes what the model asked and what the app's memory handler answered.
    ///
    /// Prints `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT` on its first line; point your app at
    /// it. Stops by itself once an answer ends the conversation (a stop_reason other than
    /// tool_use), or after --timeout. Credentials are never written. Replay the file with
    /// `certify --app ... --transcripts DIR` (docs/transcripts.md).
    Record(cmd::record::RecordArgs),
    /// List the cases of a level (after --cases/--exclude): one id per line, or with
    /// `--format jsonl` one JSON object per case (id, level, requirement, source, defined).
    Cases(cmd::cases::CasesArgs),
    /// Print what a case id, a spec id (`spec:2.1/D3`, `wire:5`, `rule:8`) or a bug id
    /// (`bug:B10`) means: the rule's text, compiled into memcert, so it works offline.
    ///
    /// For a case: its requirement, level, where it is defined and the text of every rule it
    /// cites. Exit status: 0, or 2 when the id names nothing.
    Explain(cmd::explain::ExplainArgs),
    /// Fuzz a handler: random command sequences (chains over planted files, links and
    /// hazards, spellings from the traversal grammar) judged against the documented model as
    /// `certify` grades a case. Each flaw is shrunk to a minimal sequence and printed with the
    /// model's and the handler's replies side by side; --out saves it for `certify --replay`.
    ///
    /// Takes the same handler flags as certify. Exit status: 0 nothing found, 1 a finding,
    /// 2 usage error or a handler that cannot start, 130 stopped by SIGINT or SIGTERM.
    Fuzz(Box<cmd::fuzz::FuzzArgs>),
}

fn main() -> ExitCode {
    let argv = match config::with_config(std::env::args_os().collect(), &Cli::command()) {
        Ok(argv) => argv,
        Err(e) => return fail(&e),
    };
    let cli = Cli::parse_from(argv);
    match run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => fail(&e),
    }
}

/// Say `e` on stderr and give exit 2. The error may quote a handler (a refused hello, its
/// stderr): escaped, so no byte of it acts on the terminal; the newlines of a quoted stderr
/// are kept.
fn fail(e: &anyhow::Error) -> ExitCode {
    reporting::say(&format!(
        "error: {}",
        memcert::report::escape::terminal_lines(&format!("{e:#}"))
    ));
    ExitCode::from(exit::ERROR as u8)
}

/// The subcommand's exit code (130 when a signal stopped the run), or the error that ends the
/// run with exit 2.
fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Cmd::Certify(args) => cmd::certify::run(*args),
        Cmd::Snapshot(args) => cmd::snapshot::run(*args),
        Cmd::Payloads(args) => cmd::payloads::run(args),
        Cmd::MockApi(args) => cmd::mock_api::run(*args),
        Cmd::Record(args) => cmd::record::run(args),
        Cmd::Cases(args) => cmd::cases::run(args),
        Cmd::Explain(args) => cmd::explain::run(args),
        Cmd::Fuzz(args) => cmd::fuzz::run(*args),
    }
}
