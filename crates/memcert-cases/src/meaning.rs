//! What a reply SAYS, apart from how it spells it (issue 11, "grade by meaning").
//!
//! Every function here reads untrusted handler text and never panics. The parts:
//! - [`peel`]: the message inside an optional `Error: ` prefix and an exception wrapper
//!   (`ValueError('...')`, `FileNotFoundError(2, 'No such file or directory')`, `repr` quotes).
//! - [`error_classes`]: the failure classes an error text names (errno names, "does not exist",
//!   "already exists", "not unique", "is a directory", "invalid", ...), empty when it names none.
//! - [`parse_listing`]: the (virtual path, is-folder) entries of a `view` listing, whatever the
//!   header words, size spelling (`4K`, `4.0K`, `4096`, `4096 bytes`, `4.0 KiB`, none) and order.
//! - [`parse_numbered`]: the numbered lines of a file view or edit snippet, any number width.
//! - [`success_verbs`] and [`named_paths`]: which command a success sentence says was done and
//!   which `/memories` paths it names.
//! - [`explain_content`]: a disk check's mismatch in behavioural words ("inserted after line 2,
//!   asked for after line 1", "replaced all 3 occurrences", "the file is unchanged").
//!
//! The meaning/format split follows docs/spec/memory-tool.md spec:1 and spec:2.

use std::collections::BTreeSet;
use std::fmt;

/// A failure class an error text can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// The path (or file) does not exist: `ENOENT`, "does not exist", "not found", "no such".
    NotFound,
    /// The path already exists: `EEXIST`, "already exists".
    Exists,
    /// old_str matches more than once: "multiple occurrences", "not unique".
    NotUnique,
    /// old_str matches nowhere: "did not appear", "no match".
    NoMatch,
    /// A folder where a file is needed: `EISDIR`, "is a directory", "not a file".
    IsADirectory,
    /// A file where a folder is needed: `ENOTDIR`, "not a directory".
    NotADirectory,
    /// An argument out of range or invalid: "invalid", "out of range", "must be".
    Invalid,
}

impl Class {
    /// The words a finding uses for the class.
    pub fn words(self) -> &'static str {
        match self {
            Class::NotFound => "does not exist",
            Class::Exists => "already exists",
            Class::NotUnique => "not unique",
            Class::NoMatch => "no match",
            Class::IsADirectory => "is a directory",
            Class::NotADirectory => "not a directory",
            Class::Invalid => "invalid",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.words())
    }
}

/// The message of `text` without an optional leading `Error: ` (any case) and without an
/// exception wrapper: `ValueError('msg')` and `FileNotFoundError(2, 'msg')` become `msg`
/// (with the exception's name kept in front: `FileNotFoundError: msg`), `'msg'` loses its quotes.
pub fn peel(text: &str) -> String {
    let mut t = text.trim();
    loop {
        let lower = t.get(..6).map(str::to_ascii_lowercase);
        if lower.as_deref() == Some("error:") {
            t = t[6..].trim_start();
        } else {
            break;
        }
    }
    if let Some(open) = t.find('(') {
        let name = &t[..open];
        let is_exc = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            && (name.ends_with("Error") || name.ends_with("Exception"));
        if is_exc && t.ends_with(')') {
            let inner = t[open + 1..t.len() - 1].trim();
            // `2, 'msg'`: an errno first.
            let inner = match inner.split_once(',') {
                Some((n, rest))
                    if n.trim().chars().all(|c| c.is_ascii_digit()) && !n.trim().is_empty() =>
                {
                    rest.trim()
                }
                _ => inner,
            };
            return format!("{name}: {}", unquote(inner));
        }
    }
    unquote(t)
}

/// `'x'` or `"x"` (Python `repr`) without its quotes and with `\'`, `\"`, `\\`, `\n` undone.
fn unquote(t: &str) -> String {
    let b = t.as_bytes();
    if b.len() >= 2 && (b[0] == b'\'' || b[0] == b'"') && b[b.len() - 1] == b[0] {
        let inner = &t[1..t.len() - 1];
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(o) => out.push(o),
                    None => out.push('\\'),
                }
            } else {
                out.push(c);
            }
        }
        return out;
    }
    t.to_owned()
}

