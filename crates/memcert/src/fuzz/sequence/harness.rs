//! The harness: a sequence run on the reference handler, over a real store, and on the model,
//! side by side, each command's two replies kept with the store and the outside as they ended
//! up ([`Trial`]).
//!
//! # Ambient authority
//! Makes the sandbox in a temp folder opened by host path (`_unchecked`); it is laid out, reset
//! and read through handles, and the reference handler only ever gets the store root's handle.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use super::layout::{Plant, LAYOUT};
use super::observe::{diff, walk_store, OutsideWatch};
use super::{CommandSpec, Exchange, Sequence, Trial, MAX_COMMANDS};
use crate::attack::sandbox::{Sandbox, Tree};
use crate::handler::model::{Dir as ModelDir, DirSizes, Model};
use crate::handler::reference::{Options, Reference};
use crate::handler::Handler;
use crate::text::Profile;

/// The harness's file size limit ([`Options::max_file_bytes`]), small so that sequences reach
/// [`crate::text::Outcome::FileTooLarge`].
pub const MAX_FILE_BYTES: u64 = 1024;

/// The store a run happens in: a [`Sandbox`] (canaries around the root) made once, its store
/// reset to each run's layout.
///
/// Nothing outside the store may change: the harness watches every folder and file around it
/// with inotify (one non-blocking read after a run: creations, deletions, renames, writes) and,
/// where inotify is missing, compares a full walk with the first one.
#[derive(Debug)]
pub struct Harness {
    pub(super) sandbox: Sandbox,
    pub(super) root: cap_std::fs::Dir,
    /// `base/outside/`, where the hard links' sources are.
    pub(super) outside_dir: cap_std::fs::Dir,
    pub(super) outside: Tree,
    pub(super) watch: Option<OutsideWatch>,
    pub(super) secrets: Vec<String>,
    pub(super) hard_sources: BTreeMap<&'static str, Vec<u8>>,
    /// The store as the last run's walk left it (`None`: unknown, clear it all).
    pub(super) last: Option<ModelDir>,
    pub(super) dir_sizes: DirSizes,
    pub(super) options: Options,
}

