//! A [`Sequence`] turned into a catalog [`Case`] whose expectations come from the model
//! ([`Model`]): each step accepts the model's outcome (PASS; other words NON-STRICT, as
//! `certify` grades them), and the other branches a careful handler may take (NON-STRICT, each
//! tagged with the [`Branch`] the model then follows); the store is checked at the end against
//! the model's tree.
//!
//! # Branches
//! The model follows the branch a handler took, so that one accepted difference does not turn
//! every later command into a false finding. The runner learns the branches from the replies
//! ([`super::judge`]) and plans again:
//! - [`Branch::Model`]: the documented outcome (the reference's).
//! - [`Branch::Overwrite`]: `create` of an existing file overwrote it (the doc leaves
//!   overwriting to the handler); the model overwrites too.
//! - [`Branch::Refused`]: a command the model would run was refused, on a name the doc does not
//!   promise to take (a name with characters outside `A-Za-z0-9._-`, or over 200 bytes) or on a
//!   planted link, FIFO or hard link (deleting a link is not promised either); the model leaves
//!   its tree as it was.
//! - [`Branch::Unknown`]: a spelling the model refuses was taken as a name (a trailing slash,
//!   `.`, a look-alike, a link inside the store followed), or a name that differs from one
//!   already there only by case was refused (a store whose keys ignore case). The model cannot say what the
//!   handler then holds: the plan ends after that step and checks nothing on disk (the outside
//!   is still watched and every reply still read for canaries).
//!
//! # Black-box mode
//! No store on disk can be checked: after every [`CHECKPOINT_EVERY`] commands the model still
//! follows, and at the end, a checkpoint views what it holds (at most
//! [`CHECKPOINT_VIEWS`] views, folders first). The views are steps of no command
//! ([`Plan::commands`]); branches are per command. What they cannot see: a wrong state put right
//! before the next checkpoint, what is over the cap, a file under a name outside
//! `A-Za-z0-9._-` or a folder whose listing shows one, a folder a refused command may have
//! left and the folders above it (every folder, once a refused create or rename made a path the
//! model refuses: a NUL, `..`, a host path).

use serde_json::{json, Value};

use crate::fuzz::sequence::{CommandSpec, Plant, Sequence, LAYOUT};
use crate::handler::model::{DirSizes, Entry, Model};
use crate::handler::reference::Options;
use crate::suite::verdict::Verdict;
use crate::suite::{Accept, Case, Check, Expected, Fs, Level, LinkTo, Reply, Step};
use crate::text::{Outcome, OutcomeKind, Profile};
use crate::vpath::VPath;

/// Which outcome the model follows at a step. See the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Branch {
    /// The documented outcome.
    Model,
    /// `create` overwrote an existing file.
    Overwrite,
    /// A command on an unusual name was refused.
    Refused,
    /// A spelling the model refuses was taken; the model stops.
    Unknown,
}

impl Branch {
    /// Its name in reports and coverage.
    pub fn name(self) -> &'static str {
        match self {
            Branch::Model => "model",
            Branch::Overwrite => "overwrite",
            Branch::Refused => "refused",
            Branch::Unknown => "unknown",
        }
    }
}

/// One step's accepted alternatives to the model's outcome, with the branch each stands for.
#[derive(Clone, Debug)]
pub struct StepPlan {
    /// The model's outcome for the step, on the branches taken before it.
    pub outcome: Outcome,
    /// The other acceptable replies (in the case's `accept` after the first) and their
    /// branches.
    pub others: Vec<(Reply, Branch)>,
}

/// A sequence planned on given branches: the case to run and what each step accepts.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The case (id `fuzz/<n>`): setup from the layout, one step per command (and, in
    /// black-box mode, the checkpoint views between them and at the end), checks.
    pub case: Case,
    /// Per step of the case.
    pub steps: Vec<StepPlan>,
    /// Per step of the case, the index in [`Sequence::commands`] of the command it sends;
    /// `None` for a view the plan adds (black-box mode's checkpoints, [`CHECKPOINT_EVERY`]).
    /// Branches are given and learnt per command, never per step.
    pub commands: Vec<Option<usize>>,
}

impl Plan {
    /// How many of the sequence's commands the case sends (the plan may end early; the views
    /// it adds are not counted).
    pub fn commands_sent(&self) -> usize {
        self.commands.iter().flatten().count()
    }

    /// The branch step `step` of the case was planned on, when planned on `branches` (per
    /// command, missing ones [`Branch::Model`]): the command's, or [`Branch::Model`] for an
    /// added view and a step the case does not have.
    pub fn branch_of(&self, step: usize, branches: &[Branch]) -> Branch {
        self.commands
            .get(step)
            .copied()
            .flatten()
            .and_then(|c| branches.get(c).copied())
            .unwrap_or(Branch::Model)
    }
}

/// The JSON input of a command, as the model sends it (no `null` fields).
pub fn input_of(c: &CommandSpec) -> Value {
    let mut v = serde_json::to_value(c.command()).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.retain(|_, x| !x.is_null());
    }
    v
}

/// The setup entry and model entry of a layout item (link targets are the certify sandbox's
/// forms; the model never reads them).
fn planted(item: &Plant) -> (Fs, &'static str, Entry) {
    match *item {
        Plant::Dir(p) => (
            Fs::Dir { path: p.into() },
            p,
            Entry::Dir(Default::default()),
        ),
        Plant::File(p, bytes) => (
            Fs::File {
                path: p.into(),
                content: bytes.to_vec(),
            },
            p,
            Entry::File(bytes.to_vec()),
        ),
        Plant::LinkInside(p, to) => (link(p, LinkTo::Inside(to.into())), p, symlink(to)),
        Plant::LinkOutside(p, rel) => (
            link(p, LinkTo::Outside(rel.into())),
            p,
            symlink(&format!("outside/{rel}")),
        ),
        Plant::LinkRaw(p, text) => (link(p, LinkTo::Raw(text.into())), p, symlink(text)),
        Plant::Fifo(p) => (Fs::Fifo { path: p.into() }, p, Entry::Special),
        Plant::HardLinkOutside(p, name) => (
            Fs::HardLinkOutside {
                path: p.into(),
                name: name.into(),
            },
            p,
            Entry::HardLinked(name.as_bytes().to_vec()),
        ),
    }
}

/// [`Sequence::layout`] bit of a character device 1:5 (a `/dev/zero`, reads never end) at
/// [`DEVICE_PATH`] (bug:B17). Planted by the search's plans beyond [`LAYOUT`] (so by
/// `memcert fuzz` and [`crate::fuzz::differential`], not by the `command_sequence` harness),
/// and only where [`devices_plantable`] says a planted device can be opened.
pub const DEVICE_BIT: usize = 14;
/// Where [`DEVICE_BIT`] plants the device.
pub const DEVICE_PATH: &str = "/memories/zero";
/// [`Sequence::layout`] bit of a link to the outside folder under a decomposed (NFD) name,
/// [`NFD_LINK_PATH`]: a handler that checks the NFC form `café` (absent, so no link on its
/// way) and opens the raw one follows the link unseen (bug:B24). No NFC folder is planted
/// beside it: two names one normalisation merges would make every command on either a lossy
/// twin ([`twin_of`]). Beyond [`LAYOUT`], as [`DEVICE_BIT`].
pub const NFD_LINK_BIT: usize = 15;
/// Where [`NFD_LINK_BIT`] plants the link: `cafe` and U+0301.
pub const NFD_LINK_PATH: &str = "/memories/cafe\u{301}";

/// [`Sequence::layout`] bit of a sparse file of [`HUGE_BYTES`] (64 MiB, all zero, no block
/// written) at [`HUGE_PATH`], four times the 16 MiB a handler may read for one call: the
/// reference refuses to read or edit it, by its size, before reading (`FileTooLarge`), and a
/// handler that reads it whole is FAIL `unbounded-read` (bug:B17), judged by the oracle from the
/// runner's read measure as `certify`'s `hazard/huge-file/*` cases are. The model holds it as
/// [`Entry::Sparse`] (its length alone). Beyond [`LAYOUT`], as [`DEVICE_BIT`]; planted on disk
/// only, so never in black-box mode.
pub const HUGE_BIT: usize = 16;
/// Where [`HUGE_BIT`] plants the huge file: `certify`'s `/memories/huge.md`.
pub const HUGE_PATH: &str = memcert_cases::scenarios::HUGE_FILE;
/// Its length in bytes: 64 MiB.
pub const HUGE_BYTES: u64 = memcert_cases::scenarios::HUGE_FILE_BYTES;

/// The layout bits beyond [`LAYOUT`] that the search plants: [`DEVICE_BIT`], [`NFD_LINK_BIT`],
/// [`HUGE_BIT`].
pub const EXTRA_BITS: [usize; 3] = [DEVICE_BIT, NFD_LINK_BIT, HUGE_BIT];

