//! Response-format baselines: a handler's exact answers, one snapshot file per case, and the
//! comparison of a later run with them (`memcert snapshot --out DIR`,
//! `memcert certify --baseline DIR`).
//!
//! # File format
//! One file per case in insta's `.snap` format, so `cargo insta review` and any diff tool read it.
//! The name is the case id with every `/` written `__`, plus `.snap`
//! (`view/dir/nested` -> `view__dir__nested.snap`); catalog ids never contain `__` nor a segment
//! that starts or ends with `_`, so the name maps back to the id ([`case_id_of`]). The header is
//! the YAML insta writes (its emitter's quoting and escapes, so accepting a `.snap.new` with
//! `cargo insta review` rewrites the file byte for byte the same):
//!
//! ```text
//! ---
//! source: memcert 0.1.0
//! expression: view/dir/nested
//! info:
//!   input:
//!     - "{\"command\":\"view\",\"path\":\"/memories/a\"}"
//!   redactions:
//!     - dir-size
//! ---
//! --- step 1 ---
//! is_error: false
//! content: 3 lines
//! Here're the files and directories up to 2 levels deep in /memories/a, excluding hidden items:
//! [DIR-SIZE]	/memories/a
//! 10B	/memories/a/x.txt
//! --- end ---
//! ```
//!
//! `info.input` holds each step's input as sent (compact JSON, redacted); `info.redactions` names
//! the [`Rule`]s that replaced something in this snapshot. The body has one block per step that
//! was sent: `is_error` and the content exactly as answered, after redaction. Text content is
//! written verbatim as `content: N lines` and its N lines (split on `\n`, so a final newline
//! shows as a last empty line); content that is empty or holds a control character other than
//! tab and newline is written as one JSON string (`content: "..."`), blocks as
//! `content (blocks): <JSON>`, null as `content: null`; a step with no answer (timeout, crash)
//! as `no reply: "<reason as JSON>"`. The body ends with `--- end ---`, so trailing whitespace of
//! an answer survives insta's trimming.
//!
//! # Redactions
//! Values that vary from run to run for the same handler are replaced by the same rules when
//! recording and when comparing ([`Redactor`]):
//! - `store-path`: the case's temp run folder (`<tmp>/memcert-XXXXXX`, as created and
//!   canonicalised) without its leading `/`, and every tail of it that starts at a path component
//!   (what `{DOWN:d}` payloads and relative spellings contain), becomes `[RUN]`: an absolute
//!   `/dev/shm/memcert-x7Yz/base` reads `/[RUN]/base` wherever the temp folder is;
//! - `canary-token`: the random canary token (`MEMCERT-CANARY-<16 hex>`) becomes `[TOKEN]`;
//! - `dir-size`: in listing lines (`<size>\t/memories...`), the size of an entry that is a
//!   directory (on disk right after the answer, or written with a trailing `/`) becomes
//!   `[DIR-SIZE]`: a directory's `st_size` depends on the filesystem (4096 on ext4, 40 + 20 per
//!   entry on tmpfs);
//! - `link-size`: the same for an entry that is a symbolic link, whose size is the length of its
//!   target text (which holds the temp path), `[LINK-SIZE]`.
//!
//! # Non-guarantees
//! - Race cases (`race/...`) and SKIPPED cases are neither recorded nor compared: their answers
//!   depend on timing or on the user memcert runs as.
//! - Answers that vary for other reasons (a handler's own timestamps or random ids, a concurrent
//!   batch whose winner is timing) are not redacted; exclude those cases with `--exclude`.

// The format example above shows the file's real tab characters.
#![allow(clippy::tabs_in_doc_comments)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::protocol::{Content, ToolResult};

/// Why a baseline folder or snapshot file was refused. Messages name the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The folder or a file in it could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The folder or file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file that is not a memcert snapshot (the message says what is wrong and on which line).
    #[error("{path}: not a memcert snapshot: {what}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
}

/// One named redaction rule (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// The temp run folder and its tails become `[RUN]`.
    StorePath,
    /// The canary token becomes `[TOKEN]`.
    CanaryToken,
    /// Sizes of directory entries in listings become `[DIR-SIZE]`.
    DirSize,
    /// Sizes of symbolic-link entries in listings become `[LINK-SIZE]`.
    LinkSize,
}

