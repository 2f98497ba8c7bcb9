//! An in-memory model of the reference handler: the same six commands over a tree of
//! directories, files (bytes) and planted entries, answering every input with the same
//! [`ToolResult`] as [`super::reference::Reference`] on a store holding the same tree.
//!
//! The model exists to be compared with the reference (property tests in `tests/model/`, the
//! `command_sequence` fuzz target in `memcert::fuzz::sequence`): it computes the same
//! [`Outcome`] by following the reference's steps in the same order (walk the parents without
//! following links, `lstat` the last name, refuse, then act) and renders it with the same
//! profile. What does not touch a file is not written twice: path parsing, rename's lexical
//! checks, the file view, the new text of str_replace and insert, and the rendering come from
//! one shared module (`handler::pure`) that the reference uses as well.
//!
//! # What the model knows
//! - Directories, regular files and their bytes (any bytes: a planted file may be invalid
//!   UTF-8), and the planted entries the reference meets but never follows or reads:
//!   [`Entry::Symlink`] (refused as a path component or last name for view, create,
//!   str_replace and insert; removed or moved as the link itself by delete and rename; left out
//!   of listings), [`Entry::Special`] (a FIFO, socket or device: never opened, refused, left
//!   out of listings) and [`Entry::HardLinked`] (a regular file with a second link outside the
//!   store: refused on read and edit, left out of listings, deleted and renamed by name), and
//!   [`Entry::Sparse`], a file of NUL bytes known by its length alone (a huge sparse file: over
//!   the size limit it is refused as the reference refuses it, before any read).
//! - The size limit [`Options::max_file_bytes`] and the 999,999-line limit, exactly as the
//!   reference applies them.
//! - Directory sizes in listings: these are the filesystem's `st_size`, so the model has to be
//!   told the rule ([`DirSizes`]): tmpfs's (Linux `mm/shmem.c`: 40 bytes plus 20 per entry,
//!   every entry counted, hidden names and links included), or a constant.
//!
//! # Non-guarantees: inputs the model does not cover
//! - Anything that makes the reference meet an I/O error ([`Outcome::IoError`]): a full disk,
//!   permissions, too many open files, fsync failures. The model never answers `IoError`, except
//!   as below.
//! - A delete of a tree more than [`MAX_DELETE_DEPTH`] directories deep: the reference refuses
//!   it after removing, in directory order, some of the files it met on the way down, an order
//!   the model cannot know. The model answers the same reply but leaves the tree as it was, and
//!   [`Model::uncovered`] says so; the tree may differ from the disk from then on.
//! - Hard links between two names of the store (deleting one changes the other's link count),
//!   and a hard link whose outside name goes away while the model runs: an
//!   [`Entry::HardLinked`] is refused forever.
//! - Another process changing the store while commands run (the reference's race guarantees).
//! - File modes and times: not modelled (the reference writes files 0600 and directories 0700).
//! - Case-insensitive filesystems: names are compared byte for byte (bug:B23).
//!
//! ```
//! use memcert_tool::handler::{Handler, model::{DirSizes, Model}};
//! use memcert_tool::handler::reference::Options;
//! use memcert_tool::text::Profile;
//! use serde_json::json;
//!
//! let mut m = Model::new(Profile::Docs, Options::default(), DirSizes::Tmpfs);
//! m.plant("/memories/link", memcert_tool::handler::model::Entry::Symlink("/etc".into())).unwrap();
//! let r = m.apply(&json!({"command": "create", "path": "/memories/a.txt", "file_text": "hi\n"}));
//! assert_eq!(r.text(), "File created successfully at: /memories/a.txt");
//! let r = m.apply(&json!({"command": "view", "path": "/memories/link/passwd"}));
//! assert!(r.is_error);
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::pure::{inserted_text, parse, rename_paths, reply, str_replace_text, view_text};
use super::reference::{Options, MAX_DELETE_DEPTH};
use super::Handler;
use crate::protocol::{Command, ToolResult};
use crate::text::{ListEntry, Outcome, Profile};
use crate::vpath::{forbidden_char, VPath, VPathError};

/// A directory's entries by name (sorted byte-wise, as the reference sorts listings).
pub type Dir = BTreeMap<String, Entry>;