/// The setup and model entries of an extra layout bit ([`EXTRA_BITS`]); none for any other
/// bit, or for the device where none can be planted.
fn extra(bit: usize) -> Vec<(Fs, &'static str, Entry)> {
    match bit {
        HUGE_BIT => vec![(
            Fs::Sparse {
                path: HUGE_PATH.into(),
                len: HUGE_BYTES,
            },
            HUGE_PATH,
            Entry::Sparse(HUGE_BYTES),
        )],
        DEVICE_BIT if devices_plantable() => {
            let (major, minor) = memcert_cases::scenarios::CHAR_DEVICE_NUMBER;
            vec![(
                Fs::CharDevice {
                    path: DEVICE_PATH.into(),
                    major,
                    minor,
                },
                DEVICE_PATH,
                Entry::Special,
            )]
        }
        NFD_LINK_BIT => vec![planted(&Plant::LinkOutside(NFD_LINK_PATH, ""))],
        _ => Vec::new(),
    }
}

/// Whether this process can plant a character device that opens as one, checked once: a
/// `mknod` of 1:5 in a fresh folder (made and removed by handle) in the folder sandboxes are
/// made in by default ([`crate::attack::sandbox::default_parent`]: `$TMPDIR`, else `/dev/shm`
/// when roomy), on a filesystem not mounted `nodev`. Without `CAP_MKNOD` (not root), or on a
/// `nodev` mount, the search never plants [`DEVICE_BIT`], as `certify` SKIPs its device cases;
/// a case that is SKIPPED anyway (a handler's own scratch folder elsewhere) is run again
/// without the device ([`super::Fuzzer`]).
pub fn devices_plantable() -> bool {
    static CAN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CAN.get_or_init(|| {
        let parent = crate::attack::sandbox::default_parent();
        let Ok(tmp) = crate::scratch::Scratch::new_in(parent, "memcert-device-probe-") else {
            return false;
        };
        let nodev = rustix::fs::statvfs(tmp.path()).map_or(true, |s| {
            s.f_flag.contains(rustix::fs::StatVfsMountFlags::NODEV)
        });
        let (major, minor) = memcert_cases::scenarios::CHAR_DEVICE_NUMBER;
        let made = rustix::fs::mknodat(
            tmp.dir(),
            "zero",
            rustix::fs::FileType::CharacterDevice,
            rustix::fs::Mode::from_raw_mode(0o600),
            rustix::fs::makedev(major, minor),
        )
        .is_ok();
        let _ = tmp.remove();
        !nodev && made
    })
}

fn link(path: &str, target: LinkTo) -> Fs {
    Fs::Symlink {
        path: path.into(),
        target,
    }
}

fn symlink(text: &str) -> Entry {
    Entry::Symlink(text.into())
}

/// Whether every name of `path` is one the doc clearly lets a handler take: ASCII letters,
/// digits, `.`, `_`, `-`, at most 200 bytes, not dots alone (`.`, `..`, `...`: a handler may
/// strip or refuse them). A refusal of anything else is an accepted branch.
///
/// Read straight from the text, with no [`VPath::parse`]: every path whose names are of that
/// set parses (no control, `%`, `\\` or non-ASCII character, no empty or dots-only name, names
/// under [`crate::vpath::MAX_NAME_BYTES`]) unless it is longer than
/// [`crate::vpath::MAX_PATH_BYTES`] or not under `/memories` (test
/// `plain_reads_the_text_as_the_parser_would`).
fn plain(path: &str) -> bool {
    if path.len() > crate::vpath::MAX_PATH_BYTES {
        return false;
    }
    let Some(rest) = path.strip_prefix(crate::vpath::ROOT) else {
        return false;
    };
    if rest.is_empty() || rest == "/" {
        return true;
    }
    let Some(body) = rest.strip_prefix('/') else {
        return false;
    };
    let body = body.strip_suffix('/').unwrap_or(body);
    body.split('/').all(|n| {
        !n.is_empty()
            && n.len() <= 200
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
            && !n.bytes().all(|b| b == b'.')
    })
}

/// Whether `path` is spelled as its canonical form (no trailing `/`, no `.`, no `..`): a
/// refusal of a spelling that is not may be answered by a handler that takes it.
fn canonical_spelling(path: &str) -> bool {
    VPath::parse(path).is_ok_and(|p| p.canonical() == path)
}

/// Whether `path` is a spelling of the store root (`/memories/.`, `/memories//`,
/// `/memories/a/..`), resolved lexically as listings are ([`crate::baseline::entry_key`]).
fn names_root(path: &str) -> bool {
    crate::baseline::entry_key(path).as_deref() == Some(crate::vpath::ROOT)
}

/// Folders a refused command may have left: the prefixes of `parts` of `from` to `to` names
/// (`1 <= from <= to <= parts.len()`), each a folder the model lacks. One path's missing
/// parents are always such a run (once a prefix is missing, every longer one is), so a path of
/// a thousand names is one entry, not a thousand copies of its prefixes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Left {
    parts: Vec<String>,
    from: usize,
    to: usize,
}

impl Left {
    /// Whether `folder` (its names) is one of the folders left.
    fn contains(&self, folder: &[String]) -> bool {
        (self.from..=self.to).contains(&folder.len()) && self.parts[..folder.len()] == *folder
    }

    /// Whether the path whose names are `parts` is, is under, or is above one of the folders
    /// left: it agrees with the shortest one on their common length (every longer one then
    /// agrees on a longer length only when this one does).
    fn meets(&self, parts: &[String]) -> bool {
        let n = self.from.min(parts.len());
        self.parts[..n] == parts[..n]
    }
}

/// The parent folders of a create's `path` or a rename's `new_path` that `model` lacks: what a
/// handler that makes the parents before it refuses may leave (`None` when it lacks none).
fn missing_parents(model: &Model, input: &Value) -> Option<Left> {
    let target = match input.get("command").and_then(Value::as_str) {
        Some("create") => input.get("path"),
        Some("rename") => input.get("new_path"),
        _ => None,
    };
    let text = target.and_then(Value::as_str)?;
    // The folders among the path's names: all but the last, or, for a path the model refuses
    // (a NUL, a `.` or `..`), its plain leading names, which a handler that makes the parents
    // first may have made; each is a folder when a `.`, `..` or empty name follows it
    // (`/memories/new/.` leaves `/memories/new`), and so is the last name of a path with a
    // trailing slash (`/memories/new/` leaves it: its parent, to the SDKs' `dirname`).
    let (parts, folders): (Vec<String>, usize) = match VPath::parse(text) {
        Ok(p) => {
            let parts = p.components().to_vec();
            let n = if p.has_trailing_slash() {
                parts.len()
            } else {
                parts.len().saturating_sub(1)
            };
            (parts, n)
        }
        Err(_) => {
            let names: Vec<&str> = text
                .strip_prefix("/memories/")
                .unwrap_or("")
                .split('/')
                .collect();
            let plain = names
                .iter()
                .take_while(|n| !n.is_empty() && **n != "." && **n != "..")
                .count();
            let parts: Vec<String> = names[..plain].iter().map(|n| (*n).to_owned()).collect();
            let n = if plain < names.len() {
                plain
            } else {
                plain.saturating_sub(1)
            };
            (parts, n)
        }
    };
    // The first missing prefix: every longer one is missing too (its parent is not a folder of
    // the model).
    let from = missing_from(model, &parts[..folders])?;
    Some(Left {
        parts,
        from,
        to: folders,
    })
}

/// The length of the shortest prefix of `parts` the model holds no entry at ([`entry_at`]),
/// `None` when it holds one at every prefix (of at least one name).
fn missing_from(model: &Model, parts: &[String]) -> Option<usize> {
    let mut dir = Some(model.root());
    for (i, name) in parts.iter().enumerate() {
        match dir.and_then(|d| d.get(name)) {
            None => return Some(i + 1),
            Some(Entry::Dir(d)) => dir = Some(d),
            // An entry that is not a folder: the prefix is there, the longer ones are not.
            Some(_) => dir = None,
        }
    }
    None
}

/// The model's entry at the virtual path whose names are `parts` (`[]` is the root, which
/// has none); links are never followed, as the model never follows them.
fn entry_at<'m>(model: &'m Model, parts: &[String]) -> Option<&'m Entry> {
    let (leaf, parents) = parts.split_last()?;
    let mut dir = model.root();
    for name in parents {
        match dir.get(name)? {
            Entry::Dir(d) => dir = d,
            _ => return None,
        }
    }
    dir.get(leaf)
}

/// A name as a lossy store key may keep it: NFKC, lower case, trailing spaces dropped, and
/// `.`, `-` and space as `_` (the twins of [`super::generate::TWINS`]: case, NFC/NFD, full
/// width, a trailing space, a slug).
fn fold(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    let slug = |c: char| if ".- ".contains(c) { '_' } else { c };
    if name.is_ascii() {
        // NFKC leaves ASCII as it is: one pass, one allocation.
        return name
            .trim_end_matches(' ')
            .chars()
            .map(|c| slug(c.to_ascii_lowercase()))
            .collect();
    }
    name.nfkc()
        .collect::<String>()
        .to_lowercase()
        .trim_end_matches(' ')
        .chars()
        .map(slug)
        .collect()
}

