//! memcert's own scratch folders: every folder memcert makes to work in (case sandboxes and their
//! aliases, adapter folders, a handler's HOME and TMPDIR, `--app` and `mock-api` run folders,
//! fuzz stores), made private and then laid out, inspected and removed through directory
//! handles only; and the check a folder the user names must pass before memcert works in it.
//!
//! # Guarantees
//! - A [`Scratch`] is a fresh folder (`mkdtemp` semantics: a new random name, made with
//!   `mkdirat` and mode 0700 on a handle on its parent, then opened with `O_NOFOLLOW`, owned by
//!   the current user and empty), or a user's run folder ([`Scratch::run_folder`]) that is
//!   absent (made as above) or empty, owned by the current user and private (no group or other
//!   bits).
//! - The folder a scratch folder is made in, and every folder above a user's run folder, is
//!   opened once by a walk from `/` that follows no link (links in the name are resolved once,
//!   before the walk) and passes OpenSSH's StrictModes check ([`trusted_dir`]): each folder is
//!   owned by the current user or root and is not writable by group or others unless it is
//!   sticky (like `/tmp`). `--insecure-dirs` ([`set_insecure_dirs`]) turns the ownership and
//!   mode checks off, never the no-follow walk.
//! - Everything memcert lays out, reads back and removes in a scratch folder goes through the
//!   handle it holds ([`Scratch::dir`]) and handles opened from it one name at a time with
//!   `O_NOFOLLOW`: a component swapped for a link makes the operation fail, never reach the
//!   link's target. Removal ([`empty`], [`Scratch::remove`]) unlinks a link it meets and never
//!   follows one; the scratch folder itself is removed by name from its parent's handle only
//!   while that name is still the folder memcert made (same device and inode).
//! - Removal is iterative and holds at most 64 folder handles: a tree a handler made as deep as
//!   it liked is removed whole (deeper subtrees are moved up, by handle, and emptied from there).
//!
//! # Non-guarantees
//! - Handlers are given host path strings (the store root, HOME): a handler resolves them
//!   itself. What a handler does through a link is the oracle's business, not this module's.
//! - A process running as the same user can rename a scratch folder away, or swap another
//!   empty folder in for it between the identity check and the `rmdir`: memcert then leaves a
//!   folder behind or removes an empty one; it still never writes or removes through a link.
//! - A user's run folder that already existed is emptied, not removed; a folder memcert made
//!   above it is removed.
//!
//! # Ambient authority
//! [`Scratch::new_in`], [`Scratch::run_folder`], [`check_run_folder`] and [`trusted_dir`] open
//! a host folder by path (once, with no link followed after the one resolution); everything
//! else works on handles.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::AsRawFd as _;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use cap_fs_ext::DirExt as _;
use cap_std::fs::{Dir, DirBuilder, DirBuilderExt as _, MetadataExt as _};

/// The command-line flag that turns the ownership and mode checks off ([`set_insecure_dirs`]).
pub const INSECURE_FLAG: &str = "--insecure-dirs";

static INSECURE: AtomicBool = AtomicBool::new(false);

/// Accept folders that fail the StrictModes check ([`trusted_dir`]) and user run folders that
/// are not private, for the rest of the process (`--insecure-dirs`). The no-follow walks stay.
pub fn set_insecure_dirs(on: bool) {
    INSECURE.store(on, Ordering::Relaxed);
}

/// Whether [`set_insecure_dirs`] is on.
pub fn insecure_dirs() -> bool {
    INSECURE.load(Ordering::Relaxed)
}

/// A folder on the way to memcert's work that another user could change: one line naming the
/// folder, what is wrong and the flag that accepts it anyway.
#[derive(Debug, thiserror::Error)]
#[error("{} {why}: another user could swap what memcert makes in it for a link; fix its owner or mode, or pass {INSECURE_FLAG}", component.display())]
pub struct InsecureDir {
    /// The folder that fails the check.
    pub component: PathBuf,
    /// What is wrong with it (`is owned by uid 65534, ...`).
    pub why: String,
}

