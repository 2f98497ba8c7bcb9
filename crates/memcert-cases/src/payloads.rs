//! The traversal payload grammar: named, counted families of model-chosen paths, each placed in
//! every command field that takes a path.
//!
//! Like dotdotpwn, traversal payloads are the product of spellings of `..` ([`Dot`]), spellings
//! of the separator ([`Slash`]) and a depth (1 to 8), followed by a run-time part `{DOWN:d}` that
//! leads from the d-th ancestor of the store root back down to the sandbox, so every depth aims at
//! the same canary (`outside/canary.txt`). Other families (prefix confusion, absolute and
//! drive/UNC remainders, root aliases, control characters, Windows names, very long names) are
//! listed as data. The tables live in `payloads.toml` beside it; this module holds the grammar,
//! the loader, the expansion and the deduplication.
//!
//! Every payload carries its family and generation parameters, so a failure reads as
//! "family `traversal`, dot `double-encoded`, slash `slash`, depth 3, field `rename.new_path`".
//!
//! # Guarantees
//! - [`corpus`] is deterministic (same order every time) and has no two payloads with the same
//!   text; [`pairs`] places each in each of the seven path fields ([`Field::ALL`]).
//! - Exactly the payloads with `real: true` (plain `..` with `/`) resolve outside on a POSIX
//!   filesystem as written; the others need a decoding or normalising step to do so.

use std::collections::HashSet;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A spelling of the `..` component.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Dot {
    /// Kebab-case name, used in ids.
    pub name: String,
    /// The spelling.
    pub text: String,
    /// The bug id it comes from (`bug:B19`, docs/spec/bugs.md).
    pub source: String,
}

/// A spelling of the separator after each `..`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Slash {
    /// Kebab-case name, used in ids.
    pub name: String,
    /// The spelling.
    pub text: String,
    /// The bug id it comes from (`bug:B19`, docs/spec/bugs.md).
    pub source: String,
}

/// A payload given as data.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Extra {
    /// Family name (`prefix`, `absolute`, `root-alias`, `control`, `windows`).
    pub family: String,
    /// Kebab-case id within the family.
    pub id: String,
    /// The path.
    pub text: String,
    /// The bug id it comes from (`bug:B19`, docs/spec/bugs.md).
    pub source: String,
}

/// A spelling of the `..` component that is a literal name on POSIX and becomes `..` only after
/// a step that trims, strips or rewrites it (the check/use gap of bug:B22 and bug:B24), or a
/// separator a slugging store rewrites (bug:B08). Expanded like a traversal with one separator.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Spelling {
    /// Family name (`trim`, `ignorable`, `slug`), the payload's family.
    pub family: String,
    /// Kebab-case name within the family, used in ids.
    pub name: String,
    /// The spelling of the `..` component.
    pub text: String,
    /// The separator after each component; `/` when left out.
    #[serde(default = "plain_slash")]
    pub slash: String,
    /// The bug id it comes from (`bug:B22`, docs/spec/bugs.md).
    pub source: String,
}

/// The separator a [`Spelling`] uses when it names none.
fn plain_slash() -> String {
    "/".into()
}

/// The grammar's tables, as in `payloads.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grammar {
    /// Traversal depths.
    pub depths: Vec<u8>,
    /// What every traversal aims at, relative to the sandbox base.
    pub target: String,
    /// Spellings of `..`.
    pub dot: Vec<Dot>,
    /// Spellings of the separator.
    pub slash: Vec<Slash>,
    /// Payloads given as data.
    pub extra: Vec<Extra>,
    /// Check/use spellings of `..` (families `trim`, `ignorable`, `slug`).
    #[serde(default)]
    pub spelling: Vec<Spelling>,
}

/// The built-in grammar.
pub fn grammar() -> &'static Grammar {
    static G: OnceLock<Grammar> = OnceLock::new();
    G.get_or_init(|| toml::from_str(include_str!("payloads.toml")).expect("payloads.toml is valid"))
}

