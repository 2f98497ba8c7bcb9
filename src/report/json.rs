//! `--report-json FILE`: the summary, then one record per case (id, verdict, requirement,
//! source, findings, every input with its reply and the expected reply), keys in stable order.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::certify::{CaseRecord, Event, Reporter, Summary};

/// Collects records and writes the file when the run finishes.
pub struct JsonReport {
    path: PathBuf,
    cases: Vec<CaseRecord>,
    /// The write error, if writing failed (checked by the caller after the run).
    pub error: Option<io::Error>,
}

#[derive(Serialize)]
struct File<'a> {
    memcert: &'static str,
    summary: &'a Summary,
    cases: &'a [CaseRecord],
}

impl JsonReport {
    /// A report that will be written to `path`.
    pub fn new(path: PathBuf) -> Self {
        JsonReport {
            path,
            cases: Vec::new(),
            error: None,
        }
    }
}

/// Render a finished run as pretty JSON.
pub fn render(summary: &Summary, cases: &[CaseRecord]) -> String {
    serde_json::to_string_pretty(&File {
        memcert: env!("CARGO_PKG_VERSION"),
        summary,
        cases,
    })
    .expect("reports serialise")
}

/// Fail when a report could not be written at `path` (its folder missing or read-only), without
/// touching a report already there.
///
/// # Errors
/// The I/O error of creating a temporary file beside `path`.
pub fn check_writable(path: &std::path::Path) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    tempfile::NamedTempFile::new_in(dir).map(drop)
}

/// Write `text` to `path` through a temporary file in the same folder and a rename, so a reader
/// never sees half a report.
fn write_atomic(path: &std::path::Path, text: &str) -> io::Result<()> {
    use std::io::Write as _;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.persist(path).map(drop).map_err(|e| e.error)
}

impl Reporter for JsonReport {
    fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::Started { .. } => self.cases.clear(),
            Event::CaseFinished(r) => self.cases.push((*r).clone()),
            Event::Finished(summary) => {
                if let Err(e) = write_atomic(&self.path, &(render(summary, &self.cases) + "\n")) {
                    self.error = Some(e);
                }
            }
        }
    }
}