/// One entry of the model's tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A regular file with one link and these bytes.
    File(Vec<u8>),
    /// A directory.
    Dir(Dir),
    /// A symbolic link with this target text. The model never resolves it: the reference
    /// never follows a link, whatever it points to (inside, outside, nowhere).
    Symlink(String),
    /// A FIFO, socket or device node.
    Special,
    /// A regular file with these bytes and a second hard link outside the store (spec:3/S-9).
    HardLinked(Vec<u8>),
    /// A regular file of this many bytes, all zero, never held in memory: a sparse file (the
    /// fuzz search plants one of 64 MiB, over the size limit, bug:B17). Read, listed, edited,
    /// deleted and renamed as a [`Entry::File`] of that many NUL bytes would be.
    Sparse(u64),
}

/// How the filesystem under the reference sizes directories (`st_size` shown in listings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirSizes {
    /// tmpfs: 40 bytes plus 20 per entry (`BOGO_DIRENT_SIZE` in Linux `mm/shmem.c`).
    Tmpfs,
    /// Every directory has this size.
    Fixed(u64),
}

impl DirSizes {
    fn of(self, dir: &Dir) -> u64 {
        match self {
            DirSizes::Tmpfs => 40 + 20 * dir.len() as u64,
            DirSizes::Fixed(n) => n,
        }
    }
}

/// Why [`Model::plant`] could not plant an entry.
#[derive(Debug, thiserror::Error)]
pub enum PlantError {
    /// The path is not a valid memory path.
    #[error("cannot plant at an invalid path")]
    InvalidPath(#[source] VPathError),
    /// The path is the root, which is always a directory.
    #[error("cannot plant at the root")]
    Root,
    /// A parent of the path exists and is not a directory.
    #[error("cannot plant {path}: a parent is not a directory")]
    ParentNotADirectory {
        /// The path as given.
        path: String,
    },
}

/// The in-memory model. See the [module docs](self) for what it knows and what it does not.
#[derive(Clone, Debug)]
pub struct Model {
    root: Dir,
    profile: Profile,
    options: Options,
    dir_sizes: DirSizes,
    uncovered: Option<String>,
}

/// Why a walk to a parent directory stopped (as in the reference).
enum Walk {
    /// A component does not exist.
    NotFound,
    /// A component is a symlink.
    Symlink,
    /// A component is a file (or another non-directory).
    ParentFile,
}

impl Model {
    /// An empty store answering in `profile`'s words, with the reference's `options` (only
    /// `max_file_bytes` matters) and the directory sizes of the filesystem it is compared with.
    pub fn new(profile: Profile, options: Options, dir_sizes: DirSizes) -> Model {
        Model {
            root: Dir::new(),
            profile,
            options,
            dir_sizes,
            uncovered: None,
        }
    }

    /// Put `entry` at the virtual path `path` (`/memories/...`), creating missing parent
    /// directories and replacing whatever was at `path`: the model's side of planting a file,
    /// link or FIFO in the store before a run.
    ///
    /// # Errors
    /// [`PlantError`] for an invalid path, the root, or a parent that is not a directory.
    pub fn plant(&mut self, path: &str, entry: Entry) -> Result<(), PlantError> {
        let p = VPath::parse(path).map_err(PlantError::InvalidPath)?;
        let Some((leaf, parents)) = p.components().split_last() else {
            return Err(PlantError::Root);
        };
        let mut dir = &mut self.root;
        for name in parents {
            let next = dir
                .entry(name.clone())
                .or_insert_with(|| Entry::Dir(Dir::new()));
            dir = match next {
                Entry::Dir(d) => d,
                _ => {
                    return Err(PlantError::ParentNotADirectory {
                        path: path.to_owned(),
                    })
                }
            };
        }
        dir.insert(leaf.clone(), entry);
        Ok(())
    }

    /// The root directory's entries.
    pub fn root(&self) -> &Dir {
        &self.root
    }

    /// Every entry below the root, keyed by its path relative to the root (`d/b.txt`), in
    /// sorted order (see [`paths`]).
    pub fn paths(&self) -> BTreeMap<PathBuf, &Entry> {
        paths(&self.root)
    }