/// One payload with its generation parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Payload {
    /// Stable id: `traversal/<dot>/<slash>/depth-<d>`, `<family>/<spelling>/depth-<d>` (a
    /// check/use spelling) or `<family>/<id>`.
    pub id: String,
    /// Family: `traversal`, `prefix`, `absolute`, `root-alias`, `control`, `windows`, `long`,
    /// or a check/use spelling family `trim`, `ignorable`, `slug`.
    pub family: String,
    /// Name of the check/use spelling of `..` within its family (`trailing-space`), for the
    /// families `trim`, `ignorable` and `slug` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spelling: Option<String>,
    /// Name of the `..` spelling (traversal only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dot: Option<String>,
    /// Name of the separator spelling (traversal only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slash: Option<String>,
    /// Depth (traversal and check/use spellings only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u8>,
    /// The path; `{DOWN:d}` is filled in per sandbox ([`instantiate`]).
    pub text: String,
    /// True when the path resolves outside the root on POSIX exactly as written.
    pub real: bool,
    /// The bug ids it comes from (`bug:B01`, docs/spec/bugs.md).
    pub source: Vec<String>,
    /// Where it is defined, workspace-relative: the line of its record in `payloads.toml` (a
    /// traversal payload: its `[[dot]]` spelling), or of the code that makes it (long names).
    #[serde(skip)]
    pub defined: String,
}

/// `payloads.toml` as the workspace names it, for [`Payload::defined`].
const TOML_PATH: &str = "crates/memcert-cases/src/payloads.toml";

/// The 1-based line of the `n`-th `[[table]]` header of `payloads.toml` (0 if there is none).
fn record_line(table: &str, n: usize) -> usize {
    let header = format!("[[{table}]]");
    include_str!("payloads.toml")
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == header)
        .nth(n)
        .map_or(0, |(i, _)| i + 1)
}

/// The seven command fields that take a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Field {
    /// `view.path`
    ViewPath,
    /// `create.path`
    CreatePath,
    /// `str_replace.path`
    StrReplacePath,
    /// `insert.path`
    InsertPath,
    /// `delete.path`
    DeletePath,
    /// `rename.old_path`
    RenameOldPath,
    /// `rename.new_path`
    RenameNewPath,
}

impl Field {
    /// All seven, in spec order.
    pub const ALL: [Field; 7] = [
        Field::ViewPath,
        Field::CreatePath,
        Field::StrReplacePath,
        Field::InsertPath,
        Field::DeletePath,
        Field::RenameOldPath,
        Field::RenameNewPath,
    ];

    /// `command.field`, e.g. `rename.new_path`.
    pub fn as_str(self) -> &'static str {
        match self {
            Field::ViewPath => "view.path",
            Field::CreatePath => "create.path",
            Field::StrReplacePath => "str_replace.path",
            Field::InsertPath => "insert.path",
            Field::DeletePath => "delete.path",
            Field::RenameOldPath => "rename.old_path",
            Field::RenameNewPath => "rename.new_path",
        }
    }

    /// A `tool_use` input with `path` in this field and valid values elsewhere (the other
    /// rename path is `/memories/a.md`, which the sandbox plants).
    pub fn input(self, path: &str) -> Value {
        match self {
            Field::ViewPath => json!({"command": "view", "path": path}),
            Field::CreatePath => json!({"command": "create", "path": path, "file_text": "pwned\n"}),
            Field::StrReplacePath => {
                json!({"command": "str_replace", "path": path, "old_str": "SECRET", "new_str": "pwned"})
            }
            Field::InsertPath => {
                json!({"command": "insert", "path": path, "insert_line": 0, "insert_text": "pwned"})
            }
            Field::DeletePath => json!({"command": "delete", "path": path}),
            Field::RenameOldPath => {
                json!({"command": "rename", "old_path": path, "new_path": "/memories/loot.md"})
            }
            Field::RenameNewPath => {
                json!({"command": "rename", "old_path": "/memories/a.md", "new_path": path})
            }
        }
    }
}

/// The bug a plain `..` traversal is cited by.
const PLAIN_TRAVERSAL: &str = "bug:B01";

