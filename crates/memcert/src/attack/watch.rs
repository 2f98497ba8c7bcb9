//! The outside watched while a case runs, not only compared before and after: inotify
//! (through rustix) on every folder around the store root and on every outside file's inode,
//! from just before the first command to just after the last answer.
//!
//! What the before/after comparison of [`crate::attack::oracle`] cannot see, this sees: a file
//! written in the store's parent and renamed into the store (gone from the outside when the
//! case ends), and a read or write of an outside canary through another name (an in-store hard
//! link, a link the handler followed), which leaves the outside as it was.
//!
//! # What is recorded
//! - On every outside folder (the run folder outside the store root, the alias): entries
//!   created, deleted, moved in or out, attribute changes, writes and reads of the files in it
//!   through it, listings of it ([`Op`]). Events that name the store root in its parent
//!   folder (a listing of `/memories`, a `chmod` of the root) are the store's, not the
//!   outside's, and are dropped.
//! - On every outside regular file's inode: reads and writes, whatever name they went through
//!   (`IN_ACCESS`, `IN_MODIFY`). Opens are not recorded, but on the decoy credentials (a careful handler may open an in-store
//!   hard link, see its link count and refuse), nor attribute changes of files (removing or
//!   renaming an in-store hard link changes the outside inode's link count): those are
//!   watched only to tell [`Session::close_window`] that the outside may have changed, and
//!   opens that a file may be written through a shared `mmap` from then on
//!   ([`Session::opened`]).
//!
//! # The window
//! [`Session::start`] adds the watches after the oracle's "before" walk and drops what the
//! queue held; [`Session::finish`] marks the queue after the last answer (the end marker: an
//! attribute change of a file of this thread's own that has no name in any folder, watched on
//! the same instance, so it makes and removes no file) and reads the queue up to the mark:
//! memcert's own walks (the oracle's before and after, the checks) fall outside the window and
//! are never recorded. The
//! watches are removed then; a sandbox reset by undo (`certify::lane`) keeps them, and opens
//! a new window per case ([`Session::reopen`], [`Session::close_window`]), which also says
//! whether anything may have changed the outside (the runner then lays out a new sandbox).
//! inotify does not see writes through a shared `mmap`: the held outside files that any event
//! showed opened are read again after each case (`certify::lane`), and the outside is walked
//! when they differ.
//!
//! # Between two windows
//! On kept watches, what happens between one case's last answer and the next case's window is
//! read too ([`Session::reopen_gap`], and the reset's own window): memcert's walks read and
//! open, its undo empties the store, but only the handler creates, writes, renames or deletes
//! outside (a thread it left running after its answer). Those changes ([`Gap::changes`]) are
//! charged by the runner (`certify::case`, `attack::oracle::Late`): to the case that just ended
//! when they are seen before it is judged (while memcert reads its store), else to the next
//! case on the same sandbox, whose finding names the case before it: that one was reported
//! already, and which process of the handler wrote is not known. Reads in a gap are not
//! charged (memcert's own walks read), nor attribute changes seen on an outside file's own
//! watch (memcert's unlink of an in-store hard link makes one); a change during the first
//! reset of a sandbox is start-up (`startup/side-effects`). A sandbox whose gap showed a change
//! is laid out anew: a write in a sandbox already removed (after a case that was not quiet, or
//! with `--reset fresh`, where each case's sandbox goes with it) is seen by no case.
//!
//! One inotify instance per thread is made once and reused by every case
//! ([`Session::start`]): making one per case is slow.
//!
//! # Guarantees
//! - Watches are added through handles: every folder and file is opened from its folder's
//!   handle with `O_PATH | O_NOFOLLOW` and watched through `/proc/self/fd/N`, links never
//!   followed. At most [`MAX_WATCHES`] watches, [`MAX_DEPTH`] folders deep.
//! - An overflowed queue (`IN_Q_OVERFLOW`) is an error ([`Session::finish`]): the case is
//!   ERROR, never judged on a partial record.
//!
//! # Non-guarantees
//! - Where inotify is missing or its limits are reached, [`Session::start`] returns `None` and
//!   the case is judged by the before/after comparison alone.
//! - Which process made an event is not known: anything in the window is the handler's.
//! - The handler's HOME and TMPDIR (`Target::watched`) are compared before and after, and only
//!   its decoy credentials (`Target::decoys`) are watched while the case runs: an open, a read or
//!   a write of one is a credential read (`credential-read`, UNSAFE). Other files there are not.
//!
//! # Ambient authority
//! None beyond `/proc/self/fd` and the end marker's file: an unnamed file (`O_TMPFILE`, or
//! made and unlinked at once where that is missing) in the scratch folder's parent, one per
//! thread for the thread's life, which no handler can name. Its one other way in,
//! `/proc/<memcert>/fd/N`, is closed: memcert makes itself not dumpable (`PR_SET_DUMPABLE` 0)
//! with its first watcher, so only a process that may ptrace it (root, `CAP_SYS_PTRACE`),
//! which could do anything to memcert anyway, can touch the marker. Where memcert cannot make
//! itself so, it makes no marker and reads each window to the end of the queue.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::fs::{openat, FileType, Mode, OFlags};

