//! The per-case sandbox: a fresh temporary folder holding the store root, canary files around
//! it, and the case's planted files, links and FIFOs inside it.
//!
//! ```text
//! <run>/                     a fresh temp dir per case
//!   canary.txt, etc/passwd   canaries two levels above the root
//!   base/                    base_dir given to the handler
//!     canary.txt, etc/passwd canaries one level above the root
//!     memories/              the store root (/memories)
//!     memories_evil/  memories_private/  memories_backup/   sibling folders (prefix confusion)
//!     outside/               canary.txt, secret.txt, hard-source.txt, canary-<token>.txt, sub/
//! ```
//!
//! Every canary holds (and the listing-visible ones are named after) one random token, so a
//! reply that contains the token proves that outside content or names were read.
//!
//! # Ambient authority
//! Everything here works on host paths with `std::fs`, outside any capability: it is the
//! harness laying out and inspecting the scene, never a handler. Functions that do so end in
//! `_unchecked`.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::suite::{Expected, Fs, LinkTo};

/// One filesystem object as seen by `lstat` (links are never followed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// A regular file and its bytes.
    File(Vec<u8>),
    /// A directory.
    Dir,
    /// A symlink and its target text.
    Symlink(PathBuf),
    /// A FIFO, socket or device.
    Other,
}

/// A map of every object under a folder (relative path -> node and permission bits), links not
/// followed.
pub type Tree = BTreeMap<PathBuf, (Node, u32)>;

/// The sandbox of one case. The folder is removed on drop.
#[derive(Debug)]
pub struct Sandbox {
    dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    token: String,
}

impl Sandbox {
    /// Lay out a fresh sandbox and the case's `setup`.
    ///
    /// # Ambient authority
    /// Creates a temp dir and writes into it by host path.
    ///
    /// # Errors
    /// Any I/O error of the layout (a harness fault: the case is ERROR).
    pub fn create_unchecked(setup: &[Fs]) -> io::Result<Sandbox> {
        Sandbox::create_in_unchecked(&std::env::temp_dir(), "memcert-", setup)
    }

