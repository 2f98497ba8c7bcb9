//! Reporters: consumers of `certify::Event`s. They read events, never a target. Every report
//! leads with the run's [`causes`] and names memcert's and the catalog's versions ([`versions`])
//! and the gate ([`Gated`], `--fail-on`).
//!
//! - [`causes`]: the non-PASS findings grouped into causes, shared by every report;
//! - [`terminal`]: progress on stderr, then a summary a person reads (worst cases first);
//! - [`json`]: one JSON file with the summary and one record per case (`--report-json`);
//! - [`junit`]: JUnit XML that GitHub and GitLab render (`--junit`);
//! - [`markdown`]: a summary that fits a CI job summary (`--markdown`);
//! - [`sarif`]: SARIF 2.1.0 for code scanning, one result per cause (`--sarif`);
//! - [`html`]: one self-contained page to read offline, with filters and diffs (`--html`);
//! - [`snapshots`]: the snapshot files of `memcert snapshot` and `--update-baseline`;
//! - [`escape`]: how each of them shows the characters of untrusted text that could act instead
//!   of read (controls, ANSI escapes, bidi overrides).
//!
//! The live progress line on stderr (indicatif) is the binary's, in `memcert-cli`.

pub mod causes;
pub mod escape;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod sarif;
pub mod snapshots;
pub mod terminal;

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use crate::certify::{CaseRecord, Spool};
use crate::suite::verdict::Verdict;

/// The verdict columns of every per-category table, in report order.
pub const COLUMNS: [Verdict; 7] = [
    Verdict::Pass,
    Verdict::NonStrict,
    Verdict::Info,
    Verdict::Fail,
    Verdict::Unsafe,
    Verdict::Error,
    Verdict::Skipped,
];

/// Cases per category (first id segment) and verdict, categories sorted.
pub fn by_category(cases: &[CaseRecord]) -> BTreeMap<&str, BTreeMap<Verdict, usize>> {
    let mut by: BTreeMap<&str, BTreeMap<Verdict, usize>> = BTreeMap::new();
    for c in cases {
        *by.entry(c.category.as_str())
            .or_default()
            .entry(c.verdict)
            .or_default() += 1;
    }
    by
}

/// The header every report shows: memcert's version and the catalog's
/// (`memcert 0.1.0, catalog 2026.12.5`).
pub fn versions() -> String {
    format!(
        "memcert {}, catalog {}",
        env!("CARGO_PKG_VERSION"),
        crate::suite::CATALOG_VERSION
    )
}

/// The sentence every report and the binary use for a file made with another catalog version
/// than the running one: `{made} {recorded}, but this memcert runs catalog 2026.12.5; see
/// CHANGELOG.md for the cases added, retired or changed in verdict between them`, where `made`
/// names the file (`--baseline base was recorded with`) and `recorded` its versions
/// (`catalog 2026.11.1`).
pub fn other_catalog(made: &str, recorded: &str) -> String {
    format!(
        "{made} {recorded}, but this memcert runs catalog {}; see CHANGELOG.md for the cases added, retired or changed in verdict between them",
        crate::suite::CATALOG_VERSION
    )
}

/// [`other_catalog`] for an expected-failures list made for `version`; `made` names the list.
pub fn expected_other_catalog(made: &str, version: &crate::suite::CatalogVersion) -> String {
    other_catalog(
        &format!("{made} was made for"),
        &format!("catalog {version}"),
    )
}

/// [`other_catalog`] for a baseline of `total` snapshots, `counts` of which were recorded with
/// other catalogs (`None` when none was); `made` names the baseline with its verb (`the
/// baseline was recorded with`).
pub fn baseline_other_catalog(
    made: &str,
    counts: &[crate::baseline::CatalogCount],
    total: usize,
) -> Option<String> {
    (!counts.is_empty())
        .then(|| other_catalog(made, &crate::baseline::recorded_catalogs(counts, total)))
}

/// A reporter that hands on every event as it came, except the summary of `Finished`, which it
/// hands on under the gate `fail_on` (`--fail-on`, [`crate::certify::Summary::gated`]), so
/// every report states the gate the exit status follows.
pub struct Gated<'a> {
    /// The verdicts that fail the run; empty for the default gate.
    pub fail_on: Vec<Verdict>,
    /// Where the events go.
    pub inner: &'a mut dyn crate::certify::Reporter,
}