use super::sandbox::Sandbox;

/// At most this many watches per case (folders and files of the outside): the sandbox plants
/// about 60; a handler that filled the outside beforehand is not a case memcert plants.
pub const MAX_WATCHES: usize = 4096;
/// How many folders deep below the run folder the watches go.
pub const MAX_DEPTH: usize = 64;

/// One thing done to a path outside the store while the case ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    /// Its content read (`IN_ACCESS` on a file).
    Read,
    /// Listed (`IN_ACCESS` on a folder).
    Listed,
    /// Created (`IN_CREATE`).
    Created,
    /// Written or truncated (`IN_MODIFY`).
    Written,
    /// Mode, owner, times or extended attributes changed (`IN_ATTRIB`).
    AttributesChanged,
    /// Renamed away from this name (`IN_MOVED_FROM`, `IN_MOVE_SELF`).
    RenamedAway,
    /// Renamed onto this name (`IN_MOVED_TO`).
    RenamedHere,
    /// Deleted (`IN_DELETE`, `IN_DELETE_SELF`).
    Deleted,
    /// Opened (`IN_OPEN`): recorded on the decoy credentials only.
    Opened,
}

impl Op {
    /// The operation in words, as findings show it (`created`, `written`, ...).
    pub fn words(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Listed => "listed",
            Op::Created => "created",
            Op::Written => "written",
            Op::AttributesChanged => "its attributes changed",
            Op::RenamedAway => "renamed away",
            Op::RenamedHere => "renamed onto",
            Op::Deleted => "deleted",
            Op::Opened => "opened",
        }
    }

    /// True for the operations that only read ([`Op::Read`], [`Op::Listed`]).
    pub fn reads(self) -> bool {
        matches!(self, Op::Read | Op::Listed | Op::Opened)
    }
}

/// A path outside the store (relative to the run folder, the alias under its name, as in
/// `Sandbox::outside_unchecked`) and what was done to it, in the order first seen, each once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Touch {
    /// The path, relative to the run folder; for a decoy credential, `~/` and its path in
    /// the handler's HOME (`~/.ssh/id_ed25519`).
    pub path: PathBuf,
    /// What was done to it.
    pub ops: Vec<Op>,
    /// It is a decoy credential of the handler's HOME ([`Session::start`]): any touch of it,
    /// an open included, is a credential read.
    pub decoy: bool,
}

/// What the watches saw change outside the store in a stretch of time (between two windows,
/// [`Session::reopen_gap`], or in one, [`Session::close_window`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gap {
    /// An event that may have changed the outside: a change flag on a watch of the session,
    /// not about the store root (an attribute change of an outside file and a watch the kernel
    /// dropped included; the end marker's is on no watch of the session).
    pub changed: bool,
    /// Those changes as touches, by path (sorted), each path's operations in the order first
    /// seen: creations, writes, renames, deletions, attribute changes of entries of an outside
    /// folder. Reads, listings and opens are left out (memcert's own walks make them), and
    /// so are attribute changes seen on an outside file's own watch (memcert's unlink of an
    /// in-store hard link makes one), as in a window.
    pub changes: Vec<Touch>,
}

/// A [`Gap`] as its events are read ([`Session::see_change`]).
#[derive(Default)]
struct GapSeen {
    changed: bool,
    changes: Touches,
}

impl GapSeen {
    fn into_gap(self) -> Gap {
        Gap {
            changed: self.changed,
            changes: self.changes.into_vec(),
        }
    }
}

/// Touches gathered by path, each path's operations in the order first seen, once each.
#[derive(Default)]
struct Touches(BTreeMap<PathBuf, (Vec<Op>, bool)>);

impl Touches {
    fn add(&mut self, path: PathBuf, op: Op, decoy: bool) {
        let (ops, is_decoy) = self.0.entry(path).or_default();
        *is_decoy |= decoy;
        if !ops.contains(&op) {
            ops.push(op);
        }
    }

    fn into_vec(self) -> Vec<Touch> {
        self.0
            .into_iter()
            .map(|(path, (ops, decoy))| Touch { path, ops, decoy })
            .collect()
    }
}

