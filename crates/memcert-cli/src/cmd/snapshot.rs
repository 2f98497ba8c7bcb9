//! `memcert snapshot`: run the cases against a handler (or, with --app, the transcripts through
//! the app) and write one snapshot per case, the baseline `certify --baseline` compares with.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use memcert::certify::{self, Config, Fanout, Summary};
use memcert::exit;
use memcert::report::snapshots::{SnapshotWriter, Write as SnapWrite};
use memcert::text::Profile;
use memcert_app::appcert;

use crate::args::{AppArgs, HandlerArgs, ScratchArgs, SelectArgs, StopArgs};
use crate::progress::Progress;
use crate::reporting::say;

/// The flags of `memcert snapshot`.
#[derive(clap::Args, Debug)]
pub struct SnapshotArgs {
    /// The folder to write the snapshots to (made if missing). Existing snapshots of the cases
    /// run are replaced, others are left alone; a case's pending `.snap.new` is removed.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub handler: HandlerArgs,
    #[command(flatten)]
    pub app: AppArgs,
    /// Which wording the built-in reference handler uses (docs, python-sdk or typescript-sdk);
    /// external handlers answer in their own.
    #[arg(long, default_value = "docs", value_name = "PROFILE")]
    pub profile: Profile,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub stop: StopArgs,
    #[command(flatten)]
    pub scratch: ScratchArgs,
}

/// `memcert snapshot`: run the cases (or, with --app, the transcripts through the app) and
/// write one snapshot per case.
pub fn run(args: SnapshotArgs) -> Result<i32> {
    args.select.check_app(args.app.app.is_some())?;
    args.scratch.apply();
    let jobs = args.handler.jobs(args.app.app.is_some())?;
    let config = Config {
        profile: args.profile,
        black_box: args.handler.memory_dir_unknown,
        snapshots: certify::Snapshots::Record,
        // Race cases are never recorded: one round is enough to run them.
        race_rounds: Some(1),
        stop: args.stop.stop()?,
        reset: args.handler.reset,
        ..Config::default()
    };
    let started = Instant::now();
    let mut writer = SnapshotWriter::new(args.out.clone(), SnapWrite::Accepted);
    let mut progress = Progress::new();
    let app = args.app.app.is_some();
    let summary = if app {
        let (transcripts, app_config) = args.app.prepare(&args.select, config, Vec::new())?;
        make_out(&args.out)?;
        let reporter = &mut Fanout(vec![&mut progress, &mut writer]);
        appcert::run(&app_config, &transcripts, reporter)?.summary
    } else {
        let cases = args.select.cases()?;
        let jobs = super::certify::pool_size(jobs, &cases);
        let mut pool = args.handler.start_pool(args.profile, &config.stop, jobs)?;
        make_out(&args.out)?;
        let reporter = &mut Fanout(vec![&mut progress, &mut writer]);
        super::certify::run_pool(&config, &cases, &mut pool, reporter)?
    };
    if let Some((id, e)) = writer.errors.first() {
        bail!(
            "cannot write the snapshot of {id} in {}: {e}",
            args.out.display()
        );
    }
    let errors = summary.counts.get("ERROR").copied().unwrap_or(0);
    print_written(&args.out, &writer, &summary, started, errors);
    warn_other_catalogs(&args.out);
    match summary.completion {
        certify::Completion::Interrupted => {
            say("interrupted: the snapshots of the cases that finished are written; the others are not");
            return Ok(exit::INTERRUPTED);
        }
        certify::Completion::Incomplete => {
            say("the --deadline passed: the cases it cut short or never ran have no snapshot; this is not a whole baseline");
            return Ok(exit::FAILED);
        }
        certify::Completion::Complete => {}
    }
    if app && errors > 0 {
        // A handler that answers nothing in time is recorded as such; an app run that ends in
        // ERROR is a broken app, not a baseline.
        say(&format!(
            "{errors} transcript(s) ended in ERROR: look at the app (`memcert certify --app` shows why) before committing this baseline"
        ));
        return Ok(exit::FAILED);
    }
    Ok(exit::PASS)
}

/// Warn once when `--out` still holds snapshots recorded with another catalog version (of cases
/// this run did not replace): the folder then mixes catalogs. A folder that does not load is
/// left to `certify --baseline` to refuse.
fn warn_other_catalogs(out: &Path) {
    let Ok(b) = memcert::baseline::Baseline::load(out) else {
        return;
    };
    let made = format!(
        "--out {} still holds snapshots this run did not replace, recorded with",
        out.display()
    );
    if let Some(note) =
        memcert::report::baseline_other_catalog(&made, &b.other_catalogs(), b.snapshots.len())
    {
        crate::reporting::warn(&note);
    }
}

/// Make `--out` when missing.
fn make_out(out: &Path) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot make --out {}", out.display()))
}

/// The closing line: how many snapshots were written where, and what was not recorded.
fn print_written(
    out: &Path,
    writer: &SnapshotWriter,
    summary: &Summary,
    started: Instant,
    errors: usize,
) {
    crate::reporting::out(&format!(
        "memcert snapshot: {} snapshots of {} written to {} in {:.1} s ({} cases not recorded: race, huge file or SKIPPED){}",
        writer.written,
        memcert::report::escape::terminal(&summary.target),
        out.display(),
        started.elapsed().as_secs_f64(),
        writer.not_recorded,
        if errors > 0 {
            format!("; {errors} cases got no answer (ERROR), recorded as `no reply`")
        } else {
            String::new()
        }
    ));
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use clap::Parser;

    use crate::{Cli, Cmd};

    #[test]
    fn parses_snapshot_flags() {
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
    }
}
