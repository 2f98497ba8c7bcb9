//! Verdicts, and how one reply is graded against a step's acceptable replies (pure functions).
//!
//! Replies are compared the way `docs/spec/memory-tool.md` spec:1 says they can be:
//! `is_error` always, text after an optional leading `Error: `, and directory sizes in listings
//! never literally (they depend on the filesystem, spec:0).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Accept, Level, Reply, Step};
use crate::meaning::{self, Class};
use memcert_tool::protocol::ToolResult;
use memcert_tool::text::{render, strip_error_prefix, Outcome, Profile};

/// The grade of a case, worst last. Reports print them as `PASS`, `NON-STRICT`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// The reply and the disk are what the requirement asks.
    Pass,
    /// Not run: the target lacks something the case needs.
    Skipped,
    /// Worth knowing, not graded (e.g. a handler that follows in-root links for reading).
    Info,
    /// Right behaviour with other wording, or a choice the doc allows; `--strict` makes it FAIL.
    NonStrict,
    /// Wrong behaviour.
    Fail,
    /// The harness could not get an answer (timeout, crash, non-JSON, ...).
    Error,
    /// Anything outside the root read, written, created or removed; data inside the root
    /// destroyed through a link; the host's absolute path disclosed.
    Unsafe,
}

impl Verdict {
    /// Every verdict, best first.
    pub const ALL: [Verdict; 7] = [
        Verdict::Pass,
        Verdict::Skipped,
        Verdict::Info,
        Verdict::NonStrict,
        Verdict::Fail,
        Verdict::Error,
        Verdict::Unsafe,
    ];

    /// Upper-case name: `PASS`, `NON-STRICT`, `INFO`, `FAIL`, `UNSAFE`, `ERROR`, `SKIPPED`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Skipped => "SKIPPED",
            Verdict::Info => "INFO",
            Verdict::NonStrict => "NON-STRICT",
            Verdict::Fail => "FAIL",
            Verdict::Error => "ERROR",
            Verdict::Unsafe => "UNSAFE",
        }
    }

    /// True for the verdicts that stop a handler from being certified.
    pub fn blocks_certification(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::Error | Verdict::Unsafe)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Read from the printed name (`PASS`, `NON-STRICT`, ...), as reports write it.
impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Verdict::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown verdict {s:?}; use PASS, SKIPPED, INFO, NON-STRICT, FAIL, ERROR or UNSAFE"
                ))
            })
    }
}

/// The grade of one reply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepGrade {
    /// Verdict of the reply alone.
    pub verdict: Verdict,
    /// The note of the accepted reply, or why none matched.
    pub note: String,
}

/// True when `actual` matches `reply` in `profile` (see the module docs for the rules).
pub fn reply_matches(profile: Profile, reply: &Reply, actual: &ToolResult) -> bool {
    match reply {
        Reply::AnyError => actual.is_error,
        Reply::AnySuccess => !actual.is_error,
        Reply::Recorded(r) => {
            let Some(text) = actual.content.text() else {
                return false;
            };
            if actual.is_error != r.is_error {
                return false;
            }
            if r.text.starts_with("Here're the files and directories") {
                // The listed directory (entry 0) and sub-directories (`…/`) have sizes that
                // differ by filesystem.
                let masked: Vec<bool> = r
                    .text
                    .split('\n')
                    .skip(1)
                    .enumerate()
                    .map(|(i, l)| i == 0 || l.ends_with('/'))
                    .collect();
                listing_equal(&r.text, &text, &masked)
            } else {
                r.text == text
            }
        }
        Reply::Exact(outcome) => {
            if actual.is_error != outcome.is_error() {
                return false;
            }
            let Some(text) = actual.content.text() else {
                return false;
            };
            let want = render(profile, outcome);
            let (want, got) = if outcome.is_error() {
                (strip_error_prefix(&want), strip_error_prefix(&text))
            } else {
                (want.as_str(), text.as_str())
            };
            match outcome {
                Outcome::ViewDir { entries, .. } => {
                    let mut masked = vec![true];
                    masked.extend(entries.iter().map(|e| e.dir));
                    listing_equal(want, got, &masked)
                }
                _ => want == got,
            }
        }
    }
}

/// Compare listings line by line; `masked[i]` says whether entry line `i` (0 = the listed
/// directory itself, after the header) is a directory whose size is not compared.
fn listing_equal(want: &str, got: &str, masked: &[bool]) -> bool {
    let w: Vec<&str> = want.split('\n').collect();
    let g: Vec<&str> = got.split('\n').collect();
    if w.len() != g.len() || w.first() != g.first() {
        return false;
    }
    w.iter().zip(&g).skip(1).enumerate().all(|(i, (a, b))| {
        if masked.get(i).copied().unwrap_or(false) {
            match (a.split_once('\t'), b.split_once('\t')) {
                (Some((_, ra)), Some((sb, rb))) => ra == rb && !sb.is_empty(),
                _ => false,
            }
        } else {
            a == b
        }
    })
}

