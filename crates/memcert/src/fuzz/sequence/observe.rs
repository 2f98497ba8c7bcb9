//! What the harness sees on disk: the store walked by handle in the model's terms, the outside
//! watched with inotify, and the difference between two walks of the outside.
//!
//! # Ambient authority
//! Opens the sandbox's folders by host path to watch them.

use std::io;
use std::os::unix::ffi::OsStringExt;

use crate::attack::sandbox::{Node, Sandbox, Tree};
use crate::handler::model::{Dir as ModelDir, Entry};

/// inotify watches on every folder and file around the store: a change outside shows as an
/// event, read without blocking after each run.
#[derive(Debug)]
pub(super) struct OutsideWatch {
    fd: std::os::fd::OwnedFd,
}

impl OutsideWatch {
    /// Watch every folder of `outside` (and the run folder) for entries created, deleted or
    /// moved, and every regular file for writes and deletion. Attribute changes are not
    /// watched: planting a hard link to an outside canary changes its link count every run.
    pub(super) fn new_unchecked(sandbox: &Sandbox, outside: &Tree) -> io::Result<OutsideWatch> {
        use rustix::fs::inotify::{self, CreateFlags, WatchFlags};
        let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC)?;
        let dir_flags = WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::DONT_FOLLOW;
        // No MOVE_SELF on files: renaming the store's hard link to a canary moves that inode.
        let file_flags = WatchFlags::MODIFY
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::DELETE_SELF
            | WatchFlags::DONT_FOLLOW;
        let run = sandbox.run_dir();
        inotify::add_watch(&fd, run, dir_flags)?;
        for (rel, (node, _)) in outside {
            let flags = match node {
                Node::Dir => dir_flags,
                Node::File(_) => file_flags,
                _ => continue,
            };
            inotify::add_watch(&fd, run.join(rel), flags)?;
        }
        Ok(OutsideWatch { fd })
    }

    /// True when any event (or a queue overflow) came since the last call; drains the queue.
    pub(super) fn changed(&self) -> bool {
        use rustix::fs::inotify::Reader;
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
        let mut reader = Reader::new(&self.fd, &mut buf);
        let mut any = false;
        loop {
            match reader.next() {
                Ok(_) => any = true,
                Err(rustix::io::Errno::AGAIN) => return any,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return true,
            }
        }
    }
}

/// Every entry of the directory `dir` reads, links not followed, in the model's terms (a
/// regular file with more than one link is [`Entry::HardLinked`]). Handle-relative (`openat`
/// with `O_NOFOLLOW` from the directory's own handle): a sequence can build a tree whose host
/// paths are longer than `PATH_MAX`.
pub(super) fn walk_store(mut dir: rustix::fs::Dir) -> io::Result<ModelDir> {
    use rustix::fs::{openat, readlinkat, statat, AtFlags, FileType, Mode, OFlags};
    let mut names = Vec::new();
    for entry in &mut dir {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push((
                std::ffi::OsString::from_vec(name.to_vec()),
                entry.file_type(),
            ));
        }
    }
    let fd = dir.fd()?;
    let mut out = ModelDir::new();
    for (name, mut ft) in names {
        if ft == FileType::Unknown {
            ft = FileType::from_raw_mode(statat(fd, &name, AtFlags::SYMLINK_NOFOLLOW)?.st_mode);
        }
        let entry = match ft {
            FileType::Directory => {
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let sub = openat(fd, &name, flags, Mode::empty())?;
                Entry::Dir(walk_store(rustix::fs::Dir::new(sub)?)?)
            }
            FileType::Symlink => {
                let target = readlinkat(fd, &name, Vec::new())?;
                Entry::Symlink(String::from_utf8_lossy(target.as_bytes()).into_owned())
            }
            FileType::RegularFile => {
                let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
                let mut file = std::fs::File::from(openat(fd, &name, flags, Mode::empty())?);
                let links = rustix::fs::fstat(&file)?.st_nlink;
                let mut bytes = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    match io::Read::read(&mut file, &mut buf)? {
                        0 => break,
                        n => bytes.extend_from_slice(&buf[..n]),
                    }
                }
                if links > 1 {
                    Entry::HardLinked(bytes)
                } else {
                    Entry::File(bytes)
                }
            }
            _ => Entry::Special,
        };
        out.insert(name.to_string_lossy().into_owned(), entry);
    }
    Ok(out)
}

/// What differs between two walks, in words (path and both sides).
pub(super) fn diff(before: &Tree, after: &Tree) -> Vec<String> {
    let mut out = Vec::new();
    for (p, b) in before {
        match after.get(p) {
            None => out.push(format!("{} removed", p.display())),
            Some(a) if a != b => out.push(format!("{} changed", p.display())),
            Some(_) => {}
        }
    }
    for p in after.keys().filter(|p| !before.contains_key(*p)) {
        out.push(format!("{} created", p.display()));
    }
    out
}
