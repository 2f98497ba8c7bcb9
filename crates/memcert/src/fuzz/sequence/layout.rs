//! The planted layout: the entries a [`Sequence`](super::Sequence) may plant ([`LAYOUT`]), the
//! model entry of each, and how the harness makes the store on disk hold them, from what the
//! last run left or from an empty store.
//!
//! Everything goes through the store root's handle: entries are planted and removed one name
//! at a time, no link followed.

use std::ffi::OsStr;
use std::io::{self, Write as _};
use std::path::Path;

use cap_fs_ext::{DirExt as _, FollowSymlinks, OpenOptionsFollowExt as _};
use cap_std::fs::{Dir, OpenOptions};

use super::grammar::BIG_TEXT;
use super::Harness;
use crate::handler::model::{Dir as ModelDir, Entry, Model};
use crate::text::Profile;

/// What a [`LAYOUT`] item plants.
#[derive(Clone, Copy, Debug)]
pub enum Plant {
    /// A directory.
    Dir(&'static str),
    /// A file with these bytes.
    File(&'static str, &'static [u8]),
    /// A symlink to the host path of this virtual path (an absolute link inside the store).
    LinkInside(&'static str, &'static str),
    /// A symlink to the host path of `outside/<rel>` (a canary area; `""` is the folder).
    LinkOutside(&'static str, &'static str),
    /// A symlink with this exact text (relative, dangling, a loop).
    LinkRaw(&'static str, &'static str),
    /// A FIFO.
    Fifo(&'static str),
    /// A hard link to the outside canary file `outside/<name>`.
    HardLinkOutside(&'static str, &'static str),
}

/// The entries a sequence may plant (bit `i` of
/// [`Sequence::layout`](super::Sequence::layout) plants item `i`); parents are created as
/// needed.
pub const LAYOUT: [Plant; 14] = [
    Plant::File("/memories/a.txt", b"alpha\nbeta\ngamma\n"),
    Plant::File("/memories/d/b.txt", b"beta\n"),
    Plant::LinkInside("/memories/in", "/memories/d"),
    Plant::LinkRaw("/memories/rel", "d/b.txt"),
    Plant::LinkOutside("/memories/out", ""),
    Plant::LinkRaw("/memories/d/up", "../../outside/canary.txt"),
    Plant::LinkRaw("/memories/dang", "nowhere/at/all"),
    Plant::Fifo("/memories/fifo"),
    Plant::HardLinkOutside("/memories/hard.txt", "hard-source.txt"),
    Plant::File("/memories/bin.dat", b"\xff\xfe\n"),
    Plant::File("/memories/.hidden", b"hidden\n"),
    Plant::File("/memories/node_modules/x.js", b"x\n"),
    Plant::LinkRaw("/memories/d/e/loop", "loop"),
    Plant::File("/memories/big.txt", BIG_TEXT.as_bytes()),
];

impl Harness {
    /// A fresh model in `profile` with the [`LAYOUT`] items of `layout` planted (bit `i` plants
    /// item `i`).
    ///
    /// # Errors
    /// The model refused an item (a harness fault).
    pub(super) fn planted_model(&self, layout: u32, profile: Profile) -> io::Result<Model> {
        let mut model = Model::new(profile, self.options, self.dir_sizes);
        for (i, item) in LAYOUT.iter().enumerate() {
            if layout & (1 << i) != 0 {
                let (path, entry) = self.entry_of(item);
                model
                    .plant(path, entry)
                    .map_err(|e| io::Error::other(e.to_string()))?;
            }
        }
        Ok(model)
    }
    /// Make the store hold `want`: from what the last run left (known from its walk), remove
    /// what differs and plant what is missing; when that is unknown or fails, clear the store
    /// and plant everything. Hard links are always planted anew (the walk sees a link count,
    /// not which inode it is).
    pub(super) fn reset_unchecked(&mut self, want: &ModelDir) -> io::Result<()> {
        let root = self.root.try_clone()?;
        if let Some(have) = self.last.take() {
            if self.sync(&root, want, &have).is_ok() {
                return Ok(());
            }
        }
        crate::scratch::empty(&root)?;
        self.sync(&root, want, &ModelDir::new())
    }

    /// Turn the folder `dir`, which holds `have`, into one holding `want`; by handle, links
    /// removed or planted, never followed.
    fn sync(&self, dir: &Dir, want: &ModelDir, have: &ModelDir) -> io::Result<()> {
        for (name, entry) in have {
            let keep = match (entry, want.get(name)) {
                (Entry::Dir(_), Some(Entry::Dir(_))) | (Entry::Special, Some(Entry::Special)) => {
                    true
                }
                (Entry::File(a), Some(Entry::File(b))) => a == b,
                (Entry::Symlink(a), Some(Entry::Symlink(b))) => a == b,
                _ => false,
            };
            if !keep {
                if matches!(entry, Entry::Dir(_)) {
                    // cap-std: no link followed, links met unlinked.
                    dir.remove_dir_all(name)?;
                } else {
                    dir.remove_file(name)?;
                }
            }
        }
        for (name, entry) in want {
            match (entry, have.get(name)) {
                (Entry::Dir(w), Some(Entry::Dir(h))) => {
                    self.sync(&dir.open_dir_nofollow(name)?, w, h)?
                }
                (Entry::Special, Some(Entry::Special)) => {}
                (Entry::File(a), Some(Entry::File(b))) if a == b => {}
                (Entry::Symlink(a), Some(Entry::Symlink(b))) if a == b => {}
                _ => self.plant(dir, name.as_ref(), entry)?,
            }
        }
        Ok(())
    }

    /// The virtual path and model entry of a layout item.
    fn entry_of(&self, item: &Plant) -> (&'static str, Entry) {
        let outside = self.sandbox.base().join("outside");
        match *item {
            Plant::Dir(p) => (p, Entry::Dir(ModelDir::new())),
            Plant::File(p, bytes) => (p, Entry::File(bytes.to_vec())),
            Plant::LinkInside(p, to) => (p, link_entry(&self.sandbox.host_unchecked(to))),
            Plant::LinkOutside(p, "") => (p, link_entry(&outside)),
            Plant::LinkOutside(p, rel) => (p, link_entry(&outside.join(rel))),
            Plant::LinkRaw(p, text) => (p, Entry::Symlink(text.into())),
            Plant::Fifo(p) => (p, Entry::Special),
            Plant::HardLinkOutside(p, name) => (
                p,
                Entry::HardLinked(self.hard_sources.get(name).cloned().unwrap_or_default()),
            ),
        }
    }

    /// Plant `entry` (a whole subtree for a directory) as `name` in `dir`, by handle.
    fn plant(&self, dir: &Dir, name: &OsStr, entry: &Entry) -> io::Result<()> {
        match entry {
            Entry::Dir(sub) => {
                dir.create_dir(name)?;
                let d = dir.open_dir_nofollow(name)?;
                for (n, e) in sub {
                    self.plant(&d, n.as_ref(), e)?;
                }
                Ok(())
            }
            Entry::File(bytes) => {
                let mut o = OpenOptions::new();
                o.write(true).create(true).truncate(true);
                o.follow(FollowSymlinks::No);
                dir.open_with(name, &o)?.write_all(bytes)
            }
            Entry::Sparse(len) => {
                // A new file given its length: no block written.
                let mut o = OpenOptions::new();
                o.write(true).create(true).truncate(true);
                o.follow(FollowSymlinks::No);
                dir.open_with(name, &o)?.set_len(*len)
            }
            Entry::Symlink(target) => dir.symlink_contents(target, name),
            Entry::Special => rustix::fs::mknodat(
                dir,
                name,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o600),
                0,
            )
            .map_err(io::Error::from),
            Entry::HardLinked(bytes) => {
                // The outside canary with these bytes (the layout plants one).
                let source = self
                    .hard_sources
                    .iter()
                    .find(|(_, b)| *b == bytes)
                    .map(|(n, _)| *n)
                    .ok_or_else(|| io::Error::other("no outside file holds these bytes"))?;
                self.outside_dir.hard_link(source, dir, name)
            }
        }
    }
}

fn link_entry(target: &Path) -> Entry {
    Entry::Symlink(target.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::super::{CommandSpec, PathSpec, PathToken, Sequence, TextSpec, MAX_COMMANDS};
    use super::*;

    /// A random sequence from a fixed-seed RNG, over the fixed names mostly.
    fn random_sequence(rng: &mut fastrand::Rng) -> Sequence {
        let path = |rng: &mut fastrand::Rng| PathSpec {
            rooted: true,
            tokens: (0..rng.usize(1..4))
                .map(|_| match rng.u8(..10) {
                    0 => PathToken::LongName(rng.u8(..)),
                    1 => PathToken::Slash,
                    _ => PathToken::Name(rng.u8(..)),
                })
                .collect(),
        };
        let commands = (0..rng.usize(1..=MAX_COMMANDS))
            .map(|_| {
                let text = TextSpec::Fixed(rng.u8(..));
                match rng.u8(..6) {
                    0 => CommandSpec::View {
                        path: path(rng),
                        range: None,
                    },
                    1 => CommandSpec::Create {
                        path: path(rng),
                        text,
                    },
                    2 => CommandSpec::StrReplace {
                        path: path(rng),
                        old: TextSpec::Fixed(rng.u8(..)),
                        new: text,
                    },
                    3 => CommandSpec::Insert {
                        path: path(rng),
                        line: rng.i8(-1..4),
                        text,
                    },
                    4 => CommandSpec::Delete { path: path(rng) },
                    _ => CommandSpec::Rename {
                        old: path(rng),
                        new: path(rng),
                    },
                }
            })
            .collect();
        Sequence {
            layout: u32::from(rng.u16(..)),
            profile: rng.u8(..3),
            commands,
        }
    }

    /// The reset from what the last run left gives exactly the store a reset from empty gives:
    /// after each run, reset to the next layout and walk the store.
    #[test]
    fn a_reset_from_the_last_store_plants_exactly_the_layout() {
        let mut h = Harness::new_unchecked().unwrap();
        let mut rng = fastrand::Rng::with_seed(0x7265_7365);
        for _ in 0..300 {
            let seq = random_sequence(&mut rng);
            let trial = h.run(&seq).unwrap();
            trial.check().unwrap();
            let next = random_sequence(&mut rng);
            let model = h.planted_model(next.layout, Profile::Docs).unwrap();
            h.reset_unchecked(model.root()).unwrap();
            let disk = h.walk_store().unwrap();
            assert_eq!(&disk, model.root(), "after {seq:?}");
            h.last = Some(disk);
        }
    }
}
