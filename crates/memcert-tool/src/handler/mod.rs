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
pub use pure::reply;
pub mod reference;

use std::io;
use std::path::Path;

use serde_json::Value;

use crate::protocol::ToolResult;

/// Something that answers memory-tool commands.
///
/// `input` is the raw `tool_use` input, malformed or not: a handler must answer every value
/// with a [`ToolResult`] and never panic.
pub trait Handler {
    /// Run one command and answer it.
    fn apply(&mut self, input: &Value) -> ToolResult;

    /// Start over on a fresh store for the next test case (`memcert::certify` calls it before
    /// every case): `memories_dir` is the existing folder the model calls `/memories`, holding
    /// the case's planted files, and `base_dir` its parent. Drop every cache and open handle of
    /// the previous case. A handler whose store is not a folder (a database, a dict) clears it,
    /// ignores the paths, and is certified with `Options::black_box`.
    ///
    /// # Errors
    /// Any I/O error of opening the store; the case is then ERROR. The default implementation
    /// returns [`io::ErrorKind::Unsupported`]: implement it to certify a handler in-process.
    fn reset(&mut self, base_dir: &Path, memories_dir: &Path) -> io::Result<()> {
        let _ = (base_dir, memories_dir);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this handler does not implement Handler::reset, which memcert needs to give it a fresh store per case",
        ))
    }
}
