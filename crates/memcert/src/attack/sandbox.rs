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
//! # The alias
//! Next to the run folder (in the same temp folder) memcert makes a second fresh folder,
//! `memcert-alias-XXXXXX`, laid out like it where upward and absolute payloads aim (`canary.txt`,
//! `base/canary.txt`, `base/outside/` with `canary.txt`, `secret.txt` and the token-named
//! canary, an empty `base/memories/`), with the same token, and removes it with the sandbox
//! ([`Sandbox::alias`]). Inputs that must name the sandbox by an absolute or upward path
//! (`{RUN}`, `{DOWN:d}`) name the alias instead, so the run folder's real host path never
//! appears in any input: any spelling of it in a reply is information the handler added
//! (bug:B07). The alias is a real folder, not a link, so a handler that refuses paths through
//! links is tested as it would be with a real absolute path; it is walked with the outside
//! ([`Sandbox::outside_unchecked`], under its own name), so anything read, written or removed
//! there is caught like anywhere outside the root.
//!
//! The case's setup ([`Fs`] items, named scenarios in `attack::scenarios`) is laid out inside
//! `memories/` in order, after the canaries. A [`Fs::RootSymlink`] replaces `memories/` itself
//! with a link ([`Fs::RootFifo`], [`Fs::RootFile`]: with a FIFO, a regular file); the store is then empty (nothing of the outside is counted as in the store) and
//! the root is not followed by any walk here. Permission bits ([`Fs::Mode`]) are given back
//! (`u+rwx` on every folder) before the folder is removed.
//!
//! # Ambient authority
//! Everything here works on host paths with `std::fs`, outside any capability: it is the
//! harness laying out and inspecting the scene, never a handler. Functions that do so end in
//! `_unchecked`.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::ffi::OsStrExt;
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
    dir: RunDir,
    base: PathBuf,
    root: PathBuf,
    token: String,
    /// Some [`Fs::Mode`] was planted: folders must be made writable again before removal.
    modes: bool,
    /// The link to the run folder that inputs name instead of it (`None` when it could not be
    /// made: inputs then name the run folder itself).
    alias: Option<Alias>,
}

/// The folder `memcert-alias-XXXXXX` inputs name instead of the run folder ([module
/// docs](self)); removed on drop.
#[derive(Debug)]
struct Alias {
    dir: tempfile::TempDir,
}

impl Alias {
    /// Make a fresh alias in `parent_dir` under a name no spelling of `secrets` is part of (a
    /// few tries), with the canaries of the token `token` where payloads aim.
    ///
    /// # Ambient authority
    /// Creates a temp dir in `parent_dir` and writes into it by host path.
    fn make_unchecked(parent_dir: &Path, secrets: &[String], token: &str) -> io::Result<Alias> {
        let mut last = io::Error::other("no alias name was free");
        for _ in 0..8 {
            let dir = match tempfile::Builder::new()
                .prefix("memcert-alias-")
                .tempdir_in(parent_dir)
            {
                Ok(d) => d,
                Err(e) => {
                    last = e;
                    continue;
                }
            };
            let text = dir.path().to_string_lossy();
            if secrets
                .iter()
                .any(|s| !s.is_empty() && text.contains(s.as_str()))
            {
                continue;
            }
            let top = dir.path();
            std::fs::create_dir_all(top.join("base/outside"))?;
            std::fs::create_dir_all(top.join("base/memories"))?;
            for rel in [
                "canary.txt".to_owned(),
                "base/canary.txt".to_owned(),
                "base/outside/canary.txt".to_owned(),
                "base/outside/secret.txt".to_owned(),
                format!("base/outside/canary-{token}.txt"),
            ] {
                let name = Path::new(&rel)
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("");
                std::fs::write(top.join(&rel), format!("{token} {name}\nSECRET line two\n"))?;
            }
            return Ok(Alias { dir });
        }
        Err(last)
    }
}

