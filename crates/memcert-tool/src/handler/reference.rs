//! Reference handler: the six memory commands over a `cap_std::fs::Dir` opened on the store root.
//!
//! Every reply is spelled by [`crate::text::render`] in the profile the handler was built with;
//! the behaviour follows the doc column of `docs/spec/memory-tool.md` and, where the
//! doc is silent, the choices listed below.
//!
//! # Guarantees
//! - No command reads, writes, creates, renames or removes anything outside the root, even while
//!   another process swaps path components for symlinks: every path is walked from the held root
//!   handle one component at a time with `open_dir_nofollow` (cap-std: `openat2` with
//!   `RESOLVE_BENEATH`, or a component-wise no-follow walk), and the last component is acted on
//!   with `*at` calls relative to its parent's handle (`openat(O_NOFOLLOW)`, `unlinkat`,
//!   `renameat2(RENAME_NOREPLACE)`), never by re-resolving a path string.
//! - Symlinks inside the root are never followed. view, create, str_replace and insert through a
//!   link (as the last component or on the way) are refused with [`Outcome::Symlink`]; delete
//!   removes the link itself; rename moves the link itself. Listings leave links out, so neither
//!   a target's name nor its size is ever shown (bug:B11).
//! - Writes are atomic: the new content goes to a hidden temp file (mode 0600) in the same
//!   directory, is optionally fsynced ([`Options::fsync`]), then renamed over the name. New
//!   directories get mode 0700. A failed command leaves the disk as it found it: directories
//!   created for it are removed again and temp files are unlinked.
//! - Replies name only virtual `/memories/...` paths; an unexpected OS error becomes
//!   [`Outcome::IoError`] with the error kind in words, never a host path (bug:B07).
//!
//! # Choices where the doc is silent
//! - A file view splits on `\n` only, so a final newline shows as an empty last line (as both
//!   SDKs do); `\r` stays inside its line.
//! - The 999,999-line limit counts real lines: a file of exactly 999,999 lines ending in `\n`
//!   is shown (the SDKs refuse it, spec:2.1/C30).
//! - `view_range` `[start, end]` needs `1 <= start <= lines` and `end == -1` or `end >= start`;
//!   an `end` past the last line is clipped. Anything else is [`Outcome::InvalidViewRange`].
//! - A trailing `/` means "directory": on a file it is [`Outcome::NotADirectory`]; create refuses
//!   it ([`Outcome::CreateTrailingSlash`]).
//! - Non-UTF-8 files ([`Outcome::NotUtf8`]), files over [`Options::max_file_bytes`]
//!   ([`Outcome::FileTooLarge`]), regular files with more than one hard link
//!   ([`Outcome::HardLink`], spec:3/S-9) and FIFOs, sockets and devices
//!   ([`Outcome::UnsupportedFileType`], never opened for reading, so never a hang) are refused.
//! - A directory given to str_replace or insert is [`Outcome::NotAFile`].
//! - An empty `old_str` is refused ([`Outcome::EmptyOldStr`]); several matches list each line
//!   once, ascending.
//! - insert strips one trailing `\n` from `insert_text` (the SDKs strip all, or one) and leaves
//!   the file ending in `\n`.
//! - rename refuses a directory moved into its own subtree before creating anything
//!   ([`Outcome::RenameIntoItself`]) and creates missing destination parents only once the
//!   source is known to exist (the SDKs create them first, spec:2.6/H5).
//! - Listings hold regular files and directories; dot-names, `node_modules`, symlinks, special
//!   files and names that are not UTF-8 are left out. A folder that cannot be read (mode 000) is
//!   refused when viewed ([`Outcome::IoError`]) and shown without entries inside a listing.
//!
//! # Non-guarantees
//! - Not a sandbox against code in this process; it confines the paths a model sends.
//! - A hard link planted before the handler starts is refused on read and edit, but delete and
//!   rename act on the link's name (which is inside the root), as they should.
//! - Case-insensitive filesystems are not handled specially (bug:B23).

