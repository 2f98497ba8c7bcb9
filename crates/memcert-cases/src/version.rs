//! The catalog version as files record it: [`CatalogVersion`], a validated `YEAR.MONTH.N`, and
//! how a recorded version compares with this build's [`crate::CATALOG_VERSION`].
//!
//! An expected-failures file (`catalog = "2026.12.1"`) and every baseline snapshot
//! (`info.catalog: 2026.12.1`) record the catalog they were made with, so that a run on another
//! catalog can say so instead of reporting retired or re-graded cases as the handler's doing.
//!
//! # Guarantees
//! - Only [`CatalogVersion::parse`] builds a version: four-digit year, month 1 to 12, `N` a
//!   positive number, each in plain decimal, separated by `.`; nothing else.
//! - [`crate::CATALOG_VERSION`] parses (a unit test).
//!
//! # Non-guarantees
//! - A version says which catalog made a file, not which cases changed since: `CHANGELOG.md`
//!   at the repository root does.

use std::fmt;

/// A case catalog version, `YEAR.MONTH.N` (`2026.12.1`), validated.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CatalogVersion {
    year: u16,
    month: u8,
    n: u32,
}

/// A catalog version that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a catalog version (YEAR.MONTH.N, such as {current})", current = crate::CATALOG_VERSION)]
pub struct CatalogVersionError(pub String);

impl CatalogVersion {
    /// Parse `YEAR.MONTH.N` (`2026.12.1`).
    ///
    /// # Errors
    /// [`CatalogVersionError`] naming the text, for anything else (spaces, a `v` prefix, signs,
    /// a fourth part, month 0 or 13, N 0).
    pub fn parse(text: &str) -> Result<CatalogVersion, CatalogVersionError> {
        let bad = || CatalogVersionError(text.to_owned());
        let number = |part: &str| -> Option<u32> {
            let plain = !part.is_empty()
                && part.len() <= 9
                && part.bytes().all(|b| b.is_ascii_digit())
                && !(part.len() > 1 && part.starts_with('0'));
            plain.then(|| part.parse().ok()).flatten()
        };
        let mut parts = text.split('.');
        let (Some(y), Some(m), Some(n), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let year = number(y).filter(|_| y.len() == 4).ok_or_else(bad)?;
        let month = number(m).filter(|m| (1..=12).contains(m)).ok_or_else(bad)?;
        let n = number(n).filter(|&n| n >= 1).ok_or_else(bad)?;
        Ok(CatalogVersion {
            year: u16::try_from(year).map_err(|_| bad())?,
            month: u8::try_from(month).map_err(|_| bad())?,
            n,
        })
    }

    /// This build's catalog, [`crate::CATALOG_VERSION`].
    pub fn current() -> CatalogVersion {
        CatalogVersion::parse(crate::CATALOG_VERSION).expect("CATALOG_VERSION is YEAR.MONTH.N")
    }

    /// Whether this is this build's catalog.
    pub fn is_current(&self) -> bool {
        *self == CatalogVersion::current()
    }
}

impl fmt::Display for CatalogVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.year, self.month, self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_catalog_parses_and_prints_as_written() {
        let v = CatalogVersion::current();
        assert_eq!(v.to_string(), crate::CATALOG_VERSION);
        assert!(v.is_current());
    }

    #[test]
    fn only_year_month_n_parses() {
        let ok = |t: &str| CatalogVersion::parse(t).unwrap().to_string();
        assert_eq!(ok("2026.12.1"), "2026.12.1");
        assert_eq!(ok("2027.1.14"), "2027.1.14");
        for t in [
            "",
            "2026",
            "2026.12",
            "2026.12.1.1",
            "v2026.12.1",
            " 2026.12.1",
            "2026.12.1 ",
            "2026.13.1",
            "2026.0.1",
            "2026.12.0",
            "2026.012.1",
            "26.12.1",
            "2026.12.-1",
            "2026.12.+1",
            "2026..1",
            "unknown",
            "２０２６.12.1",
        ] {
            assert!(CatalogVersion::parse(t).is_err(), "{t:?}");
        }
        assert_eq!(
            CatalogVersion::parse("banana").unwrap_err().to_string(),
            format!(
                "\"banana\" is not a catalog version (YEAR.MONTH.N, such as {})",
                crate::CATALOG_VERSION
            )
        );
    }

    #[test]
    fn versions_order_by_year_month_then_n() {
        let v = |t: &str| CatalogVersion::parse(t).unwrap();
        assert!(v("2026.9.3") < v("2026.12.1"));
        assert!(v("2026.12.2") > v("2026.12.1"));
        assert!(v("2027.1.1") > v("2026.12.9"));
    }
}
