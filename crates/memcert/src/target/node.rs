//! The Node adapter: `adapters/node/memcert_adapter.mjs`, embedded in the binary and written out
//! at run time, loads a memory handler for the TypeScript SDK (a class like
//! `BetaLocalFilesystemMemoryTool`, built with its static `init(baseDir)`, or a factory
//! `makeHandler(baseDir)`) and serves it over stdio protocol v1, calling it through the SDK's
//! `betaMemoryTool` and rendering results and errors as the SDK's tool runner does.

use std::path::Path;

use crate::scratch::Scratch;
use std::process::Command;

/// The adapter's source.
pub const ADAPTER_SOURCE: &str = include_str!("../../../../adapters/node/memcert_adapter.mjs");

/// Write the adapter into `dir` and build the command that runs it on `spec`
/// (`path/to/module.mjs:exportName` or `package/subpath:exportName`) with the interpreter
/// `node`; `node_path` is a folder whose `node_modules` holds `@anthropic-ai/sdk` when neither
/// the handler's folder nor the current one has it.
///
/// # Errors
/// The I/O error of writing the adapter file.
pub fn adapter_command(
    dir: &Scratch,
    node: &str,
    spec: &str,
    node_path: Option<&Path>,
) -> std::io::Result<Command> {
    // Made new through the folder's handle, never through a link; readable by all (a handler
    // run as nobody, `crate::contain`, reads it; it is public code).
    let name = "memcert_adapter.mjs";
    dir.write_public(name, ADAPTER_SOURCE.as_bytes())?;
    let script = dir.path().join(name);
    let mut cmd = Command::new(node);
    cmd.arg(script).arg("--handler").arg(spec);
    if let Some(p) = node_path {
        cmd.arg("--node-path").arg(p);
    }
    Ok(cmd)
}
