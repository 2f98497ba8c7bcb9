//! How a grading run reports and ends (`certify`, `mock-api`): progress on stderr, the file
//! reports, the terminal report on stdout, then the exit code once every report is written.

use anyhow::{bail, Result};

use memcert::certify::{self, Fanout, Reporter};
use memcert::exit;
use memcert::report::{terminal::Terminal, FileReport};

use crate::args::ReportArgs;
use crate::progress::Progress;

/// Run with every report the command line asks for (progress, the file reports, the terminal
/// report), then the exit code ([`finish`]).
pub fn reported(
    reports: &ReportArgs,
    run: impl FnOnce(&mut dyn Reporter) -> Result<certify::Summary>,
) -> Result<i32> {
    let mut files = reports.files();
    let mut terminal = Terminal::new(std::io::stdout()).verbose(reports.verbose);
    let mut progress = Progress::new();
    let summary = {
        // Files first: they are written even if printing the terminal report is cut short.
        let mut reporters: Vec<&mut dyn Reporter> = vec![&mut progress];
        reporters.extend(files.iter_mut().map(|f| f as &mut dyn Reporter));
        reporters.push(&mut terminal);
        let mut fanout = Fanout(reporters);
        // `--fail-on`: every report sees the summary under the gate, and the exit code follows it.
        let mut gated = memcert::report::Gated {
            fail_on: reports.gate(),
            inner: &mut fanout,
        };
        run(&mut gated)?.gated(&reports.gate())
    };
    finish(&files, &summary)
}

/// The exit code of a finished run, after checking that every report was written.
pub fn finish(files: &[FileReport], summary: &certify::Summary) -> Result<i32> {
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