/// The inotify instance a thread reuses.
#[derive(Debug)]
struct Watcher {
    fd: OwnedFd,
    /// The end marker ([module docs](self)): a file with no name, and the watch of its
    /// attribute changes on `fd`; `None` where it could not be had (the windows are then read
    /// to the end of the queue).
    mark: Option<(std::fs::File, i32)>,
    /// Events read from `fd` after the one a [`Watcher::drain`] stopped at (the kernel hands
    /// them over in one read): the next drain takes them first, so nothing queued after an end
    /// marker is lost.
    pending: RefCell<std::collections::VecDeque<(i32, ReadFlags, std::ffi::OsString)>>,
}

thread_local! {
    /// `None` inside: not made yet; `Some(None)`: inotify is not available here.
    static WATCHER: RefCell<Option<Option<Watcher>>> = const { RefCell::new(None) };
}

impl Watcher {
    fn new() -> io::Result<Watcher> {
        let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC)?;
        // The marker has no name, but `/proc/<memcert>/fd/N` reaches it: another process of
        // the same user (an uncontained handler's) could touch it and end a window early.
        // Not dumpable, memcert's `/proc` entries are root's, and that path is closed to
        // processes that may not ptrace it. Handlers memcert starts are dumpable again from
        // their fork on (`contain::spawn`), as before; an `exec` makes them so anyway.
        // Without that, no marker: the windows are read to the end of the queue.
        let mark =
            rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
                .ok()
                .and_then(|()| tempfile::tempfile_in(super::sandbox::default_parent()).ok())
                .and_then(|file| {
                    let wd = inotify::add_watch(&fd, proc_path(&file), WatchFlags::ATTRIB).ok()?;
                    Some((file, wd))
                });
        Ok(Watcher {
            fd,
            mark,
            pending: RefCell::default(),
        })
    }

    /// Queue the end marker's event now: the watch of the marker file, or `None` when there is
    /// no marker or its attribute change failed.
    fn mark(&self) -> Option<i32> {
        let (file, wd) = self.mark.as_ref()?;
        let now = rustix::fs::Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_NOW,
        };
        let times = rustix::fs::Timestamps {
            last_access: now,
            last_modification: now,
        };
        rustix::fs::futimens(file, &times).ok().map(|()| *wd)
    }

    /// Read every queued event, calling `each` with its watch, flags and name, until the queue
    /// is empty (`Ok(false)`) or `each` returns true (`Ok(true)`). The events read past the
    /// one `each` stopped at are kept for the next drain, which gives them first.
    ///
    /// # Errors
    /// The queue overflowed, or reading it failed.
    fn drain(&self, mut each: impl FnMut(i32, ReadFlags, &OsStr) -> bool) -> io::Result<bool> {
        // `each` never drains: the borrow is not met again while it runs.
        while let Some((wd, flags, name)) = self.pending.borrow_mut().pop_front() {
            if each(wd, flags, &name) {
                return Ok(true);
            }
        }
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 8192];
        let mut reader = inotify::Reader::new(&self.fd, &mut buf);
        loop {
            match reader.next() {
                Ok(e) => {
                    let (wd, flags, name) = parts(&e)?;
                    if each(wd, flags, name) {
                        self.keep_buffered(&mut reader)?;
                        return Ok(true);
                    }
                }
                Err(rustix::io::Errno::AGAIN) => return Ok(false),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Move the events `reader` has read but not given out to [`Watcher::pending`] (at most
    /// one read's worth, 8 KiB: nothing more is read from the queue).
    ///
    /// # Errors
    /// One of them is a queue overflow.
    fn keep_buffered(&self, reader: &mut inotify::Reader<'_, &OwnedFd>) -> io::Result<()> {
        let mut pending = self.pending.borrow_mut();
        while !reader.is_buffer_empty() {
            let Ok(e) = reader.next() else { break };
            let (wd, flags, name) = parts(&e)?;
            pending.push_back((wd, flags, name.to_owned()));
        }
        Ok(())
    }
}

/// The watch, flags and name (empty for the watched object itself) of one event.
///
/// # Errors
/// The event says the queue overflowed.
fn parts<'e>(e: &'e inotify::Event<'_>) -> io::Result<(i32, ReadFlags, &'e OsStr)> {
    if e.events().contains(ReadFlags::QUEUE_OVERFLOW) {
        return Err(io::Error::other(
            "the inotify queue overflowed: events outside the store were lost",
        ));
    }
    let name = e
        .file_name()
        .map(|n| OsStr::from_bytes(n.to_bytes()))
        .unwrap_or_default();
    Ok((e.wd(), e.events(), name))
}

/// The `/proc/self/fd/N` path of a handle: watching it watches the handle's own inode.
fn proc_path(fd: &impl AsFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd()))
}

/// What each watch of a case stands for.
#[derive(Clone, Debug)]
struct Watched {
    /// Its path relative to the run folder.
    label: PathBuf,
    /// A folder (events may name an entry of it) or a file.
    dir: bool,
    /// A decoy credential file (opens are recorded too).
    decoy: bool,
}

