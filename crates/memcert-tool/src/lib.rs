//! memcert-tool: the Claude memory tool (`memory_20250818`) itself, with no certification in it.
//!
//! - [`protocol`]: the wire types of a `tool_use` input and a `tool_result` reply;
//! - [`vpath`]: the `/memories` path grammar (decode, normalise, confine);
//! - [`text`]: every reply string, per profile (the documentation, the pinned Python and
//!   TypeScript SDK handlers), as data;
//! - [`handler`]: the [`handler::Handler`] trait, the race-free cap-std
//!   [`handler::reference::Reference`] handler and its in-memory [`handler::model`].
//!
//! A Rust application can use [`handler::reference::Reference`] as its memory handler: every
//! file operation goes through a directory handle opened once on the store root, so `..`,
//! absolute paths and symbolic links (including ones swapped in while a command runs) cannot
//! reach outside it. What it does not guarantee is in `crates/memcert-tool/README.md`.
#![deny(missing_docs)]

pub mod handler;
pub mod protocol;
pub mod text;
pub mod vpath;