impl From<InsecureDir> for io::Error {
    fn from(e: InsecureDir) -> io::Error {
        io::Error::new(io::ErrorKind::PermissionDenied, e)
    }
}

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The StrictModes check of one folder, `at` naming it.
fn check_trusted(dir: &Dir, at: &Path) -> io::Result<()> {
    if insecure_dirs() {
        return Ok(());
    }
    let meta = dir.dir_metadata()?;
    let (uid, me) = (meta.uid(), euid());
    if uid != me && uid != 0 {
        return Err(InsecureDir {
            component: at.to_owned(),
            why: format!("is owned by uid {uid}, not by you (uid {me}) or root"),
        }
        .into());
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        return Err(InsecureDir {
            component: at.to_owned(),
            why: format!("is writable by group or others (mode {mode:04o}) and not sticky"),
        }
        .into());
    }
    Ok(())
}

/// Open the folder `path` for memcert to work in: its links resolved once
/// (`canonicalize`), then walked from `/` one component at a time with `O_NOFOLLOW`, each
/// folder passing the StrictModes check (owned by the current user or root; not writable by
/// group or others unless sticky). Returns the handle and the path walked.
///
/// A path is resolved once per process: later calls with the same path get the same folder
/// (a new handle on it) while it exists, whatever has been swapped for a link on the way since.
///
/// # Ambient authority
/// Resolves `path` and opens folders by name from `/`, the first time.
///
/// # Errors
/// [`InsecureDir`] (as an `io::Error` of kind `PermissionDenied`) for a folder that fails the
/// check, unless [`set_insecure_dirs`]; any I/O error of the walk (a component swapped for a
/// link during it: `ELOOP` or `ENOTDIR`).
pub fn trusted_dir(path: &Path) -> io::Result<(Dir, PathBuf)> {
    type Cache = std::collections::HashMap<PathBuf, (Dir, PathBuf)>;
    static CACHE: std::sync::OnceLock<std::sync::Mutex<Cache>> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = std::path::absolute(path)?;
    if let Some((dir, walked)) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        // A folder removed since (no links left) is resolved again.
        if dir.dir_metadata().is_ok_and(|m| m.nlink() > 0) {
            return Ok((dir.try_clone()?, walked.clone()));
        }
    }
    let (dir, walked) = walk_trusted(&key)?;
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, (dir.try_clone()?, walked.clone()));
    Ok((dir, walked))
}

/// [`trusted_dir`]'s resolution and walk, uncached.
fn walk_trusted(path: &Path) -> io::Result<(Dir, PathBuf)> {
    let canon = std::fs::canonicalize(path)?;
    let mut at = PathBuf::from("/");
    let mut dir = Dir::open_ambient_dir("/", cap_std::ambient_authority())?;
    check_trusted(&dir, &at)?;
    for c in canon.components() {
        match c {
            Component::RootDir => {}
            Component::Normal(name) => {
                let next = dir.open_dir_nofollow(name)?;
                at.push(name);
                check_trusted(&next, &at)?;
                dir = next;
            }
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{}: not a plain folder path", canon.display()),
                ))
            }
        }
    }
    Ok((dir, canon))
}

/// A folder memcert made (or a user's empty run folder it took), held by a handle; cleaned up
/// on drop ([`Scratch::remove`]). See the [module docs](self).
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
    dir: Dir,
    /// The topmost folder memcert made, to remove after emptying [`Scratch::dir`] (`None`: a
    /// user's folder that existed, only emptied; or already cleaned up).
    top: Option<Made>,
    done: bool,
}

/// A folder memcert made, by name in its parent's handle, with its identity.
#[derive(Debug)]
struct Made {
    parent: Dir,
    name: OsString,
    dev: u64,
    ino: u64,
}

impl Made {
    /// Whether `name` in `parent` is still the folder made (not a link, not another folder).
    fn still_there(&self) -> bool {
        self.parent
            .symlink_metadata(&self.name)
            .is_ok_and(|m| m.is_dir() && m.dev() == self.dev && m.ino() == self.ino)
    }
}

/// Set the mode of the folder `dir` is a handle on (reopened as `.` through it: the handle
/// itself may be `O_PATH`, on which `fchmod` fails).
fn chmod_dir(dir: &Dir, mode: u32) -> io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, ".", flags, Mode::empty())?;
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))?;
    Ok(())
}

/// Six random characters of a fresh name.
fn random_suffix() -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    (0..6)
        .map(|_| CHARS[fastrand::usize(..CHARS.len())] as char)
        .collect()
}