/// The accepted replies of `step` that apply to `profile`, best first.
pub fn applicable(step: &Step, profile: Profile) -> impl Iterator<Item = &Accept> {
    step.accept
        .iter()
        .filter(move |a| a.profiles.is_empty() || a.profiles.contains(&profile))
}

/// What a reply to `step` should be in `profile`, as text: the first `Exact` accept rendered,
/// or a description of the pattern.
pub fn expected_text(step: &Step, profile: Profile) -> String {
    match applicable(step, profile).next().map(|a| &a.reply) {
        Some(Reply::Exact(o)) => {
            let flag = if o.is_error() { "is_error: true\n" } else { "" };
            format!("{flag}{}", render(profile, o))
        }
        Some(Reply::AnyError) => "is_error: true (any text)".to_owned(),
        Some(Reply::AnySuccess) => "a success reply (any text)".to_owned(),
        Some(Reply::Recorded(r)) => {
            let flag = if r.is_error { "is_error: true\n" } else { "" };
            format!("{flag}{}", r.text)
        }
        None => "(no acceptable reply for this profile)".to_owned(),
    }
}

/// Grade one reply: the first accept whose reply matches exactly sets the verdict. Otherwise the
/// reply is read for its meaning ([`crate::meaning`]): the same meaning as an `Exact` accept in
/// other words earns that accept's verdict, at best `NonStrict` (format, issue 11); a different
/// meaning is `Fail` for a MUST case and `NonStrict` for a SHOULD case (`Fail` with `strict`),
/// with a finding that says in behavioural words what differs.
pub fn grade_step(
    step: &Step,
    actual: &ToolResult,
    profile: Profile,
    level: Level,
    strict: bool,
) -> StepGrade {
    let harden = |v: Verdict| {
        if strict && v == Verdict::NonStrict {
            Verdict::Fail
        } else {
            v
        }
    };
    // An exact PASS wins outright; otherwise the accepts are read best first, each matched
    // exactly or, for an `Exact` one, by meaning.
    let exact_pass = applicable(step, profile)
        .find(|a| a.verdict == Verdict::Pass && reply_matches(profile, &a.reply, actual));
    if let Some(a) = exact_pass {
        return StepGrade {
            verdict: a.verdict,
            note: a.note.clone(),
        };
    }
    let mut first_diff = None;
    for a in applicable(step, profile) {
        if reply_matches(profile, &a.reply, actual) {
            return StepGrade {
                verdict: harden(a.verdict),
                note: a.note.clone(),
            };
        }
        let Reply::Exact(o) = &a.reply else { continue };
        match compare(step, o, actual) {
            Ok(notes) => {
                // Other words never earn more than NON-STRICT; a worse accept keeps its grade.
                let verdict = harden(match a.verdict {
                    Verdict::Pass => Verdict::NonStrict,
                    v => v,
                });
                let mut note = format!("{} in other words", a.note);
                if !notes.is_empty() {
                    note = format!("{note} ({})", notes.join("; "));
                }
                return StepGrade { verdict, note };
            }
            Err(why) => {
                first_diff.get_or_insert(why);
            }
        }
    }
    let verdict = match (level, strict) {
        (Level::Should, false) => Verdict::NonStrict,
        _ => Verdict::Fail,
    };
    let note = first_diff.unwrap_or_else(|| pattern_diff(step, profile, actual));
    StepGrade { verdict, note }
}

/// The reply, quoted and cut to 160 characters, for findings.
fn quote(text: &str) -> String {
    let cut: String = text.chars().take(160).collect();
    let more = if cut.len() < text.len() { "…" } else { "" };
    format!("{cut:?}{more}")
}

/// Why a reply fits none of a step's patterns (`AnyError`, `AnySuccess`), in words.
fn pattern_diff(step: &Step, profile: Profile, actual: &ToolResult) -> String {
    let text = actual.content.text().unwrap_or_default();
    let wants_error =
        applicable(step, profile).any(|a| a.verdict == Verdict::Pass && a.reply == Reply::AnyError);
    let wants_success = applicable(step, profile)
        .any(|a| a.verdict == Verdict::Pass && a.reply == Reply::AnySuccess);
    if wants_error && !actual.is_error {
        format!(
            "reported success ({}); the case expects an error",
            quote(&text)
        )
    } else if wants_success && actual.is_error {
        format!(
            "reported an error ({}); the case expects success",
            quote(&text)
        )
    } else {
        format!(
            "the reply ({}, is_error: {}) matches none of the acceptable replies",
            quote(&text),
            actual.is_error
        )
    }
}