impl crate::certify::Reporter for Gated<'_> {
    fn event(&mut self, event: &crate::certify::Event<'_>) {
        match event {
            crate::certify::Event::Finished(s) => {
                let gated = (*s).clone().gated(&self.fail_on);
                self.inner.event(&crate::certify::Event::Finished(&gated));
            }
            other => self.inner.event(other),
        }
    }
}

/// Fail when a report could not be written at `path` (its folder missing or read-only, or the
/// path a folder), without touching a report already there.
///
/// # Errors
/// `IsADirectory` when `path` is a folder (or a link to one); else the I/O error of creating a
/// temporary file beside `path`.
pub fn check_writable(path: &Path) -> io::Result<()> {
    if path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/') {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a folder; name a file",
        ));
    }
    tempfile::NamedTempFile::new_in(folder_of(path)).map(drop)
}

/// The first `max` lines of a diff, and a line saying how many more were left out (they are all
/// in the JSON report); the whole diff when it is short enough.
pub(crate) fn clip_diff(diff: &str, max: usize) -> String {
    let total = diff.lines().count();
    if total <= max {
        return diff.to_owned();
    }
    let mut out: String = diff.lines().take(max).flat_map(|l| [l, "\n"]).collect();
    out.push_str(&format!(
        "... {} more diff lines (the whole diff is in --report-json)\n",
        total - max
    ));
    out
}

/// Write `text` to `path` through a temporary file in the same folder and a rename, so a reader
/// never sees half a report.
pub fn write_atomic(path: &Path, text: &str) -> io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::PermissionsExt as _;
    let mut tmp = tempfile::NamedTempFile::new_in(folder_of(path))?;
    tmp.write_all(text.as_bytes())?;
    // A replaced report keeps its mode; a new one is 0644 like any file a tool writes (the
    // temp file is 0600).
    let mode = std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0o644);
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    tmp.persist(path).map(drop).map_err(|e| e.error)
}

fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A reporter that writes one file, rendered by `render`, when the run finishes; the write
/// error, if any, is kept for the caller. On its own it keeps the finished cases in a [`Spool`]
/// of its own; under [`Spooled`], which keeps one for every report of a run, it keeps nothing.
pub struct FileReport {
    path: std::path::PathBuf,
    render: Box<Render>,
    cases: Store,
    /// The error of writing the file (or of keeping the cases for it).
    pub error: Option<io::Error>,
}

/// How a file report renders a finished run: summary and cases in, the file's text out.
pub type Render = dyn Fn(&crate::certify::Summary, &[crate::certify::CaseRecord]) -> String + Send;

impl FileReport {
    /// A report written to `path` with `render` (a renderer such as [`html::render`], or a
    /// closure that passes it options).
    pub fn new(
        path: std::path::PathBuf,
        render: impl Fn(&crate::certify::Summary, &[crate::certify::CaseRecord]) -> String
            + Send
            + 'static,
    ) -> Self {
        FileReport {
            path,
            render: Box::new(render),
            cases: Store::default(),
            error: None,
        }
    }

    /// The file this report goes to.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Finish for FileReport {
    fn finish(&mut self, summary: &crate::certify::Summary, cases: &[CaseRecord]) {
        if let Err(e) = write_atomic(&self.path, &(self.render)(summary, cases)) {
            self.error = Some(e);
        }
    }
}

impl crate::certify::Reporter for FileReport {
    fn event(&mut self, event: &crate::certify::Event<'_>) {
        match self.cases.keep(event) {
            Some((summary, Ok(cases))) => self.finish(summary, &cases),
            Some((_, Err(e))) => self.error = Some(e),
            None => {}
        }
    }
}

/// A report made when the run finishes, from its summary and every case in run order
/// ([`FileReport`], [`terminal::Terminal`]); [`Spooled`] hands the same cases to several.
pub trait Finish {
    /// Make the report of the finished run `summary` with its `cases`.
    fn finish(&mut self, summary: &crate::certify::Summary, cases: &[CaseRecord]);
}

/// Where a reporter keeps the finished cases until the run ends: a [`Spool`] (an anonymous
/// temporary file), or memory when no temporary file can be made. Errors of the spool are kept
/// and returned by [`Store::take`].
#[derive(Debug, Default)]
enum Store {
    /// Nothing kept yet: the spool is made by the first case.
    #[default]
    Empty,
    /// The cases, in a spool.
    Spool(Spool),
    /// The cases in memory (the temp folder could not take the spool).
    Memory(Vec<CaseRecord>),
    /// Writing the spool failed.
    Failed(io::Error),
}

