//! The handler logic that touches no file, shared by [`super::reference`] and [`super::model`]
//! so the two cannot drift apart: a path string to a [`VPath`] or its refusal, rename's lexical
//! checks, the file view, and the new text of a str_replace or an insert.
//!
//! Every function here is a pure function of its arguments; the callers do the walking, reading
//! and writing, in the order `reference.rs` documents.

use crate::protocol::{Content, ToolResult};
use crate::text::{render, Outcome, Profile, ReasonName, MAX_LINES};
use crate::vpath::VPath;

/// Most line numbers a several-matches error lists (the first ones, ascending).
pub const MAX_LISTED_LINES: usize = 1000;

/// The reply to `outcome`: its text in `profile`'s words, `is_error` from the outcome.
pub fn reply(profile: Profile, outcome: &Outcome) -> ToolResult {
    ToolResult {
        content: Content::Text(render(profile, outcome)),
        is_error: outcome.is_error(),
    }
}

/// Parse a model-supplied path; a refusal is [`Outcome::InvalidPath`].
pub(crate) fn parse(path: &str) -> Result<VPath, Outcome> {
    VPath::parse(path).map_err(|e| Outcome::InvalidPath {
        path: e.path,
        reason: ReasonName(e.reason),
    })
}

/// rename's checks before any file is looked at, in order: both paths parse, the old path is
/// not the root, the new path is neither the root nor the old path, and it does not lie below
/// the old path. Returns the two parsed paths.
pub(crate) fn rename_paths(old_path: &str, new_path: &str) -> Result<(VPath, VPath), Outcome> {
    let old = parse(old_path)?;
    let new = parse(new_path)?;
    if old.is_root() {
        return Err(Outcome::RenameRoot);
    }
    if new.is_root() || new.components() == old.components() {
        return Err(Outcome::RenameDestinationExists {
            new_path: new_path.into(),
        });
    }
    if new.starts_with(&old) {
        return Err(Outcome::RenameIntoItself {
            old_path: old_path.into(),
            new_path: new_path.into(),
        });
    }
    Ok((old, new))
}

/// The view of a file's text: [`Outcome::TooManyLines`], [`Outcome::InvalidViewRange`] or
/// [`Outcome::ViewFile`] (lines split on `\n`, a final newline shows as an empty last line).
pub(crate) fn view_text(path: &str, text: &str, range: Option<[i64; 2]>) -> Outcome {
    // Displayed lines: split on \n, so a final newline shows as an empty last line.
    let shown = text.bytes().filter(|&b| b == b'\n').count() + 1;
    let real = if text.ends_with('\n') {
        shown - 1
    } else {
        shown
    };
    if real > MAX_LINES {
        return Outcome::TooManyLines {
            path: path.into(),
            lines: real,
        };
    }
    let (first, last) = match range {
        None => (1, shown),
        Some([start, end]) => {
            let n = shown as i64;
            let ok = start >= 1 && start <= n && (end == -1 || end >= start);
            if !ok {
                return Outcome::InvalidViewRange {
                    path: path.into(),
                    start,
                    end,
                    lines: shown,
                };
            }
            let end = if end == -1 { n } else { end.min(n) };
            (start as usize, end as usize)
        }
    };
    // One copy of the shown slice: from the start of line `first` to the end of `last`.
    let start = if first == 1 {
        0
    } else {
        text.match_indices('\n')
            .nth(first - 2)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    let end = text[start..]
        .match_indices('\n')
        .nth(last - first)
        .map_or(text.len(), |(i, _)| start + i);
    Outcome::ViewFile {
        path: path.into(),
        first,
        count: last + 1 - first,
        text: text[start..end].to_owned(),
    }
}

/// str_replace on a file's text: the new text and the [`Outcome::Edited`] excerpt to answer
/// once it is written, or the refusal ([`Outcome::EmptyOldStr`], [`Outcome::NoMatch`],
/// [`Outcome::MultipleMatches`]).
pub(crate) fn str_replace_text(
    path: &str,
    text: &str,
    old: &str,
    new: &str,
) -> Result<(String, Outcome), Outcome> {
    if old.is_empty() {
        return Err(Outcome::EmptyOldStr { path: path.into() });
    }
    let mut matches = text.match_indices(old).map(|(i, _)| i);
    let Some(pos) = matches.next() else {
        return Err(Outcome::NoMatch {
            old_str: old.into(),
            path: path.into(),
        });
    };
    if let Some(second) = matches.next() {
        // One forward pass over the text (positions ascend), each line listed once, at
        // most MAX_LISTED_LINES of them: linear even for a file full of matches.
        let mut lines = vec![line_of(text, pos)];
        let (mut line, mut at) = (lines[0], pos);
        for i in std::iter::once(second).chain(matches) {
            line += text.as_bytes()[at..i]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            at = i;
            if lines.last() != Some(&line) {
                if lines.len() == MAX_LISTED_LINES {
                    break;
                }
                lines.push(line);
            }
        }
        return Err(Outcome::MultipleMatches {
            old_str: old.into(),
            lines,
        });
    }
    let mut updated = String::with_capacity(text.len() + new.len());
    updated.push_str(&text[..pos]);
    updated.push_str(new);
    updated.push_str(&text[pos + old.len()..]);
    let changed = line_of(text, pos) - 1;
    let lines: Vec<&str> = updated.split('\n').collect();
    let start = changed.saturating_sub(2);
    let end = (changed + 3).min(lines.len());
    let edited = Outcome::Edited {
        lines: (start..end).map(|i| (i + 1, lines[i].to_owned())).collect(),
    };
    Ok((updated, edited))
}

/// insert on a file's text: the new text (one trailing `\n` of `insert_text` stripped, the
/// result ending in `\n`), or [`Outcome::InvalidInsertLine`] when `at` is outside
/// `[0, number of lines]`.
pub(crate) fn inserted_text(text: &str, at: i64, insert_text: &str) -> Result<String, Outcome> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    if at < 0 || at as u64 > lines.len() as u64 {
        return Err(Outcome::InvalidInsertLine {
            insert_line: at,
            lines: lines.len(),
        });
    }
    let piece = insert_text.strip_suffix('\n').unwrap_or(insert_text);
    lines.insert(at as usize, piece);
    let mut updated = lines.join("\n");
    if !updated.ends_with('\n') {
        updated.push('\n');
    }
    Ok(updated)
}

/// 1-based line number of byte offset `pos`.
fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()[..pos]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