/// Words that name "old_str is not unique".
const NOT_UNIQUE: &[&str] = &[
    "multiple",
    "not unique",
    "more than once",
    "ambiguous",
    "must be unique",
    "ensure it is unique",
];
/// Words that name "old_str matches nowhere".
const NO_MATCH: &[&str] = &[
    "did not appear",
    "does not appear",
    "no match",
    "not present",
    "does not contain",
    "doesn't contain",
    "no occurrence",
    " 0 times",
    "zero times",
    "text not found",
    "old_str not found",
    "was not found in",
    "not found in /",
];
/// Words that name "already exists".
const EXISTS: &[&str] = &[
    "already exist",
    "eexist",
    "fileexistserror",
    "exists already",
    "already there",
    "already present",
    "already taken",
    "already in use",
];
/// Words that name "does not exist".
const NOT_FOUND: &[&str] = &[
    "does not exist",
    "doesn't exist",
    "do not exist",
    "not exist",
    "no such",
    "not found",
    "enoent",
    "filenotfounderror",
    "nothing found",
    "nothing at",
    "missing",
    "unknown path",
    "no file",
    "cannot find",
    "can't find",
    "could not find",
    "couldn't find",
    "isn't there",
    "is not there",
    "nonexistent",
    "non-existent",
];
/// Words that name "is a directory".
const IS_DIR: &[&str] = &[
    "is a directory",
    "is a folder",
    "is a dir",
    "not a file",
    "not a regular file",
    "eisdir",
    "isadirectoryerror",
    "a directory, not",
    "a folder, not",
];
/// Words that name "not a directory".
const NOT_DIR: &[&str] = &[
    "not a directory",
    "not a folder",
    "enotdir",
    "notadirectoryerror",
    "is a file",
];
/// Words that name "invalid / out of range".
const INVALID: &[&str] = &[
    "invalid",
    "out of range",
    "out-of-range",
    "outside the range",
    "must be",
    "should be",
    "within the range",
    "beyond",
    "past the end",
    "exceeds",
    "not valid",
    "valueerror",
    "typeerror",
    "indexerror",
    "must not",
    "cannot be empty",
    "is empty",
    "range",
];

/// The failure classes `text` names (after [`peel`]), empty when it gives no reason the grader
/// knows. Several can be named ("Invalid path: /memories/x does not exist").
pub fn error_classes(text: &str) -> BTreeSet<Class> {
    let l = peel(text).to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| l.contains(w));
    let mut out = BTreeSet::new();
    let times = [
        "occurs",
        "appears",
        "found",
        "matches",
        "matched",
        "occurrences",
        "hits",
    ];
    let repeated = (l.contains(" times") || l.contains(" hits"))
        && has(&times)
        && !has(&[" 0 times", "zero times"]);
    if has(NOT_UNIQUE) || repeated {
        out.insert(Class::NotUnique);
    }
    if has(NO_MATCH) {
        out.insert(Class::NoMatch);
    }
    if has(EXISTS) {
        out.insert(Class::Exists);
    }
    if has(NOT_FOUND) {
        // "line 20 does not exist": a range error in other words.
        if l.contains("line") && !l.contains("/memories") {
            out.insert(Class::Invalid);
        } else if !out.contains(&Class::NoMatch) {
            out.insert(Class::NotFound);
        }
    } else if l.contains(" exists") || l.starts_with("exists") {
        out.insert(Class::Exists);
    }
    if has(IS_DIR) {
        out.insert(Class::IsADirectory);
    }
    if has(NOT_DIR) {
        out.insert(Class::NotADirectory);
    }
    if has(INVALID) {
        out.insert(Class::Invalid);
    }
    out
}

/// One entry of a listing as the reply shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The virtual path, without a trailing `/`.
    pub path: String,
    /// True when written with a trailing `/` (the reply marks it as a folder).
    pub slash: bool,
}

/// Letters a size column may hold around its digits.
const SIZE_WORDS: &[&str] = &[
    "",
    "b",
    "k",
    "kb",
    "kib",
    "m",
    "mb",
    "mib",
    "g",
    "gb",
    "gib",
    "t",
    "tb",
    "tib",
    "bytes",
    "byte",
    "d",
    "f",
    "dir",
    "file",
    "folder",
    "directory",
];

