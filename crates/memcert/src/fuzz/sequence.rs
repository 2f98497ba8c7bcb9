//! Command sequences run on the reference handler and on its in-memory model side by side: the
//! input type of the `command_sequence` fuzz target and of the model property tests, the store
//! they run in, and the checks.
//!
//! A [`Sequence`] picks which entries of a fixed [`LAYOUT`] are planted in a fresh store (files,
//! a directory, symlinks pointing inside, outside to the canary folder and nowhere, a FIFO, a
//! hard link to an outside canary, a file over the size limit) and lists up to [`MAX_COMMANDS`]
//! commands whose paths are spelled with [`PathToken`]s, a small alphabet of the traversal
//! grammar (style rule 15): the root, fixed names that collide with the planted ones, `.`,
//! `..`, percent-encoded dots and separators, backslash, look-alike dots and slashes, NUL, names
//! near the 255-byte limit, and an arbitrary raw string.
//!
//! [`Harness::run`] plants the layout in a [`Model`](crate::handler::model::Model) and makes the
//! store on disk hold the same (from what the last run left, known from its walk, or from an
//! empty store), sends every command to both and records a [`Trial`]; [`Trial::check`] then asserts, in order:
//! 1. no reply of the reference holds the canary token or a host path that the model's reply
//!    to the same command does not hold (the model knows neither, so those came from the
//!    inputs, e.g. a fuzzer that learnt the store's random name);
//! 2. every reply of the reference equals the model's (`is_error` and text);
//! 3. the store on disk (walked without following links) equals the model's tree, so no temp
//!    file is left behind and nothing was written through a link;
//! 4. nothing outside the store changed: inotify watches every folder and file around it
//!    (entries created, deleted or moved, files written); without inotify, a full walk is
//!    compared with the first one.
//!
//! Speed (the fuzz target's budget is about 2,000 inputs a second on one core): the sandbox is
//! made once per process; per input only what differs from the last run's store is removed and
//! planted; the outside is checked with one non-blocking inotify read, not a walk; the store is
//! walked once, by handle.
//!
//! The model is exact on tmpfs ([`DirSizes::Tmpfs`]), where the harness puts the store when
//! `/dev/shm` exists; elsewhere directories are assumed to keep the size of an empty one (true
//! for ext4 directories whose entries fit one block). A command the model does not cover
//! ([`Model::uncovered`](crate::handler::model::Model::uncovered)) ends the sequence after its
//! reply is compared, and the tree is then not compared.
//!
//! # Ambient authority
//! The harness lays out and inspects the sandbox by host path (`_unchecked`); the handler under
//! test only ever gets the store root.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use serde_json::Value;

use crate::attack::sandbox::{Node, Sandbox, Tree};
use crate::handler::model::{paths, Dir as ModelDir, DirSizes, Entry, Model};
use crate::handler::reference::{Options, Reference};
use crate::handler::Handler;
use crate::protocol::{Command, ToolResult};
use crate::text::{OutcomeKind, Profile};

/// Most commands of a sequence that are run; the rest are ignored.
pub const MAX_COMMANDS: usize = 16;

/// The harness's file size limit ([`Options::max_file_bytes`]), small so that sequences reach
/// [`crate::text::Outcome::FileTooLarge`].
pub const MAX_FILE_BYTES: u64 = 1024;

/// Fixed names a [`PathToken::Name`] picks from: the planted names (so commands meet the
/// links, the FIFO, the hard link) and a few new ones.
pub const NAMES: [&str; 18] = [
    "a.txt",
    "d",
    "b.txt",
    "in",
    "rel",
    "out",
    "up",
    "dang",
    "fifo",
    "hard.txt",
    "bin.dat",
    ".hidden",
    "node_modules",
    "e",
    "loop",
    "big.txt",
    "new",
    "canary.txt",
];

/// Percent-encoded pieces a [`PathToken::Encoded`] picks from.
pub const ENCODED: [&str; 8] = [
    "%2e",
    "%2e%2e",
    "%2f",
    "%5c",
    "%252e",
    "%c0%af",
    "%00",
    "%2E%2E%2F",
];

/// Unicode look-alikes of dots and separators a [`PathToken::Lookalike`] picks from.
pub const LOOKALIKES: [&str; 7] = [
    "\u{ff0e}",
    "\u{ff0e}\u{ff0e}",
    "\u{2024}",
    "\u{2025}",
    "\u{ff0f}",
    "\u{fe52}",
    "\u{ff3c}",
];