/// Make `name` in `parent` with mode 0700 and open it with no link followed; the handle and
/// its identity, or an error when what is there now is not an empty folder of this user.
fn make_private(parent: &Dir, name: &OsStr) -> io::Result<(Dir, u64, u64)> {
    let mut b = DirBuilder::new();
    b.mode(0o700);
    parent.create_dir_with(name, &b)?;
    let dir = parent.open_dir_nofollow(name)?;
    let meta = dir.dir_metadata()?;
    if meta.uid() != euid() || dir.entries()?.next().is_some() {
        return Err(io::Error::other(
            "the folder just made was swapped for another one",
        ));
    }
    if meta.mode() & 0o7777 != 0o700 {
        chmod_dir(&dir, 0o700)?;
    }
    Ok((dir, meta.dev(), meta.ino()))
}

impl Scratch {
    /// A fresh private folder `<prefix>XXXXXX` in the system temp folder (`$TMPDIR` or `/tmp`).
    ///
    /// # Ambient authority
    /// Opens the temp folder by path ([`trusted_dir`]).
    ///
    /// # Errors
    /// As [`Scratch::new_in`].
    pub fn new(prefix: &str) -> io::Result<Scratch> {
        Scratch::new_in(&std::env::temp_dir(), prefix)
    }

    /// A fresh private folder `<prefix>XXXXXX` in `parent`, which must pass [`trusted_dir`].
    ///
    /// # Ambient authority
    /// Opens `parent` by path ([`trusted_dir`]).
    ///
    /// # Errors
    /// `parent` fails the check or cannot be opened, or no fresh name could be made (16 tries;
    /// a name taken, or swapped right after it was made, is a try).
    pub fn new_in(parent: &Path, prefix: &str) -> io::Result<Scratch> {
        let (pdir, ppath) = trusted_dir(parent)?;
        Scratch::make_in(pdir, &ppath, prefix)
    }

