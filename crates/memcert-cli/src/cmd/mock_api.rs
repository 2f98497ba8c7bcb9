//! `memcert mock-api`: serve one transcript on the mock Messages API for an app started by
//! hand, then grade what its memory handler sent back; exit status as for `certify`, under the
//! same `--fail-on` gate (130 when SIGINT, SIGTERM or a closed stdout stopped it).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use memcert::certify::{Config, Fanout, Reporter};
use memcert::report::{json, terminal::Terminal, FileReport};
use memcert_app::appcert::{self, AppConfig};
use memcert_app::mockapi::{Fault, Threads};
use memcert_app::transcript::Transcript;

use crate::args::{check_outputs, seconds, GradeArgs, ScratchArgs};
use crate::interrupt;
use crate::reporting::{finish, gated, out, say};

/// The flags of `memcert mock-api`.
#[derive(clap::Args, Debug)]
pub struct MockApiArgs {
    /// The transcript to serve (`memcert-transcript/1`, docs/transcripts.md).
    #[arg(long, value_name = "FILE")]
    pub transcript: PathBuf,
    /// Your app's memory store root (what /memories maps to), so memcert can plant the
    /// transcript's setup and canaries around it and check the store afterwards. The folder two
    /// levels up must be absent, or empty, yours and private (mode 0700), below folders only
    /// you or root can change (see --insecure-dirs). Without it, a scratch folder stands in: only the
    /// replies are graded, and a transcript with setup or checks is refused.
    #[arg(long, value_name = "DIR")]
    pub memory_dir: Option<PathBuf>,
    /// Give up (ERROR) when the final turn is not served within this many seconds.
    #[arg(long, default_value_t = 600.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// `accept` or `refuse` the SDKs' server-side threads, as for certify --app.
    #[arg(long, default_value = "accept", value_name = "accept|refuse")]
    pub threads: Threads,
    /// Inject a fault, as for certify --app (repeatable).
    #[arg(long = "inject", value_name = "FAULT")]
    pub inject: Vec<Fault>,
    #[command(flatten)]
    pub grade: GradeArgs,
    /// Also write the JSON report here.
    #[arg(long, value_name = "FILE")]
    pub report_json: Option<PathBuf>,
    #[command(flatten)]
    pub scratch: ScratchArgs,
}

/// `mock-api`: one transcript served to an app driven by hand, then graded.
pub fn run(args: MockApiArgs) -> Result<i32> {
    args.scratch.apply();
    let timeout = seconds("--timeout", args.timeout)?;
    check_outputs(&[("JSON report", args.report_json.as_deref())])?;
    let transcript = Transcript::load(&args.transcript)?;
    let stop = interrupt::stop(None)?;
    let (memory_dir, _scratch) = memory_dir(&args, &transcript)?;
    let app = AppConfig {
        command: String::new(),
        memory_dir,
        timeout,
        threads: args.threads,
        faults: args.inject.clone(),
        config: Config {
            profile: args.grade.profile,
            strict: args.grade.strict,
            stop: stop.clone(),
            ..Default::default()
        },
        known: Vec::new(),
        // The app is the user's, run by the user: memcert does not start it.
        contain: memcert::contain::Policy::off(),
    };
    let mut files: Vec<FileReport> = args
        .report_json
        .iter()
        .map(|p| FileReport::new(p.clone(), json::render_file))
        .collect();
    let mut terminal = Terminal::new(std::io::stdout());
    let mut ready = |url: &str| {
        // No one reads the URL from a closed stdout (`mock-api | true`): stop as if interrupted.
        if !out(&format!("ANTHROPIC_BASE_URL={url}")) {
            stop.interrupt();
            return;
        }
        say(&format!(
            "serving transcript {} at {url}; start your app with ANTHROPIC_BASE_URL set to it and any ANTHROPIC_API_KEY (stops by itself once the final turn is served, or after {}s)",
            transcript.id, args.timeout
        ));
    };
    let summary = {
        let mut reporters: Vec<&mut dyn Reporter> =
            files.iter_mut().map(|f| f as &mut dyn Reporter).collect();
        reporters.push(&mut terminal);
        gated(&args.grade.gate(), &mut Fanout(reporters), |reporter| {
            Ok(appcert::serve_by_hand(&app, &transcript, &mut ready, reporter)?.summary)
        })?
    };
    finish(&files, &summary)
}

/// The app's store root: --memory-dir, or a scratch folder (kept alive by the second value)
/// when the transcript neither plants files nor checks the store.
fn memory_dir(
    args: &MockApiArgs,
    transcript: &Transcript,
) -> Result<(PathBuf, Option<memcert::scratch::Scratch>)> {
    if let Some(d) = &args.memory_dir {
        return Ok((d.clone(), None));
    }
    if !transcript.setup.is_empty() || !transcript.checks.is_empty() {
        bail!(
            "{}: this transcript plants files or checks the store afterwards; give your app's store with --memory-dir",
            args.transcript.display()
        );
    }
    let scratch = memcert::scratch::Scratch::new("memcert-mock-").context("no scratch folder")?;
    Ok((scratch.path().join("run/base/memories"), Some(scratch)))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::{Cli, Cmd};

    #[test]
    fn parses_mock_api_flags() {
        let cli = Cli::try_parse_from(["memcert", "mock-api", "--transcript", "t.json"]).unwrap();
        let Cmd::MockApi(m) = cli.command else {
            panic!()
        };
        assert_eq!((m.timeout, m.memory_dir), (600.0, None));
        assert!(m.grade.fail_on.is_empty());
        let cli = Cli::try_parse_from([
            "memcert",
            "mock-api",
            "--transcript",
            "t.json",
            "--fail-on",
            "unsafe,error",
        ])
        .unwrap();
        let Cmd::MockApi(m) = cli.command else {
            panic!()
        };
        assert_eq!(
            m.grade.gate(),
            [
                memcert::suite::verdict::Verdict::Unsafe,
                memcert::suite::verdict::Verdict::Error
            ]
        );
        assert!(Cli::try_parse_from([
            "memcert",
            "mock-api",
            "--transcript",
            "t.json",
            "--fail-on",
            "skipped"
        ])
        .is_err());
    }
}
