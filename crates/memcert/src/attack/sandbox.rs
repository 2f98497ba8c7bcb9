//! The per-case sandbox: a fresh private folder holding the store root, canary files around
//! it, and the case's planted files, links and FIFOs inside it.
//!
//! ```text
//! <run>/                     a fresh private folder per case (crate::scratch)
//!   canary.txt, etc/passwd   canaries two levels above the root
//!   base/                    base_dir given to the handler
//!     canary.txt, etc/passwd canaries one level above the root
//!     memories/              the store root (/memories)
//!     memories_evil/  memories_private/  memories_backup/   sibling folders (prefix confusion)
//!     .memories/             a dot-named sibling of the root: secret.txt, canary-<token>.txt
//!     outside/               canary.txt, secret.txt, hard-source.txt, canary-<token>.txt, sub/
//!   base_backup/  .base/     siblings of the base folder whose names start like it (a handler
//!                            whose boundary is `base` tested as a string prefix reaches them):
//!                            secret.txt, canary-<token>.txt
//! ```
//!
//! Every ancestor level from the store up to the run folder has siblings whose names share a
//! prefix with it (named after the real folders: an app's `--memory-dir` `<x>/<b>/<r>` gets
//! `<b>_backup/`, `.<b>/`, `.<r>/`, `<r>_backup/` inside `<x>`); payloads aim at each
//! (`{BASE}` and `{ROOT}` in case inputs are the base and root folders' names,
//! `certify::instantiate`).
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
//! (`u+rwx` on every folder) as the folder is removed. A character device ([`Fs::CharDevice`])
//! is made with `mknodat` (mode 0666), which needs `CAP_MKNOD`: without it the layout fails with
//! `PermissionDenied` and the runner SKIPs the case; a sparse file ([`Fs::Sparse`]) is a new file
//! given its length with `ftruncate`, no block written (the walks keep at most 4 MiB of it, the
//! token search skips its holes).
//!
//! # The canary search of the store
//! After a case the store is searched for the token ([`Sandbox::scan_store_unchecked`]): every
//! regular file's whole data, in bounded chunks, whatever its length or link count, but a file
//! whose (device, inode) is one memcert wrote outside (a hard link to a canary is the outside
//! file itself, judged by the outside comparison). Per search at most 1 GiB of data, 200,000
//! entries and 512 folders deep are searched; what those bounds leave out is named
//! ([`Unsearched`]) and the case is ERROR (`store-unsearched`), never clean. A file or folder
//! the harness cannot open (mode 000, made by a case or a handler) is not searched, and not
//! named.
//!
//! # Guarantees
//! - The run folder and the alias are [`Scratch`] folders: fresh, private (0700), made in a
//!   temp folder that passes the StrictModes check, or (an app's fixed memory folder,
//!   [`Sandbox::create_at_unchecked`]) an absent or empty private run folder of the current
//!   user below folders that pass it.
//! - The harness lays out, reads back (the oracle's trees, [`Sandbox::node_unchecked`]) and
//!   removes the sandbox only through the handles it holds on the run folder, `base/` and the
//!   alias, and handles opened from them one name at a time with `O_NOFOLLOW`: whatever a
//!   handler (or anyone) swaps for a link, the harness never reads, writes, changes the mode
//!   of, or removes anything through it. A walk skips what it cannot open without following.
//!
//! # Non-guarantees
//! - Handlers get host paths ([`Sandbox::base`], [`Sandbox::root`]) and resolve them
//!   themselves; what they do is judged, not prevented.
//! - The walks of the outside and the checked paths keep at most 4 MiB of a file (64 MiB per
//!   walk; a longer file is compared by its size, inode and change time); the token search of
//!   the store reads up to 1 GiB per case: a handler that writes that much in the store makes
//!   memcert read it (and the case ERROR past it).
//!
//! # Ambient authority
//! Making the run folder opens its parent folder by host path once (`crate::scratch`); the
//! rest goes through handles. The `_unchecked` names are kept from when it did not: they still
//! mark the harness's own access to the scene, outside any handler's capability.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use cap_fs_ext::{DirExt as _, FollowSymlinks, OpenOptionsFollowExt as _};
use cap_std::fs::{Dir, DirBuilder, DirBuilderExt as _, MetadataExt as _, OpenOptions};

use crate::scratch::{self, Scratch};
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

/// The sandbox of one case. The folders are removed on drop.
#[derive(Debug)]
pub struct Sandbox {
    /// The alias goes first: fields drop in order.
    alias: Option<Scratch>,
    run: Scratch,
    /// A handle on `base/`, the root's parent.
    base_dir: Dir,
    /// `base/`'s name in the run folder.
    base_name: OsString,
    /// The root's name in `base/`.
    root_name: OsString,
    base: PathBuf,
    root: PathBuf,
    token: String,
    /// The run folder is a fresh temp folder (its name is random, so it is a secret too).
    temp: bool,
    /// [`Sandbox::host_paths`], spelt once when the run folder is made (its path does not
    /// change; canonicalizing it again for every case cost a `readlink` per component).
    host_paths: Vec<String>,
    /// Device and inode of every regular file memcert wrote outside the store (the canaries,
    /// the alias's, a hard link's source), sorted: a store file that is one of them is an
    /// outside file itself (a planted or handler-made hard link), whose changes show in the
    /// outside diff, and is not searched for the token ([`Sandbox::scan_store_unchecked`]).
    outside_files: std::sync::Mutex<Vec<(u64, u64)>>,
}

/// Where case sandboxes are made: `$TMPDIR` when it is set (the user's choice); otherwise
/// `/dev/shm` when it is a writable tmpfs folder with at least 1 GiB free (laying out and
/// walking some 25 canaries per case costs about a third of what it costs on a disk, which makes
/// the harness's own time per case about 1 ms); otherwise the system temp folder. Decided once
/// per process, its links resolved.
pub fn default_parent() -> &'static Path {
    static PARENT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PARENT.get_or_init(|| {
        let chosen = if std::env::var_os("TMPDIR").is_some() {
            std::env::temp_dir()
        } else {
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
        };
        std::fs::canonicalize(&chosen).unwrap_or(chosen)
    })
}

/// The outside's regular files held open ([`Sandbox::hold_outside_files`]), each with the bytes
/// it held then.
#[derive(Debug)]
pub struct HeldFiles {
    /// Each file's path (as [`Sandbox::outside_unchecked`] names it), handle and bytes.
    files: Vec<(PathBuf, cap_std::fs::File, Vec<u8>)>,
    /// Every file of the tree is held.
    pub complete: bool,
}

impl HeldFiles {
    /// True when every held file still holds its bytes (read again with one `pread` from offset
    /// 0, one byte more than it held): a write through a shared `mmap`, which inotify does not
    /// report, shows here. What replaced a file by its name, or changed its mode, does not:
    /// the watches of the outside see those (`attack::watch`).
    pub fn unchanged(&self) -> bool {
        self.unchanged_where(|_| true)
    }

    /// [`HeldFiles::unchanged`] of the held files whose path `pick` takes (the others are not
    /// read).
    pub fn unchanged_where(&self, pick: impl Fn(&Path) -> bool) -> bool {
        use cap_std::fs::FileExt as _;
        let mut buf = Vec::new();
        self.files
            .iter()
            .filter(|(p, ..)| pick(p))
            .all(|(_, f, bytes)| {
                buf.clear();
                buf.resize(bytes.len() + 1, 0);
                // One read: a regular file gives all it holds up to the length asked; a short
                // read that is not the end shows as a difference (the runner walks then).
                match f.read_at(&mut buf, 0) {
                    Ok(got) => buf[..got] == bytes[..],
                    Err(_) => false,
                }
            })
    }
}

/// The relative path below the store root of a virtual path (`/memories/a/b` -> `a/b`).
fn rel_of(vpath: &str) -> PathBuf {
    PathBuf::from(
        vpath
            .strip_prefix("/memories")
            .unwrap_or(vpath)
            .trim_start_matches('/'),
    )
}

/// Open or create `name` in `dir` for writing, truncated, never through a link and never
/// blocking on a FIFO.
fn open_write(dir: &Dir, name: &OsStr) -> io::Result<cap_std::fs::File> {
    use cap_std::fs::OpenOptionsExt as _;
    let mut o = OpenOptions::new();
    o.write(true).create(true).truncate(true);
    o.follow(FollowSymlinks::No);
    o.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    dir.open_with(name, &o)
}

/// Write `content` to `name` in `dir` ([`open_write`]).
fn write_at(dir: &Dir, name: impl AsRef<OsStr>, content: impl AsRef<[u8]>) -> io::Result<()> {
    write_file_at(dir, name, content).map(drop)
}

/// [`write_at`], and the device and inode of the file written (read from its handle).
fn write_file_at(
    dir: &Dir,
    name: impl AsRef<OsStr>,
    content: impl AsRef<[u8]>,
) -> io::Result<(u64, u64)> {
    use std::io::Write as _;
    let mut f = open_write(dir, name.as_ref())?;
    f.write_all(content.as_ref())?;
    let meta = f.metadata()?;
    Ok((meta.dev(), meta.ino()))
}

/// Make a folder `name` in `dir` unless one is there, and open it with no link followed.
fn dir_in(dir: &Dir, name: &str) -> io::Result<Dir> {
    scratch::create_nofollow(dir, Path::new(name))
}

/// A special file (FIFO, socket) of mode 0600 named `name` in `dir`.
fn mknod_at(dir: &Dir, name: &OsStr, kind: rustix::fs::FileType) -> io::Result<()> {
    let mode = rustix::fs::Mode::from_raw_mode(0o600);
    rustix::fs::mknodat(dir, name, kind, mode, 0).map_err(io::Error::from)
}

