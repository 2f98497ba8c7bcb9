//! Reset by undo: one sandbox per worker, kept from one case to the next and put back as a
//! fresh layout leaves it, instead of a new sandbox laid out (and removed) for every case.
//!
//! A [`Lane`] is what one worker (one target) keeps between cases: the sandbox it laid out
//! last with no setup, the outside as that layout left it (the *template*), and the outside's
//! inotify watches ([`crate::attack::watch::Session`], whose folders and files stay the same
//! inodes). Before a case it is undone: the store is emptied ([`Sandbox::clear_store_unchecked`])
//! and the case's setup planted. The outside needs no undo: the sandbox is kept only when the
//! case left the outside exactly as the template has it (the oracle's "after", compared with
//! it: every file's bytes and every mode) and the watches saw no event that may have changed
//! the outside, from the reset to the next case's undo. The "before" walk is skipped when the
//! watches saw nothing during the reset (the "before" is then the template); the "after" walk
//! when they saw nothing during the case either and every outside file, held open since the
//! layout, still holds its bytes ([`Lease::files_unchanged`]: inotify does not see a write
//! through a shared `mmap`; reading the files again does, and is done for each file the watches
//! saw opened, in a window or between two, since only an opened file can be mapped).
//!
//! # When a fresh layout is made instead
//! - `--reset fresh` ([`Reset::Fresh`]), or the first case of a lane;
//! - the last case changed anything outside the store, or its watches saw an event that may
//!   have (even one a walk cannot see: a folder replaced by an equal copy), or after its last
//!   answer (what such a change was is charged to the next case, [`Lease::late`], which names
//!   the case before it: `attack::watch`, "Between two windows"); its watch failed or
//!   overflowed; or the undo itself failed;
//! - the case plants a file outside the store ([`Fs::HardLinkOutside`] of a name the layout
//!   has not made: the outside would differ from the template and the new file would not be
//!   watched): it runs in a sandbox of its own, and the kept one is dropped. A hard link to an
//!   outside file the layout made (`hard-source.txt`) is planted in the kept sandbox: the link
//!   and its undo change that file's link count alone, an attribute change the watches then
//!   do not count as a change when its mode is still the template's;
//! - the target's scratch folder or decoy credentials changed (a restarted handler).
//!
//! In debug builds, after each undo whose watches found the outside quiet the whole sandbox is
//! walked and compared with the template (`debug_assert_eq!`): a self-check of the undo, which
//! panics in a debug build only.
//!
//! # Guarantees
//! - A case sees the sandbox a fresh layout with its setup gives, with the same canary token
//!   and folder names as the cases before it on this lane.
//! - Everything goes through the sandbox's handles ([`crate::attack::sandbox`]).
//!
//! # Non-guarantees
//! - A handle on an outside file opened before the lane's watches began (between the layout
//!   and the first case, when the handler has not been told where the sandbox is) is not
//!   seen: a write through a shared `mmap` of it in a later case shows only if the watches saw
//!   that file opened since.
//! - A handler that remembers a path or the token from an earlier case of the same lane may
//!   show it in a later one; it is charged to the case where it is shown (with `--reset fresh`
//!   each case has its own names and token).

use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

use crate::attack::sandbox::{HeldFiles, Node, Sandbox, Tree};
use crate::attack::watch::{Session, Touch};
use crate::suite::Fs;

/// How the runner gets each case's sandbox (`--reset`, undocumented: for tests and
/// measurements).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reset {
    /// Keep one sandbox per worker and undo what each case changed ([module docs](self)).
    #[default]
    Undo,
    /// Lay out a new sandbox for every case and remove it after.
    Fresh,
}

impl std::str::FromStr for Reset {
    type Err = String;

    fn from_str(s: &str) -> Result<Reset, String> {
        match s {
            "undo" => Ok(Reset::Undo),
            "fresh" => Ok(Reset::Fresh),
            other => Err(format!("unknown reset {other:?}: expected undo or fresh")),
        }
    }
}

/// What one worker keeps between cases ([module docs](self)). Dropping it removes the kept
/// sandbox and its watches.
#[derive(Debug, Default)]
pub struct Lane {
    reset: Reset,
    kept: Option<Kept>,
}

