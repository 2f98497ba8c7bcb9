//! A run compared with a baseline folder: reading the folder's snapshots, comparing one case's
//! snapshot with the recorded one, and the totals a report prints.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{file_name, Comparison, Error, Snapshot};
use crate::suite::CatalogVersion;

/// How many snapshots of a baseline were recorded with one catalog version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogCount {
    /// The version (`info.catalog`).
    pub version: CatalogVersion,
    /// How many snapshots name it.
    pub snapshots: usize,
}

/// `catalog 2026.11.1 (25 of 25 snapshots)`, or for several versions
/// `catalog 2026.10.1 (3 of 25 snapshots) and 2026.11.1 (22 of 25 snapshots)`.
pub fn recorded_catalogs(counts: &[CatalogCount], total: usize) -> String {
    let parts: Vec<String> = counts
        .iter()
        .map(|c| format!("{} ({} of {total} snapshots)", c.version, c.snapshots))
        .collect();
    let list = match parts.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    format!("catalog {list}")
}

/// A baseline folder, read: every `*.snap` file by case id (`.snap.new` files are ignored).
#[derive(Clone, Debug, Default)]
pub struct Baseline {
    /// The folder.
    pub dir: PathBuf,
    /// Snapshots by case id.
    pub snapshots: BTreeMap<String, Snapshot>,
}

impl Baseline {
    /// Read every `*.snap` file of `dir` (not its subfolders).
    ///
    /// # Errors
    /// [`Error::Read`] for a folder or file that cannot be read; [`Error::NotRegular`] and
    /// [`Error::TooLarge`] for a `.snap` entry that is not a regular file or is too large
    /// ([`super::read_snap`]); [`Error::Format`] for a file that does not parse or whose name is
    /// not [`file_name`] of its `expression`.
    pub fn load(dir: &Path) -> Result<Baseline, Error> {
        let read = |path: &Path, source| Error::Read {
            path: path.to_owned(),
            source,
        };
        let mut paths = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| read(dir, e))? {
            let entry = entry.map_err(|e| read(dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".snap") {
                paths.push((name, entry.path()));
            }
        }
        let load = |(name, path): &(String, PathBuf)| -> Result<Snapshot, Error> {
            let text = super::read_snap(path)?;
            let snap = Snapshot::parse(&text, path)?;
            if &file_name(&snap.case_id) != name {
                return Err(Error::Format {
                    path: path.clone(),
                    what: format!(
                        "the file of case {} must be named {}",
                        snap.case_id,
                        file_name(&snap.case_id)
                    ),
                });
            }
            Ok(snap)
        };
        // Two threads: reading and parsing some 2,000 files is a tenth of a second.
        let half = paths.len() / 2;
        let (first, second) = paths.split_at(half);
        let (a, b) = std::thread::scope(|scope| {
            let other = scope.spawn(|| second.iter().map(load).collect::<Vec<_>>());
            let mine: Vec<_> = first.iter().map(load).collect();
            (
                mine,
                other.join().expect("the loading thread does not panic"),
            )
        });
        let mut snapshots = BTreeMap::new();
        for snap in a.into_iter().chain(b) {
            let snap = snap?;
            snapshots.insert(snap.case_id.clone(), snap);
        }
        Ok(Baseline {
            dir: dir.to_owned(),
            snapshots,
        })
    }

    /// The catalog versions other than the running one that its snapshots were recorded with,
    /// oldest first, each with how many; empty when every snapshot names the running catalog or
    /// none (unknown).
    pub fn other_catalogs(&self) -> Vec<CatalogCount> {
        let mut by: BTreeMap<&CatalogVersion, usize> = BTreeMap::new();
        for v in self.snapshots.values().filter_map(|s| s.catalog.as_ref()) {
            if !v.is_current() {
                *by.entry(v).or_default() += 1;
            }
        }
        by.into_iter()
            .map(|(v, n)| CatalogCount {
                version: v.clone(),
                snapshots: n,
            })
            .collect()
    }

    /// Compare a case's snapshot of this run with the recorded one.
    pub fn compare(&self, actual: &Snapshot) -> Comparison {
        match self.snapshots.get(&actual.case_id) {
            None => Comparison::New,
            // The body is a function of the steps, one to one: compare them, render on a change.
            Some(old) if old.steps == actual.steps => Comparison::Unchanged,
            Some(old) => Comparison::Regression {
                diff: diff(&old.body(), &actual.body()),
                input_changed: old.input != actual.input,
            },
        }
    }
}