/// File texts a [`TextSpec::Fixed`] picks from: pieces of the planted files (so str_replace
/// finds them once or several times), newlines, non-ASCII, and one text over
/// [`MAX_FILE_BYTES`].
pub const TEXTS: [&str; 11] = [
    "",
    "alpha",
    "beta\n",
    "alpha\nbeta\ngamma\n",
    "\n",
    "a",
    "new text\n",
    "line\nline\nline\n",
    "caf\u{e9} \u{1f600}\n",
    "a\r\nb",
    BIG_TEXT,
];

const BIG_TEXT: &str = concat!(
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
);

/// One piece of a path; a path is its pieces concatenated.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathToken {
    /// `/memories`.
    Root,
    /// `/` (an empty component, or a trailing slash).
    Slash,
    /// `/` and a fixed name, [`NAMES`]`[n % len]`.
    Name(u8),
    /// `/.`.
    Dot,
    /// `/..`.
    DotDot,
    /// `\`.
    Backslash,
    /// NUL.
    Nul,
    /// [`ENCODED`]`[n % len]`, e.g. `%2e%2e`.
    Encoded(u8),
    /// [`LOOKALIKES`]`[n % len]`, e.g. U+FF0E.
    Lookalike(u8),
    /// `/` and a name of `250 + n % 8` bytes (the limit is 255).
    LongName(u8),
    /// This text, as is.
    Raw(String),
}

impl PathToken {
    fn push_to(&self, out: &mut String) {
        match self {
            PathToken::Root => out.push_str(crate::vpath::ROOT),
            PathToken::Slash => out.push('/'),
            PathToken::Name(n) => {
                out.push('/');
                out.push_str(NAMES[*n as usize % NAMES.len()]);
            }
            PathToken::Dot => out.push_str("/."),
            PathToken::DotDot => out.push_str("/.."),
            PathToken::Backslash => out.push('\\'),
            PathToken::Nul => out.push('\0'),
            PathToken::Encoded(n) => out.push_str(ENCODED[*n as usize % ENCODED.len()]),
            PathToken::Lookalike(n) => out.push_str(LOOKALIKES[*n as usize % LOOKALIKES.len()]),
            PathToken::LongName(n) => {
                out.push('/');
                out.extend(std::iter::repeat_n('L', 250 + *n as usize % 8));
            }
            PathToken::Raw(s) => out.push_str(s),
        }
    }
}

/// A path: `/memories` when `rooted`, then the tokens.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathSpec {
    /// Start with `/memories`.
    pub rooted: bool,
    /// The pieces after it.
    pub tokens: Vec<PathToken>,
}

impl PathSpec {
    /// The path string.
    pub fn render(&self) -> String {
        let mut s = String::new();
        if self.rooted {
            s.push_str(crate::vpath::ROOT);
        }
        for t in &self.tokens {
            t.push_to(&mut s);
        }
        s
    }
}

/// A file text, an old_str or a new_str.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextSpec {
    /// [`TEXTS`]`[n % len]`.
    Fixed(u8),
    /// This text.
    Raw(String),
}

impl TextSpec {
    /// The text.
    pub fn render(&self) -> String {
        match self {
            TextSpec::Fixed(n) => TEXTS[*n as usize % TEXTS.len()].to_owned(),
            TextSpec::Raw(s) => s.clone(),
        }
    }
}

/// One command of a sequence; numbers are small so ranges and insert lines hit the edges.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandSpec {
    /// view, with an optional `view_range`.
    View {
        /// Path.
        path: PathSpec,
        /// `[start, end]`.
        range: Option<(i8, i8)>,
    },
    /// create.
    Create {
        /// Path.
        path: PathSpec,
        /// `file_text`.
        text: TextSpec,
    },
    /// str_replace.
    StrReplace {
        /// Path.
        path: PathSpec,
        /// `old_str`.
        old: TextSpec,
        /// `new_str`.
        new: TextSpec,
    },
    /// insert.
    Insert {
        /// Path.
        path: PathSpec,
        /// `insert_line`.
        line: i8,
        /// `insert_text`.
        text: TextSpec,
    },
    /// delete.
    Delete {
        /// Path.
        path: PathSpec,
    },
    /// rename.
    Rename {
        /// `old_path`.
        old: PathSpec,
        /// `new_path`.
        new: PathSpec,
    },
}