/// The watches of one case, from [`Session::start`] to [`Session::finish`].
#[derive(Debug)]
pub struct Session {
    wds: BTreeMap<i32, Watched>,
    /// The store root relative to the run folder: events at or under it are dropped.
    root: PathBuf,
    /// The outside files (not decoys) a window saw opened ([`Session::opened`]).
    opened: RefCell<std::collections::BTreeSet<PathBuf>>,
}

/// The flags of a folder's watch ([module docs](self)).
fn dir_flags() -> WatchFlags {
    WatchFlags::ACCESS
        | WatchFlags::MODIFY
        | WatchFlags::ATTRIB
        | WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::DELETE_SELF
        | WatchFlags::MOVE_SELF
        | WatchFlags::ONLYDIR
}

/// The flags of a file's watch: content ([module docs](self)), attribute changes, which are
/// not touches but tell [`Session::close_window`] that the outside may have changed, and opens,
/// which are not touches either but tell it that the file may be written through a shared
/// `mmap` from then on ([`Session::opened`]).
fn file_flags() -> WatchFlags {
    WatchFlags::ACCESS | WatchFlags::MODIFY | WatchFlags::ATTRIB | WatchFlags::OPEN
}

impl Session {
    /// Watch the outside of `sandbox` ([module docs](self)) on this thread's inotify instance
    /// (made on first use), after dropping
    /// whatever its queue held, and each of `decoys` (the handler's decoy credentials: a label
    /// such as `~/.ssh/id_ed25519` and an `O_PATH` handle of the file, `Target::decoys`) for
    /// opens, reads and writes. `None` when inotify or one of its watches cannot be had here:
    /// the case is then judged by the before/after comparison alone.
    pub fn start(sandbox: &Sandbox, decoys: &[(PathBuf, OwnedFd)]) -> Option<Session> {
        WATCHER.with(|cell| {
            let mut cell = cell.borrow_mut();
            let w = cell.get_or_insert_with(|| Watcher::new().ok()).as_ref()?;
            // Left over from the last case: its removed watches' IN_IGNORED, late events.
            w.drain(|_, _, _| false).ok()?;
            let (tops, root) = sandbox.outside_handles();
            let mut s = Session {
                wds: BTreeMap::new(),
                root,
                opened: RefCell::default(),
            };
            for (label, dir) in tops {
                let fd = openat(
                    dir,
                    ".",
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .ok()?;
                if s.watch_tree(w, &fd, &label, 0).is_err() {
                    s.remove(w);
                    return None;
                }
            }
            for (label, fd) in decoys {
                let flags = WatchFlags::OPEN | file_flags();
                match inotify::add_watch(&w.fd, proc_path(fd), flags) {
                    Ok(wd) => {
                        s.wds.insert(
                            wd,
                            Watched {
                                label: label.clone(),
                                dir: false,
                                decoy: true,
                            },
                        );
                    }
                    Err(_) => {
                        s.remove(w);
                        return None;
                    }
                }
            }
            w.drain(|_, _, _| false).ok()?;
            Some(s)
        })
    }

    /// Watch the folder `dir` (at `label`) and everything below it but the store root: the
    /// entries first, the folder itself last, so that memcert's own listing is not recorded.
    fn watch_tree(
        &mut self,
        w: &Watcher,
        dir: &OwnedFd,
        label: &Path,
        depth: usize,
    ) -> io::Result<()> {
        let mut entries = Vec::new();
        let mut listing = rustix::fs::Dir::read_from(dir)?;
        for e in &mut listing {
            let e = e?;
            let name = OsStr::from_bytes(e.file_name().to_bytes()).to_owned();
            if name != "." && name != ".." {
                entries.push((name, e.file_type()));
            }
        }
        for (name, ft) in entries {
            let rel = label.join(&name);
            if rel == self.root || self.wds.len() >= MAX_WATCHES {
                continue;
            }
            let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let Ok(fd) = openat(dir, &name, flags, Mode::empty()) else {
                continue;
            };
            let ft = match ft {
                FileType::Unknown => FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode),
                ft => ft,
            };
            match ft {
                FileType::Directory if depth + 1 < MAX_DEPTH => {
                    let read = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW;
                    if let Ok(sub) = openat(dir, &name, read | OFlags::CLOEXEC, Mode::empty()) {
                        self.watch_tree(w, &sub, &rel, depth + 1)?;
                    }
                }
                FileType::RegularFile => self.add(w, &fd, rel, false)?,
                _ => {}
            }
        }
        self.add(w, dir, label.to_path_buf(), true)
    }