    /// The root directory's entries, taking the model apart.
    pub fn into_root(self) -> Dir {
        self.root
    }

    /// `Some(why)` once a command did something the model does not follow exactly (see the
    /// [non-guarantees](self#non-guarantees-inputs-the-model-does-not-cover)): its reply still
    /// matches, but the tree may differ from the disk from then on.
    pub fn uncovered(&self) -> Option<&str> {
        self.uncovered.as_deref()
    }

    /// The profile replies are rendered in.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Parse and run a raw `tool_use` input; malformed input is [`Outcome::MalformedInput`].
    pub fn outcome(&mut self, input: &Value) -> Outcome {
        match Command::parse(input) {
            Ok(c) => self.run(&c),
            Err(e) => Outcome::MalformedInput {
                detail: e.to_string(),
            },
        }
    }

    /// Run a parsed command and say what happened, as the reference would.
    pub fn run(&mut self, command: &Command) -> Outcome {
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

    // ----- walking -----

    /// The directory holding the last component of `p`, links and files on the way refused.
    fn parent(&self, p: &VPath) -> Result<&Dir, Walk> {
        let comps = p.components();
        let mut dir = &self.root;
        for name in &comps[..comps.len().saturating_sub(1)] {
            dir = match dir.get(name) {
                None => return Err(Walk::NotFound),
                Some(Entry::Dir(d)) => d,
                Some(Entry::Symlink(_)) => return Err(Walk::Symlink),
                Some(_) => return Err(Walk::ParentFile),
            };
        }
        Ok(dir)
    }

    /// Like [`Model::parent`], creating missing directories: checked first, then created, as
    /// the reference's walk only creates below the first missing name (where nothing can fail
    /// any more) and rolls back otherwise.
    fn parent_create(&mut self, p: &VPath) -> Result<&mut Dir, Walk> {
        let comps = p.components();
        let names = &comps[..comps.len().saturating_sub(1)];
        let mut dir = &self.root;
        for name in names {
            dir = match dir.get(name) {
                None => break,
                Some(Entry::Dir(d)) => d,
                Some(Entry::Symlink(_)) => return Err(Walk::Symlink),
                Some(_) => return Err(Walk::ParentFile),
            };
        }
        let mut dir = &mut self.root;
        for name in names {
            dir = match dir
                .entry(name.clone())
                .or_insert_with(|| Entry::Dir(Dir::new()))
            {
                Entry::Dir(d) => d,
                _ => unreachable!("checked above"),
            };
        }
        Ok(dir)
    }

    fn parent_mut(&mut self, p: &VPath) -> &mut Dir {
        let comps = p.components();
        let mut dir = &mut self.root;
        for name in &comps[..comps.len().saturating_sub(1)] {
            dir = match dir.get_mut(name) {
                Some(Entry::Dir(d)) => d,
                _ => unreachable!("the walk found it"),
            };
        }
        dir
    }

    fn leaf(p: &VPath) -> &str {
        p.components().last().map(String::as_str).unwrap_or(".")
    }

    /// The reference's `read_text` on an entry known to be a regular file or hard link.
    fn read_text(&self, entry: &Entry, path: &str) -> Result<String, Outcome> {
        let bytes = match entry {
            Entry::File(b) => b,
            Entry::HardLinked(_) => return Err(Outcome::HardLink { path: path.into() }),
            Entry::Sparse(len) if *len > self.options.max_file_bytes => {
                return Err(Outcome::FileTooLarge {
                    path: path.into(),
                    limit: self.options.max_file_bytes,
                })
            }
            // Within the limit: its NUL bytes are valid UTF-8.
            Entry::Sparse(len) => {
                return Ok("\0".repeat(usize::try_from(*len).unwrap_or(usize::MAX)))
            }
            _ => return Err(Outcome::UnsupportedFileType { path: path.into() }),
        };
        if bytes.len() as u64 > self.options.max_file_bytes {
            return Err(Outcome::FileTooLarge {
                path: path.into(),
                limit: self.options.max_file_bytes,
            });
        }
        String::from_utf8(bytes.clone()).map_err(|_| Outcome::NotUtf8 { path: path.into() })
    }

    // ----- view -----

    fn view(&self, path: &str, range: Option<[i64; 2]>) -> Outcome {
        let p = match parse(path) {
            Ok(p) => p,
            Err(o) => return o,
        };
        if p.is_root() {
            return self.listing(path, &p, &self.root);
        }
        let parent = match self.parent(&p) {
            Ok(d) => d,
            Err(w) => return walk_outcome(w, path, Outcome::ViewNotFound { path: path.into() }),
        };
        let Some(entry) = parent.get(Self::leaf(&p)) else {
            return Outcome::ViewNotFound { path: path.into() };
        };
        match entry {
            Entry::Symlink(_) => Outcome::Symlink { path: path.into() },
            Entry::Dir(d) => self.listing(path, &p, d),
            _ if p.has_trailing_slash() => Outcome::NotADirectory { path: path.into() },
            Entry::Special => Outcome::UnsupportedFileType { path: path.into() },
            _ => match self.read_text(entry, path) {
                Ok(text) => view_text(path, &text, range),
                Err(o) => o,
            },
        }
    }

    fn listing(&self, path: &str, p: &VPath, dir: &Dir) -> Outcome {
        let mut entries = Vec::new();
        self.collect(dir, &p.canonical(), 1, &mut entries);
        Outcome::ViewDir {
            path: path.into(),
            size: self.dir_sizes.of(dir),
            entries,
        }
    }

    /// Children and grandchildren of `dir`, pre-order, sorted by name; the reference's filter.
    fn collect(&self, dir: &Dir, prefix: &str, depth: u32, out: &mut Vec<ListEntry>) {
        for (name, entry) in dir {
            if name.starts_with('.') || name == "node_modules" || name.chars().any(forbidden_char) {
                continue;
            }
            let path = format!("{prefix}/{name}");
            match entry {
                Entry::File(bytes) => out.push(ListEntry {
                    size: bytes.len() as u64,
                    path,
                    dir: false,
                }),
                Entry::Sparse(len) => out.push(ListEntry {
                    size: *len,
                    path,
                    dir: false,
                }),
                Entry::Dir(sub) => {
                    out.push(ListEntry {
                        size: self.dir_sizes.of(sub),
                        path: path.clone(),
                        dir: true,
                    });
                    if depth < 2 {
                        self.collect(sub, &path, depth + 1, out);
                    }
                }
                Entry::Symlink(_) | Entry::Special | Entry::HardLinked(_) => {}
            }
        }
    }

    // ----- create -----

    fn create(&mut self, path: &str, text: &str) -> Outcome {
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
        // Check the last name before creating parents: an existing last name means every
        // parent existed, and the reference rolls back nothing it did not create.
        match self.parent(&p) {
            Ok(d) => match d.get(Self::leaf(&p)) {
                Some(Entry::Symlink(_)) => return Outcome::Symlink { path: path.into() },
                Some(_) => return Outcome::FileExists { path: path.into() },
                None => {}
            },
            Err(Walk::NotFound) => {}
            Err(Walk::ParentFile) => return Outcome::ParentNotADirectory { path: path.into() },
            Err(Walk::Symlink) => return Outcome::Symlink { path: path.into() },
        }
        let dir = match self.parent_create(&p) {
            Ok(d) => d,
            Err(Walk::Symlink) => return Outcome::Symlink { path: path.into() },
            Err(_) => return Outcome::ParentNotADirectory { path: path.into() },
        };
        dir.insert(
            Self::leaf(&p).to_owned(),
            Entry::File(text.as_bytes().to_vec()),
        );
        Outcome::Created { path: path.into() }
    }

    // ----- str_replace and insert -----

    /// The reference's `editable`: the parsed path and the file's text, or the refusal.
    fn editable(&self, path: &str, not_found: Outcome) -> Result<(VPath, String), Outcome> {
        let p = parse(path)?;
        if p.is_root() {
            return Err(Outcome::NotAFile { path: path.into() });
        }
        let parent = self
            .parent(&p)
            .map_err(|w| walk_outcome(w, path, not_found.clone()))?;
        let Some(entry) = parent.get(Self::leaf(&p)) else {
            return Err(not_found);
        };
        match entry {
            Entry::Symlink(_) => return Err(Outcome::Symlink { path: path.into() }),
            Entry::Dir(_) | Entry::Special => return Err(Outcome::NotAFile { path: path.into() }),
            Entry::File(_) | Entry::HardLinked(_) | Entry::Sparse(_) => {}
        }
        if p.has_trailing_slash() {
            return Err(Outcome::NotADirectory { path: path.into() });
        }
        let text = self.read_text(entry, path)?;
        Ok((p, text))
    }

    fn write(&mut self, p: &VPath, text: String) {
        let name = Self::leaf(p).to_owned();
        self.parent_mut(p)
            .insert(name, Entry::File(text.into_bytes()));
    }

    fn str_replace(&mut self, path: &str, old: &str, new: &str) -> Outcome {
        let not_found = Outcome::StrReplaceNotFound { path: path.into() };
        let (p, text) = match self.editable(path, not_found) {
            Ok(x) => x,
            Err(o) => return o,
        };
        match str_replace_text(path, &text, old, new) {
            Ok((updated, edited)) => {
                self.write(&p, updated);
                edited
            }
            Err(o) => o,
        }
    }

    fn insert(&mut self, path: &str, at: i64, insert_text: &str) -> Outcome {
        let not_found = Outcome::InsertNotFound { path: path.into() };
        let (p, text) = match self.editable(path, not_found) {
            Ok(x) => x,
            Err(o) => return o,
        };
        match inserted_text(&text, at, insert_text) {
            Ok(updated) => {
                self.write(&p, updated);
                Outcome::Inserted { path: path.into() }
            }
            Err(o) => o,
        }
    }

    // ----- delete -----

    fn delete(&mut self, path: &str) -> Outcome {
        let p = match parse(path) {
            Ok(p) => p,
            Err(o) => return o,
        };
        if p.is_root() {
            return Outcome::DeleteRoot;
        }
        let not_found = Outcome::DeleteNotFound { path: path.into() };
        let parent = match self.parent(&p) {
            Ok(d) => d,
            Err(w) => return walk_outcome(w, path, not_found),
        };
        let Some(entry) = parent.get(Self::leaf(&p)) else {
            return not_found;
        };
        if p.has_trailing_slash() && !matches!(entry, Entry::Dir(_)) {
            return Outcome::NotADirectory { path: path.into() };
        }
        if let Entry::Dir(d) = entry {
            if depth(d) > MAX_DELETE_DEPTH {
                self.uncovered = Some(format!(
                    "delete {path}: a tree deeper than {MAX_DELETE_DEPTH} directories"
                ));
                return Outcome::IoError {
                    path: path.into(),
                    kind: "too deeply nested".into(),
                };
            }
        }
        self.parent_mut(&p).remove(Self::leaf(&p));
        Outcome::Deleted { path: path.into() }
    }

    // ----- rename -----

    fn rename(&mut self, old_path: &str, new_path: &str) -> Outcome {
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
        let src = match self.parent(&old) {
            Ok(d) => d,
            Err(w) => return walk_outcome(w, old_path, not_found),
        };
        let Some(entry) = src.get(Self::leaf(&old)) else {
            return not_found;
        };
        let is_dir = matches!(entry, Entry::Dir(_));
        if old.has_trailing_slash() && !is_dir {
            return Outcome::NotADirectory {
                path: old_path.into(),
            };
        }
        if new.has_trailing_slash() && !is_dir {
            return Outcome::NotADirectory {
                path: new_path.into(),
            };
        }
        // The destination's parents: checked, then created (none is created when the last
        // name exists, since then every parent existed).
        match self.parent(&new) {
            Ok(d) if d.contains_key(Self::leaf(&new)) => return exists,
            Ok(_) | Err(Walk::NotFound) => {}
            Err(Walk::ParentFile) => {
                return Outcome::ParentNotADirectory {
                    path: new_path.into(),
                }
            }
            Err(Walk::Symlink) => {
                return Outcome::Symlink {
                    path: new_path.into(),
                }
            }
        }
        // `new` is not below `old` (rename_paths), so creating its parents leaves the source
        // where it is.
        if self.parent_create(&new).is_err() {
            unreachable!("checked above");
        }
        let moved = self
            .parent_mut(&old)
            .remove(Self::leaf(&old))
            .expect("the source exists");
        self.parent_mut(&new)
            .insert(Self::leaf(&new).to_owned(), moved);
        Outcome::Renamed {
            old_path: old_path.into(),
            new_path: new_path.into(),
        }
    }
}

impl Handler for Model {
    fn apply(&mut self, input: &Value) -> ToolResult {
        reply(self.profile, &self.outcome(input))
    }
}

/// Every entry below `dir`, keyed by its path relative to `dir` (`d/b.txt`), in sorted order:
/// the shape a walk of a folder on disk gives.
pub fn paths(dir: &Dir) -> BTreeMap<PathBuf, &Entry> {
    fn walk<'a>(dir: &'a Dir, prefix: &Path, out: &mut BTreeMap<PathBuf, &'a Entry>) {
        for (name, entry) in dir {
            let path = prefix.join(name);
            if let Entry::Dir(sub) = entry {
                walk(sub, &path, out);
            }
            out.insert(path, entry);
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, Path::new(""), &mut out);
    out
}

/// The outcome of a failed walk: a missing or file parent is the command's "not found".
fn walk_outcome(w: Walk, path: &str, not_found: Outcome) -> Outcome {
    match w {
        Walk::NotFound | Walk::ParentFile => not_found,
        Walk::Symlink => Outcome::Symlink { path: path.into() },
    }
}

/// Levels of directories below `dir` (0 when it holds no directory), without recursion.
fn depth(dir: &Dir) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(dir, 0usize)];
    while let Some((d, level)) = stack.pop() {
        deepest = deepest.max(level);
        for entry in d.values() {
            if let Entry::Dir(sub) = entry {
                stack.push((sub, level + 1));
            }
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model() -> Model {
        Model::new(Profile::Docs, Options::default(), DirSizes::Tmpfs)
    }

    #[test]
    fn links_are_refused_listed_never_and_removed_as_links() {
        let mut m = model();
        m.plant("/memories/out", Entry::Symlink("/etc".into()))
            .unwrap();
        m.plant("/memories/d/f.txt", Entry::File(b"x\n".to_vec()))
            .unwrap();
        let view = m.outcome(&json!({"command": "view", "path": "/memories"}));
        let Outcome::ViewDir { size, entries, .. } = view else {
            panic!("{view:?}")
        };
        assert_eq!(size, 80);
        let paths: Vec<_> = entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["/memories/d", "/memories/d/f.txt"]);
        assert_eq!(
            m.outcome(&json!({"command": "create", "path": "/memories/out/x", "file_text": ""})),
            Outcome::Symlink {
                path: "/memories/out/x".into()
            }
        );
        assert_eq!(
            m.outcome(&json!({"command": "rename", "old_path": "/memories/out", "new_path": "/memories/d/o"})),
            Outcome::Renamed {
                old_path: "/memories/out".into(),
                new_path: "/memories/d/o".into()
            }
        );
        assert_eq!(
            m.outcome(&json!({"command": "delete", "path": "/memories/d/o"})),
            Outcome::Deleted {
                path: "/memories/d/o".into()
            }
        );
        assert_eq!(m.paths().len(), 2);
    }

    #[test]
    fn a_delete_too_deep_is_flagged_uncovered() {
        let mut m = model();
        let deep = format!("/memories{}/f", "/a".repeat(MAX_DELETE_DEPTH + 2));
        m.plant(&deep, Entry::File(Vec::new())).unwrap();
        let o = m.outcome(&json!({"command": "delete", "path": "/memories/a"}));
        assert!(matches!(o, Outcome::IoError { .. }), "{o:?}");
        assert!(m.uncovered().is_some());
        let mut ok = model();
        let fits = format!("/memories{}/f", "/a".repeat(MAX_DELETE_DEPTH + 1));
        ok.plant(&fits, Entry::File(Vec::new())).unwrap();
        let o = ok.outcome(&json!({"command": "delete", "path": "/memories/a"}));
        assert!(matches!(o, Outcome::Deleted { .. }), "{o:?}");
        assert!(ok.paths().is_empty());
    }
}