/// The entries of a listing: every line holding a `/memories` path preceded by nothing but a
/// size, a bullet or tree marks (header and footer lines are skipped), and followed by nothing
/// or a tab / ` (...)` with a size. `None` when no line is an entry.
pub fn parse_listing(text: &str) -> Option<Vec<Entry>> {
    let mut out = Vec::new();
    for line in text.split('\n') {
        let t = line.trim();
        let Some(idx) = t.find("/memories") else {
            continue;
        };
        let prefix = &t[..idx];
        let letters: String = prefix
            .chars()
            .filter(|c| c.is_alphabetic())
            .flat_map(char::to_lowercase)
            .collect();
        let prefix_ok = !prefix.contains('/')
            && prefix.chars().count() <= 24
            && SIZE_WORDS.contains(&letters.as_str());
        // A header (`Folder /memories, two levels deep:`) ends with a colon.
        if !prefix_ok || t.ends_with(':') {
            continue;
        }
        let mut path = &t[idx..];
        if let Some((p, _)) = path.split_once('\t') {
            path = p;
        }
        if path.ends_with(')') {
            if let Some(open) = path.rfind(" (") {
                path = &path[..open];
            }
        }
        let path = path.trim_end();
        let slash = path.len() > 1 && path.ends_with('/');
        out.push(Entry {
            path: canonical(path),
            slash,
        });
    }
    (!out.is_empty()).then_some(out)
}

/// The entries of a listing that names them relative to the listed folder `dir` (`- b/`,
/// `* x.txt (10 bytes)`, `└── x.txt`): every line after the first, bullets and tree marks and a
/// size suffix taken off, joined to `dir`. For replies where [`parse_listing`] finds nothing.
pub fn parse_relative_listing(text: &str, dir: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    for line in text.split('\n').skip(1) {
        let mut t = line.trim_start_matches(|c: char| c.is_whitespace() || "-*•├└│─|`".contains(c));
        // Only bulleted lines are entries ("(empty)" or "No files." are not).
        if t.len() == line.len()
            || !line
                .trim_start()
                .starts_with(|c: char| "-*•├└│".contains(c))
        {
            continue;
        }
        if let Some((p, _)) = t.split_once('\t') {
            t = p;
        }
        if t.ends_with(')') {
            if let Some(open) = t.rfind(" (") {
                t = &t[..open];
            }
        }
        let t = t.trim_end();
        if t.is_empty() || t.starts_with('/') || t.ends_with(':') {
            continue;
        }
        out.push(Entry {
            path: canonical(&format!("{dir}/{t}")),
            slash: t.ends_with('/'),
        });
    }
    out
}

/// A virtual path as written, with `//` collapsed and a trailing `/` dropped (the root stays
/// `/memories`).
pub fn canonical(path: &str) -> String {
    let mut s = String::with_capacity(path.len());
    for c in path.chars() {
        if c == '/' && s.ends_with('/') {
            continue;
        }
        s.push(c);
    }
    while s.len() > 1 && s.ends_with('/') {
        s.pop();
    }
    s
}

/// One numbered line: `   12\ttext`, `12: text`, `12 | text`, `12 text`, or a bare `12`.
fn numbered(line: &str) -> Option<(usize, String)> {
    let t = line.trim_start_matches(' ');
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let n: usize = t[..digits].parse().ok()?;
    let rest = &t[digits..];
    let text = if rest.is_empty() {
        ""
    } else if let Some(r) = rest.strip_prefix('\t') {
        r
    } else if let Some(r) = rest.strip_prefix(" | ") {
        r
    } else if let Some(r) = rest.strip_prefix('|').or_else(|| rest.strip_prefix(": ")) {
        r
    } else if let Some(r) = rest.strip_prefix(':').or_else(|| rest.strip_prefix(" ")) {
        r
    } else {
        return None;
    };
    Some((n, text.to_owned()))
}

