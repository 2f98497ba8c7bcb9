//! `--report-json FILE`: memcert's and the catalog's versions, the summary (with the gate,
//! `fail_on`), the causes ([`super::causes`], worst first) and their counts per verdict, then
//! one record per case (id, verdict, requirement,
//! source, findings, every input with its reply and the expected reply), keys in stable order.
//! The shape is `docs/report.schema.json`, version [`SCHEMA_VERSION`]: any change to it bumps the
//! version and is listed in `docs/report-schema.md`.

use serde::Serialize;

use crate::certify::{CaseRecord, Summary};

/// The version of the report's shape (`docs/report.schema.json`), its first key.
pub const SCHEMA_VERSION: u32 = 6;

#[derive(Serialize)]
struct File<'a> {
    schema_version: u32,
    memcert: &'static str,
    catalog: &'static str,
    summary: &'a Summary,
    cause_counts: std::collections::BTreeMap<String, usize>,
    causes: Vec<super::causes::Cause>,
    cases: &'a [CaseRecord],
}

/// Render a finished run as pretty JSON.
/// Hidden characters ([`super::escape::json`]) are written as `\u` escapes: the same values,
/// nothing that reorders or hides text where the file is shown.
pub fn render(summary: &Summary, cases: &[CaseRecord]) -> String {
    let causes = super::causes::causes(cases);
    let text = serde_json::to_string_pretty(&File {
        schema_version: SCHEMA_VERSION,
        memcert: env!("CARGO_PKG_VERSION"),
        catalog: crate::suite::CATALOG_VERSION,
        summary,
        cause_counts: crate::suite::verdict::Verdict::ALL
            .iter()
            .map(|v| (v.as_str().to_owned(), 0))
            .chain(
                super::causes::counts(&causes)
                    .into_iter()
                    .map(|(v, n)| (v.as_str().to_owned(), n)),
            )
            .filter(|(v, _)| v != "PASS")
            .fold(
                Default::default(),
                |mut m: std::collections::BTreeMap<String, usize>, (v, n)| {
                    *m.entry(v).or_default() += n;
                    m
                },
            ),
        causes,
        cases,
    })
    .expect("reports serialise");
    super::escape::json(text)
}

/// [`render`] with a final newline, the content of the `--report-json` file.
pub fn render_file(summary: &Summary, cases: &[CaseRecord]) -> String {
    render(summary, cases) + "\n"
}