/// The first name of `path` absent from `model`, with the other names its folder holds that
/// fold ([`fold`]) to the same key: its lossy twins. `None` when every name is there, or the
/// path is not valid or runs through a file.
fn absent_twins<'m>(model: &'m Model, path: &str) -> Option<(String, Vec<&'m str>)> {
    let v = VPath::parse(path).ok()?;
    let mut dir = model.root();
    for name in v.components() {
        match dir.get(name.as_str()) {
            Some(Entry::Dir(d)) => dir = d,
            Some(_) => return None,
            None => {
                let key = fold(name);
                let twins = dir
                    .keys()
                    .filter(|k| *k != name && fold(k) == key)
                    .map(String::as_str)
                    .collect();
                return Some((name.clone(), twins));
            }
        }
    }
    None
}

/// Whether `path` names something absent from `model` that has a lossy twin
/// ([`absent_twins`]): a store whose keys are lossy may take the one for the other
/// (`certify`'s `alias/*` cases accept a refusal, and grade reading one through the other
/// NON-STRICT).
fn twin_of(model: &Model, path: &str) -> bool {
    absent_twins(model, path).is_some_and(|(_, twins)| !twins.is_empty())
}

/// Whether the first absent name of `path` and all its lossy twins are plain ([`plain`]):
/// names within `A-Za-z0-9._-` that differ by case or by `.`/`-`/`_` are distinct names on any
/// store the doc describes, so a file left under one is a finding.
fn plain_twins(model: &Model, path: &str) -> bool {
    let plain_name = |n: &str| plain(&format!("/memories/{n}"));
    absent_twins(model, path)
        .is_some_and(|(name, twins)| plain_name(&name) && twins.into_iter().all(plain_name))
}

/// The path a create makes (a rename's `new_path`), and the paths a command reads or changes
/// (`path`, `old_path`), of `input`.
fn made_and_named(input: &Value) -> (Option<&str>, Vec<&str>) {
    let get = |k: &str| input.get(k).and_then(Value::as_str);
    match input.get("command").and_then(Value::as_str) {
        Some("create") => (get("path"), Vec::new()),
        Some("rename") => (get("new_path"), get("old_path").into_iter().collect()),
        _ => (None, get("path").into_iter().collect()),
    }
}

/// How a command meets a lossy twin ([`twin_of`]): it makes a name whose twin is there, or it
/// names an absent path whose twin is there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Twin {
    /// The name it makes has a twin.
    makes: bool,
    /// A name it reads or changes is absent but has a twin.
    names: bool,
}

fn twin(model: &Model, input: &Value) -> Twin {
    let (made, named) = made_and_named(input);
    Twin {
        makes: made.is_some_and(|p| twin_of(model, p)),
        names: named.into_iter().any(|p| twin_of(model, p)),
    }
}

/// Whether a path `input` names is, is under, or is above a folder in `maybe`.
fn meets_maybe(input: &Value, maybe: &[Left]) -> bool {
    paths(input).iter().any(|p| {
        match VPath::parse(p) {
            Ok(v) => maybe.iter().any(|m| m.meets(v.components())),
            // A spelling the model refuses may still reach a leftover through a handler.
            Err(_) => !maybe.is_empty(),
        }
    })
}

/// The bytes of the file at a command's `path` in `model`, if there is one.
fn file_at<'m>(model: &'m Model, input: &Value) -> Option<&'m [u8]> {
    let p = VPath::parse(input.get("path")?.as_str()?).ok()?;
    match entry_at(model, p.components())? {
        Entry::File(b) => Some(b),
        _ => None,
    }
}

/// In black-box mode, after every this many commands the model still follows (and when it
/// still follows at the end), the plan sends a checkpoint: a `view` of each folder and plain
/// file the model holds, at most [`CHECKPOINT_VIEWS`] ([`plan`]). No checkpoint follows the last
/// command but the end's.
pub const CHECKPOINT_EVERY: usize = 4;

/// Most views one black-box checkpoint sends ([`CHECKPOINT_EVERY`]): the folders first (the
/// root first, then by depth, then by name: a listing shows two levels), then the files (in
/// name order, depth first); what is over the cap is not viewed at that checkpoint.
pub const CHECKPOINT_VIEWS: usize = 8;

/// The virtual paths of the regular files under `dir` (at `at`), in name order, depth first.
fn files_of(dir: &crate::handler::model::Dir, at: &str, out: &mut Vec<String>) {
    for (name, e) in dir {
        let path = format!("{at}/{name}");
        match e {
            Entry::File(_) => out.push(path),
            Entry::Dir(d) => files_of(d, &path, out),
            _ => {}
        }
    }
}

/// The virtual paths of the folders of `root` (the root `/memories` included), the root first,
/// then by depth, then in name order, with their names.
fn folders_of(root: &crate::handler::model::Dir) -> Vec<(String, Vec<String>)> {
    let mut out = vec![(crate::vpath::ROOT.to_owned(), Vec::new(), root)];
    let mut i = 0;
    while i < out.len() {
        let (at, parts, dir) = (out[i].0.clone(), out[i].1.clone(), out[i].2);
        for (name, e) in dir {
            if let Entry::Dir(d) = e {
                let mut p = parts.clone();
                p.push(name.clone());
                out.push((format!("{at}/{name}"), p, d));
            }
        }
        i += 1;
    }
    out.into_iter().map(|(at, parts, _)| (at, parts)).collect()
}

fn has_empty_dir(dir: &crate::handler::model::Dir) -> bool {
    dir.values().any(|e| match e {
        Entry::Dir(d) => d.is_empty() || has_empty_dir(d),
        _ => false,
    })
}

/// The paths a command input names.
fn paths(input: &Value) -> Vec<&str> {
    ["path", "old_path", "new_path"]
        .iter()
        .filter_map(|k| input.get(k).and_then(Value::as_str))
        .collect()
}

/// The names that are links, FIFOs, hard links or the huge file (a handler may follow or read
/// them; the model refuses), where `model` holds them now ([`hazards_in`]).
fn through_hazard(path: &str, hazards: &[String]) -> bool {
    hazards
        .iter()
        .any(|h| path == *h || path.starts_with(&format!("{h}/")))
}

/// The other acceptable replies to a step whose model outcome is `o`. See the
/// [module docs](self).
/// `twin`: how the command meets a lossy twin ([`twin_of`]).
fn others(o: &Outcome, input: &Value, hazards: &[String], twin: Twin) -> Vec<(Reply, Branch)> {
    let names = paths(input);
    let mut v = Vec::new();
    // A name that differs from one already there only by case may be refused by a store whose
    // keys ignore case (as `certify`'s `alias/case/*` cases accept): what it then holds for
    // each spelling is not followed.
    if !o.is_error() && twin.makes {
        v.push((Reply::AnyError, Branch::Unknown));
    }
    // A path that is not there, whose twin is, may be read or changed through the twin: what
    // the handler then holds is not followed.
    if o.is_error() && twin.names {
        v.push((Reply::AnySuccess, Branch::Unknown));
    }
    if o.is_error() {
        v.push((Reply::AnyError, Branch::Model));
    }
    if o.kind() == OutcomeKind::InvalidViewRange {
        v.push((Reply::AnySuccess, Branch::Model));
    }
    // The reference leaves links, FIFOs and hard-linked files out of listings; a handler may
    // list them (or refuse to list), which changes no state.
    if let Outcome::ViewDir { path, .. } = o {
        let under = format!("{}/", path.trim_end_matches('/'));
        if hazards.iter().any(|h| h.starts_with(&under)) {
            v.push((Reply::AnySuccess, Branch::Model));
        }
    }
    if o.kind() == OutcomeKind::FileExists
        && input.get("command").and_then(Value::as_str) == Some("create")
    {
        v.push((Reply::AnySuccess, Branch::Overwrite));
    }
    if !o.is_error()
        && (!names.iter().all(|p| plain(p)) || names.iter().any(|p| through_hazard(p, hazards)))
    {
        v.push((Reply::AnyError, Branch::Refused));
    }
    // A name the doc does not promise to take (a trailing space, a look-alike) may be taken
    // as another name: what the handler then did is not followed.
    if !o.is_error() && !names.iter().all(|p| plain(p)) {
        v.push((Reply::AnySuccess, Branch::Unknown));
    }
    // Deleting or moving the root by another spelling is never a name taken: it is the root.
    let moves_root = matches!(
        input.get("command").and_then(Value::as_str),
        Some("delete" | "rename")
    ) && ["path", "old_path"]
        .iter()
        .filter_map(|k| input.get(k).and_then(Value::as_str))
        .any(names_root);
    if o.is_error()
        && !moves_root
        && names
            .iter()
            .any(|p| !canonical_spelling(p) || !plain(p) || through_hazard(p, hazards))
    {
        v.push((Reply::AnySuccess, Branch::Unknown));
    }
    v
}