impl CommandSpec {
    /// The typed command.
    pub fn command(&self) -> Command {
        match self {
            CommandSpec::View { path, range } => Command::View {
                path: path.render(),
                view_range: range.map(|(a, b)| [a.into(), b.into()]),
            },
            CommandSpec::Create { path, text } => Command::Create {
                path: path.render(),
                file_text: text.render(),
            },
            CommandSpec::StrReplace { path, old, new } => Command::StrReplace {
                path: path.render(),
                old_str: old.render(),
                new_str: new.render(),
            },
            CommandSpec::Insert { path, line, text } => Command::Insert {
                path: path.render(),
                insert_line: (*line).into(),
                insert_text: text.render(),
            },
            CommandSpec::Delete { path } => Command::Delete {
                path: path.render(),
            },
            CommandSpec::Rename { old, new } => Command::Rename {
                old_path: old.render(),
                new_path: new.render(),
            },
        }
    }
}

/// The input of one run: which [`LAYOUT`] items to plant, the profile, the commands.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sequence {
    /// Bit `i` plants [`LAYOUT`]`[i]`.
    pub layout: u16,
    /// [`Profile::ALL`]`[profile % 3]`.
    pub profile: u8,
    /// The commands; only the first [`MAX_COMMANDS`] are run.
    pub commands: Vec<CommandSpec>,
}

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

/// The entries a sequence may plant (bit `i` of [`Sequence::layout`] plants item `i`); parents
/// are created as needed.
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

/// One command as both sides answered it.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The `tool_use` input sent.
    pub input: Value,
    /// The reference handler's reply.
    pub reference: ToolResult,
    /// The model's reply.
    pub model: ToolResult,
    /// The kind of the model's outcome (for seed selection and statistics).
    pub kind: OutcomeKind,
}

/// What one run of a [`Sequence`] did.
#[derive(Clone, Debug)]
pub struct Trial {
    /// Every command sent, in order.
    pub exchanges: Vec<Exchange>,
    /// The store after the run, walked without following links, in the model's terms (a
    /// regular file with more than one link is [`Entry::HardLinked`], a FIFO, socket or device
    /// [`Entry::Special`]).
    pub disk: ModelDir,
    /// The model's tree after the run.
    pub model: ModelDir,
    /// Changes outside the store since the harness was made, in words.
    pub outside_changes: Vec<String>,
    /// Host path spellings and the canary token: no reply may hold one the model's does not.
    pub secrets: Vec<String>,
    /// Why the model stopped following the disk, if it did.
    pub uncovered: Option<String>,
}

impl Trial {
    /// Check 1: no reference reply holds a secret that the model's reply does not.
    ///
    /// # Errors
    /// The first leak, in words.
    pub fn check_no_leak(&self) -> Result<(), String> {
        for (i, x) in self.exchanges.iter().enumerate() {
            let (r, m) = (x.reference.text(), x.model.text());
            if let Some(s) = self
                .secrets
                .iter()
                .find(|s| r.contains(s.as_str()) && !m.contains(s.as_str()))
            {
                return Err(format!(
                    "command {}: the reference's reply holds {s:?} (host path or canary): {}\n{r}",
                    i + 1,
                    x.input
                ));
            }
        }
        Ok(())
    }

    /// Check 2: every reply of the reference equals the model's.
    ///
    /// # Errors
    /// The first difference, in words.
    pub fn check_replies(&self) -> Result<(), String> {
        for (i, x) in self.exchanges.iter().enumerate() {
            if x.reference != x.model {
                return Err(format!(
                    "command {}: {}\nreference (is_error {}):\n{}\nmodel (is_error {}):\n{}",
                    i + 1,
                    x.input,
                    x.reference.is_error,
                    x.reference.text(),
                    x.model.is_error,
                    x.model.text()
                ));
            }
        }
        Ok(())
    }

    /// Check 3: the store on disk equals the model's tree (skipped when the model stopped
    /// following the disk).
    ///
    /// # Errors
    /// The first path that differs, in words.
    pub fn check_tree(&self) -> Result<(), String> {
        if self.uncovered.is_some() || self.disk == self.model {
            return Ok(());
        }
        let (disk, model) = (paths(&self.disk), paths(&self.model));
        for p in disk.keys().chain(model.keys()) {
            let (d, m) = (disk.get(p), model.get(p));
            let same = match (d, m) {
                (Some(Entry::Dir(_)), Some(Entry::Dir(_))) => true,
                _ => d == m,
            };
            if !same {
                return Err(format!(
                    "the store differs from the model at {}: disk {d:?}, model {m:?}",
                    p.display()
                ));
            }
        }
        unreachable!("two different trees differ at some path")
    }

