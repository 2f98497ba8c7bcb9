//! The `.snap` file format (described in [`crate::baseline`]): a [`Snapshot`] rendered as insta
//! writes it and parsed back, the file name of a case, and writing files atomically.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::{Answer, Error, Snapshot};
use crate::protocol::{Content, ToolResult};

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
        if let Some(v) = &self.catalog {
            let _ = writeln!(s, "  catalog: {}", yaml_scalar(&v.to_string()));
        }
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
        let mut file = SnapFile {
            lines: text.split('\n').enumerate(),
            path,
        };
        if file.lines.next().map(|(_, l)| l) != Some("---") {
            return Err(file.bad("line 1 is not `---`".into()));
        }
        let header = file.header()?;
        let case_id = header
            .case_id
            .ok_or_else(|| file.bad("no `expression:` (the case id)".into()))?;
        let steps = file.steps()?;
        Ok(Snapshot {
            case_id,
            catalog: header.catalog,
            input: header.input,
            redactions: header.redactions,
            steps,
        })
    }
}

/// A snapshot file being read, line by line (numbered from 0; messages say `line n + 1`).
struct SnapFile<'a> {
    lines: std::iter::Enumerate<std::str::Split<'a, char>>,
    path: &'a Path,
}

/// What memcert reads from the header: the case id, the catalog version and the two `info`
/// lists.
#[derive(Default)]
struct Header {
    case_id: Option<String>,
    catalog: Option<crate::suite::CatalogVersion>,
    input: Vec<String>,
    redactions: Vec<String>,
}

/// The `info` list that the `    - ` items under it go to.
#[derive(Clone, Copy)]
enum InfoList {
    Input,
    Redactions,
}

impl Header {
    fn list(&mut self, which: InfoList) -> &mut Vec<String> {
        match which {
            InfoList::Input => &mut self.input,
            InfoList::Redactions => &mut self.redactions,
        }
    }
}

impl<'a> SnapFile<'a> {
    /// The file is not a snapshot: `what`.
    fn bad(&self, what: String) -> Error {
        Error::Format {
            path: self.path.to_owned(),
            what,
        }
    }

    /// [`SnapFile::bad`] at line `n`.
    fn bad_at(&self, n: usize, what: &str) -> Error {
        self.bad(format!("line {}: {what}", n + 1))
    }

    /// The line after line `n`, or `missing` at line `n` when the file ends there.
    fn next_after(&mut self, n: usize, missing: &str) -> Result<(usize, &'a str), Error> {
        self.lines.next().ok_or_else(|| self.bad_at(n, missing))
    }

    /// The header, from the line after the first `---` to the second `---`: the `expression`
    /// and the `info` lists.
    fn header(&mut self) -> Result<Header, Error> {
        let mut header = Header::default();
        let mut list = None;
        // Under a top-level key other than `info` (one a newer insta writes, such as
        // `snapshot_kind`): its indented lines are skipped.
        let mut in_info = false;
        loop {
            let Some((n, line)) = self.lines.next() else {
                return Err(self.bad("the header does not end with `---`".into()));
            };
            if line == "---" {
                return Ok(header);
            }
            if !in_info && line.starts_with(' ') {
                continue;
            }
            if let Some(item) = line.strip_prefix("    - ") {
                let Some(which) = list else {
                    return Err(self.bad_at(n, "a list item outside info.input or info.redactions"));
                };
                let item = parse_scalar(item).map_err(|e| self.bad_at(n, &e))?;
                header.list(which).push(item);
            } else if let Some(rest) = line.strip_prefix("  ") {
                list = self.info_key(n, rest, &mut header)?;
            } else {
                list = None;
                in_info = self.top_level_key(n, line, &mut header)?;
            }
        }
    }

