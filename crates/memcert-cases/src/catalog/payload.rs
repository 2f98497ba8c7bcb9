//! The traversal payload corpus (`attack::payloads`) as cases: one case per (payload, command
//! field) pair, id `payload/<payload id>/<field>`, for example
//! `payload/traversal/double-encoded/slash/depth-3/rename.new_path`.
//!
//! Every case plants `/memories/a.md` (the other side of a rename), sends the one command with
//! the payload in one field, and leaves the rest to the oracle: any read, write, move or delete
//! outside the root is UNSAFE whatever the reply says. In the fields that make a new name the
//! payload aims at a fresh name beside the canary ([`aimed`]).
//!
//! Grading of the reply, by payload:
//! - A spelling POSIX resolves as written (a real `..`, see `Payload::real`) or a path that is not
//!   under `/memories/` at all (family `prefix`, `bug:B02`, `bug:B03`): SHOULD be refused; a success that stays
//!   inside the root is NON-STRICT (as the hand-written `path/dotdot/stays-inside` and
//!   `path/prefix/*` cases grade it).
//! - A root alias in `view` (`/memories/a/..` and the like) may be listed as the root: PASS.
//! - Every other spelling (encoded, look-alike, backslash, control, Windows names, root aliases,
//!   the check/use spellings of families `trim`, `ignorable` and `slug`,
//!   long names) is only dangerous after a decoding or normalising step: refusing it is PASS, a
//!   success (taken as a literal name inside the store) is INFO, as bug:B19, bug:B20, bug:B21 allow.
//! - `/memories/a.md` must keep its content (except for `rename.new_path`, whose success
//!   rightly moves it): a root alias that deletes or overwrites the store is UNSAFE (data
//!   destroyed), as in the `root/delete/*` cases.
//!
//! Levels choose which pairs run (see [`RunLevel`]); the choice is a fixed rotation over the
//! corpus, never random, so a case id means the same input on every run and machine.

use super::{refused, success_is, B};
use crate::payloads::{corpus, Field, Payload};
use crate::{verdict::Verdict, Case, Expected, Level};

/// How many cases a `certify` run holds: the hand-written catalog always, plus a share of the
/// payload corpus x command fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum RunLevel {
    /// A sample of every family: every `..` spelling twice and every separator spelling once
    /// (depth and field rotating), every other payload once (field rotating), every check/use
    /// spelling once (depth and field rotating). About 300 cases in all.
    Quick,
    /// The default: every (dot, separator) pair of the grammar and every check/use spelling at 4
    /// of its 56 (depth, field) combinations, every other payload in all 7 fields. About 2,000
    /// cases in all.
    #[default]
    Standard,
    /// Every payload in every field: the whole corpus (over 20,000 cases).
    Full,
}

impl RunLevel {
    /// All levels, smallest first.
    pub const ALL: [RunLevel; 3] = [RunLevel::Quick, RunLevel::Standard, RunLevel::Full];

    /// `quick`, `standard` or `full`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunLevel::Quick => "quick",
            RunLevel::Standard => "standard",
            RunLevel::Full => "full",
        }
    }
}

impl std::str::FromStr for RunLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        RunLevel::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("unknown level {s:?}; use quick, standard or full"))
    }
}

impl std::fmt::Display for RunLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The (payload, field) pairs a level runs, in corpus order.
pub fn pairs(level: RunLevel) -> Vec<(Payload, Field)> {
    let all = corpus();
    pair_indices(level, &all)
        .into_iter()
        .filter_map(|(i, f)| Some((all.get(i)?.clone(), f)))
        .collect()
}

