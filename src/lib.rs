//! memcert: certify handlers of the Claude memory tool (`memory_20250818`) for path-traversal
//! safety and spec conformance.
//!
//! Floors, in data-flow order (a module imports only from floors below it):
//! - [`protocol`], [`vpath`], [`text`]: wire types, the path grammar, every reply string;
//! - [`handler`]: the [`handler::Handler`] trait, the cap-std [`handler::reference`] handler and
//!   its in-memory [`handler::model`];
//! - [`attack`], [`suite`]: the canary oracle, the case catalog and verdicts (pure);
//! - [`target`]: how to reach a handler under test (in-process, stdio protocol, Python adapter);
//! - [`certify`]: the runner, the only module that sees both a case and a target;
//! - [`report`]: consumers of run events (terminal, JSON).
#![deny(missing_docs)]

pub mod attack;
pub mod certify;
pub mod exit;
pub mod handler;
pub mod protocol;
pub mod report;
pub mod suite;
pub mod target;
pub mod text;
pub mod vpath;