    /// Add one watch on the handle `fd`.
    fn add(&mut self, w: &Watcher, fd: &OwnedFd, label: PathBuf, dir: bool) -> io::Result<()> {
        if self.wds.len() >= MAX_WATCHES {
            return Ok(());
        }
        let flags = if dir { dir_flags() } else { file_flags() };
        let wd = inotify::add_watch(&w.fd, proc_path(fd), flags)?;
        self.wds.entry(wd).or_insert(Watched {
            label,
            dir,
            decoy: false,
        });
        Ok(())
    }

    /// Remove every watch of this session.
    fn remove(&self, w: &Watcher) {
        for wd in self.wds.keys() {
            let _ = inotify::remove_watch(&w.fd, *wd);
        }
    }

    /// End the window: mark the queue (the end marker, [module docs](self)), read it up to the
    /// mark, remove the watches. Returns what was done outside the store, by path (sorted),
    /// each path's operations in the order first seen. Where there is no marker, the queue is
    /// read to its end instead: the handler's calls all returned before.
    ///
    /// # Errors
    /// The queue overflowed: the record is incomplete.
    pub fn finish(self) -> Result<Vec<Touch>, String> {
        WATCHER.with(|cell| {
            let cell = cell.borrow();
            let Some(Some(w)) = cell.as_ref() else {
                return Err("the inotify instance is gone".to_owned());
            };
            let result = self.read_marked(w, |_, _, _| {});
            self.remove(w);
            result
        })
    }

    /// Open a new window on the same watches (a sandbox reset by undo keeps every outside
    /// folder and file, so its watches stay valid from one case to the next): read and drop
    /// what the queue holds (memcert's own walks, the undo).
    /// Returns whether any of it changed the outside ([`Session::close_window`]): something
    /// changed it between two windows.
    ///
    /// # Errors
    /// The queue overflowed or cannot be read (the instance is gone): the watches are then of
    /// no use.
    pub fn reopen(&self) -> Result<bool, String> {
        self.reopen_gap(&[]).map(|g| g.changed)
    }

    /// [`Session::reopen`] that returns what the queue showed changed outside since the last
    /// window closed ([`Gap`]: a write after a case's last answer, by a thread the handler
    /// left running, is one), where an attribute change alone (`IN_ATTRIB`, no other flag) of
    /// an outside file in `linked` (paths relative to the run folder) is not a change:
    /// memcert's own link or unlink of an in-store hard link to it changes its link count
    /// (`certify::lane`, which then checks its mode against the template itself).
    ///
    /// # Errors
    /// As [`Session::reopen`].
    pub fn reopen_gap(&self, linked: &[PathBuf]) -> Result<Gap, String> {
        WATCHER.with(|cell| match cell.borrow().as_ref() {
            Some(Some(w)) => {
                let mut gap = GapSeen::default();
                w.drain(|wd, flags, name| {
                    let own_link = flags == ReadFlags::ATTRIB
                        && !linked.is_empty()
                        && self
                            .outside_path(wd, name)
                            .is_some_and(|(_, path)| linked.contains(&path));
                    if !own_link {
                        self.see_change(wd, flags, name, &mut gap);
                    }
                    self.note_open(wd, flags, name);
                    false
                })
                .map_err(|e| format!("watching the outside failed: {e}"))?;
                Ok(gap.into_gap())
            }
            _ => Err("the inotify instance is gone".to_owned()),
        })
    }

    /// Note one event in `gap`: changed when it may change the outside, and its touch in
    /// the changes when it is one a window records and not a read.
    fn see_change(&self, wd: i32, flags: ReadFlags, name: &OsStr, gap: &mut GapSeen) {
        if !self.changes(wd, flags, name) {
            return;
        }
        gap.changed = true;
        if let Some((path, op)) = self.event(wd, flags, name) {
            if !op.reads() {
                let decoy = self.wds.get(&wd).is_some_and(|w| w.decoy);
                gap.changes.add(path, op, decoy);
            }
        }
    }

    /// [`Session::finish`] that keeps the watches for the next window ([`Session::reopen`]),
    /// and also says what in the window may have changed the outside ([`Gap`]): an event other
    /// than a read, a listing or an open, an attribute change of an
    /// outside file included (a `chmod` through a hard link made in the store, which is not a
    /// touch). `changed` false means the outside is as it was when the window opened, which a
    /// walk would show too.
    ///
    /// # Errors
    /// As [`Session::finish`].
    pub fn close_window(&self) -> Result<(Vec<Touch>, Gap), String> {
        WATCHER.with(|cell| match cell.borrow().as_ref() {
            Some(Some(w)) => {
                let mut gap = GapSeen::default();
                let touched = self.read_marked(w, |wd, flags, name| {
                    self.see_change(wd, flags, name, &mut gap);
                    self.note_open(wd, flags, name);
                })?;
                Ok((touched, gap.into_gap()))
            }
            _ => Err("the inotify instance is gone".to_owned()),
        })
    }