use std::io::{self, Read, Write};
use std::path::Path;

use cap_fs_ext::{DirExt, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::fs::{Dir, DirBuilder, DirBuilderExt, MetadataExt, OpenOptions, OpenOptionsExt};
use cap_std::{ambient_authority, fs::Metadata};
use serde_json::Value;

use super::pure::{inserted_text, parse, rename_paths, reply, str_replace_text, view_text};
use super::Handler;
use crate::protocol::{Command, ToolResult};
use crate::text::{ListEntry, Outcome, Profile};
use crate::vpath::{forbidden_char, VPath};

pub use super::pure::MAX_LISTED_LINES;
/// Deepest directory tree delete removes (levels below the deleted directory); each level holds
/// one open directory handle while the tree is removed.
pub const MAX_DELETE_DEPTH: usize = 256;

/// Mode of files the handler writes.
pub const FILE_MODE: u32 = 0o600;
/// Mode of directories the handler creates.
pub const DIR_MODE: u32 = 0o700;

/// Settings of the reference handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// fsync every written file before it is renamed into place (no directory fsync, as the
    /// SDKs do). Default true; fuzzing and tests may turn it off.
    pub fsync: bool,
    /// Largest file view, str_replace and insert will read, in bytes. Default 16 MiB.
    pub max_file_bytes: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            fsync: true,
            max_file_bytes: 16 * 1024 * 1024,
        }
    }
}

/// The reference handler. See the [module docs](self) for its guarantees and choices.
///
/// ```
/// use memcert_tool::handler::{Handler, reference::{Reference, Options}};
/// use memcert_tool::text::Profile;
/// use serde_json::json;
///
/// let store = tempfile::tempdir().unwrap();
/// let mut h = Reference::open_ambient(store.path(), Profile::Docs, Options::default()).unwrap();
/// let r = h.apply(&json!({"command": "create", "path": "/memories/a.txt", "file_text": "hi\n"}));
/// assert_eq!(r.text(), "File created successfully at: /memories/a.txt");
/// let r = h.apply(&json!({"command": "view", "path": "/memories/../etc/passwd"}));
/// assert!(r.is_error);
/// ```
#[derive(Debug)]
pub struct Reference {
    /// The store, or why there is none (a store root that is a symlink, bug:B10: every command is
    /// refused with that reason, see [`Reference::open_or_refuse`]).
    root: Result<Dir, String>,
    profile: Profile,
    options: Options,
}

/// Why a walk to a parent directory stopped.
enum Walk {
    /// A component does not exist.
    NotFound,
    /// A component is a symlink.
    Symlink,
    /// A component is a file (or another non-directory).
    ParentFile,
    /// Anything else.
    Io(io::Error),
}

/// A directory handle: the held root (borrowed, no `dup`) or one opened below it.
enum Handle<'a> {
    Root(&'a Dir),
    Owned(Dir),
}

impl std::ops::Deref for Handle<'_> {
    type Target = Dir;
    fn deref(&self) -> &Dir {
        match self {
            Handle::Root(d) => d,
            Handle::Owned(d) => d,
        }
    }
}

impl<'a> Handle<'a> {
    fn share(&self) -> io::Result<Handle<'a>> {
        Ok(match self {
            Handle::Root(d) => Handle::Root(d),
            Handle::Owned(d) => Handle::Owned(d.try_clone()?),
        })
    }
}

/// A directory handle with the names created on the way to it, for rollback.
struct Parent<'a> {
    dir: Handle<'a>,
    created: Vec<(Handle<'a>, String)>,
}

impl Parent<'_> {
    /// Remove the directories this walk created, innermost first (best effort).
    fn rollback(self) {
        drop(self.dir);
        for (dir, name) in self.created.into_iter().rev() {
            let _ = dir.remove_dir(&name);
        }
    }
}