/// Where case sandboxes are made: `$TMPDIR` when it is set (the user's choice); otherwise
/// `/dev/shm` when it is a writable tmpfs folder with at least 1 GiB free (laying out and
/// walking some 25 canaries per case costs about a third of what it costs on a disk, which makes
/// the harness's own time per case about 1 ms); otherwise the system temp folder. Decided once
/// per process.
pub fn default_parent() -> &'static Path {
    static PARENT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PARENT.get_or_init(|| {
        if std::env::var_os("TMPDIR").is_some() {
            return std::env::temp_dir();
        }
        let shm = Path::new("/dev/shm");
        let roomy = rustix::fs::statvfs(shm)
            .map(|s| s.f_bavail.saturating_mul(s.f_frsize) >= 1 << 30)
            .unwrap_or(false);
        let writable = rustix::fs::access(shm, rustix::fs::Access::WRITE_OK).is_ok();
        if shm.is_dir() && roomy && writable {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        }
    })
}

/// The run folder: a fresh temp dir, or a folder the user named that was absent or empty
/// (emptied again on drop, removed if memcert made it).
#[derive(Debug)]
enum RunDir {
    Temp(tempfile::TempDir),
    At { path: PathBuf, existed: bool },
}

impl RunDir {
    fn path(&self) -> &Path {
        match self {
            RunDir::Temp(t) => t.path(),
            RunDir::At { path, .. } => path,
        }
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if let RunDir::At { path, existed } = self {
            if *existed {
                // Empty it again, keeping the folder itself (its mode and owner).
                for entry in std::fs::read_dir(&*path).into_iter().flatten().flatten() {
                    let p = entry.path();
                    let _ = match entry.file_type() {
                        Ok(t) if t.is_dir() => std::fs::remove_dir_all(&p),
                        _ => std::fs::remove_file(&p),
                    };
                }
            } else {
                let _ = std::fs::remove_dir_all(&*path);
            }
        }
    }
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
        Sandbox::create_in_unchecked(default_parent(), "memcert-", setup)
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
        Sandbox::lay_out_unchecked(RunDir::Temp(dir), run.join("base/memories"), setup)
    }

    /// Lay out a fresh sandbox whose store root is `root` (an app's fixed memory folder), with
    /// `root`'s parent as the base and its grandparent as the run folder. The run folder must be
    /// absent or empty: memcert never writes among files it did not make. On drop the run folder
    /// is emptied (removed if it was absent).
    ///
    /// # Ambient authority
    /// Creates and writes the run folder by host path.
    ///
    /// # Errors
    /// `root` with a `..` component or without two parents, a run folder that is a symbolic
    /// link or not empty, or any I/O error.
    pub fn create_at_unchecked(root: &Path, setup: &[Fs]) -> io::Result<Sandbox> {
        if root
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{}: a memory folder with `..` in it is refused (its folders two levels up would not be the ones written); name the folder without `..`",
                    root.display()
                ),
            ));
        }
        let run = root
            .parent()
            .and_then(Path::parent)
            .filter(|p| !p.as_os_str().is_empty())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} needs two parent folders for the canaries",
                        root.display()
                    ),
                )
            })?
            .to_path_buf();
        if std::fs::symlink_metadata(&run).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} (two levels above the memory folder, where the canaries go) is a symbolic link; name the real folder",
                    run.display()
                ),
            ));
        }
        let existed = match std::fs::read_dir(&run) {
            Ok(mut entries) => {
                if entries.next().is_some() {
                    return Err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        format!(
                            "{} (two levels above the memory folder, where the canaries go) is not empty; memcert only lays out a sandbox in an absent or empty folder",
                            run.display()
                        ),
                    ));
                }
                true
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir_all(&run)?;
                false
            }
            Err(e) => return Err(e),
        };
        let dir = RunDir::At { path: run, existed };
        Sandbox::lay_out_unchecked(dir, root.to_path_buf(), setup)
    }

    fn lay_out_unchecked(dir: RunDir, root: PathBuf, setup: &[Fs]) -> io::Result<Sandbox> {
        let base = root
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| root.clone());
        let token = format!("MEMCERT-CANARY-{:016x}", fastrand::u64(..));
        let mut sb = Sandbox {
            dir,
            base: base.clone(),
            root: root.clone(),
            token,
            modes: false,
            alias: None,
        };
        // The alias goes in the temp folder next to a temp run folder, so upward paths from the
        // store reach it as they would reach the run folder; a folder the user named gets one
        // in the temp folder.
        let run = sb.dir.path().to_path_buf();
        let alias_parent = match &sb.dir {
            RunDir::Temp(_) => run
                .parent()
                .map_or_else(|| default_parent().to_path_buf(), Path::to_path_buf),
            RunDir::At { .. } => default_parent().to_path_buf(),
        };
        sb.alias = Some(Alias::make_unchecked(
            &alias_parent,
            &sb.host_paths(),
            &sb.token,
        )?);
        std::fs::create_dir_all(&root)?;
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700))?;
        // The folders around the root, made once (the canaries below are written straight in).
        for rel in [
            "../etc",
            "etc",
            "memories_evil",
            "memories_private",
            "memories_backup",
            "outside",
            "outside/sub",
        ] {
            match std::fs::create_dir(base.join(rel)) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
        }
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
            sb.write_canary_unchecked(&base.join(rel))?;
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
            sb.write_canary_unchecked(&base.join(dir).join(format!("canary-{}.txt", sb.token)))?;
        }
        sb.modes = setup.iter().any(|f| matches!(f, Fs::Mode { .. }));
        for item in setup {
            sb.plant_unchecked(item)?;
        }
        Ok(sb)
    }

    fn canary_unchecked(&self, path: &Path) -> io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        self.write_canary_unchecked(path)
    }

    /// A canary file in a folder that exists.
    fn write_canary_unchecked(&self, path: &Path) -> io::Result<()> {
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
                symlink(self.link_target(target), p)
            }
            Fs::Fifo { path } => {
                let p = self.host_unchecked(path);
                parent_of(&p)?;
                mknod_unchecked(&p, rustix::fs::FileType::Fifo)
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
            Fs::Socket { path } => {
                let p = self.host_unchecked(path);
                parent_of(&p)?;
                // mknod(S_IFSOCK) makes the file a bound socket leaves, without binding one (no
                // 108-byte sun_path limit on the sandbox path).
                mknod_unchecked(&p, rustix::fs::FileType::Socket)
            }
            Fs::Mode { path, mode } => {
                let p = self.host_unchecked(path);
                if std::fs::symlink_metadata(&p)?.file_type().is_symlink() {
                    return Err(io::Error::other(
                        "Fs::Mode on a symlink would change its target",
                    ));
                }
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(*mode & 0o777))
            }
            Fs::RawName { dir, name, content } => {
                let d = self.host_unchecked(dir);
                std::fs::create_dir_all(&d)?;
                std::fs::write(d.join(std::ffi::OsStr::from_bytes(name)), content)
            }
            Fs::DeepChain { path, depth } => {
                let mut p = self.host_unchecked(path);
                for _ in 0..*depth {
                    p.push("d");
                }
                std::fs::create_dir_all(&p)?;
                std::fs::write(p.join("bottom.txt"), "bottom\n")
            }
            Fs::ManyFiles { dir, count } => {
                let d = self.host_unchecked(dir);
                std::fs::create_dir_all(&d)?;
                for i in 0..*count {
                    std::fs::write(d.join(crate::attack::scenarios::many_name(i)), "x\n")?;
                }
                Ok(())
            }
            Fs::RootSymlink { target } => {
                // Fails unless the root is still empty: plant this first.
                std::fs::remove_dir(&self.root)?;
                symlink(self.link_target(target), &self.root)
            }
            Fs::RootFifo => {
                std::fs::remove_dir(&self.root)?;
                mknod_unchecked(&self.root, rustix::fs::FileType::Fifo)
            }
            Fs::RootFile { content } => {
                std::fs::remove_dir(&self.root)?;
                std::fs::write(&self.root, content)
            }
        }
    }

    /// The host path a planted link points to.
    fn link_target(&self, target: &LinkTo) -> PathBuf {
        match target {
            LinkTo::Outside(rel) if rel.is_empty() => self.base.join("outside"),
            LinkTo::Outside(rel) => self.base.join("outside").join(rel),
            LinkTo::Inside(v) => self.host_unchecked(v),
            LinkTo::Raw(text) => PathBuf::from(text),
            LinkTo::Sibling(name) => self.base.join(name),
        }
    }

    /// The run folder holding everything of this case (`<tmp>/memcert-XXXXXX`).
    pub fn run_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The alias of the run folder ([module docs](self)): the path inputs use instead of
    /// [`Sandbox::run_dir`].
    pub fn alias(&self) -> &Path {
        self.alias
            .as_ref()
            .map_or(self.dir.path(), |a| a.dir.path())
    }

    /// The store root as reached through [`Sandbox::alias`] (`<alias>/base/memories`).
    pub fn alias_root(&self) -> PathBuf {
        match self.root.strip_prefix(self.dir.path()) {
            Ok(rel) => self.alias().join(rel),
            Err(_) => self.root.clone(),
        }
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
        // The random name of a temp run folder; a folder the user named may have a common name.
        if let (RunDir::Temp(_), Some(name)) = (&self.dir, self.dir.path().file_name()) {
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

    /// Everything in the run folder except the store root's subtree, and everything in the
    /// alias folder, under its name (`memcert-alias-XXXXXX/...`).
    ///
    /// # Ambient authority
    /// Walks the run folder and the alias by host path, never following links.
    pub fn outside_unchecked(&self) -> Tree {
        let mut tree = Tree::new();
        walk_unchecked(self.dir.path(), self.dir.path(), &self.root, &mut tree);
        if let Some(a) = &self.alias {
            let top = a.dir.path();
            let parent = top.parent().unwrap_or(top);
            if let Some(node) = node_and_mode_at(top) {
                tree.insert(top.strip_prefix(parent).unwrap_or(top).to_path_buf(), node);
            }
            walk_unchecked(parent, top, Path::new(""), &mut tree);
        }
        tree
    }

    /// Store files (not links) whose content holds the canary token: outside content copied
    /// into the store. Virtual paths, sorted.
    ///
    /// # Ambient authority
    /// Walks the store root by host path, never following links.
    pub fn token_in_store_unchecked(&self) -> Vec<String> {
        if self.root_is_link() {
            // A linked root (Fs::RootSymlink) holds no store: what it shows is the outside.
            return Vec::new();
        }
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

    fn root_is_link(&self) -> bool {
        std::fs::symlink_metadata(&self.root).is_ok_and(|m| m.file_type().is_symlink())
    }
}

impl Drop for Sandbox {
    /// Give every folder `u+rwx` back when a mode was planted, so the temp dir can be removed by
    /// a process that is not root.
    ///
    /// # Ambient authority
    /// `chmod` by host path inside the run folder, links never followed.
    fn drop(&mut self) {
        if self.modes {
            restore_modes_unchecked(self.dir.path());
        }
    }
}

fn restore_modes_unchecked(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            let mode = meta.permissions().mode() | 0o700;
            let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode));
            restore_modes_unchecked(&p);
        }
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

