//! Inputs for `memcert fuzz`: random [`Sequence`]s from a seeded RNG, and mutations of the
//! sequences the corpus keeps.
//!
//! The draw is biased towards what reaches deep: mostly plain names from a small set (so that
//! commands meet each other's files), command chains that reuse an earlier command's path
//! (create, edit, rename, view, delete, view again), and now and then a spelling from the
//! traversal grammar ([`PathToken`]), a name that collides with another under a common
//! normalisation ([`COLLIDING`]) or a planted hazard ([`LAYOUT`](super::super::sequence::LAYOUT)).

use super::plan::{DEVICE_BIT, DEVICE_PATH, HUGE_BIT, HUGE_PATH, NFD_LINK_BIT, NFD_LINK_PATH};
use crate::fuzz::sequence::{
    CommandSpec, PathSpec, PathToken, Plant, Sequence, TextSpec, LAYOUT, MAX_COMMANDS,
};

/// Names that collide with another under a common normalisation: case folding, Unicode NFC
/// and NFKC, trailing dots and spaces (Windows), full-width forms. Each is `/` and a name.
pub const COLLIDING: [&str; 10] = [
    "/A.txt",
    "/a.TXT",
    "/caf\u{e9}.md",
    "/cafe\u{301}.md",
    "/a.txt.",
    "/a.txt ",
    "/\u{ff41}.txt",
    "/D",
    "/d.",
    "/new/x.md",
];

/// Indices into [`NAMES`](crate::fuzz::sequence::NAMES) of the plain names most draws use:
/// `a.txt`, `d`, `b.txt`, `e`, `new`, `canary.txt`.
const PLAIN: [u8; 6] = [0, 1, 2, 13, 16, 17];

/// Indices into [`NAMES`](crate::fuzz::sequence::NAMES) of the planted links, FIFO and hard
/// link: `in`, `rel`, `out`, `up`, `dang`, `fifo`, `hard.txt`, `loop`.
const HAZARDS: [u8; 8] = [3, 4, 5, 6, 7, 8, 9, 14];

/// Most commands a drawn sequence has (a mutation may add up to [`MAX_COMMANDS`]).
const DRAWN_COMMANDS: usize = 8;

/// One path token: mostly a plain name, sometimes a hazard spelling.
fn token(rng: &mut fastrand::Rng) -> PathToken {
    match rng.u8(..100) {
        0..=69 => PathToken::Name(PLAIN[rng.usize(..PLAIN.len())]),
        70..=74 => PathToken::Name(HAZARDS[rng.usize(..HAZARDS.len())]),
        75..=77 => PathToken::Name(rng.u8(..)),
        78..=81 => PathToken::Raw(COLLIDING[rng.usize(..COLLIDING.len())].to_owned()),
        82..=84 => PathToken::DotDot,
        85..=86 => PathToken::Dot,
        87..=88 => PathToken::Slash,
        89..=90 => PathToken::Encoded(rng.u8(..)),
        91..=92 => PathToken::Lookalike(rng.u8(..)),
        93..=94 => PathToken::Backslash,
        95..=96 => PathToken::LongName(rng.u8(..)),
        97 => PathToken::Nul,
        _ => PathToken::Root,
    }
}

/// The payload corpus (`memcert payloads`) as the search draws from it, made once: the
/// traversals by (dot spelling, separator spelling, depth), the other families' texts apart.
///
/// Only texts that stay inside the worker's run folder: `{DOWN:1}` (the way down from the
/// root's parent, `base/`, to the sandbox) is empty and `{DOWN:2}` (from the run folder) is
/// `base/`, so an escape lands on the canaries one or two folders up, which the watch sees.
/// Texts of depth 3 or more are left out (they would aim above the run folder, where nothing is
/// watched and certify names the alias by its random name), as are those naming `{RUN}`,
/// `{BASE}` or `{ROOT}`: the model reads the same text the handler gets, and a saved finding
/// must replay in another sandbox. The exception is [`Payloads::absolute`].
struct Payloads {
    /// The dot spellings of `..`, `plain` first.
    dots: Vec<String>,
    /// The separator spellings, `slash` first.
    slashes: Vec<String>,
    /// Traversal texts by (dot, separator, depth 1 or 2).
    traversal: std::collections::HashMap<(String, String, u8), String>,
    /// Every other text (check/use spellings of `..`, prefixes, root aliases, control
    /// characters, Windows names, long names).
    others: Vec<String>,
    /// The absolute ones ([`absolute_text`]): `/memories//` and an absolute host path, left
    /// with their `{DOWN:d}` for the runner to fill in (`certify::instantiate_in`, through the
    /// sandbox's alias, whose canaries are watched as the outside is). The model refuses them
    /// by their empty name right after the root, whatever the filled-in part says, and a saved
    /// finding names the alias of whichever sandbox replays it.
    absolute: Vec<String>,
}

