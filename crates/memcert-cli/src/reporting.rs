//! How a grading run reports and ends (`certify`, `mock-api`): progress on stderr, the file
//! reports, the terminal report on stdout, all under the `--fail-on` gate, then the exit code
//! once every report is written (130 for a run a signal stopped). Also the lines memcert
//! itself prints ([`say`], [`warn`], [`out`]): none of them panics on a closed stream.

use std::io::Write as _;

use anyhow::{bail, Result};

use memcert::certify::{self, Completion, Fanout, Reporter};
use memcert::exit;
use memcert::report::{terminal::Terminal, FileReport, Finish, Spooled};
use memcert::suite::verdict::Verdict;

use crate::args::{GradeArgs, ReportArgs};
use crate::progress::Progress;

/// Run with every report the command line asks for (progress, the file reports, the terminal
/// report), under the gate of `grade` (`--fail-on`), then the exit code ([`finish`]).
pub fn reported(
    reports: &ReportArgs,
    grade: &GradeArgs,
    run: impl FnOnce(&mut dyn Reporter) -> Result<certify::Summary>,
) -> Result<i32> {
    let mut files = reports.files();
    let mut terminal = Terminal::new(std::io::stdout()).verbose(reports.verbose);
    let mut progress = Progress::new();
    let (summary, spool_error) = {
        // Files first: they are written even if printing the terminal report is cut short.
        // One spool keeps the finished cases for all of them (none without a file report);
        // the terminal report keeps only what it prints as the cases come.
        let finished: Vec<&mut dyn Finish> =
            files.iter_mut().map(|f| f as &mut dyn Finish).collect();
        let mut spooled = Spooled::new(finished);
        let reporters: Vec<&mut dyn Reporter> = vec![&mut progress, &mut spooled, &mut terminal];
        let summary = gated(&grade.gate(), &mut Fanout(reporters), run)?;
        (summary, spooled.error)
    };
    if let Some(e) = spool_error {
        bail!("cannot keep the finished cases for the reports in a temporary file: {e}");
    }
    finish(&files, &summary)
}

/// `run` with its events sent to `reporter` under the gate `fail_on` (`--fail-on`; empty: the
/// default), and its summary under the same gate: every report states the gate the exit code
/// follows.
pub fn gated(
    fail_on: &[Verdict],
    reporter: &mut dyn Reporter,
    run: impl FnOnce(&mut dyn Reporter) -> Result<certify::Summary>,
) -> Result<certify::Summary> {
    let mut gated = memcert::report::Gated {
        fail_on: fail_on.to_vec(),
        inner: reporter,
    };
    Ok(run(&mut gated)?.gated(fail_on))
}

/// One warning line on stderr: `memcert: warning: TEXT`.
pub fn warn(text: &str) {
    say(&format!("warning: {text}"));
}

/// One line on stderr, `memcert: TEXT`; nothing when stderr is closed.
pub fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "memcert: {text}");
}

/// `text` and a newline on stdout, flushed; false when stdout is closed (`| head`, `| true`),
/// which ends memcert quietly: a listing stops, a command whose first line is read by another
/// program (`mock-api`, `record`) stops as if interrupted.
pub fn out(text: &str) -> bool {
    let mut o = std::io::stdout().lock();
    writeln!(o, "{text}").and_then(|()| o.flush()).is_ok()
}

/// The exit code of a finished run, after checking that every report was written: 130 when a
/// signal stopped it, else 0 when it passed and 1 when not (a run its deadline cut short never
/// passes).
pub fn finish(files: &[FileReport], summary: &certify::Summary) -> Result<i32> {
    for f in files {
        if let Some(e) = &f.error {
            bail!("cannot write the report {}: {e}", f.path().display());
        }
    }
    if summary.completion == Completion::Interrupted {
        say("interrupted: the handler was stopped, its scratch folders removed and the reports so far written");
        return Ok(exit::INTERRUPTED);
    }
    Ok(if summary.passed() {
        exit::PASS
    } else {
        exit::FAILED
    })
}