/// `got` (numbered lines as [`parse_numbered`] read them) with one separator taken off every
/// line when that makes the texts those of `want` (line number -> text): a handler that puts
/// two spaces (or `: ` and a tab, ...) between the number and the text, where the reader took
/// one, shows the right lines in another format. The separator must be whitespace, the same on
/// every line that has text, and an empty line may show it or not. `got` is returned as it is
/// when no such separator exists.
pub fn realign(got: Vec<(usize, String)>, want: &[(usize, String)]) -> Vec<(usize, String)> {
    let want_of = |n: usize| want.iter().find(|(m, _)| *m == n).map(|(_, t)| t.as_str());
    let mut sep: Option<&str> = None;
    for (n, t) in &got {
        let Some(w) = want_of(*n) else {
            return got;
        };
        if w.is_empty() && t.chars().all(char::is_whitespace) {
            continue;
        }
        let Some(head) = t.strip_suffix(w) else {
            return got;
        };
        if head.is_empty()
            || !head.chars().all(char::is_whitespace)
            || sep.is_some_and(|s| s != head)
        {
            return got;
        }
        sep = Some(head);
    }
    if sep.is_none() {
        return got;
    }
    got.iter()
        .map(|(n, _)| (*n, want_of(*n).unwrap_or_default().to_owned()))
        .collect()
}

/// The numbered lines of a file view or snippet: the longest run of numbered lines, the first
/// line taken as a header when its number does not continue into the next. `None` when no line
/// is numbered.
pub fn parse_numbered(text: &str) -> Option<Vec<(usize, String)>> {
    let lines: Vec<&str> = text.split('\n').collect();
    let parsed: Vec<Option<(usize, String)>> = lines.iter().map(|l| numbered(l)).collect();
    let mut start = parsed.iter().position(Option::is_some)?;
    if start == 0 {
        if let (Some(Some((a, _))), Some(Some((b, _)))) = (parsed.first(), parsed.get(1)) {
            if *b != a + 1 {
                start = 1;
            }
        }
    }
    let run: Vec<(usize, String)> = parsed[start..].iter().map_while(Clone::clone).collect();
    (!run.is_empty()).then_some(run)
}

/// The commands a success sentence says were done, by verb ("created", "saved", "replaced",
/// "inserted", "deleted", "removed", "renamed", "moved", ...).
pub fn success_verbs(text: &str) -> BTreeSet<&'static str> {
    let l = text.to_lowercase();
    let table: [(&str, &[&str]); 5] = [
        (
            "create",
            &[
                "creat", "saved", "wrote", "written", "stored", "new file", "save",
            ],
        ),
        (
            "str_replace",
            &[
                "edit",
                "replac",
                "updat",
                "modif",
                "chang",
                "rewrote",
                "rewritten",
            ],
        ),
        (
            "insert",
            &[
                "insert", "edit", "added", "updat", "modif", "wrote", "chang",
            ],
        ),
        ("delete", &["delet", "remov", "erase", "trash", "unlink"]),
        ("rename", &["renam", "moved", "move "]),
    ];
    table
        .iter()
        .filter(|(_, words)| words.iter().any(|w| l.contains(w)))
        .map(|(c, _)| *c)
        .collect()
}

/// The `/memories` paths a reply names, canonical ([`canonical`]), trailing `.`, `,`, `;`, `:`,
/// quotes and brackets dropped.
pub fn named_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("/memories") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| c.is_whitespace() || "'\"`,;)]>".contains(c))
            .unwrap_or(tail.len());
        let p = tail[..end].trim_end_matches(['.', ':', ',']);
        out.push(canonical(p));
        rest = &tail[end.max(1)..];
    }
    out
}

/// True when a success reply holds something a reader can take as an answer: a letter or digit
/// that is not `None`/`null`/`undefined`.
pub fn readable(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty()
        && t.chars().any(char::is_alphanumeric)
        && !matches!(t, "None" | "null" | "undefined" | "NaN" | "{}" | "[]")
}

