//! memcert's spec, compiled in: the pages of `docs/spec/` and the rules of `CONTRIBUTING.md`,
//! cut into the items a citation can name, so that a report, `memcert explain` or a test can show
//! the text of `spec:2.1/D3` or `bug:B10` without the repository.
//!
//! The grammar (`docs/spec/README.md`): an id is `kind:ref`, kind one of `spec`, `bug`, `wire`,
//! `ctx`, `rule`. An id is defined by an anchor: a Markdown heading whose first token is the id
//! in backticks (a section: its text runs to the next heading of the same or a higher level), or a
//! table row whose first cell starts with one or more ids in backticks (a row: its text is the
//! table's header and the row).

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The kinds of id, in the order `docs/spec/README.md` lists them.
pub const KINDS: [&str; 5] = ["spec", "bug", "wire", "ctx", "rule"];

/// The pages compiled in: (workspace-relative path, text).
pub const PAGES: [(&str, &str); 5] = [
    (
        "docs/spec/memory-tool.md",
        include_str!("../../../docs/spec/memory-tool.md"),
    ),
    (
        "docs/spec/bugs.md",
        include_str!("../../../docs/spec/bugs.md"),
    ),
    (
        "docs/spec/wire.md",
        include_str!("../../../docs/spec/wire.md"),
    ),
    (
        "docs/spec/context-editing.md",
        include_str!("../../../docs/spec/context-editing.md"),
    ),
    ("CONTRIBUTING.md", include_str!("../../../CONTRIBUTING.md")),
];

/// One citable item: a section or a table row of a spec page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Its id, `kind:ref` (`spec:2.1/D3`, `bug:B10`).
    pub id: String,
    /// The page that defines it, workspace-relative (`docs/spec/memory-tool.md`).
    pub page: &'static str,
    /// The 1-based line of its anchor in that page.
    pub line: usize,
    /// The heading it is, or the heading of the section its row is in, without `#`s.
    pub title: String,
    /// Its Markdown text: a section's lines up to the next heading of its level or higher; a
    /// row's table header, separator and the row itself.
    pub text: String,
}

/// Every item of every page, in page order, and the ids defined more than once (each with the
/// places of all its definitions, `page:line`).
#[derive(Debug)]
pub struct Spec {
    /// Items by id; a duplicate keeps its first definition.
    pub items: BTreeMap<String, Item>,
    /// Ids anchored more than once, with every `page:line` that anchors them.
    pub duplicates: BTreeMap<String, Vec<String>>,
}

/// The compiled-in spec, parsed once.
pub fn spec() -> &'static Spec {
    static SPEC: OnceLock<Spec> = OnceLock::new();
    SPEC.get_or_init(|| parse_pages(&PAGES))
}

/// The item `id` names, if any.
pub fn lookup(id: &str) -> Option<&'static Item> {
    spec().items.get(id)
}

/// Parse `pages` ((path, text) pairs) into items.
pub fn parse_pages(pages: &[(&'static str, &str)]) -> Spec {
    let mut items = BTreeMap::new();
    let mut places: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (page, text) in pages {
        for item in parse_page(page, text) {
            places
                .entry(item.id.clone())
                .or_default()
                .push(format!("{page}:{}", item.line));
            items.entry(item.id.clone()).or_insert(item);
        }
    }
    places.retain(|_, p| p.len() > 1);
    Spec {
        items,
        duplicates: places,
    }
}

/// The items one page anchors.
fn parse_page(page: &'static str, text: &str) -> Vec<Item> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut title = String::new();
    let mut in_fence = false;
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some((level, rest)) = heading(line) {
            title = rest.to_owned();
            if let Some(id) = leading_ids(rest).into_iter().next() {
                let end = section_end(&lines, i, level);
                out.push(Item {
                    id,
                    page,
                    line: i + 1,
                    title: title.clone(),
                    text: lines[i..end].join("\n").trim_end().to_owned(),
                });
            }
        } else if let Some(cell) = first_cell(line) {
            let ids = leading_ids(cell);
            if ids.is_empty() {
                continue;
            }
            let header = table_header(&lines, i);
            for id in ids {
                out.push(Item {
                    id,
                    page,
                    line: i + 1,
                    title: title.clone(),
                    text: format!("{header}{line}"),
                });
            }
        }
    }
    out
}

/// The index of the first line after `start` that is a heading of `level` or higher, outside
/// code fences; the number of lines if there is none.
fn section_end(lines: &[&str], start: usize, level: usize) -> usize {
    let mut in_fence = false;
    for (j, line) in lines.iter().enumerate().skip(start + 1) {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && heading(line).is_some_and(|(l, _)| l <= level) {
            return j;
        }
    }
    lines.len()
}

/// `(level, text after the #s)` of a Markdown heading line.
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    line[level..]
        .strip_prefix(' ')
        .map(|rest| (level, rest.trim()))
}

/// The first cell of a table row (`| a | b |` gives `a`).
fn first_cell(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('|')?;
    rest.split('|').next().map(str::trim)
}

