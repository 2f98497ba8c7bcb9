//! Which cases a run takes: the catalog of a [`RunLevel`], narrowed by case-id globs (the
//! `--cases`/`--exclude` flags of `memcert certify`, `snapshot` and `cases`, and
//! [`crate::Options::cases`]/[`crate::Options::exclude`]).
//!
//! The one home of the rule that a selection leaving no case is an error: [`Selection::cases`]
//! and [`narrow`] return [`SelectError::NoCase`], and each caller words it for its own users
//! (the command line names its flags, the Rust API its options, `certify --app` the transcripts).
//! [`Selection::matching`] is for listings, where an empty answer is a fine answer.
//!
//! The glob filter itself is [`crate::certify::select`] (`*` matches across `/`).

use crate::certify;
use crate::suite::catalog::RunLevel;
use crate::suite::list::{CaseList as _, Cases};
use crate::suite::Case;

/// A level and the case-id globs that narrow it. The default: level `standard`, every case.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// How many cases ([`Cases::level`]).
    pub level: RunLevel,
    /// Only case ids matching one of these globs; all when empty.
    pub include: Vec<String>,
    /// Leave out case ids matching any of these globs.
    pub exclude: Vec<String>,
}

/// Why a selection gives no cases to run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SelectError {
    /// A glob does not parse.
    #[error("bad case glob")]
    Glob(#[source] globset::Error),
    /// The globs leave no case.
    #[error("no case matches the case globs")]
    NoCase,
}

impl Selection {
    /// The level's cases the globs keep, in catalog order; none is an error. Each payload case
    /// is built only when a run takes it ([`Cases`]).
    ///
    /// # Errors
    /// [`SelectError::Glob`] for a glob that does not parse, [`SelectError::NoCase`] when the
    /// globs leave nothing.
    pub fn cases(&self) -> Result<Cases, SelectError> {
        self.cases_and(Vec::new())
    }

    /// The level's cases, then `extra` (cases from elsewhere, such as the transcripts of
    /// `memcert certify --replay`), that the globs keep, in that order; none is an error.
    ///
    /// # Errors
    /// As [`Selection::cases`].
    pub fn cases_and(&self, extra: Vec<Case>) -> Result<Cases, SelectError> {
        let cases = self.matching_and(extra)?;
        if cases.is_empty() {
            return Err(SelectError::NoCase);
        }
        Ok(cases)
    }

    /// The level's cases the globs keep, in catalog order; possibly none (a listing).
    ///
    /// # Errors
    /// [`SelectError::Glob`] for a glob that does not parse (never [`SelectError::NoCase`]).
    pub fn matching(&self) -> Result<Cases, SelectError> {
        self.matching_and(Vec::new())
    }

    /// The level's cases, then `extra`, that the globs keep, in that order; possibly none (a
    /// listing).
    ///
    /// # Errors
    /// As [`Selection::matching`].
    pub fn matching_and(&self, extra: Vec<Case>) -> Result<Cases, SelectError> {
        let keep = certify::id_filter(&self.include, &self.exclude).map_err(SelectError::Glob)?;
        let mut all = Cases::level(self.level);
        all.extend(extra);
        all.retain(keep);
        Ok(all)
    }
}

/// The cases of `cases` whose ids `include` (all when empty) and `exclude` keep, in order; none
/// is an error. For case lists that are not a catalog level, such as `certify --app`'s
/// transcripts.
///
/// # Errors
/// [`SelectError::Glob`] for a glob that does not parse, [`SelectError::NoCase`] when the globs
/// leave nothing.
pub fn narrow(
    cases: Vec<Case>,
    include: &[String],
    exclude: &[String],
) -> Result<Vec<Case>, SelectError> {
    let cases = certify::select(cases, include, exclude).map_err(SelectError::Glob)?;
    if cases.is_empty() {
        return Err(SelectError::NoCase);
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::catalog;

    /// A case from elsewhere, named `replay/x`.
    fn extra() -> Case {
        let mut c = catalog::for_level(RunLevel::Quick).remove(0);
        c.id = "replay/x".into();
        c
    }

    #[test]
    fn extra_cases_come_after_the_level_and_the_globs_select_them_too() {
        let quick = Selection {
            level: RunLevel::Quick,
            ..Selection::default()
        };
        let all = quick.cases_and(vec![extra()]).unwrap();
        assert_eq!(all.len(), catalog::for_level(RunLevel::Quick).len() + 1);
        assert_eq!(all.ids().last().as_deref(), Some("replay/x"));
        let only = Selection {
            include: vec!["replay/*".into()],
            ..quick.clone()
        };
        let ids: Vec<String> = only
            .cases_and(vec![extra()])
            .unwrap()
            .ids()
            .map(|id| id.into_owned())
            .collect();
        assert_eq!(ids, ["replay/x"]);
        assert!(matches!(only.cases(), Err(SelectError::NoCase)));
        assert!(only.matching().unwrap().is_empty());
        let without = Selection {
            exclude: vec!["replay/*".into()],
            ..quick
        };
        let kept = without.matching_and(vec![extra()]).unwrap();
        assert_eq!(kept.len(), catalog::for_level(RunLevel::Quick).len());
        assert!(kept.ids().all(|id| id != "replay/x"));
    }
}