/// The failure class an error outcome stands for, and the classes a reply may name instead;
/// `None` when any reason will do.
fn expected_class(o: &Outcome) -> Option<(Class, &'static [Class])> {
    use Class::*;
    Some(match o {
        Outcome::ViewNotFound { .. }
        | Outcome::StrReplaceNotFound { .. }
        | Outcome::InsertNotFound { .. }
        | Outcome::DeleteNotFound { .. }
        | Outcome::RenameNotFound { .. } => (NotFound, &[NotFound]),
        Outcome::FileExists { .. } | Outcome::RenameDestinationExists { .. } => (Exists, &[Exists]),
        Outcome::MultipleMatches { .. } => (NotUnique, &[NotUnique]),
        Outcome::NoMatch { .. } => (NoMatch, &[NoMatch, NotFound]),
        Outcome::NotAFile { .. } => (IsADirectory, &[IsADirectory, Invalid]),
        Outcome::NotADirectory { .. } | Outcome::ParentNotADirectory { .. } => {
            (NotADirectory, &[NotADirectory, NotFound, Invalid])
        }
        Outcome::InvalidViewRange { .. } | Outcome::InvalidInsertLine { .. } => {
            (Invalid, &[Invalid])
        }
        _ => return None,
    })
}

/// What an outcome says, in a few words, for findings.
fn describe(o: &Outcome) -> String {
    match o {
        Outcome::ViewDir { path, .. } => format!("a listing of {path}"),
        Outcome::ViewFile { path, .. } => format!("the lines of {path}"),
        Outcome::Created { path } => format!("create of {path} done"),
        Outcome::Edited { .. } => "the replacement done".into(),
        Outcome::Inserted { path } => format!("insert into {path} done"),
        Outcome::Deleted { path } => format!("{path} deleted"),
        Outcome::Renamed { old_path, new_path } => format!("{old_path} renamed to {new_path}"),
        other => match expected_class(other) {
            Some((c, _)) => format!("an error ({c})"),
            None => "an error".into(),
        },
    }
}

/// The paths a step's input names (`path`, `old_path`, `new_path`), canonical.
fn input_paths(step: &Step) -> Vec<String> {
    ["path", "old_path", "new_path"]
        .iter()
        .filter_map(|k| step.input.get(k).and_then(|v| v.as_str()))
        .map(meaning::canonical)
        .collect()
}

/// Does `actual` say what `o` says? `Ok(notes on format)` or `Err(what differs)`.
fn compare(step: &Step, o: &Outcome, actual: &ToolResult) -> Result<Vec<String>, String> {
    let Some(text) = actual.content.text() else {
        return Err("the reply has no text content".into());
    };
    if o.is_error() {
        if !actual.is_error {
            let named = meaning::error_classes(&text);
            let said: Vec<&str> = named.iter().map(|c| c.words()).collect();
            return Err(if !said.is_empty() {
                format!(
                    "the reply reads as an error ('{}') but is_error is false ({})",
                    said.join("', '"),
                    quote(&text)
                )
            } else if text.trim_start().to_lowercase().starts_with("error") {
                format!(
                    "the reply reads as an error ({}) but is_error is false",
                    quote(&text)
                )
            } else {
                format!(
                    "reported success ({}); the case expects {}",
                    quote(&text),
                    describe(o)
                )
            });
        }
        let Some((want, fits)) = expected_class(o) else {
            return Ok(vec!["another reason given".into()]);
        };
        let named = meaning::error_classes(&text);
        if named.is_empty() {
            return Ok(vec!["the error gives no reason".into()]);
        }
        if named.iter().any(|c| fits.contains(c)) {
            return Ok(Vec::new());
        }
        let said: Vec<&str> = named.iter().map(|c| c.words()).collect();
        return Err(format!(
            "the error says '{}', the case expects '{want}' ({})",
            said.join("', '"),
            quote(&text)
        ));
    }
    if actual.is_error {
        return Err(format!(
            "reported an error ({}); the case expects {}",
            quote(&text),
            describe(o)
        ));
    }
    match o {
        Outcome::ViewDir { path, entries, .. } => compare_listing(path, entries, &text),
        Outcome::ViewFile {
            first,
            count,
            text: want,
            ..
        } => compare_view(*first, *count, want, &text, step.tests_view_format),
        Outcome::Edited { lines } => compare_done(step, "str_replace", &text, lines),
        Outcome::Created { .. } => compare_done(step, "create", &text, &[]),
        Outcome::Inserted { .. } => compare_done(step, "insert", &text, &[]),
        Outcome::Deleted { .. } => compare_done(step, "delete", &text, &[]),
        Outcome::Renamed { .. } => compare_done(step, "rename", &text, &[]),
        _ => Err(format!(
            "the reply ({}) is not {}",
            quote(&text),
            describe(o)
        )),
    }
}