/// Whether a payload text is an absolute host path below `/memories//` whose only unfilled
/// parts are `{DOWN:d}` (the `absolute/double-slash-run` extra, bug:B03): a handler that joins
/// the rest below the root as is (`os.path.join(root, "/tmp/...")`) reaches the sandbox's
/// alias; the model and a careful handler refuse the empty name.
fn absolute_text(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("/memories//") else {
        return false;
    };
    let mut t = rest.to_owned();
    while let Some(i) = t.find("{DOWN:") {
        let Some(end) = t[i..].find('}').map(|j| i + j + 1) else {
            return false;
        };
        if t[i + 6..end - 1].parse::<u8>().is_err() {
            return false;
        }
        t.replace_range(i..end, "");
    }
    t != rest && !t.contains('{') && !t.starts_with('/')
}

fn payloads() -> &'static Payloads {
    static ALL: std::sync::OnceLock<Payloads> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = Payloads {
            dots: Vec::new(),
            slashes: Vec::new(),
            traversal: std::collections::HashMap::new(),
            others: Vec::new(),
            absolute: Vec::new(),
        };
        for p in crate::suite::payloads::corpus() {
            let Some(text) = fill_down(&p.text).filter(|t| !t.contains('{')) else {
                if absolute_text(&p.text) {
                    all.absolute.push(p.text);
                }
                continue;
            };
            match (p.dot, p.slash, p.depth) {
                (Some(dot), Some(slash), Some(depth)) => {
                    if !all.dots.contains(&dot) {
                        all.dots.push(dot.clone());
                    }
                    if !all.slashes.contains(&slash) {
                        all.slashes.push(slash.clone());
                    }
                    all.traversal.insert((dot, slash, depth), text);
                }
                _ => all.others.push(text),
            }
        }
        all
    })
}

/// The search's built-in first inputs (`memcert fuzz` runs them before its corpus and its
/// draws, outside black-box mode; [`black_box_seeds`] in it): one `view` through each
/// traversal spelling of depth 1 whose dot spelling or separator is the plain one, every dot
/// spelling with `/` and every separator with `..` (38 inputs), each aimed at the outside
/// canary; then a `view` of the outside canary by its absolute host path below `/memories//`
/// ([`black_box_seeds`], 1 input); then a `view` of the planted huge file ([`HUGE_BIT`]) and
/// one of the planted character device ([`DEVICE_BIT`], run without it where none can be
/// planted) (2 inputs). A flaw that lets one odd spelling of `..` or `/` through
/// (`%u002e%u002e/`, `..\`), joins an absolute rest as is, or reads a huge file or a device
/// without bound is then met in the first few dozen sequences, wherever the random draws go
/// after; a flaw that only writes through one is left to the draws.
pub fn seeds() -> Vec<Sequence> {
    let mut seeds = traversal_seeds();
    seeds.extend(black_box_seeds());
    for (bit, path) in [(HUGE_BIT, HUGE_PATH), (DEVICE_BIT, DEVICE_PATH)] {
        seeds.push(one_view(0b11 | (1 << bit), path));
    }
    seeds
}

/// A built-in input: one `view` of `path` over `layout`.
fn one_view(layout: u32, path: &str) -> Sequence {
    Sequence {
        layout,
        profile: 0,
        commands: vec![CommandSpec::View {
            path: PathSpec::raw(path),
            range: None,
        }],
    }
}

