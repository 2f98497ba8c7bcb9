//! Memory-tool handlers: the [`Handler`] trait and memcert's own [`reference`] handler.
//!
//! A handler takes the `input` of one `tool_use` block and answers with a [`ToolResult`]. The
//! reference handler implements it over a real directory; the certifier drives third-party
//! handlers through the same shape (`target`).

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