/// A unified line diff (`-baseline`, `+actual`, three lines of context).
pub fn diff(baseline: &str, actual: &str) -> String {
    similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(500))
        .diff_lines(baseline, actual)
        .unified_diff()
        .context_radius(3)
        .header("baseline", "actual")
        .to_string()
}

/// The totals of a run compared with a baseline. REGRESSION and STALE fail the run; NEW does not.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BaselineSummary {
    /// The baseline folder.
    pub dir: String,
    /// Cases whose answers are the recorded ones.
    pub unchanged: usize,
    /// Cases whose answers changed, in run order.
    pub regressions: Vec<String>,
    /// Cases run with no snapshot in the baseline, in run order.
    pub new: Vec<String>,
    /// Snapshots whose case no longer exists in memcert's catalog, sorted.
    pub stale: Vec<String>,
    /// Cases run but not compared (race, SKIPPED).
    pub not_compared: usize,
    /// Snapshots of existing cases this run did not select (`--level`, `--cases`, `--exclude`).
    pub not_run: usize,
    /// The catalog versions other than the running one that snapshots were recorded with
    /// ([`Baseline::other_catalogs`]). Not in the JSON report.
    #[serde(skip)]
    pub other_catalogs: Vec<CatalogCount>,
    /// How many snapshots the baseline holds. Not in the JSON report.
    #[serde(skip)]
    pub snapshots: usize,
}

impl BaselineSummary {
    /// The totals as the reports print them: `N unchanged, N REGRESSION, N NEW, N STALE (N not
    /// compared: race, huge file or SKIPPED; N snapshots of cases not run)`.
    pub fn totals(&self) -> String {
        format!(
            "{} unchanged, {} REGRESSION, {} NEW, {} STALE ({} not compared: race, huge file or SKIPPED; {} snapshots of cases not run)",
            self.unchanged,
            self.regressions.len(),
            self.new.len(),
            self.stale.len(),
            self.not_compared,
            self.not_run
        )
    }

    /// No REGRESSION and no STALE snapshot.
    pub fn passed(&self) -> bool {
        self.regressions.is_empty() && self.stale.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::redact::tests::sample;
    use crate::baseline::Answer;
    use crate::protocol::ToolResult;

    #[test]
    fn other_catalogs_are_counted_oldest_first() {
        let v = |t: &str| Some(crate::suite::CatalogVersion::parse(t).unwrap());
        let mut b = Baseline::default();
        for (id, catalog) in [
            ("a", v("2026.11.1")),
            ("b", v("2026.9.2")),
            ("c", v("2026.11.1")),
            ("d", None),
            ("e", Some(CatalogVersion::current())),
        ] {
            let mut s = sample();
            s.case_id = id.into();
            s.catalog = catalog;
            b.snapshots.insert(id.into(), s);
        }
        let counts = b.other_catalogs();
        assert_eq!(
            recorded_catalogs(&counts, b.snapshots.len()),
            "catalog 2026.9.2 (1 of 5 snapshots) and 2026.11.1 (2 of 5 snapshots)"
        );
        assert_eq!(
            recorded_catalogs(&counts[1..], 5),
            "catalog 2026.11.1 (2 of 5 snapshots)"
        );
        b.snapshots
            .retain(|id, _| ["d", "e"].contains(&id.as_str()));
        assert!(b.other_catalogs().is_empty());
    }

    #[test]
    fn compare_tells_unchanged_regression_and_new() {
        let s = sample();
        let mut b = Baseline::default();
        assert_eq!(b.compare(&s), Comparison::New);
        b.snapshots.insert(s.case_id.clone(), s.clone());
        assert_eq!(b.compare(&s), Comparison::Unchanged);
        let mut changed = s.clone();
        changed.steps[0] = Answer::Reply(ToolResult::error("other"));
        let Comparison::Regression {
            diff,
            input_changed,
        } = b.compare(&changed)
        else {
            panic!("not a regression")
        };
        assert!(!input_changed);
        assert_eq!(
            diff,
            "--- baseline\n+++ actual\n@@ -1,7 +1,7 @@\n --- step 1 ---\n is_error: true\n content: 1 line\n\
-ENOENT: '/[RUN]/base/memories/x' [TOKEN]\n+other\n --- step 2 ---\n is_error: false\n content: 6 lines\n"
        );
    }
}
