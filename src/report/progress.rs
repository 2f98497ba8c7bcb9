//! Progress on stderr while cases run (built with the `cli` feature).
//!
//! On a terminal: an indicatif bar with the count, elapsed time, ETA and the running totals of
//! UNSAFE, FAIL and ERROR; each such case is printed above the bar as it finishes. Elsewhere (CI
//! logs, pipes): one line per UNSAFE, FAIL or ERROR case as it finishes, and a count line every
//! [`EVERY_CASES`] cases or [`EVERY`] of wall time, whichever comes first, so a slow run is
//! never silent and a 20,000-case run does not print 20,000 lines.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::certify::{Event, Reporter};
use crate::suite::verdict::Verdict;

/// Off a terminal, a count line at least this often (wall time).
pub const EVERY: Duration = Duration::from_secs(10);
/// Off a terminal, a count line at least every this many cases.
pub const EVERY_CASES: usize = 500;

/// The progress reporter. See the module docs.
pub struct Progress {
    bar: Option<ProgressBar>,
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
                        self.done, self.total, r.verdict, r.id
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
                            eprintln!("{line}");
                        }
                        if self.done.is_multiple_of(EVERY_CASES) || self.last.elapsed() >= EVERY {
                            eprintln!(
                                "[{:>5}/{}] {} cases done ({})",
                                self.done,
                                self.total,
                                self.done,
                                self.totals()
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