/// Every payload, deduplicated by text, in a fixed order: traversal (dot, slash, depth), then
/// the data families, then the long names, then the check/use spellings (spelling, depth).
pub fn corpus() -> Vec<Payload> {
    let g = grammar();
    let mut out = Vec::new();
    for (dot_no, dot) in g.dot.iter().enumerate() {
        let defined = format!("{TOML_PATH}:{}", record_line("dot", dot_no));
        for slash in &g.slash {
            for &depth in &g.depths {
                let mut text = String::from("/memories/");
                for _ in 0..depth {
                    text.push_str(&dot.text);
                    text.push_str(&slash.text);
                }
                text.push_str(&format!("{{DOWN:{depth}}}{}", g.target));
                // The spelling that makes the payload special comes first: a plain `..`
                // (bug:B01) with an encoded or look-alike separator is cited by the
                // separator's bug, so one decoding flaw is one cause (`report::causes`).
                let mut source = vec![dot.source.clone()];
                if slash.source != dot.source {
                    if dot.source == PLAIN_TRAVERSAL {
                        source.insert(0, slash.source.clone());
                    } else {
                        source.push(slash.source.clone());
                    }
                }
                out.push(Payload {
                    id: format!("traversal/{}/{}/depth-{depth}", dot.name, slash.name),
                    family: "traversal".into(),
                    spelling: None,
                    dot: Some(dot.name.clone()),
                    slash: Some(slash.name.clone()),
                    depth: Some(depth),
                    text,
                    real: dot.text == ".." && slash.text == "/",
                    source,
                    defined: defined.clone(),
                });
            }
        }
    }
    for (extra_no, e) in g.extra.iter().enumerate() {
        out.push(Payload {
            defined: format!("{TOML_PATH}:{}", record_line("extra", extra_no)),
            id: format!("{}/{}", e.family, e.id),
            family: e.family.clone(),
            spelling: None,
            dot: None,
            slash: None,
            depth: None,
            real: e.text.split('/').any(|c| c == ".."),
            text: e.text.clone(),
            source: vec![e.source.clone()],
        });
    }
    for (id, text) in [
        ("component-256", format!("/memories/{}", "a".repeat(256))),
        ("component-1000", format!("/memories/{}", "a".repeat(1000))),
        (
            "path-4097",
            format!("/memories/{}", "abcdefgh/".repeat(455)),
        ),
        (
            "path-10000",
            format!("/memories/{}", "abcdefgh/".repeat(1111)),
        ),
    ] {
        out.push(Payload {
            id: format!("long/{id}"),
            family: "long".into(),
            spelling: None,
            dot: None,
            slash: None,
            depth: None,
            text,
            real: false,
            source: vec!["bug:B07".into()],
            defined: concat!(file!(), ":", line!()).into(),
        });
    }
    for (no, sp) in g.spelling.iter().enumerate() {
        let defined = format!("{TOML_PATH}:{}", record_line("spelling", no));
        for &depth in &g.depths {
            let mut text = String::from("/memories/");
            for _ in 0..depth {
                text.push_str(&sp.text);
                text.push_str(&sp.slash);
            }
            text.push_str(&format!("{{DOWN:{depth}}}{}", g.target));
            out.push(Payload {
                id: format!("{}/{}/depth-{depth}", sp.family, sp.name),
                family: sp.family.clone(),
                spelling: Some(sp.name.clone()),
                dot: None,
                slash: None,
                depth: Some(depth),
                text,
                real: false,
                source: vec![sp.source.clone()],
                defined: defined.clone(),
            });
        }
    }
    let mut seen = HashSet::new();
    out.retain(|p| seen.insert(p.text.clone()));
    out
}

/// Every (payload, field) pair of the corpus.
pub fn pairs() -> impl Iterator<Item = (Payload, Field)> {
    corpus()
        .into_iter()
        .flat_map(|p| Field::ALL.into_iter().map(move |f| (p.clone(), f)))
}

/// Fill in `{DOWN:d}` for a store root at `root_abs` (an absolute host path) inside a sandbox
/// whose base is the root's parent: the path from the d-th ancestor of the root (clamped at `/`)
/// down to the base, with a trailing `/`.
pub fn instantiate(text: &str, root_abs: &str) -> String {
    instantiate_via(text, root_abs, root_abs)
}

