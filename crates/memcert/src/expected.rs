//! Expected failures: a list of case ids (or globs) a handler is known to fail, each with a
//! reason, so that CI can certify everything else while the known faults are worked on.
//!
//! The file is TOML (`memcert certify --expected-failures FILE`):
//!
//! ```toml
//! catalog = "2026.12.1"                     # the case catalog the list was made for
//!
//! [[expected]]
//! id = "symlink/inner-file/delete"          # one case id ...
//! reason = "deletes the link target; fix tracked in #123"
//!
//! [[expected]]
//! id = "payload/long/*"                     # ... or a glob (`*` matches across `/`)
//! reason = "host path in ENAMETOOLONG errors"
//! ```
//!
//! Rules, as in pytest's strict xfail and Autobahn's expected-results files:
//! - A case whose verdict blocks certification (FAIL, UNSAFE, ERROR; NON-STRICT under
//!   `--strict`, which grades it FAIL) and that an entry matches keeps its verdict, is reported as
//!   an expected failure with the entry's reason, and does not stop the run from being certified.
//! - An entry that matches cases of the run none of which failed is **stale**: the handler was
//!   fixed, so the entry must go. A stale entry makes the run NOT CERTIFIED, so the list cannot
//!   outlive the faults it excuses.
//! - An entry that matches no case of the run (left out by `--cases`, `--exclude` or `--level`,
//!   or SKIPPED, which is not run) is neither used nor stale; reports name it.
//! - `catalog` (optional, before the first `[[expected]]`) names the case catalog version the
//!   list was made for (`memcert_cases::CATALOG_VERSION`, `YEAR.MONTH.N`; `memcert cases` and
//!   every report show the running one). A list without it is read as made for an unknown
//!   catalog. When it differs from the running catalog, the binary warns once on stderr and the
//!   reports say so: case ids may have been retired or re-graded since (`CHANGELOG.md`).
//! - An entry that matches no case of the run is also checked against the whole catalog (every
//!   level): one that matches no case at all names a retired or renamed id, and reports say so.
//! - Unknown keys, an empty reason, a malformed glob, an empty id and a `catalog` that is not a
//!   catalog version are errors (exit 2).

use globset::{Glob, GlobMatcher};
use serde::Deserialize;

use crate::suite::verdict::Verdict;
use crate::suite::{CatalogVersion, CatalogVersionError};

/// Why an expected-failures file was refused. The messages name the file's entry.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Not valid TOML or not the documented shape (the message holds the line and column).
    #[error("not a valid expected-failures file: {0}")]
    Toml(String),
    /// An entry with an empty `id` or `reason`.
    #[error("entry {index} ({id:?}): {what} must not be empty")]
    Empty {
        /// 1-based entry number.
        index: usize,
        /// The entry's id as written.
        id: String,
        /// `id` or `reason`.
        what: &'static str,
    },
    /// A `catalog` that is not `YEAR.MONTH.N`.
    #[error("catalog: {0}")]
    Catalog(CatalogVersionError),
    /// A glob that does not parse.
    #[error("entry {index}: bad glob {id:?}: {source}")]
    Glob {
        /// 1-based entry number.
        index: usize,
        /// The entry's id as written.
        id: String,
        /// The glob error.
        source: globset::Error,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileShape {
    catalog: Option<String>,
    #[serde(default)]
    expected: Vec<EntryShape>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryShape {
    id: String,
    reason: String,
}

/// One entry: a case id or glob and why it is expected to fail.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The id or glob as written.
    pub id: String,
    /// Why the failure is expected (shown in reports).
    pub reason: String,
    matcher: GlobMatcher,
}

impl Entry {
    /// Whether this entry matches a case id.
    pub fn matches(&self, case_id: &str) -> bool {
        self.matcher.is_match(case_id)
    }
}

/// A parsed expected-failures list; empty by default (nothing expected to fail).
#[derive(Clone, Debug, Default)]
pub struct ExpectedFailures {
    entries: Vec<Entry>,
    catalog: Option<CatalogVersion>,
}

/// What the list made of a finished run. See the module docs for the rules.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Reckoning {
    /// Cases that failed as expected: (case id, reason).
    pub expected: Vec<(String, String)>,
    /// Entries (id or glob as written) whose cases all passed: the list is stale.
    pub stale: Vec<String>,
    /// Entries that matched no case of the run (SKIPPED cases not counted).
    pub unused: Vec<String>,
}