    /// [`Scratch::new_in`] on a parent already open.
    fn make_in(parent: Dir, parent_path: &Path, prefix: &str) -> io::Result<Scratch> {
        let mut last = io::Error::new(io::ErrorKind::AlreadyExists, "no fresh name was free");
        for _ in 0..16 {
            let name = OsString::from(format!("{prefix}{}", random_suffix()));
            match make_private(&parent, &name) {
                Ok((dir, dev, ino)) => {
                    return Ok(Scratch {
                        path: parent_path.join(&name),
                        dir,
                        top: Some(Made {
                            parent,
                            name,
                            dev,
                            ino,
                        }),
                        done: false,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied => return Err(e),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// The run folder at `run` (an absolute path) the user named, taken for memcert to lay out
    /// in: absent (memcert makes it and any missing parents, mode 0700, and removes what it
    /// made), or an empty folder owned by the current user with no group or other bits (emptied
    /// again afterwards). The folders above it pass [`trusted_dir`]'s check. It is reached
    /// from the nearest folder that existed the first time the process named `run` (resolved
    /// then, once), down one name at a time with no link followed. With
    /// [`set_insecure_dirs`], an existing folder only has to be empty.
    ///
    /// # Ambient authority
    /// Opens the nearest existing folder by path ([`trusted_dir`]), then works by handle.
    ///
    /// # Errors
    /// [`check_run_folder`]'s, or any I/O error of making the folders.
    pub fn run_folder(run: &Path) -> io::Result<Scratch> {
        let (mut dir, mut path, names) = anchor_of(run)?;
        let mut top = None;
        for (i, name) in names.iter().enumerate() {
            let last = i + 1 == names.len();
            let next = match dir.open_dir_nofollow(name) {
                Ok(d) if last => {
                    check_private(&d, run)?;
                    d
                }
                Ok(d) => {
                    check_trusted(&d, &path.join(name))?;
                    d
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    let (d, dev, ino) = make_private(&dir, name)?;
                    if top.is_none() {
                        top = Some(Made {
                            parent: dir.try_clone()?,
                            name: name.clone(),
                            dev,
                            ino,
                        });
                    }
                    d
                }
                Err(e) => return Err(run_error(&path.join(name), e)),
            };
            path.push(name);
            dir = next;
        }
        Ok(Scratch {
            path,
            dir,
            top,
            done: false,
        })
    }

    /// The folder's host path (given to handlers; memcert itself uses [`Scratch::dir`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The handle on the folder.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Make the new file `name` in the folder (mode 0600, `O_EXCL`, so never through a link)
    /// and open it for writing.
    ///
    /// # Errors
    /// `name` exists, or any I/O error.
    pub fn create_file(&self, name: &str) -> io::Result<std::fs::File> {
        use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt as _};
        use cap_std::fs::OpenOptionsExt as _;
        let mut o = cap_std::fs::OpenOptions::new();
        o.write(true).create_new(true).mode(0o600);
        o.follow(FollowSymlinks::No);
        Ok(self.dir.open_with(name, &o)?.into_std())
    }

    /// Make the new file `name` in the folder holding `content`, readable by every user (mode
    /// 0644, `O_EXCL`, never through a link), and make the folder itself readable by all (0755):
    /// public code a handler run as another uid must read (memcert's adapters).
    ///
    /// # Errors
    /// `name` exists, or any I/O error.
    pub fn write_public(&self, name: &str, content: &[u8]) -> io::Result<()> {
        use std::io::Write as _;
        let mut f = self.create_file(name)?;
        f.write_all(content)?;
        rustix::fs::fchmod(&f, rustix::fs::Mode::from_raw_mode(0o644))?;
        chmod_dir(&self.dir, 0o755)
    }

    /// A fresh private folder `<prefix>XXXXXX` inside this one, made through its handle (the
    /// decoy HOME inside a handler's scratch root).
    ///
    /// # Errors
    /// As [`Scratch::new_in`], without the path check.
    pub fn child(&self, prefix: &str) -> io::Result<Scratch> {
        Scratch::make_in(self.dir.try_clone()?, &self.path, prefix)
    }

    /// Open the file `name` in the folder for reading, never through a link.
    ///
    /// # Errors
    /// `name` is missing or a link, or any I/O error.
    pub fn open_file(&self, name: &str) -> io::Result<std::fs::File> {
        use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt as _};
        let mut o = cap_std::fs::OpenOptions::new();
        o.read(true);
        o.follow(FollowSymlinks::No);
        Ok(self.dir.open_with(name, &o)?.into_std())
    }

    /// Empty the folder through its handle and remove what memcert made (the folder, or the
    /// topmost folder it made above a user's run folder) by name from its parent's handle, if
    /// that name is still the folder made.
    ///
    /// # Errors
    /// The first error of emptying (after three passes) or of removing.
    pub fn remove(mut self) -> io::Result<()> {
        self.clean_up()
    }

    fn clean_up(&mut self) -> io::Result<()> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(());
        }
        empty(&self.dir)?;
        match self.top.take() {
            Some(top) => remove_tree(&top),
            None => Ok(()),
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = self.clean_up();
    }
}

/// Why `run` cannot be laid out in, in one line (its path first).
fn run_error(run: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", run.display()))
}

/// Where `run` (an absolute path) is reached from: the nearest folder above it that existed the
/// first time this process asked ([`trusted_dir`], so resolved once), its path, and the names
/// from it down to `run` (`run`'s own name last). Every later walk goes down from that handle
/// one name at a time with `O_NOFOLLOW`, so a folder on the way swapped for a link since is
/// never followed.
fn anchor_of(run: &Path) -> io::Result<(Dir, PathBuf, Vec<OsString>)> {
    type Cache = std::collections::HashMap<PathBuf, (PathBuf, Vec<OsString>)>;
    static CACHE: std::sync::OnceLock<std::sync::Mutex<Cache>> = std::sync::OnceLock::new();
    if !run.is_absolute() || run.parent().is_none() || run.file_name().is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not an absolute folder path", run.display()),
        ));
    }
    let cache = CACHE.get_or_init(Default::default);
    let known = cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(run)
        .cloned();
    let (anchor, names) = match known {
        Some(k) => k,
        None => {
            let mut names = vec![run.file_name().unwrap_or_default().to_owned()];
            let mut at = run.parent().unwrap_or(Path::new("/"));
            loop {
                match std::fs::symlink_metadata(at) {
                    Ok(_) => break,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        names.push(at.file_name().unwrap_or_default().to_owned());
                        at = at.parent().unwrap_or(Path::new("/"));
                    }
                    Err(e) => return Err(run_error(at, e)),
                }
            }
            names.reverse();
            let k = (at.to_path_buf(), names);
            cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(run.to_path_buf(), k.clone());
            k
        }
    };
    let (dir, path) = trusted_dir(&anchor)?;
    Ok((dir, path, names))
}