    /// Record an `IN_OPEN` of an outside file (not a decoy) for [`Session::opened`].
    fn note_open(&self, wd: i32, flags: ReadFlags, name: &OsStr) {
        if flags.contains(ReadFlags::OPEN) {
            if let Some((w, path)) = self.outside_path(wd, name) {
                if !w.dir && !w.decoy {
                    self.opened.borrow_mut().insert(path);
                }
            }
        }
    }

    /// Whether any event this session read (in a window, [`Session::close_window`], or between
    /// two, [`Session::reopen`]: an open after a case's last answer, or during a prelude, counts
    /// too) was an `IN_OPEN` of the outside file at `path` (relative to the run folder, as its
    /// watch is labelled; not a decoy), through any name (an in-store hard link too). Sticky
    /// for the session's life. memcert's own reads of the held files open nothing (`pread` on
    /// handles held since the layout); its walks of the outside open files, but only for a
    /// case that was not quiet, whose sandbox is then laid out anew (a debug build's undo check
    /// walks too: more files read again, never fewer). Only a handle opened on a file can write
    /// to it through a shared `mmap`, which no event shows: while this is false, the file
    /// cannot have changed that way since the watches began (`certify::lane` reads again only
    /// the held files this is true of).
    pub fn opened(&self, path: &Path) -> bool {
        self.opened.borrow().contains(path)
    }

    /// Whether an event may have changed the outside: a change flag on a watch of this
    /// session (the end marker's is not one), not about the store root.
    fn changes(&self, wd: i32, flags: ReadFlags, name: &OsStr) -> bool {
        // A watch the kernel dropped (IN_IGNORED: its file or folder removed, or gone with its
        // file system) no longer sees anything: as much a change as what removed it. Checked
        // first: most events are memcert's own reads, which need no path.
        let change = flags.intersects(
            ReadFlags::IGNORED
                | ReadFlags::MODIFY
                | ReadFlags::ATTRIB
                | ReadFlags::CREATE
                | ReadFlags::DELETE
                | ReadFlags::DELETE_SELF
                | ReadFlags::MOVED_FROM
                | ReadFlags::MOVED_TO
                | ReadFlags::MOVE_SELF
                | ReadFlags::UNMOUNT,
        );
        if !change {
            return false;
        }
        self.outside_path(wd, name).is_some()
    }

    /// The watch `wd` stands for and the path an event on it names (its label, joined with
    /// `name` for an entry of a folder); `None` for a watch of another session, or a path at
    /// or under the store root (the store's, not the outside's).
    fn outside_path(&self, wd: i32, name: &OsStr) -> Option<(&Watched, PathBuf)> {
        let watched = self.wds.get(&wd)?;
        let path = if name.is_empty() {
            watched.label.clone()
        } else {
            watched.label.join(name)
        };
        (!path.starts_with(&self.root)).then_some((watched, path))
    }

    /// Remove every watch of this session, without reading the queue.
    pub fn end(self) {
        WATCHER.with(|cell| {
            if let Some(Some(w)) = cell.borrow().as_ref() {
                self.remove(w);
            }
        });
    }

    /// Mark the queue and read it up to the mark ([`Session::finish`]), every event read also
    /// given to `seen`; the touches, by path.
    fn read_marked(
        &self,
        w: &Watcher,
        mut seen: impl FnMut(i32, ReadFlags, &OsStr),
    ) -> Result<Vec<Touch>, String> {
        let mark = w.mark();
        let mut touched = Touches::default();
        w.drain(|wd, flags, name| {
            if mark == Some(wd) {
                return flags.contains(ReadFlags::ATTRIB);
            }
            seen(wd, flags, name);
            if let Some((path, op)) = self.event(wd, flags, name) {
                let decoy = self.wds.get(&wd).is_some_and(|w| w.decoy);
                touched.add(path, op, decoy);
            }
            false
        })
        .map_err(|e| format!("watching the outside failed: {e}"))?;
        Ok(touched.into_vec())
    }