/// A special file (FIFO, socket) of mode 0600 at host path `p`.
fn mknod_unchecked(p: &Path, kind: rustix::fs::FileType) -> io::Result<()> {
    let mode = rustix::fs::Mode::from_raw_mode(0o600);
    rustix::fs::mknodat(rustix::fs::CWD, p, kind, mode, 0).map_err(io::Error::from)
}

fn node_at(p: &Path) -> Option<Node> {
    node_and_mode_at(p).map(|(node, _)| node)
}

/// The node at `p` (links not followed) and its permission bits, from one `lstat`.
fn node_and_mode_at(p: &Path) -> Option<(Node, u32)> {
    let meta = std::fs::symlink_metadata(p).ok()?;
    Some(node_and_mode(p, &meta))
}

/// The node at `p` and its permission bits, given its `lstat` metadata.
fn node_and_mode(p: &Path, meta: &std::fs::Metadata) -> (Node, u32) {
    let ft = meta.file_type();
    let node = if ft.is_symlink() {
        Node::Symlink(std::fs::read_link(p).unwrap_or_default())
    } else if ft.is_dir() {
        Node::Dir
    } else if ft.is_file() {
        Node::File(read_small(p))
    } else {
        Node::Other
    };
    (node, meta.permissions().mode() & 0o7777)
}