impl Reference {
    /// Open the handler on the store root at `root` (the folder `/memories` maps to), creating
    /// it with mode 0700 if missing.
    ///
    /// # Ambient authority
    /// Opens `root` by its host path; every later access goes through the held handle.
    ///
    /// # Errors
    /// The `io::Error` of creating or opening `root`.
    pub fn open_ambient(root: &Path, profile: Profile, options: Options) -> io::Result<Self> {
        let parent = root
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = root.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "the store root must name a directory",
            )
        })?;
        if !parent.exists() {
            let mut b = std::fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(&mut b, DIR_MODE);
            b.recursive(true).create(parent)?;
        }
        let parent = Dir::open_ambient_dir(parent, ambient_authority())?;
        let mut b = DirBuilder::new();
        b.mode(DIR_MODE);
        match parent.create_dir_with(name, &b) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        // Pin the root once, refusing a link in its place (bug:B10): a store root that is a
        // symlink would move the whole store wherever the link points.
        let dir =
            parent
                .open_dir_nofollow(name)
                .map_err(|e| match parent.symlink_metadata(name) {
                    Ok(m) if m.file_type().is_symlink() => io::Error::other(
                        "the store root is a symbolic link; memcert refuses to follow it (B10)",
                    ),
                    _ => e,
                })?;
        Ok(Self::new(dir, profile, options))
    }

    /// [`Reference::open_ambient`], except that a store root that is there but not a folder (a
    /// symbolic link, bug:B10; a FIFO; a regular file) gives a handler without a store, which refuses every command with the reason: what an
    /// application that keeps running without its store answers, instead of a failed start.
    ///
    /// # Errors
    /// Any other failure of [`Reference::open_ambient`].
    pub fn open_or_refuse(root: &Path, profile: Profile, options: Options) -> io::Result<Self> {
        match Reference::open_ambient(root, profile, options) {
            Err(e) if std::fs::symlink_metadata(root).is_ok_and(|m| !m.file_type().is_dir()) => {
                Ok(Reference {
                    root: Err(e.to_string()),
                    profile,
                    options,
                })
            }
            other => other,
        }
    }

    /// Build the handler over an open root directory.
    pub fn new(root: Dir, profile: Profile, options: Options) -> Self {
        Reference {
            root: Ok(root),
            profile,
            options,
        }
    }

    /// The profile replies are rendered in.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Run a parsed command and say what happened. Without a store (a linked root) every
    /// command is an [`Outcome::IoError`] naming its (first) path and the reason.
    pub fn run(&self, command: &Command) -> Outcome {
        if let Err(why) = &self.root {
            let path = match command {
                Command::Rename { old_path, .. } => old_path,
                Command::View { path, .. }
                | Command::Create { path, .. }
                | Command::StrReplace { path, .. }
                | Command::Insert { path, .. }
                | Command::Delete { path } => path,
            };
            return Outcome::IoError {
                path: path.clone(),
                kind: why.clone(),
            };
        }
        match command {
            Command::View { path, view_range } => self.view(path, *view_range),
            Command::Create { path, file_text } => self.create(path, file_text),
            Command::StrReplace {
                path,
                old_str,
                new_str,
            } => self.str_replace(path, old_str, new_str),
            Command::Insert {
                path,
                insert_line,
                insert_text,
            } => self.insert(path, *insert_line, insert_text),
            Command::Delete { path } => self.delete(path),
            Command::Rename { old_path, new_path } => self.rename(old_path, new_path),
        }
    }

    /// Parse and run a raw `tool_use` input; malformed input is [`Outcome::MalformedInput`].
    pub fn outcome(&self, input: &Value) -> Outcome {
        match Command::parse(input) {
            Ok(c) => self.run(&c),
            Err(e) => Outcome::MalformedInput {
                detail: e.to_string(),
            },
        }
    }

    // ----- walking -----

    /// Open the directory holding the last component of `p` (the root for a one-name path),
    /// refusing symlinks on the way; with `create`, make missing directories (mode 0700).
    fn parent(&self, p: &VPath, create: bool) -> Result<Parent<'_>, Walk> {
        let comps = p.components();
        let upto = comps.len().saturating_sub(1);
        self.walk(&comps[..upto], create)
    }

    fn walk(&self, names: &[String], create: bool) -> Result<Parent<'_>, Walk> {
        let root = self
            .root
            .as_ref()
            .map_err(|why| Walk::Io(io::Error::other(why.clone())))?;
        let mut dir = Handle::Root(root);
        let mut created = Vec::new();
        for name in names {
            let next = match dir.open_dir_nofollow(name) {
                Ok(d) => Handle::Owned(d),
                Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                    let mut b = DirBuilder::new();
                    b.mode(DIR_MODE);
                    match dir.create_dir_with(name, &b) {
                        Ok(()) => match dir.share() {
                            Ok(handle) => created.push((handle, name.clone())),
                            Err(e) => {
                                let _ = dir.remove_dir(name);
                                Parent { dir, created }.rollback();
                                return Err(Walk::Io(e));
                            }
                        },
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(e) => {
                            Parent { dir, created }.rollback();
                            return Err(Walk::Io(e));
                        }
                    }
                    match dir.open_dir_nofollow(name) {
                        Ok(d) => Handle::Owned(d),
                        Err(e) => {
                            let why = classify(&dir, name, e);
                            Parent { dir, created }.rollback();
                            return Err(why);
                        }
                    }
                }
                Err(e) => {
                    let why = classify(&dir, name, e);
                    Parent { dir, created }.rollback();
                    return Err(why);
                }
            };
            dir = next;
        }
        Ok(Parent { dir, created })
    }

    fn leaf<'a>(&self, p: &'a VPath) -> &'a str {
        p.components().last().map(String::as_str).unwrap_or(".")
    }

    /// Open a regular file without following links, and read it as UTF-8 text.
    fn read_text(&self, parent: &Dir, name: &str, path: &str) -> Result<String, Outcome> {
        let mut opts = OpenOptions::new();
        opts.read(true)
            .follow(cap_fs_ext::FollowSymlinks::No)
            .nonblock(true);
        let mut file = parent
            .open_with(name, &opts)
            .map_err(|e| self.open_error(e, parent, name, path))?;
        let meta = file.metadata().map_err(|e| io_outcome(path, &e))?;
        if !meta.is_file() {
            return Err(Outcome::UnsupportedFileType { path: path.into() });
        }
        if meta.nlink() > 1 {
            return Err(Outcome::HardLink { path: path.into() });
        }
        if meta.len() > self.options.max_file_bytes {
            return Err(Outcome::FileTooLarge {
                path: path.into(),
                limit: self.options.max_file_bytes,
            });
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        (&mut file)
            .take(self.options.max_file_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| io_outcome(path, &e))?;
        if bytes.len() as u64 > self.options.max_file_bytes {
            return Err(Outcome::FileTooLarge {
                path: path.into(),
                limit: self.options.max_file_bytes,
            });
        }
        String::from_utf8(bytes).map_err(|_| Outcome::NotUtf8 { path: path.into() })
    }

    fn open_error(&self, e: io::Error, parent: &Dir, name: &str, path: &str) -> Outcome {
        match parent.symlink_metadata(name) {
            Ok(m) if m.file_type().is_symlink() => Outcome::Symlink { path: path.into() },
            Err(m) if m.kind() == io::ErrorKind::NotFound => {
                Outcome::ViewNotFound { path: path.into() }
            }
            _ => io_outcome(path, &e),
        }
    }

    /// Write `content` to `parent/name` atomically: a temp file, then a rename. With
    /// `exclusive`, the rename fails if `name` exists (`RENAME_NOREPLACE`).
    fn write_atomic(
        &self,
        parent: &Dir,
        name: &str,
        content: &str,
        exclusive: bool,
    ) -> io::Result<()> {
        let tmp = format!(".memcert-tmp-{:016x}", fastrand::u64(..));
        let mut opts = OpenOptions::new();
        opts.write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .follow(cap_fs_ext::FollowSymlinks::No);
        let result = (|| {
            let mut f = parent.open_with(&tmp, &opts)?;
            f.write_all(content.as_bytes())?;
            if self.options.fsync {
                f.sync_all()?;
            }
            drop(f);
            let flags = if exclusive {
                rustix::fs::RenameFlags::NOREPLACE
            } else {
                rustix::fs::RenameFlags::empty()
            };
            rustix::fs::renameat_with(parent, tmp.as_str(), parent, name, flags)
                .map_err(io::Error::from)
        })();
        if result.is_err() {
            let _ = parent.remove_file(&tmp);
        }
        result
    }

    // ----- view -----

    fn view(&self, path: &str, range: Option<[i64; 2]>) -> Outcome {
        let p = match parse(path) {
            Ok(p) => p,
            Err(o) => return o,
        };
        if p.is_root() {
            let root = match &self.root {
                Ok(root) => root,
                Err(why) => {
                    return Outcome::IoError {
                        path: path.into(),
                        kind: why.clone(),
                    }
                }
            };
            let size = root.dir_metadata().map(|m| m.len()).unwrap_or(0);
            return self.listing(path, &p, root, size);
        }
        let parent = match self.parent(&p, false) {
            Ok(parent) => parent.dir,
            Err(w) => return walk_outcome(w, path, Outcome::ViewNotFound { path: path.into() }),
        };
        let name = self.leaf(&p);
        let meta = match lstat(&parent, name) {
            Ok(Some(m)) => m,
            Ok(None) => return Outcome::ViewNotFound { path: path.into() },
            Err(e) => return io_outcome(path, &e),
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            return Outcome::Symlink { path: path.into() };
        }
        if ft.is_dir() {
            return match parent.open_dir_nofollow(name) {
                Ok(dir) => self.listing(path, &p, &dir, meta.len()),
                Err(e) => self.open_error(e, &parent, name, path),
            };
        }
        if p.has_trailing_slash() {
            return Outcome::NotADirectory { path: path.into() };
        }
        if !ft.is_file() {
            return Outcome::UnsupportedFileType { path: path.into() };
        }
        match self.read_text(&parent, name, path) {
            Ok(text) => view_text(path, &text, range),
            Err(o) => o,
        }
    }

    fn listing(&self, path: &str, p: &VPath, dir: &Dir, size: u64) -> Outcome {
        let mut entries = Vec::new();
        if let Err(e) = collect(dir, &p.canonical(), 1, &mut entries) {
            return io_outcome(path, &e);
        }
        Outcome::ViewDir {
            path: path.into(),
            size,
            entries,
        }
    }

    // ----- create -----

    fn create(&self, path: &str, text: &str) -> Outcome {
        let p = match parse(path) {
            Ok(p) => p,
            Err(o) => return o,
        };
        if p.is_root() {
            return Outcome::FileExists { path: path.into() };
        }
        if p.has_trailing_slash() {
            return Outcome::CreateTrailingSlash { path: path.into() };
        }
        let parent = match self.parent(&p, true) {
            Ok(parent) => parent,
            Err(Walk::ParentFile) => return Outcome::ParentNotADirectory { path: path.into() },
            Err(w) => {
                return walk_outcome(w, path, Outcome::ParentNotADirectory { path: path.into() })
            }
        };
        let name = self.leaf(&p);
        match lstat(&parent.dir, name) {
            Ok(Some(m)) => {
                parent.rollback();
                return if m.file_type().is_symlink() {
                    Outcome::Symlink { path: path.into() }
                } else {
                    Outcome::FileExists { path: path.into() }
                };
            }
            Ok(None) => {}
            Err(e) => {
                parent.rollback();
                return io_outcome(path, &e);
            }
        }
        match self.write_atomic(&parent.dir, name, text, true) {
            Ok(()) => Outcome::Created { path: path.into() },
            Err(e) => {
                parent.rollback();
                if e.kind() == io::ErrorKind::AlreadyExists {
                    Outcome::FileExists { path: path.into() }
                } else {
                    io_outcome(path, &e)
                }
            }
        }
    }

    // ----- str_replace and insert -----

    /// Resolve an existing regular file for editing: (parent, name, text).
    fn editable(
        &self,
        path: &str,
        not_found: Outcome,
    ) -> Result<(Handle<'_>, String, String), Outcome> {
        let p = parse(path)?;
        if p.is_root() {
            return Err(Outcome::NotAFile { path: path.into() });
        }
        let parent = self
            .parent(&p, false)
            .map_err(|w| walk_outcome(w, path, not_found.clone()))?
            .dir;
        let name = self.leaf(&p).to_owned();
        let meta = match lstat(&parent, &name) {
            Ok(Some(m)) => m,
            Ok(None) => return Err(not_found),
            Err(e) => return Err(io_outcome(path, &e)),
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            return Err(Outcome::Symlink { path: path.into() });
        }
        if !ft.is_file() {
            return Err(Outcome::NotAFile { path: path.into() });
        }
        if p.has_trailing_slash() {
            return Err(Outcome::NotADirectory { path: path.into() });
        }
        let text = self.read_text(&parent, &name, path).map_err(|o| match o {
            Outcome::ViewNotFound { .. } => not_found,
            other => other,
        })?;
        Ok((parent, name, text))
    }

    fn str_replace(&self, path: &str, old: &str, new: &str) -> Outcome {
        let not_found = Outcome::StrReplaceNotFound { path: path.into() };
        let (parent, name, text) = match self.editable(path, not_found) {
            Ok(x) => x,
            Err(o) => return o,
        };
        let (updated, edited) = match str_replace_text(path, &text, old, new) {
            Ok(x) => x,
            Err(o) => return o,
        };
        if let Err(e) = self.write_atomic(&parent, &name, &updated, false) {
            return io_outcome(path, &e);
        }
        edited
    }

    fn insert(&self, path: &str, at: i64, insert_text: &str) -> Outcome {
        let not_found = Outcome::InsertNotFound { path: path.into() };
        let (parent, name, text) = match self.editable(path, not_found) {
            Ok(x) => x,
            Err(o) => return o,
        };
        let updated = match inserted_text(&text, at, insert_text) {
            Ok(u) => u,
            Err(o) => return o,
        };
        match self.write_atomic(&parent, &name, &updated, false) {
            Ok(()) => Outcome::Inserted { path: path.into() },
            Err(e) => io_outcome(path, &e),
        }
    }

    // ----- delete -----

    fn delete(&self, path: &str) -> Outcome {
        let p = match parse(path) {
            Ok(p) => p,
            Err(o) => return o,
        };
        if p.is_root() {
            return Outcome::DeleteRoot;
        }
        let not_found = Outcome::DeleteNotFound { path: path.into() };
        let parent = match self.parent(&p, false) {
            Ok(parent) => parent.dir,
            Err(w) => return walk_outcome(w, path, not_found),
        };
        let name = self.leaf(&p);
        let meta = match lstat(&parent, name) {
            Ok(Some(m)) => m,
            Ok(None) => return not_found,
            Err(e) => return io_outcome(path, &e),
        };
        let ft = meta.file_type();
        if p.has_trailing_slash() && !ft.is_dir() {
            return Outcome::NotADirectory { path: path.into() };
        }
        // remove_dir_all walks with no-follow handles and unlinks links it meets (cap-std);
        // remove_file is unlinkat, which removes a link itself.
        let result = if ft.is_dir() {
            remove_tree(&parent, name)
        } else {
            parent.remove_file(name)
        };
        match result {
            Ok(()) => Outcome::Deleted { path: path.into() },
            Err(e) if e.kind() == io::ErrorKind::NotFound => not_found,
            Err(e) => io_outcome(path, &e),
        }
    }

    // ----- rename -----

    fn rename(&self, old_path: &str, new_path: &str) -> Outcome {
        let (old, new) = match rename_paths(old_path, new_path) {
            Ok(x) => x,
            Err(o) => return o,
        };
        let exists = Outcome::RenameDestinationExists {
            new_path: new_path.into(),
        };
        let not_found = Outcome::RenameNotFound {
            old_path: old_path.into(),
        };
        let src = match self.parent(&old, false) {
            Ok(parent) => parent.dir,
            Err(w) => return walk_outcome(w, old_path, not_found),
        };
        let src_name = self.leaf(&old);
        let meta = match lstat(&src, src_name) {
            Ok(Some(m)) => m,
            Ok(None) => return not_found,
            Err(e) => return io_outcome(old_path, &e),
        };
        if old.has_trailing_slash() && !meta.file_type().is_dir() {
            return Outcome::NotADirectory {
                path: old_path.into(),
            };
        }
        if new.has_trailing_slash() && !meta.file_type().is_dir() {
            return Outcome::NotADirectory {
                path: new_path.into(),
            };
        }
        let dst = match self.parent(&new, true) {
            Ok(parent) => parent,
            Err(Walk::ParentFile) | Err(Walk::NotFound) => {
                return Outcome::ParentNotADirectory {
                    path: new_path.into(),
                }
            }
            Err(w) => return walk_outcome(w, new_path, exists),
        };
        let dst_name = self.leaf(&new);
        match lstat(&dst.dir, dst_name) {
            Ok(None) => {}
            Ok(Some(_)) => {
                dst.rollback();
                return exists;
            }
            Err(e) => {
                dst.rollback();
                return io_outcome(new_path, &e);
            }
        }
        let moved = rustix::fs::renameat_with(
            &*src,
            src_name,
            &*dst.dir,
            dst_name,
            rustix::fs::RenameFlags::NOREPLACE,
        )
        .map_err(io::Error::from);
        match moved {
            Ok(()) => Outcome::Renamed {
                old_path: old_path.into(),
                new_path: new_path.into(),
            },
            Err(e) => {
                dst.rollback();
                match e.kind() {
                    io::ErrorKind::AlreadyExists => exists,
                    io::ErrorKind::NotFound => not_found,
                    _ => io_outcome(old_path, &e),
                }
            }
        }
    }
}