/// A user's existing run folder must be empty, and (unless [`set_insecure_dirs`]) owned by the
/// current user with no group or other bits.
fn check_private(dir: &Dir, run: &Path) -> io::Result<()> {
    if dir.entries()?.next().is_some() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} is not empty; memcert only lays out a sandbox in an absent or empty folder",
                run.display()
            ),
        ));
    }
    if insecure_dirs() {
        return Ok(());
    }
    let meta = dir.dir_metadata()?;
    let (uid, me, mode) = (meta.uid(), euid(), meta.mode() & 0o7777);
    if uid != me {
        return Err(InsecureDir {
            component: run.to_owned(),
            why: format!("is owned by uid {uid}, not by you (uid {me}); memcert lays out only in a folder it makes or an empty one of yours"),
        }
        .into());
    }
    if mode & 0o077 != 0 {
        return Err(InsecureDir {
            component: run.to_owned(),
            why: format!("is not private (mode {mode:04o}; remove it or `chmod 700` it)"),
        }
        .into());
    }
    Ok(())
}

/// [`Scratch::run_folder`]'s checks without making or taking anything: the folders above
/// `run` pass [`trusted_dir`]'s check; `run` is absent, or an empty, private folder of the
/// current user, and not a link. Resolves `run`'s nearest existing folder for the process (a
/// check before the run pins what the run's layouts walk down from).
///
/// # Ambient authority
/// As [`Scratch::run_folder`].
///
/// # Errors
/// The first check that fails: [`InsecureDir`] (kind `PermissionDenied`), a folder that is not
/// empty (`AlreadyExists`), a path that is not absolute (`InvalidInput`) or an I/O error.
pub fn check_run_folder(run: &Path) -> io::Result<()> {
    let (mut dir, mut path, names) = anchor_of(run)?;
    for (i, name) in names.iter().enumerate() {
        let d = match dir.open_dir_nofollow(name) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(run_error(&path.join(name), e)),
        };
        path.push(name);
        if i + 1 == names.len() {
            check_private(&d, run)?;
        } else {
            check_trusted(&d, &path)?;
        }
        dir = d;
    }
    Ok(())
}

/// Remove the folder `made` (and everything in it) when its name still is that folder.
fn remove_tree(made: &Made) -> io::Result<()> {
    if !made.still_there() {
        return Ok(());
    }
    let dir = made.parent.open_dir_nofollow(&made.name)?;
    empty(&dir)?;
    made.parent.remove_dir(&made.name)
}

/// Remove everything in `dir` through its handle, keeping `dir`: each folder met is opened
/// with `O_NOFOLLOW` (given `u+rwx` first when it lacks it), emptied and removed; anything else,
/// links included, is unlinked. Up to three passes, for entries that change while it runs.
///
/// # Errors
/// The first error of the last pass.
pub fn empty(dir: &Dir) -> io::Result<()> {
    let mut last = Ok(());
    for _ in 0..3 {
        match empty_once(dir) {
            // Its last listing of `dir`, made after every removal, showed no entry.
            Ok(true) => return Ok(()),
            Ok(false) if is_empty(dir)? => return Ok(()),
            Ok(false) => last = Ok(()),
            Err(e) => last = Err(e),
        }
    }
    last
}

/// Whether the folder `dir` holds no entry but `.` and `..`.
///
/// # Errors
/// It cannot be opened for reading or listed.
fn is_empty(dir: &Dir) -> io::Result<bool> {
    let mut empty = true;
    for_each_entry(dir, |_, _| {
        empty = false;
        std::ops::ControlFlow::Break(())
    })?;
    Ok(empty)
}

/// Call `each` with every entry of the folder `dir` but `.` and `..`, in the order the
/// listing gives them, with its type as the listing tells it (`None` where the filesystem
/// does not: ask `lstat`), until it returns `Break`. One `openat` of `.` from the handle
/// (`O_RDONLY`, no link to follow) and its `getdents64` calls, streamed: `Dir::entries`
/// opens the folder twice and asks its flags.
///
/// # Errors
/// The folder cannot be opened for reading, or listing it failed.
pub(crate) fn for_each_entry(
    dir: &Dir,
    mut each: impl FnMut(&OsStr, Option<rustix::fs::FileType>) -> std::ops::ControlFlow<()>,
) -> io::Result<()> {
    use rustix::fs::{FileType, Mode, OFlags};
    use std::os::unix::ffi::OsStrExt as _;
    let fd = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    for e in rustix::fs::Dir::new(fd)? {
        let e = e?;
        let name = e.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let ft = e.file_type();
        let ft = (ft != FileType::Unknown).then_some(ft);
        if each(OsStr::from_bytes(name), ft).is_break() {
            break;
        }
    }
    Ok(())
}