/// The built-in first inputs of black-box mode (`--memory-dir-unknown`), where nothing is
/// planted and the store may be anywhere: a `view` of the outside canary by each absolute
/// spelling of the payload corpus (`/memories//{DOWN:99}outside/canary.txt`, the runner filling
/// in the absolute host path of the sandbox's alias), which names it wherever the handler keeps
/// its store (1 input).
pub fn black_box_seeds() -> Vec<Sequence> {
    payloads()
        .absolute
        .iter()
        .filter(|text| text.ends_with("canary.txt"))
        .map(|text| one_view(0b11, text))
        .collect()
}

/// The traversal seeds of [`seeds`] (38).
fn traversal_seeds() -> Vec<Sequence> {
    let all = payloads();
    let (Some(dot), Some(slash)) = (all.dots.first(), all.slashes.first()) else {
        return Vec::new();
    };
    let pairs = all
        .dots
        .iter()
        .map(|d| (d, slash))
        .chain(all.slashes.iter().skip(1).map(|s| (dot, s)));
    pairs
        .filter_map(|(d, s)| all.traversal.get(&(d.clone(), s.clone(), 1)))
        .filter(|text| text.ends_with("canary.txt"))
        .map(|text| one_view(0b11, text))
        .collect()
}

/// `text` with `{DOWN:1}` and `{DOWN:2}` filled in for the run folder's layout (`base/memories`),
/// or `None` when it names a deeper one.
fn fill_down(text: &str) -> Option<String> {
    let mut t = text.to_owned();
    while let Some(i) = t.find("{DOWN:") {
        let end = t[i..].find('}').map_or(t.len(), |j| i + j + 1);
        let way = match &t[i..end] {
            "{DOWN:1}" => "",
            "{DOWN:2}" => "base/",
            _ => return None,
        };
        t.replace_range(i..end, way);
    }
    Some(t)
}

/// A fresh path: one of the payload corpus's spellings (12%: encoded, look-alike, trimmed;
/// see [`payload`]), else
/// `/memories` (nearly always) and one to three tokens.
fn path(rng: &mut fastrand::Rng) -> PathSpec {
    if rng.u8(..100) < 12 {
        if let Some(p) = payload(rng) {
            return p;
        }
    }
    PathSpec {
        rooted: rng.u8(..50) != 0,
        tokens: (0..rng.usize(1..=3)).map(|_| token(rng)).collect(),
    }
}

/// One of the payload corpus's spellings ([`Payloads`]), as a whole path: 70% a traversal of
/// depth 1 or 2 whose dot spelling is plain `..` 30% of the time (else any) and whose
/// separator is plain `/` 30% of the time (else any), because a flaw usually lets through one
/// odd spelling next to a plain one (`..\`, `%2e%2e/`); else any text of the other families,
/// the absolute ones ([`Payloads::absolute`]) among them (one draw over both lists).
fn payload(rng: &mut fastrand::Rng) -> Option<PathSpec> {
    let all = payloads();
    let pick = |rng: &mut fastrand::Rng, v: &'static [String]| -> Option<&'static String> {
        if v.is_empty() {
            None
        } else if rng.u8(..10) < 3 {
            v.first()
        } else {
            v.get(rng.usize(..v.len()))
        }
    };
    let text = if rng.u8(..10) < 7 || all.others.is_empty() {
        let dot = pick(rng, &all.dots)?.clone();
        let slash = pick(rng, &all.slashes)?.clone();
        all.traversal.get(&(dot, slash, rng.u8(1..=2)))?
    } else {
        let i = rng.usize(..all.others.len() + all.absolute.len());
        all.others
            .get(i)
            .or_else(|| all.absolute.get(i - all.others.len()))?
    };
    Some(PathSpec::raw(text.clone()))
}

