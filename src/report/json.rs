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

impl Reporter for JsonReport {
    fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::Started { .. } => self.cases.clear(),
            Event::CaseFinished(r) => self.cases.push((*r).clone()),
            Event::Finished(summary) => {
                if let Err(e) = std::fs::write(&self.path, render(summary, &self.cases) + "\n") {
                    self.error = Some(e);
                }
            }
        }
    }
}