/// How many folders deep [`empty_once`] holds handles: below that, a folder's subtree is moved
/// up to the top folder (a `renameat` between two handles) and emptied from there, so a tree a
/// handler made as deep as it liked costs a bounded number of descriptors and no recursion.
const EMPTY_DEPTH: usize = 64;

/// One pass of [`empty`], iterative: a stack of handles, one per level, at most
/// [`EMPTY_DEPTH`] deep. True when its last listing of `top` showed no entry at all (`top`
/// was empty then, after every removal of the pass).
fn empty_once(top: &Dir) -> io::Result<bool> {
    let mut first = None;
    let mut clean = false;
    // The folders being emptied below `top`, each with its name in the one above.
    let mut stack: Vec<(Dir, OsString)> = Vec::new();
    loop {
        let dir = stack.last().map_or(top, |(d, _)| d);
        let mut saw = false;
        let next = next_subfolder(dir, &mut first, &mut saw);
        if stack.is_empty() {
            // A listing that showed nothing found no folder either.
            clean = !saw;
        }
        match next {
            Some(name) if stack.len() >= EMPTY_DEPTH => {
                // Too deep to hold another handle: move that subtree up to the top and go on
                // there (a fresh name; a clash is another try).
                let fresh = OsString::from(format!(".memcert-deep-{}", random_suffix()));
                if let Err(e) = rustix::fs::renameat(dir, &name, top, &fresh) {
                    first.get_or_insert(e.into());
                    return first.map_or(Ok(false), Err);
                }
            }
            Some(name) => match dir.open_dir_nofollow(&name) {
                Ok(sub) => stack.push((sub, name)),
                // Swapped for something else since it was listed: unlink that instead.
                Err(_) => {
                    if let Err(e) = dir.remove_file(&name) {
                        first.get_or_insert(e);
                        // Neither a folder nor removable: leave this level.
                        let Some((done, name)) = stack.pop() else {
                            break;
                        };
                        drop(done);
                        let _ = stack.last().map_or(top, |(d, _)| d).remove_dir(&name);
                    }
                }
            },
            None => {
                let Some((done, name)) = stack.pop() else {
                    break;
                };
                drop(done);
                if let Err(e) = stack.last().map_or(top, |(d, _)| d).remove_dir(&name) {
                    first.get_or_insert(e);
                }
            }
        }
    }
    first.map_or(Ok(clean), Err)
}

/// Unlink every entry of `dir` that is not a folder (links included) and return the name of
/// one folder left in it (the first listed, given `u+rwx` when it lacks it), or `None` when
/// only those that could not be read are left. Errors go to `first`; `saw` is set when the
/// listing showed any entry.
fn next_subfolder(dir: &Dir, first: &mut Option<io::Error>, saw: &mut bool) -> Option<OsString> {
    use std::ops::ControlFlow;
    let mut found = None;
    let unlink = |name: &OsStr, first: &mut Option<io::Error>| {
        if let Err(e) = dir.remove_file(name) {
            first.get_or_insert(e);
        }
    };
    let listed = for_each_entry(dir, |name, ft| {
        *saw = true;
        // What the listing says is not a folder is unlinked without an `lstat`: `unlinkat`
        // never removes a folder (one swapped in since fails, and the next pass takes it).
        if ft.is_some_and(|ft| ft != rustix::fs::FileType::Directory) {
            unlink(name, first);
            return ControlFlow::Continue(());
        }
        // The listing goes on past the first folder, unlinking what is not one: the other
        // folders wait for the next listing.
        if found.is_some() && ft == Some(rustix::fs::FileType::Directory) {
            return ControlFlow::Continue(());
        }
        match dir.symlink_metadata(name) {
            Ok(m) if m.is_dir() && found.is_some() => {}
            Ok(m) if m.is_dir() => {
                if m.mode() & 0o700 != 0o700 {
                    let _ = chmod_nofollow(dir, name, (m.mode() & 0o7777) | 0o700);
                }
                found = Some(name.to_owned());
            }
            Ok(_) => unlink(name, first),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                first.get_or_insert(e);
            }
        }
        ControlFlow::Continue(())
    });
    if let Err(e) = listed {
        first.get_or_insert(e);
    }
    found
}