/// A disk mismatch in behavioural words, when one fits: for the file a command (`input`) acted
/// on, holding `before` before the case, expected to hold `want`, found holding `found`. `None`
/// when no story fits (the caller keeps its plain "expected ..., found ..." words).
pub fn explain_content(
    input: &serde_json::Value,
    before: Option<&[u8]>,
    want: &[u8],
    found: Option<&[u8]>,
) -> Option<String> {
    let cmd = input.get("command").and_then(|v| v.as_str()).unwrap_or("");
    let Some(found) = found else {
        return Some(match before {
            Some(_) => "the file is gone".into(),
            None => "nothing is on disk".into(),
        });
    };
    if Some(found) == before && found != want {
        return Some("the file is unchanged".into());
    }
    if before.is_none() && cmd == "create" {
        return Some("the file on disk is not the file_text sent".into());
    }
    let before = std::str::from_utf8(before?).ok()?;
    let found = std::str::from_utf8(found).ok()?;
    match cmd {
        "str_replace" => {
            let old = input.get("old_str")?.as_str()?;
            let new = input.get("new_str").and_then(|v| v.as_str()).unwrap_or("");
            let n = before.matches(old).count();
            if n > 1 && !old.is_empty() && found == before.replace(old, new) {
                return Some(format!(
                    "replaced all {n} occurrences; the doc requires refusing when old_str is not unique (spec:2.3/E3)"
                ));
            }
            None
        }
        "insert" => {
            let asked = input.get("insert_line")?.as_i64()?;
            let text = input.get("insert_text")?.as_str()?;
            let lines: Vec<&str> = before.split_inclusive('\n').collect();
            for k in 0..=lines.len() {
                let mut t = lines[..k].concat();
                if !t.is_empty() && !t.ends_with('\n') {
                    t.push('\n');
                }
                let mut ins = text.to_owned();
                if !ins.ends_with('\n') {
                    ins.push('\n');
                }
                t.push_str(&ins);
                t.push_str(&lines[k..].concat());
                if (t == found || t.trim_end_matches('\n') == found.trim_end_matches('\n'))
                    && k as i64 != asked
                {
                    return Some(format!(
                        "inserted after line {k}, asked for after line {asked}"
                    ));
                }
            }
            None
        }
        _ => None,
    }
}

/// [`explain_content`] for a case's file check on `path`: the command is the last step naming
/// `path`, "before" is what the case planted there; `is_error[i]` is step `i`'s flag when it was
/// answered. A step that reported success in front of an unchanged or missing file says so
/// ("reported success but the file is unchanged"). Several creates of `path` are told by their
/// replies and the text the file holds ([`explain_creates`]).
pub fn explain_check(
    case: &crate::Case,
    path: &str,
    want: &[u8],
    found: Option<&[u8]>,
    is_error: &[Option<bool>],
) -> Option<String> {
    let before = case.setup.iter().rev().find_map(|f| match f {
        crate::Fs::File { path: p, content } if p == path => Some(content.as_slice()),
        _ => None,
    });
    // The last step that can change the file (a view cannot).
    let (i, step) = case.steps.iter().enumerate().rev().find(|(_, s)| {
        s.input.get("command").and_then(|v| v.as_str()) != Some("view")
            && ["path", "new_path"].iter().any(|k| {
                s.input
                    .get(k)
                    .and_then(|v| v.as_str())
                    .map(canonical)
                    .as_deref()
                    == Some(path)
            })
    })?;
    if let Some(why) = explain_creates(case, path, found, is_error) {
        return Some(why);
    }
    if let Some(why) = explain_inserts(case, path, before, found) {
        return Some(why);
    }
    let why = explain_content(&step.input, before, want, found)?;
    let reported_ok = is_error.get(i).copied().flatten() == Some(false);
    Some(
        if reported_ok && (why == "the file is unchanged" || found.is_none()) {
            format!("reported success but {why}")
        } else {
            why
        },
    )
}