/// [`instantiate`] for a store root at `root_abs` that inputs reach through an alias: the same
/// root's place in a folder memcert lays out like the run folder (`alias_root`, e.g.
/// `/tmp/memcert-alias-XXXXXX/base/memories` for `/tmp/memcert-abc123/base/memories`). Each
/// `{DOWN:d}` leads from the d-th ancestor A of the real root down to the base: through the
/// alias when A is one of the alias's ancestors too (the alias sits next to the run folder), so
/// that the real run folder's name is never written; otherwise (A inside the run folder, where
/// the way down names no host folder; or an alias elsewhere) the real way down.
pub fn instantiate_via(text: &str, root_abs: &str, alias_root: &str) -> String {
    let comps: Vec<&str> = root_abs.split('/').filter(|c| !c.is_empty()).collect();
    let alias: Vec<&str> = alias_root.split('/').filter(|c| !c.is_empty()).collect();
    let mut out = String::with_capacity(text.len() + root_abs.len());
    let mut rest = text;
    while let Some(i) = rest.find("{DOWN:") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 6..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[i..]);
            return out;
        };
        let d: usize = after[..close].parse().unwrap_or(1);
        // The base is comps[..len-1]; the d-th ancestor of the root is comps[..len-d].
        let base_len = comps.len().saturating_sub(1);
        let from = comps.len().saturating_sub(d).min(base_len);
        let alias_base = alias.len().saturating_sub(1);
        let down = if from <= alias_base && alias[..from] == comps[..from] && alias != comps {
            // The real root's first `from` components are the alias's: go down the alias.
            &alias[from..alias_base]
        } else {
            &comps[from..base_len]
        };
        for c in down {
            out.push_str(c);
            out.push('/');
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_corpus_is_large_distinct_and_stable() {
        let c = corpus();
        let g = grammar();
        assert_eq!(
            c.iter().filter(|p| p.family == "traversal").count(),
            g.dot.len() * g.slash.len() * g.depths.len()
        );
        let texts: HashSet<&str> = c.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts.len(), c.len());
        let ids: HashSet<&str> = c.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids.len(), c.len());
        assert!(pairs().count() >= 10_000, "{}", pairs().count());
        assert_eq!(corpus(), c);
    }

    #[test]
    fn only_plain_dotdot_with_slash_is_real() {
        for p in corpus().iter().filter(|p| p.family == "traversal") {
            assert_eq!(
                p.real,
                p.dot.as_deref() == Some("plain") && p.slash.as_deref() == Some("slash"),
                "{}",
                p.id
            );
        }
        let p = corpus()
            .into_iter()
            .find(|p| p.id == "traversal/double-encoded/slash/depth-3")
            .unwrap();
        assert_eq!(
            p.text,
            "/memories/%252e%252e/%252e%252e/%252e%252e/{DOWN:3}outside/canary.txt"
        );
    }

    #[test]
    fn down_leads_back_to_the_base_from_any_depth() {
        let root = "/tmp/memcert-abc/base/memories";
        assert_eq!(
            instantiate("/memories/../{DOWN:1}outside/c", root),
            "/memories/../outside/c"
        );
        assert_eq!(
            instantiate("/memories/../../{DOWN:2}outside/c", root),
            "/memories/../../base/outside/c"
        );
        assert_eq!(
            instantiate("/memories/../../../{DOWN:3}x", root),
            "/memories/../../../memcert-abc/base/x"
        );
        assert_eq!(instantiate("{DOWN:4}x", root), "tmp/memcert-abc/base/x");
        assert_eq!(instantiate("{DOWN:8}x", root), "tmp/memcert-abc/base/x");
        assert_eq!(instantiate("no placeholder", root), "no placeholder");
    }

    #[test]
    fn down_goes_through_the_alias_above_the_run_folder() {
        let root = "/tmp/memcert-abc/base/memories";
        let alias = "/tmp/memcert-alias-xyz/base/memories";
        let via = |t: &str| instantiate_via(t, root, alias);
        // Inside the run folder the way down names no host folder.
        assert_eq!(via("/memories/../{DOWN:1}o"), "/memories/../o");
        assert_eq!(via("/memories/../../{DOWN:2}o"), "/memories/../../base/o");
        // From the temp folder and above, through the alias.
        assert_eq!(
            via("/memories/../../../{DOWN:3}o"),
            "/memories/../../../memcert-alias-xyz/base/o"
        );
        assert_eq!(via("{DOWN:4}o"), "tmp/memcert-alias-xyz/base/o");
        assert_eq!(via("{DOWN:99}o"), "tmp/memcert-alias-xyz/base/o");
        for d in 1..=99 {
            assert!(
                !via(&format!("{{DOWN:{d}}}")).contains("memcert-abc"),
                "{d}"
            );
        }
        // An alias that is not next to the run folder: the real way down.
        let elsewhere = "/var/x/memcert-alias-xyz/base/memories";
        assert_eq!(
            instantiate_via("{DOWN:3}o", root, elsewhere),
            "memcert-abc/base/o"
        );
    }

    #[test]
    fn fields_carry_the_payload_where_they_say() {
        assert_eq!(Field::RenameNewPath.input("/p")["new_path"], "/p");
        assert_eq!(Field::RenameOldPath.input("/p")["old_path"], "/p");
        assert_eq!(Field::InsertPath.input("/p")["path"], "/p");
        let names: Vec<&str> = Field::ALL.iter().map(|f| f.as_str()).collect();
        assert_eq!(
            names,
            [
                "view.path",
                "create.path",
                "str_replace.path",
                "insert.path",
                "delete.path",
                "rename.old_path",
                "rename.new_path"
            ]
        );
    }
}