/// `chmod` of `name` in `dir` that never follows a link: the object is opened with
/// `O_PATH | O_NOFOLLOW`, refused when it is a link, and changed through `/proc/self/fd`.
///
/// # Errors
/// `name` is a link (`InvalidInput`), or any I/O error.
pub fn chmod_nofollow(dir: &Dir, name: &OsStr, mode: u32) -> io::Result<()> {
    use rustix::fs::{FileType, Mode, OFlags};
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) == FileType::Symlink {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a link's mode is not changed (it would change its target's)",
        ));
    }
    let proc = format!("/proc/self/fd/{}", fd.as_raw_fd());
    rustix::fs::chmod(proc.as_str(), Mode::from_raw_mode(mode & 0o7777))?;
    Ok(())
}

/// Open the folder `rel` (relative, plain names) below `dir` one component at a time with
/// `O_NOFOLLOW`; `dir` itself (a new handle) when `rel` is empty.
///
/// # Errors
/// A component is missing, not a folder or a link, or `rel` holds `..`, `/` or a prefix.
pub fn open_nofollow(dir: &Dir, rel: &Path) -> io::Result<Dir> {
    walk_nofollow(dir, rel, false)
}

/// [`open_nofollow`], making each missing folder (mode 0755 before the umask, as `mkdir -p`).
///
/// # Errors
/// As [`open_nofollow`]; a component that exists and is not a folder.
pub fn create_nofollow(dir: &Dir, rel: &Path) -> io::Result<Dir> {
    walk_nofollow(dir, rel, true)
}

/// The walk of [`open_nofollow`] (`create`: false) and [`create_nofollow`] (`create`: true).
fn walk_nofollow(dir: &Dir, rel: &Path, create: bool) -> io::Result<Dir> {
    let mut at = dir.try_clone()?;
    for c in rel.components() {
        match c {
            Component::Normal(name) => {
                if create {
                    match at.create_dir(name) {
                        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                        _ => {}
                    }
                }
                at = at.open_dir_nofollow(name)?;
            }
            Component::CurDir => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{}: not a relative path of plain names", rel.display()),
                ))
            }
        }
    }
    Ok(at)
}

/// The folder holding `rel` below `dir` (opened as [`open_nofollow`] opens, or made as
/// [`create_nofollow`] makes when `create`) and `rel`'s last name.
///
/// # Errors
/// `rel` has no last name, or the errors of the walk.
pub fn parent_nofollow(dir: &Dir, rel: &Path, create: bool) -> io::Result<(Dir, OsString)> {
    let name = rel.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: no last name", rel.display()),
        )
    })?;
    let up = rel.parent().unwrap_or(Path::new(""));
    let parent = if create {
        create_nofollow(dir, up)?
    } else {
        open_nofollow(dir, up)?
    };
    Ok((parent, name.to_owned()))
}