/// The kept sandbox of a lane.
#[derive(Debug)]
struct Kept {
    sandbox: Sandbox,
    /// The folder it was made in (the target's scratch root, or the default temp folder).
    parent: PathBuf,
    /// The outside as the layout with no setup left it (shared with each case's observation).
    outside: std::sync::Arc<Tree>,
    /// The store as that layout left it (the root's node alone), for the debug assertion.
    store: Tree,
    /// The outside's files held open, to read again after a case.
    held: HeldFiles,
    /// The outside's watches, kept with the sandbox, and the decoys they watch (device and
    /// inode of each).
    watch: Option<(Session, Vec<(u64, u64)>)>,
    /// The outside files the store holds hard links to, planted by the last lease (paths as
    /// in `outside`): undoing it changes their link counts.
    linked: Vec<PathBuf>,
    /// The id of the case that gave it back last ([`Lane::give_back`]).
    last_case: Option<String>,
}

impl Kept {
    /// Whether each outside file of `paths` is a regular file with the template's mode bits.
    fn modes_as_template(&self, paths: &[PathBuf]) -> bool {
        paths.iter().all(|p| {
            self.outside.get(p).map(|(_, mode)| *mode)
                == self.sandbox.outside_file_mode_unchecked(p)
        })
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        if let Some((w, _)) = self.watch.take() {
            w.end();
        }
    }
}

/// A case's sandbox, from [`Lane::lease`], given back with [`Lane::give_back`].
#[derive(Debug)]
pub struct Lease {
    held: Held,
    /// The changes outside the kept watches saw since the last case's window closed, each with
    /// the case it came after ([`Lease::late`]).
    late: Vec<(Option<String>, Touch)>,
    /// The case that gave this lease's sandbox back last, `None` for a new layout
    /// ([`Lease::after_case`]).
    after: Option<String>,
}

/// What a [`Lease`] holds.
#[derive(Debug)]
enum Held {
    /// The lane's kept sandbox, undone and planted.
    Kept(Box<Kept>),
    /// A sandbox of the case's own, removed when the lease is dropped.
    Fresh(Sandbox),
}

impl Lease {
    /// The sandbox the case runs in.
    pub fn sandbox(&self) -> &Sandbox {
        match &self.held {
            Held::Kept(k) => &k.sandbox,
            Held::Fresh(s) => s,
        }
    }

    /// The kept sandbox, `None` for a fresh one.
    fn kept(&self) -> Option<&Kept> {
        match &self.held {
            Held::Kept(k) => Some(k),
            Held::Fresh(_) => None,
        }
    }

    /// The outside before the reset when it is known without a walk: the template of a kept
    /// sandbox (`None` for a fresh one, which the runner walks).
    pub fn known_outside(&self) -> Option<&Tree> {
        self.kept().map(|k| &*k.outside)
    }

    /// [`Lease::known_outside`], shared: the case's "before" is the template itself, not a
    /// copy.
    pub fn known_outside_shared(&self) -> Option<std::sync::Arc<Tree>> {
        self.kept().map(|k| k.outside.clone())
    }

    /// The kept sandbox's watches (the runner opens windows on them for the case; the lease
    /// made sure nothing changed the outside since the last case): `None` for a fresh sandbox
    /// (the runner starts a session of its own) or when they could not be had.
    pub fn watch(&self) -> Option<&Session> {
        self.kept().and_then(|k| k.watch.as_ref()).map(|(w, _)| w)
    }

    /// Whether the kept watches watch `decoys` (taken again after the reset, which may have
    /// restarted the handler with a new HOME); false for a fresh sandbox.
    pub fn watches_decoys(&self, decoys: &[(PathBuf, OwnedFd)]) -> bool {
        self.kept()
            .and_then(|k| k.watch.as_ref())
            .is_some_and(|(_, at)| *at == decoy_ids(decoys))
    }

    /// For a kept sandbox, whether every outside file still holds the template's bytes (read
    /// again through handles held since the layout: a write through a shared `mmap` shows,
    /// which the watches do not see). With watches that saw nothing that may change the
    /// outside, the outside is then the template, without a walk. False for a fresh sandbox,
    /// or when a file could not be held.
    ///
    /// Only the files the kept watches saw opened are read ([`Session::opened`]):
    /// without a handle, nothing can write to a file through a shared `mmap`, and every
    /// other write is an event the watches saw (the case is then not quiet and its outside is
    /// walked).
    pub fn files_unchanged(&self) -> bool {
        self.kept().is_some_and(|k| {
            k.held.complete
                && k.watch
                    .as_ref()
                    .is_some_and(|(w, _)| k.held.unchanged_where(|p| w.opened(p)))
        })
    }