/// Two inserts or more into `path` (`batch/insert-three-at-top`) whose result is what every
/// insert would give one line below (or above) the line it asked for, clamped to the file:
/// "inserted after line K, asked for after line N" for the first insert that moved, the words of
/// a single insert off by one ([`explain_content`]). `None` otherwise.
fn explain_inserts(
    case: &crate::Case,
    path: &str,
    before: Option<&[u8]>,
    found: Option<&[u8]>,
) -> Option<String> {
    let inserts: Vec<(i64, &str)> = case
        .steps
        .iter()
        .filter(|s| {
            s.input.get("command").and_then(|v| v.as_str()) == Some("insert")
                && s.input
                    .get("path")
                    .and_then(|v| v.as_str())
                    .map(canonical)
                    .as_deref()
                    == Some(path)
        })
        .filter_map(|s| {
            Some((
                s.input.get("insert_line")?.as_i64()?,
                s.input.get("insert_text")?.as_str()?,
            ))
        })
        .collect();
    if inserts.len() < 2 {
        return None;
    }
    let found = std::str::from_utf8(found?).ok()?;
    let start = std::str::from_utf8(before.unwrap_or_default()).ok()?;
    for d in [1i64, -1] {
        let mut lines: Vec<String> = start.lines().map(str::to_owned).collect();
        let mut first_moved = None;
        for (asked, text) in &inserts {
            let at = (asked + d).clamp(0, lines.len() as i64);
            if at != *asked && first_moved.is_none() {
                first_moved = Some((at, *asked));
            }
            let at = usize::try_from(at).ok()?;
            for (j, l) in text.lines().enumerate() {
                lines.insert(at + j, l.to_owned());
            }
        }
        let mut got = lines.join("\n");
        got.push('\n');
        if got.trim_end_matches('\n') == found.trim_end_matches('\n') {
            let (k, asked) = first_moved?;
            return Some(format!(
                "inserted after line {k}, asked for after line {asked}"
            ));
        }
    }
    None
}