impl Harness {
    /// A harness on `/dev/shm` when it exists (tmpfs: fast, and the model's directory sizes are
    /// exact), in the default temp folder otherwise.
    ///
    /// # Ambient authority
    /// Creates the sandbox by host path.
    ///
    /// # Errors
    /// Any I/O error of laying it out.
    ///
    /// A fuzz process never drops its harness (libFuzzer ends with `exit`), so its sandbox
    /// stays behind; the folder is named after the process (`memcert-seq-<pid>-XXXXXX`), and a
    /// new harness first removes those of processes that are gone.
    pub fn new_unchecked() -> io::Result<Harness> {
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            crate::scratch::remove_stale(shm, STALE_PREFIX);
            if let Ok(h) = Harness::in_unchecked(shm) {
                return Ok(h);
            }
        }
        let tmp = std::env::temp_dir();
        crate::scratch::remove_stale(&tmp, STALE_PREFIX);
        Harness::in_unchecked(&tmp)
    }

    /// A harness with its sandbox in `parent`.
    ///
    /// # Ambient authority
    /// Creates the sandbox by host path.
    ///
    /// # Errors
    /// Any I/O error of laying it out.
    pub fn in_unchecked(parent: &Path) -> io::Result<Harness> {
        let prefix = format!("{STALE_PREFIX}{}-", std::process::id());
        let sandbox = Sandbox::create_in_unchecked(parent, &prefix, &[])?;
        let root = sandbox.root_dir()?;
        let outside_dir = cap_fs_ext::DirExt::open_dir_nofollow(sandbox.base_dir(), "outside")?;
        let mut hard_sources = BTreeMap::new();
        for item in LAYOUT {
            if let Plant::HardLinkOutside(_, name) = item {
                let bytes = outside_dir.read(name)?;
                hard_sources.insert(name, bytes);
            }
        }
        let outside = sandbox.outside_unchecked();
        let watch = OutsideWatch::new_unchecked(&sandbox, &outside).ok();
        let stat = rustix::fs::fstatfs(&root).map_err(io::Error::from)?;
        const TMPFS_MAGIC: i64 = 0x0102_1994;
        let dir_sizes = if stat.f_type as i64 == TMPFS_MAGIC {
            DirSizes::Tmpfs
        } else {
            DirSizes::Fixed(root.dir_metadata()?.len())
        };
        let mut secrets = sandbox.host_paths();
        secrets.push(sandbox.token().to_owned());
        Ok(Harness {
            sandbox,
            root,
            outside_dir,
            outside,
            watch,
            secrets,
            hard_sources,
            last: None,
            dir_sizes,
            options: Options {
                fsync: false,
                max_file_bytes: MAX_FILE_BYTES,
            },
        })
    }

    /// The sandbox (its token and host paths).
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// The directory-size rule the model is given.
    pub fn dir_sizes(&self) -> DirSizes {
        self.dir_sizes
    }

    /// Run `seq` on a fresh store and on a fresh model, and record what happened. Never
    /// panics on a handler's behaviour; see [`Trial::check`].
    ///
    /// Clears and plants the store through its handle, no link followed.
    ///
    /// # Errors
    /// An I/O error of clearing or planting the store (a harness fault).
    pub fn run(&mut self, seq: &Sequence) -> io::Result<Trial> {
        let profile = Profile::ALL[seq.profile as usize % Profile::ALL.len()];
        let mut model = self.planted_model(seq.layout, profile)?;
        self.reset_unchecked(model.root())?;
        let mut reference = Reference::new(self.root.try_clone()?, profile, self.options);
        let (exchanges, uncovered) = exchanges(&seq.commands, profile, &mut reference, &mut model);
        let disk = self.walk_store()?;
        self.last = Some(disk.clone());
        let outside_changes = self.outside_changes_unchecked();
        Ok(Trial {
            exchanges,
            disk,
            model: model.into_root(),
            outside_changes,
            secrets: self.secrets.clone(),
            uncovered,
        })
    }

    /// The store as it is now, walked by handle from its root.
    ///
    /// # Errors
    /// An I/O error of the walk.
    pub(super) fn walk_store(&self) -> io::Result<ModelDir> {
        let flags = rustix::fs::OFlags::RDONLY
            | rustix::fs::OFlags::DIRECTORY
            | rustix::fs::OFlags::CLOEXEC;
        let root = rustix::fs::openat(&self.root, ".", flags, rustix::fs::Mode::empty())?;
        walk_store(rustix::fs::Dir::new(root)?)
    }

    /// The changes outside the store since the harness was made, in words: none when inotify
    /// saw no event, else what a walk shows differs from the first one (or, when the walk shows
    /// nothing, that inotify saw a change).
    ///
    /// Walks the sandbox's run folder through its handles.
    fn outside_changes_unchecked(&self) -> Vec<String> {
        let changed = match &self.watch {
            Some(w) => w.changed(),
            None => true,
        };
        if !changed {
            return Vec::new();
        }
        let mut d = diff(&self.outside, &self.sandbox.outside_unchecked());
        if d.is_empty() && self.watch.is_some() {
            d.push("inotify saw a change outside the store".into());
        }
        d
    }
}

/// Send the first [`MAX_COMMANDS`] commands to the reference handler and to the model, each
/// pair of replies an [`Exchange`]; stop after a command the model does not cover, and say why
/// (the second value).
fn exchanges(
    commands: &[CommandSpec],
    profile: Profile,
    reference: &mut Reference,
    model: &mut Model,
) -> (Vec<Exchange>, Option<String>) {
    let mut exchanges = Vec::new();
    for spec in commands.iter().take(MAX_COMMANDS) {
        let input = spec.command().to_input();
        let reference_reply = reference.apply(&input);
        let outcome = model.outcome(&input);
        exchanges.push(Exchange {
            reference: reference_reply,
            model: crate::handler::reply(profile, &outcome),
            kind: outcome.kind(),
            input,
        });
        if let Some(why) = model.uncovered() {
            return (exchanges, Some(why.to_owned()));
        }
    }
    (exchanges, None)
}

/// Start of the harness's sandbox names: `memcert-seq-<pid>-XXXXXX`.
const STALE_PREFIX: &str = "memcert-seq-";