/// A file's bytes (empty when it cannot be read), read without the size `stat` `std::fs::read`
/// makes first: canaries and planted files are small, and the walks read every one of them
/// twice per case.
fn read_small(p: &Path) -> Vec<u8> {
    use std::io::Read as _;
    let Ok(mut f) = std::fs::File::open(p) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match f.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return out,
        }
    }
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
        // The entry's metadata comes from its folder's descriptor (fstatat, no path walk).
        let Ok(meta) = e.metadata() else {
            continue;
        };
        let (node, mode) = node_and_mode(&p, &meta);
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

/// Every planted scenario of the catalog lays out as its doc says (the scenarios are data in
/// `memcert_cases::scenarios`; the sandbox that plants them is here).
#[cfg(test)]
mod scenario_tests {
    use super::{Node, Sandbox};
    use crate::suite::scenarios::*;
    use crate::suite::Fs;

    #[test]
    fn every_scenario_plants() {
        for s in all() {
            let sb =
                Sandbox::create_unchecked(&s.setup).unwrap_or_else(|e| panic!("{}: {e}", s.id));
            match s.id {
                "root-symlink" => assert!(std::fs::symlink_metadata(sb.root())
                    .unwrap()
                    .file_type()
                    .is_symlink()),
                "socket" => assert_eq!(sb.node_unchecked(SOCKET), Some(Node::Other)),
                "deep-chain" => assert_eq!(
                    sb.node_unchecked(&deep_bottom()),
                    Some(Node::File(b"bottom\n".to_vec()))
                ),
                "many-entries" => assert_eq!(
                    std::fs::read_dir(sb.host_unchecked(MANY_DIR))
                        .unwrap()
                        .count(),
                    MANY_COUNT
                ),
                "non-utf8-name" => {
                    use std::os::unix::ffi::OsStrExt;
                    let dir = sb.host_unchecked(NON_UTF8_DIR);
                    let name = std::ffi::OsStr::from_bytes(NON_UTF8_NAME);
                    assert!(dir.join(name).is_file());
                }
                "sibling-link/relative" | "sibling-link/absolute" => {
                    let link = sb.host_unchecked(&setup_path(&s));
                    let target = std::fs::canonicalize(link).unwrap();
                    assert_eq!(target, sb.base().canonicalize().unwrap().join(SIBLING));
                }
                _ => {}
            }
        }
    }