/// [`pairs`] as indices into `corpus` (which must be [`corpus`]), in the same order: what a
/// level runs without a copy of each payload per field (`crate::list::Cases`).
pub fn pair_indices(level: RunLevel, corpus: &[Payload]) -> Vec<(usize, Field)> {
    let fields = Field::ALL.len();
    // The corpus lists the traversal payloads by (dot, separator) spelling, depths in order,
    // then the other families.
    let (spellings, rest): (Vec<usize>, Vec<usize>) =
        (0..corpus.len()).partition(|&i| corpus[i].spelling.is_some());
    let (traversal, others): (Vec<usize>, Vec<usize>) =
        rest.into_iter().partition(|&i| corpus[i].dot.is_some());
    // The check/use spellings by spelling, depths in order: like a traversal group each.
    let spelled: Vec<&[usize]> = spellings
        .chunk_by(|&a, &b| {
            corpus[a].family == corpus[b].family && corpus[a].spelling == corpus[b].spelling
        })
        .collect();
    let groups: Vec<&[usize]> = traversal
        .chunk_by(|&a, &b| corpus[a].dot == corpus[b].dot && corpus[a].slash == corpus[b].slash)
        .collect();
    // Combination `c` of a group: depth `c / 7`, field `c % 7`.
    let pair = |group: &[usize], c: usize| (group[c / fields], Field::ALL[c % fields]);
    let every_field = |&p: &usize| Field::ALL.map(|f| (p, f));
    match level {
        RunLevel::Full => traversal
            .iter()
            .chain(&others)
            .chain(&spellings)
            .flat_map(every_field)
            .collect(),
        RunLevel::Standard => {
            let mut out = Vec::new();
            for (k, group) in groups.iter().enumerate() {
                let combos = group.len() * fields;
                let step = (combos / 4).max(1);
                let mut picked: Vec<usize> = (0..4.min(combos))
                    .map(|j| (k * 13 + j * step) % combos)
                    .collect();
                picked.sort_unstable();
                picked.dedup();
                out.extend(picked.into_iter().map(|c| pair(group, c)));
            }
            out.extend(others.iter().flat_map(every_field));
            // Each check/use spelling at 4 of its (depth, field) combinations, as a traversal
            // group, but with a step one longer, so that the field changes with the depth.
            for (k, group) in spelled.iter().enumerate() {
                let combos = group.len() * fields;
                let step = combos / 4 + 1;
                let mut picked: Vec<usize> = (0..4.min(combos))
                    .map(|j| (k * 13 + j * step) % combos)
                    .collect();
                picked.sort_unstable();
                picked.dedup();
                out.extend(picked.into_iter().map(|c| pair(group, c)));
            }
            out
        }
        RunLevel::Quick => {
            // Every dot spelling twice and every separator spelling once, rotating the partner
            // spelling, the depth and the field.
            let g = crate::payloads::grammar();
            let mut chosen: Vec<(usize, usize)> = Vec::new(); // (group, combination)
            let mut n = 0usize;
            let mut pick = |is: &dyn Fn(&Payload) -> bool| {
                let candidates: Vec<usize> = (0..groups.len())
                    .filter(|&i| is(&corpus[groups[i][0]]))
                    .collect();
                if let Some(&i) = candidates.get(n % candidates.len().max(1)) {
                    chosen.push((i, (n * 13) % (groups[i].len() * fields)));
                    n += 1;
                }
            };
            for d in &g.dot {
                pick(&|p| p.dot.as_ref() == Some(&d.name));
                pick(&|p| p.dot.as_ref() == Some(&d.name));
            }
            for s in &g.slash {
                pick(&|p| p.slash.as_ref() == Some(&s.name));
            }
            chosen.sort_unstable();
            chosen.dedup();
            let mut out: Vec<_> = chosen
                .into_iter()
                .map(|(i, c)| pair(groups[i], c))
                .collect();
            out.extend(
                others
                    .into_iter()
                    .enumerate()
                    .map(|(i, p)| (p, Field::ALL[i % fields])),
            );
            // Each check/use spelling once, depth and field rotating.
            out.extend(
                spelled
                    .iter()
                    .enumerate()
                    .map(|(k, group)| pair(group, (k * 9) % (group.len() * fields))),
            );
            out
        }
    }
}

/// The case id of a pair: `payload/<payload id>/<field>`.
pub fn case_id(p: &Payload, f: Field) -> String {
    format!("payload/{}/{}", p.id, f.as_str())
}