    /// True when the sandbox is a kept one.
    pub fn is_kept(&self) -> bool {
        self.kept().is_some()
    }

    /// What the kept watches saw changed outside (created, written, renamed, deleted: no read,
    /// `attack::watch::Gap`) from the last case's window to this lease (the undo and the
    /// planting included), in the sandbox that case ran in, whether or not it is kept for this
    /// one, each with the id of the case it came after: a write after the last answer of the
    /// case that ran last in that sandbox, which was reported before it was seen (`None`: a
    /// change a new layout's watches saw before this case's reset). Empty for the first case of
    /// a lane and with `--reset fresh`.
    pub fn late(&self) -> &[(Option<String>, Touch)] {
        &self.late
    }

    /// The id of the case that ran last on this lease's sandbox (a kept one, undone), `None`
    /// when the sandbox is newly laid out (the first case of a lane, a fresh sandbox, or a
    /// new layout after a change outside): a change seen during this case's reset came after
    /// that case's last answer only when the sandbox is the one it ran in; the first reset of
    /// a sandbox is start-up. [`Lease::late`] names the case each of its changes came after.
    pub fn after_case(&self) -> Option<&str> {
        self.after.as_deref()
    }

    /// The outside files this lease's setup hard-linked into the store (paths relative to the
    /// run folder): the attribute changes of their link counts are memcert's own
    /// ([`Session::reopen_gap`]). Empty for a fresh sandbox.
    pub fn linked(&self) -> &[PathBuf] {
        self.kept().map_or(&[], |k| &k.linked)
    }
}

/// Device and inode of each decoy handle (what a kept session watches).
fn decoy_ids(decoys: &[(PathBuf, OwnedFd)]) -> Vec<(u64, u64)> {
    decoys
        .iter()
        .filter_map(|(_, fd)| rustix::fs::fstat(fd).ok())
        .map(|st| (st.st_dev, st.st_ino))
        .collect()
}

impl Lane {
    /// A lane that gets sandboxes as `reset` says.
    pub fn new(reset: Reset) -> Lane {
        Lane { reset, kept: None }
    }