impl Handler for Reference {
    fn apply(&mut self, input: &Value) -> ToolResult {
        reply(self.profile, &self.outcome(input))
    }

    /// Reopen over `memories_dir` with the same profile and options
    /// ([`Reference::open_or_refuse`]: a store root that is a symlink is not followed, and every
    /// command is refused until the next reset).
    ///
    /// # Errors
    /// Any other failure to open the store.
    fn reset(
        &mut self,
        _base_dir: &std::path::Path,
        memories_dir: &std::path::Path,
    ) -> io::Result<()> {
        *self = Reference::open_or_refuse(memories_dir, self.profile, self.options)?;
        Ok(())
    }
}

/// `lstat` of one name in `dir`: `Ok(None)` when it does not exist.
fn lstat(dir: &Dir, name: &str) -> io::Result<Option<Metadata>> {
    match dir.symlink_metadata(name) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Say why opening `name` in `dir` as a directory failed.
fn classify(dir: &Dir, name: &str, e: io::Error) -> Walk {
    match lstat(dir, name) {
        Ok(None) => Walk::NotFound,
        Ok(Some(m)) if m.file_type().is_symlink() => Walk::Symlink,
        Ok(Some(m)) if !m.file_type().is_dir() => Walk::ParentFile,
        _ => Walk::Io(e),
    }
}

/// The outcome of a failed walk: a missing or file parent is the command's "not found".
fn walk_outcome(w: Walk, path: &str, not_found: Outcome) -> Outcome {
    match w {
        Walk::NotFound | Walk::ParentFile => not_found,
        Walk::Symlink => Outcome::Symlink { path: path.into() },
        Walk::Io(e) => io_outcome(path, &e),
    }
}

fn io_outcome(path: &str, e: &io::Error) -> Outcome {
    // The OS's words for the error number ("too many open files"), never the message of an
    // io::Error, which may carry a host path.
    let kind = match e.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code)
            .to_string()
            .to_lowercase(),
        // Errors memcert makes itself (io::Error::other) carry their own words.
        None if e.kind() == io::ErrorKind::Other => e.to_string(),
        None => e.kind().to_string().to_lowercase(),
    };
    Outcome::IoError {
        path: path.into(),
        kind,
    }
}