/// Remove the folders `<prefix><pid>-XXXXXX` in `parent` that processes now gone left behind
/// (a fuzz process ends without running destructors) and that belong to the current user.
/// Best effort: a folder whose process still runs, whose name does not parse, or of another
/// user is left alone; removal goes through handles ([`empty`]).
///
/// # Ambient authority
/// Opens `parent` by path ([`trusted_dir`]).
pub fn remove_stale(parent: &Path, prefix: &str) {
    // Without /proc no process can be known gone.
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok((dir, _)) = trusted_dir(parent) else {
        return;
    };
    let Ok(entries) = dir.entries() else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let gone = !Path::new("/proc").join(pid.to_string()).exists();
        let Ok(meta) = entry.metadata() else { continue };
        if !gone || pid == std::process::id() || !meta.is_dir() || meta.uid() != euid() {
            continue;
        }
        let made = Made {
            parent: match dir.try_clone() {
                Ok(d) => d,
                Err(_) => return,
            },
            name,
            dev: meta.dev(),
            ino: meta.ino(),
        };
        let _ = remove_tree(&made);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn a_tree_deeper_than_the_handles_held_is_removed_whole() {
        let parent = tempfile::tempdir().unwrap();
        let s = Scratch::new_in(parent.path(), "memcert-t-").unwrap();
        // 3,000 folders deep, made by handle (deeper than PATH_MAX as a path), a file in each.
        let mut at = s.dir().try_clone().unwrap();
        for i in 0..3_000 {
            at.write("f", "x").unwrap();
            if i % 2 == 0 {
                at.create_dir("sibling").unwrap();
            }
            at.create_dir("d").unwrap();
            at = at.open_dir("d").unwrap();
        }
        drop(at);
        // On a small stack: a recursive walk, one frame per level, would overflow it.
        let dir = s.dir().try_clone().unwrap();
        std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(move || empty(&dir).unwrap())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(s.dir().entries().unwrap().count(), 0);
        let p = s.path().to_owned();
        s.remove().unwrap();
        assert!(std::fs::symlink_metadata(&p).is_err());
    }

    #[test]
    fn a_scratch_folder_is_fresh_private_and_goes_on_drop() {
        let parent = tempfile::tempdir().unwrap();
        let s = Scratch::new_in(parent.path(), "memcert-t-").unwrap();
        let p = s.path().to_owned();
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.starts_with("memcert-t-") && name.len() == "memcert-t-".len() + 6);
        let meta = std::fs::symlink_metadata(&p).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.permissions().mode() & 0o7777, 0o700);
        s.dir().create_dir("a").unwrap();
        s.dir().write("a/b", "x").unwrap();
        drop(s);
        assert!(std::fs::symlink_metadata(&p).is_err());
    }

    #[test]
    fn removal_never_follows_a_link_and_leaves_a_swapped_name_alone() {
        let parent = tempfile::tempdir().unwrap();
        let victim = tempfile::tempdir().unwrap();
        std::fs::write(victim.path().join("keep.txt"), "keep").unwrap();
        let s = Scratch::new_in(parent.path(), "memcert-t-").unwrap();
        let p = s.path().to_owned();
        // A link inside, and the folder itself renamed away and replaced by a link.
        std::os::unix::fs::symlink(victim.path(), p.join("link")).unwrap();
        let moved = parent.path().join("moved");
        std::fs::rename(&p, &moved).unwrap();
        std::os::unix::fs::symlink(victim.path(), &p).unwrap();
        drop(s);
        assert_eq!(
            std::fs::read_to_string(victim.path().join("keep.txt")).unwrap(),
            "keep"
        );
        // Emptied through the handle; the link in its place is not removed through.
        assert_eq!(std::fs::read_dir(&moved).unwrap().count(), 0);
        assert!(std::fs::symlink_metadata(&p).unwrap().is_symlink());
    }

    #[test]
    fn removal_gives_back_the_modes_it_needs() {
        let parent = tempfile::tempdir().unwrap();
        let s = Scratch::new_in(parent.path(), "memcert-t-").unwrap();
        let p = s.path().to_owned();
        std::fs::create_dir_all(p.join("a/b")).unwrap();
        std::fs::write(p.join("a/b/f"), "x").unwrap();
        std::fs::set_permissions(p.join("a"), std::fs::Permissions::from_mode(0o000)).unwrap();
        s.remove().unwrap();
        assert!(!p.exists());
    }

    #[test]
    fn strict_modes_refuse_a_folder_others_can_write() {
        let parent = tempfile::tempdir().unwrap();
        let open = parent.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = Scratch::new_in(&open, "memcert-t-").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("{} is writable by group or others (mode 0777) and not sticky: another user could swap", open.display())),
            "{text}"
        );
        assert!(text.ends_with("or pass --insecure-dirs"), "{text}");
        // Sticky, like /tmp: accepted.
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        Scratch::new_in(&open, "memcert-t-").unwrap();
    }

    #[test]
    fn a_run_folder_is_made_or_taken_only_when_private_and_empty() {
        let parent = tempfile::tempdir().unwrap();
        // Absent: made with its missing parents, all removed afterwards.
        let run = parent.path().join("x/y/run");
        let s = Scratch::run_folder(&run).unwrap();
        assert_eq!(
            std::fs::metadata(&run).unwrap().permissions().mode() & 0o777,
            0o700
        );
        s.dir().write("f", "x").unwrap();
        drop(s);
        assert!(!parent.path().join("x").exists());
        // Existing, empty and private: emptied afterwards, kept.
        std::fs::create_dir(&run.parent().unwrap().parent().unwrap()).unwrap();
        std::fs::create_dir(run.parent().unwrap()).unwrap();
        std::fs::create_dir(&run).unwrap();
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = check_run_folder(&run).unwrap_err().to_string();
        assert!(e.contains("is not private (mode 0755"), "{e}");
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
        let s = Scratch::run_folder(&run).unwrap();
        s.dir().write("f", "x").unwrap();
        drop(s);
        assert!(run.is_dir() && std::fs::read_dir(&run).unwrap().count() == 0);
        std::fs::write(run.join("keep"), "k").unwrap();
        let e = check_run_folder(&run).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        // A link is never taken.
        let link = parent.path().join("link");
        std::os::unix::fs::symlink(parent.path().join("x"), &link).unwrap();
        assert!(Scratch::run_folder(&link).is_err());
    }
}