/// The ids a heading text or a first cell starts with: `` `id` `` tokens separated by commas.
fn leading_ids(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut rest = text.trim_start();
    while let Some(after) = rest.strip_prefix('`') {
        let Some(end) = after.find('`') else { break };
        let token = &after[..end];
        if !is_id(token) {
            break;
        }
        ids.push(token.to_owned());
        rest = after[end + 1..].trim_start();
        match rest.strip_prefix(',') {
            Some(r) => rest = r.trim_start(),
            None => break,
        }
    }
    ids
}

/// The header and separator lines of the table that holds line `row`, each ending in `\n`.
fn table_header(lines: &[&str], row: usize) -> String {
    let mut start = row;
    while start > 0 && lines[start - 1].trim_start().starts_with('|') {
        start -= 1;
    }
    if start + 1 < row {
        format!("{}\n{}\n", lines[start], lines[start + 1])
    } else {
        String::new()
    }
}

/// Whether `token` is an id of the grammar: a known kind, `:`, and a reference of letters,
/// digits, `.`, `-` and `/` that starts and ends with a letter or digit.
pub fn is_id(token: &str) -> bool {
    let Some((kind, reference)) = token.split_once(':') else {
        return false;
    };
    KINDS.contains(&kind)
        && !reference.is_empty()
        && reference
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '/'))
        && reference.starts_with(|c: char| c.is_ascii_alphanumeric())
        && reference.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// Every id cited in `text`: each `kind:ref` whose kind is one of [`KINDS`] and that is not part
/// of a longer word (so `respec:1` and URLs such as `https:` are not ids), with a trailing `.`,
/// `-` or `/` left out. Returned in order of appearance, duplicates kept.
pub fn cited_ids(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for kind in KINDS {
        let needle = format!("{kind}:");
        let mut from = 0;
        while let Some(pos) = text[from..].find(&needle) {
            let at = from + pos;
            from = at + needle.len();
            let before = at.checked_sub(1).map(|b| bytes[b]);
            if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
                continue;
            }
            let reference: String = text[from..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '/'))
                .collect();
            // `bug:B<nn>`, `spec:<section>`: the grammar's own placeholders, not citations.
            let placeholder = text[from + reference.len()..].starts_with('<');
            let reference = reference.trim_end_matches(['.', '-', '/']);
            if !reference.is_empty() && !placeholder {
                out.push((at, format!("{kind}:{reference}")));
            }
        }
    }
    out.sort();
    out.into_iter().map(|(_, id)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // The fenced heading's id is spelled with `\x42` (B) so the tree's citation check skips it.
    const PAGE: &str = "# Title\n\n## `spec:2.1` view\n\nIntro.\n\n| id | outcome |\n|---|---|\n| `spec:2.1/A1` | empty |\n| `spec:2.1/C7`, `spec:2.1/C9` | ranges |\n| not an id | x |\n\n### Notes\n\nmore\n\n## `bug:B10` — links\n\nBody `bug:B01`.\n\n```\n## `bug:\x4299` in a fence\n```\n";

    #[test]
    fn sections_and_rows_are_items() {
        let s = parse_pages(&[("p.md", PAGE)]);
        let ids: Vec<&str> = s.items.keys().map(String::as_str).collect();
        assert_eq!(
            ids,
            [
                "bug:B10",
                "spec:2.1",
                "spec:2.1/A1",
                "spec:2.1/C7",
                "spec:2.1/C9"
            ]
        );
        let sec = &s.items["spec:2.1"];
        assert_eq!(sec.line, 3);
        assert_eq!(sec.title, "`spec:2.1` view");
        assert!(sec.text.starts_with("## `spec:2.1` view\n\nIntro."));
        assert!(sec.text.ends_with("### Notes\n\nmore"), "{}", sec.text);
        let row = &s.items["spec:2.1/C9"];
        assert_eq!(
            row.text,
            "| id | outcome |\n|---|---|\n| `spec:2.1/C7`, `spec:2.1/C9` | ranges |"
        );
        assert_eq!(row.title, "`spec:2.1` view");
        assert_eq!(
            s.items["bug:B10"].text,
            "## `bug:B10` — links\n\nBody `bug:B01`.\n\n```\n## `bug:\x4299` in a fence\n```"
        );
        assert!(s.duplicates.is_empty());
    }

    #[test]
    fn a_second_anchor_is_a_duplicate() {
        let s = parse_pages(&[("a.md", PAGE), ("b.md", "## `bug:B10` again\n")]);
        assert_eq!(
            s.duplicates.get("bug:B10"),
            Some(&vec!["a.md:17".to_owned(), "b.md:1".to_owned()])
        );
    }

    #[test]
    fn cited_ids_are_found_in_prose() {
        assert_eq!(
            cited_ids("See `spec:2.1/D3`, bug:B07 and wire:5. Not respec:1, https://x or bug:B<nn>; rule:8."),
            ["spec:2.1/D3", "bug:B07", "wire:5", "rule:8"]
        );
    }

    #[test]
    fn the_compiled_pages_have_no_duplicate_and_the_known_ids() {
        let s = spec();
        assert_eq!(s.duplicates, BTreeMap::new());
        for id in [
            "spec:2.1/D3",
            "spec:3/S-4",
            "bug:B01",
            "bug:B25",
            "wire:5",
            "ctx:request",
        ] {
            assert!(lookup(id).is_some(), "{id}");
        }
    }
}
