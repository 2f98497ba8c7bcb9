//! Progress on stderr while cases run (`certify`, `snapshot`).
//!
//! On a terminal: an indicatif bar with the count, elapsed time, ETA and the running totals of
//! UNSAFE, FAIL and ERROR; each such case is printed above the bar as it finishes. Elsewhere (CI
//! logs, pipes): one line per UNSAFE, FAIL or ERROR case as it finishes, and a count line every
//! [`EVERY_CASES`] cases or [`EVERY`] of wall time, whichever comes first, so a slow run is
//! never silent and a 20,000-case run does not print 20,000 lines.

use std::io::{IsTerminal, Write as _};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use memcert::certify::{Event, Reporter};
use memcert::suite::verdict::Verdict;

/// Off a terminal, a count line at least this often (wall time).
pub const EVERY: Duration = Duration::from_secs(10);
/// Off a terminal, a count line at least every this many cases.
pub const EVERY_CASES: usize = 500;

/// The progress reporter. See the module docs.
pub struct Progress {
    bar: Option<ProgressBar>,
    /// Where count lines go without a bar (stderr).
    lines: Box<dyn std::io::Write + Send>,
    total: usize,
    done: usize,
    bad: [usize; 3],
    last: Instant,
}

impl Progress {
    /// A bar when stderr is a terminal, count lines otherwise.
    pub fn new() -> Self {
        Progress::with_bar(std::io::stderr().is_terminal())
    }

    /// Force the bar on or off.
    pub fn with_bar(bar: bool) -> Self {
        Progress {
            bar: bar.then(|| ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())),
            lines: Box::new(std::io::stderr()),
            total: 0,
            done: 0,
            bad: [0; 3],
            last: Instant::now(),
        }
    }

    fn totals(&self) -> String {
        format!(
            "{} UNSAFE, {} FAIL, {} ERROR",
            self.bad[0], self.bad[1], self.bad[2]
        )
    }

    /// No bar; the lines go to `out` instead of stderr (the tests read them).
    #[cfg(test)]
    fn lines_to(out: impl std::io::Write + Send + 'static) -> Self {
        Progress {
            lines: Box::new(out),
            ..Progress::with_bar(false)
        }
    }
}

impl Default for Progress {
    fn default() -> Self {
        Progress::new()
    }
}

impl Reporter for Progress {
    fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::Started { total, .. } => {
                self.total = *total;
                self.last = Instant::now();
                if let Some(bar) = &self.bar {
                    bar.set_length(*total as u64);
                    bar.set_style(
                        ProgressStyle::with_template(
                            "{bar:30} {pos:>5}/{len} cases  {elapsed_precise} (eta {eta})  {msg}",
                        )
                        .expect("a valid template"),
                    );
                    bar.set_message(self.totals());
                }
            }
            Event::CaseFinished(r) => {
                self.done += 1;
                let slot = match r.verdict {
                    Verdict::Unsafe => Some(0),
                    Verdict::Fail => Some(1),
                    Verdict::Error => Some(2),
                    _ => None,
                };
                let line = slot.map(|i| {
                    self.bad[i] += 1;
                    let excused = if r.expected_failure.is_some() {
                        " (expected)"
                    } else {
                        ""
                    };
                    format!(
                        "[{:>5}/{}] {:<10} {}{excused}",
                        self.done,
                        self.total,
                        r.verdict,
                        memcert::report::escape::terminal(&r.id)
                    )
                });
                match &self.bar {
                    Some(bar) => {
                        if let Some(line) = line {
                            bar.println(line);
                        }
                        bar.set_message(self.totals());
                        bar.inc(1);
                    }
                    None => {
                        if let Some(line) = line {
                            let _ = writeln!(self.lines, "{line}");
                        }
                        if self.done.is_multiple_of(EVERY_CASES) || self.last.elapsed() >= EVERY {
                            let totals = self.totals();
                            let _ = writeln!(
                                self.lines,
                                "[{:>5}/{}] {} cases done ({totals})",
                                self.done, self.total, self.done
                            );
                            self.last = Instant::now();
                        }
                    }
                }
            }
            Event::Finished(_) => {
                if let Some(bar) = &self.bar {
                    bar.finish_and_clear();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {

    /// A case record for these tests (as `memcert::report`'s own test helper builds one).
    fn test_record(id: &str, verdict: Verdict) -> memcert::certify::CaseRecord {
        memcert::certify::CaseRecord {
            id: id.into(),
            category: id.split('/').next().unwrap_or("").into(),
            requirement: "R MUST hold.".into(),
            source: vec!["bug:B01".into()],
            defined: String::new(),
            level: memcert::suite::Level::Must,
            verdict,
            expected_failure: None,
            findings: vec![],
            steps: vec![],
            duration_ms: 1,
            snapshot: None,
            baseline: None,
            timed_out: false,
        }
    }
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn off_a_terminal_bad_cases_and_a_count_line_every_500_cases() {
        let out = Shared::default();
        let mut p = Progress::lines_to(out.clone());
        p.event(&Event::Started {
            target: "t",
            profile: memcert::text::Profile::Docs,
            total: 1_001,
        });
        for i in 1..=1_001 {
            let verdict = match i {
                3 => Verdict::Unsafe,
                700 => Verdict::Fail,
                _ => Verdict::Pass,
            };
            let mut r = test_record(&format!("view/c{i}"), verdict);
            if i == 700 {
                r.expected_failure = Some("known".into());
            }
            p.event(&Event::CaseFinished(&r));
        }
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "[    3/1001] UNSAFE     view/c3\n\
             [  500/1001] 500 cases done (1 UNSAFE, 0 FAIL, 0 ERROR)\n\
             [  700/1001] FAIL       view/c700 (expected)\n\
             [ 1000/1001] 1000 cases done (1 UNSAFE, 1 FAIL, 0 ERROR)\n"
        );
    }
}