    /// The path and operation of one event, or `None` for events that are not the outside's
    /// (the store root named in its parent, `IN_IGNORED`, unknown watches).
    fn event(&self, wd: i32, flags: ReadFlags, name: &OsStr) -> Option<(PathBuf, Op)> {
        if flags.contains(ReadFlags::IGNORED) {
            return None;
        }
        let (watched, path) = self.outside_path(wd, name)?;
        let is_dir = flags.contains(ReadFlags::ISDIR) || (name.is_empty() && watched.dir);
        // A file's own watch reports attribute changes only for Session::close_window.
        if !watched.dir
            && !watched.decoy
            && !flags.intersects(ReadFlags::ACCESS | ReadFlags::MODIFY)
        {
            return None;
        }
        let op = if watched.decoy && flags.contains(ReadFlags::OPEN) {
            Op::Opened
        } else if flags.contains(ReadFlags::CREATE) {
            Op::Created
        } else if flags.intersects(ReadFlags::DELETE | ReadFlags::DELETE_SELF) {
            Op::Deleted
        } else if flags.intersects(ReadFlags::MOVED_FROM | ReadFlags::MOVE_SELF) {
            Op::RenamedAway
        } else if flags.contains(ReadFlags::MOVED_TO) {
            Op::RenamedHere
        } else if flags.contains(ReadFlags::MODIFY) {
            Op::Written
        } else if flags.contains(ReadFlags::ATTRIB) {
            Op::AttributesChanged
        } else if flags.contains(ReadFlags::ACCESS) {
            if is_dir {
                Op::Listed
            } else {
                Op::Read
            }
        } else {
            return None;
        };
        Some((path, op))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Fs, LinkTo};

    /// `f` of this thread's inotify instance, `None` before it is made or where it cannot be.
    fn this_watcher<R>(f: impl FnOnce(&Watcher) -> R) -> Option<R> {
        WATCHER.with(|c| c.borrow().as_ref().and_then(Option::as_ref).map(f))
    }