fn note(b: Branch, reply: &Reply) -> &'static str {
    match (b, reply) {
        (Branch::Model, Reply::AnyError) => "refused, for another reason than the documented one",
        (Branch::Model, Reply::AnySuccess) => {
            "a view of a range the doc refuses (no state changes)"
        }
        (Branch::Model, _) => "as the documented model answers",
        (Branch::Overwrite, _) => {
            "overwrote the existing file (the doc leaves this to the handler)"
        }
        (Branch::Refused, _) => "refused a name or a planted link the doc does not promise to take",
        (Branch::Unknown, _) => {
            "took a spelling the documented model refuses; what it did is not followed further"
        }
    }
}

/// The setup and model entries of `seq`'s layout ([`LAYOUT`] and the search's own hazards),
/// planted in `model`; nothing in black-box mode.
fn lay_out(seq: &Sequence, black_box: bool, model: &mut Model) -> Vec<Fs> {
    let mut setup = Vec::new();
    if black_box {
        return setup;
    }
    let items = LAYOUT
        .iter()
        .enumerate()
        .filter(|(i, _)| seq.layout & (1 << i) != 0)
        .map(|(_, item)| planted(item))
        .chain(
            EXTRA_BITS
                .into_iter()
                .filter(|bit| seq.layout & (1 << bit) != 0)
                .flat_map(extra),
        );
    for (fs, path, entry) in items {
        if model.plant(path, entry).is_ok() {
            setup.push(fs);
        }
    }
    setup
}

/// The `/memories/...` paths of the entries of `model` that are not plain files or folders
/// (links, FIFOs, hard-linked files, the huge sparse file): where the layout planted them, or
/// where a rename has moved them since (a listing of the folder a hard link was renamed into
/// may show it).
fn hazards_in(model: &Model) -> Vec<String> {
    model
        .paths()
        .into_iter()
        .filter(|(_, e)| !matches!(e, Entry::File(_) | Entry::Dir(_)))
        .map(|(p, _)| format!("/memories/{}", p.to_string_lossy()))
        .collect()
}

/// A black-box checkpoint ([`CHECKPOINT_EVERY`]): a view of each folder and plain file
/// `model` holds, at most [`CHECKPOINT_VIEWS`], the folders first; pushed to `steps` and
/// `plans`, each with `None` pushed to `commands`. `after` says where, for the notes (`after
/// command 4`, `at the end`).
///
/// A folder is viewed only when its path and every entry its listing shows are plain names
/// ([`plain`]: a handler may keep another name under another spelling) and no folder a refused
/// command may have left (`left.0`) is at or below it (the listing could show it); no folder
/// is viewed once a refused create or rename may have left folders under names the model
/// cannot know (`left.1`, [`unnamed_leftovers`]). Its listing
/// is graded as any `view` of a folder: the entries by meaning, sizes of folders never
/// compared, dot-names and `node_modules` as the documented listing leaves them out.
fn checkpoint(
    model: &mut Model,
    hazards: &[String],
    left: (&[Left], bool),
    after: &str,
    plan: (&mut Vec<Step>, &mut Vec<StepPlan>, &mut Vec<Option<usize>>),
) {
    let (steps, plans, commands) = plan;
    let (maybe, unnamed) = left;
    let mut views: Vec<(Value, Outcome)> = Vec::new();
    for (path, parts) in folders_of(model.root()) {
        if !(parts.is_empty() || plain(&path)) || unnamed || maybe.iter().any(|m| m.meets(&parts)) {
            continue;
        }
        let input = json!({"command": "view", "path": path});
        let outcome = model.outcome(&input);
        let listed_plain = match &outcome {
            Outcome::ViewDir { entries, .. } => entries.iter().all(|e| plain(&e.path)),
            _ => false,
        };
        if listed_plain {
            views.push((input, outcome));
        }
    }
    let mut files = Vec::new();
    files_of(model.root(), crate::vpath::ROOT, &mut files);
    for path in files.into_iter().filter(|p| plain(p)) {
        let input = json!({"command": "view", "path": path});
        let outcome = model.outcome(&input);
        views.push((input, outcome));
    }
    for (input, outcome) in views.into_iter().take(CHECKPOINT_VIEWS) {
        let others = others(&outcome, &input, hazards, Twin::default());
        let what = if matches!(outcome, Outcome::ViewDir { .. }) {
            "folder"
        } else {
            "file"
        };
        steps.push(Step {
            input,
            accept: vec![Accept {
                verdict: Verdict::Pass,
                reply: Reply::Exact(outcome.clone()),
                profiles: Vec::new(),
                note: format!("as the documented model answers (a view of a {what} the model holds, {after}: a black-box checkpoint)"),
            }],
            tests_view_format: false,
        });
        plans.push(StepPlan { outcome, others });
        commands.push(None);
    }
}

/// Plan `seq` on `branches` (per command, [`Plan::commands`]; missing ones are
/// [`Branch::Model`]) in `profile`, as case `fuzz/<id>`.
///
/// In black-box mode (`black_box`) nothing but the commands lays out the store: the layout is
/// left out, and the model stops following once it holds an empty folder (a handler without
/// folders of its own has none). No store on disk is checked there: after every
/// [`CHECKPOINT_EVERY`] commands the model still follows (but the last), and at the end when
/// it still follows, the plan sends a checkpoint: a view of each folder and
/// plain file it holds (at most [`CHECKPOINT_VIEWS`], folders first), each of whose replies
/// must be the model's. The views are steps of no command: they always take the model's
/// branch.
pub fn plan(
    seq: &Sequence,
    branches: &[Branch],
    profile: Profile,
    id: &str,
    black_box: bool,
) -> Plan {
    let mut model = Model::new(profile, Options::default(), DirSizes::Tmpfs);
    let setup = lay_out(seq, black_box, &mut model);
    let mut hazards = hazards_in(&model);
    let mut steps = Vec::new();
    let mut plans = Vec::new();
    let mut commands: Vec<Option<usize>> = Vec::new();
    let mut known = true;
    // Folders a refused create or rename may have left (the SDKs make the parents first).
    let mut maybe: Vec<Left> = Vec::new();
    // Whether one of them made a path the model refuses: folders it cannot name.
    let mut unnamed = false;
    let sent = seq.commands.len().min(crate::fuzz::sequence::MAX_COMMANDS);
    for (i, c) in seq.commands.iter().take(sent).enumerate() {
        let input = input_of(c);
        if meets_maybe(&input, &maybe) {
            // What is there depends on a leftover the model does not know: stop here.
            known = false;
            break;
        }
        // An insert of nothing or of newlines only, into a file of newlines only, or into a
        // file that does not end in exactly one newline (none: the Python SDK adds one, the
        // TypeScript SDK keeps the ending; a blank last line: the Python SDK drops it, others
        // keep it): the reference counts and joins its lines one way, a handler may another;
        // the doc does not say, so the model stops following here.
        let blank = |t: &[u8]| t.iter().all(|b| *b == b'\n' || *b == b'\r');
        let odd_ending = |t: &[u8]| !t.is_empty() && (!t.ends_with(b"\n") || t.ends_with(b"\n\n"));
        let empty_insert = input.get("command").and_then(Value::as_str) == Some("insert")
            && (input
                .get("insert_text")
                .and_then(Value::as_str)
                .is_some_and(|t| blank(t.as_bytes()))
                || file_at(&model, &input).is_some_and(|t| blank(t) || odd_ending(t)));
        let branch = branches.get(i).copied().unwrap_or(Branch::Model);
        // Taken before the command runs; the model itself is copied only for a branch that
        // puts it back.
        let twin = twin(&model, &input);
        let parents = missing_parents(&model, &input);
        let before = (branch != Branch::Model).then(|| model.clone());
        let outcome = model.outcome(&input);
        if outcome.is_error() || branch == Branch::Refused {
            maybe.extend(parents);
            unnamed |= unnamed_leftovers(&input);
        }
        match (branch, before) {
            (Branch::Refused, Some(before)) => model = before,
            (Branch::Overwrite, Some(before)) => {
                model = before;
                let path = input.get("path").cloned().unwrap_or(Value::Null);
                model.outcome(&json!({"command": "delete", "path": path}));
                model.outcome(&input);
            }
            (Branch::Unknown, _) => known = false,
            _ => {}
        }
        let others = others(&outcome, &input, &hazards, twin);
        // A rename moves a hazard (or the folder it is in), a delete removes one, a create
        // over the huge file replaces it: the next commands meet them where they are now.
        if !hazards.is_empty() && input.get("command").and_then(Value::as_str) != Some("view") {
            hazards = hazards_in(&model);
        }
        let mut accept = vec![if outcome.is_error() && filled_in(&input) {
            // The handler gets the path with the host path filled in, which the model's words
            // cannot name: any refusal is its answer (as `certify` grades these payloads).
            Accept {
                verdict: Verdict::Pass,
                reply: Reply::AnyError,
                profiles: Vec::new(),
                note: "refused, as the documented model refuses (a path the runner fills in)"
                    .into(),
            }
        } else {
            Accept {
                verdict: Verdict::Pass,
                reply: Reply::Exact(outcome.clone()),
                profiles: Vec::new(),
                note: "as the documented model answers".into(),
            }
        }];
        accept.extend(others.iter().map(|(r, b)| Accept {
            verdict: Verdict::NonStrict,
            reply: r.clone(),
            profiles: Vec::new(),
            note: note(*b, r).into(),
        }));
        steps.push(Step {
            input,
            accept,
            tests_view_format: false,
        });
        plans.push(StepPlan { outcome, others });
        commands.push(Some(i));
        if !known
            || empty_insert
            || model.uncovered().is_some()
            || (black_box && has_empty_dir(model.root()))
        {
            known = false;
            break;
        }
        if black_box && (i + 1) % CHECKPOINT_EVERY == 0 && i + 1 < sent {
            let after = format!("after command {}", i + 1);
            let plan = (&mut steps, &mut plans, &mut commands);
            checkpoint(&mut model, &hazards, (&maybe, unnamed), &after, plan);
        }
    }
    if black_box && known {
        let plan = (&mut steps, &mut plans, &mut commands);
        checkpoint(&mut model, &hazards, (&maybe, unnamed), "at the end", plan);
    }
    let checks = if known {
        checks(&model, &steps, &setup, &maybe)
    } else {
        Vec::new()
    };
    Plan {
        case: Case {
            id: format!("fuzz/{id}"),
            source: vec!["spec:2".into()],
            defined: String::new(),
            requirement: "Every reply MUST say what the documented memory tool says, and the store MUST hold what it holds.".into(),
            level: Level::Must,
            setup,
            steps,
            checks,
            race: None,
            turns: Vec::new(),
        },
        steps: plans,
        commands,
    }
}