/// When there is an earlier command: its path (45%), that path's parent (20%: a folder
/// deleted or renamed under files a command met) or a child of it (15%); else a fresh path.
fn reused_path(rng: &mut fastrand::Rng, earlier: &[CommandSpec]) -> PathSpec {
    let seen: Vec<&PathSpec> = earlier.iter().flat_map(CommandSpec::paths).collect();
    if seen.is_empty() {
        return path(rng);
    }
    let mut p = seen[rng.usize(..seen.len())].clone();
    match rng.u8(..100) {
        0..=44 => p,
        45..=64 if p.tokens.len() > 1 => {
            p.tokens.pop();
            p
        }
        65..=79 if p.tokens.len() < 4 => {
            p.tokens
                .push(PathToken::Name(PLAIN[rng.usize(..PLAIN.len())]));
            p
        }
        _ => path(rng),
    }
}

fn text(rng: &mut fastrand::Rng) -> TextSpec {
    TextSpec::Fixed(rng.u8(..))
}

/// The commands a chain sends on one path, with what each needs drawn from `rng` in this
/// order.
#[derive(Clone, Copy)]
enum On {
    View,
    Create,
    StrReplace,
    Insert,
    Delete,
}

/// `op` on `p`: a whole view, a create or str_replace of fixed texts, an insert at line 0-2.
fn on(rng: &mut fastrand::Rng, op: On, p: PathSpec) -> CommandSpec {
    match op {
        On::View => CommandSpec::View {
            path: p,
            range: None,
        },
        On::Create => CommandSpec::Create {
            path: p,
            text: text(rng),
        },
        On::StrReplace => CommandSpec::StrReplace {
            path: p,
            old: text(rng),
            new: text(rng),
        },
        On::Insert => CommandSpec::Insert {
            path: p,
            line: rng.i8(0..3),
            text: text(rng),
        },
        On::Delete => CommandSpec::Delete { path: p },
    }
}

/// One command whose paths may reuse those of `earlier`.
fn command(rng: &mut fastrand::Rng, earlier: &[CommandSpec]) -> CommandSpec {
    let p = reused_path(rng, earlier);
    match rng.u8(..12) {
        0..=2 => CommandSpec::View {
            path: p,
            range: if rng.u8(..4) == 0 {
                Some((rng.i8(-1..5), rng.i8(-1..5)))
            } else {
                None
            },
        },
        3..=4 => CommandSpec::Create {
            path: p,
            text: text(rng),
        },
        5..=6 => CommandSpec::StrReplace {
            path: p,
            old: text(rng),
            new: text(rng),
        },
        7 => CommandSpec::Insert {
            path: p,
            line: rng.i8(-1..5),
            text: text(rng),
        },
        8..=9 => CommandSpec::Delete { path: p },
        _ => CommandSpec::Rename {
            old: p,
            new: reused_path(rng, earlier),
        },
    }
}

/// A fresh sequence: a chain (a third of the time, [`chain`]), or a layout (half the time
/// just `a.txt` and `d/b.txt`, else any of the planted hazards) and two to [`DRAWN_COMMANDS`]
/// commands.
pub fn sequence(rng: &mut fastrand::Rng) -> Sequence {
    if rng.u8(..3) == 0 {
        return chain(rng);
    }
    let mut commands = Vec::new();
    for _ in 0..rng.usize(2..=DRAWN_COMMANDS) {
        let c = command(rng, &commands);
        commands.push(c);
    }
    Sequence {
        layout: if rng.bool() {
            0b11
        } else {
            u32::from(rng.u16(..))
        },
        profile: 0,
        commands,
    }
}

/// A chain (a third of fresh draws): a third of the time on a planted hazard
/// ([`hazard_chain`]), a sixth on two twins ([`twin_chain`]), else over one file and its folder:
/// the file made, then three to five commands on the file, its folder, or where a rename moved
/// either (create, edit, rename, view, delete, view again), so that state a handler keeps from
/// one command to the next is met.
fn chain(rng: &mut fastrand::Rng) -> Sequence {
    match rng.u8(..6) {
        0..=1 => return hazard_chain(rng),
        2 => return twin_chain(rng),
        _ => {}
    }
    let name = |rng: &mut fastrand::Rng| PathToken::Name(PLAIN[rng.usize(..PLAIN.len())]);
    let folder = PathSpec {
        rooted: true,
        tokens: vec![name(rng)],
    };
    let mut file = folder.clone();
    file.tokens.push(name(rng));
    let mut places = vec![folder, file.clone()];
    let mut commands = vec![CommandSpec::Create {
        path: file,
        text: TextSpec::Fixed(rng.u8(..)),
    }];
    for _ in 0..rng.usize(3..=5) {
        let p = places[rng.usize(..places.len())].clone();
        let c = match rng.u8(..8) {
            0..=1 => on(rng, On::View, p),
            2 => on(rng, On::StrReplace, p),
            3 => on(rng, On::Insert, p),
            4 => on(rng, On::Delete, p),
            5 => on(rng, On::Create, p),
            _ => {
                let mut to = p.clone();
                to.tokens.pop();
                to.tokens.push(name(rng));
                let mut moved = to.clone();
                moved.tokens.push(name(rng));
                places.push(to.clone());
                places.push(moved);
                CommandSpec::Rename { old: p, new: to }
            }
        };
        commands.push(c);
    }
    Sequence {
        layout: 0,
        profile: 0,
        commands,
    }
}

