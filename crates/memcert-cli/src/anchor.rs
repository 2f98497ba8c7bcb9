//! Where the results of `--sarif` point: a file of the repository, as a repository-relative URI.
//!
//! Code scanning rejects a result without a location and accepts only repository-relative URIs,
//! so every SARIF result names one file. memcert judges a handler by its answers, not by its
//! source lines, so that file is the handler itself, found from the flags ([`anchor`]).

use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Context, Result};
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

use crate::args::{AppArgs, HandlerArgs};

/// Characters percent-encoded in a URI path segment (RFC 3986: everything but unreserved
/// characters and the sub-delimiters a path keeps).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b']')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// The repository root results are relative to: `$GITHUB_WORKSPACE` when set (what code
/// scanning resolves URIs against on GitHub), else the nearest folder from the current one up
/// that holds `.git` (a checkout, in any CI), else the current folder.
pub fn repository_root() -> Result<PathBuf> {
    let root = match std::env::var_os("GITHUB_WORKSPACE").filter(|v| !v.is_empty()) {
        Some(w) => PathBuf::from(w),
        None => {
            let here = std::env::current_dir()
                .context("cannot read the current folder")?
                .canonicalize()
                .context("cannot resolve the current folder")?;
            here.ancestors()
                .find(|d| d.join(".git").exists())
                .unwrap_or(&here)
                .to_path_buf()
        }
    };
    root.canonicalize()
        .with_context(|| format!("cannot resolve the repository root {}", root.display()))
}

/// The workflow file of a GitHub Actions run, from `$GITHUB_WORKFLOW_REF`
/// (`owner/repo/.github/workflows/memcert.yml@refs/heads/main`): `.github/workflows/memcert.yml`.
fn workflow_file() -> Option<PathBuf> {
    let r = std::env::var("GITHUB_WORKFLOW_REF").ok()?;
    let (path, _) = r.rsplit_once('@')?;
    let mut parts = path.splitn(3, '/');
    let (_, _, file) = (parts.next()?, parts.next()?, parts.next()?);
    Some(PathBuf::from(file))
}

/// `file` as a URI relative to `root` (`/`-separated, each segment percent-encoded), when it
/// names a regular file inside `root`; `None` otherwise (missing, a folder, outside `root`).
pub fn relative_uri(root: &Path, file: &Path) -> Option<String> {
    let abs = std::fs::canonicalize(file).ok()?;
    if !abs.is_file() {
        return None;
    }
    let rel = abs.strip_prefix(root).ok()?;
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => {
                parts.push(utf8_percent_encode(s.to_str()?, SEGMENT).to_string());
            }
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The files the flags name, most specific first: `--python FILE.py:Class` (or a dotted module
/// as `a/b.py` or `a/b/__init__.py`), `--node FILE:Export`, then each word of `--stdio` or
/// `--app`.
fn candidates(handler: &HandlerArgs, app: &AppArgs) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some((module, _)) = handler.python.as_deref().and_then(|s| s.rsplit_once(':')) {
        if module.ends_with(".py") {
            out.push(PathBuf::from(module));
        } else {
            let as_path: PathBuf = module.split('.').collect();
            out.push(as_path.with_extension("py"));
            out.push(as_path.join("__init__.py"));
        }
    }
    if let Some((module, _)) = handler.node.as_deref().and_then(|s| s.rsplit_once(':')) {
        out.push(PathBuf::from(module));
    }
    for line in [&handler.stdio, &app.app].into_iter().flatten() {
        out.extend(
            shell_words::split(line)
                .unwrap_or_default()
                .into_iter()
                .map(PathBuf::from),
        );
    }
    out
}

/// The URI every SARIF result points at: `--sarif-location FILE` when given (it must be a file
/// inside the repository), else the first file the handler's flags name that lies inside the
/// repository ([`repository_root`]), else `memcert.toml` in the current folder, else the
/// workflow file of a GitHub Actions run (`$GITHUB_WORKFLOW_REF`).
///
/// # Errors
/// `--sarif-location` outside the repository or not a file; or no flag names a file of the
/// repository (the built-in reference handler, a handler from an installed package, an
/// interpreter outside the repository): the error asks for `--sarif-location`.
pub fn anchor(given: Option<&Path>, handler: &HandlerArgs, app: &AppArgs) -> Result<String> {
    let root = repository_root()?;
    if let Some(file) = given {
        return relative_uri(&root, file).with_context(|| {
            format!(
                "--sarif-location {} is not a file inside the repository {}",
                file.display(),
                root.display()
            )
        });
    }
    let handler_files = candidates(handler, app);
    // Without a handler file (a handler from an installed package): the config that named it,
    // else the workflow that ran memcert.
    let fallbacks = [
        Some(PathBuf::from(crate::config::FILE_NAME)),
        workflow_file().map(|f| root.join(f)),
    ];
    for file in handler_files
        .into_iter()
        .chain(fallbacks.into_iter().flatten())
    {
        if let Some(uri) = relative_uri(&root, &file) {
            return Ok(uri);
        }
    }
    bail!(
        "--sarif needs a file of the repository for its results to point at (code scanning rejects results without one), and the handler's flags name none inside {}; give --sarif-location FILE",
        root.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_relative_encoded_and_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src/my handlers")).unwrap();
        std::fs::write(root.join("src/my handlers/h#1.py"), "").unwrap();
        assert_eq!(
            relative_uri(&root, &root.join("src/my handlers/h#1.py")).as_deref(),
            Some("src/my%20handlers/h%231.py")
        );
        assert_eq!(relative_uri(&root, &root.join("src")), None);
        assert_eq!(relative_uri(&root, &root.join("missing.py")), None);
        let outside = tempfile::NamedTempFile::new().unwrap();
        assert_eq!(relative_uri(&root, outside.path()), None);
    }
}