/// Whether `input` is a create or rename whose made path (`path`, `new_path`) is not a valid
/// path of the model ([`VPath::parse`]: a NUL, a `..`, a name outside `/memories/` such as
/// `/memories．．/x`, a host path the runner fills in): a handler that reads it otherwise,
/// makes the parents first and then refuses may leave folders under names the model cannot
/// know ([`missing_parents`] names only its plain leading folders), anywhere a listing shows.
fn unnamed_leftovers(input: &Value) -> bool {
    let (made, _) = made_and_named(input);
    made.is_some_and(|p| VPath::parse(p).is_err())
}

/// Whether a path of `input` holds a `{DOWN:d}` the runner fills in with a host path
/// (`certify::instantiate_in`): the absolute spellings the generator draws.
fn filled_in(input: &Value) -> bool {
    paths(input).iter().any(|p| p.contains("{DOWN:"))
}

/// The virtual path of a setup entry this module plants.
fn fs_path(f: &Fs) -> Option<&str> {
    match f {
        Fs::Dir { path }
        | Fs::File { path, .. }
        | Fs::Symlink { path, .. }
        | Fs::Fifo { path }
        | Fs::HardLinkOutside { path, .. } => Some(path),
        _ => None,
    }
}

/// One check per canonical path the setup or a step names (and each of its parents): what the
/// model holds there. Where the model has nothing above a named path, or at a folder a refused
/// command may have left (`maybe`), a folder found there is NON-STRICT, not FAIL.
fn checks(model: &Model, steps: &[Step], setup: &[Fs], maybe: &[Left]) -> Vec<Check> {
    let mut named: Vec<String> = setup
        .iter()
        .filter_map(fs_path)
        .map(str::to_owned)
        .collect();
    for s in steps {
        named.extend(paths(&s.input).into_iter().map(str::to_owned));
    }
    // Each named path (a leaf) and each of its parents (not a leaf unless named as one).
    let mut seen: std::collections::BTreeMap<Vec<String>, bool> = Default::default();
    for p in named {
        let Ok(v) = VPath::parse(&p) else { continue };
        let parts = v.components();
        for n in 1..=parts.len() {
            *seen.entry(parts[..n].to_vec()).or_default() |= n == parts.len();
        }
    }
    seen.into_iter()
        .filter_map(|(parts, leaf)| {
            let expect = match entry_at(model, &parts) {
                None => Expected::Absent,
                Some(Entry::File(b)) => Expected::File(b.clone()),
                Some(Entry::Dir(_)) => Expected::Dir,
                Some(Entry::Symlink(_)) => Expected::Symlink,
                Some(_) => return None,
            };
            let path = format!("/memories/{}", parts.join("/"));
            // A folder left where the model has none, above a path a command named: made for
            // a command that was then refused (the SDKs make the parents first).
            let left_folder =
                (!leaf || maybe.iter().any(|m| m.contains(&parts))) && expect == Expected::Absent;
            // A name the doc does not promise to take (a look-alike, a trailing space) may be
            // kept under another spelling (NFKC, trimmed) when the reply names it as given,
            // and an absent name may hold what was made under its lossy twin: what is on disk
            // under either spelling is then not a finding.
            let respelt = (expect != Expected::Absent && !plain(&path))
                || (expect == Expected::Absent && twin_of(model, &path) && !plain_twins(model, &path));
            Some(Check {
                what: if left_folder {
                    format!("{path} is absent (no folder is left by a refused command)")
                } else if respelt {
                    format!("{path} is as the documented model leaves it (a name the doc does not promise to take, which a handler may keep under another spelling)")
                } else {
                    format!("{path} is as the documented model leaves it")
                },
                path,
                expect,
                verdict: if left_folder || respelt {
                    Verdict::NonStrict
                } else {
                    Verdict::Fail
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`plain`] as it was written over the parser.
    fn plain_parsed(path: &str) -> bool {
        VPath::parse(path).is_ok_and(|p| {
            p.components().iter().all(|n| {
                n.len() <= 200
                    && n.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
                    && !n.chars().all(|c| c == '.')
            })
        })
    }

    #[test]
    fn plain_reads_the_text_as_the_parser_would() {
        let long = format!("/memories/{}", "a/".repeat(2100));
        let mut paths: Vec<String> = [
            "/memories",
            "/memories/",
            "/memories//",
            "/memories/a",
            "/memories/a/",
            "/memories/a//b",
            "/memories/.",
            "/memories/..",
            "/memories/...",
            "/memories/.hidden",
            "/memories/a-b_c.D9",
            "/memories/a b",
            "/memories/a%2fb",
            "/memories/a\\b",
            "/memories/caf\u{e9}",
            "/memoriesX/a",
            "/memories\u{0}",
            "memories/a",
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        paths.push(format!("/memories/{}", "n".repeat(200)));
        paths.push(format!("/memories/{}", "n".repeat(201)));
        paths.push(long);
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..20_000 {
            let seq = crate::fuzz::search::generate::sequence(&mut rng);
            for c in &seq.commands {
                let input = input_of(c);
                paths.extend(super::paths(&input).into_iter().map(str::to_owned));
            }
        }
        let differ: Vec<&String> = paths
            .iter()
            .filter(|p| plain(p) != plain_parsed(p))
            .collect();
        assert_eq!(differ, Vec::<&String>::new());
        assert!(paths.len() > 50_000);
    }
    use crate::fuzz::sequence::{PathSpec, PathToken, TextSpec};

    /// A `view` of the raw path `p`.
    fn view(p: &str) -> CommandSpec {
        CommandSpec::View {
            path: PathSpec::raw(p),
            range: None,
        }
    }

    fn at(tokens: Vec<PathToken>) -> PathSpec {
        PathSpec {
            rooted: true,
            tokens,
        }
    }

    /// create, create again, view: the second create is FileExists with an overwrite branch;
    /// planned on that branch the view expects the second text and the check holds it.
    /// An insert into a file ending in one newline is followed and its content checked; into
    /// one ending in none or in a blank line (the SDKs differ, the doc is silent) the plan ends
    /// at the insert, with no check of the store.
    #[test]
    fn an_insert_into_a_file_of_odd_ending_ends_the_plan() {
        let a = || at(vec![PathToken::Name(16)]);
        let made_then_inserted = |text: &str| {
            let seq = Sequence {
                layout: 0,
                profile: 0,
                commands: vec![
                    CommandSpec::Create {
                        path: a(),
                        text: TextSpec::Raw(text.into()),
                    },
                    CommandSpec::Insert {
                        path: a(),
                        line: 0,
                        text: TextSpec::Raw("alpha".into()),
                    },
                    CommandSpec::View {
                        path: a(),
                        range: None,
                    },
                ],
            };
            let p = plan(&seq, &[], Profile::Docs, "t", false);
            let checks: Vec<Expected> = p.case.checks.iter().map(|c| c.expect.clone()).collect();
            (p.case.steps.len(), checks)
        };
        assert_eq!(
            made_then_inserted("bet\n"),
            (3, vec![Expected::File(b"alpha\nbet\n".to_vec())])
        );
        assert_eq!(made_then_inserted("bet\n\n"), (2, vec![]));
        assert_eq!(made_then_inserted("bet"), (2, vec![]));
    }

    #[test]
    fn an_overwrite_branch_is_followed() {
        let a = || at(vec![PathToken::Name(16)]);
        let seq = Sequence {
            layout: 0,
            profile: 0,
            commands: vec![
                CommandSpec::Create {
                    path: a(),
                    text: TextSpec::Raw("one\n".into()),
                },
                CommandSpec::Create {
                    path: a(),
                    text: TextSpec::Raw("two\n".into()),
                },
                CommandSpec::View {
                    path: a(),
                    range: None,
                },
            ],
        };
        let p = plan(&seq, &[], Profile::Docs, "t", false);
        assert_eq!(p.steps[1].outcome.kind(), OutcomeKind::FileExists);
        assert_eq!(
            p.steps[1].others,
            vec![
                (Reply::AnyError, Branch::Model),
                (Reply::AnySuccess, Branch::Overwrite)
            ]
        );
        assert_eq!(p.case.checks[0].expect, Expected::File(b"one\n".to_vec()));
        let p = plan(
            &seq,
            &[Branch::Model, Branch::Overwrite],
            Profile::Docs,
            "t",
            false,
        );
        assert_eq!(p.case.checks[0].path, "/memories/new");
        assert_eq!(p.case.checks[0].expect, Expected::File(b"two\n".to_vec()));
        let Outcome::ViewFile { text, .. } = &p.steps[2].outcome else {
            panic!("{:?}", p.steps[2].outcome)
        };
        assert_eq!(text, "two\n");
    }

    /// A trailing slash the model refuses may be taken (unknown branch): planned on it, the
    /// case ends there and checks nothing.
    #[test]
    fn an_unknown_branch_ends_the_plan() {
        let seq = Sequence {
            layout: 0b1,
            profile: 0,
            commands: vec![
                CommandSpec::View {
                    path: at(vec![PathToken::Name(0), PathToken::Slash]),
                    range: None,
                },
                CommandSpec::Delete {
                    path: at(vec![PathToken::Name(0)]),
                },
            ],
        };
        let p = plan(&seq, &[], Profile::Docs, "t", false);
        assert_eq!(p.case.steps.len(), 2);
        assert_eq!(
            p.steps[0].others,
            vec![
                (Reply::AnyError, Branch::Model),
                (Reply::AnySuccess, Branch::Unknown)
            ]
        );
        assert_eq!(p.case.checks.len(), 1);
        assert_eq!(p.case.checks[0].expect, Expected::Absent);
        let p = plan(&seq, &[Branch::Unknown], Profile::Docs, "t", false);
        assert_eq!(p.case.steps.len(), 1);
        assert!(p.case.checks.is_empty());
    }

    /// A delete of another spelling of the root (`/memories/.`) has no unknown branch: only
    /// a refusal is accepted, so a handler that removes its store is a finding.
    #[test]
    fn deleting_the_root_by_another_spelling_is_only_refused() {
        for spelling in ["/memories/.", "/memories//", "/memories/d/.."] {
            assert!(names_root(spelling), "{spelling}");
            let seq = Sequence {
                layout: 0b11,
                profile: 0,
                commands: vec![CommandSpec::Delete {
                    path: PathSpec::raw(spelling),
                }],
            };
            let p = plan(&seq, &[], Profile::Docs, "t", false);
            assert!(p.steps[0].outcome.is_error(), "{spelling}");
            assert_eq!(
                p.steps[0].others,
                vec![(Reply::AnyError, Branch::Model)],
                "{spelling}"
            );
        }
        assert!(!names_root("/memories/d"));
        assert!(!names_root("/memories/../x"));
    }

    /// Creating `notes.md` beside `Notes.md` may be refused (a store whose keys ignore case):
    /// that refusal is accepted and not followed; beside nothing, it is not.
    #[test]
    fn a_lossy_twin_may_be_refused_or_read_through() {
        let create = |p: &str| CommandSpec::Create {
            path: PathSpec::raw(p),
            text: TextSpec::Fixed(1),
        };
        let seq = Sequence {
            layout: 0,
            profile: 0,
            commands: vec![create("/memories/Notes.md"), create("/memories/notes.md")],
        };
        let p = plan(&seq, &[], Profile::Docs, "t", false);
        assert_eq!(p.steps[0].others, vec![]);
        assert_eq!(p.steps[1].others, vec![(Reply::AnyError, Branch::Unknown)]);
        // An NFKC twin (U+2024 ONE DOT LEADER is a dot) made, then a view of the absent plain
        // spelling: the store may read it through the twin.
        let seq = Sequence {
            layout: 0,
            profile: 0,
            commands: vec![
                create("/memories/e\u{2024}md"),
                view("/memories/e.md"),
                create("/memories/E.md"),
                view("/memories/f.md"),
            ],
        };
        let p = plan(&seq, &[], Profile::Docs, "t", false);
        assert_eq!(
            p.steps[1].others,
            vec![
                (Reply::AnySuccess, Branch::Unknown),
                (Reply::AnyError, Branch::Model)
            ]
        );
        assert_eq!(p.steps[2].others, vec![(Reply::AnyError, Branch::Unknown)]);
        assert_eq!(p.steps[3].others, vec![(Reply::AnyError, Branch::Model)]);
        assert_eq!(fold("A.md "), "a_md");
        assert_eq!(fold("\u{ff41}-b"), "a_b");
    }

    /// A refused create leaves, at most, the folders before its last name (and the last one,
    /// before a trailing slash), and for a spelling the model refuses every plain folder before
    /// a `.`, `..` or empty name.
    #[test]
    fn a_refused_create_may_leave_its_plain_folders() {
        let model = Model::new(Profile::Docs, Options::default(), DirSizes::Tmpfs);
        let left = |p: &str| {
            missing_parents(&model, &json!({"command": "create", "path": p}))
                .map_or_else(Vec::new, |l| {
                    (l.from..=l.to).map(|n| l.parts[..n].to_vec()).collect()
                })
        };
        let v = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        assert_eq!(left("/memories/a/b/c.txt"), [v(&["a"]), v(&["a", "b"])]);
        assert_eq!(left("/memories/new/."), [v(&["new"])]);
        assert_eq!(left("/memories/a/b/"), [v(&["a"]), v(&["a", "b"])]);
        assert_eq!(left("/memories/memories/.."), [v(&["memories"])]);
        assert_eq!(left("/memories/a/x\u{0}.md"), [v(&["a"])]);
        assert_eq!(left("/memories/a.txt"), Vec::<Vec<String>>::new());
    }

    /// The search's own hazards: the device (where one can be planted) is refused as a special
    /// file; a view through the NFD link is refused as a link, and its NFC spelling is absent.
    #[test]
    fn the_extra_hazards_are_planted_and_refused() {
        let seq = Sequence {
            layout: (1 << DEVICE_BIT) | (1 << NFD_LINK_BIT),
            profile: 0,
            commands: vec![
                view(DEVICE_PATH),
                view(&format!("{NFD_LINK_PATH}/canary.txt")),
                view("/memories/caf\u{e9}"),
            ],
        };
        let p = plan(&seq, &[], Profile::Docs, "t", false);
        let planted: Vec<(&str, &str)> = p
            .case
            .setup
            .iter()
            .map(|f| match f {
                Fs::CharDevice { path, .. } => ("device", path.as_str()),
                Fs::Dir { path } => ("dir", path.as_str()),
                Fs::Symlink { path, .. } => ("link", path.as_str()),
                _ => ("other", ""),
            })
            .collect();
        let mut want = vec![("link", "/memories/cafe\u{301}")];
        if devices_plantable() {
            want.insert(0, ("device", "/memories/zero"));
            assert_eq!(
                p.steps[0].outcome,
                Outcome::UnsupportedFileType {
                    path: "/memories/zero".into()
                }
            );
        }
        assert_eq!(planted, want);
        assert!(p.steps[1].outcome.is_error(), "{:?}", p.steps[1].outcome);
        assert_eq!(p.steps[2].outcome.kind(), OutcomeKind::ViewNotFound);
        let black = plan(&seq, &[], Profile::Docs, "t", true);
        assert!(black.case.setup.is_empty());
    }

    /// An absolute spelling left for the runner to fill in: the model refuses it by its empty
    /// name, and any refusal is PASS (its words cannot name the filled-in path); a plain path's
    /// refusal is still the model's exact reply.
    #[test]
    fn a_path_the_runner_fills_in_is_refused_in_any_words() {
        let seq = Sequence {
            layout: 0,
            profile: 0,
            commands: vec![
                view("/memories//{DOWN:99}outside/canary.txt"),
                view("/memories/x"),
            ],
        };
        let p = plan(&seq, &[], Profile::Docs, "t", false);
        assert_eq!(p.steps[0].outcome.kind(), OutcomeKind::InvalidPath);
        assert_eq!(
            (
                p.case.steps[0].accept[0].verdict,
                &p.case.steps[0].accept[0].reply
            ),
            (Verdict::Pass, &Reply::AnyError)
        );
        assert_eq!(
            p.case.steps[1].accept[0].reply,
            Reply::Exact(Outcome::ViewNotFound {
                path: "/memories/x".into()
            })
        );
    }

    /// A hard-linked file renamed into a new folder is still one a listing may show (the
    /// reference leaves it out): the view of that folder accepts a listing that shows it.
    /// Found by 10 minutes of `memcert fuzz` on `careful/reworded` (sequence 382,316).
    #[test]
    fn a_hazard_renamed_elsewhere_may_be_listed_where_it_went() {
        let seq = Sequence {
            // LAYOUT[8]: /memories/hard.txt, a hard link to an outside file.
            layout: 1 << 8,
            profile: 0,
            commands: vec![
                CommandSpec::Rename {
                    old: PathSpec::raw("/memories/hard.txt"),
                    new: PathSpec::raw("/memories/new/fifo"),
                },
                CommandSpec::View {
                    path: PathSpec::raw("/memories/new"),
                    range: None,
                },
                CommandSpec::View {
                    path: PathSpec::raw("/memories"),
                    range: None,
                },
            ],
        };
        let p = plan(&seq, &[], Profile::Docs, "t", false);
        assert_eq!(
            p.case.setup,
            vec![Fs::HardLinkOutside {
                path: "/memories/hard.txt".into(),
                name: "hard-source.txt".into(),
            }]
        );
        assert_eq!(p.steps[0].outcome.kind(), OutcomeKind::Renamed);
        assert_eq!(p.steps[1].others, vec![(Reply::AnySuccess, Branch::Model)]);
        // Two levels down from the root: the root's listing may show it too.
        assert_eq!(p.steps[2].others, vec![(Reply::AnySuccess, Branch::Model)]);
        let Outcome::ViewDir { entries, .. } = &p.steps[1].outcome else {
            panic!("{:?}", p.steps[1].outcome)
        };
        assert_eq!(
            entries,
            &Vec::new(),
            "the reference lists no hard-linked file"
        );
    }

    /// The huge file: planted as a sparse file; view, str_replace and insert are refused as too
    /// large (another refusal accepted, and a success taken as a branch the model does not
    /// follow, the read measure judging it); a listing shows its size; create over it is
    /// FileExists, delete removes it; nothing in black-box mode.
    #[test]
    fn the_huge_file_is_refused_as_too_large_and_listed() {
        let seq = Sequence {
            layout: 1 << HUGE_BIT,
            profile: 0,
            commands: vec![
                CommandSpec::View {
                    path: PathSpec::raw(HUGE_PATH),
                    range: None,
                },
                CommandSpec::StrReplace {
                    path: PathSpec::raw(HUGE_PATH),
                    old: TextSpec::Fixed(1),
                    new: TextSpec::Fixed(2),
                },
                CommandSpec::Insert {
                    path: PathSpec::raw(HUGE_PATH),
                    line: 0,
                    text: TextSpec::Fixed(1),
                },
                CommandSpec::View {
                    path: PathSpec::raw("/memories"),
                    range: None,
                },
                CommandSpec::Create {
                    path: PathSpec::raw(HUGE_PATH),
                    text: TextSpec::Fixed(1),
                },
                CommandSpec::Delete {
                    path: PathSpec::raw(HUGE_PATH),
                },
            ],
        };
        let p = plan(&seq, &[], Profile::Docs, "t", false);
        assert_eq!(
            p.case.setup,
            vec![Fs::Sparse {
                path: "/memories/huge.md".into(),
                len: 64 * 1024 * 1024
            }]
        );
        let too_large = Outcome::FileTooLarge {
            path: HUGE_PATH.into(),
            limit: 16 * 1024 * 1024,
        };
        for i in 0..3 {
            assert_eq!(p.steps[i].outcome, too_large, "step {i}");
            assert_eq!(
                p.steps[i].others,
                vec![
                    (Reply::AnyError, Branch::Model),
                    (Reply::AnySuccess, Branch::Unknown)
                ],
                "step {i}"
            );
        }
        let Outcome::ViewDir { entries, .. } = &p.steps[3].outcome else {
            panic!("{:?}", p.steps[3].outcome)
        };
        assert_eq!(
            entries
                .iter()
                .map(|e| (e.path.as_str(), e.size))
                .collect::<Vec<_>>(),
            [("/memories/huge.md", 64 * 1024 * 1024)]
        );
        assert_eq!(p.steps[4].outcome.kind(), OutcomeKind::FileExists);
        assert_eq!(p.steps[5].outcome.kind(), OutcomeKind::Deleted);
        assert_eq!(p.case.checks[0].path, "/memories/huge.md");
        assert_eq!(p.case.checks[0].expect, Expected::Absent);
        let black = plan(&seq, &[], Profile::Docs, "t", true);
        assert!(black.case.setup.is_empty());
    }

    /// A created file under a name the doc does not promise to take (here with U+2024, which
    /// NFKC makes a dot) may be kept under another spelling: its check is NON-STRICT; a plain
    /// name's stays FAIL.
    #[test]
    fn a_respelt_name_is_checked_non_strict() {
        let create = |name: &str| Sequence {
            layout: 0,
            profile: 0,
            commands: vec![CommandSpec::Create {
                path: at(vec![PathToken::Raw(format!("/{name}"))]),
                text: TextSpec::Fixed(1),
            }],
        };
        let checks_of = |seq: &Sequence| -> Vec<(String, Verdict)> {
            plan(seq, &[], Profile::Docs, "t", false)
                .case
                .checks
                .into_iter()
                .map(|c| (c.path, c.verdict))
                .collect()
        };
        let verdicts = |name: &str| checks_of(&create(name));
        assert_eq!(
            verdicts("e\u{2024}"),
            vec![("/memories/e\u{2024}".to_owned(), Verdict::NonStrict)]
        );
        assert_eq!(
            verdicts("e"),
            vec![("/memories/e".to_owned(), Verdict::Fail)]
        );
        assert_eq!(
            verdicts(".../e"),
            vec![
                ("/memories/...".to_owned(), Verdict::NonStrict),
                ("/memories/.../e".to_owned(), Verdict::NonStrict)
            ]
        );
        // A trailing-space name made, then its plain twin named: the twin may hold the file.
        let mut seq = create("a.txt ");
        seq.commands.push(CommandSpec::Delete {
            path: at(vec![PathToken::Raw("/a.txt".into())]),
        });
        assert_eq!(
            checks_of(&seq),
            vec![
                ("/memories/a.txt".to_owned(), Verdict::NonStrict),
                ("/memories/a.txt ".to_owned(), Verdict::NonStrict)
            ]
        );
        // Twins that are both plain (case) are distinct names: what is left under the absent
        // one is a finding.
        let mut seq = create("a.txt");
        seq.commands.push(CommandSpec::Delete {
            path: at(vec![PathToken::Raw("/A.txt".into())]),
        });
        assert_eq!(
            checks_of(&seq),
            vec![
                ("/memories/A.txt".to_owned(), Verdict::Fail),
                ("/memories/a.txt".to_owned(), Verdict::Fail)
            ]
        );
    }

    /// The inputs of a plan's steps, as `command path` (`command old -> new` for a rename),
    /// with `+` before a view the plan added.
    fn inputs(p: &Plan) -> Vec<String> {
        p.case
            .steps
            .iter()
            .zip(&p.commands)
            .map(|(s, c)| {
                let get = |k: &str| s.input[k].as_str().unwrap_or("").to_owned();
                let what = match get("command").as_str() {
                    "rename" => format!("rename {} -> {}", get("old_path"), get("new_path")),
                    c => format!("{c} {}", get("path")),
                };
                format!("{}{what}", if c.is_none() { "+" } else { "" })
            })
            .collect()
    }

    /// In black-box mode a plan the model still follows ends with a view of each folder whose
    /// listing shows plain names only and of each plain file it holds (folders first, then
    /// files in name order; its store checks are dropped by the runner there); one it stopped
    /// following does not.
    #[test]
    fn a_black_box_plan_ends_with_views_of_its_folders_and_files() {
        let create = |tokens: Vec<PathToken>| CommandSpec::Create {
            path: at(tokens),
            text: TextSpec::Raw("x\n".into()),
        };
        let seq = Sequence {
            layout: 0,
            profile: 0,
            commands: vec![
                create(vec![PathToken::Name(16), PathToken::Name(0)]),
                create(vec![PathToken::Name(2)]),
                create(vec![PathToken::Raw("/caf\u{e9}".into())]),
            ],
        };
        let p = plan(&seq, &[], Profile::Docs, "t", true);
        assert_eq!(
            inputs(&p)[3..],
            [
                // Not the root: its listing shows café, which a handler may spell otherwise.
                "+view /memories/new",
                "+view /memories/b.txt",
                "+view /memories/new/a.txt"
            ]
        );
        let Outcome::ViewDir { entries, .. } = &p.steps[3].outcome else {
            panic!("{:?}", p.steps[3].outcome)
        };
        assert_eq!(
            entries.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(),
            ["/memories/new/a.txt"]
        );
        let Outcome::ViewFile { text, .. } = &p.steps[5].outcome else {
            panic!("{:?}", p.steps[5].outcome)
        };
        assert_eq!(text, "x\n");
        assert_eq!(p.commands, [Some(0), Some(1), Some(2), None, None, None]);
        assert_eq!(p.commands_sent(), 3);
        assert_eq!(
            plan(&seq, &[], Profile::Docs, "t", false).case.steps.len(),
            3
        );
        let stopped = plan(&seq, &[Branch::Unknown], Profile::Docs, "t", true);
        assert_eq!(stopped.case.steps.len(), 1);
    }

    /// Nine commands in black-box mode: a checkpoint after command 4 and after command 8, and
    /// one at the end; each views the root and the folders (by depth, then name), then the
    /// files (name order, depth first), as the model holds them then.
    #[test]
    fn a_black_box_plan_of_nine_commands_has_three_checkpoints() {
        let raw = |p: &str| PathSpec::raw(p);
        let create = |p: &str| CommandSpec::Create {
            path: raw(p),
            text: TextSpec::Raw("x\n".into()),
        };
        let seq = Sequence {
            layout: 0,
            profile: 0,
            commands: vec![
                create("/memories/d/a.txt"),
                create("/memories/b.txt"),
                view("/memories/b.txt"),
                create("/memories/c.txt"),
                CommandSpec::Delete {
                    path: raw("/memories/c.txt"),
                },
                create("/memories/d/e/f.txt"),
                view("/memories"),
                CommandSpec::Rename {
                    old: raw("/memories/b.txt"),
                    new: raw("/memories/g.txt"),
                },
                create("/memories/h.txt"),
            ],
        };
        let p = plan(&seq, &[], Profile::Docs, "t", true);
        assert_eq!(
            inputs(&p),
            [
                "create /memories/d/a.txt",
                "create /memories/b.txt",
                "view /memories/b.txt",
                "create /memories/c.txt",
                "+view /memories",
                "+view /memories/d",
                "+view /memories/b.txt",
                "+view /memories/c.txt",
                "+view /memories/d/a.txt",
                "delete /memories/c.txt",
                "create /memories/d/e/f.txt",
                "view /memories",
                "rename /memories/b.txt -> /memories/g.txt",
                "+view /memories",
                "+view /memories/d",
                "+view /memories/d/e",
                "+view /memories/d/a.txt",
                "+view /memories/d/e/f.txt",
                "+view /memories/g.txt",
                "create /memories/h.txt",
                "+view /memories",
                "+view /memories/d",
                "+view /memories/d/e",
                "+view /memories/d/a.txt",
                "+view /memories/d/e/f.txt",
                "+view /memories/g.txt",
                "+view /memories/h.txt",
            ]
        );
        assert_eq!(p.commands_sent(), 9);
        assert_eq!(p.steps.len(), p.case.steps.len());
        // Every view is the model's answer, PASS only, with no other branch.
        for (i, c) in p.commands.iter().enumerate() {
            if c.is_none() {
                assert_eq!(p.steps[i].others, vec![], "step {i}");
                assert_eq!(p.case.steps[i].accept.len(), 1, "step {i}");
                assert_eq!(p.case.steps[i].accept[0].verdict, Verdict::Pass, "step {i}");
            }
        }
        let Outcome::ViewDir { entries, .. } = &p.steps[13].outcome else {
            panic!("{:?}", p.steps[13].outcome)
        };
        assert_eq!(
            entries.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(),
            [
                "/memories/d",
                "/memories/d/a.txt",
                "/memories/d/e",
                "/memories/g.txt"
            ]
        );
        // Eight commands: no checkpoint after the last one but the end's.
        let mut eight = seq.clone();
        eight.commands.truncate(8);
        let p = plan(&eight, &[], Profile::Docs, "t", true);
        assert_eq!(p.case.steps.len(), 8 + 5 + 6);
        // Over the cap: the root and the folders, then the first files by name.
        let many = Sequence {
            layout: 0,
            profile: 0,
            commands: (0..3)
                .map(|n| create(&format!("/memories/f{n}/x.txt")))
                .chain((0..7).map(|n| create(&format!("/memories/x{n}.txt"))))
                .collect(),
        };
        let p = plan(&many, &[], Profile::Docs, "t", true);
        assert_eq!(p.commands_sent(), 10);
        let end: Vec<String> = inputs(&p).split_off(p.case.steps.len() - CHECKPOINT_VIEWS);
        assert_eq!(
            end,
            [
                "+view /memories",
                "+view /memories/f0",
                "+view /memories/f1",
                "+view /memories/f2",
                "+view /memories/f0/x.txt",
                "+view /memories/f1/x.txt",
                "+view /memories/f2/x.txt",
                "+view /memories/x0.txt",
            ]
        );
        assert_eq!(p.case.steps.len(), 10 + 3 * CHECKPOINT_VIEWS);
    }

    /// A branch learnt on a command after a checkpoint is given per command: planned on it,
    /// that command (not the step at its index) follows it, and the later views show it; a
    /// refused create leaves a folder the model may lack, and no folder above it is viewed.
    #[test]
    fn a_branch_after_a_checkpoint_is_the_commands() {
        let a = || PathSpec::raw("/memories/a.txt");
        let create = |p: PathSpec, t: &str| CommandSpec::Create {
            path: p,
            text: TextSpec::Raw(t.into()),
        };
        let seq = Sequence {
            layout: 0,
            profile: 0,
            commands: vec![
                create(a(), "one\n"),
                create(PathSpec::raw("/memories/b.txt"), "b\n"),
                create(PathSpec::raw("/memories/c.txt"), "c\n"),
                create(PathSpec::raw("/memories/d.txt"), "d\n"),
                create(a(), "two\n"),
                view("/memories/a.txt"),
            ],
        };
        let model = plan(&seq, &[], Profile::Docs, "t", true);
        // Four commands, the checkpoint's five views, then command 4 at step 9.
        assert_eq!(model.commands[9], Some(4));
        assert_eq!(model.steps[9].outcome.kind(), OutcomeKind::FileExists);
        let mut branches = vec![Branch::Model; 4];
        branches.push(Branch::Overwrite);
        let p = plan(&seq, &branches, Profile::Docs, "t", true);
        assert_eq!(p.branch_of(9, &branches), Branch::Overwrite);
        assert_eq!(p.branch_of(4, &branches), Branch::Model);
        assert_eq!(p.branch_of(99, &branches), Branch::Model);
        let Outcome::ViewFile { text, .. } = &p.steps[10].outcome else {
            panic!("{:?}", p.steps[10].outcome)
        };
        assert_eq!(text, "two\n");
        let last = p.steps.len() - 1;
        assert_eq!(p.commands[last], None);
        let Outcome::ViewDir { entries, .. } = &p.steps[11].outcome else {
            panic!("{:?}", p.steps[11].outcome)
        };
        assert_eq!(
            entries
                .iter()
                .map(|e| (e.path.as_str(), e.size))
                .collect::<Vec<_>>(),
            [
                ("/memories/a.txt", 4),
                ("/memories/b.txt", 2),
                ("/memories/c.txt", 2),
                ("/memories/d.txt", 2)
            ]
        );
        // The same branch given at the step's index (9) would follow nothing: no command 9.
        let mut by_step = vec![Branch::Model; 9];
        by_step.push(Branch::Overwrite);
        let wrong = plan(&seq, &by_step, Profile::Docs, "t", true);
        let Outcome::ViewFile { text, .. } = &wrong.steps[10].outcome else {
            panic!("{:?}", wrong.steps[10].outcome)
        };
        assert_eq!(text, "one\n");
        // A create refused under a name the doc does not promise may have left its folder:
        // the root is not viewed, the plain files are.
        let refused = Sequence {
            layout: 0,
            profile: 0,
            commands: vec![
                create(a(), "one\n"),
                create(PathSpec::raw("/memories/n\u{e9}/x.txt"), "x\n"),
            ],
        };
        let p = plan(
            &refused,
            &[Branch::Model, Branch::Refused],
            Profile::Docs,
            "t",
            true,
        );
        assert_eq!(inputs(&p)[2..], ["+view /memories/a.txt"]);
        // So may a refused create of a path the model refuses (here one the runner fills in),
        // under names it cannot know (`/memories/tmp/...`): no folder is viewed.
        let host = Sequence {
            layout: 0,
            profile: 0,
            commands: vec![
                create(a(), "one\n"),
                create(
                    PathSpec::raw("/memories//{DOWN:99}outside/canary.txt"),
                    "x\n",
                ),
            ],
        };
        let p = plan(&host, &[], Profile::Docs, "t", true);
        assert!(p.steps[1].outcome.is_error(), "{:?}", p.steps[1].outcome);
        assert_eq!(inputs(&p)[2..], ["+view /memories/a.txt"]);
        let first = Sequence {
            commands: host.commands[..1].to_vec(),
            ..host
        };
        let p = plan(&first, &[], Profile::Docs, "t", true);
        assert_eq!(
            inputs(&p)[1..],
            ["+view /memories", "+view /memories/a.txt"]
        );
    }
}
