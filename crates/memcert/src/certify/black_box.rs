//! Black-box mode's set-up ([`Config::black_box`](super::Config::black_box)): a case's planted
//! files as `create` commands sent through the handler itself, or why the case cannot run that
//! way.

use serde_json::Value;

use crate::suite::Case;

/// The `create` commands that lay out a case's planted files through the handler itself, for
/// black-box mode ([`Config::black_box`](super::Config::black_box)), or why the case cannot run
/// that way. Folders come with the files created in them; an empty folder that no command names
/// is left out.
///
/// # Errors
/// The reason the case is SKIPPED: a planted item `create` cannot make.
pub fn black_box_prelude(case: &Case) -> Result<Vec<Value>, String> {
    use crate::suite::Fs;
    if case.race.is_some() {
        return Err("a race swaps folders on disk; the handler's store is not on the filesystem (black-box mode)".into());
    }
    let mut creates = Vec::new();
    for item in &case.setup {
        let (path, text) = match item {
            Fs::File { path, content } => match String::from_utf8(content.clone()) {
                Ok(text) => (path, text),
                Err(_) => {
                    return Err(format!(
                        "needs {path} planted with bytes that are not UTF-8, which create cannot write (black-box mode)"
                    ))
                }
            },
            Fs::Lines { path, count } => (path, "x\n".repeat(*count)),
            Fs::Dir { path } => {
                let prefix = format!("{}/", path.trim_end_matches('/'));
                let filled = case.setup.iter().any(|other| match other {
                    Fs::File { path: p, .. } | Fs::Lines { path: p, .. } => p.starts_with(&prefix),
                    _ => false,
                });
                // An empty folder no command names only furnishes the store (the root cases
                // plant one so that deleting the root would lose something): left out.
                let named = case.steps.iter().any(|step| {
                    crate::protocol::strings_in(&step.input)
                        .iter()
                        .any(|s| s.starts_with(path.trim_end_matches('/')))
                });
                if filled || !named {
                    continue;
                }
                return Err(format!(
                    "needs the empty folder {path} planted, which create cannot make (black-box mode)"
                ));
            }
            Fs::Symlink { path, .. } => {
                return Err(format!("needs the symlink {path} planted on disk (black-box mode)"))
            }
            Fs::Fifo { path } => {
                return Err(format!("needs the FIFO {path} planted on disk (black-box mode)"))
            }
            Fs::HardLinkOutside { path, .. } => {
                return Err(format!("needs the hard link {path} planted on disk (black-box mode)"))
            }
            Fs::Socket { path } => {
                return Err(format!("needs the socket {path} planted on disk (black-box mode)"))
            }
            Fs::CharDevice { path, .. } => {
                return Err(format!(
                    "needs the character device {path} planted on disk (black-box mode)"
                ))
            }
            Fs::Sparse { path, len } => {
                return Err(format!(
                    "needs the sparse file {path} of {len} bytes planted on disk (black-box mode)"
                ))
            }
            Fs::Mode { path, .. } => {
                return Err(format!(
                    "needs permission bits set on {path} on disk (black-box mode)"
                ))
            }
            Fs::RawName { dir, .. } => {
                return Err(format!(
                    "needs a file name in {dir} that is not UTF-8, which create cannot spell (black-box mode)"
                ))
            }
            Fs::RootSymlink { .. } => {
                return Err("needs the store root replaced by a link on disk (black-box mode)".into())
            }
            Fs::RootFifo | Fs::RootFile { .. } => {
                return Err("needs the store root replaced on disk (black-box mode)".into())
            }
            Fs::ManyFiles { dir, count } => {
                return Err(format!(
                    "needs {count} files planted in {dir}; black-box set-up makes files one create at a time and stops at {MAX_PRELUDE}"
                ))
            }
            Fs::DeepChain { path, depth } => {
                let mut p = path.trim_end_matches('/').to_owned();
                for _ in 0..*depth {
                    p.push_str("/d");
                }
                creates.push(serde_json::json!({"command": "create", "path": format!("{p}/bottom.txt"), "file_text": "bottom\n"}));
                continue;
            }
        };
        creates.push(serde_json::json!({"command": "create", "path": path, "file_text": text}));
    }
    if creates.len() > MAX_PRELUDE {
        return Err(format!(
            "needs {} files planted; black-box set-up stops at {MAX_PRELUDE} creates",
            creates.len()
        ));
    }
    Ok(creates)
}

/// Most `create` commands a black-box set-up sends for one case.
pub const MAX_PRELUDE: usize = 100;