    /// Check 4: nothing outside the store changed.
    ///
    /// # Errors
    /// The changes, in words.
    pub fn check_outside(&self) -> Result<(), String> {
        if self.outside_changes.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "changed outside the store: {}",
                self.outside_changes.join("; ")
            ))
        }
    }

    /// All four checks, in order.
    ///
    /// # Errors
    /// The first failed check, in words.
    pub fn check(&self) -> Result<(), String> {
        self.check_no_leak()?;
        self.check_replies()?;
        self.check_tree()?;
        self.check_outside()
    }
}

/// The store a run happens in: a [`Sandbox`] (canaries around the root) made once, its store
/// reset to each run's layout.
///
/// Nothing outside the store may change: the harness watches every folder and file around it
/// with inotify (one non-blocking read after a run: creations, deletions, renames, writes) and,
/// where inotify is missing, compares a full walk with the first one.
#[derive(Debug)]
pub struct Harness {
    sandbox: Sandbox,
    root: cap_std::fs::Dir,
    outside: Tree,
    watch: Option<OutsideWatch>,
    secrets: Vec<String>,
    hard_sources: BTreeMap<&'static str, Vec<u8>>,
    /// The store as the last run's walk left it (`None`: unknown, clear it all).
    last: Option<ModelDir>,
    dir_sizes: DirSizes,
    options: Options,
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
            remove_stale_unchecked(shm, STALE_PREFIX);
            if let Ok(h) = Harness::in_unchecked(shm) {
                return Ok(h);
            }
        }
        let tmp = std::env::temp_dir();
        remove_stale_unchecked(&tmp, STALE_PREFIX);
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
        let root =
            cap_std::fs::Dir::open_ambient_dir(sandbox.root(), cap_std::ambient_authority())?;
        let mut hard_sources = BTreeMap::new();
        for item in LAYOUT {
            if let Plant::HardLinkOutside(_, name) = item {
                let bytes = std::fs::read(sandbox.base().join("outside").join(name))?;
                hard_sources.insert(name, bytes);
            }
        }
        let outside = sandbox.outside_unchecked();
        let watch = OutsideWatch::new_unchecked(&sandbox, &outside).ok();
        let stat = rustix::fs::statfs(sandbox.root()).map_err(io::Error::from)?;
        const TMPFS_MAGIC: i64 = 0x0102_1994;
        let dir_sizes = if stat.f_type as i64 == TMPFS_MAGIC {
            DirSizes::Tmpfs
        } else {
            DirSizes::Fixed(std::fs::symlink_metadata(sandbox.root())?.len())
        };
        let mut secrets = sandbox.host_paths();
        secrets.push(sandbox.token().to_owned());
        Ok(Harness {
            sandbox,
            root,
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
    /// # Ambient authority
    /// Clears and plants the store by host path.
    ///
    /// # Errors
    /// An I/O error of clearing or planting the store (a harness fault).
    pub fn run(&mut self, seq: &Sequence) -> io::Result<Trial> {
        let profile = Profile::ALL[seq.profile as usize % Profile::ALL.len()];
        let mut model = Model::new(profile, self.options, self.dir_sizes);
        for (i, item) in LAYOUT.iter().enumerate() {
            if seq.layout & (1 << i) != 0 {
                let (path, entry) = self.entry_of(item);
                model
                    .plant(path, entry)
                    .map_err(|e| io::Error::other(e.to_string()))?;
            }
        }
        self.reset_unchecked(model.root())?;
        let mut reference = Reference::new(self.root.try_clone()?, profile, self.options);
        let mut exchanges = Vec::new();
        let mut uncovered = None;
        for spec in seq.commands.iter().take(MAX_COMMANDS) {
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
                uncovered = Some(why.to_owned());
                break;
            }
        }
        let flags = rustix::fs::OFlags::RDONLY
            | rustix::fs::OFlags::DIRECTORY
            | rustix::fs::OFlags::CLOEXEC;
        let root = rustix::fs::openat(&self.root, ".", flags, rustix::fs::Mode::empty())?;
        let disk = walk_store(rustix::fs::Dir::new(root)?)?;
        self.last = Some(disk.clone());
        let changed = match &self.watch {
            Some(w) => w.changed(),
            None => true,
        };
        let outside_changes = if changed {
            let mut d = diff(&self.outside, &self.sandbox.outside_unchecked());
            if d.is_empty() && self.watch.is_some() {
                d.push("inotify saw a change outside the store".into());
            }
            d
        } else {
            Vec::new()
        };
        Ok(Trial {
            exchanges,
            disk,
            model: model.into_root(),
            outside_changes,
            secrets: self.secrets.clone(),
            uncovered,
        })
    }

    /// Make the store hold `want`: from what the last run left (known from its walk), remove
    /// what differs and plant what is missing; when that is unknown or fails, clear the store
    /// and plant everything. Hard links are always planted anew (the walk sees a link count,
    /// not which inode it is).
    fn reset_unchecked(&mut self, want: &ModelDir) -> io::Result<()> {
        let root = self.sandbox.root().to_path_buf();
        if let Some(have) = self.last.take() {
            if self.sync_unchecked(&root, want, &have).is_ok() {
                return Ok(());
            }
        }
        self.clear_store_unchecked()?;
        self.sync_unchecked(&root, want, &ModelDir::new())
    }

    /// Turn the folder `host`, which holds `have`, into one holding `want`.
    fn sync_unchecked(&self, host: &Path, want: &ModelDir, have: &ModelDir) -> io::Result<()> {
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
                let p = host.join(name);
                if matches!(entry, Entry::Dir(_)) {
                    std::fs::remove_dir_all(p)?;
                } else {
                    std::fs::remove_file(p)?;
                }
            }
        }
        for (name, entry) in want {
            let p = host.join(name);
            match (entry, have.get(name)) {
                (Entry::Dir(w), Some(Entry::Dir(h))) => self.sync_unchecked(&p, w, h)?,
                (Entry::Special, Some(Entry::Special)) => {}
                (Entry::File(a), Some(Entry::File(b))) if a == b => {}
                (Entry::Symlink(a), Some(Entry::Symlink(b))) if a == b => {}
                _ => self.plant_unchecked(&p, entry)?,
            }
        }
        Ok(())
    }

    /// Remove everything in the store root (links removed, never followed).
    fn clear_store_unchecked(&self) -> io::Result<()> {
        for entry in std::fs::read_dir(self.sandbox.root())? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                std::fs::remove_dir_all(entry.path())?;
            } else {
                std::fs::remove_file(entry.path())?;
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

    /// Plant `entry` (a whole subtree for a directory) at the host path `host`.
    fn plant_unchecked(&self, host: &Path, entry: &Entry) -> io::Result<()> {
        match entry {
            Entry::Dir(dir) => {
                std::fs::create_dir(host)?;
                for (name, e) in dir {
                    self.plant_unchecked(&host.join(name), e)?;
                }
                Ok(())
            }
            Entry::File(bytes) => std::fs::write(host, bytes),
            Entry::Symlink(target) => std::os::unix::fs::symlink(target, host),
            Entry::Special => rustix::fs::mknodat(
                rustix::fs::CWD,
                host,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o600),
                0,
            )
            .map_err(io::Error::from),
            Entry::HardLinked(bytes) => {
                // The outside canary with these bytes (the layout plants one).
                let name = self
                    .hard_sources
                    .iter()
                    .find(|(_, b)| *b == bytes)
                    .map(|(n, _)| *n)
                    .ok_or_else(|| io::Error::other("no outside file holds these bytes"))?;
                std::fs::hard_link(self.sandbox.base().join("outside").join(name), host)
            }
        }
    }
}

