//! `--report-json FILE`: the summary, then one record per case (id, verdict, requirement,
//! source, findings, every input with its reply and the expected reply), keys in stable order.

use serde::Serialize;

use crate::certify::{CaseRecord, Summary};

#[derive(Serialize)]
struct File<'a> {
    memcert: &'static str,
    summary: &'a Summary,
    cases: &'a [CaseRecord],
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

/// [`render`] with a final newline, the content of the `--report-json` file.
pub fn render_file(summary: &Summary, cases: &[CaseRecord]) -> String {
    render(summary, cases) + "\n"
}