impl Rule {
    /// Every rule, in header order.
    pub const ALL: [Rule; 4] = [
        Rule::StorePath,
        Rule::CanaryToken,
        Rule::DirSize,
        Rule::LinkSize,
    ];

    /// The name written in snapshot headers: `store-path`, `canary-token`, `dir-size`,
    /// `link-size`.
    pub fn name(self) -> &'static str {
        match self {
            Rule::StorePath => "store-path",
            Rule::CanaryToken => "canary-token",
            Rule::DirSize => "dir-size",
            Rule::LinkSize => "link-size",
        }
    }
}

/// What a listing entry was on disk right after the answer (for `dir-size`, `link-size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A directory.
    Dir,
    /// A symbolic link.
    Link,
}

/// Listing entries of one answer that were directories or links on disk: virtual path without
/// a trailing `/` (`/memories/a/b`) -> kind.
pub type Entries = BTreeMap<String, EntryKind>;

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

/// One step's answer in a snapshot.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The `tool_result` (redacted).
    Reply(ToolResult),
    /// No answer came: why (redacted).
    NoReply(String),
}

/// A recorded case: its id, inputs and answers, redacted. See the module docs for the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// The case id (the header's `expression`).
    pub case_id: String,
    /// Each step's input as compact JSON, redacted (the header's `info.input`).
    pub input: Vec<String>,
    /// Names of the rules that replaced something (the header's `info.redactions`).
    pub redactions: Vec<String>,
    /// One answer per step that was sent.
    pub steps: Vec<Answer>,
}

impl Snapshot {
    /// The body: one block per step, then `--- end ---` (see the module docs).
    pub fn body(&self) -> String {
        let mut s = String::new();
        for (i, a) in self.steps.iter().enumerate() {
            let _ = writeln!(s, "--- step {} ---", i + 1);
            match a {
                Answer::NoReply(why) => {
                    let _ = writeln!(s, "no reply: {}", json_quote(why));
                }
                Answer::Reply(r) => {
                    let _ = writeln!(s, "is_error: {}", r.is_error);
                    match &r.content {
                        Content::Null => s.push_str("content: null\n"),
                        Content::Blocks(b) => {
                            let _ = writeln!(s, "content (blocks): {}", Value::Array(b.clone()));
                        }
                        Content::Text(t) if verbatim(t) => {
                            let n = t.split('\n').count();
                            let _ =
                                writeln!(s, "content: {n} line{}", if n == 1 { "" } else { "s" });
                            s.push_str(t);
                            s.push('\n');
                        }
                        Content::Text(t) => {
                            let _ = writeln!(s, "content: {}", json_quote(t));
                        }
                    }
                }
            }
        }
        s.push_str("--- end ---\n");
        s
    }

    /// The whole file: insta's header, then [`Snapshot::body`].
    pub fn render(&self) -> String {
        let mut s = String::from("---\n");
        let _ = writeln!(
            s,
            "source: {}",
            yaml_scalar(&format!("memcert {}", env!("CARGO_PKG_VERSION")))
        );
        let _ = writeln!(s, "expression: {}", yaml_scalar(&self.case_id));
        s.push_str("info:\n");
        for (key, list) in [("input", &self.input), ("redactions", &self.redactions)] {
            if list.is_empty() {
                let _ = writeln!(s, "  {key}: []");
            } else {
                let _ = writeln!(s, "  {key}:");
                for item in list {
                    let _ = writeln!(s, "    - {}", yaml_scalar(item));
                }
            }
        }
        s.push_str("---\n");
        s.push_str(&self.body());
        s
    }