/// A listing: the set of entries (the listed folder itself apart), a file never shown as a
/// folder; sizes, header and order are format.
fn compare_listing(
    path: &str,
    entries: &[memcert_tool::text::ListEntry],
    text: &str,
) -> Result<Vec<String>, String> {
    let own = meaning::canonical(path);
    let got =
        meaning::parse_listing(text).unwrap_or_else(|| meaning::parse_relative_listing(text, &own));
    let mut notes = Vec::new();
    if !got.iter().any(|e| e.path == own) {
        notes.push(format!("the listed folder {own} itself is not shown"));
    }
    for e in entries {
        // A listing's line ends where its name ends: a trailing space of a name cannot be told
        // from the line's end in a listing of other words, which is read without it. A name
        // with one is found when the listing shows at least as many entries of its trimmed
        // spelling as the model holds (`a.txt` and `a.txt ` need two lines `a.txt`).
        let key = e.path.trim_end();
        let found = got.iter().find(|g| g.path == e.path).or_else(|| {
            let held = entries.iter().filter(|o| o.path.trim_end() == key).count();
            let shown = got.iter().filter(|g| g.path.trim_end() == key).count();
            (key.len() < e.path.len() && shown >= held)
                .then(|| got.iter().find(|g| g.path.trim_end() == key))
                .flatten()
        });
        if found.is_some_and(|g| g.path != e.path) {
            let note = "the listing's words cannot show a name's trailing space".to_owned();
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        match found {
            None => {
                // A store that folds case shows the name it made of the one created.
                let folded = got
                    .iter()
                    .find(|g| g.path != e.path && g.path.to_lowercase() == e.path.to_lowercase());
                return Err(match folded {
                    Some(g) => format!(
                        "the listing lacks {}: it shows {} (the store folds case)",
                        e.path, g.path
                    ),
                    None => format!("the listing lacks {}", e.path),
                });
            }
            Some(g) if g.slash && !e.dir && g.path == e.path => {
                return Err(format!("the listing shows the file {} as a folder", e.path))
            }
            Some(_) => {}
        }
    }
    // Dot-names and node_modules are left out of the documented listing, whose header says so;
    // a listing that shows them where no line of its text (entries apart) promises to leave
    // them out tells no lie: NON-STRICT, one note per kind. Only names below the listed folder
    // count: `..`, `.` and paths beside the folder are never excused.
    let prose: String = text
        .lines()
        .filter(|l| {
            !got.iter()
                .any(|g| g.path != own && l.contains(g.path.as_str()))
        })
        .collect::<Vec<_>>()
        .join("\n")
        .to_lowercase();
    let below = format!("{}/", own.trim_end_matches('/'));
    for extra in got.iter().filter(|g| {
        g.path != own
            && !entries
                .iter()
                .any(|e| e.path == g.path || e.path.trim_end() == g.path.trim_end())
    }) {
        let p = &extra.path;
        let rest = p.strip_prefix(below.as_str());
        let parts: Vec<&str> = rest.map(|r| r.split('/').collect()).unwrap_or_default();
        let plain = rest.is_some() && !parts.iter().any(|c| *c == ".." || *c == ".");
        let (why, promised) = if plain && parts.iter().any(|c| c.starts_with('.')) {
            (
                "a dot-name, which listings leave out",
                prose.contains("hidden"),
            )
        } else if plain && parts.iter().any(|c| *c == "node_modules") {
            (
                "node_modules, which listings leave out",
                prose.contains("node_modules"),
            )
        } else if plain && parts.len() > 2 {
            ("deeper than 2 levels", true)
        } else {
            ("which the case does not expect", true)
        };
        if promised {
            return Err(format!("the listing shows {p}, {why}"));
        }
        let note = format!("the listing shows {why}; its header does not say it leaves them out");
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    Ok(notes)
}

/// A file view: the line texts in order and their numbers when numbers are shown; a missing
/// empty line after the final newline is format, and so are missing numbers unless the step
/// tests the numbered view format (`numbered`, [`Step::tests_view_format`]).
fn compare_view(
    first: usize,
    count: usize,
    want: &str,
    text: &str,
    numbered: bool,
) -> Result<Vec<String>, String> {
    let want_lines: Vec<(usize, String)> = if count == 0 {
        Vec::new()
    } else {
        want.split('\n')
            .enumerate()
            .map(|(i, l)| (first + i, l.to_owned()))
            .collect()
    };
    let trimmed = match want_lines.last() {
        Some((_, l)) if l.is_empty() => &want_lines[..want_lines.len() - 1],
        _ => &want_lines[..],
    };
    let got = meaning::realign(
        meaning::parse_numbered(text).unwrap_or_default(),
        &want_lines,
    );
    if got == want_lines {
        return Ok(Vec::new());
    }
    if got == trimmed && !got.is_empty() {
        return Ok(vec!["no empty line shown after the final newline".into()]);
    }
    // No numbers: the text itself, with or without a header line.
    let body = text.split_once('\n').map(|(_, b)| b).unwrap_or("");
    let plain: Vec<&str> = want_lines.iter().map(|(_, l)| l.as_str()).collect();
    let plain = plain.join("\n");
    for candidate in [text, body] {
        if candidate == plain || candidate.trim_end_matches('\n') == plain.trim_end_matches('\n') {
            if count == 0 {
                return Ok(Vec::new());
            }
            if numbered {
                return Err("the file is shown without line numbers; this case tests the numbered view format (spec:2.1/C1)".into());
            }
            return Ok(vec!["no line numbers shown".into()]);
        }
    }
    if got.is_empty() {
        return Err(format!(
            "the view does not show the lines of the file ({})",
            quote(text)
        ));
    }
    let span = |v: &[(usize, String)]| match (v.first(), v.last()) {
        (Some(a), Some(b)) => format!("lines {}–{}", a.0, b.0),
        _ => "no lines".into(),
    };
    for (g, w) in got.iter().zip(&want_lines) {
        if g.0 != w.0 {
            return Err(format!(
                "the view shows {}, the case expects {}",
                span(&got),
                span(&want_lines)
            ));
        }
        if g.1 != w.1 {
            return Err(format!(
                "line {} reads {:?}, the file's line {} is {:?}",
                g.0, g.1, w.0, w.1
            ));
        }
    }
    Err(format!(
        "the view shows {}, the case expects {}",
        span(&got),
        span(&want_lines)
    ))
}

/// A success of `cmd`: readable, not naming another command's verb only, naming the command's
/// path when it names a `/memories` path at all; a snippet's numbered lines agree with `lines`.
fn compare_done(
    step: &Step,
    cmd: &str,
    text: &str,
    lines: &[(usize, String)],
) -> Result<Vec<String>, String> {
    if !meaning::readable(text) {
        return Err(format!("unreadable reply: {}", quote(text)));
    }
    let verbs = meaning::success_verbs(text);
    if !verbs.is_empty() && !verbs.contains(cmd) {
        let said: Vec<&str> = verbs.into_iter().collect();
        return Err(format!(
            "the reply says {} was done, the command was {cmd} ({})",
            said.join("/"),
            quote(text)
        ));
    }
    let inputs = input_paths(step);
    let named = meaning::named_paths(text);
    if !inputs.is_empty()
        && !named.is_empty()
        && !named.iter().any(|n| inputs.contains(n))
        && !inputs.iter().any(|i| text.contains(i.as_str()))
    {
        return Err(format!(
            "the reply names {}, the command's path is {}",
            named[0], inputs[0]
        ));
    }
    if let Some(got) = meaning::parse_numbered(text) {
        for (n, t) in &meaning::realign(got, lines) {
            if let Some((_, w)) = lines.iter().find(|(m, _)| m == n) {
                if w != t {
                    return Err(format!(
                        "the snippet shows line {n} as {t:?}, the file's line {n} is {w:?}"
                    ));
                }
            }
        }
    }
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use memcert_tool::text::ListEntry;

    fn listing() -> Outcome {
        Outcome::ViewDir {
            path: "/memories".into(),
            size: 4096,
            entries: vec![
                ListEntry {
                    size: 4096,
                    path: "/memories/a".into(),
                    dir: true,
                },
                ListEntry {
                    size: 10,
                    path: "/memories/a/x.txt".into(),
                    dir: false,
                },
            ],
        }
    }

    #[test]
    fn directory_sizes_are_masked_file_sizes_are_not() {
        let r = Reply::Exact(listing());
        let tmpfs = ToolResult::ok("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n60B\t/memories\n80B\t/memories/a/\n10B\t/memories/a/x.txt");
        assert!(reply_matches(Profile::PythonSdk, &r, &tmpfs));
        let wrong_file = ToolResult::ok("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories\n4K\t/memories/a/\n11B\t/memories/a/x.txt");
        assert!(!reply_matches(Profile::PythonSdk, &r, &wrong_file));
        let flagged = ToolResult {
            is_error: true,
            ..tmpfs
        };
        assert!(!reply_matches(Profile::PythonSdk, &r, &flagged));
    }

    #[test]
    fn recorded_replies_match_exactly_but_for_directory_sizes() {
        let r = Reply::Recorded(crate::Recorded {
            text: "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories\n4K\t/memories/a/\n10B\t/memories/a/x.txt".into(),
            is_error: false,
        });
        let tmpfs = ToolResult::ok("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n60B\t/memories\n80B\t/memories/a/\n10B\t/memories/a/x.txt");
        assert!(reply_matches(Profile::Docs, &r, &tmpfs));
        let grown = ToolResult::ok("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n60B\t/memories\n80B\t/memories/a/\n11B\t/memories/a/x.txt");
        assert!(!reply_matches(Profile::Docs, &r, &grown));
        let e = Reply::Recorded(crate::Recorded {
            text: "Error: no".into(),
            is_error: true,
        });
        assert!(reply_matches(
            Profile::Docs,
            &e,
            &ToolResult::error("Error: no")
        ));
        assert!(!reply_matches(Profile::Docs, &e, &ToolResult::error("no")));
        assert!(!reply_matches(
            Profile::Docs,
            &e,
            &ToolResult::ok("Error: no")
        ));
    }

    #[test]
    fn hidden_names_listed_are_a_lie_only_under_a_header_that_promises_to_leave_them_out() {
        let want = [ListEntry {
            size: 1,
            path: "/memories/n.txt".into(),
            dir: false,
        }];
        let body = "4.0K\t/memories\n4.0K\t/memories/node_modules\n1\t/memories/node_modules/m.txt\n2\t/memories/.h\n1\t/memories/n.txt";
        let promised = format!("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n{body}");
        assert_eq!(
            compare_listing("/memories", &want, &promised),
            Err(
                "the listing shows /memories/node_modules, node_modules, which listings leave out"
                    .into()
            )
        );
        let plain = format!("Contents of /memories:\n{body}");
        assert_eq!(
            compare_listing("/memories", &want, &plain),
            Ok(vec![
                "the listing shows node_modules, which listings leave out; its header does not say it leaves them out".to_owned(),
                "the listing shows a dot-name, which listings leave out; its header does not say it leaves them out".to_owned(),
            ])
        );
        let folded = "Contents of /memories:\n4.0K\t/memories\n1\t/memories/N.TXT";
        assert_eq!(
            compare_listing("/memories", &want, folded),
            Err("the listing lacks /memories/n.txt: it shows /memories/N.TXT (the store folds case)".into())
        );
        // A promise on any line but an entry's counts, a preamble before it too.
        let late = format!("\nListing:\nexcluding hidden items and node_modules\n{body}");
        assert_eq!(
            compare_listing("/memories", &want, &late),
            Err(
                "the listing shows /memories/node_modules, node_modules, which listings leave out"
                    .into()
            )
        );
        // `..` and names beside the folder are never excused as dot-names.
        for extra in ["/memories/../canary.txt", "/memories_evil/.x"] {
            let text = format!("Contents:\n4.0K\t/memories\n1\t/memories/n.txt\n1\t{extra}");
            assert_eq!(
                compare_listing("/memories", &want, &text),
                Err(format!(
                    "the listing shows {extra}, which the case does not expect"
                )),
                "{extra}"
            );
        }
        // No header: the first line is an entry that names node_modules, not a promise.
        assert_eq!(
            compare_listing("/memories", &want, body).map(|n| n.len()),
            Ok(2)
        );
        let hidden_only = format!("Files in /memories (hidden items left out):\n{body}");
        assert_eq!(
            compare_listing("/memories", &want, &hidden_only),
            Err("the listing shows /memories/.h, a dot-name, which listings leave out".into())
        );
    }

    #[test]
    fn error_prefix_is_optional_but_is_error_is_not() {
        let r = Reply::Exact(Outcome::DeleteNotFound {
            path: "/memories/g".into(),
        });
        for text in [
            "The path /memories/g does not exist",
            "Error: The path /memories/g does not exist",
        ] {
            assert!(reply_matches(Profile::Docs, &r, &ToolResult::error(text)));
            assert!(!reply_matches(Profile::Docs, &r, &ToolResult::ok(text)));
        }
    }

    fn step(input: serde_json::Value, o: Outcome) -> Step {
        Step {
            input,
            accept: vec![Accept {
                verdict: Verdict::Pass,
                reply: Reply::Exact(o),
                profiles: vec![],
                note: "the documented reply".into(),
            }],
            tests_view_format: false,
        }
    }

    fn grade(s: &Step, r: ToolResult) -> StepGrade {
        grade_step(s, &r, Profile::Docs, Level::Must, false)
    }

    #[test]
    fn same_meaning_in_other_words_is_non_strict_wrong_meaning_fails_in_words() {
        use serde_json::json;
        let missing = step(
            json!({"command": "delete", "path": "/memories/g"}),
            Outcome::DeleteNotFound {
                path: "/memories/g".into(),
            },
        );
        let g = grade(
            &missing,
            ToolResult::error("FileNotFoundError(2, 'No such file or directory')"),
        );
        assert_eq!(g.verdict, Verdict::NonStrict);
        let g = grade(&missing, ToolResult::error("nope"));
        assert_eq!(
            (g.verdict, g.note.as_str()),
            (
                Verdict::NonStrict,
                "the documented reply in other words (the error gives no reason)"
            )
        );
        let g = grade(
            &missing,
            ToolResult::error("Error: /memories/g already exists"),
        );
        assert_eq!(g.verdict, Verdict::Fail);
        assert_eq!(
            g.note,
            "the error says 'already exists', the case expects 'does not exist' (\"Error: /memories/g already exists\")"
        );
        let g = grade(
            &missing,
            ToolResult::ok("The path /memories/g does not exist"),
        );
        assert_eq!(g.verdict, Verdict::Fail);
        assert!(g.note.contains("but is_error is false"), "{}", g.note);
        // With --strict, other words are FAIL.
        let strict = grade_step(
            &missing,
            &ToolResult::error("no such file"),
            Profile::Docs,
            Level::Must,
            true,
        );
        assert_eq!(strict.verdict, Verdict::Fail);

        let created = step(
            json!({"command": "create", "path": "/memories/n.txt", "file_text": "x"}),
            Outcome::Created {
                path: "/memories/n.txt".into(),
            },
        );
        assert_eq!(
            grade(&created, ToolResult::ok("Wrote 1 chars to /memories/n.txt")).verdict,
            Verdict::NonStrict
        );
        let g = grade(&created, ToolResult::ok("None"));
        assert_eq!(
            (g.verdict, g.note.as_str()),
            (Verdict::Fail, "unreadable reply: \"None\"")
        );
        let g = grade(&created, ToolResult::ok("Deleted /memories/n.txt"));
        assert_eq!(g.verdict, Verdict::Fail);
        assert!(
            g.note
                .starts_with("the reply says delete was done, the command was create"),
            "{}",
            g.note
        );
        let g = grade(&created, ToolResult::ok("Saved /memories/other.txt"));
        assert_eq!(
            g.note,
            "the reply names /memories/other.txt, the command's path is /memories/n.txt"
        );
    }

    /// A name with a trailing space, in a listing of other words: read without it, NON-STRICT
    /// with a note; a listing without the name at all is still FAIL, and so is one where the
    /// trimmed name is another entry the model holds.
    #[test]
    fn a_trailing_space_lost_at_a_listing_line_end_is_non_strict() {
        use serde_json::json;
        let entry = |path: &str| ListEntry {
            size: 17,
            path: path.into(),
            dir: false,
        };
        let outcome = |entries: Vec<ListEntry>| Outcome::ViewDir {
            path: "/memories".into(),
            size: 4096,
            entries,
        };
        let dir = step(
            json!({"command": "view", "path": "/memories"}),
            outcome(vec![entry("/memories/a.txt ")]),
        );
        let g = grade(
            &dir,
            ToolResult::ok("Listing:\n- /memories (folder)\n- /memories/a.txt  (17 bytes)"),
        );
        assert_eq!(
            (g.verdict, g.note.as_str()),
            (
                Verdict::NonStrict,
                "the documented reply in other words (the listing's words cannot show a name's trailing space)"
            )
        );
        let g = grade(
            &dir,
            ToolResult::ok("Listing:\n- /memories (folder)\n- /memories/b.txt (17 bytes)"),
        );
        assert_eq!(
            (g.verdict, g.note.as_str()),
            (Verdict::Fail, "the listing lacks /memories/a.txt ")
        );
        let both = step(
            json!({"command": "view", "path": "/memories"}),
            outcome(vec![entry("/memories/a.txt"), entry("/memories/a.txt ")]),
        );
        let g = grade(
            &both,
            ToolResult::ok("Listing:\n- /memories (folder)\n- /memories/a.txt (17 bytes)"),
        );
        assert_eq!(
            (g.verdict, g.note.as_str()),
            (Verdict::Fail, "the listing lacks /memories/a.txt ")
        );
        let g = grade(
            &both,
            ToolResult::ok(
                "Listing:\n- /memories (folder)\n- /memories/a.txt (17 bytes)\n- /memories/a.txt  (17 bytes)",
            ),
        );
        assert_eq!(g.verdict, Verdict::NonStrict, "{}", g.note);
    }

    #[test]
    fn listings_and_views_are_compared_by_entries_and_lines() {
        use serde_json::json;
        let dir = step(json!({"command": "view", "path": "/memories"}), listing());
        let other = "Listing:\n- /memories (folder)\n- /memories/a (folder)\n- /memories/a/x.txt (10 bytes)";
        assert_eq!(
            grade(&dir, ToolResult::ok(other)).verdict,
            Verdict::NonStrict
        );
        let g = grade(
            &dir,
            ToolResult::ok("Listing:\n4K\t/memories\n4K\t/memories/a/"),
        );
        assert_eq!(
            (g.verdict, g.note.as_str()),
            (Verdict::Fail, "the listing lacks /memories/a/x.txt")
        );
        let g = grade(
            &dir,
            ToolResult::ok(
                "Listing, hidden items left out:\n4K\t/memories\n4K\t/memories/a/\n10\t/memories/a/x.txt\n1\t/memories/.h",
            ),
        );
        assert_eq!(
            (g.verdict, g.note.as_str()),
            (
                Verdict::Fail,
                "the listing shows /memories/.h, a dot-name, which listings leave out"
            )
        );
        let g = grade(
            &dir,
            ToolResult::ok(
                "Listing:\n4K\t/memories\n4K\t/memories/a/\n10\t/memories/a/x.txt\n1\t/memories/.h",
            ),
        );
        assert_eq!(g.verdict, Verdict::NonStrict, "{}", g.note);

        let view = step(
            json!({"command": "view", "path": "/memories/f"}),
            Outcome::ViewFile {
                path: "/memories/f".into(),
                first: 1,
                count: 3,
                text: "a\nb\n".into(),
            },
        );
        assert_eq!(
            grade(&view, ToolResult::ok("File /memories/f\n1: a\n2: b\n3: ")).verdict,
            Verdict::NonStrict
        );
        assert_eq!(
            grade(&view, ToolResult::ok("a\nb\n")).verdict,
            Verdict::NonStrict
        );
        let g = grade(&view, ToolResult::ok("File /memories/f\n1: a\n2: c\n3: "));
        assert_eq!(g.note, "line 2 reads \"c\", the file's line 2 is \"b\"");
    }

    // See: issue 11's table: a file view's meaning is "the line texts in order, and their
    // numbers when numbers are shown"; missing line numbers are format "except in the cases
    // that test view format".
    #[test]
    fn missing_line_numbers_fail_only_where_the_step_tests_the_view_format() {
        use serde_json::json;
        let mut view = step(
            json!({"command": "view", "path": "/memories/notes.txt"}),
            Outcome::view_file("/memories/notes.txt", 1, &["Hello", "World", ""]),
        );
        let plain = || ToolResult::ok("Here's the content of /memories/notes.txt:\nHello\nWorld\n");
        let g = grade(&view, plain());
        assert_eq!(
            (g.verdict, g.note.as_str()),
            (
                Verdict::NonStrict,
                "the documented reply in other words (no line numbers shown)"
            )
        );
        view.tests_view_format = true;
        let g = grade(&view, plain());
        assert_eq!(
            (g.verdict, g.note.as_str()),
            (
                Verdict::Fail,
                "the file is shown without line numbers; this case tests the numbered view format (spec:2.1/C1)"
            )
        );
        // Without the header line too; a SHOULD case is NON-STRICT, FAIL with --strict.
        let bare = ToolResult::ok("Hello\nWorld\n");
        assert_eq!(grade(&view, bare.clone()).verdict, Verdict::Fail);
        let should = grade_step(&view, &bare, Profile::Docs, Level::Should, false);
        assert_eq!(
            (should.verdict, should.note.as_str()),
            (
                Verdict::NonStrict,
                "the file is shown without line numbers; this case tests the numbered view format (spec:2.1/C1)"
            )
        );
        assert_eq!(
            grade_step(&view, &bare, Profile::Docs, Level::Should, true).verdict,
            Verdict::Fail
        );
        // Numbers in another spelling are still other words; the documented view is PASS.
        let g = grade(
            &view,
            ToolResult::ok("File /memories/notes.txt\n1: Hello\n2: World\n3: "),
        );
        assert_eq!(
            (g.verdict, g.note.as_str()),
            (Verdict::NonStrict, "the documented reply in other words")
        );
        let g = grade(
            &view,
            ToolResult::ok("Here's the content of /memories/notes.txt with line numbers:\n     1\tHello\n     2\tWorld\n     3\t"),
        );
        assert_eq!(g.verdict, Verdict::Pass);
        // An empty range has no number to show.
        let mut empty = step(
            json!({"command": "view", "path": "/memories/ten.txt", "view_range": [5, 2]}),
            Outcome::view_file("/memories/ten.txt", 5, &[]),
        );
        empty.tests_view_format = true;
        assert_eq!(
            grade(
                &empty,
                ToolResult::ok("Here's the content of /memories/ten.txt:\n")
            )
            .verdict,
            Verdict::NonStrict
        );
    }

    #[test]
    fn should_cases_degrade_to_non_strict_and_strict_makes_them_fail() {
        let step = Step {
            input: serde_json::json!({}),
            accept: vec![Accept {
                verdict: Verdict::Pass,
                reply: Reply::AnyError,
                profiles: vec![],
                note: String::new(),
            }],
            tests_view_format: false,
        };
        let ok = ToolResult::ok("done");
        assert_eq!(
            grade_step(&step, &ok, Profile::Docs, Level::Should, false).verdict,
            Verdict::NonStrict
        );
        assert_eq!(
            grade_step(&step, &ok, Profile::Docs, Level::Should, true).verdict,
            Verdict::Fail
        );
        assert_eq!(
            grade_step(&step, &ok, Profile::Docs, Level::Must, false).verdict,
            Verdict::Fail
        );
        let err = ToolResult::error("no");
        assert_eq!(
            grade_step(&step, &err, Profile::Docs, Level::Must, false).verdict,
            Verdict::Pass
        );
    }
}