/// One (payload, field) pair as a case. See the module docs for the grading.
pub fn case(p: &Payload, f: Field) -> Case {
    let must_refuse = p.real || p.family == "prefix";
    let (level, requirement, accept) = if p.family == "root-alias" && f == Field::ViewPath {
        (
            Level::Must,
            "A spelling of the root MAY be refused or listed as the root, and nothing outside the root may be read.",
            vec![
                refused(),
                success_is(Verdict::Pass, "listed as the root (or a literal name inside)"),
            ],
        )
    } else if must_refuse {
        (
            Level::Should,
            "A path that names something outside /memories as written (a real .. or a sibling prefix) SHOULD be refused even when the handler keeps it inside, and nothing outside the root may be read or written (MUST, judged by the oracle).",
            vec![
                refused(),
                success_is(
                    Verdict::NonStrict,
                    "accepted a path that names something outside /memories; it stayed inside the root",
                ),
            ],
        )
    } else {
        (
            Level::Must,
            "An encoded, look-alike, aliased or unusual path MUST NOT reach outside the root; refusing it is best, a literal name inside the store is allowed.",
            vec![
                refused(),
                success_is(Verdict::Info, "taken as a literal name inside the store"),
            ],
        )
    };
    let source: Vec<&str> = p.source.iter().map(String::as_str).collect();
    let mut b = B::new(&case_id(p, f), level, requirement, &source)
        .file("/memories/a.md", "a\n")
        .send(f.input(&aimed(p, f)), accept);
    if f != Field::RenameNewPath {
        // Losing a file the command did not name is data destroyed, UNSAFE, as in the root
        // cases (`root/delete/*`): the same effect has the same verdict in every case.
        b = b.check(
            "/memories/a.md",
            Expected::File(b"a\n".to_vec()),
            Verdict::Unsafe,
            super::STORE_SURVIVES,
        );
    }
    let mut case = b.done();
    case.defined = p.defined.clone();
    case
}

/// The payload's path as sent in field `f`. The fields that make a new name (`create.path`,
/// `rename.new_path`) fail on an existing one, so there a payload aimed at a canary file
/// (`.../canary.txt`, `.../secret.txt`) is aimed at a fresh name beside it (`.../pwned.txt`): an
/// escape then shows as a new file outside, not as an "already exists" refusal.
pub fn aimed(p: &Payload, f: Field) -> String {
    match f {
        Field::CreatePath | Field::RenameNewPath => ["canary.txt", "secret.txt"]
            .iter()
            .find_map(|name| p.text.strip_suffix(name))
            .map(|dir| format!("{dir}pwned.txt"))
            .unwrap_or_else(|| p.text.clone()),
        _ => p.text.clone(),
    }
}