    /// Read a snapshot file's text (`path` names it in errors). The `source` line is not checked:
    /// a snapshot recorded by another memcert version compares the same.
    ///
    /// # Errors
    /// [`Error::Format`] naming what is wrong.
    pub fn parse(text: &str, path: &Path) -> Result<Snapshot, Error> {
        let bad = |what: String| Error::Format {
            path: path.to_owned(),
            what,
        };
        let mut lines = text.split('\n').enumerate().peekable();
        if lines.next().map(|(_, l)| l) != Some("---") {
            return Err(bad("line 1 is not `---`".into()));
        }
        let mut case_id = None;
        let mut input = Vec::new();
        let mut redactions = Vec::new();
        let mut list: Option<&mut Vec<String>> = None;
        // Under a top-level key other than `info` (one a newer insta writes, such as
        // `snapshot_kind`): its indented lines are skipped.
        let mut in_info = false;
        loop {
            let Some((n, line)) = lines.next() else {
                return Err(bad("the header does not end with `---`".into()));
            };
            let at = |what: &str| format!("line {}: {what}", n + 1);
            if line == "---" {
                break;
            }
            if !in_info && line.starts_with(' ') {
                continue;
            }
            if let Some(item) = line.strip_prefix("    - ") {
                let Some(l) = list.as_deref_mut() else {
                    return Err(bad(at("a list item outside info.input or info.redactions")));
                };
                l.push(parse_scalar(item).map_err(|e| bad(at(&e)))?);
                continue;
            }
            if let Some(rest) = line.strip_prefix("  ") {
                let (key, value) = rest.split_once(':').unwrap_or((rest, ""));
                let target = match key {
                    "input" => &mut input,
                    "redactions" => &mut redactions,
                    _ => return Err(bad(at(&format!("unknown info key {key:?}")))),
                };
                list = match value.trim() {
                    "" => Some(target),
                    "[]" => None,
                    _ => return Err(bad(at("expected a list"))),
                };
                continue;
            }
            list = None;
            let (key, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            in_info = key == "info";
            // `source`, `description`, `snapshot_kind`, `assertion_line`, `input_file`, and
            // whatever other key an insta version writes: not memcert's business.
            if key == "expression" {
                case_id = Some(parse_scalar(value).map_err(|e| bad(at(&e)))?);
            }
        }
        let case_id = case_id.ok_or_else(|| bad("no `expression:` (the case id)".into()))?;
        let mut steps = Vec::new();
        loop {
            let Some((n, line)) = lines.next() else {
                return Err(bad("the body does not end with `--- end ---`".into()));
            };
            let at = |what: &str| format!("line {}: {what}", n + 1);
            if line == "--- end ---" {
                break;
            }
            if line != format!("--- step {} ---", steps.len() + 1) {
                return Err(bad(at(&format!(
                    "expected `--- step {} ---`",
                    steps.len() + 1
                ))));
            }
            let (n, line) = lines
                .next()
                .ok_or_else(|| bad(at("a step without an answer")))?;
            let at = |what: &str| format!("line {}: {what}", n + 1);
            if let Some(why) = line.strip_prefix("no reply: ") {
                steps.push(Answer::NoReply(json_string(why).map_err(|e| bad(at(&e)))?));
                continue;
            }
            let is_error = match line {
                "is_error: false" => false,
                "is_error: true" => true,
                _ => {
                    return Err(bad(at(
                        "expected `is_error: true|false` or `no reply: ...`",
                    )))
                }
            };
            let (n, line) = lines
                .next()
                .ok_or_else(|| bad(at("a step without content")))?;
            let at = |what: &str| format!("line {}: {what}", n + 1);
            let content = if line == "content: null" {
                Content::Null
            } else if let Some(json) = line.strip_prefix("content (blocks): ") {
                match serde_json::from_str(json) {
                    Ok(Value::Array(b)) => Content::Blocks(b),
                    _ => return Err(bad(at("blocks that are not a JSON list"))),
                }
            } else if let Some(json) = line.strip_prefix("content: \"") {
                Content::Text(json_string(&format!("\"{json}")).map_err(|e| bad(at(&e)))?)
            } else if let Some(count) = line.strip_prefix("content: ") {
                let count: usize = count
                    .trim_end_matches(" lines")
                    .trim_end_matches(" line")
                    .parse()
                    .map_err(|_| bad(at("expected `content: N lines`")))?;
                let mut text = Vec::with_capacity(count);
                for _ in 0..count {
                    let (_, l) = lines
                        .next()
                        .ok_or_else(|| bad(at("the file ends inside the content")))?;
                    text.push(l);
                }
                Content::Text(text.join("\n"))
            } else {
                return Err(bad(at("expected `content: ...`")));
            };
            steps.push(Answer::Reply(ToolResult { content, is_error }));
        }
        Ok(Snapshot {
            case_id,
            input,
            redactions,
            steps,
        })
    }
}

/// Whether text content is written verbatim: not empty, no control character but tab and
/// newline (a `\r` would not survive insta's line-ending normalisation).
fn verbatim(text: &str) -> bool {
    // Control characters are C0 and DEL (one byte each) and C1 (U+0080-U+009F: 0xC2 then
    // 0x80-0x9F in UTF-8); a byte scan finds them without decoding.
    let bytes = text.as_bytes();
    !text.is_empty()
        && !bytes.iter().enumerate().any(|(i, &b)| {
            (b < 0x20 && b != b'\t' && b != b'\n')
                || b == 0x7f
                || (b == 0xc2 && bytes.get(i + 1).is_some_and(|n| (0x80..0xa0).contains(n)))
        })
}

/// `text` as a JSON string on one line, every control character escaped (serde_json leaves DEL
/// and C1 characters as they are).
fn json_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    for c in Value::String(text.to_owned()).to_string().chars() {
        if c.is_control() {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

fn json_string(text: &str) -> Result<String, String> {
    serde_json::from_str::<String>(text).map_err(|e| format!("not a JSON string: {e}"))
}

/// A YAML scalar as insta's emitter writes it: plain when that reads back as the same string,
/// else double-quoted with its escapes (insta `content/yaml/vendored/emitter.rs`, `need_quotes`
/// and `escape_str`).
fn yaml_scalar(s: &str) -> String {
    if !needs_quotes(s) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0c' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\x7f' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn needs_quotes(s: &str) -> bool {
    s.is_empty()
        || s.starts_with(' ')
        || s.ends_with(' ')
        || s.starts_with(['&', '*', '?', '|', '-', '<', '>', '=', '!', '%', '@', '.'])
        || s.contains(|c: char| {
            matches!(c, ':' | '{' | '}' | '[' | ']' | ',' | '#' | '`' | '"' | '\'' | '\\'
                | '\0'..='\x06' | '\t' | '\n' | '\r' | '\x0e'..='\x1a' | '\x1c'..='\x1f')
        })
        || [
            "yes", "Yes", "YES", "no", "No", "NO", "True", "TRUE", "true", "False", "FALSE",
            "false", "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "~",
        ]
        .contains(&s)
        || s.starts_with("0x")
        || s.parse::<i64>().is_ok()
        || s.parse::<f64>().is_ok()
}

/// Read back a scalar [`yaml_scalar`] wrote: plain, or double-quoted with the escapes insta's
/// emitter uses (and `\uXXXX`).
fn parse_scalar(s: &str) -> Result<String, String> {
    let Some(inner) = s.strip_prefix('"') else {
        return Ok(s.to_owned());
    };
    let inner = inner
        .strip_suffix('"')
        .ok_or("a quoted value without its closing quote")?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('/') => out.push('/'),
            Some('b') => out.push('\x08'),
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('f') => out.push('\x0c'),
            Some('r') => out.push('\r'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| format!("bad escape \\u{hex}"))?;
                out.push(code);
            }
            other => return Err(format!("unknown escape \\{}", other.unwrap_or(' '))),
        }
    }
    Ok(out)
}

/// The file name of a case's snapshot: the id with `/` written `__`, plus `.snap`.
pub fn file_name(case_id: &str) -> String {
    format!("{}.snap", case_id.replace('/', "__"))
}

/// The case id a snapshot file name stands for (the inverse of [`file_name`]); `None` for a
/// name that does not end in `.snap`.
pub fn case_id_of(file_name: &str) -> Option<String> {
    Some(file_name.strip_suffix(".snap")?.replace("__", "/"))
}

/// How one case compares with the baseline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "SCREAMING-KEBAB-CASE")]
pub enum Comparison {
    /// The answers are the recorded ones.
    Unchanged,
    /// The answers differ from the recorded ones: fails the run.
    Regression {
        /// Line diff of the snapshot bodies, `-baseline +actual`.
        diff: String,
        /// The case's inputs differ from the recorded ones too (the catalog changed).
        input_changed: bool,
    },
    /// No snapshot of this case in the baseline: reported, does not fail the run.
    New,
    /// Not recorded and not compared (race cases, SKIPPED cases).
    NotCompared {
        /// Why.
        reason: String,
    },
}

impl Comparison {
    /// `UNCHANGED`, `REGRESSION`, `NEW`, `NOT-COMPARED`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Comparison::Unchanged => "UNCHANGED",
            Comparison::Regression { .. } => "REGRESSION",
            Comparison::New => "NEW",
            Comparison::NotCompared { .. } => "NOT-COMPARED",
        }
    }
}