    /// [`Sandbox::create_unchecked`] with the run folder made in `parent` (a tmpfs such as
    /// `/dev/shm` for fuzzing, which writes a lot) and named `prefix` plus six random
    /// characters.
    ///
    /// # Ambient authority
    /// Creates a temp dir in `parent` and writes into it by host path.
    ///
    /// # Errors
    /// Any I/O error of the layout.
    pub fn create_in_unchecked(parent: &Path, prefix: &str, setup: &[Fs]) -> io::Result<Sandbox> {
        let dir = tempfile::Builder::new().prefix(prefix).tempdir_in(parent)?;
        let run = dir.path().to_path_buf();
        let base = run.join("base");
        let root = base.join("memories");
        let token = format!("MEMCERT-CANARY-{:016x}", fastrand::u64(..));
        let sb = Sandbox {
            dir,
            base: base.clone(),
            root: root.clone(),
            token,
        };
        std::fs::create_dir_all(&root)?;
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700))?;
        for rel in [
            "../canary.txt",
            "../etc/passwd",
            "canary.txt",
            "etc/passwd",
            "memories_evil/canary.txt",
            "memories_private/secret.txt",
            "memories_backup/secret.txt",
            "outside/canary.txt",
            "outside/secret.txt",
            "outside/hard-source.txt",
            "outside/sub/inner.txt",
        ] {
            sb.canary_unchecked(&base.join(rel))?;
        }
        // A file named after the token in every folder around the root, so a listing of any of
        // them (not only a read) shows the token.
        for dir in [
            "..",
            ".",
            "../etc",
            "etc",
            "outside",
            "outside/sub",
            "memories_evil",
            "memories_private",
            "memories_backup",
        ] {
            sb.canary_unchecked(&base.join(dir).join(format!("canary-{}.txt", sb.token)))?;
        }
        for item in setup {
            sb.plant_unchecked(item)?;
        }
        Ok(sb)
    }

    fn canary_unchecked(&self, path: &Path) -> io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        std::fs::write(path, format!("{} {name}\nSECRET line two\n", self.token))
    }

    /// The host path of a virtual path (`/memories/a` -> `<root>/a`); no checks, harness only.
    pub fn host_unchecked(&self, vpath: &str) -> PathBuf {
        let rel = vpath
            .strip_prefix("/memories")
            .unwrap_or(vpath)
            .trim_start_matches('/');
        if rel.is_empty() {
            self.root.clone()
        } else {
            self.root.join(rel)
        }
    }

    /// Plant one setup item in the store (parents created as needed), as
    /// [`Sandbox::create_unchecked`] does for each item of its `setup`.
    ///
    /// # Ambient authority
    /// Writes by host path under the store root (links are planted, never followed).
    ///
    /// # Errors
    /// Any I/O error of planting it.
    pub fn plant_unchecked(&self, item: &Fs) -> io::Result<()> {
        let parent_of = |p: &Path| -> io::Result<()> {
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            Ok(())
        };
        match item {
            Fs::Dir { path } => std::fs::create_dir_all(self.host_unchecked(path)),
            Fs::File { path, content } => {
                let p = self.host_unchecked(path);
                parent_of(&p)?;
                std::fs::write(p, content)
            }
            Fs::Lines { path, count } => {
                let p = self.host_unchecked(path);
                parent_of(&p)?;
                std::fs::write(p, "x\n".repeat(*count))
            }
            Fs::Symlink { path, target } => {
                let p = self.host_unchecked(path);
                parent_of(&p)?;
                let to = match target {
                    LinkTo::Outside(rel) if rel.is_empty() => self.base.join("outside"),
                    LinkTo::Outside(rel) => self.base.join("outside").join(rel),
                    LinkTo::Inside(v) => self.host_unchecked(v),
                    LinkTo::Raw(text) => PathBuf::from(text),
                };
                symlink(to, p)
            }
            Fs::Fifo { path } => {
                let p = self.host_unchecked(path);
                parent_of(&p)?;
                rustix::fs::mknodat(
                    rustix::fs::CWD,
                    &p,
                    rustix::fs::FileType::Fifo,
                    rustix::fs::Mode::from_raw_mode(0o600),
                    0,
                )
                .map_err(io::Error::from)
            }
            Fs::HardLinkOutside { path, name } => {
                let p = self.host_unchecked(path);
                parent_of(&p)?;
                let src = self.base.join("outside").join(name);
                if !src.exists() {
                    self.canary_unchecked(&src)?;
                }
                std::fs::hard_link(src, p)
            }
        }
    }

    /// The run folder holding everything of this case (`<tmp>/memcert-XXXXXX`).
    pub fn run_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The folder given to handlers as `base_dir`.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The store root (`base/memories`), what `/memories` maps to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The random token every canary holds.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Host path spellings a reply must never contain: the run folder, as created and
    /// canonicalised, and its random name (`memcert-XXXXXX`), which catches relative spellings.
    pub fn host_paths(&self) -> Vec<String> {
        let mut v = vec![self.dir.path().to_string_lossy().into_owned()];
        if let Some(name) = self.dir.path().file_name() {
            v.push(name.to_string_lossy().into_owned());
        }
        if let Ok(c) = self.dir.path().canonicalize() {
            let c = c.to_string_lossy().into_owned();
            if !v.contains(&c) {
                v.push(c);
            }
        }
        v
    }

    /// Everything in the run folder except the store root's subtree.
    ///
    /// # Ambient authority
    /// Walks the run folder by host path, never following links.
    pub fn outside_unchecked(&self) -> Tree {
        let mut tree = Tree::new();
        walk_unchecked(self.dir.path(), self.dir.path(), &self.root, &mut tree);
        tree
    }

    /// Store files (not links) whose content holds the canary token: outside content copied
    /// into the store. Virtual paths, sorted.
    ///
    /// # Ambient authority
    /// Walks the store root by host path, never following links.
    pub fn token_in_store_unchecked(&self) -> Vec<String> {
        let mut tree = Tree::new();
        walk_unchecked(&self.root, &self.root, Path::new(""), &mut tree);
        // A planted hard link is the outside file itself; changes to it show in the outside diff.
        tree.iter()
            .filter(|(p, _)| {
                std::fs::symlink_metadata(self.root.join(p))
                    .map(|m| std::os::unix::fs::MetadataExt::nlink(&m) == 1)
                    .unwrap_or(false)
            })
            .filter(|(_, (n, _))| match n {
                Node::File(bytes) => bytes
                    .windows(self.token.len())
                    .any(|w| w == self.token.as_bytes()),
                _ => false,
            })
            .map(|(p, _)| format!("/memories/{}", p.display()))
            .collect()
    }

    /// What is at a virtual path now (links not followed); `None` when nothing is there.
    ///
    /// # Ambient authority
    /// `lstat` and read by host path.
    pub fn node_unchecked(&self, vpath: &str) -> Option<Node> {
        node_at(&self.host_unchecked(vpath))
    }
}

/// Every object under `dir` (relative paths), links not followed.
///
/// # Ambient authority
/// Walks a host folder by path.
pub fn tree_unchecked(dir: &Path) -> Tree {
    let mut tree = Tree::new();
    walk_unchecked(dir, dir, Path::new(""), &mut tree);
    tree
}

fn node_at(p: &Path) -> Option<Node> {
    let meta = std::fs::symlink_metadata(p).ok()?;
    let ft = meta.file_type();
    Some(if ft.is_symlink() {
        Node::Symlink(std::fs::read_link(p).unwrap_or_default())
    } else if ft.is_dir() {
        Node::Dir
    } else if ft.is_file() {
        Node::File(std::fs::read(p).unwrap_or_default())
    } else {
        Node::Other
    })
}

fn walk_unchecked(top: &Path, dir: &Path, skip: &Path, out: &mut Tree) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p == skip {
            continue;
        }
        let Some(node) = node_at(&p) else { continue };
        let mode = std::fs::symlink_metadata(&p)
            .map(|m| m.permissions().mode() & 0o7777)
            .unwrap_or(0);
        let rel = p.strip_prefix(top).unwrap_or(&p).to_path_buf();
        let is_dir = node == Node::Dir;
        out.insert(rel, (node, mode));
        if is_dir {
            walk_unchecked(top, &p, skip, out);
        }
    }
}

/// True when `node` is what `expected` asks for.
pub fn satisfies(node: Option<&Node>, expected: &Expected) -> bool {
    match (expected, node) {
        (Expected::Absent, None) => true,
        (Expected::Dir, Some(Node::Dir)) => true,
        (Expected::Symlink, Some(Node::Symlink(_))) => true,
        (Expected::File(want), Some(Node::File(got))) => want == got,
        _ => false,
    }
}