/// Remove the directory `name` in `parent` and everything below it, iteratively (no recursion,
/// so no stack overflow on a deep tree) and handle-relative with no-follow opens: a link met on
/// the way is unlinked, never followed, even if it was swapped in while the delete runs (bug:B14).
/// Trees deeper than [`MAX_DELETE_DEPTH`] are refused before anything more is removed.
fn remove_tree(parent: &Dir, name: &str) -> io::Result<()> {
    let mut stack: Vec<(Dir, std::ffi::OsString)> =
        vec![(parent.open_dir_nofollow(name)?, name.into())];
    while let Some((dir, _)) = stack.last() {
        let mut subdir = None;
        for entry in dir.entries()? {
            let entry = entry?;
            let child = entry.file_name();
            if entry.file_type()?.is_dir() {
                subdir = Some(child);
                break;
            }
            dir.remove_file(&child)?;
        }
        match subdir {
            Some(child) => {
                if stack.len() > MAX_DELETE_DEPTH {
                    return Err(io::Error::other("too deeply nested"));
                }
                match dir.open_dir_nofollow(&child) {
                    Ok(sub) => stack.push((sub, child)),
                    // Swapped for a link or a file since it was listed: unlink that instead.
                    Err(_) => dir.remove_file(&child)?,
                }
            }
            None => {
                let (done, child) = stack.pop().expect("the loop holds an entry");
                drop(done);
                stack.last().map_or(parent, |(d, _)| d).remove_dir(&child)?;
            }
        }
    }
    Ok(())
}

/// Children and grandchildren of `dir`, pre-order, sorted by name. The error of reading `dir`
/// itself is returned; a subfolder that cannot be read is shown without its entries.
fn collect(dir: &Dir, prefix: &str, depth: u32, out: &mut Vec<ListEntry>) -> io::Result<()> {
    let entries = dir.entries()?;
    let mut items: Vec<(String, Metadata)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if name.starts_with('.') || name == "node_modules" || name.chars().any(forbidden_char) {
                return None;
            }
            let meta = dir.symlink_metadata(&name).ok()?;
            let ft = meta.file_type();
            // A hard-linked file may be an outside file: its size is not shown either (spec:3/S-9).
            (ft.is_dir() || (ft.is_file() && meta.nlink() == 1)).then_some((name, meta))
        })
        .collect();
    items.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, meta) in items {
        let path = format!("{prefix}/{name}");
        let is_dir = meta.file_type().is_dir();
        out.push(ListEntry {
            size: meta.len(),
            path: path.clone(),
            dir: is_dir,
        });
        if is_dir && depth < 2 {
            if let Ok(sub) = dir.open_dir_nofollow(&name) {
                let _ = collect(&sub, &path, depth + 1, out);
            }
        }
    }
    Ok(())
}