/// A baseline folder, read: every `*.snap` file by case id (`.snap.new` files are ignored).
#[derive(Clone, Debug, Default)]
pub struct Baseline {
    /// The folder.
    pub dir: PathBuf,
    /// Snapshots by case id.
    pub snapshots: BTreeMap<String, Snapshot>,
}

impl Baseline {
    /// Read every `*.snap` file of `dir` (not its subfolders).
    ///
    /// # Errors
    /// [`Error::Read`] for a folder or file that cannot be read; [`Error::Format`] for a file
    /// that does not parse or whose name is not [`file_name`] of its `expression`.
    pub fn load(dir: &Path) -> Result<Baseline, Error> {
        let read = |path: &Path, source| Error::Read {
            path: path.to_owned(),
            source,
        };
        let mut paths = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| read(dir, e))? {
            let entry = entry.map_err(|e| read(dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".snap") {
                paths.push((name, entry.path()));
            }
        }
        let load = |(name, path): &(String, PathBuf)| -> Result<Snapshot, Error> {
            let text = std::fs::read_to_string(path).map_err(|e| read(path, e))?;
            let snap = Snapshot::parse(&text, path)?;
            if &file_name(&snap.case_id) != name {
                return Err(Error::Format {
                    path: path.clone(),
                    what: format!(
                        "the file of case {} must be named {}",
                        snap.case_id,
                        file_name(&snap.case_id)
                    ),
                });
            }
            Ok(snap)
        };
        // Two threads: reading and parsing some 2,000 files is a tenth of a second.
        let half = paths.len() / 2;
        let (first, second) = paths.split_at(half);
        let (a, b) = std::thread::scope(|scope| {
            let other = scope.spawn(|| second.iter().map(load).collect::<Vec<_>>());
            let mine: Vec<_> = first.iter().map(load).collect();
            (
                mine,
                other.join().expect("the loading thread does not panic"),
            )
        });
        let mut snapshots = BTreeMap::new();
        for snap in a.into_iter().chain(b) {
            let snap = snap?;
            snapshots.insert(snap.case_id.clone(), snap);
        }
        Ok(Baseline {
            dir: dir.to_owned(),
            snapshots,
        })
    }

