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
    /// The case (id `fuzz/<n>`): setup from the layout, one step per command, checks.
    pub case: Case,
    /// Per step of the case.
    pub steps: Vec<StepPlan>,
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
/// digits, `.`, `_`, `-`, at most 200 bytes, not `.` or `..`. A refusal of anything else is an
/// accepted branch.
fn plain(path: &str) -> bool {
    match VPath::parse(path) {
        Ok(p) => p.components().iter().all(|n| {
            n.len() <= 200
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        }),
        Err(_) => false,
    }
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
    // (`/memories/new/.` leaves `/memories/new`).
    let (parts, folders): (Vec<String>, usize) = match VPath::parse(text) {
        Ok(p) => {
            let parts = p.components().to_vec();
            let n = parts.len().saturating_sub(1);
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

/// Whether the path a create makes (or a rename's `new_path`) is absent from `model` while
/// its folder holds another name equal to it but for case.
fn case_twin(model: &Model, input: &Value) -> bool {
    let target = match input.get("command").and_then(Value::as_str) {
        Some("create") => input.get("path"),
        Some("rename") => input.get("new_path"),
        _ => None,
    };
    let Some(parts) = target
        .and_then(Value::as_str)
        .and_then(|t| VPath::parse(t).ok())
        .map(|v| v.components().to_vec())
    else {
        return false;
    };
    let Some((leaf, parents)) = parts.split_last() else {
        return false;
    };
    let dir = if parents.is_empty() {
        Some(model.root())
    } else {
        match entry_at(model, parents) {
            Some(Entry::Dir(d)) => Some(d),
            _ => None,
        }
    };
    dir.is_some_and(|d| {
        !d.contains_key(leaf)
            && d.keys()
                .any(|k| k != leaf && k.to_lowercase() == leaf.to_lowercase())
    })
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

/// Whether a folder below `dir` is empty.
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

/// The planted names that are links, FIFOs or hard links (a handler may follow or read them;
/// the model refuses).
fn through_hazard(path: &str, hazards: &[&str]) -> bool {
    hazards
        .iter()
        .any(|h| path == *h || path.starts_with(&format!("{h}/")))
}

/// The other acceptable replies to a step whose model outcome is `o`. See the
/// [module docs](self).
/// `twin`: the command makes a name that differs from one already there only by case
/// ([`case_twin`]).
fn others(o: &Outcome, input: &Value, hazards: &[&str], twin: bool) -> Vec<(Reply, Branch)> {
    let names = paths(input);
    let mut v = Vec::new();
    // A name that differs from one already there only by case may be refused by a store whose
    // keys ignore case (as `certify`'s `alias/case/*` cases accept): what it then holds for
    // each spelling is not followed.
    if !o.is_error() && twin {
        v.push((Reply::AnyError, Branch::Unknown));
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

/// Plan `seq` on `branches` (missing ones are [`Branch::Model`]) in `profile`, as case
/// `fuzz/<id>`.
///
/// In black-box mode (`black_box`) nothing but the commands lays out the store: the layout is
/// left out, and the model stops following once it holds an empty folder (a handler without
/// folders of its own has none).
pub fn plan(
    seq: &Sequence,
    branches: &[Branch],
    profile: Profile,
    id: &str,
    black_box: bool,
) -> Plan {
    let mut model = Model::new(profile, Options::default(), DirSizes::Tmpfs);
    let mut setup = Vec::new();
    let mut hazards = Vec::new();
    for (i, item) in LAYOUT.iter().enumerate() {
        if black_box || seq.layout & (1 << i) == 0 {
            continue;
        }
        let (fs, path, entry) = planted(item);
        if !matches!(entry, Entry::File(_) | Entry::Dir(_)) {
            hazards.push(path);
        }
        if model.plant(path, entry).is_ok() {
            setup.push(fs);
        }
    }
    let mut steps = Vec::new();
    let mut plans = Vec::new();
    let mut known = true;
    // Folders a refused create or rename may have left (the SDKs make the parents first).
    let mut maybe: Vec<Left> = Vec::new();
    for (i, c) in seq
        .commands
        .iter()
        .take(crate::fuzz::sequence::MAX_COMMANDS)
        .enumerate()
    {
        let input = input_of(c);
        if meets_maybe(&input, &maybe) {
            // What is there depends on a leftover the model does not know: stop here.
            known = false;
            break;
        }
        // An insert of nothing or of newlines only, or into a file of newlines only: the
        // reference counts its lines one way, a handler may count another; the doc does not
        // say, so the model stops following here.
        let blank = |t: &[u8]| t.iter().all(|b| *b == b'\n' || *b == b'\r');
        let empty_insert = input.get("command").and_then(Value::as_str) == Some("insert")
            && (input
                .get("insert_text")
                .and_then(Value::as_str)
                .is_some_and(|t| blank(t.as_bytes()))
                || file_at(&model, &input).is_some_and(blank));
        let before = model.clone();
        let twin = case_twin(&before, &input);
        let outcome = model.outcome(&input);
        let branch = branches.get(i).copied().unwrap_or(Branch::Model);
        if outcome.is_error() || branch == Branch::Refused {
            maybe.extend(missing_parents(&before, &input));
        }
        match branch {
            Branch::Model => {}
            Branch::Refused => model = before,
            Branch::Overwrite => {
                model = before;
                let path = input.get("path").cloned().unwrap_or(Value::Null);
                model.outcome(&json!({"command": "delete", "path": path}));
                model.outcome(&input);
            }
            Branch::Unknown => known = false,
        }
        let others = others(&outcome, &input, &hazards, twin);
        let mut accept = vec![Accept {
            verdict: Verdict::Pass,
            reply: Reply::Exact(outcome.clone()),
            profiles: Vec::new(),
            note: "as the documented model answers".into(),
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
        if !known
            || empty_insert
            || model.uncovered().is_some()
            || (black_box && has_empty_dir(model.root()))
        {
            known = false;
            break;
        }
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
    }
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
            Some(Check {
                what: if left_folder {
                    format!("{path} is absent (no folder is left by a refused command)")
                } else {
                    format!("{path} is as the documented model leaves it")
                },
                path,
                expect,
                verdict: if left_folder {
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
    use crate::fuzz::sequence::{PathSpec, PathToken, TextSpec};

    fn at(tokens: Vec<PathToken>) -> PathSpec {
        PathSpec {
            rooted: true,
            tokens,
        }
    }

    /// create, create again, view: the second create is FileExists with an overwrite branch;
    /// planned on that branch the view expects the second text and the check holds it.
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
                    path: PathSpec {
                        rooted: false,
                        tokens: vec![PathToken::Raw(spelling.into())],
                    },
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
    fn a_case_twin_may_be_refused() {
        let create = |p: &str| CommandSpec::Create {
            path: PathSpec {
                rooted: false,
                tokens: vec![PathToken::Raw(p.into())],
            },
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
    }

    /// A refused create leaves, at most, the folders before its last name, and for a spelling
    /// the model refuses every plain folder before a `.`, `..` or empty name.
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
        assert_eq!(left("/memories/memories/.."), [v(&["memories"])]);
        assert_eq!(left("/memories/a/x\u{0}.md"), [v(&["a"])]);
        assert_eq!(left("/memories/a.txt"), Vec::<Vec<String>>::new());
    }
}