/// Start of the harness's sandbox names: `memcert-seq-<pid>-XXXXXX`.
const STALE_PREFIX: &str = "memcert-seq-";

/// Remove the folders `<prefix><pid>-XXXXXX` in `parent` left by fuzz processes that are gone
/// (libFuzzer exits without running destructors, so a per-process temp folder stays behind).
/// Best effort: a folder whose process still runs, or whose name does not parse, is left alone.
///
/// # Ambient authority
/// Lists `parent` and removes folders in it by host path (links in them are not followed).
pub(crate) fn remove_stale_unchecked(parent: &Path, prefix: &str) {
    // Without /proc no process can be known gone.
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(parent) else {
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
        if gone && pid != std::process::id() && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// inotify watches on every folder and file around the store: a change outside shows as an
/// event, read without blocking after each run.
#[derive(Debug)]
struct OutsideWatch {
    fd: std::os::fd::OwnedFd,
}

impl OutsideWatch {
    /// Watch every folder of `outside` (and the run folder) for entries created, deleted or
    /// moved, and every regular file for writes and deletion. Attribute changes are not
    /// watched: planting a hard link to an outside canary changes its link count every run.
    fn new_unchecked(sandbox: &Sandbox, outside: &Tree) -> io::Result<OutsideWatch> {
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
    fn changed(&self) -> bool {
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
fn walk_store(mut dir: rustix::fs::Dir) -> io::Result<ModelDir> {
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

fn link_entry(target: &Path) -> Entry {
    Entry::Symlink(target.to_string_lossy().into_owned())
}

/// What differs between two walks, in words (path and both sides).
fn diff(before: &Tree, after: &Tree) -> Vec<String> {
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

/// Decode a fuzz input into a [`Sequence`], as `cargo fuzz` decodes a typed target's input
/// (`arbitrary_take_rest`).
///
/// # Errors
/// `None` when the bytes do not decode (the input is skipped).
#[cfg(feature = "arbitrary")]
pub fn decode(data: &[u8]) -> Option<Sequence> {
    use arbitrary::Arbitrary;
    Sequence::arbitrary_take_rest(arbitrary::Unstructured::new(data)).ok()
}

/// Deterministic seed inputs for the `command_sequence` target, at most `count`: a small
/// coverage-guided search from a fixed-seed RNG (random byte strings, and mutations and
/// splices of the inputs kept so far), keeping an input when it reaches a (command, outcome)
/// pair or a pair of consecutive outcomes that no kept input reached. `tests/fuzz_regressions.rs`
/// has the ignored test that writes them to `fuzz/seeds/command_sequence/`.
///
/// # Ambient authority
/// Runs every candidate on `harness`.
#[cfg(feature = "arbitrary")]
pub fn seed_inputs(harness: &mut Harness, count: usize) -> Vec<Vec<u8>> {
    use std::collections::BTreeSet;
    let mut rng = fastrand::Rng::with_seed(0x5e9_c0de);
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut kept: Vec<Vec<u8>> = Vec::new();
    for _ in 0..40_000 {
        if kept.len() >= count {
            break;
        }
        let data = if kept.is_empty() || rng.u8(..4) == 0 {
            let len = rng.usize(16..400);
            // Small bytes dominate, so enum choices and lengths stay in range more often.
            (0..len)
                .map(|_| {
                    if rng.u8(..4) == 0 {
                        rng.u8(..)
                    } else {
                        rng.u8(..24)
                    }
                })
                .collect()
        } else {
            let mut d = kept[rng.usize(..kept.len())].clone();
            for _ in 0..rng.usize(1..8) {
                match rng.u8(..4) {
                    0 if !d.is_empty() => {
                        let i = rng.usize(..d.len());
                        d[i] = rng.u8(..);
                    }
                    1 => {
                        let i = rng.usize(..=d.len());
                        d.insert(i, rng.u8(..24));
                    }
                    2 if !d.is_empty() => {
                        let i = rng.usize(..d.len());
                        d.remove(i);
                    }
                    _ => {
                        let other = &kept[rng.usize(..kept.len())];
                        let at = rng.usize(..=d.len());
                        let from = rng.usize(..=other.len());
                        let to = (from + rng.usize(..64)).min(other.len());
                        d.splice(at..at, other[from..to].iter().copied());
                    }
                }
            }
            d.truncate(2048);
            d
        };
        let Some(seq) = decode(&data) else { continue };
        let Ok(trial) = harness.run(&seq) else {
            continue;
        };
        let mut new = false;
        let mut previous = "start";
        for x in &trial.exchanges {
            let command = x.input["command"].as_str().unwrap_or("?");
            let kind = x.kind.key();
            new |= seen.insert(format!("{command} {kind}"));
            new |= seen.insert(format!("{previous} then {kind}"));
            previous = kind;
        }
        if new {
            kept.push(data);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
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
            layout: rng.u16(..),
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
            let mut model = Model::new(Profile::Docs, h.options, h.dir_sizes);
            for (i, item) in LAYOUT.iter().enumerate() {
                if next.layout & (1 << i) != 0 {
                    let (path, entry) = h.entry_of(item);
                    model.plant(path, entry).unwrap();
                }
            }
            h.reset_unchecked(model.root()).unwrap();
            let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY;
            let root = rustix::fs::openat(&h.root, ".", flags, rustix::fs::Mode::empty()).unwrap();
            let disk = walk_store(rustix::fs::Dir::new(root).unwrap()).unwrap();
            assert_eq!(&disk, model.root(), "after {seq:?}");
            h.last = Some(disk);
        }
    }
}