    /// Compare a case's snapshot of this run with the recorded one.
    pub fn compare(&self, actual: &Snapshot) -> Comparison {
        match self.snapshots.get(&actual.case_id) {
            None => Comparison::New,
            // The body is a function of the steps, one to one: compare them, render on a change.
            Some(old) if old.steps == actual.steps => Comparison::Unchanged,
            Some(old) => Comparison::Regression {
                diff: diff(&old.body(), &actual.body()),
                input_changed: old.input != actual.input,
            },
        }
    }
}

/// A unified line diff (`-baseline`, `+actual`, three lines of context).
pub fn diff(baseline: &str, actual: &str) -> String {
    similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(500))
        .diff_lines(baseline, actual)
        .unified_diff()
        .context_radius(3)
        .header("baseline", "actual")
        .to_string()
}

/// The totals of a run compared with a baseline. REGRESSION and STALE fail the run; NEW does not.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BaselineSummary {
    /// The baseline folder.
    pub dir: String,
    /// Cases whose answers are the recorded ones.
    pub unchanged: usize,
    /// Cases whose answers changed, in run order.
    pub regressions: Vec<String>,
    /// Cases run with no snapshot in the baseline, in run order.
    pub new: Vec<String>,
    /// Snapshots whose case no longer exists in memcert's catalog, sorted.
    pub stale: Vec<String>,
    /// Cases run but not compared (race, SKIPPED).
    pub not_compared: usize,
    /// Snapshots of existing cases this run did not select (`--level`, `--cases`, `--exclude`).
    pub not_run: usize,
}