    /// An `info` key, line `n` without its indent (`input:`, `redactions: []`): the list the
    /// items below it go to, `None` when it is written `[]` or is `catalog: YEAR.MONTH.N`.
    fn info_key(
        &self,
        n: usize,
        rest: &str,
        header: &mut Header,
    ) -> Result<Option<InfoList>, Error> {
        let (key, value) = rest.split_once(':').unwrap_or((rest, ""));
        if key == "catalog" {
            let text = parse_scalar(value.trim()).map_err(|e| self.bad_at(n, &e))?;
            let v = crate::suite::CatalogVersion::parse(&text)
                .map_err(|e| self.bad_at(n, &format!("info.catalog: {e}")))?;
            header.catalog = Some(v);
            return Ok(None);
        }
        let which = match key {
            "input" => InfoList::Input,
            "redactions" => InfoList::Redactions,
            _ => return Err(self.bad_at(n, &format!("unknown info key {key:?}"))),
        };
        match value.trim() {
            "" => Ok(Some(which)),
            "[]" => Ok(None),
            _ => Err(self.bad_at(n, "expected a list")),
        }
    }

    /// A top-level key, line `n`: `expression` gives the case id. True when the key is `info`,
    /// whose indented lines are read next.
    fn top_level_key(&self, n: usize, line: &str, header: &mut Header) -> Result<bool, Error> {
        let (key, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        // `source`, `description`, `snapshot_kind`, `assertion_line`, `input_file`, and
        // whatever other key an insta version writes: not memcert's business.
        if key == "expression" {
            header.case_id = Some(parse_scalar(value).map_err(|e| self.bad_at(n, &e))?);
        }
        Ok(key == "info")
    }

    /// The body: `--- step N ---` blocks numbered from 1, up to `--- end ---`.
    fn steps(&mut self) -> Result<Vec<Answer>, Error> {
        let mut steps = Vec::new();
        loop {
            let Some((n, line)) = self.lines.next() else {
                return Err(self.bad("the body does not end with `--- end ---`".into()));
            };
            if line == "--- end ---" {
                return Ok(steps);
            }
            if line != format!("--- step {} ---", steps.len() + 1) {
                let what = format!("expected `--- step {} ---`", steps.len() + 1);
                return Err(self.bad_at(n, &what));
            }
            steps.push(self.answer(n)?);
        }
    }

    /// The answer of the step whose `--- step N ---` is line `n`: `no reply: ...`, or
    /// `is_error: ...` and the content.
    fn answer(&mut self, n: usize) -> Result<Answer, Error> {
        let (n, line) = self.next_after(n, "a step without an answer")?;
        if let Some(why) = line.strip_prefix("no reply: ") {
            return Ok(Answer::NoReply(
                json_string(why).map_err(|e| self.bad_at(n, &e))?,
            ));
        }
        let is_error = match line {
            "is_error: false" => false,
            "is_error: true" => true,
            _ => return Err(self.bad_at(n, "expected `is_error: true|false` or `no reply: ...`")),
        };
        let (n, line) = self.next_after(n, "a step without content")?;
        let content = self.content(n, line)?;
        Ok(Answer::Reply(ToolResult { content, is_error }))
    }

    /// The content written on line `n` (`content: null`, `content (blocks): ...`,
    /// `content: "..."`), or counted there and written verbatim on the lines after it.
    fn content(&mut self, n: usize, line: &str) -> Result<Content, Error> {
        if line == "content: null" {
            Ok(Content::Null)
        } else if let Some(json) = line.strip_prefix("content (blocks): ") {
            match serde_json::from_str(json) {
                Ok(Value::Array(b)) => Ok(Content::Blocks(b)),
                _ => Err(self.bad_at(n, "blocks that are not a JSON list")),
            }
        } else if let Some(json) = line.strip_prefix("content: \"") {
            let text = json_string(&format!("\"{json}")).map_err(|e| self.bad_at(n, &e))?;
            Ok(Content::Text(text))
        } else if let Some(count) = line.strip_prefix("content: ") {
            self.verbatim_text(n, count)
        } else {
            Err(self.bad_at(n, "expected `content: ...`"))
        }
    }

    /// Verbatim text counted on line `n` (`count` is `N lines` or `1 line`): the N lines after
    /// it, joined with `\n`.
    fn verbatim_text(&mut self, n: usize, count: &str) -> Result<Content, Error> {
        let count: usize = count
            .trim_end_matches(" lines")
            .trim_end_matches(" line")
            .parse()
            .map_err(|_| self.bad_at(n, "expected `content: N lines`"))?;
        // Never allocated from the count: it is untrusted (2^64 - 1 or 10^15 lines); the file's
        // end stops the loop.
        let mut text = Vec::new();
        for _ in 0..count {
            let (_, l) = self.next_after(n, "the file ends inside the content")?;
            text.push(l);
        }
        Ok(Content::Text(text.join("\n")))
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

/// The largest snapshot file read or written, in bytes (128 MiB: four times the default read
/// cap on one answer, which a snapshot keeps whole).
pub const MAX_SNAP_BYTES: u64 = 128 * 1024 * 1024;

/// The text of the snapshot file `path`, read defensively: opened with `O_NOFOLLOW |
/// O_NONBLOCK` (a link is refused, a FIFO does not block), refused unless the opened handle is a
/// regular file of at most [`MAX_SNAP_BYTES`], and read no further than that even if it grows.
///
/// # Errors
/// [`Error::NotRegular`] (a link, FIFO, socket, device or folder), [`Error::TooLarge`],
/// [`Error::Read`] for an I/O error or text that is not UTF-8.
pub fn read_snap(path: &Path) -> Result<String, Error> {
    use rustix::fs::{FileType, Mode, OFlags};
    use std::io::Read as _;
    let read = |source| Error::Read {
        path: path.to_owned(),
        source,
    };
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        // O_NOFOLLOW on a link: ELOOP.
        Err(rustix::io::Errno::LOOP) => {
            return Err(Error::NotRegular {
                path: path.to_owned(),
                kind: "a symbolic link",
            })
        }
        Err(e) => return Err(read(e.into())),
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| read(e.into()))?;
    let kind = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => None,
        FileType::Directory => Some("a folder"),
        FileType::Symlink => Some("a symbolic link"),
        FileType::Fifo => Some("a FIFO"),
        FileType::Socket => Some("a socket"),
        FileType::CharacterDevice => Some("a character device"),
        FileType::BlockDevice => Some("a block device"),
        FileType::Unknown => Some("a file of unknown type"),
    };
    if let Some(kind) = kind {
        return Err(Error::NotRegular {
            path: path.to_owned(),
            kind,
        });
    }
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > MAX_SNAP_BYTES {
        return Err(Error::TooLarge {
            path: path.to_owned(),
            bytes: size,
            limit: MAX_SNAP_BYTES,
        });
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(MAX_SNAP_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read)?;
    if bytes.len() as u64 > MAX_SNAP_BYTES {
        return Err(Error::TooLarge {
            path: path.to_owned(),
            bytes: bytes.len() as u64,
            limit: MAX_SNAP_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        read(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            e.utf8_error(),
        ))
    })
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

/// Write `snap` as `<dir>/<file_name>` (atomically), and remove a pending `.snap.new` of the
/// same case.
///
/// # Errors
/// The I/O error.
pub fn write(dir: &Path, snap: &Snapshot) -> std::io::Result<()> {
    write_atomic(&dir.join(file_name(&snap.case_id)), &checked(snap)?)?;
    remove_pending(dir, &snap.case_id)
}

/// `snap` rendered, refused when over [`MAX_SNAP_BYTES`] (it could not be read back).
fn checked(snap: &Snapshot) -> std::io::Result<String> {
    let text = snap.render();
    if text.len() as u64 > MAX_SNAP_BYTES {
        return Err(std::io::Error::other(format!(
            "the snapshot of {} is {} bytes, over the {MAX_SNAP_BYTES}-byte limit of a snapshot file",
            snap.case_id,
            text.len()
        )));
    }
    Ok(text)
}

/// Write `snap` as `<dir>/<file_name>.new`, insta's pending snapshot, for `cargo insta review`.
///
/// # Errors
/// The I/O error.
pub fn write_pending(dir: &Path, snap: &Snapshot) -> std::io::Result<()> {
    let path = dir.join(format!("{}.new", file_name(&snap.case_id)));
    write_atomic(&path, &checked(snap)?)
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
    use crate::baseline::redact::tests::sample;
    use crate::baseline::Redactor;
    use serde_json::json;

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
            "---\nsource: memcert {}\nexpression: \"odd: id\"\ninfo:\n  catalog: {}\n  input:\n    - \"{{\\\"command\\\":\\\"view\\\",",
            env!("CARGO_PKG_VERSION"),
            crate::suite::CATALOG_VERSION
        )));
        assert_eq!(Snapshot::parse(&text, Path::new("f")).unwrap(), s);
        let none = Snapshot {
            redactions: vec![],
            input: vec![],
            catalog: None,
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

    // See: issue 13 ("a .snap claiming 2^64-1 lines panics (exit 101), 10^15 lines aborts
    // (134)").
    #[test]
    fn absurd_line_counts_are_refused_without_allocating() {
        let p = Path::new("x.snap");
        for count in ["18446744073709551615", "1000000000000000"] {
            let text = format!(
                "---\nexpression: a\n---\n--- step 1 ---\nis_error: true\ncontent: {count} lines\nx\n"
            );
            assert_eq!(
                Snapshot::parse(&text, p).unwrap_err().to_string(),
                "x.snap: not a memcert snapshot: line 6: the file ends inside the content"
            );
        }
        let text = "---\nexpression: a\n---\n--- step 1 ---\nis_error: true\ncontent: 18446744073709551616 lines\n";
        assert_eq!(
            Snapshot::parse(text, p).unwrap_err().to_string(),
            "x.snap: not a memcert snapshot: line 6: expected `content: N lines`"
        );
    }

    // See: issue 13 ("a .snap that is a FIFO hangs, one linked to /dev/zero reads until out of
    // memory").
    #[test]
    fn only_regular_snap_files_within_the_size_cap_are_read() {
        use rustix::fs::{FileType, Mode, CWD};
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.snap");
        rustix::fs::mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
        let zero = dir.path().join("zero.snap");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let folder = dir.path().join("folder.snap");
        std::fs::create_dir(&folder).unwrap();
        let huge = dir.path().join("huge.snap");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(MAX_SNAP_BYTES + 1)
            .unwrap();
        let started = std::time::Instant::now();
        let err = |p: &Path| read_snap(p).unwrap_err().to_string();
        for (path, what) in [
            (&fifo, "not a regular file (a FIFO)"),
            (&zero, "not a regular file (a symbolic link)"),
            (&folder, "not a regular file (a folder)"),
            (
                &huge,
                "134217729 bytes, over the 134217728-byte limit of a snapshot file",
            ),
        ] {
            let e = err(path);
            assert!(e.starts_with(&format!("{}: {what}", path.display())), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        assert!(err(Path::new("/dev/zero")).contains("(a character device)"));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let ok = dir.path().join("ok.snap");
        std::fs::write(&ok, sample().render()).unwrap();
        assert_eq!(read_snap(&ok).unwrap(), sample().render());
    }

    #[test]
    fn the_catalog_line_is_written_read_back_optional_and_checked() {
        let s = sample();
        let text = s.render();
        assert!(
            text.contains(&format!(
                "\ninfo:\n  catalog: {}\n  input:\n",
                crate::suite::CATALOG_VERSION
            )),
            "{text}"
        );
        let back = Snapshot::parse(&text, Path::new("f")).unwrap();
        assert!(back
            .catalog
            .as_ref()
            .is_some_and(crate::suite::CatalogVersion::is_current));
        let line = format!("  catalog: {}\n", crate::suite::CATALOG_VERSION);
        let none = Snapshot::parse(&text.replace(&line, ""), Path::new("f")).unwrap();
        assert_eq!(none.catalog, None);
        assert_eq!(none.steps, s.steps);
        let older = text.replace(&line, "  catalog: 2026.11.1\n");
        let older = Snapshot::parse(&older, Path::new("f")).unwrap();
        assert_eq!(older.catalog.unwrap().to_string(), "2026.11.1");
        let bad = text.replace(&line, "  catalog: \"\"\n");
        assert_eq!(
            Snapshot::parse(&bad, Path::new("x.snap"))
                .unwrap_err()
                .to_string(),
            format!(
                "x.snap: not a memcert snapshot: line 5: info.catalog: \"\" is not a catalog version (YEAR.MONTH.N, such as {})",
                crate::suite::CATALOG_VERSION
            )
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
