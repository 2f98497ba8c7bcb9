//! `memcert explain`: what a case id, a spec id or a bug id means, from what is compiled in (the
//! catalog and [`crate::spec`]), so it works from an installed binary with no repository.

use crate::catalog::{self, RunLevel};
use crate::spec::{self, Item};
use crate::Case;

/// What `query` names, as text for a terminal (Markdown as written in the spec pages), or `None`
/// when it is neither a spec id, a case id (of the full catalog) nor a bug number without its
/// kind (`bug:B10` is read as `bug:B10`).
pub fn explain(query: &str) -> Option<String> {
    let query = query.trim();
    if let Some(item) = spec::lookup(query) {
        return Some(item_text(item));
    }
    if query.len() == 3 && query.starts_with('B') && query[1..].bytes().all(|b| b.is_ascii_digit())
    {
        if let Some(item) = spec::lookup(&format!("bug:{query}")) {
            return Some(item_text(item));
        }
    }
    let cases = catalog::for_level(RunLevel::Full);
    cases.iter().find(|c| c.id == query).map(case_text)
}

/// A spec item: its id and where it is defined, then its text.
fn item_text(item: &Item) -> String {
    format!(
        "{}  ({}:{})\n\n{}\n",
        item.id, item.page, item.line, item.text
    )
}

/// A case: id, level, requirement, definition, then each cited item's text.
pub fn case_text(case: &Case) -> String {
    let mut out = format!(
        "{}\n  requirement: {}\n  level:       {}\n  defined:     {}\n  source:      {}\n",
        case.id,
        case.requirement,
        match case.level {
            crate::Level::Must => "MUST",
            crate::Level::Should => "SHOULD",
        },
        case.defined,
        case.source.join(", ")
    );
    for id in &case.source {
        match spec::lookup(id) {
            Some(item) => out.push_str(&format!("\n{}", item_text(item))),
            None => out.push_str(&format!("\n{id}  (not in the spec pages)\n")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bug_number_alone_is_read_as_a_bug_id() {
        let a = explain(&format!("B{}", 10)).unwrap(); // the number alone
        assert_eq!(Some(a.clone()), explain("bug:B10"));
        assert!(a.starts_with("bug:B10  (docs/spec/bugs.md:"), "{a}");
    }

    #[test]
    fn unknown_queries_are_none() {
        assert_eq!(explain("view/nope"), None);
        assert_eq!(explain(concat!("spec", ":9.9")), None); // (not a citation)
        assert_eq!(explain(&format!("B{}", 99)), None); // an unknown bug number alone
    }
}