/// Pairs of names that a store keying its content by a lossy form of the name (case folded,
/// Unicode-normalised, trimmed, slugged, flattened) maps to one key, though the doc makes them
/// two files.
pub const TWINS: [(&str, &str); 6] = [
    ("/memories/Notes.md", "/memories/notes.md"),
    ("/memories/caf\u{e9}.md", "/memories/cafe\u{301}.md"),
    ("/memories/a.md", "/memories/a.md "),
    ("/memories/a.b", "/memories/a_b"),
    ("/memories/a/b.md", "/memories/a_b.md"),
    ("/memories/x.md", "/memories/\u{ff58}.md"),
];

/// A chain on two twins ([`TWINS`], a sixth of chains): one made, the other made with another
/// text, then one or both viewed, edited or deleted, so that two names kept under one key show
/// (the second create overwrites the first's content).
fn twin_chain(rng: &mut fastrand::Rng) -> Sequence {
    let (a, b) = TWINS[rng.usize(..TWINS.len())];
    let (a, b) = if rng.bool() { (a, b) } else { (b, a) };
    let at = |p: &str| PathSpec::raw(p);
    let first = rng.u8(..);
    let mut commands = vec![
        CommandSpec::Create {
            path: at(a),
            text: TextSpec::Fixed(first),
        },
        CommandSpec::Create {
            path: at(b),
            text: TextSpec::Fixed(first.wrapping_add(1)),
        },
    ];
    for _ in 0..rng.usize(1..=2) {
        let p = at(if rng.bool() { a } else { b });
        commands.push(match rng.u8(..4) {
            0..=1 => on(rng, On::View, p),
            2 => on(rng, On::Delete, p),
            // The first twin's text, which the second may have overwritten.
            _ => CommandSpec::StrReplace {
                path: p,
                old: TextSpec::Fixed(first),
                new: text(rng),
            },
        });
    }
    Sequence {
        layout: 0,
        profile: 0,
        commands,
    }
}

/// Most tokens in one path the generator makes (a drawn path has up to 3, a reused one may
/// gain one more, a mutation changes tokens in place).
const MAX_TOKENS: usize = 8;

/// Whether `seq` is one the generator could have made: at most [`MAX_COMMANDS`] commands, at
/// most [`MAX_TOKENS`] tokens in a path, fixed texts only, and every raw spelling one of the
/// payload texts ([`payload`]), [`COLLIDING`], [`TWINS`] or a planted path. A corpus file
/// (`memcert fuzz --corpus`) is read only when it is: its paths then aim only where the
/// generator's do (never above the watched run folder), and its size is bounded.
pub fn drawable(seq: &Sequence) -> bool {
    let all = payloads();
    let known = |t: &str| {
        all.traversal.values().any(|p| p == t)
            || all.others.iter().any(|p| p == t)
            || all.absolute.iter().any(|p| p == t)
            || COLLIDING.contains(&t)
            || TWINS.iter().any(|(a, b)| *a == t || *b == t)
            || LAYOUT.iter().any(|p| planted_path(p) == t)
            || [DEVICE_PATH, NFD_LINK_PATH, HUGE_PATH].contains(&t)
    };
    let path_ok = |p: &PathSpec| {
        p.tokens.len() <= MAX_TOKENS
            && p.tokens.iter().all(|t| match t {
                PathToken::Raw(r) => known(r),
                _ => true,
            })
    };
    let text_ok = |t: &TextSpec| matches!(t, TextSpec::Fixed(_));
    seq.commands.len() <= MAX_COMMANDS
        && seq.commands.iter().all(|c| {
            c.paths().into_iter().all(path_ok)
                && match c {
                    CommandSpec::Create { text, .. } | CommandSpec::Insert { text, .. } => {
                        text_ok(text)
                    }
                    CommandSpec::StrReplace { old, new, .. } => text_ok(old) && text_ok(new),
                    _ => true,
                }
        })
}