impl BaselineSummary {
    /// The totals as the reports print them: `N unchanged, N REGRESSION, N NEW, N STALE (N not
    /// compared: race or SKIPPED; N snapshots of cases not run)`.
    pub fn totals(&self) -> String {
        format!(
            "{} unchanged, {} REGRESSION, {} NEW, {} STALE ({} not compared: race or SKIPPED; {} snapshots of cases not run)",
            self.unchanged,
            self.regressions.len(),
            self.new.len(),
            self.stale.len(),
            self.not_compared,
            self.not_run
        )
    }

    /// No REGRESSION and no STALE snapshot.
    pub fn passed(&self) -> bool {
        self.regressions.is_empty() && self.stale.is_empty()
    }
}

/// Write `snap` as `<dir>/<file_name>` (atomically), and remove a pending `.snap.new` of the
/// same case.
///
/// # Errors
/// The I/O error.
pub fn write(dir: &Path, snap: &Snapshot) -> std::io::Result<()> {
    write_atomic(&dir.join(file_name(&snap.case_id)), &snap.render())?;
    remove_pending(dir, &snap.case_id)
}

/// Write `snap` as `<dir>/<file_name>.new`, insta's pending snapshot, for `cargo insta review`.
///
/// # Errors
/// The I/O error.
pub fn write_pending(dir: &Path, snap: &Snapshot) -> std::io::Result<()> {
    let path = dir.join(format!("{}.new", file_name(&snap.case_id)));
    write_atomic(&path, &snap.render())
}

/// Write through a temporary file in the same folder and a rename (mode 0644), so a reader
/// never sees half a snapshot.
fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::PermissionsExt as _;
    let folder = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(folder)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    tmp.persist(path).map(drop).map_err(|e| e.error)
}

