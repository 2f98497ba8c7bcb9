//! Memory-tool handlers: the [`Handler`] trait, memcert's own [`reference`] handler and its
//! in-memory [`model`].
//!
//! A handler takes the `input` of one `tool_use` block and answers with a [`ToolResult`]. The
//! reference handler implements it over a real directory; the model implements the same
//! semantics over a tree in memory, to be compared with it (`tests/model/`, the
//! `command_sequence` fuzz target); the certifier drives third-party handlers through the same
//! shape (`target`). The logic that touches no file lives once, in a private module both use.

pub mod model;
pub(crate) mod pure;
pub mod reference;

use serde_json::Value;

use crate::protocol::ToolResult;

/// Something that answers memory-tool commands.
///
/// `input` is the raw `tool_use` input, malformed or not: a handler must answer every value
/// with a [`ToolResult`] and never panic.
pub trait Handler {
    /// Run one command and answer it.
    fn apply(&mut self, input: &Value) -> ToolResult;
}