/// The [`LAYOUT`] bits of the planted links, FIFO and hard link: `in`, `rel`, `out`, `d/up`,
/// `dang`, `fifo`, `hard.txt`, `d/e/loop`; then the search's own hazards beyond the layout, a
/// character device ([`DEVICE_BIT`]) and a link under an NFD name ([`NFD_LINK_BIT`]).
const HAZARD_BITS: [usize; 10] = [2, 3, 4, 5, 6, 7, 8, 12, DEVICE_BIT, NFD_LINK_BIT];

/// The path a hazard chain works on for layout bit `bit`: the [`LAYOUT`] item's, or the
/// search's own hazard's.
fn hazard_path(bit: usize) -> &'static str {
    match bit {
        DEVICE_BIT => DEVICE_PATH,
        NFD_LINK_BIT => NFD_LINK_PATH,
        HUGE_BIT => HUGE_PATH,
        _ => LAYOUT.get(bit).map_or(DEVICE_PATH, planted_path),
    }
}

/// The virtual path a [`LAYOUT`] item plants.
fn planted_path(p: &Plant) -> &'static str {
    match *p {
        Plant::Dir(path)
        | Plant::File(path, _)
        | Plant::LinkInside(path, _)
        | Plant::LinkOutside(path, _)
        | Plant::LinkRaw(path, _)
        | Plant::Fifo(path)
        | Plant::HardLinkOutside(path, _) => path,
    }
}

/// A chain on one planted hazard (a third of chains, [`chain`]): the layout's two files and the hazard,
/// then two to four commands of any kind on the hazard or a name below it (a link to a folder
/// leads somewhere), so that each command meets each kind of hazard: an insert through a hard
/// link, a view of a FIFO, a create below a link to the outside.
fn hazard_chain(rng: &mut fastrand::Rng) -> Sequence {
    let bit = HAZARD_BITS[rng.usize(..HAZARD_BITS.len())];
    let at = PathSpec::raw(hazard_path(bit));
    let mut commands = Vec::new();
    for _ in 0..rng.usize(2..=4) {
        let mut p = at.clone();
        if rng.u8(..3) == 0 {
            p.tokens
                .push(PathToken::Name(PLAIN[rng.usize(..PLAIN.len())]));
        }
        let c = match rng.u8(..6) {
            0 => on(rng, On::View, p),
            1 => on(rng, On::Create, p),
            2 => on(rng, On::StrReplace, p),
            3 => on(rng, On::Insert, p),
            4 => on(rng, On::Delete, p),
            _ => CommandSpec::Rename {
                old: p,
                new: PathSpec {
                    rooted: true,
                    tokens: vec![PathToken::Name(PLAIN[rng.usize(..PLAIN.len())])],
                },
            },
        };
        commands.push(c);
    }
    Sequence {
        layout: 0b11 | (1 << bit),
        profile: 0,
        commands,
    }
}

