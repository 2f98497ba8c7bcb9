//! `memcert explain`: what a case id, a spec id or a bug id means, from what is compiled in (the
//! catalog and [`crate::spec`]), so it works from an installed binary with no repository.

use crate::catalog::RunLevel;
use crate::list::{CaseList as _, Cases};
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
    // Only the case asked for is built ([`Cases`]).
    let cases = Cases::level(RunLevel::Full);
    let i = cases.ids().position(|id| id == query)?;
    cases.case(i).map(|c| case_text(&c))
}

/// A hint for a query that names nothing but looks like a near miss of a bug id (one digit, a
/// small b: `B1`, `b10`), if any.
pub fn hint(query: &str) -> Option<String> {
    let q = query.trim();
    let number = q.strip_prefix("bug:").unwrap_or(q);
    let digits = number.strip_prefix(['B', 'b'])?;
    let n: u32 = digits.parse().ok()?;
    let id = format!("bug:B{n:02}"); // (not a citation)
    spec::lookup(&id).map(|_| format!("bug ids have two digits and a capital B: {id}"))
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
    let mut shown = Vec::new();
    for id in &case.source {
        match spec::lookup(id) {
            // Two ids of one table row: the row once.
            Some(item) if shown.contains(&(item.page, item.line)) => {}
            Some(item) => {
                shown.push((item.page, item.line));
                out.push_str(&format!("\n{}", item_text(item)));
            }
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
    fn near_misses_get_a_hint() {
        assert_eq!(
            hint("bug:B1").as_deref(), // (not a citation)
            Some("bug ids have two digits and a capital B: bug:B01")
        );
        assert_eq!(
            hint("b10").as_deref(),
            Some("bug ids have two digits and a capital B: bug:B10")
        );
        assert_eq!(hint(&format!("bug:B{}", 99)), None); // (not a citation)
        assert_eq!(hint("view/x"), None);
    }

    #[test]
    fn a_row_cited_twice_is_shown_once() {
        let case = crate::catalog::all()
            .into_iter()
            .find(|c| c.id == "create/crlf-unicode")
            .unwrap();
        let text = case_text(&case);
        let rows = text.matches("| id | outcome |").count();
        assert_eq!(rows, 1, "{text}");
    }

    #[test]
    fn unknown_queries_are_none() {
        assert_eq!(explain("view/nope"), None);
        assert_eq!(explain(concat!("spec", ":9.9")), None); // (not a citation)
        assert_eq!(explain(&format!("B{}", 99)), None); // an unknown bug number alone
    }
}
