//! memcert: certify handlers of the Claude memory tool (`memory_20250818`) for path-traversal
//! safety and spec conformance.
//!
//! This crate runs cases; the layers below it are their own crates, re-exported here under the
//! names the rest of memcert uses, so one dependency gives a Rust user the whole API:
//! - [`protocol`], [`vpath`], [`text`], [`handler`] (crate `memcert-tool`): wire types, the path
//!   grammar, every reply string, the [`handler::Handler`] trait and the reference handler;
//! - [`suite`] (crate `memcert-cases`): the case catalog, verdicts, payloads and scenarios.
//!
//! Its own modules, in data-flow order:
//! - [`scratch`]: memcert's own working folders, private and handled by directory handles only,
//!   and the StrictModes check of folders a user names;
//! - [`attack`]: the sandbox a case runs in (canaries planted around the store root) and the
//!   canary oracle;
//! - [`stop`]: when a run must stop early (a signal, the run's deadline), shared by every wait;
//! - [`target`]: how to reach a handler under test (in-process, stdio protocol, Python, Node);
//! - [`expected`]: the expected-failures list a run is judged against;
//! - [`baseline`]: response-format snapshots of a handler's answers (insta's `.snap` format),
//!   their redaction rules and the comparison of a run with them;
//! - [`select`]: which cases a run takes (a level narrowed by case-id globs);
//! - [`setup`]: a run set up from plain descriptions (the handler under test started, the
//!   baseline policy), as `memcert certify` and `snapshot` set theirs up;
//! - [`certify`]: the runner, the only module that sees both a case and a target;
//! - [`report`]: consumers of run events (terminal, JSON, JUnit XML, Markdown, HTML);
//! - [`fuzz`]: command sequences over a planted layout and the functions the fuzz targets call;
//! - [`certify()`], [`Options`], [`Certification`]: the in-process entry point for Rust users,
//!   which certifies any [`handler::Handler`] from a test.
#![deny(missing_docs)]

pub use api::{certify, Certification, Error, Options};
pub use memcert_cases as suite;
pub use memcert_tool::{handler, protocol, text, vpath};

mod api;
pub mod attack;
pub mod baseline;
pub mod certify;
pub mod contain;
pub mod exit;
pub mod expected;
pub mod fuzz;
pub mod report;
pub mod scratch;
pub mod select;
pub mod setup;
pub mod stop;
pub mod target;