impl ExpectedFailures {
    /// Parse the TOML text of an expected-failures file.
    ///
    /// # Errors
    /// [`Error`] for bad TOML, unknown keys, empty ids or reasons, malformed globs.
    pub fn parse(text: &str) -> Result<ExpectedFailures, Error> {
        let shape: FileShape = toml::from_str(text).map_err(|e| Error::Toml(e.to_string()))?;
        let catalog = shape
            .catalog
            .as_deref()
            .map(CatalogVersion::parse)
            .transpose()
            .map_err(Error::Catalog)?;
        let mut entries = Vec::new();
        for (i, e) in shape.expected.into_iter().enumerate() {
            let index = i + 1;
            for (what, value) in [("id", &e.id), ("reason", &e.reason)] {
                if value.trim().is_empty() {
                    return Err(Error::Empty {
                        index,
                        id: e.id.clone(),
                        what,
                    });
                }
            }
            let matcher = Glob::new(&e.id)
                .map_err(|source| Error::Glob {
                    index,
                    id: e.id.clone(),
                    source,
                })?
                .compile_matcher();
            entries.push(Entry {
                id: e.id,
                reason: e.reason,
                matcher,
            });
        }
        Ok(ExpectedFailures { entries, catalog })
    }

    /// The catalog version the list was made for (its `catalog` key); `None`: unknown.
    pub fn catalog(&self) -> Option<&CatalogVersion> {
        self.catalog.as_ref()
    }

    /// The list's catalog version when it names one that is not the running catalog.
    pub fn other_catalog(&self) -> Option<&CatalogVersion> {
        self.catalog.as_ref().filter(|v| !v.is_current())
    }

    /// Of `entries` (ids or globs as written), those that match none of `ids`: run against the
    /// whole catalog, the retired or renamed ids.
    pub fn matching_none(entries: &[String], ids: &[&str]) -> Vec<String> {
        entries
            .iter()
            .filter(|e| {
                Glob::new(e).is_ok_and(|g| {
                    let m = g.compile_matcher();
                    !ids.iter().any(|id| m.is_match(id))
                })
            })
            .cloned()
            .collect()
    }