    fn touches(t: &[Touch]) -> Vec<(String, Vec<&'static str>)> {
        t.iter()
            .map(|t| {
                (
                    t.path.display().to_string(),
                    t.ops.iter().map(|o| o.words()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn a_transient_temp_file_and_a_read_through_a_hard_link_are_recorded_and_memcerts_walks_are_not(
    ) {
        let setup = [Fs::HardLinkOutside {
            path: "/memories/hard.txt".into(),
            name: "hard-source.txt".into(),
        }];
        let sb = Sandbox::create_unchecked(&setup).unwrap();
        let before = sb.outside_unchecked();
        let s = Session::start(&sb, &[]).expect("inotify");
        // The handler: a temp file in the store's parent renamed into the store, and a read
        // through the in-store hard link.
        std::fs::write(sb.base().join(".tmp-x"), "x").unwrap();
        std::fs::rename(sb.base().join(".tmp-x"), sb.root().join("x.md")).unwrap();
        std::fs::read(sb.root().join("hard.txt")).unwrap();
        std::fs::read_dir(sb.root()).unwrap().for_each(drop);
        let t = s.finish().unwrap();
        assert_eq!(
            sb.outside_unchecked(),
            before,
            "the outside looks untouched"
        );
        assert_eq!(
            touches(&t),
            vec![
                (
                    "base/.tmp-x".to_owned(),
                    vec!["created", "written", "renamed away"]
                ),
                ("base/outside/hard-source.txt".to_owned(), vec!["read"]),
            ]
        );
        // The next case on the same thread reuses the instance and starts clean.
        let s = Session::start(&sb, &[]).expect("inotify");
        assert_eq!(s.finish().unwrap(), Vec::new());
    }

    // The end marker used to be a file made and removed in the run folder, twice per case:
    // 43% of the files a fuzz sequence made (strace), on a tmpfs whose file creation two
    // workers share.
    #[test]
    fn the_end_marker_makes_and_removes_no_file_and_bounds_the_window() {
        let sb = Sandbox::create_unchecked(&[]).unwrap();
        let spy = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).unwrap();
        let every = WatchFlags::CREATE | WatchFlags::DELETE | WatchFlags::MOVED_TO;
        for dir in [sb.run_dir(), sb.base()] {
            inotify::add_watch(&spy, dir, every).unwrap();
        }
        let s = Session::start(&sb, &[]).expect("inotify");
        std::fs::read(sb.base().join("outside/secret.txt")).unwrap();
        let (t, gap) = s.close_window().unwrap();
        assert_eq!(gap, Gap::default());
        assert_eq!(
            touches(&t),
            vec![("base/outside/secret.txt".to_owned(), vec!["read"])]
        );
        // The marker is this thread's unnamed file: no entry made or removed in the run folder.
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 1024];
        let mut reader = inotify::Reader::new(&spy, &mut buf);
        assert_eq!(reader.next().err(), Some(rustix::io::Errno::AGAIN));
        let marked = this_watcher(|w| w.mark.is_some());
        assert_eq!(marked, Some(true), "the end marker could not be had");
        // And no other process of this user reaches it through /proc/<pid>/fd.
        assert_eq!(
            rustix::process::dumpable_behavior(),
            Ok(rustix::process::DumpableBehavior::NotDumpable)
        );
        // A second window reads only its own events.
        std::fs::read(sb.base().join("canary.txt")).unwrap();
        let (t, gap) = s.close_window().unwrap();
        assert_eq!(gap, Gap::default());
        assert_eq!(
            touches(&t),
            vec![("base/canary.txt".to_owned(), vec!["read"])]
        );
        s.end();
    }

    // A drain that stopped at the end marker dropped the rest of the events read with it, so a
    // write just after a case's last answer was lost.
    #[test]
    fn what_is_read_after_the_end_marker_is_given_to_the_next_drain() {
        let sb = Sandbox::create_unchecked(&[]).unwrap();
        let s = Session::start(&sb, &[]).expect("inotify");
        std::fs::read(sb.base().join("outside/secret.txt")).unwrap();
        // A mark now (as a window's end), then a write: one read(2) hands over both.
        let marked = this_watcher(Watcher::mark).flatten();
        assert!(marked.is_some(), "the end marker could not be had");
        std::fs::write(sb.base().join("late.txt"), "x").unwrap();
        let (t, gap) = s.close_window().unwrap();
        assert_eq!(gap, Gap::default());
        assert_eq!(
            touches(&t),
            vec![("base/outside/secret.txt".to_owned(), vec!["read"])]
        );
        let gap = s.reopen_gap(&[]).unwrap();
        assert!(gap.changed);
        assert_eq!(
            touches(&gap.changes),
            vec![("base/late.txt".to_owned(), vec!["created", "written"])]
        );
        s.end();
    }

    #[test]
    fn kept_windows_tell_reads_from_changes_and_a_chmod_through_a_hard_link_is_a_change_not_a_touch(
    ) {
        let sb = Sandbox::create_unchecked(&[]).unwrap();
        let s = Session::start(&sb, &[]).expect("inotify");
        // Reads and a listing of the outside, and anything in the store: no change.
        std::fs::read(sb.base().join("outside/secret.txt")).unwrap();
        std::fs::read_dir(sb.base()).unwrap().for_each(drop);
        std::fs::write(sb.root().join("x.md"), "x").unwrap();
        let (t, gap) = s.close_window().unwrap();
        assert_eq!(gap, Gap::default());
        assert_eq!(
            touches(&t),
            vec![
                ("base".to_owned(), vec!["listed"]),
                ("base/outside/secret.txt".to_owned(), vec!["read"]),
            ]
        );
        // Nothing memcert did after the window is a change.
        assert_eq!(s.reopen(), Ok(false));
        // A hard link made in the store, and a chmod through it: the outside file's mode
        // changed; its folder saw nothing.
        let outside = sb.base().join("outside/canary.txt");
        std::fs::hard_link(&outside, sb.root().join("h")).unwrap();
        std::fs::set_permissions(
            sb.root().join("h"),
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .unwrap();
        let (t, gap) = s.close_window().unwrap();
        assert!(gap.changed);
        assert_eq!(touches(&t), Vec::<(String, Vec<&str>)>::new());
        assert_eq!(gap.changes, Vec::new(), "a file's attributes: no touch");
        // A change between two windows shows when the next one opens, with what it was; a read
        // or listing there (memcert's own walks) is none.
        assert_eq!(s.reopen(), Ok(false));
        std::fs::write(sb.base().join("canary.txt"), "changed").unwrap();
        std::fs::read(sb.base().join("outside/secret.txt")).unwrap();
        std::fs::read_dir(sb.base()).unwrap().for_each(drop);
        std::fs::write(sb.base().join("outside/new.txt"), "new").unwrap();
        let gap = s.reopen_gap(&[]).unwrap();
        assert!(gap.changed);
        assert_eq!(
            touches(&gap.changes),
            vec![
                ("base/canary.txt".to_owned(), vec!["written"]),
                (
                    "base/outside/new.txt".to_owned(),
                    vec!["created", "written"]
                ),
            ]
        );
        assert_eq!(s.reopen_gap(&[]), Ok(Gap::default()));
        s.end();
    }

    #[test]
    fn a_link_followed_out_of_the_store_shows_what_it_reached() {
        let setup = [Fs::Symlink {
            path: "/memories/out".into(),
            target: LinkTo::Outside(String::new()),
        }];
        let sb = Sandbox::create_unchecked(&setup).unwrap();
        let s = Session::start(&sb, &[]).expect("inotify");
        std::fs::read_dir(sb.root().join("out"))
            .unwrap()
            .for_each(drop);
        std::fs::OpenOptions::new()
            .append(true)
            .open(sb.root().join("out/secret.txt"))
            .and_then(|mut f| io::Write::write_all(&mut f, b"x"))
            .unwrap();
        let t = s.finish().unwrap();
        assert_eq!(
            touches(&t),
            vec![
                ("base/outside".to_owned(), vec!["listed"]),
                ("base/outside/secret.txt".to_owned(), vec!["written"]),
            ]
        );
    }
}