/// Remove the pending `.snap.new` of a case, if there is one.
///
/// # Errors
/// An I/O error other than the file not being there.
pub fn remove_pending(dir: &Path, case_id: &str) -> std::io::Result<()> {
    match std::fs::remove_file(dir.join(format!("{}.new", file_name(case_id)))) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Snapshot {
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
    fn render_then_parse_gives_the_same_snapshot() {
        let mut s = sample();
        s.steps.push(Answer::Reply(ToolResult::ok("a\r\nb\u{1b}")));
        s.steps
            .push(Answer::Reply(ToolResult::ok("c1 \u{85} é \u{7f}")));
        s.steps
            .push(Answer::Reply(ToolResult::ok("tab\tnewline\n é ✓")));
        s.steps.push(Answer::Reply(ToolResult::ok("")));
        s.steps.push(Answer::Reply(ToolResult {
            content: Content::Blocks(vec![json!({"type": "text", "text": "x\ny"})]),
            is_error: false,
        }));
        s.steps.push(Answer::Reply(ToolResult {
            content: Content::Null,
            is_error: true,
        }));
        s.steps.push(Answer::Reply(ToolResult::ok(
            "--- step 9 ---\n--- end ---\n",
        )));
        s.case_id = "odd: id".into();
        let text = s.render();
        assert!(
            text.contains("content: \"c1 \\u0085 é \\u007f\"\n"),
            "{text}"
        );
        assert!(
            text.contains("content: 2 lines\ntab\tnewline\n é ✓\n"),
            "{text}"
        );
        assert!(text.contains("content: \"a\\r\\nb\\u001b\"\n"), "{text}");
        assert!(text.starts_with(&format!(
            "---\nsource: memcert {}\nexpression: \"odd: id\"\ninfo:\n  input:\n    - \"{{\\\"command\\\":\\\"view\\\",",
            env!("CARGO_PKG_VERSION")
        )));
        assert_eq!(Snapshot::parse(&text, Path::new("f")).unwrap(), s);
        let none = Snapshot {
            redactions: vec![],
            input: vec![],
            ..s.clone()
        };
        assert!(none
            .render()
            .contains("info:\n  input: []\n  redactions: []\n---\n"));
        assert_eq!(
            Snapshot::parse(&none.render(), Path::new("f")).unwrap(),
            none
        );
    }

    #[test]
    fn malformed_files_are_refused_with_the_line() {
        let p = Path::new("x.snap");
        let err = |t: &str| Snapshot::parse(t, p).unwrap_err().to_string();
        assert_eq!(
            err("nope"),
            "x.snap: not a memcert snapshot: line 1 is not `---`"
        );
        assert_eq!(
            err("---\nexpression: a\n---\n--- step 1 ---\nis_error: maybe\n"),
            "x.snap: not a memcert snapshot: line 5: expected `is_error: true|false` or `no reply: ...`"
        );
        assert_eq!(
            err("---\nexpression: a\n---\n--- step 1 ---\nis_error: true\ncontent: 3 lines\nx\n"),
            "x.snap: not a memcert snapshot: line 6: the file ends inside the content"
        );
        assert_eq!(
            err("---\nsource: x\n---\n--- end ---\n"),
            "x.snap: not a memcert snapshot: no `expression:` (the case id)"
        );
    }

    #[test]
    fn yaml_scalars_quote_as_insta_does() {
        assert_eq!(yaml_scalar("view/dir/nested"), "view/dir/nested");
        assert_eq!(yaml_scalar("memcert 0.1.0"), "memcert 0.1.0");
        assert_eq!(yaml_scalar("dir-size"), "dir-size");
        assert_eq!(yaml_scalar("-x"), "\"-x\"");
        assert_eq!(yaml_scalar("12"), "\"12\"");
        assert_eq!(
            yaml_scalar("a\"\\\u{7f}\u{1}\té"),
            "\"a\\\"\\\\\\u007f\\u0001\\té\""
        );
        for s in ["a\"\\\u{7f}\u{1}\té", "plain", "{}", ""] {
            assert_eq!(parse_scalar(&yaml_scalar(s)).unwrap(), s);
        }
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

    #[test]
    fn file_names_map_back_to_case_ids() {
        assert_eq!(file_name("view/dir/nested"), "view__dir__nested.snap");
        assert_eq!(
            case_id_of("payload__x__rename.new_path.snap").as_deref(),
            Some("payload/x/rename.new_path")
        );
        assert_eq!(case_id_of("a.snap.new"), None);
        for level in [crate::suite::catalog::RunLevel::Full] {
            for c in crate::suite::catalog::for_level(level) {
                assert_eq!(
                    case_id_of(&file_name(&c.id)).as_deref(),
                    Some(c.id.as_str())
                );
                assert!(file_name(&c.id).len() < 256);
            }
        }
    }

    #[test]
    fn compare_tells_unchanged_regression_and_new() {
        let s = sample();
        let mut b = Baseline::default();
        assert_eq!(b.compare(&s), Comparison::New);
        b.snapshots.insert(s.case_id.clone(), s.clone());
        assert_eq!(b.compare(&s), Comparison::Unchanged);
        let mut changed = s.clone();
        changed.steps[0] = Answer::Reply(ToolResult::error("other"));
        let Comparison::Regression {
            diff,
            input_changed,
        } = b.compare(&changed)
        else {
            panic!("not a regression")
        };
        assert!(!input_changed);
        assert_eq!(
            diff,
            "--- baseline\n+++ actual\n@@ -1,7 +1,7 @@\n --- step 1 ---\n is_error: true\n content: 1 line\n\
-ENOENT: '/[RUN]/base/memories/x' [TOKEN]\n+other\n --- step 2 ---\n is_error: false\n content: 6 lines\n"
        );
    }

    #[test]
    fn header_keys_of_other_insta_versions_are_ignored() {
        let snap = Redactor::new(&[], "").snapshot(
            "view/missing",
            &[serde_json::json!({"command": "view", "path": "/memories/x"})],
            &[Ok(ToolResult::ok("hello"))],
            &[],
        );
        let text = snap.render();
        // insta 1.40/1.41 wrote `snapshot_kind: text`; others write nested values.
        let other = text.replacen(
            "expression:",
            "snapshot_kind: text\nmetadata:\n  a: 1\n  list:\n    - x\nexpression:",
            1,
        );
        assert_ne!(other, text);
        let back = Snapshot::parse(&other, Path::new("view__missing.snap")).unwrap();
        assert_eq!(back.case_id, "view/missing");
        assert_eq!(back.steps, snap.steps);
        assert_eq!(back.input, snap.input);
    }
}
