//! The redaction rules (see [`crate::baseline`]): a [`Redactor`] replaces the run folder's
//! spellings and the canary token, and the sizes of directories and links in listing lines, so
//! the same handler gives the same snapshot on any run.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{Answer, Entries, EntryKind, Rule, Snapshot};
use crate::protocol::{Content, ToolResult};

/// The values to redact in one case: the run folder's spellings and the canary token.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    /// The run folder's spellings without the leading `/`, and their tails from each component
    /// on, longest first (an absolute spelling keeps its `/`: `/[RUN]/base`).
    tails: Vec<String>,
    token: String,
}

impl Redactor {
    /// A redactor for a case whose run folder is spelled `run_dirs` (absolute paths: as created,
    /// canonicalised; others are ignored) and whose canaries hold `token` (empty: none).
    pub fn new(run_dirs: &[String], token: &str) -> Redactor {
        let mut tails = Vec::new();
        for dir in run_dirs
            .iter()
            .filter(|d| d.starts_with('/') && d.len() > 1)
        {
            let mut rest = dir.trim_start_matches('/');
            loop {
                tails.push(rest.to_owned());
                match rest.find('/') {
                    Some(i) => rest = &rest[i + 1..],
                    None => break,
                }
            }
        }
        tails.retain(|t| !t.is_empty());
        tails.sort_by_key(|t| std::cmp::Reverse(t.len()));
        tails.dedup();
        Redactor {
            tails,
            token: token.to_owned(),
        }
    }

    /// `text` with the run folder and the token replaced; the rules that fired go to `hit`.
    pub fn redact_text(&self, text: &str, hit: &mut BTreeSet<Rule>) -> String {
        let mut out = text.to_owned();
        for t in &self.tails {
            if out.contains(t.as_str()) {
                out = out.replace(t.as_str(), "[RUN]");
                hit.insert(Rule::StorePath);
            }
        }
        if !self.token.is_empty() && out.contains(&self.token) {
            out = out.replace(&self.token, "[TOKEN]");
            hit.insert(Rule::CanaryToken);
        }
        out
    }