impl Sandbox {
    /// Lay out a fresh sandbox and the case's `setup`.
    ///
    /// # Ambient authority
    /// Opens the temp folder ([`default_parent`]) by host path; the rest goes by handle.
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
    /// Opens `parent` by host path (`crate::scratch::trusted_dir`); the rest goes by handle.
    ///
    /// # Errors
    /// `parent` fails the StrictModes check, or any I/O error of the layout.
    pub fn create_in_unchecked(parent: &Path, prefix: &str, setup: &[Fs]) -> io::Result<Sandbox> {
        let run = Scratch::new_in(parent, prefix)?;
        Sandbox::lay_out_unchecked(run, true, OsStr::new("base"), OsStr::new("memories"), setup)
    }

    /// Lay out a fresh sandbox whose store root is `root` (an app's fixed memory folder), with
    /// `root`'s parent as the base and its grandparent as the run folder. The run folder must be
    /// absent, or empty, owned by the current user and private (`crate::scratch::Scratch::run_folder`;
    /// the folders above it pass the StrictModes check): memcert never writes among files it
    /// did not make, nor in a folder another user can reach. On drop the run folder is emptied
    /// (what memcert made is removed).
    ///
    /// # Ambient authority
    /// Opens the run folder's nearest existing folder by host path; the rest goes by handle.
    ///
    /// # Errors
    /// `root` with a `..` component or without two parents, a run folder that is a symbolic
    /// link, not empty or not private, a folder above it that fails the StrictModes check, or
    /// any I/O error.
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
        let (Some(root_name), Some(base_name), Some(run)) = (
            root.file_name(),
            root.parent().and_then(Path::file_name),
            root.parent()
                .and_then(Path::parent)
                .filter(|p| !p.as_os_str().is_empty()),
        ) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} needs two parent folders for the canaries",
                    root.display()
                ),
            ));
        };
        if std::fs::symlink_metadata(run).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} (two levels above the memory folder, where the canaries go) is a symbolic link; name the real folder",
                    run.display()
                ),
            ));
        }
        let run = Scratch::run_folder(&std::path::absolute(run)?)?;
        Sandbox::lay_out_unchecked(run, false, base_name, root_name, setup)
    }

    fn lay_out_unchecked(
        run: Scratch,
        temp: bool,
        base_name: &OsStr,
        root_name: &OsStr,
        setup: &[Fs],
    ) -> io::Result<Sandbox> {
        let base_dir = scratch::create_nofollow(run.dir(), Path::new(base_name))?;
        let base = run.path().join(base_name);
        let root = base.join(root_name);
        let mut sb = Sandbox {
            alias: None,
            run,
            base_dir,
            base_name: base_name.to_owned(),
            root_name: root_name.to_owned(),
            base,
            root,
            token: format!("MEMCERT-CANARY-{:016x}", fastrand::u64(..)),
            temp,
            host_paths: Vec::new(),
            outside_files: std::sync::Mutex::default(),
        };
        sb.host_paths = sb.spell_host_paths();
        // The alias goes in the temp folder next to a temp run folder, so upward paths from the
        // store reach it as they would reach the run folder; a folder the user named gets one
        // in the temp folder.
        let alias_parent = match (temp, sb.run.path().parent()) {
            (true, Some(p)) => p.to_path_buf(),
            _ => default_parent().to_path_buf(),
        };
        let (alias, alias_files) = make_alias(&alias_parent, &sb.host_paths(), &sb.token)?;
        sb.alias = Some(alias);
        sb.note_outside_files(alias_files);
        sb.make_root()?;
        sb.plant_canaries()?;
        sb.plant_all_unchecked(setup)?;
        Ok(sb)
    }

    /// The canaries around the root ([module docs](self)).
    fn plant_canaries(&self) -> io::Result<()> {
        let run = self.run.dir();
        let base = &self.base_dir;
        let run_etc = dir_in(run, "etc")?;
        let base_etc = dir_in(base, "etc")?;
        let outside = dir_in(base, "outside")?;
        let sub = dir_in(&outside, "sub")?;
        let evil = dir_in(base, "memories_evil")?;
        let private = dir_in(base, "memories_private")?;
        let backup = dir_in(base, "memories_backup")?;
        for (dir, name) in [
            (run, "canary.txt"),
            (&run_etc, "passwd"),
            (base, "canary.txt"),
            (&base_etc, "passwd"),
            (&evil, "canary.txt"),
            (&private, "secret.txt"),
            (&backup, "secret.txt"),
            (&outside, "canary.txt"),
            (&outside, "secret.txt"),
            (&outside, "hard-source.txt"),
            (&sub, "inner.txt"),
        ] {
            self.write_canary(dir, OsStr::new(name))?;
        }
        // A file named after the token in every folder around the root, so a listing of any of
        // them (not only a read) shows the token.
        let token_name = format!("canary-{}.txt", self.token);
        for dir in [
            run, base, &run_etc, &base_etc, &outside, &sub, &evil, &private, &backup,
        ] {
            self.write_canary(dir, OsStr::new(&token_name))?;
        }
        for dir in self.prefix_siblings()? {
            self.write_canary(&dir, OsStr::new("secret.txt"))?;
            self.write_canary(&dir, OsStr::new(&token_name))?;
        }
        Ok(())
    }

    /// The folders beside each ancestor of the store up to the run folder whose names share a
    /// prefix with it ([module docs](self)): `<base>_backup/` and `.<base>/` beside `base/`,
    /// `.<root>/` (and `<root>_backup/` when the root is not `memories`, whose
    /// `memories_backup/` is planted already) beside the root. Made here, opened with no link
    /// followed. A handler whose boundary is the base folder, tested as a string prefix, is
    /// caught reaching them (bug:B04, bug:B05).
    fn prefix_siblings(&self) -> io::Result<Vec<Dir>> {
        let named = |prefix: &str, name: &OsStr, suffix: &str| {
            let mut n = OsString::from(prefix);
            n.push(name);
            n.push(suffix);
            n
        };
        let mut wanted = vec![
            (self.run.dir(), named("", &self.base_name, "_backup")),
            (self.run.dir(), named(".", &self.base_name, "")),
            (&self.base_dir, named(".", &self.root_name, "")),
        ];
        if self.root_name != "memories" {
            wanted.push((&self.base_dir, named("", &self.root_name, "_backup")));
        }
        wanted
            .into_iter()
            .map(|(dir, name)| scratch::create_nofollow(dir, Path::new(&name)))
            .collect()
    }

    /// A canary named `name` in `dir`: the token, the name, a second line. Its device and
    /// inode are noted as an outside file's (every canary is outside the store).
    fn write_canary(&self, dir: &Dir, name: &OsStr) -> io::Result<()> {
        let shown = name.to_str().unwrap_or("");
        let id = write_file_at(
            dir,
            name,
            format!("{} {shown}\nSECRET line two\n", self.token),
        )?;
        self.note_outside_files([id]);
        Ok(())
    }

    /// Note `ids` (device, inode) as outside files ([`Sandbox::outside_files`]).
    fn note_outside_files(&self, ids: impl IntoIterator<Item = (u64, u64)>) {
        let mut known = self
            .outside_files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        known.extend(ids);
        known.sort_unstable();
        known.dedup();
    }

    /// The host path of a virtual path (`/memories/a` -> `<root>/a`); no checks, harness only.
    pub fn host_unchecked(&self, vpath: &str) -> PathBuf {
        let rel = rel_of(vpath);
        if rel.as_os_str().is_empty() {
            self.root.clone()
        } else {
            self.root.join(rel)
        }
    }

    /// A handle on the store root, opened from `base/`'s handle with no link followed.
    ///
    /// # Errors
    /// The root is a link, not a folder, or gone.
    pub fn root_dir(&self) -> io::Result<Dir> {
        self.base_dir.open_dir_nofollow(&self.root_name)
    }

    /// The handle on `base/`, the root's parent, held since the layout.
    pub fn base_dir(&self) -> &Dir {
        &self.base_dir
    }

    /// The folder holding a virtual path below the root (made when `create`) and its last
    /// name; for the root itself, `base/` and the root's name.
    fn entry(&self, vpath: &str, create: bool) -> io::Result<(Dir, OsString)> {
        let rel = rel_of(vpath);
        if rel.as_os_str().is_empty() {
            return Ok((self.base_dir.try_clone()?, self.root_name.clone()));
        }
        scratch::parent_nofollow(&self.root_dir()?, &rel, create)
    }

    /// The store root's handle in `root`, opened ([`Sandbox::root_dir`]) when it is not there
    /// yet: one handle for a batch of memcert's own operations (a setup planted, the checks
    /// read), instead of one per item.
    ///
    /// # Errors
    /// As [`Sandbox::root_dir`] (`root` stays empty).
    fn root_in<'r>(&self, root: &'r mut Option<Dir>) -> io::Result<&'r Dir> {
        if root.is_none() {
            *root = Some(self.root_dir()?);
        }
        root.as_ref()
            .ok_or_else(|| io::Error::other("the store root's handle"))
    }

    /// `f` on the folder holding a virtual path and its last name, as [`Sandbox::entry`]
    /// gives them, from the root's handle in `root` ([`Sandbox::root_in`]): a name right
    /// below the root is looked up in that handle itself, no folder opened.
    ///
    /// # Errors
    /// As [`Sandbox::entry`], or `f`'s error.
    fn at_entry<T>(
        &self,
        root: &mut Option<Dir>,
        vpath: &str,
        create: bool,
        f: impl FnOnce(&Dir, &OsStr) -> io::Result<T>,
    ) -> io::Result<T> {
        let rel = rel_of(vpath);
        if rel.as_os_str().is_empty() {
            return f(&self.base_dir, &self.root_name);
        }
        let root = self.root_in(root)?;
        if let (Some(up), Some(name)) = (rel.parent(), rel.file_name()) {
            if up.as_os_str().is_empty() {
                return f(root, name);
            }
        }
        let (d, name) = scratch::parent_nofollow(root, &rel, create)?;
        f(&d, &name)
    }

    /// The folder holding the virtual path `vpath` and its last name, opened from the held
    /// handles with no link followed: what a race case's swapper exchanges
    /// (`renameat2(RENAME_EXCHANGE)` on the handle), so the swaps never reach outside the
    /// sandbox.
    ///
    /// # Errors
    /// A component above it is missing, a link or not a folder.
    pub fn entry_at(&self, vpath: &str) -> io::Result<(Dir, OsString)> {
        self.entry(vpath, false)
    }

    /// Plant one setup item in the store (parents created as needed), as
    /// [`Sandbox::create_unchecked`] does for each item of its `setup`.
    ///
    /// # Ambient authority
    /// None: by handle from the store root, links planted but never followed (an item below a
    /// planted link fails).
    ///
    /// # Errors
    /// Any I/O error of planting it.
    pub fn plant_unchecked(&self, item: &Fs) -> io::Result<()> {
        self.plant_in(&mut None, item)
    }

    /// [`Sandbox::plant_unchecked`] for each of `items` in order, through one handle on the
    /// store root (opened again after an item that replaces the root).
    ///
    /// # Ambient authority
    /// As [`Sandbox::plant_unchecked`].
    ///
    /// # Errors
    /// The first item's error; the items after it are not planted.
    pub fn plant_all_unchecked(&self, items: &[Fs]) -> io::Result<()> {
        let mut root = None;
        items
            .iter()
            .try_for_each(|item| self.plant_in(&mut root, item))
    }

    /// [`Sandbox::plant_unchecked`] through the root's handle in `root` ([`Sandbox::root_in`]);
    /// an item that replaces the root empties `root`.
    fn plant_in(&self, root: &mut Option<Dir>, item: &Fs) -> io::Result<()> {
        match item {
            Fs::Dir { path } => {
                scratch::create_nofollow(self.root_in(root)?, &rel_of(path)).map(drop)
            }
            Fs::File { path, content } => {
                self.at_entry(root, path, true, |d, name| write_at(d, name, content))
            }
            Fs::Lines { path, count } => self.at_entry(root, path, true, |d, name| {
                write_at(d, name, "x\n".repeat(*count))
            }),
            Fs::Symlink { path, target } => self.at_entry(root, path, true, |d, name| {
                d.symlink_contents(self.link_target(target), name)
            }),
            Fs::Fifo { path } => self.at_entry(root, path, true, |d, name| {
                mknod_at(d, name, rustix::fs::FileType::Fifo)
            }),
            Fs::HardLinkOutside { path, name } => self.at_entry(root, path, true, |d, link| {
                let outside = self.base_dir.open_dir_nofollow("outside")?;
                let (src_dir, src) = scratch::parent_nofollow(&outside, Path::new(name), true)?;
                if src_dir.symlink_metadata(&src).is_err() {
                    self.write_canary(&src_dir, &src)?;
                }
                src_dir.hard_link(&src, d, link)
            }),
            Fs::Socket { path } => self.at_entry(root, path, true, |d, name| {
                // mknod(S_IFSOCK) makes the file a bound socket leaves, without binding one (no
                // 108-byte sun_path limit on the sandbox path).
                mknod_at(d, name, rustix::fs::FileType::Socket)
            }),
            Fs::CharDevice { path, major, minor } => {
                self.at_entry(root, path, true, |d, name| {
                    let dev = rustix::fs::makedev(*major, *minor);
                    let mode = rustix::fs::Mode::from_raw_mode(0o666);
                    rustix::fs::mknodat(d, name, rustix::fs::FileType::CharacterDevice, mode, dev)
                        .map_err(io::Error::from)?;
                    // Readable and writable by the handler whatever its uid (the umask cut it).
                    scratch::chmod_nofollow(d, name, 0o666)
                })
            }
            Fs::Sparse { path, len } => self.at_entry(root, path, true, |d, name| {
                open_write(d, name)?.set_len(*len)
            }),
            Fs::Mode { path, mode } => self.at_entry(root, path, false, |d, name| {
                scratch::chmod_nofollow(d, name, *mode & 0o777).map_err(|e| {
                    if e.kind() == io::ErrorKind::InvalidInput {
                        io::Error::other("Fs::Mode on a symlink would change its target")
                    } else {
                        e
                    }
                })
            }),
            Fs::RawName { dir, name, content } => {
                let d = scratch::create_nofollow(self.root_in(root)?, &rel_of(dir))?;
                write_at(&d, OsStr::from_bytes(name), content)
            }
            Fs::DeepChain { path, depth } => {
                let mut d = scratch::create_nofollow(self.root_in(root)?, &rel_of(path))?;
                for _ in 0..*depth {
                    d = dir_in(&d, "d")?;
                }
                write_at(&d, "bottom.txt", "bottom\n")
            }
            Fs::ManyFiles { dir, count } => {
                let d = scratch::create_nofollow(self.root_in(root)?, &rel_of(dir))?;
                for i in 0..*count {
                    write_at(&d, crate::attack::scenarios::many_name(i), "x\n")?;
                }
                Ok(())
            }
            Fs::RootSymlink { target } => {
                *root = None;
                // Fails unless the root is still empty: plant this first.
                self.base_dir.remove_dir(&self.root_name)?;
                self.base_dir
                    .symlink_contents(self.link_target(target), &self.root_name)
            }
            Fs::RootFifo => {
                *root = None;
                self.base_dir.remove_dir(&self.root_name)?;
                mknod_at(&self.base_dir, &self.root_name, rustix::fs::FileType::Fifo)
            }
            Fs::RootFile { content } => {
                *root = None;
                self.base_dir.remove_dir(&self.root_name)?;
                write_at(&self.base_dir, &self.root_name, content)
            }
        }
    }

    /// Put the store back as a layout with no setup leaves it: an empty folder of mode 0700 at
    /// the root's name in `base/`. What is there is emptied (folders given `u+rwx` first, as
    /// on drop) or, when the root was replaced by something that is not a folder (a planted
    /// link, FIFO or file, or what a handler put there), unlinked and the folder made again.
    /// Used by the runner's reset by undo (`certify::lane`); the outside is not touched.
    ///
    /// # Ambient authority
    /// None: by handle from `base/`, no link followed.
    ///
    /// # Errors
    /// Any I/O error of emptying, unlinking or making the folder (the runner then lays out a
    /// fresh sandbox instead).
    pub fn clear_store_unchecked(&self) -> io::Result<()> {
        match self.base_dir.symlink_metadata(&self.root_name) {
            Ok(m) if m.is_dir() => {
                if m.mode() & 0o700 != 0o700 {
                    scratch::chmod_nofollow(&self.base_dir, &self.root_name, 0o700)?;
                }
                scratch::empty(&self.base_dir.open_dir_nofollow(&self.root_name)?)?;
                // A folder of mode 0700, now empty, is what `make_root` leaves: its `mkdir`
                // (which finds it) and `chmod` (to the mode it has) change nothing.
                if m.mode() & 0o7777 == 0o700 {
                    return Ok(());
                }
            }
            Ok(_) => self.base_dir.remove_file(&self.root_name)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        self.make_root()
    }

    /// The store root as a layout makes it: a folder of mode 0700 (kept when one is there).
    fn make_root(&self) -> io::Result<()> {
        let mut b = DirBuilder::new();
        b.mode(0o700);
        match self.base_dir.create_dir_with(&self.root_name, &b) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        scratch::chmod_nofollow(&self.base_dir, &self.root_name, 0o700)
    }

    /// Everything the store root holds, links not followed (the store's part of what a
    /// layout leaves: [`Sandbox::outside_unchecked`] is the rest), and the root's own node
    /// under the empty path; an empty tree when nothing is at the root's name.
    ///
    /// # Ambient authority
    /// None: by handle from `base/`.
    pub fn store_tree_unchecked(&self) -> Tree {
        let mut tree = Tree::new();
        let Ok(meta) = self.base_dir.symlink_metadata(&self.root_name) else {
            return tree;
        };
        let mut left = WALK_BYTES;
        let node = node_of(&self.base_dir, &self.root_name, &meta, &mut left);
        tree.insert(PathBuf::new(), (node, meta.mode() & 0o7777));
        if let Ok(root) = self.root_dir() {
            walk(&root, Path::new(""), None, &mut tree, &mut left);
        }
        tree
    }

    /// Every regular file of `outside` (a tree [`Sandbox::outside_unchecked`] gave) opened for
    /// reading with no link followed, with the bytes the tree holds for it: what
    /// [`HeldFiles::unchanged`] reads again. A path that cannot be opened as that file is
    /// left out, and the result says so (`complete` false).
    ///
    /// # Ambient authority
    /// None: from the run folder's and the alias's handles, beneath them.
    pub fn hold_outside_files(&self, outside: &Tree) -> HeldFiles {
        use cap_std::fs::OpenOptionsExt as _;
        let (tops, _) = self.outside_handles();
        let mut files = Vec::new();
        let mut complete = true;
        for (path, (node, _)) in outside {
            let Node::File(bytes) = node else {
                continue;
            };
            // The alias's entries are under its name; the run folder's are bare.
            let opened = tops
                .iter()
                .filter(|(label, _)| !label.as_os_str().is_empty())
                .find_map(|(label, dir)| path.strip_prefix(label).ok().map(|rel| (*dir, rel)))
                .or_else(|| tops.first().map(|(_, dir)| (*dir, path.as_path())))
                .and_then(|(dir, rel)| {
                    let mut o = OpenOptions::new();
                    o.read(true).follow(FollowSymlinks::No);
                    o.custom_flags(
                        (rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32,
                    );
                    dir.open_with(rel, &o).ok()
                });
            match opened {
                Some(f) if bytes.len() <= FILE_BYTES => {
                    files.push((path.clone(), f, bytes.clone()));
                }
                _ => complete = false,
            }
        }
        HeldFiles { files, complete }
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
        self.run.path()
    }

    /// The alias of the run folder ([module docs](self)): the path inputs use instead of
    /// [`Sandbox::run_dir`].
    pub fn alias(&self) -> &Path {
        self.alias.as_ref().map_or(self.run.path(), Scratch::path)
    }

    /// The store root as reached through [`Sandbox::alias`] (`<alias>/base/memories`).
    pub fn alias_root(&self) -> PathBuf {
        match self.root.strip_prefix(self.run.path()) {
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
        self.host_paths.clone()
    }

    /// The spellings [`Sandbox::host_paths`] gives, worked out from the run folder's path.
    fn spell_host_paths(&self) -> Vec<String> {
        let path = self.run.path();
        let mut v = vec![path.to_string_lossy().into_owned()];
        // The random name of a temp run folder; a folder the user named may have a common name.
        if let (true, Some(name)) = (self.temp, path.file_name()) {
            v.push(name.to_string_lossy().into_owned());
        }
        if let Ok(c) = path.canonicalize() {
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
    /// None: walks the held handles, never following links.
    pub fn outside_unchecked(&self) -> Tree {
        let mut tree = Tree::new();
        let skip = Path::new(&self.base_name).join(&self.root_name);
        let mut left = WALK_BYTES;
        walk(
            self.run.dir(),
            Path::new(""),
            Some(&skip),
            &mut tree,
            &mut left,
        );
        if let Some(a) = &self.alias {
            let top = PathBuf::from(a.path().file_name().unwrap_or_default());
            if let Ok(meta) = a.dir().dir_metadata() {
                tree.insert(top.clone(), (Node::Dir, meta.mode() & 0o7777));
            }
            walk(a.dir(), &top, None, &mut tree, &mut left);
        }
        tree
    }

    /// The path relative to the run folder (as [`Sandbox::outside_unchecked`] names it) of the
    /// outside file a [`Fs::HardLinkOutside`] of `name` links: `<base>/outside/<name>`.
    pub fn hard_link_source(&self, name: &str) -> PathBuf {
        Path::new(&self.base_name).join("outside").join(name)
    }

    /// The permission bits of the regular file at `rel` below the run folder (a path
    /// [`Sandbox::outside_unchecked`] names), `None` when it is not a regular file there.
    ///
    /// # Ambient authority
    /// None: each folder on the way opened from the run folder's handle with no link followed,
    /// the file's metadata read without following.
    pub fn outside_file_mode_unchecked(&self, rel: &Path) -> Option<u32> {
        let name = rel.file_name()?;
        let mut dir = self.run.dir().try_clone().ok()?;
        for c in rel.parent()?.components() {
            let std::path::Component::Normal(c) = c else {
                return None;
            };
            dir = dir.open_dir_nofollow(c).ok()?;
        }
        let meta = dir.symlink_metadata(name).ok()?;
        meta.is_file().then(|| meta.mode() & 0o7777)
    }

    /// The folders the outside is made of, for [`crate::attack::watch`]: the run folder's
    /// handle (label: the empty path) and the alias's (label: its name), and the store root's
    /// path relative to the run folder, which is not part of the outside.
    pub fn outside_handles(&self) -> (Vec<(PathBuf, &Dir)>, PathBuf) {
        let mut out = vec![(PathBuf::new(), self.run.dir())];
        if let Some(a) = &self.alias {
            out.push((
                PathBuf::from(a.path().file_name().unwrap_or_default()),
                a.dir(),
            ));
        }
        (out, Path::new(&self.base_name).join(&self.root_name))
    }

    /// Store files (not links, not outside files' inodes) whose content holds the canary
    /// token: outside content copied into the store. Virtual paths, sorted. What the search
    /// could not search whole is not in it: [`Sandbox::scan_store_unchecked`] says what.
    ///
    /// # Ambient authority
    /// None: walks the store root by handle, never following links.
    pub fn token_in_store_unchecked(&self) -> Vec<String> {
        self.scan_store_unchecked([]).0
    }

    /// The (device, inode) of every outside file memcert wrote, sorted
    /// ([`Sandbox::outside_files`]).
    fn outside_files(&self) -> Vec<(u64, u64)> {
        self.outside_files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// [`Sandbox::token_in_store_unchecked`] and [`Sandbox::node_unchecked`] of each of
    /// `vpaths` from one walk of the store (a linked root, `Fs::RootSymlink`, holds no store:
    /// nothing is walked through it), and what that walk did not search whole
    /// ([`Unsearched`]).
    ///
    /// The token search reads the whole data of every regular file of the store (holes
    /// skipped with `SEEK_DATA`/`SEEK_HOLE`) in chunks of at most 1 MiB, whatever its length
    /// or link count, but a file whose inode is one memcert wrote outside the store (a hard
    /// link to a canary: the outside file itself, whose changes show in the outside diff); at
    /// most [`SEARCH_BYTES`] (1 GiB) of data per walk, [`WALK_ENTRIES`] entries and
    /// [`WALK_DEPTH`] folders deep. What is left unsearched by those bounds is named in the
    /// third result, never reported as clean.
    ///
    /// A path whose folder the walk listed whole is answered
    /// from that listing (its node read as [`Sandbox::node_unchecked`] reads it, `None` when
    /// the listing lacks it or a folder above it is not a folder the walk entered); any other
    /// (the root itself, a `..`, a folder past the walk's bounds) is looked up by itself.
    /// Same results as the two calls, with one open of each folder and file instead of one
    /// per path: the oracle's "after" of every case.
    ///
    /// # Ambient authority
    /// None: walks the store root by handle, never following links.
    pub fn scan_store_unchecked<'v>(
        &self,
        vpaths: impl IntoIterator<Item = &'v str>,
    ) -> (Vec<String>, Vec<Option<Node>>, Unsearched) {
        self.scan_store_then_empty_unchecked(vpaths, false)
    }

    /// [`Sandbox::scan_store_unchecked`] that, when `empty`, also removes what it has read as
    /// it goes: each entry but a folder once it is read, each folder once its own walk is done
    /// (a folder it could not empty stays). What the scan returns is the same: an entry is
    /// removed only after it was read, and an asked path it did not meet is left where it
    /// was, with every folder above it, for its own lookup. The next undo
    /// ([`Sandbox::clear_store_unchecked`]) then finds the store empty, or takes what is left:
    /// a kept sandbox's store is listed once per case, not twice (`certify::lane`).
    ///
    /// # Ambient authority
    /// None: walks and removes by handle from the store root, never following links.
    pub fn scan_store_then_empty_unchecked<'v>(
        &self,
        vpaths: impl IntoIterator<Item = &'v str>,
        empty: bool,
    ) -> (Vec<String>, Vec<Option<Node>>, Unsearched) {
        let vpaths: Vec<&str> = vpaths.into_iter().collect();
        // A path the walk cannot answer (the root, a `.` or `..`) is looked up by itself after
        // the walk: the store is then not emptied, so that the lookup sees what the case left.
        let empty = empty && vpaths.iter().all(|v| walkable(&rel_of(v)));
        let mut scan = Scan {
            empty,
            token: self.token.as_bytes(),
            outside: self.outside_files(),
            found: Vec::new(),
            unsearched: Unsearched::default(),
            budget: (WALK_ENTRIES, SEARCH_BYTES),
            buf: Vec::new(),
            want: std::collections::HashMap::new(),
            nodes: vec![None; vpaths.len()],
            listed: std::collections::HashSet::new(),
            entered: std::collections::HashSet::new(),
        };
        for (i, v) in vpaths.iter().enumerate() {
            let rel = rel_of(v);
            if walkable(&rel) {
                scan.want
                    .entry(rel.components().collect())
                    .or_default()
                    .push(i);
            }
        }
        if let Ok(root) = self.root_dir() {
            scan.entered.insert(PathBuf::new());
            scan.walk(&root, Path::new(""));
        }
        scan.found.sort();
        let token = scan
            .found
            .iter()
            .map(|p| format!("/memories/{}", p.display()))
            .collect();
        let mut root = None;
        let nodes = vpaths
            .iter()
            .enumerate()
            .map(|(i, v)| match scan.nodes[i].take() {
                // Met by the walk (a node is kept only for a path met).
                Some(node) => Some(node),
                None if scan.absent(&rel_of(v)) => None,
                None => self.node_in(&mut root, v),
            })
            .collect();
        (token, nodes, scan.unsearched)
    }

    /// What is at a virtual path now (links not followed, at any component); `None` when
    /// nothing is there or a folder above it is a link.
    ///
    /// # Ambient authority
    /// None: by handle from the store root.
    pub fn node_unchecked(&self, vpath: &str) -> Option<Node> {
        self.node_in(&mut None, vpath)
    }

    /// [`Sandbox::node_unchecked`] through the root's handle in `root` ([`Sandbox::root_in`]).
    fn node_in(&self, root: &mut Option<Dir>, vpath: &str) -> Option<Node> {
        self.at_entry(root, vpath, false, |dir, name| {
            let meta = dir.symlink_metadata(name)?;
            let mut left = FILE_BYTES;
            Ok(node_of(dir, name, &meta, &mut left))
        })
        .ok()
    }

    /// What is at a path below the store root as a handler that lists it reaches it: folders
    /// on the way are followed when they are links that stay inside the run folder (a link's
    /// absolute target is taken relative to the run folder's host path), the last name is not.
    /// `None` when it is not there or the way leaves the run folder.
    ///
    /// # Ambient authority
    /// None: by handle from the run folder; a link is read, and followed only inside it.
    pub fn store_lstat(&self, rel: &Path) -> Option<cap_std::fs::Metadata> {
        let run = self.run.path();
        let mut path = Path::new(&self.base_name).join(&self.root_name);
        path.push(rel);
        let mut hops = 0;
        'resolve: loop {
            let comps: Vec<OsString> = path.iter().map(OsStr::to_owned).collect();
            let mut dir = self.run.dir().try_clone().ok()?;
            let mut at = PathBuf::new();
            for (i, name) in comps.iter().enumerate() {
                if i + 1 == comps.len() {
                    return dir.symlink_metadata(name).ok();
                }
                let meta = dir.symlink_metadata(name).ok()?;
                if meta.is_symlink() {
                    hops += 1;
                    let target = dir.read_link_contents(name).ok()?;
                    let joined = if target.is_absolute() {
                        target.strip_prefix(run).ok()?.to_path_buf()
                    } else {
                        at.join(target)
                    };
                    let mut next = lexical(&joined)?;
                    next.extend(&comps[i + 1..]);
                    if hops > 40 {
                        return None;
                    }
                    path = next;
                    continue 'resolve;
                }
                dir = dir.open_dir_nofollow(name).ok()?;
                at.push(name);
            }
            return None;
        }
    }
}

/// `p` with `.` and `..` taken out lexically; `None` when `..` leaves it.
fn lexical(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::Normal(n) => out.push(n),
            std::path::Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            std::path::Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

/// Make the alias in `parent_dir` under a name no spelling of `secrets` is part of (a few
/// tries), with the canaries of the token `token` where payloads aim; with the device and
/// inode of each canary.
fn make_alias(
    parent_dir: &Path,
    secrets: &[String],
    token: &str,
) -> io::Result<(Scratch, Vec<(u64, u64)>)> {
    for _ in 0..8 {
        let alias = Scratch::new_in(parent_dir, "memcert-alias-")?;
        let text = alias.path().to_string_lossy();
        if secrets
            .iter()
            .any(|s| !s.is_empty() && text.contains(s.as_str()))
        {
            continue;
        }
        let base = dir_in(alias.dir(), "base")?;
        let outside = dir_in(&base, "outside")?;
        dir_in(&base, "memories")?;
        let mut ids = Vec::new();
        for (dir, name) in [
            (alias.dir(), "canary.txt".to_owned()),
            (&base, "canary.txt".to_owned()),
            (&outside, "canary.txt".to_owned()),
            (&outside, "secret.txt".to_owned()),
            (&outside, format!("canary-{token}.txt")),
        ] {
            ids.push(write_file_at(
                dir,
                &name,
                format!("{token} {name}\nSECRET line two\n"),
            )?);
        }
        return Ok((alias, ids));
    }
    Err(io::Error::other("no alias name was free"))
}

/// Every object under the folder `dir` holds (relative paths), links not followed.
pub fn tree_of(dir: &Dir) -> Tree {
    let mut tree = Tree::new();
    let mut left = WALK_BYTES;
    walk(dir, Path::new(""), None, &mut tree, &mut left);
    tree
}

/// The node named `name` in `dir`, given its `lstat` metadata; a file's bytes read within
/// `left` ([`read_small`]).
fn node_of(dir: &Dir, name: &OsStr, meta: &cap_std::fs::Metadata, left: &mut usize) -> Node {
    let ft = meta.file_type();
    if ft.is_symlink() {
        Node::Symlink(dir.read_link_contents(name).unwrap_or_default())
    } else if ft.is_dir() {
        Node::Dir
    } else if ft.is_file() {
        Node::File(read_small(dir, name, left))
    } else {
        Node::Other
    }
}

/// How many bytes of one file the walks keep: canaries and planted files are small (the
/// largest, a 999,999-line file, is under 2 MiB).
const FILE_BYTES: usize = 4 * 1024 * 1024;
/// How many file bytes one walk reads in all: what a handler writes beyond is judged by size,
/// inode and change time alone.
const WALK_BYTES: usize = 64 * 1024 * 1024;

/// A regular file's bytes (empty when it cannot be read, or is no longer a regular file when
/// opened): opened with no link followed and without blocking (a FIFO swapped in), read
/// without the size `stat` `std::fs::read` makes first. At most [`FILE_BYTES`] and what is
/// `left` of the walk's budget are read (and taken from `left`); a file longer than what was
/// read gets a marker after its bytes, `\0memcert-cut size=N ino=I ctime=S.NS`, so that a
/// change to it still shows (the change time moves on every write and cannot be set back):
/// a sparse file of a gigabyte costs the walk a few mebibytes, not a gigabyte.
fn read_small(dir: &Dir, name: &OsStr, left: &mut usize) -> Vec<u8> {
    use cap_std::fs::OpenOptionsExt as _;
    use std::io::Read as _;
    let mut o = OpenOptions::new();
    o.read(true).follow(FollowSymlinks::No);
    o.custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32);
    let Ok(f) = dir.open_with(name, &o) else {
        return Vec::new();
    };
    let Ok(meta) = f.metadata() else {
        return Vec::new();
    };
    if !meta.is_file() {
        return Vec::new();
    }
    let cap = FILE_BYTES.min(*left);
    let mut out = Vec::new();
    let mut limited = (&f).take(cap as u64 + 1);
    let mut buf = [0u8; 8192];
    loop {
        match limited.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                // A regular file reads short only at its end: one that gave fewer bytes than
                // asked and all the size `fstat` showed needs no read to see the end.
                if n < buf.len() && out.len() as u64 == meta.len() {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let cut = out.len() > cap || meta.len() > out.len() as u64;
    out.truncate(cap);
    *left -= out.len();
    if cut {
        out.extend_from_slice(
            format!(
                "\0memcert-cut size={} ino={} ctime={}.{}",
                meta.len(),
                meta.ino(),
                meta.ctime(),
                meta.ctime_nsec()
            )
            .as_bytes(),
        );
    }
    out
}

/// How many bytes of store file data one canary search of the store reads in all (1 GiB,
/// [`Sandbox::scan_store_unchecked`]): a bound on its time. A file whose data is not all
/// searched within it is named in the scan's [`Unsearched`], never taken as clean.
const SEARCH_BYTES: u64 = 1 << 30;
/// How many bytes [`holds_token`] reads at a time (its memory: this and the token's length).
const SEARCH_CHUNK: usize = 1 << 20;

/// What the token search of one store file found ([`holds_token`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Search {
    /// The token is in its data.
    Holds,
    /// None of its data holds the token: all of it was searched, or it is not searched by
    /// rule (not a regular file when opened, an outside file's inode, gone or not readable).
    Clean,
    /// Some of its data was not searched: the walk's byte budget ran out, or a read failed.
    Cut,
}

/// `len` bytes of `f` from `offset` into `buf` (its length), fewer only at the file's end.
fn read_full(f: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt as _;
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Whether the regular file `name` in `dir` holds `token` (which has no NUL byte) in its
/// data, all of it: opened as [`read_small`] opens it, its data regions found with
/// `SEEK_DATA` and `SEEK_HOLE` (a hole reads as zeros, which hold no token; a file system
/// that cannot tell holes is read whole), each region read in chunks of [`SEARCH_CHUNK`]
/// bytes, the last `token.len() - 1` bytes of a chunk searched again with the next (a token
/// across a chunk's edge is found). Every byte read is taken from `left` (the walk's
/// budget); when it runs out before the file's data does, or a read fails, the answer is
/// [`Search::Cut`], never [`Search::Clean`]. `buf` is the walk's read buffer (at most a
/// chunk and a token long). A file whose (device, inode) is in `outside` (sorted) is an
/// outside file ([`Sandbox::outside_files`]) and not searched, whatever its link count; any
/// other regular file is. A 64 MiB sparse file (`Fs::Sparse`) costs two `lseek`s, not a
/// read of its zeros.
fn holds_token(
    dir: &Dir,
    name: &OsStr,
    token: &[u8],
    outside: &[(u64, u64)],
    left: &mut u64,
    buf: &mut Vec<u8>,
) -> Search {
    use cap_std::fs::OpenOptionsExt as _;
    use rustix::fs::SeekFrom;
    let mut o = OpenOptions::new();
    o.read(true).follow(FollowSymlinks::No);
    o.custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32);
    let Ok(f) = dir.open_with(name, &o) else {
        return Search::Clean;
    };
    let Ok(meta) = f.metadata() else {
        return Search::Clean;
    };
    if !meta.is_file()
        || token.is_empty()
        || outside.binary_search(&(meta.dev(), meta.ino())).is_ok()
    {
        return Search::Clean;
    }
    let f = f.into_std();
    let finder = memchr::memmem::Finder::new(token);
    let overlap = token.len() - 1;
    let len = meta.len();
    let mut pos = 0u64;
    while pos < len {
        // A small file is one region, read with no `lseek` for holes.
        let (start, end) = if len <= SMALL_FILE {
            (0, len)
        } else {
            let start = match rustix::fs::seek(&f, SeekFrom::Data(pos)) {
                Ok(p) => p,
                // No data from `pos` on: the rest is a hole.
                Err(rustix::io::Errno::NXIO) => break,
                Err(_) => pos,
            };
            let end = rustix::fs::seek(&f, SeekFrom::Hole(start)).unwrap_or(len);
            (start, end.min(len))
        };
        if end <= start {
            break;
        }
        // One data region, in chunks; a token cannot span a hole, so nothing is carried
        // from one region to the next.
        buf.clear();
        let mut at = start;
        while at < end {
            if *left == 0 {
                return Search::Cut;
            }
            let want = (end - at).min(SEARCH_CHUNK as u64).min(*left) as usize;
            let carried = buf.len();
            buf.resize(carried + want, 0);
            let got = match read_full(&f, &mut buf[carried..], at) {
                Ok(got) => got,
                Err(_) => return Search::Cut,
            };
            buf.truncate(carried + got);
            *left -= got as u64;
            if finder.find(buf).is_some() {
                return Search::Holds;
            }
            if got < want {
                // The file ended early (it shrank since `fstat`): nothing more to search.
                return Search::Clean;
            }
            at += got as u64;
            let done = buf.len().saturating_sub(overlap);
            buf.drain(..done);
        }
        pos = end;
    }
    Search::Clean
}

/// Files up to this size are read whole by [`holds_token`], with no look for holes.
const SMALL_FILE: u64 = 64 * 1024;

/// How deep the walks of a sandbox go, in folders below where they start: the deepest planted
/// tree is 300 (`scenario/deep-chain`); a handler may make deeper ones, which are cut there.
const WALK_DEPTH: usize = 512;
/// How many entries the walks of a sandbox take in at most: a handler that makes more than
/// this many files has changed what it was asked to change already.
const WALK_ENTRIES: usize = 200_000;

/// Every object below `dir` into `out`, under `prefix`, except the subtree at `skip`; each
/// entry's metadata from its folder's handle (`fstatat`, no follow), each folder entered with
/// `O_NOFOLLOW` (one that cannot be is listed, not entered). At most [`WALK_DEPTH`] folders
/// deep and [`WALK_ENTRIES`] entries: bounded stack and memory on a tree a handler made.
fn walk(dir: &Dir, prefix: &Path, skip: Option<&Path>, out: &mut Tree, left: &mut usize) {
    if prefix.components().count() >= WALK_DEPTH {
        return;
    }
    let Ok(entries) = dir.entries() else {
        return;
    };
    for e in entries.flatten() {
        if out.len() >= WALK_ENTRIES {
            return;
        }
        let name = e.file_name();
        let rel = prefix.join(&name);
        if skip == Some(rel.as_path()) {
            continue;
        }
        let Ok(meta) = e.metadata() else {
            continue;
        };
        let node = node_of(dir, &name, &meta, left);
        let is_dir = node == Node::Dir;
        out.insert(rel.clone(), (node, meta.mode() & 0o7777));
        if is_dir {
            if let Ok(sub) = dir.open_dir_nofollow(&name) {
                walk(&sub, &rel, skip, out, left);
            }
        }
    }
}

/// Whether the walk of [`Sandbox::scan_store_unchecked`] can answer for `rel` (a path below
/// the store root): not the root itself, and plain names only (no `.`, `..` or prefix).
fn walkable(rel: &Path) -> bool {
    !rel.as_os_str().is_empty()
        && rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// What a canary search of the store did not search whole ([`Sandbox::scan_store_unchecked`]):
/// a file whose data was not all read (the search's [`SEARCH_BYTES`] spent, a read that
/// failed), a folder not listed whole (past [`WALK_ENTRIES`] entries) or not entered (past
/// [`WALK_DEPTH`] folders deep). Outside content copied there would not show: the oracle never
/// takes such a store as clean (`attack::oracle`, `store-unsearched`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unsearched {
    /// The first [`UNSEARCHED_SHOWN`] of them, virtual paths (`/memories/...`), in walk order.
    pub first: Vec<String>,
    /// How many there were in all (0: the store was searched whole).
    pub total: usize,
}

/// How many paths an [`Unsearched`] keeps.
pub const UNSEARCHED_SHOWN: usize = 8;

impl Unsearched {
    /// Note the path `rel` below the root (the root itself when empty).
    fn note(&mut self, rel: &Path) {
        if self.first.len() < UNSEARCHED_SHOWN {
            self.first.push(if rel.as_os_str().is_empty() {
                crate::vpath::ROOT.to_owned()
            } else {
                format!("/memories/{}", rel.display())
            });
        }
        self.total += 1;
    }
}

/// One walk of the store for [`Sandbox::scan_store_unchecked`].
struct Scan<'t> {
    /// Remove each entry once read ([`Sandbox::scan_store_then_empty_unchecked`]).
    empty: bool,
    token: &'t [u8],
    /// The outside files' (device, inode), sorted ([`Sandbox::outside_files`]): not searched.
    outside: Vec<(u64, u64)>,
    /// Files holding the token, relative to the root.
    found: Vec<PathBuf>,
    /// What was not searched whole.
    unsearched: Unsearched,
    /// Entries left to look at, bytes left to read ([`SEARCH_BYTES`] at the start).
    budget: (usize, u64),
    /// The read buffer of [`holds_token`].
    buf: Vec<u8>,
    /// The asked paths below the root (normal components only), each with its indexes.
    want: std::collections::HashMap<PathBuf, Vec<usize>>,
    nodes: Vec<Option<Node>>,
    /// Folders listed whole (no bound cut their listing), relative to the root.
    listed: std::collections::HashSet<PathBuf>,
    /// Folders the walk entered (real folders, not links), relative to the root.
    entered: std::collections::HashSet<PathBuf>,
}

impl Scan<'_> {
    /// Walk `dir` (at `prefix` below the root): each regular file but an outside file's inode
    /// searched for the token ([`holds_token`]), each asked path's node kept, at most
    /// [`WALK_DEPTH`] folders deep and the budget's entries and bytes. A file not searched
    /// whole, a folder not listed whole or not entered for a bound, goes to `unsearched`.
    fn walk(&mut self, dir: &Dir, prefix: &Path) {
        if prefix.components().count() >= WALK_DEPTH {
            self.unsearched.note(prefix);
            return;
        }
        use rustix::fs::FileType;
        use std::ops::ControlFlow;
        let mut whole = true;
        let mut subs: Vec<OsString> = Vec::new();
        let listed = scratch::for_each_entry(dir, |name, ft| {
            if self.budget.0 == 0 {
                whole = false;
                return ControlFlow::Break(());
            }
            self.budget.0 -= 1;
            let rel = prefix.join(name);
            // Each path is met once: its indexes are taken out.
            let asked = self.want.remove(&rel);
            // A regular file nobody asked for needs no `lstat`: `holds_token` opens it with no
            // link followed and reads its type, device and inode from the handle.
            let meta = match (ft, &asked) {
                (Some(FileType::Directory | FileType::RegularFile), None) => None,
                (None, _) | (_, Some(_)) => {
                    match dir.symlink_metadata(name) {
                        Ok(m) => Some(m),
                        // Gone since the listing: not there.
                        Err(_) => return ControlFlow::Continue(()),
                    }
                }
                (Some(_), None) => {
                    if self.empty {
                        let _ = dir.remove_file(name);
                    }
                    return ControlFlow::Continue(());
                }
            };
            let is_dir = match &meta {
                Some(m) => m.is_dir(),
                None => ft == Some(FileType::Directory),
            };
            if let (Some(idx), Some(m)) = (&asked, &meta) {
                let mut left = FILE_BYTES;
                let node = node_of(dir, name, m, &mut left);
                if let Node::File(bytes) = &node {
                    // The token in the bytes read, unless they were cut: searched again then.
                    if self.outside.binary_search(&(m.dev(), m.ino())).is_err() {
                        // Read whole only when the file is within what a read keeps (a longer
                        // one's bytes end in a cut marker, whatever their length).
                        let whole_read =
                            m.len() <= FILE_BYTES as u64 && bytes.len() as u64 == m.len();
                        let search = if whole_read {
                            self.budget.1 = self.budget.1.saturating_sub(bytes.len() as u64);
                            if memchr::memmem::find(bytes, self.token).is_some() {
                                Search::Holds
                            } else {
                                Search::Clean
                            }
                        } else {
                            self.search(dir, name)
                        };
                        self.found_or_cut(search, &rel);
                    }
                }
                for &i in idx {
                    self.nodes[i] = Some(node.clone());
                }
            } else if meta.as_ref().is_none_or(|m| m.is_file()) && ft != Some(FileType::Directory) {
                let search = self.search(dir, name);
                self.found_or_cut(search, &rel);
            }
            if is_dir {
                subs.push(name.to_owned());
            } else if self.empty {
                let _ = dir.remove_file(name);
            }
            ControlFlow::Continue(())
        });
        if listed.is_ok() && whole {
            self.listed.insert(prefix.to_path_buf());
        } else if !whole {
            self.unsearched.note(prefix);
        }
        for name in subs {
            if let Ok(sub) = dir.open_dir_nofollow(&name) {
                let rel = prefix.join(&name);
                self.entered.insert(rel.clone());
                self.walk(&sub, &rel);
                if self.empty {
                    drop(sub);
                    let _ = dir.remove_dir(&name);
                }
            }
        }
    }

    /// [`holds_token`] of `name` in `dir` within the walk's budget.
    fn search(&mut self, dir: &Dir, name: &OsStr) -> Search {
        holds_token(
            dir,
            name,
            self.token,
            &self.outside,
            &mut self.budget.1,
            &mut self.buf,
        )
    }

    /// Note the file at `rel` as one holding the token, or not searched whole, as `search`
    /// found.
    fn found_or_cut(&mut self, search: Search, rel: &Path) {
        match search {
            Search::Holds => self.found.push(rel.to_path_buf()),
            Search::Cut => self.unsearched.note(rel),
            Search::Clean => {}
        }
    }

    /// Whether the walk shows that nothing is at `rel` (or that a folder above it is not a
    /// folder it entered: a link, a file): some folder above it was listed whole and the
    /// next name on the way was not entered, or its own folder was listed without it.
    fn absent(&self, rel: &Path) -> bool {
        if !walkable(rel) {
            return false;
        }
        let comps: Vec<_> = rel.components().collect();
        let mut at = PathBuf::new();
        for (i, c) in comps.iter().enumerate() {
            if !self.listed.contains(&at) {
                return false;
            }
            at.push(c);
            if i + 1 == comps.len() {
                // Listed whole and not met (met paths never get here).
                return true;
            }
            if !self.entered.contains(&at) {
                return true;
            }
        }
        false
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
    use crate::suite::{Fs, LinkTo};

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
    fn the_token_is_found_in_a_sparse_files_data_past_the_read_cap_and_not_in_its_holes() {
        use std::os::unix::fs::FileExt as _;
        let setup = [Fs::Sparse {
            path: HUGE_FILE.into(),
            len: HUGE_FILE_BYTES,
        }];
        let sb = Sandbox::create_unchecked(&setup).unwrap();
        // Holes only: no token, and no read of them.
        assert_eq!(sb.token_in_store_unchecked(), Vec::<String>::new());
        // The token 40 MiB in, past the 4 MiB a file's read stops at: found in its data.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(sb.host_unchecked(HUGE_FILE))
            .unwrap();
        let token = format!("..{}..", sb.token());
        f.write_at(token.as_bytes(), 40 << 20).unwrap();
        assert_eq!(sb.token_in_store_unchecked(), vec![HUGE_FILE.to_string()]);
        // A token split over two writes of one data region is still one token.
        sb.plant_unchecked(&Fs::File {
            path: "/memories/two.txt".into(),
            content: sb.token()[..5].as_bytes().to_vec(),
        })
        .unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(sb.host_unchecked("/memories/two.txt"))
            .unwrap()
            .write_at(sb.token()[5..].as_bytes(), 5)
            .unwrap();
        assert_eq!(
            sb.token_in_store_unchecked(),
            vec![HUGE_FILE.to_string(), "/memories/two.txt".to_string()]
        );
    }

    #[test]
    fn a_device_and_a_sparse_file_plant_as_asked_and_a_refused_mknod_says_permission_denied() {
        use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
        let setup = [
            Fs::Sparse {
                path: HUGE_FILE.into(),
                len: HUGE_FILE_BYTES,
            },
            Fs::CharDevice {
                path: CHAR_DEVICE.into(),
                major: CHAR_DEVICE_NUMBER.0,
                minor: CHAR_DEVICE_NUMBER.1,
            },
        ];
        let sb = match Sandbox::create_unchecked(&setup) {
            Ok(sb) => sb,
            Err(e) => {
                // Only a harness without CAP_MKNOD may fail, and then with PermissionDenied.
                assert!(!rustix::process::geteuid().is_root(), "{e}");
                assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}");
                return;
            }
        };
        let huge = std::fs::symlink_metadata(sb.host_unchecked(HUGE_FILE)).unwrap();
        assert!(huge.is_file());
        assert_eq!(huge.len(), HUGE_FILE_BYTES);
        assert_eq!(huge.blocks(), 0, "sparse: no block written");
        let dev = std::fs::symlink_metadata(sb.host_unchecked(CHAR_DEVICE)).unwrap();
        assert!(dev.file_type().is_char_device());
        assert_eq!(dev.rdev(), rustix::fs::makedev(1, 5));
        assert_eq!(dev.mode() & 0o777, 0o666);
        assert_eq!(sb.node_unchecked(CHAR_DEVICE), Some(Node::Other));
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

    /// What a handler swaps for a link (a folder around the root, the root itself, the run
    /// folder's own name) is never walked, planted, changed or removed through.
    // See: issue 13, "memcert's own scratch by handle".
    #[test]
    fn a_huge_sparse_file_costs_the_walk_its_cap_and_a_write_to_it_still_shows() {
        use std::os::unix::fs::FileExt as _;
        let sb = Sandbox::create_unchecked(&[]).unwrap();
        let f = sb.base_dir().create("huge").unwrap().into_std();
        f.set_len(1 << 30).unwrap();
        let node = |t: &super::Tree| match t.get(std::path::Path::new("base/huge")) {
            Some((Node::File(b), _)) => b.clone(),
            other => panic!("{other:?}"),
        };
        let before = node(&sb.outside_unchecked());
        let (kept, tail) = before.split_at(super::FILE_BYTES);
        assert_eq!(kept, &vec![0u8; super::FILE_BYTES][..]);
        let tail = String::from_utf8_lossy(tail);
        assert!(
            tail.starts_with("\0memcert-cut size=1073741824 ino="),
            "{tail}"
        );
        // A write far past what the walk read: the change time moves.
        std::thread::sleep(std::time::Duration::from_millis(20));
        f.write_all_at(b"x", 512 << 20).unwrap();
        assert_ne!(node(&sb.outside_unchecked()), before);
    }

    /// Two files (one two folders down) and a link to the outside.
    fn small_store() -> Vec<Fs> {
        vec![
            Fs::File {
                path: "/memories/a.txt".into(),
                content: "a\n".into(),
            },
            Fs::File {
                path: "/memories/d/e/b.txt".into(),
                content: "b\n".into(),
            },
            Fs::Symlink {
                path: "/memories/out".into(),
                target: LinkTo::Outside(String::new()),
            },
        ]
    }

    #[test]
    fn one_scan_of_the_store_answers_as_the_token_search_and_a_lookup_per_path() {
        let mut setup = small_store();
        setup.extend([
            Fs::HardLinkOutside {
                path: "/memories/hard.txt".into(),
                name: "hard-source.txt".into(),
            },
            Fs::Fifo {
                path: "/memories/fifo".into(),
            },
        ]);
        let sb = Sandbox::create_unchecked(&setup).unwrap();
        // The token copied into two store files, one of them below a folder nobody asks for.
        for p in ["/memories/d/copy.txt", "/memories/d/e/f/g.txt"] {
            sb.plant_unchecked(&Fs::File {
                path: p.into(),
                content: format!("x {} y", sb.token()).into_bytes(),
            })
            .unwrap();
        }
        let paths = [
            "/memories",
            "/memories/a.txt",
            "/memories/a.txt/under-a-file",
            "/memories/d",
            "/memories/d/",
            "/memories//d/e/b.txt",
            "/memories/d/e/f/g.txt",
            "/memories/d/e/missing/deeper.txt",
            "/memories/out",
            "/memories/out/secret.txt",
            "/memories/hard.txt",
            "/memories/fifo",
            "/memories/missing",
            "/memories/../base/canary.txt",
            "/memories/a.txt",
        ];
        let one_by_one: Vec<Option<Node>> = paths.iter().map(|p| sb.node_unchecked(p)).collect();
        let (token, nodes, unsearched) = sb.scan_store_unchecked(paths);
        assert_eq!(unsearched, super::Unsearched::default());
        // Asked or not, a file's token is found the same (read with its node, or searched).
        assert_eq!(token, sb.token_in_store_unchecked());
        assert_eq!(
            token,
            vec![
                "/memories/d/copy.txt".to_string(),
                "/memories/d/e/f/g.txt".to_string()
            ]
        );
        assert_eq!(nodes, one_by_one);
        assert_eq!(nodes[1], Some(Node::File(b"a\n".to_vec())));
        assert_eq!(nodes[2], None);
        assert_eq!(nodes[4], Some(Node::Dir));
        assert_eq!(nodes[5], Some(Node::File(b"b\n".to_vec())));
        assert_eq!(nodes[7], None);
        assert_eq!(nodes[9], None, "a link is never followed");
        assert_eq!(nodes[11], Some(Node::Other));
        assert_eq!(nodes[13], None, "`..` is refused");
        assert_eq!(nodes[14], nodes[1]);
        // Asked for the root or a `..` path, which it looks up after the walk, it leaves the
        // store as it is, with the same answers.
        let whole = sb.store_tree_unchecked();
        assert_eq!(
            sb.scan_store_then_empty_unchecked(paths, true),
            (
                token.clone(),
                one_by_one.clone(),
                super::Unsearched::default()
            )
        );
        assert_eq!(sb.store_tree_unchecked(), whole);
        // Asked for plain paths only, it empties the store as it goes, with the same answers.
        let plain: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| *p != "/memories" && !p.contains(".."))
            .collect();
        let expected: Vec<Option<Node>> = plain.iter().map(|p| sb.node_unchecked(p)).collect();
        assert_eq!(plain.len(), 13);
        assert_eq!(
            sb.scan_store_then_empty_unchecked(plain, true),
            (token, expected, super::Unsearched::default())
        );
        assert_eq!(
            sb.store_tree_unchecked().into_keys().collect::<Vec<_>>(),
            vec![std::path::PathBuf::new()]
        );
    }

    #[test]
    fn one_root_handle_reads_what_one_per_path_reads_and_a_cleared_root_is_0700() {
        use std::os::unix::fs::PermissionsExt as _;
        let sb = Sandbox::create_unchecked(&small_store()).unwrap();
        let paths = [
            "/memories",
            "/memories/a.txt",
            "/memories/d",
            "/memories/d/e/b.txt",
            "/memories/out",
            "/memories/out/secret.txt",
            "/memories/missing",
            "/memories/../base/canary.txt",
        ];
        let one_by_one: Vec<Option<Node>> = paths.iter().map(|p| sb.node_unchecked(p)).collect();
        assert_eq!(
            sb.scan_store_unchecked(paths),
            (
                Vec::<String>::new(),
                one_by_one.clone(),
                super::Unsearched::default()
            )
        );
        assert_eq!(one_by_one[1], Some(Node::File(b"a\n".to_vec())));
        assert_eq!(one_by_one[3], Some(Node::File(b"b\n".to_vec())));
        assert_eq!(one_by_one[5], None, "a link is never followed");
        assert_eq!(one_by_one[7], None, "`..` is refused");
        // A root a handler opened up to 0755 and filled is emptied back to a 0700 folder; so
        // is one left at 0700 (the undo then skips the mkdir and chmod it would not need).
        for mode in [0o755, 0o700] {
            std::fs::set_permissions(sb.root(), std::fs::Permissions::from_mode(mode)).unwrap();
            sb.plant_all_unchecked(&small_store()[..2]).unwrap();
            sb.clear_store_unchecked().unwrap();
            assert_eq!(
                sb.store_tree_unchecked().into_iter().collect::<Vec<_>>(),
                vec![(std::path::PathBuf::new(), (Node::Dir, 0o700))]
            );
        }
        // An item below a root replaced by a link fails, as planted one at a time.
        let root_link = [
            Fs::RootSymlink {
                target: LinkTo::Outside(String::new()),
            },
            Fs::File {
                path: "/memories/x.txt".into(),
                content: "x".into(),
            },
        ];
        sb.clear_store_unchecked().unwrap();
        assert!(sb.plant_all_unchecked(&root_link).is_err());
        assert!(sb.node_unchecked("/memories/x.txt").is_none());
        assert!(!sb.base().join("outside/x.txt").exists());
    }

    #[test]
    fn held_outside_files_see_a_write_the_watches_would_not_and_clear_store_gives_an_empty_root() {
        let sb = Sandbox::create_unchecked(&[Fs::RootFifo]).unwrap();
        let outside = sb.outside_unchecked();
        let held = sb.hold_outside_files(&outside);
        assert!(held.complete);
        // Every regular file of the outside: the run folder's and the alias's.
        let files = outside
            .values()
            .filter(|(n, _)| matches!(n, Node::File(_)))
            .count();
        assert_eq!(held.files.len(), files);
        assert!(files > 20, "{files}");
        assert!(held.unchanged());
        // Same length, one byte changed in place (as a write through a shared mmap leaves it).
        let secret = sb.base().join("outside/secret.txt");
        let mut bytes = std::fs::read(&secret).unwrap();
        bytes[0] = b'X';
        std::fs::write(&secret, &bytes).unwrap();
        assert!(!held.unchanged());
        // The FIFO planted as the root goes, and an empty private folder is there again.
        sb.clear_store_unchecked().unwrap();
        assert_eq!(
            sb.store_tree_unchecked().into_iter().collect::<Vec<_>>(),
            vec![(std::path::PathBuf::new(), (Node::Dir, 0o700))]
        );
    }

    #[test]
    fn walks_of_a_tree_a_handler_made_deep_are_cut() {
        let sb = Sandbox::create_unchecked(&[]).unwrap();
        // 6,000 folders deep in the store and outside it, a canary-token file at the bottom;
        // walked on a spawned thread's default stack (2 MiB), which an uncut walk overflows.
        for mut at in [sb.root_dir().unwrap(), sb.base_dir().try_clone().unwrap()] {
            for _ in 0..6_000 {
                at.create_dir("d").unwrap();
                at = at.open_dir("d").unwrap();
            }
            at.write("t", sb.token()).unwrap();
        }
        let (outside, found) = std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(2 * 1024 * 1024)
                .spawn_scoped(s, || {
                    (sb.outside_unchecked(), sb.token_in_store_unchecked())
                })
                .unwrap()
                .join()
                .unwrap()
        });
        let deepest = outside.keys().map(|p| p.components().count()).max();
        assert_eq!(deepest, Some(super::WALK_DEPTH), "cut at the walk's depth");
        assert_eq!(
            found,
            Vec::<String>::new(),
            "the token file is below the cut"
        );
        // ... and the scan says that it did not search there.
        let (_, _, unsearched) = sb.scan_store_unchecked([]);
        assert_eq!(
            unsearched,
            super::Unsearched {
                first: vec![format!("/memories/{}", ["d"; super::WALK_DEPTH].join("/"))],
                total: 1,
            }
        );
    }

    #[test]
    fn a_hard_linked_copy_of_the_token_is_found_and_an_outside_files_inode_is_not() {
        let setup = [Fs::HardLinkOutside {
            path: "/memories/hard.txt".into(),
            name: "hard-source.txt".into(),
        }];
        let sb = Sandbox::create_unchecked(&setup).unwrap();
        // The token's bytes copied into a new store file, linked to a second name: two links.
        std::fs::write(sb.root().join("copy.txt"), format!("x {} y", sb.token())).unwrap();
        std::fs::hard_link(sb.root().join("copy.txt"), sb.root().join("copy2.txt")).unwrap();
        // An outside canary the handler linked into the store is the outside file itself.
        std::fs::hard_link(
            sb.base().join("outside/secret.txt"),
            sb.root().join("linked.txt"),
        )
        .unwrap();
        let found = vec![
            "/memories/copy.txt".to_string(),
            "/memories/copy2.txt".to_string(),
        ];
        assert_eq!(sb.token_in_store_unchecked(), found);
        // Asked for, read with its node: the same.
        let asked = [
            "/memories/copy2.txt",
            "/memories/hard.txt",
            "/memories/linked.txt",
        ];
        let (token, nodes, unsearched) = sb.scan_store_unchecked(asked);
        assert_eq!(token, found);
        assert_eq!(unsearched, super::Unsearched::default());
        assert!(nodes.iter().all(|n| matches!(n, Some(Node::File(_)))));
    }

    #[test]
    fn the_token_after_more_than_a_reads_cap_of_padding_or_across_a_chunks_edge_is_found() {
        let sb = Sandbox::create_unchecked(&[]).unwrap();
        let token = sb.token().as_bytes();
        // 4 MiB of non-zero bytes, then the token: past what a node's read keeps.
        let mut padded = vec![b'x'; super::FILE_BYTES];
        padded.extend_from_slice(token);
        std::fs::write(sb.root().join("padded.bin"), &padded).unwrap();
        // The token across the edge of the first 1 MiB chunk, in a file past the cap too.
        let mut edge = vec![b'y'; super::SEARCH_CHUNK - 5];
        edge.extend_from_slice(token);
        edge.resize(super::FILE_BYTES + 10, b'y');
        std::fs::write(sb.root().join("edge.bin"), &edge).unwrap();
        let found = vec![
            "/memories/edge.bin".to_string(),
            "/memories/padded.bin".to_string(),
        ];
        assert_eq!(sb.token_in_store_unchecked(), found);
        let (token_found, _, unsearched) =
            sb.scan_store_unchecked(["/memories/edge.bin", "/memories/padded.bin"]);
        assert_eq!(token_found, found);
        assert_eq!(unsearched, super::Unsearched::default());
    }

    #[test]
    fn a_file_not_searched_whole_within_the_budget_is_cut_never_clean() {
        use super::{holds_token, Search};
        let sb = Sandbox::create_unchecked(&[]).unwrap();
        let token = sb.token().as_bytes();
        let root = sb.root_dir().unwrap();
        let mut bytes = vec![b'z'; 200];
        root.write("plain", &bytes).unwrap();
        bytes.splice(10..10, token.iter().copied());
        root.write("early", &bytes).unwrap();
        let search = |name: &str, mut left: u64| {
            let r = holds_token(&root, name.as_ref(), token, &[], &mut left, &mut Vec::new());
            (r, left)
        };
        assert_eq!(search("plain", 200), (Search::Clean, 0));
        assert_eq!(search("plain", 199), (Search::Cut, 0));
        assert_eq!(search("plain", 0), (Search::Cut, 0));
        // The token within what the budget reads: found.
        assert_eq!(search("early", 100), (Search::Holds, 0));
        assert_eq!(search("gone", 100), (Search::Clean, 100));
    }

    #[test]
    fn links_swapped_into_the_sandbox_are_never_followed() {
        let victim = tempfile::tempdir().unwrap();
        std::fs::create_dir(victim.path().join("sub")).unwrap();
        std::fs::write(victim.path().join("keep.txt"), "keep").unwrap();
        std::fs::write(victim.path().join("sub/keep.txt"), "keep").unwrap();
        let sb = Sandbox::create_unchecked(&[]).unwrap();
        let swap = |p: std::path::PathBuf| {
            std::fs::rename(&p, p.with_extension("away")).unwrap();
            std::os::unix::fs::symlink(victim.path(), &p).unwrap();
        };
        swap(sb.base().join("outside"));
        swap(sb.root().to_path_buf());
        let outside = sb.outside_unchecked();
        assert!(matches!(
            outside.get(std::path::Path::new("base/outside")),
            Some((Node::Symlink(_), _))
        ));
        assert!(!outside.keys().any(|k| k.ends_with("keep.txt")));
        assert_eq!(sb.node_unchecked("/memories/keep.txt"), None);
        assert!(sb
            .plant_unchecked(&crate::suite::Fs::File {
                path: "/memories/new.txt".into(),
                content: b"x".to_vec(),
            })
            .is_err());
        assert!(sb.token_in_store_unchecked().is_empty());
        let run = sb.run_dir().to_path_buf();
        let moved = run.with_extension("away");
        std::fs::rename(&run, &moved).unwrap();
        std::os::unix::fs::symlink(victim.path(), &run).unwrap();
        drop(sb);
        assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), 2);
        assert_eq!(
            std::fs::read_to_string(victim.path().join("sub/keep.txt")).unwrap(),
            "keep"
        );
        // The run folder was emptied through its handle under its new name; the link is left.
        assert_eq!(std::fs::read_dir(&moved).unwrap().count(), 0);
        assert!(std::fs::symlink_metadata(&run).unwrap().is_symlink());
        std::fs::remove_file(&run).unwrap();
        std::fs::remove_dir(&moved).unwrap();
    }

    fn setup_path(s: &Scenario) -> String {
        match &s.setup[0] {
            Fs::Symlink { path, .. } => path.clone(),
            other => panic!("{other:?}"),
        }
    }
}