    #[test]
    fn the_alias_holds_the_aimed_at_canaries_shares_no_name_with_the_run_folder_and_goes_with_it() {
        let sb = Sandbox::create_unchecked(&[]).unwrap();
        let alias = sb.alias().to_path_buf();
        assert_ne!(alias, sb.run_dir());
        assert_eq!(alias.parent(), sb.run_dir().parent());
        let name = alias.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.starts_with("memcert-alias-"), "{name}");
        for h in sb.host_paths() {
            assert!(!alias.to_string_lossy().contains(&h), "{h}");
        }
        // A real folder, not a link, with the canaries payloads aim at.
        assert!(std::fs::symlink_metadata(&alias).unwrap().is_dir());
        let canary = sb.alias_root().join("../outside/canary.txt");
        assert!(std::fs::read_to_string(&canary)
            .unwrap()
            .starts_with(sb.token()));
        assert!(alias.join("canary.txt").is_file());
        let outside = sb.outside_unchecked();
        let top = std::path::Path::new(&name);
        assert!(outside.contains_key(top));
        assert!(outside.contains_key(&top.join("base/outside/canary.txt")));
        drop(sb);
        assert!(std::fs::symlink_metadata(&alias).is_err());
    }

    fn setup_path(s: &Scenario) -> String {
        match &s.setup[0] {
            Fs::Symlink { path, .. } => path.clone(),
            other => panic!("{other:?}"),
        }
    }
}