    /// [`Redactor::redact_text`] on every string (keys included) of a JSON value.
    pub fn redact_value(&self, v: &Value, hit: &mut BTreeSet<Rule>) -> Value {
        match v {
            Value::String(s) => Value::String(self.redact_text(s, hit)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.redact_value(x, hit)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (self.redact_text(k, hit), self.redact_value(x, hit)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// The snapshot of one case: each step's input and answer, redacted. `entries[i]` holds the
    /// directories and links listed in answer `i` (missing: none known).
    pub fn snapshot(
        &self,
        case_id: &str,
        inputs: &[Value],
        answers: &[Result<ToolResult, String>],
        entries: &[Entries],
    ) -> Snapshot {
        let mut hit = BTreeSet::new();
        let input = inputs
            .iter()
            .map(|i| self.redact_value(i, &mut hit).to_string())
            .collect();
        let none = Entries::new();
        let steps = answers
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                Ok(r) => {
                    let listed = entries.get(i).unwrap_or(&none);
                    let content = match &r.content {
                        Content::Text(s) => {
                            let s = self.redact_text(s, &mut hit);
                            Content::Text(listing_sizes(&s, listed, &mut hit))
                        }
                        Content::Blocks(b) => Content::Blocks(
                            b.iter()
                                .map(|x| match self.redact_value(x, &mut hit) {
                                    Value::Object(mut o) => {
                                        if let Some(Value::String(t)) = o.get("text") {
                                            let t = listing_sizes(t, listed, &mut hit);
                                            o.insert("text".into(), Value::String(t));
                                        }
                                        Value::Object(o)
                                    }
                                    other => other,
                                })
                                .collect(),
                        ),
                        Content::Null => Content::Null,
                    };
                    Answer::Reply(ToolResult {
                        content,
                        is_error: r.is_error,
                    })
                }
                Err(e) => Answer::NoReply(self.redact_text(e, &mut hit)),
            })
            .collect();
        Snapshot {
            case_id: case_id.to_owned(),
            catalog: Some(crate::suite::CatalogVersion::current()),
            input,
            redactions: hit.into_iter().map(|r| r.name().to_owned()).collect(),
            steps,
        }
    }
}

/// The listing lines of `text`: (line index, size token, virtual path as written). A listing
/// line is `<size>\t<path>` where the size starts with a digit and holds only digits, `.`,
/// letters and spaces (16 characters at most) and the path starts with `/memories`.
pub fn listing_lines(text: &str) -> Vec<(usize, &str, &str)> {
    // A quick no for the common case, a file view of up to a million lines.
    if !text.contains("\t/memories") {
        return Vec::new();
    }
    text.split('\n')
        .enumerate()
        .filter_map(|(i, line)| {
            let (size, path) = line.split_once('\t')?;
            let sized = size.len() <= 16
                && size.starts_with(|c: char| c.is_ascii_digit())
                && size
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == ' ');
            (sized && path.starts_with("/memories")).then_some((i, size, path))
        })
        .collect()
}

/// A listing path as a key of [`Entries`]: resolved lexically (`.` dropped, `..` taking off the
/// component before it, empty components dropped), without a trailing `/`, e.g.
/// `/memories/a/../b/` -> `/memories/b`; `None` unless it resolves to `/memories` or below.
pub fn entry_key(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    if parts.first() != Some(&"memories") {
        return None;
    }
    Some(format!("/{}", parts.join("/")))
}

/// Apply `dir-size` and `link-size` to the listing lines of `text`.
fn listing_sizes(text: &str, listed: &Entries, hit: &mut BTreeSet<Rule>) -> String {
    let lines = listing_lines(text);
    if lines.is_empty() {
        return text.to_owned();
    }
    let mut kinds = BTreeMap::new();
    for (i, _, path) in &lines {
        let kind = entry_key(path).and_then(|k| listed.get(&k).copied());
        let kind = kind.or_else(|| path.ends_with('/').then_some(EntryKind::Dir));
        if let Some(k) = kind {
            kinds.insert(*i, k);
        }
    }
    text.split('\n')
        .enumerate()
        .map(|(i, line)| match kinds.get(&i) {
            Some(k) => {
                let (rule, mark) = match k {
                    EntryKind::Dir => (Rule::DirSize, "[DIR-SIZE]"),
                    EntryKind::Link => (Rule::LinkSize, "[LINK-SIZE]"),
                };
                hit.insert(rule);
                let path = line.split_once('\t').map(|(_, p)| p).unwrap_or("");
                format!("{mark}\t{path}")
            }
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    /// A snapshot of three steps that fires every rule (the other modules' tests use it too).
    pub(in crate::baseline) fn sample() -> Snapshot {
        let r = Redactor::new(&["/dev/shm/memcert-AbC123".into()], "MEMCERT-CANARY-00ff");
        let mut listed = Entries::new();
        listed.insert("/memories/a".into(), EntryKind::Dir);
        listed.insert("/memories/a/l".into(), EntryKind::Link);
        r.snapshot(
            "view/dir/nested",
            &[
                json!({"command": "view", "path": "/memories/../../../shm/memcert-AbC123/base/x"}),
                json!({"command": "view", "path": "/memories/a"}),
                json!({"command": "create", "path": "/memories/b", "file_text": ""}),
            ],
            &[
                Ok(ToolResult::error(
                    "ENOENT: '/dev/shm/memcert-AbC123/base/memories/x' MEMCERT-CANARY-00ff",
                )),
                Ok(ToolResult::ok(
                    "Here:\n4.0K\t/memories/a\n12B\t/memories/a/f.txt\n60B\t/memories/a/d/\n7B\t/memories/a/l\n\t",
                )),
                Err("no answer within 1s".into()),
            ],
            &[Entries::new(), listed],
        )
    }

    #[test]
    fn redacts_run_folder_tails_token_and_listing_sizes() {
        let s = sample();
        assert_eq!(
            s.input,
            [
                r#"{"command":"view","path":"/memories/../../../[RUN]/base/x"}"#,
                r#"{"command":"view","path":"/memories/a"}"#,
                r#"{"command":"create","file_text":"","path":"/memories/b"}"#,
            ]
        );
        assert_eq!(
            s.redactions,
            ["store-path", "canary-token", "dir-size", "link-size"]
        );
        assert_eq!(
            s.body(),
            "--- step 1 ---\nis_error: true\ncontent: 1 line\nENOENT: '/[RUN]/base/memories/x' [TOKEN]\n\
--- step 2 ---\nis_error: false\ncontent: 6 lines\nHere:\n[DIR-SIZE]\t/memories/a\n12B\t/memories/a/f.txt\n\
[DIR-SIZE]\t/memories/a/d/\n[LINK-SIZE]\t/memories/a/l\n\t\n\
--- step 3 ---\nno reply: \"no answer within 1s\"\n--- end ---\n"
        );
    }

    #[test]
    fn entry_keys_resolve_dots_inside_the_store_only() {
        assert_eq!(entry_key("/memories").as_deref(), Some("/memories"));
        assert_eq!(
            entry_key("/memories//a/b/").as_deref(),
            Some("/memories/a/b")
        );
        assert_eq!(
            entry_key("/memories/./a/../b").as_deref(),
            Some("/memories/b")
        );
        assert_eq!(
            entry_key("/memories/../memories").as_deref(),
            Some("/memories")
        );
        assert_eq!(entry_key("/memories/../etc"), None);
        assert_eq!(entry_key("/memoriesX/a"), None);
    }
}