/// The payload cases of a level, in corpus order.
pub fn cases(level: RunLevel) -> Vec<Case> {
    pairs(level).iter().map(|(p, f)| case(p, *f)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::collections::HashSet;

    #[test]
    fn level_sizes() {
        let n = |l| pairs(l).len();
        let corpus = corpus().len();
        assert_eq!(n(RunLevel::Full), corpus * 7);
        assert_eq!(n(RunLevel::Full), 21_763);
        assert_eq!(n(RunLevel::Standard), 1_743);
        assert_eq!(n(RunLevel::Quick), 108);
    }

    #[test]
    fn levels_nest_and_ids_are_unique() {
        let ids = |l| -> HashSet<String> { pairs(l).iter().map(|(p, f)| case_id(p, *f)).collect() };
        let (q, s, f) = (
            ids(RunLevel::Quick),
            ids(RunLevel::Standard),
            ids(RunLevel::Full),
        );
        assert_eq!(f.len(), pairs(RunLevel::Full).len());
        assert_eq!(s.len(), pairs(RunLevel::Standard).len());
        assert_eq!(q.len(), pairs(RunLevel::Quick).len());
        assert!(s.is_subset(&f));
        assert!(q.is_subset(&f));
    }

    #[test]
    fn every_spelling_family_and_field_is_in_quick() {
        let g = crate::payloads::grammar();
        let quick = pairs(RunLevel::Quick);
        for d in &g.dot {
            let n = quick
                .iter()
                .filter(|(p, _)| p.dot.as_deref() == Some(&d.name))
                .count();
            assert!(n >= 2, "dot {} appears {n} times", d.name);
        }
        for s in &g.slash {
            assert!(
                quick
                    .iter()
                    .any(|(p, _)| p.slash.as_deref() == Some(&s.name)),
                "slash {}",
                s.name
            );
        }
        for e in &g.extra {
            let id = format!("{}/{}", e.family, e.id);
            assert!(quick.iter().any(|(p, _)| p.id == id), "{id}");
        }
        for s in &g.spelling {
            let n = quick
                .iter()
                .filter(|(p, _)| p.family == s.family && p.spelling.as_deref() == Some(&s.name))
                .count();
            assert_eq!(n, 1, "spelling {}/{}", s.family, s.name);
        }
        let fields: HashSet<_> = quick.iter().map(|(_, f)| *f).collect();
        assert_eq!(fields.len(), 7);
        let depths: HashSet<_> = quick.iter().filter_map(|(p, _)| p.depth).collect();
        assert_eq!(depths.len(), 8);
    }

    #[test]
    fn standard_runs_every_spelling_pair_four_times_and_others_in_every_field() {
        let standard = pairs(RunLevel::Standard);
        let mut per_pair: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (p, _) in &standard {
            if let (Some(d), Some(s)) = (&p.dot, &p.slash) {
                *per_pair.entry((d.clone(), s.clone())).or_default() += 1;
            }
        }
        assert!(per_pair.values().all(|&n| n == 4), "{per_pair:?}");
        let others = standard
            .iter()
            .filter(|(p, _)| p.dot.is_none() && p.spelling.is_none())
            .count();
        assert_eq!(others % 7, 0);
        let mut per_spelling: BTreeMap<String, usize> = BTreeMap::new();
        for (p, _) in &standard {
            if let Some(s) = &p.spelling {
                *per_spelling.entry(format!("{}/{s}", p.family)).or_default() += 1;
            }
        }
        assert_eq!(
            per_spelling.len(),
            crate::payloads::grammar().spelling.len()
        );
        assert!(per_spelling.values().all(|&n| n == 4), "{per_spelling:?}");
    }

    #[test]
    fn grading_follows_the_payload() {
        let all = corpus();
        let get = |id: &str| all.iter().find(|p| p.id == id).unwrap().clone();
        let real = case(&get("traversal/plain/slash/depth-2"), Field::CreatePath);
        assert_eq!(real.id, "payload/traversal/plain/slash/depth-2/create.path");
        assert_eq!(real.steps[0].accept.len(), 2);
        assert_eq!(real.steps[0].accept[1].verdict, Verdict::NonStrict);
        assert_eq!(real.checks.len(), 1);
        assert_eq!(
            real.steps[0].input["path"],
            "/memories/../../{DOWN:2}outside/pwned.txt"
        );
        let drive = case(&get("absolute/drive-letter"), Field::CreatePath);
        assert_eq!(
            drive.steps[0].input["path"],
            "/memories/C:\\outside\\pwned.txt"
        );
        let newline = case(&get("control/newline"), Field::CreatePath);
        assert_eq!(newline.steps[0].input["path"], "/memories/new\nline.txt");
        let view = case(&get("traversal/plain/slash/depth-2"), Field::ViewPath);
        assert_eq!(
            view.steps[0].input["path"],
            "/memories/../../{DOWN:2}outside/canary.txt"
        );
        let prefix = case(&get("prefix/underscore-sibling"), Field::ViewPath);
        assert_eq!(prefix.steps[0].accept[1].verdict, Verdict::NonStrict);
        let alias = case(&get("root-alias/child-dotdot"), Field::ViewPath);
        assert_eq!(alias.steps[0].accept[1].verdict, Verdict::Pass);
        let alias = case(&get("root-alias/child-dotdot"), Field::DeletePath);
        assert_eq!(alias.steps[0].accept[1].verdict, Verdict::NonStrict);
        let encoded = case(
            &get("traversal/encoded-lower/slash/depth-1"),
            Field::RenameNewPath,
        );
        assert_eq!(encoded.steps[0].accept.len(), 2);
        assert_eq!(encoded.steps[0].accept[1].verdict, Verdict::Info);
        assert!(encoded.checks.is_empty());
        assert_eq!(encoded.steps[0].input["old_path"], "/memories/a.md");
        let trim = case(&get("trim/trailing-space/depth-2"), Field::ViewPath);
        assert_eq!(trim.id, "payload/trim/trailing-space/depth-2/view.path");
        assert_eq!(
            trim.steps[0].input["path"],
            "/memories/.. /.. /{DOWN:2}outside/canary.txt"
        );
        assert_eq!(trim.steps[0].accept[1].verdict, Verdict::Info);
        assert_eq!(trim.source, ["bug:B22"]);
        let slug = case(&get("slug/underscore-separator/depth-1"), Field::CreatePath);
        assert_eq!(
            slug.steps[0].input["path"],
            "/memories/.._{DOWN:1}outside/pwned.txt"
        );
    }
}