    /// The sandbox for a case with `setup`, made in `parent` (`make` lays out a fresh one there
    /// with a given setup), watched with `decoys`: the kept sandbox undone and planted, or a
    /// fresh one ([module docs](self)).
    ///
    /// # Errors
    /// Laying out a fresh sandbox failed (`make`'s error), or planting `setup` failed.
    pub fn lease(
        &mut self,
        parent: &std::path::Path,
        setup: &[Fs],
        decoys: &[(PathBuf, OwnedFd)],
        make: impl Fn(&[Fs]) -> io::Result<Sandbox>,
    ) -> io::Result<Lease> {
        if self.reset == Reset::Fresh {
            self.kept = None;
            return Ok(Lease {
                held: Held::Fresh(make(setup)?),
                late: Vec::new(),
                after: None,
            });
        }
        let sources: Vec<&str> = setup
            .iter()
            .filter_map(|f| match f {
                Fs::HardLinkOutside { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        let ids = decoy_ids(decoys);
        // Kept only when nothing changed the outside since the last case's window closed (a
        // write after the last answer, memcert's undo unlinking a hard link the handler made)
        // and the decoys are the ones watched; else a new layout, with new watches. The undo
        // of the last case's own hard links changed their outside files' link counts alone.
        // What changed is read whether the sandbox is kept or not: it is charged to the case
        // leased now (`Lease::late`).
        let mut late = Vec::new();
        let mut after = None;
        let mut quiet = |k: &Kept| {
            let Some((w, at)) = k.watch.as_ref() else {
                return false;
            };
            let gap = w.reopen_gap(&k.linked);
            let quiet = *at == ids && matches!(&gap, Ok(g) if !g.changed);
            if let Ok(g) = gap {
                late = g
                    .changes
                    .into_iter()
                    .map(|t| (k.last_case.clone(), t))
                    .collect();
            }
            quiet && k.modes_as_template(&k.linked)
        };
        // `after` only for the sandbox the last case ran in: a new layout's first reset is
        // start-up, not a change after that case's last answer.
        let mut kept = match self.kept.take() {
            Some(k) if k.parent == parent => match undo(k) {
                Ok(k) if quiet(&k) => {
                    debug_assert_undone(&k);
                    after = k.last_case.clone();
                    k
                }
                _ => new_kept(parent, &make)?,
            },
            _ => new_kept(parent, &make)?,
        };
        // A sandbox of the case's own is new too.
        let leased = |held: Held, late| Lease {
            after: matches!(held, Held::Kept(_))
                .then(|| after.clone())
                .flatten(),
            held,
            late,
        };
        kept.linked.clear();
        let linked: Vec<PathBuf> = sources
            .iter()
            .map(|n| kept.sandbox.hard_link_source(n))
            .collect();
        // A hard link to a file the layout has not made would make a file outside the store
        // (which the template lacks and no watch sees): a sandbox of the case's own.
        if !linked
            .iter()
            .all(|p| matches!(kept.outside.get(p), Some((Node::File(_), _))))
        {
            self.kept = None;
            return Ok(leased(Held::Fresh(make(setup)?), late));
        }
        if kept.watch.is_none() {
            kept.watch = Session::start(&kept.sandbox, decoys).map(|w| (w, ids));
        }
        kept.sandbox.plant_all_unchecked(setup)?;
        if !linked.is_empty() {
            // memcert's own links changed the link counts of those outside files alone: read
            // what the watches saw of it, so the case's window opens on a quiet outside; any
            // other change, or a mode that is not the template's, and the case gets a
            // sandbox of its own.
            let gap = kept.watch.as_ref().map(|(w, _)| w.reopen_gap(&linked));
            let quiet = gap
                .as_ref()
                .is_none_or(|g| matches!(g, Ok(g) if !g.changed))
                && kept.modes_as_template(&linked);
            if let Some(Ok(g)) = gap {
                late.extend(g.changes.into_iter().map(|t| (after.clone(), t)));
            }
            if !quiet {
                self.kept = None;
                return Ok(leased(Held::Fresh(make(setup)?), late));
            }
            kept.linked = linked;
        }
        Ok(leased(Held::Kept(Box::new(kept)), late))
    }

    /// Take back a case's sandbox: a kept one stays when the case left the outside as the
    /// template has it (`outside_after`, the oracle's walk after the case) and `quiet`: its
    /// watch worked and saw nothing that may have changed the outside, in any window of the
    /// case ([`Session::close_window`]: a folder replaced by an equal copy would leave the
    /// watches on the old one). Anything else is removed. `case` is the id of the case that
    /// ran in it: the next lease names it ([`Lease::after_case`]).
    pub fn give_back(&mut self, lease: Lease, outside_after: &Tree, quiet: bool, case: &str) {
        if let Held::Kept(mut k) = lease.held {
            // The runner's "after" is the template itself when nothing changed.
            let same = std::ptr::eq(outside_after, &*k.outside) || *outside_after == *k.outside;
            if quiet && k.watch.is_some() && same {
                k.last_case = Some(case.to_owned());
                self.kept = Some(*k);
            }
        }
    }
}

/// A new kept sandbox in `parent`: laid out with no setup, its outside and store walked.
fn new_kept(
    parent: &std::path::Path,
    make: &impl Fn(&[Fs]) -> io::Result<Sandbox>,
) -> io::Result<Kept> {
    let sandbox = make(&[])?;
    let outside = sandbox.outside_unchecked();
    Ok(Kept {
        held: sandbox.hold_outside_files(&outside),
        outside: outside.into(),
        store: sandbox.store_tree_unchecked(),
        sandbox,
        parent: parent.to_path_buf(),
        watch: None,
        linked: Vec::new(),
        last_case: None,
    })
}

/// The kept sandbox put back as its layout left it: the store emptied (a kept sandbox has
/// always been leased, so its store holds the last case's files).
///
/// # Errors
/// Emptying the store failed.
fn undo(k: Kept) -> io::Result<Kept> {
    k.sandbox.clear_store_unchecked()?;
    Ok(k)
}

/// In debug builds, the whole undone sandbox walked and compared with the template: a
/// self-check of the undo, made only once the watches found the outside quiet since the last
/// window (a handler's write after its last answer is a change the lease handles, not a fault
/// of the undo).
fn debug_assert_undone(k: &Kept) {
    debug_assert_eq!(
        (
            k.sandbox.outside_unchecked(),
            k.sandbox.store_tree_unchecked()
        ),
        ((*k.outside).clone(), k.store.clone()),
        "the sandbox after undo is not the one a fresh layout gives"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::LinkTo;

    fn make(setup: &[Fs]) -> io::Result<Sandbox> {
        Sandbox::create_unchecked(setup)
    }

    fn parent() -> PathBuf {
        crate::attack::sandbox::default_parent().to_path_buf()
    }

    #[test]
    fn a_kept_sandbox_is_undone_to_a_fresh_layout_with_the_next_setup() {
        let mut lane = Lane::default();
        let setup = [
            Fs::File {
                path: "/memories/a/b.md".into(),
                content: "b\n".into(),
            },
            Fs::Symlink {
                path: "/memories/out".into(),
                target: LinkTo::Outside(String::new()),
            },
            Fs::Mode {
                path: "/memories/a".into(),
                mode: 0o000,
            },
        ];
        let lease = lane.lease(&parent(), &setup, &[], make).unwrap();
        assert!(lease.is_kept());
        let run = lease.sandbox().run_dir().to_path_buf();
        let before = lease.sandbox().outside_unchecked();
        assert_eq!(lease.known_outside(), Some(&before));
        // The handler adds a file; the outside is as it was.
        std::fs::write(lease.sandbox().root().join("new.md"), "x").unwrap();
        lane.give_back(lease, &before, true, "a");
        // The next case: the same run folder, only its own setup in the store.
        let next = [Fs::RootFifo];
        let lease = lane.lease(&parent(), &next, &[], make).unwrap();
        assert_eq!(lease.sandbox().run_dir(), run);
        let store = lease.sandbox().store_tree_unchecked();
        assert_eq!(store.len(), 1, "{store:?}");
        assert_eq!(
            store.get(&PathBuf::new()).map(|n| &n.0),
            Some(&crate::attack::sandbox::Node::Other)
        );
        let outside = lease.sandbox().outside_unchecked();
        lane.give_back(lease, &outside, true, "a");
        // And after a FIFO root, a plain empty store again.
        let lease = lane.lease(&parent(), &[], &[], make).unwrap();
        assert_eq!(lease.sandbox().run_dir(), run);
        assert_eq!(
            lease
                .sandbox()
                .store_tree_unchecked()
                .into_iter()
                .collect::<Vec<_>>(),
            vec![(PathBuf::new(), (crate::attack::sandbox::Node::Dir, 0o700))]
        );
        drop(lease);
    }

    /// A hard link to the layout's `hard-source.txt` is planted in the kept sandbox (its link
    /// and its undo are memcert's own); the next case gets the same sandbox, the link gone. A
    /// chmod of the outside file through the link shows in the mode check.
    #[test]
    fn a_hard_link_to_a_layout_file_is_planted_in_the_kept_sandbox() {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        let mut lane = Lane::default();
        let lease = lane.lease(&parent(), &[], &[], make).unwrap();
        let run = lease.sandbox().run_dir().to_path_buf();
        let outside = lease.sandbox().outside_unchecked();
        lane.give_back(lease, &outside, true, "a");
        let hard = [Fs::HardLinkOutside {
            path: "/memories/hard.txt".into(),
            name: "hard-source.txt".into(),
        }];
        let lease = lane.lease(&parent(), &hard, &[], make).unwrap();
        assert!(lease.is_kept());
        assert_eq!(lease.sandbox().run_dir(), run);
        let source = lease.sandbox().base().join("outside/hard-source.txt");
        assert_eq!(std::fs::metadata(&source).unwrap().nlink(), 2);
        // The window opens on a quiet outside: the link was memcert's.
        let w = lease.watch().unwrap();
        assert_eq!(w.reopen(), Ok(false));
        assert_eq!(lease.known_outside(), Some(&outside));
        let after = lease.sandbox().outside_unchecked();
        assert_eq!(after, outside);
        lane.give_back(lease, &after, true, "a");
        // The undo unlinks it: the same sandbox again.
        let lease = lane.lease(&parent(), &hard, &[], make).unwrap();
        assert!(lease.is_kept());
        assert_eq!(lease.sandbox().run_dir(), run);
        // The handler changes the outside file's mode through the link: an attribute change
        // of a linked file, which the watches forgive and the mode check does not.
        let link = lease.sandbox().root().join("hard.txt");
        let mode = std::fs::symlink_metadata(&link).unwrap().mode() & 0o777;
        let Held::Kept(k) = &lease.held else {
            panic!("a kept lease")
        };
        assert!(k.modes_as_template(&k.linked));
        std::fs::set_permissions(&link, std::fs::Permissions::from_mode(mode ^ 0o040)).unwrap();
        let (w, _) = k.watch.as_ref().unwrap();
        assert_eq!(w.reopen_gap(&k.linked).map(|g| g.changed), Ok(false));
        assert!(!k.modes_as_template(&k.linked));
        // Any other attribute change of it is a change.
        std::fs::set_permissions(&link, std::fs::Permissions::from_mode(mode)).unwrap();
        assert_eq!(w.reopen_gap(&[]).map(|g| g.changed), Ok(true));
        assert!(k.modes_as_template(&k.linked));
        drop(lease);
    }

    /// A write outside after the last case's window closed is handed to the next lease, with
    /// the case that ran before it; that lease gets a new sandbox, which follows no case, and
    /// the one after it nothing, following the case before it on the same sandbox.
    #[test]
    fn a_change_between_two_cases_goes_to_the_next_lease_with_the_case_before_it() {
        use crate::attack::watch::{Op, Touch};
        let mut lane = Lane::default();
        let lease = lane.lease(&parent(), &[], &[], make).unwrap();
        assert_eq!((lease.late(), lease.after_case()), (&[][..], None));
        let run = lease.sandbox().run_dir().to_path_buf();
        let outside = lease.sandbox().outside_unchecked();
        let w = lease.watch().unwrap();
        assert_eq!(w.reopen(), Ok(false));
        w.close_window().unwrap();
        let secret = lease.sandbox().base().join("outside/secret.txt");
        lane.give_back(lease, &outside, true, "view/file/one");
        // The handler's thread, after the answer.
        std::fs::write(&secret, "late\n").unwrap();
        let lease = lane.lease(&parent(), &[], &[], make).unwrap();
        // The change names the case it came after; the new layout follows no case (its first
        // reset is start-up).
        assert_eq!(
            (lease.late(), lease.after_case()),
            (
                &[(
                    Some("view/file/one".to_owned()),
                    Touch {
                        path: PathBuf::from("base/outside/secret.txt"),
                        ops: vec![Op::Written],
                        decoy: false,
                    }
                )][..],
                None
            )
        );
        assert_ne!(lease.sandbox().run_dir(), run, "a new layout");
        let outside = lease.sandbox().outside_unchecked();
        lane.give_back(lease, &outside, true, "view/file/two");
        let lease = lane.lease(&parent(), &[], &[], make).unwrap();
        assert_eq!(
            (lease.late(), lease.after_case()),
            (&[][..], Some("view/file/two"))
        );
    }

    #[test]
    fn a_changed_outside_a_failed_watch_fresh_mode_and_an_outside_plant_get_a_new_sandbox() {
        let mut lane = Lane::default();
        let lease = lane.lease(&parent(), &[], &[], make).unwrap();
        let first = lease.sandbox().run_dir().to_path_buf();
        std::fs::write(lease.sandbox().base().join("outside/new.txt"), "x").unwrap();
        let after = lease.sandbox().outside_unchecked();
        lane.give_back(lease, &after, true, "a");
        let lease = lane.lease(&parent(), &[], &[], make).unwrap();
        let second = lease.sandbox().run_dir().to_path_buf();
        assert_ne!(second, first);
        assert!(!first.exists(), "the changed sandbox is removed");
        let after = lease.sandbox().outside_unchecked();
        lane.give_back(lease, &after, false, "a");
        let lease = lane.lease(&parent(), &[], &[], make).unwrap();
        assert_ne!(lease.sandbox().run_dir(), second);
        let third = lease.sandbox().run_dir().to_path_buf();
        let after = lease.sandbox().outside_unchecked();
        lane.give_back(lease, &after, true, "a");
        let hard = [Fs::HardLinkOutside {
            path: "/memories/h.txt".into(),
            name: "other.txt".into(),
        }];
        let lease = lane.lease(&parent(), &hard, &[], make).unwrap();
        assert!(!lease.is_kept());
        assert!(!third.exists(), "a case of its own drops the kept sandbox");
        drop(lease);
        let mut fresh = Lane::new(Reset::Fresh);
        let lease = fresh.lease(&parent(), &[], &[], make).unwrap();
        assert!(!lease.is_kept());
    }
}