/// A variation of `seq`: one command replaced, removed or added (added ones reuse its paths),
/// a path token changed (a quarter of the time the whole path becomes a payload spelling), or a
/// layout item toggled.
pub fn mutate(rng: &mut fastrand::Rng, seq: &Sequence) -> Sequence {
    let mut s = seq.clone();
    let n = s.commands.len();
    match rng.u8(..6) {
        0 if n > 0 => {
            let i = rng.usize(..n);
            s.commands[i] = command(rng, &seq.commands);
        }
        1 if n > 1 => {
            s.commands.remove(rng.usize(..n));
        }
        2 => {
            if let Some(p) = s
                .commands
                .get_mut(rng.usize(..n.max(1)))
                .and_then(|c| c.paths_mut().into_iter().next())
            {
                if rng.u8(..4) == 0 {
                    if let Some(q) = payload(rng) {
                        *p = q;
                    }
                } else if p.tokens.is_empty() {
                    p.tokens.push(token(rng));
                } else {
                    let i = rng.usize(..p.tokens.len());
                    p.tokens[i] = token(rng);
                }
            }
        }
        3 => s.layout ^= 1 << rng.u32(..14),
        _ if n < MAX_COMMANDS => {
            let c = command(rng, &seq.commands);
            s.commands.insert(rng.usize(..=n), c);
        }
        _ => {}
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same seed draws the same sequences (`--seed N --jobs 1` is deterministic).
    #[test]
    fn one_seed_one_stream() {
        let draw = |seed| {
            let mut rng = fastrand::Rng::with_seed(seed);
            (0..20).map(|_| sequence(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
    }

    /// Draws reuse paths: in 500 sequences, most with two commands or more name a path an
    /// earlier command named.
    #[test]
    fn chains_reuse_paths() {
        let mut rng = fastrand::Rng::with_seed(1);
        let (mut multi, mut chained) = (0, 0);
        for _ in 0..500 {
            let s = sequence(&mut rng);
            if s.commands.len() < 2 {
                continue;
            }
            multi += 1;
            let rendered: Vec<Vec<String>> = s
                .commands
                .iter()
                .map(|c| c.paths().iter().map(|p| p.render()).collect())
                .collect();
            if rendered.iter().enumerate().any(|(i, ps)| {
                ps.iter()
                    .any(|p| rendered[..i].iter().flatten().any(|q| q == p))
            }) {
                chained += 1;
            }
        }
        assert!(chained * 2 > multi, "{chained} of {multi}");
    }

    /// The payload texts stay in the run folder: depth 1 and 2 filled in, deeper ones left out.
    #[test]
    fn payloads_aim_at_the_watched_canaries_only() {
        let all = payloads();
        let key = |d: &str, s: &str, n| (d.to_owned(), s.to_owned(), n);
        assert_eq!(all.dots[0], "plain");
        assert_eq!(all.slashes[0], "slash");
        assert_eq!(
            all.traversal[&key("plain", "slash", 1)],
            "/memories/../outside/canary.txt"
        );
        assert_eq!(
            all.traversal[&key("plain", "slash", 2)],
            "/memories/../../base/outside/canary.txt"
        );
        // 23 dot spellings, 16 separators, depths 1 and 2.
        assert_eq!((all.dots.len(), all.slashes.len()), (23, 16));
        assert_eq!(all.traversal.len(), 23 * 16 * 2);
        // The check/use spellings of `..` at depths 1 and 2 (trim 16, ignorable 16, slug 2)
        // and the 28 texts of the families without a depth (the absolute one naming `{RUN}`
        // left out).
        assert_eq!(all.others.len(), 16 + 16 + 2 + 28);
        assert!(all.others.contains(&"/memories/.".to_owned()));
        // The absolute one, its `{DOWN:99}` left for the runner (through the alias).
        assert_eq!(all.absolute, ["/memories//{DOWN:99}outside/canary.txt"]);
        assert!(absolute_text("/memories//{DOWN:3}outside/x"));
        assert!(!absolute_text("/memories//{RUN}/canary.txt"));
        assert!(!absolute_text("/memories//outside/canary.txt"));
        assert!(!absolute_text("/memories/{DOWN:99}outside/canary.txt"));
        assert!(!absolute_text("/memories//{DOWN:99}/{ROOT}"));
        // No payload of depth 3 or more is drawn, whatever its spelling.
        for p in crate::suite::payloads::corpus() {
            if p.depth.is_some_and(|d| d > 2) {
                assert_eq!(fill_down(&p.text), None, "{}", p.id);
            }
        }
        assert_eq!(
            fill_down("/memories/../../../{DOWN:3}outside/canary.txt"),
            None
        );
    }

    /// The hazard bits name every planted link, FIFO and hard link, and nothing else.
    #[test]
    fn hazard_bits_are_the_hazards() {
        let hazards: Vec<usize> = (0..LAYOUT.len())
            .filter(|&i| !matches!(LAYOUT[i], Plant::File(..) | Plant::Dir(_)))
            .collect();
        assert_eq!(hazards, HAZARD_BITS[..8]);
        assert_eq!(planted_path(&LAYOUT[8]), "/memories/hard.txt");
        assert_eq!(LAYOUT.len(), DEVICE_BIT);
        assert_eq!(hazard_path(DEVICE_BIT), "/memories/zero");
        assert_eq!(hazard_path(NFD_LINK_BIT), "/memories/cafe\u{301}");
        assert_eq!(hazard_path(HUGE_BIT), "/memories/huge.md");
    }

    /// Drawn and mutated sequences are drawable; one with an unknown raw spelling (a traversal
    /// deeper than the generator aims), a raw text or too many tokens is not.
    #[test]
    fn only_what_the_generator_makes_is_drawable() {
        let mut rng = fastrand::Rng::with_seed(3);
        let mut last = sequence(&mut rng);
        for _ in 0..2000 {
            let s = if rng.bool() {
                sequence(&mut rng)
            } else {
                mutate(&mut rng, &last)
            };
            assert!(drawable(&s), "{s:?}");
            last = s;
        }
        let one = |path: PathSpec, text: TextSpec| Sequence {
            layout: 0,
            profile: 0,
            commands: vec![CommandSpec::Create { path, text }],
        };
        let raw = |t: &str| PathSpec::raw(t);
        assert!(drawable(&one(
            raw("/memories/../outside/canary.txt"),
            TextSpec::Fixed(1)
        )));
        assert!(!drawable(&one(
            raw("/memories/../../../outside/canary.txt"),
            TextSpec::Fixed(1)
        )));
        assert!(!drawable(&one(
            raw("/memories/a.md"),
            TextSpec::Raw("x".into())
        )));
        assert!(!drawable(&one(
            PathSpec {
                rooted: true,
                tokens: vec![PathToken::Name(0); MAX_TOKENS + 1],
            },
            TextSpec::Fixed(1),
        )));
    }

    /// The built-in first inputs: 38 views, each through a depth-1 traversal to the outside
    /// canary, every dot spelling with `/` then every other separator with `..`; then one by the
    /// absolute host path (black-box mode's only one), one of the planted huge file and one of
    /// the planted device; all drawable.
    #[test]
    fn the_seeds_are_one_view_per_plain_beside_odd_spelling() {
        let seeds = seeds();
        assert_eq!(seeds.len(), 41);
        let path = |s: &Sequence| match &s.commands[..] {
            [CommandSpec::View { path, range: None }] => path.render(),
            other => panic!("{other:?}"),
        };
        assert_eq!(path(&seeds[0]), "/memories/../outside/canary.txt");
        assert!(seeds.iter().all(drawable));
        assert!(seeds
            .iter()
            .any(|s| path(s) == "/memories/%u002e%u002e/outside/canary.txt"));
        let distinct: std::collections::BTreeSet<String> = seeds.iter().map(path).collect();
        assert_eq!(distinct.len(), 41);
        assert_eq!(path(&seeds[38]), "/memories//{DOWN:99}outside/canary.txt");
        assert_eq!(black_box_seeds(), seeds[38..39]);
        assert_eq!(
            (path(&seeds[39]).as_str(), seeds[39].layout),
            ("/memories/huge.md", 0b11 | 1 << 16)
        );
        assert_eq!(
            (path(&seeds[40]).as_str(), seeds[40].layout),
            ("/memories/zero", 0b11 | 1 << 14)
        );
    }

    /// Some drawn paths are the absolute spelling (a payload draw of the other families).
    #[test]
    fn the_absolute_spelling_is_drawn() {
        let mut rng = fastrand::Rng::with_seed(1);
        let drawn = (0..20_000)
            .filter_map(|_| payload(&mut rng))
            .filter(|p| p.render() == "/memories//{DOWN:99}outside/canary.txt")
            .count();
        assert_eq!(drawn, 98);
    }
}
