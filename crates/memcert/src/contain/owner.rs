//! Giving the scratch root to the handler's uid: everything under it is `chown`ed through
//! directory handles (`openat` with `O_NOFOLLOW`, `fchownat` with `AT_SYMLINK_NOFOLLOW`), so a
//! link swapped in never leads the walk outside, and a regular file with more names than the
//! walk saw (a hard link to a file elsewhere) is left alone.

use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::{AsFd, OwnedFd};
use std::rc::Rc;

use rustix::fs::{AtFlags, FileType, Gid, Mode, OFlags, Uid};

/// How deep the walk goes: the deepest planted tree is 300 folders (`scenario/deep-chain`);
/// one descriptor is held per level.
const MAX_DEPTH: usize = 512;

/// A regular file seen with more than one name, kept until every name is counted.
struct Linked {
    dir: Rc<OwnedFd>,
    name: CString,
    ino: u64,
    nlink: u64,
}

/// `chown uid:gid` the object at `rel` below the folder `top` (its folder reached one name at a
/// time with no link followed, `crate::scratch::parent_nofollow`; nothing when a component is
/// missing or a link) and, when it is a folder,
/// everything under it, folders already theirs walked too: a store that memcert emptied and
/// planted again (reset by undo, `certify::lane`) holds new files of memcert's in a folder
/// that is already the handler's.
pub(super) fn give_below(top: &cap_std::fs::Dir, rel: &std::path::Path, uid: u32, gid: u32) {
    use std::os::unix::ffi::OsStrExt as _;
    let Ok((dir, last)) = crate::scratch::parent_nofollow(top, rel, false) else {
        return;
    };
    let Ok(last) = CString::new(last.as_bytes()) else {
        return;
    };
    let (u, g) = (Uid::from_raw(uid), Gid::from_raw(gid));
    let Ok(st) = rustix::fs::statat(&dir, &last, AtFlags::SYMLINK_NOFOLLOW) else {
        return;
    };
    let ft = FileType::from_raw_mode(st.st_mode);
    if ft == FileType::RegularFile && st.st_nlink > 1 {
        return;
    }
    if st.st_uid != uid || st.st_gid != gid {
        let _ = rustix::fs::chownat(&dir, &last, Some(u), Some(g), AtFlags::SYMLINK_NOFOLLOW);
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if ft == FileType::Directory {
        if let Ok(sub) = rustix::fs::openat(&dir, &last, flags, Mode::empty()) {
            let mut linked = Vec::new();
            walk_all(Rc::new(sub), u, g, 0, &mut linked, true);
            give_linked(&linked, u, g);
        }
    }
}

/// `chown uid:gid` everything under the folder `root` that is not already theirs (a folder of
/// theirs is not walked again); `root` itself stays memcert's, mode 0711.
pub(super) fn give(root: &impl AsFd, uid: u32, gid: u32) {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(root, ".", flags, Mode::empty()) else {
        return;
    };
    let (u, g) = (Uid::from_raw(uid), Gid::from_raw(gid));
    // The root itself stays memcert's (so it still passes `crate::scratch`'s ownership check
    // when memcert makes the next case's sandbox in it), open to others only to pass through.
    let _ = rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o711));
    let mut linked = Vec::new();
    walk_all(Rc::new(fd), u, g, 0, &mut linked, false);
    give_linked(&linked, u, g);
}

/// Give the files seen with more than one name whose every name the walk saw.
fn give_linked(linked: &[Linked], u: Uid, g: Gid) {
    let mut seen: HashMap<u64, u64> = HashMap::new();
    for l in linked {
        *seen.entry(l.ino).or_default() += 1;
    }
    for l in linked {
        if seen.get(&l.ino).copied().unwrap_or(0) >= l.nlink {
            let _ = rustix::fs::chownat(
                &*l.dir,
                l.name.as_c_str(),
                Some(u),
                Some(g),
                AtFlags::SYMLINK_NOFOLLOW,
            );
        }
    }
}

/// Walk `dir`, giving what is not theirs; folders already theirs are walked only when `all`.
fn walk_all(dir: Rc<OwnedFd>, u: Uid, g: Gid, depth: usize, linked: &mut Vec<Linked>, all: bool) {
    // The names first, the reader closed, so that one descriptor per level is held.
    let names: Vec<CString> = match rustix::fs::Dir::read_from(&*dir) {
        Ok(reader) => reader
            .flatten()
            .map(|e| e.file_name().to_owned())
            .filter(|n| n.as_c_str() != c"." && n.as_c_str() != c"..")
            .collect(),
        Err(_) => return,
    };
    for name in names {
        let Ok(st) = rustix::fs::statat(&*dir, &name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let ft = FileType::from_raw_mode(st.st_mode);
        let mine = st.st_uid == u.as_raw() && st.st_gid == g.as_raw();
        if ft == FileType::RegularFile && st.st_nlink > 1 {
            if !mine {
                linked.push(Linked {
                    dir: Rc::clone(&dir),
                    name,
                    ino: st.st_ino,
                    nlink: st.st_nlink,
                });
            }
            continue;
        }
        if !mine {
            let _ = rustix::fs::chownat(&*dir, &name, Some(u), Some(g), AtFlags::SYMLINK_NOFOLLOW);
        }
        // A folder already theirs holds only what they made (memcert lays each case out in
        // fresh folders of its own), so only the folders just given are walked.
        if ft == FileType::Directory && (all || !mine) && depth < MAX_DEPTH {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            if let Ok(sub) = rustix::fs::openat(&*dir, &name, flags, Mode::empty()) {
                walk_all(Rc::new(sub), u, g, depth + 1, linked, all);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn gives_the_tree_but_not_a_hard_link_to_a_file_outside_nor_a_link_target() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "v").unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("a/b")).unwrap();
        let deep = root.path().join("d/".repeat(300));
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(root.path().join("a/b/f"), "f").unwrap();
        std::fs::write(root.path().join("a/pair1"), "p").unwrap();
        std::fs::hard_link(root.path().join("a/pair1"), root.path().join("a/pair2")).unwrap();
        std::fs::hard_link(&victim, root.path().join("a/hard")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("a/link")).unwrap();
        super::give(&std::fs::File::open(root.path()).unwrap(), 65534, 65534);
        let uid = |p: &std::path::Path| std::fs::symlink_metadata(p).unwrap().uid();
        assert_eq!(uid(root.path()), 0, "the root stays memcert's");
        let mode = std::fs::symlink_metadata(root.path()).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o711);
        assert_eq!(uid(&root.path().join("a")), 65534);
        assert_eq!(uid(&root.path().join("a/b/f")), 65534);
        assert_eq!(uid(&deep), 65534, "300 folders deep");
        assert_eq!(uid(&root.path().join("a/pair1")), 65534);
        assert_eq!(uid(&root.path().join("a/link")), 65534);
        assert_eq!(
            uid(&victim),
            0,
            "a hard link to a file outside is left alone"
        );
        assert_eq!(uid(outside.path()), 0, "a link is never followed");
    }
}