    /// The entries, in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The first entry matching `case_id`, if any.
    pub fn entry_for(&self, case_id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.matches(case_id))
    }

    /// Whether a case with this verdict is an expected failure (it blocks certification, and
    /// an entry matches it); returns the reason.
    pub fn excuses(&self, case_id: &str, verdict: Verdict) -> Option<&str> {
        if !verdict.blocks_certification() {
            return None;
        }
        self.entry_for(case_id).map(|e| e.reason.as_str())
    }

    /// Judge the list against a run's (case id, final verdict) pairs. A SKIPPED case was not
    /// run: it neither matches an entry nor makes one stale.
    pub fn reckon<S: AsRef<str>>(
        &self,
        outcomes: impl IntoIterator<Item = (S, Verdict)>,
    ) -> Reckoning {
        let mut matched = vec![false; self.entries.len()];
        let mut failed = vec![false; self.entries.len()];
        let mut expected = Vec::new();
        for (id, verdict) in outcomes {
            let id = id.as_ref();
            if verdict == Verdict::Skipped {
                continue;
            }
            for (i, e) in self.entries.iter().enumerate() {
                if e.matches(id) {
                    matched[i] = true;
                    if verdict.blocks_certification() {
                        failed[i] = true;
                    }
                }
            }
            if let Some(reason) = self.excuses(id, verdict) {
                expected.push((id.to_owned(), reason.to_owned()));
            }
        }
        let pick = |want: &dyn Fn(usize) -> bool| -> Vec<String> {
            (0..self.entries.len())
                .filter(|&i| want(i))
                .map(|i| self.entries[i].id.clone())
                .collect()
        };
        Reckoning {
            expected,
            stale: pick(&|i| matched[i] && !failed[i]),
            unused: pick(&|i| !matched[i]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::*;

    const FILE: &str = r#"
[[expected]]
id = "symlink/inner-file/delete"
reason = "deletes the link target"

[[expected]]
id = "payload/long/*"
reason = "host path in ENAMETOOLONG errors"

[[expected]]
id = "view/missing"
reason = "fixed last week"

[[expected]]
id = "rename/*"
reason = "not run today"
"#;

    #[test]
    fn expected_stale_and_unused_entries() {
        let x = ExpectedFailures::parse(FILE).unwrap();
        let r = x.reckon([
            ("symlink/inner-file/delete", Unsafe),
            ("payload/long/path-4097/view.path", Unsafe),
            ("payload/long/path-4097/create.path", Pass),
            ("view/missing", Pass),
            ("view/dir/nested", Fail),
            ("create/new-file", NonStrict),
        ]);
        assert_eq!(
            r.expected,
            vec![
                (
                    "symlink/inner-file/delete".to_owned(),
                    "deletes the link target".to_owned()
                ),
                (
                    "payload/long/path-4097/view.path".to_owned(),
                    "host path in ENAMETOOLONG errors".to_owned()
                ),
            ]
        );
        assert_eq!(r.stale, vec!["view/missing".to_owned()]);
        assert_eq!(r.unused, vec!["rename/*".to_owned()]);
    }

    #[test]
    fn a_skipped_case_neither_matches_nor_makes_an_entry_stale() {
        let x = ExpectedFailures::parse(FILE).unwrap();
        let r = x.reckon([
            ("symlink/inner-file/delete", Skipped),
            ("payload/long/path-4097/view.path", Unsafe),
            ("view/missing", Skipped),
            ("rename/file", Fail),
        ]);
        assert!(r.stale.is_empty(), "{:?}", r.stale);
        assert_eq!(
            r.unused,
            vec![
                "symlink/inner-file/delete".to_owned(),
                "view/missing".to_owned()
            ]
        );
    }

    #[test]
    fn the_catalog_key_is_optional_and_names_the_list_s_catalog() {
        let unknown = ExpectedFailures::parse(FILE).unwrap();
        assert_eq!(unknown.catalog(), None);
        assert_eq!(unknown.other_catalog(), None);
        let current = format!("catalog = \"{}\"\n{FILE}", crate::suite::CATALOG_VERSION);
        let current = ExpectedFailures::parse(&current).unwrap();
        assert!(current.catalog().is_some_and(CatalogVersion::is_current));
        assert_eq!(current.other_catalog(), None);
        assert_eq!(current.entries().len(), 4);
        let older = ExpectedFailures::parse(&format!("catalog = \"2026.11.1\"\n{FILE}")).unwrap();
        assert_eq!(
            older.other_catalog().map(ToString::to_string).as_deref(),
            Some("2026.11.1")
        );
    }

    #[test]
    fn entries_matching_no_id_are_named() {
        let entries = [
            "view/*".to_owned(),
            "view/gone".to_owned(),
            "x/*".to_owned(),
        ];
        assert_eq!(
            ExpectedFailures::matching_none(&entries, &["view/missing", "create/new"]),
            ["view/gone".to_owned(), "x/*".to_owned()]
        );
    }

    #[test]
    fn only_blocking_verdicts_are_excused() {
        let x = ExpectedFailures::parse(FILE).unwrap();
        assert_eq!(
            x.excuses("symlink/inner-file/delete", Error),
            Some("deletes the link target")
        );
        assert_eq!(x.excuses("symlink/inner-file/delete", NonStrict), None);
        assert_eq!(x.excuses("symlink/inner-file/delete", Info), None);
        assert_eq!(x.excuses("view/dir/nested", Fail), None);
    }

    #[test]
    fn bad_files_are_refused_with_the_entry_named() {
        let err = |t: &str| ExpectedFailures::parse(t).unwrap_err().to_string();
        assert_eq!(
            err("[[expected]]\nid = \"view/*\"\nreason = \"\"\n"),
            "entry 1 (\"view/*\"): reason must not be empty"
        );
        assert_eq!(
            err("[[expected]]\nid = \"\"\nreason = \"x\"\n"),
            "entry 1 (\"\"): id must not be empty"
        );
        assert!(err("[[expected]]\nid = \"view/[\"\nreason = \"x\"\n")
            .starts_with("entry 1: bad glob \"view/[\": "));
        assert!(
            err("[[expected]]\nid = \"a\"\nreason = \"x\"\nseverity = 1\n")
                .contains("unknown field `severity`")
        );
        assert!(err("[[expected]]\nid = \"a\"\n").contains("missing field `reason`"));
        assert!(err("expected = 3").starts_with("not a valid expected-failures file: "));
        assert_eq!(
            err("catalog = \"2026.12\"\n"),
            format!(
                "catalog: \"2026.12\" is not a catalog version (YEAR.MONTH.N, such as {})",
                crate::suite::CATALOG_VERSION
            )
        );
        assert!(err("catalog = 2026\n").starts_with("not a valid expected-failures file: "));
        assert_eq!(ExpectedFailures::parse("").unwrap().entries().len(), 0);
    }
}