impl Store {
    /// Keep what `event` brings: a new run empties the store, a finished case is kept; when the
    /// run finishes, its summary and every case kept (the store is then empty).
    fn keep<'e>(
        &mut self,
        event: &crate::certify::Event<'e>,
    ) -> Option<(&'e crate::certify::Summary, io::Result<Vec<CaseRecord>>)> {
        use crate::certify::Event;
        match event {
            Event::Started { .. } => {
                *self = Store::Empty;
                None
            }
            Event::CaseFinished(r) => {
                self.push(r);
                None
            }
            Event::Finished(summary) => Some((summary, self.take())),
        }
    }

    fn push(&mut self, r: &CaseRecord) {
        if let Store::Empty = self {
            *self = match Spool::new() {
                Ok(s) => Store::Spool(s),
                Err(_) => Store::Memory(Vec::new()),
            };
        }
        match self {
            Store::Spool(s) => {
                if let Err(e) = s.push(r) {
                    *self = Store::Failed(e);
                }
            }
            Store::Memory(v) => v.push(r.clone()),
            Store::Empty | Store::Failed(_) => {}
        }
    }

    /// Every case kept, in order; the store is empty afterwards.
    fn take(&mut self) -> io::Result<Vec<CaseRecord>> {
        match std::mem::take(self) {
            Store::Empty => Ok(Vec::new()),
            Store::Spool(mut s) => s.load(),
            Store::Memory(v) => Ok(v),
            Store::Failed(e) => Err(e),
        }
    }
}

/// One spool for every report of a run: each finished case is written once to an anonymous
/// temporary file ([`Spool`]), and when the run finishes the cases are read back once and
/// handed to each report in turn ([`Finish`]), in the order given. Nothing else is kept while
/// the cases run, and nothing at all (no spool) when there is no report. When the spool cannot
/// be written or read back, the error is kept in [`Spooled::error`] (the CLI then fails the run
/// with it) and every report is made with no cases.
pub struct Spooled<'a> {
    cases: Store,
    /// The reports made when the run finishes, in order.
    pub reports: Vec<&'a mut dyn Finish>,
    /// The error of keeping or reading back the cases, if any (the reports were then made with
    /// none).
    pub error: Option<io::Error>,
}

impl<'a> Spooled<'a> {
    /// A spool for `reports`.
    pub fn new(reports: Vec<&'a mut dyn Finish>) -> Self {
        Spooled {
            cases: Store::default(),
            reports,
            error: None,
        }
    }
}

impl crate::certify::Reporter for Spooled<'_> {
    fn event(&mut self, event: &crate::certify::Event<'_>) {
        if self.reports.is_empty() {
            // No report to make: nothing is kept, not even a spool.
            return;
        }
        if let Some((summary, cases)) = self.cases.keep(event) {
            let cases = cases.unwrap_or_else(|e| {
                self.error = Some(e);
                Vec::new()
            });
            for r in self.reports.iter_mut() {
                r.finish(summary, &cases);
            }
        }
    }
}

