//! The in-process entry point for Rust users: [`certify`] a [`Handler`] from a test.
//!
//! # Non-guarantees
//! - An in-process handler cannot be contained ([`crate::contain`] contains handler
//!   *processes*): it runs with the rights of the test that calls [`certify`], and its reports
//!   say so (`containment: none`). Certify untrusted code as a process (`memcert certify
//!   --stdio`, `--python`, `--node`).

use crate::certify::{self as runner, CaseRecord, Config, Summary};
use crate::expected::ExpectedFailures;
use crate::handler::Handler;
use crate::select::{SelectError, Selection};
use crate::suite::catalog::RunLevel;
use crate::target::inproc::Borrowed;
use crate::text::Profile;

/// What [`certify`] runs. The default: profile `docs`, not strict, level `standard`, every case,
/// nothing expected to fail, the handler's store is the `memories_dir` it is given.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Which wording is PASS (`--profile`).
    pub profile: Profile,
    /// NON-STRICT becomes FAIL (`--strict`).
    pub strict: bool,
    /// How many cases (`--level`).
    pub level: RunLevel,
    /// Only case ids matching one of these globs; all when empty (`--cases`).
    pub cases: Vec<String>,
    /// Leave out case ids matching these globs (`--exclude`).
    pub exclude: Vec<String>,
    /// Known failures that do not stop certification (`--expected-failures`).
    pub expected: ExpectedFailures,
    /// The handler does not keep its files in the folder it is given (`--memory-dir-unknown`,
    /// see [`Config::black_box`]).
    pub black_box: bool,
    /// The handler's name in reports; `Rust handler` when empty.
    pub name: String,
}

impl Options {
    /// The cases these options select ([`Options::level`], [`Options::cases`],
    /// [`Options::exclude`]).
    pub fn selection(&self) -> Selection {
        Selection {
            level: self.level,
            include: self.cases.clone(),
            exclude: self.exclude.clone(),
        }
    }
}

/// Why [`certify`] could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A glob of [`Options::cases`] or [`Options::exclude`] does not parse.
    #[error("bad case glob: {0}")]
    Glob(#[from] globset::Error),
    /// The globs leave no case.
    #[error("no case matches the case globs; `memcert cases` lists the ids")]
    NoCase,
}

/// The outcome of [`certify`]: the totals and every case, in run order.
#[derive(Clone, Debug)]
pub struct Certification {
    /// Totals, and whether the handler is certified.
    pub summary: Summary,
    /// Every case with its replies, findings and verdict.
    pub cases: Vec<CaseRecord>,
}

impl Certification {
    /// The terminal report (what `memcert certify` prints).
    pub fn report(&self) -> String {
        crate::report::terminal::render(&self.summary, &self.cases)
    }

    /// Panic with the terminal report unless the handler is certified: the one-line assertion
    /// for a `#[test]`.
    ///
    /// # Panics
    /// When any case is UNSAFE, FAIL or ERROR outside the expected failures, or an expected
    /// failure is stale.
    #[track_caller]
    pub fn assert_certified(&self) {
        if !self.summary.certified {
            panic!("the handler is not certified:\n{}", self.report());
        }
    }
}

/// Certify a Rust handler in-process: run the case catalog against `handler` as
/// `memcert certify` runs the reference handler, and grade every case.
///
/// Before each case memcert lays out a fresh sandbox (the store with the case's planted files,
/// canaries around it) and calls [`Handler::reset`] with its folders; the handler must keep its
/// files in `memories_dir` (or run with [`Options::black_box`]). Then it sends the case's
/// commands through [`Handler::apply`] and judges the replies and the disk.
///
/// ```no_run
/// # use memcert::handler::reference::{Options as RefOptions, Reference};
/// # use memcert::text::Profile;
/// let mut handler = Reference::open_ambient(
///     std::path::Path::new("/tmp/placeholder/memories"), Profile::Docs, RefOptions::default())?;
/// let run = memcert::certify(&mut handler, &memcert::Options::default())?;
/// run.assert_certified();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`Error`] when the case globs are bad or select nothing. A handler's faults are verdicts,
/// never errors.
pub fn certify<H: Handler + ?Sized>(
    handler: &mut H,
    options: &Options,
) -> Result<Certification, Error> {
    let cases = options.selection().cases().map_err(|e| match e {
        SelectError::Glob(e) => Error::Glob(e),
        SelectError::NoCase => Error::NoCase,
    })?;
    let config = Config {
        profile: options.profile,
        strict: options.strict,
        expected: options.expected.clone(),
        black_box: options.black_box,
        ..Config::default()
    };
    let name = if options.name.is_empty() {
        "Rust handler".to_owned()
    } else {
        options.name.clone()
    };
    let mut target = Borrowed::new(name, handler);
    let (summary, cases) = runner::run_collect(&config, &cases, &mut target);
    Ok(Certification { summary, cases })
}
