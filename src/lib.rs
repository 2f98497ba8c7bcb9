//! memcert: certify handlers of the Claude memory tool (`memory_20250818`) for path-traversal
//! safety and spec conformance.
//!
//! Floors, in data-flow order (a module imports only from floors below it):
//! - [`protocol`], [`vpath`], [`text`]: wire types, the path grammar, every reply string;
//! - [`handler`]: the [`handler::Handler`] trait, the cap-std [`handler::reference`] handler and
//!   its in-memory [`handler::model`];
//! - [`attack`], [`suite`]: the canary oracle, the case catalog and verdicts (pure);
//! - [`target`]: how to reach a handler under test (in-process, stdio protocol, Python adapter);
//! - [`expected`]: the expected-failures list a run is judged against;
//! - [`baseline`]: response-format snapshots of a handler's answers (insta's `.snap` format),
//!   their redaction rules and the comparison of a run with them;
//! - [`certify`]: the runner, the only module that sees both a case and a target;
//! - [`transcript`]: recorded conversations (a model's tool_use turns and the replies each accepts);
//! - [`mockapi`] (feature `mockapi`): a mock Messages API replaying transcripts to an app;
//! - [`appcert`] (feature `mockapi`): certify a whole app through the mock, one case per
//!   transcript;
//! - [`report`]: consumers of run events (terminal, JSON, JUnit XML, Markdown, HTML);
//! - [`certify()`], [`Options`], [`Certification`]: the in-process entry point for Rust users,
//!   which certifies any [`handler::Handler`] from a test.
#![deny(missing_docs)]

pub use api::{certify, Certification, Error, Options};

mod api;
#[cfg(feature = "mockapi")]
pub mod appcert;
pub mod attack;
pub mod baseline;
pub mod certify;
pub mod exit;
pub mod expected;
pub mod handler;
#[cfg(feature = "mockapi")]
pub mod mockapi;
pub mod protocol;
#[cfg(feature = "mockapi")]
pub mod record;
pub mod report;
pub mod suite;
pub mod target;
pub mod text;
pub mod transcript;
pub mod vpath;