/// A case record for the report tests: requirement `R MUST hold.`, source `bug:B01`, MUST, no
/// findings or steps, 1 ms; tests override what they need with `..test_record(id, verdict)`.
#[cfg(test)]
pub(crate) fn test_record(
    id: &str,
    verdict: crate::suite::verdict::Verdict,
) -> crate::certify::CaseRecord {
    crate::certify::CaseRecord {
        id: id.into(),
        category: id.split('/').next().unwrap_or("").into(),
        requirement: "R MUST hold.".into(),
        source: vec!["bug:B01".into()],
        defined: String::new(),
        level: crate::suite::Level::Must,
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

/// A step for the record and report tests: `view /memories/loop`, refused as expected
/// (`is_error: true`, "loop"), its reply graded `verdict`.
#[cfg(test)]
pub(crate) fn test_view_step(verdict: Verdict) -> crate::certify::StepRecord {
    crate::certify::StepRecord {
        input: serde_json::json!({"command": "view", "path": "/memories/loop"}),
        reply: Some(crate::protocol::ToolResult::error("loop")),
        reply_cut: None,
        error: None,
        expected: "is_error: true\nloop".into(),
        verdict,
    }
}

/// A run compared with a baseline, for the report tests: `view/missing` PASS and unchanged,
/// `str_replace/success` PASS and a REGRESSION (one line changed, with markup in it), `view/new`
/// PASS and NEW; one STALE snapshot, `view/retired`.
#[cfg(test)]
pub(crate) fn baseline_sample() -> (crate::certify::Summary, Vec<crate::certify::CaseRecord>) {
    use crate::baseline::{BaselineSummary, Comparison};
    let with = |id: &str, c: Comparison| crate::certify::CaseRecord {
        baseline: Some(c),
        ..test_record(id, Verdict::Pass)
    };
    let cases = vec![
        with("view/missing", Comparison::Unchanged),
        with(
            "str_replace/success",
            Comparison::Regression {
                diff: crate::baseline::diff(
                    "--- step 1 ---\nis_error: false\ncontent: 1 line\nedited\n--- end ---\n",
                    "--- step 1 ---\nis_error: false\ncontent: 1 line\n<b>edited</b>\n--- end ---\n",
                ),
                input_changed: false,
            },
        ),
        with("view/new", Comparison::New),
    ];
    let mut summary = crate::certify::Summary::of(
        "t".into(),
        &crate::certify::Config::default(),
        cases.iter().map(|c| (c.id.as_str(), c.verdict)),
    );
    summary.baseline = Some(BaselineSummary {
        dir: "base".into(),
        unchanged: 1,
        regressions: vec!["str_replace/success".into()],
        new: vec!["view/new".into()],
        stale: vec!["view/retired".into()],
        not_compared: 0,
        not_run: 2,
        ..BaselineSummary::default()
    });
    (summary, cases)
}

#[cfg(test)]
mod baseline_tests {
    #[test]
    fn a_failed_baseline_fails_the_run_even_when_certified() {
        let (mut summary, _) = super::baseline_sample();
        assert!(summary.certified);
        assert!(!summary.passed());
        let b = summary.baseline.as_mut().unwrap();
        b.regressions.clear();
        assert!(!summary.passed(), "STALE fails too");
        summary.baseline.as_mut().unwrap().stale.clear();
        assert!(summary.passed(), "NEW does not");
    }
}

#[cfg(test)]
mod write_tests {
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn a_new_report_is_0644_and_a_replaced_one_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.md");
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        super::write_atomic(&p, "a").unwrap();
        assert_eq!(mode(&p), 0o644);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        super::write_atomic(&p, "b").unwrap();
        assert_eq!(mode(&p), 0o640);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "b");
    }
}

#[cfg(test)]
mod spool_tests {
    use super::{FileReport, Finish, Spooled};
    use crate::certify::{Event, Reporter, Summary};
    use crate::suite::verdict::Verdict;
    use crate::text::Profile;

    /// Each report lists the ids it got, one a line.
    fn ids(path: std::path::PathBuf) -> FileReport {
        FileReport::new(path, |_, cases| {
            cases.iter().map(|c| format!("{}\n", c.id)).collect()
        })
    }

    fn run(reporter: &mut dyn Reporter) {
        let a = super::test_record("view/a", Verdict::Pass);
        let b = super::test_record("create/b", Verdict::Fail);
        let summary = Summary::of(
            "t".into(),
            &crate::certify::Config::default(),
            [(a.id.as_str(), a.verdict), (b.id.as_str(), b.verdict)],
        );
        reporter.event(&Event::Started {
            target: "t",
            profile: Profile::Docs,
            total: 2,
        });
        reporter.event(&Event::CaseFinished(&a));
        reporter.event(&Event::CaseFinished(&b));
        reporter.event(&Event::Finished(&summary));
    }

    #[test]
    fn one_spool_hands_every_case_to_each_report_and_a_lone_report_spools_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let (p1, p2, p3) = (
            dir.path().join("1"),
            dir.path().join("2"),
            dir.path().join("3"),
        );
        let (mut r1, mut r2) = (ids(p1.clone()), ids(p2.clone()));
        let mut spooled = Spooled::new(vec![&mut r1 as &mut dyn Finish, &mut r2]);
        run(&mut spooled);
        assert!(spooled.error.is_none());
        drop(spooled);
        let mut alone = ids(p3.clone());
        run(&mut alone);
        for p in [p1, p2, p3] {
            assert_eq!(std::fs::read_to_string(p).unwrap(), "view/a\ncreate/b\n");
        }
        assert!(r1.error.is_none() && r2.error.is_none() && alone.error.is_none());
    }
}