/// Two creates or more of `path` (`batch/create-twice`), all answered, and a file on disk: what
/// their replies and the file show together, never which ran first (memcert cannot see that):
/// "both creates reported success and the file holds the second create's text: the second
/// create overwrote the first", "the first create was refused and the second reported success;
/// the file holds the second create's text". `None` otherwise.
fn explain_creates(
    case: &crate::Case,
    path: &str,
    found: Option<&[u8]>,
    is_error: &[Option<bool>],
) -> Option<String> {
    let creates: Vec<(usize, &str)> = case
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            s.input.get("command").and_then(|v| v.as_str()) == Some("create")
                && s.input
                    .get("path")
                    .and_then(|v| v.as_str())
                    .map(canonical)
                    .as_deref()
                    == Some(path)
        })
        .filter_map(|(i, s)| Some((i, s.input.get("file_text")?.as_str()?)))
        .collect();
    let found = found?;
    if creates.len() < 2 {
        return None;
    }
    let refused: Vec<bool> = creates
        .iter()
        .map(|(i, _)| is_error.get(*i).copied().flatten())
        .collect::<Option<_>>()?;
    let n = creates.len();
    let name = |k: usize| match k {
        0 => "first".to_owned(),
        1 => "second".to_owned(),
        2 => "third".to_owned(),
        _ => format!("create {}", k + 1),
    };
    let replies = if refused.iter().all(|r| !r) {
        let all = if n == 2 {
            "both".to_owned()
        } else {
            format!("all {n}")
        };
        format!("{all} creates reported success")
    } else if refused.iter().all(|r| *r) {
        let all = if n == 2 {
            "both".to_owned()
        } else {
            format!("all {n}")
        };
        format!("{all} creates were refused")
    } else {
        let each: Vec<String> = refused
            .iter()
            .enumerate()
            .map(|(k, r)| {
                let what = if *r {
                    "was refused"
                } else {
                    "reported success"
                };
                if k == 0 {
                    format!("the first create {what}")
                } else {
                    format!("the {} {what}", name(k))
                }
            })
            .collect();
        match each.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => each.concat(),
        }
    };
    let held = creates.iter().position(|(_, t)| t.as_bytes() == found);
    let file = match held {
        Some(k) => format!("the file holds the {} create's text", name(k)),
        None if n == 2 => "the file holds neither create's text".to_owned(),
        None => "the file holds none of the creates' texts".to_owned(),
    };
    Some(match held {
        Some(k) if k == n - 1 && refused.iter().all(|r| !r) => {
            let earlier: Vec<String> = (0..k).map(name).collect();
            format!(
                "{replies} and {file}: the {} create overwrote the {}",
                name(k),
                earlier.join(" and the ")
            )
        }
        _ if replies.starts_with("both") || replies.starts_with("all") => {
            format!("{replies} and {file}")
        }
        _ => format!("{replies}; {file}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peels_prefixes_and_exception_wrappers() {
        assert_eq!(
            peel("Error: The path x does not exist"),
            "The path x does not exist"
        );
        assert_eq!(
            peel("ValueError('bad /memories/x')"),
            "ValueError: bad /memories/x"
        );
        assert_eq!(
            peel("FileNotFoundError(2, 'No such file or directory')"),
            "FileNotFoundError: No such file or directory"
        );
        assert_eq!(peel("'it\\'s gone'"), "it's gone");
        assert_eq!(peel("Error: ("), "(");
        assert_eq!(peel("é(ü)"), "é(ü)");
    }

    #[test]
    fn classes_from_words_and_errno_names() {
        let one = |t: &str| error_classes(t).into_iter().collect::<Vec<_>>();
        assert_eq!(
            one("The path /memories/g does not exist"),
            [Class::NotFound]
        );
        assert_eq!(
            one("FileNotFoundError(2, 'No such file or directory')"),
            [Class::NotFound]
        );
        assert_eq!(
            one("Nothing found at /memories/nope.txt; check the path"),
            [Class::NotFound]
        );
        assert_eq!(
            one("Error: File /memories/a already exists"),
            [Class::Exists]
        );
        assert_eq!(one("EEXIST: file exists"), [Class::Exists]);
        assert_eq!(
            one("No replacement was performed. Multiple occurrences of old_str `a` in lines: 1, 2. Please ensure it is unique"),
            [Class::NotUnique]
        );
        assert_eq!(
            one("the text `foo` occurs 2 times in /memories/m.txt"),
            [Class::NotUnique]
        );
        assert_eq!(
            one(
                "No replacement was performed, old_str `x` did not appear verbatim in /memories/a."
            ),
            [Class::NoMatch]
        );
        assert_eq!(
            one("Nothing was changed: the text `nope` was not found in /memories/sr.txt."),
            [Class::NoMatch]
        );
        assert_eq!(one("/memories/d is a folder"), [Class::IsADirectory]);
        assert_eq!(one("ENOTDIR: not a directory"), [Class::NotADirectory]);
        assert_eq!(one("line 20 does not exist"), [Class::Invalid]);
        assert!(one("nope").is_empty());
        assert!(one("").is_empty());
    }

    #[test]
    fn listings_in_any_spelling() {
        let want = vec![
            Entry {
                path: "/memories".into(),
                slash: false,
            },
            Entry {
                path: "/memories/a".into(),
                slash: true,
            },
            Entry {
                path: "/memories/a/x.txt".into(),
                slash: false,
            },
        ];
        for text in [
            "Here're the files:\n4.0K\t/memories\n4.0K\t/memories/a/\n10B\t/memories/a/x.txt",
            "Entries under /memories, two levels deep:\n40 B\t/memories\n4.0 KiB\t/memories/a/\n10 bytes\t/memories/a/x.txt",
            "listing\n4096 /memories\n4K /memories/a/\n- /memories/a/x.txt (10 bytes)",
            "Folder /memories, two levels (hidden skipped):\nd /memories\nfolder /memories/a/\n10 /memories/a/x.txt",
        ] {
            assert_eq!(parse_listing(text).unwrap(), want, "{text}");
        }
        assert_eq!(parse_listing("no entries under /memories/x here"), None);
        assert_eq!(
            parse_relative_listing(
                "Directory: /memories/a\n- b/\n- x.txt (1 bytes)",
                "/memories/a"
            ),
            [
                Entry {
                    path: "/memories/a/b".into(),
                    slash: true
                },
                Entry {
                    path: "/memories/a/x.txt".into(),
                    slash: false
                },
            ]
        );
        assert_eq!(parse_listing(""), None);
    }

    #[test]
    fn realign_takes_off_one_whitespace_separator() {
        let want = vec![
            (1, "Hello".to_owned()),
            (2, String::new()),
            (3, "  x".to_owned()),
        ];
        let two_spaces = parse_numbered("     1  Hello\n     2  \n     3    x").unwrap();
        assert_eq!(two_spaces[0], (1, " Hello".to_owned()));
        assert_eq!(realign(two_spaces, &want), want);
        // A wrong text stays wrong; separators that differ from line to line are not one.
        let wrong = parse_numbered("1  Hello\n2  \n3  y").unwrap();
        assert_eq!(realign(wrong.clone(), &want), wrong);
        let mixed = parse_numbered("1  Hello\n2\n3   x").unwrap();
        assert_eq!(realign(mixed.clone(), &want), mixed);
    }

    #[test]
    fn numbered_lines_any_width_any_header() {
        let want = vec![(1, "a".to_owned()), (2, String::new())];
        for text in [
            "Here's the content of /memories/a with line numbers:\n     1\ta\n     2\t",
            "Contents of /memories/a:\n1: a\n2",
            "1\ta\n2\t",
            "3 lines of /memories/a\n1 | a\n2 | ",
        ] {
            assert_eq!(parse_numbered(text).unwrap(), want, "{text}");
        }
        assert_eq!(parse_numbered("just text"), None);
    }

    #[test]
    fn success_sentences_name_command_and_path() {
        assert!(success_verbs("Saved new file /memories/n.txt.").contains("create"));
        assert!(success_verbs("Removed /memories/n.txt.").contains("delete"));
        assert_eq!(
            named_paths("Saved new file /memories/a//n.txt."),
            ["/memories/a/n.txt"]
        );
        assert_eq!(
            named_paths("Moved '/memories/a' to /memories/b"),
            ["/memories/a", "/memories/b"]
        );
        assert!(!readable("None") && !readable("  ") && readable("OK"));
    }

    #[test]
    fn disk_mismatches_in_behavioural_words() {
        let ins = serde_json::json!({"command": "insert", "path": "/memories/i", "insert_line": 1, "insert_text": "X"});
        assert_eq!(
            explain_content(
                &ins,
                Some(b"l1\nl2\nl3\n"),
                b"l1\nX\nl2\nl3\n",
                Some(b"l1\nl2\nX\nl3\n")
            )
            .as_deref(),
            Some("inserted after line 2, asked for after line 1")
        );
        let sr = serde_json::json!({"command": "str_replace", "path": "/memories/m", "old_str": "foo", "new_str": "bar"});
        assert_eq!(
            explain_content(&sr, Some(b"foo\nx\nfoo\n"), b"foo\nx\nfoo\n", Some(b"bar\nx\nbar\n")).as_deref(),
            Some("replaced all 2 occurrences; the doc requires refusing when old_str is not unique (spec:2.3/E3)")
        );
        assert_eq!(
            explain_content(&sr, Some(b"foo\n"), b"bar\n", Some(b"foo\n")).as_deref(),
            Some("the file is unchanged")
        );
    }

    // See: issue 11 ("verdicts follow what was observed"): batch/create-twice said "the second
    // create of the turn ran first", which memcert cannot see; a sequential handler whose
    // second create overwrote got that story too.
    #[test]
    fn two_creates_are_told_by_their_replies_and_the_file() {
        let case = crate::catalog::all()
            .into_iter()
            .find(|c| c.id == "batch/create-twice")
            .unwrap();
        let told = |flags: &[Option<bool>], found: Option<&[u8]>| {
            explain_check(&case, "/memories/n.txt", b"first\n", found, flags)
        };
        let ok = Some(false);
        let err = Some(true);
        assert_eq!(
            told(&[ok, ok], Some(b"second\n")).as_deref(),
            Some("both creates reported success and the file holds the second create's text: the second create overwrote the first")
        );
        assert_eq!(
            told(&[err, ok], Some(b"second\n")).as_deref(),
            Some("the first create was refused and the second reported success; the file holds the second create's text")
        );
        assert_eq!(
            told(&[ok, err], Some(b"second\n")).as_deref(),
            Some("the first create reported success and the second was refused; the file holds the second create's text")
        );
        assert_eq!(
            told(&[ok, ok], Some(b"third\n")).as_deref(),
            Some("both creates reported success and the file holds neither create's text")
        );
        // Nothing on disk, or a reply missing: the plain words.
        assert_eq!(
            told(&[ok, ok], None).as_deref(),
            Some("reported success but nothing is on disk")
        );
        assert_eq!(
            told(&[ok, None], Some(b"second\n")).as_deref(),
            Some("the file on disk is not the file_text sent")
        );
    }
}
