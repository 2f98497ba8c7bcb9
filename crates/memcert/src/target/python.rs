//! The Python adapter: `adapters/python/memcert_adapter.py`, embedded in the binary and written
//! out at run time, loads a `BetaAbstractMemoryTool` (or `BetaAsyncAbstractMemoryTool`) subclass
//! and serves it over stdio protocol v1, calling and rendering it as the SDK's tool runner does.

use crate::scratch::Scratch;
use std::process::Command;

/// The adapter's source.
pub const ADAPTER_SOURCE: &str = include_str!("../../../../adapters/python/memcert_adapter.py");

/// Write the adapter into `dir` and build the command that runs it on `spec`
/// (`path/to/file.py:ClassName` or `package.module:ClassName`) with the interpreter `python`.
///
/// # Errors
/// The I/O error of writing the adapter file.
pub fn adapter_command(dir: &Scratch, python: &str, spec: &str) -> std::io::Result<Command> {
    // Made new through the folder's handle, never through a link; readable by all (a handler
    // run as nobody, `crate::contain`, reads it; it is public code).
    let name = "memcert_adapter.py";
    dir.write_public(name, ADAPTER_SOURCE.as_bytes())?;
    let script = dir.path().join(name);
    let mut cmd = Command::new(python);
    cmd.arg(script)
        .arg("--handler")
        .arg(spec)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1");
    Ok(cmd)
}
