//! `--report-json FILE`: the summary, then one record per case (id, verdict, requirement,
//! source, findings, every input with its reply and the expected reply), keys in stable order.
//! The shape is `docs/report.schema.json`, version [`SCHEMA_VERSION`]: any change to it bumps the
//! version and is listed in `docs/report-schema.md`.

use serde::Serialize;

use crate::certify::{CaseRecord, Summary};

/// The version of the report's shape (`docs/report.schema.json`), its first key.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct File<'a> {
    schema_version: u32,
    memcert: &'static str,
    summary: &'a Summary,
    cases: &'a [CaseRecord],
}

/// Render a finished run as pretty JSON.
pub fn render(summary: &Summary, cases: &[CaseRecord]) -> String {
    serde_json::to_string_pretty(&File {
        schema_version: SCHEMA_VERSION,
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
