//! Every reply string, in one place: [`render`] spells an [`Outcome`] in a [`Profile`]'s words.
//!
//! A profile is data (`src/text/<profile>.toml`, compiled in): a template per outcome, the size
//! format of listings, whether directories get a trailing `/`, and how the `Error: ` prefix is
//! used. Profiles hold the deliberate messages of each source only: the doc's strings (`docs`),
//! what the Python SDK 2.14.0 handler raises as `ToolError` (`python-sdk`), what the TypeScript
//! SDK 1.14.0 handler throws (`typescript-sdk`), all from `docs/spec/memory-tool.md`
//! spec:2. Where a source is silent (a directory given to str_replace, an inverted view_range, a
//! refused path) the profile carries memcert's own wording. An SDK's crash text
//! (`AttributeError(...)`, `ENOTDIR: ... realpath '<host path>'`) is never a template: the
//! certifier grades those replies on `is_error` alone.
//!
//! # Guarantees
//! - Only this module spells reply strings; the reference handler and the certifier's expected
//!   values both come from [`render`], so they cannot drift apart.
//! - Every [`OutcomeKind`] has a template in every built-in profile (checked by a unit test).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::vpath::{display_path, Reason};

/// Width of the right-aligned line numbers in file views (`len("999999")`).
pub const LINE_NUMBER_WIDTH: usize = 6;
/// Most lines a file view shows; more is refused (doc: "999,999 lines").
pub const MAX_LINES: usize = 999_999;

/// One of the three built-in wordings; `docs` by default.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// The documented strings (memory-tool page, "Tool commands").
    #[default]
    Docs,
    /// PyPI `anthropic` 2.14.0 `BetaLocalFilesystemMemoryTool` through the SDK runner.
    PythonSdk,
    /// npm `@anthropic-ai/sdk` 1.14.0 `BetaLocalFilesystemMemoryTool` through the SDK runner.
    TypescriptSdk,
}

impl Profile {
    /// All profiles, in the order reports list them.
    pub const ALL: [Profile; 3] = [Profile::Docs, Profile::PythonSdk, Profile::TypescriptSdk];

    /// The `--profile` value: `docs`, `python-sdk`, `typescript-sdk`.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Docs => "docs",
            Profile::PythonSdk => "python-sdk",
            Profile::TypescriptSdk => "typescript-sdk",
        }
    }

    /// The profile's data table.
    pub fn table(self) -> &'static ProfileTable {
        static TABLES: OnceLock<[ProfileTable; 3]> = OnceLock::new();
        let tables = TABLES.get_or_init(|| {
            [
                ProfileTable::load(include_str!("docs.toml")),
                ProfileTable::load(include_str!("python-sdk.toml")),
                ProfileTable::load(include_str!("typescript-sdk.toml")),
            ]
        });
        &tables[self as usize]
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| format!("unknown profile {s:?}; use docs, python-sdk or typescript-sdk"))
    }
}

/// How listing sizes are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SizeFormat {
    /// The doc's rule: bytes below 1024 as `120B`, above with one decimal: `4.0K`, `1.5K`,
    /// `1.2M`, `1.0G`, `1.0T`.
    OneDecimal,
    /// The SDKs' rule: `0B`, `1K`, `1.5K`, `1024.0K`, `1M`; whole numbers without `.0`, units
    /// B, K, M, G (the largest unit keeps growing: 2^40 is `1024G`).
    TrimZero,
}

/// How error replies use the `Error: ` prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorPrefix {
    /// Templates are written exactly as the source answers (the doc mixes both).
    AsWritten,
    /// Never prefixed (Python SDK: a `ToolError` is sent verbatim).
    Never,
    /// Always prefixed (TypeScript SDK: `Error: ` + message).
    Always,
}

/// A profile's data, loaded from `src/text/<name>.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileTable {
    /// The profile name, as in `--profile`.
    pub name: String,
    /// Listing size format.
    pub size_format: SizeFormat,
    /// Whether directory entries of a listing end in `/`.
    pub dir_trailing_slash: bool,
    /// Use of the `Error: ` prefix.
    pub error_prefix: ErrorPrefix,
    /// One template per [`OutcomeKind`] (its snake_case name); placeholders in braces.
    pub templates: BTreeMap<String, String>,
}

impl ProfileTable {
    fn load(src: &str) -> ProfileTable {
        toml::from_str(src).expect("built-in profile tables are valid TOML")
    }

    fn template(&self, kind: OutcomeKind) -> &str {
        self.templates
            .get(kind.key())
            .map(String::as_str)
            .unwrap_or_else(|| panic!("profile {} has no template {}", self.name, kind.key()))
    }
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListEntry {
    /// Size in bytes (`st_size`); for a directory this depends on the filesystem.
    pub size: u64,
    /// Canonical virtual path without a trailing slash, e.g. `/memories/a/b.txt`.
    pub path: String,
    /// True for a directory.
    pub dir: bool,
}

/// Every reply a memory handler gives, with the values its string needs.
///
/// Sources are rows of `docs/spec/memory-tool.md`; "memcert" marks a wording the
/// doc does not give.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// spec:2.1 listing: header, the directory itself, then entries two levels deep.
    ViewDir {
        /// The directory as the model wrote it (header).
        path: String,
        /// The directory's own `st_size`.
        size: u64,
        /// Entries in pre-order, sorted by name in each directory.
        entries: Vec<ListEntry>,
    },
    /// spec:2.1 file view: header, then `{n:>6}\t{line}` lines. Built with [`Outcome::view_file`].
    ViewFile {
        /// The file as the model wrote it.
        path: String,
        /// Number of the first line shown (1-based).
        first: usize,
        /// How many lines are shown (0 for an empty view).
        count: usize,
        /// The shown lines joined with `\n` (one slice of the file, no per-line copies).
        text: String,
    },
    /// spec:2.1/C21 view of a missing path.
    ViewNotFound {
        /// Path as given.
        path: String,
    },
    /// spec:2.1/C30 more than 999,999 lines.
    TooManyLines {
        /// Path as given.
        path: String,
        /// Number of lines the file has.
        lines: usize,
    },
    /// spec:2.1/C25 not UTF-8 (wording of the public Python fix).
    NotUtf8 {
        /// Path as given.
        path: String,
    },
    /// spec:2.1/C27 a FIFO, socket or device.
    UnsupportedFileType {
        /// Path as given.
        path: String,
    },
    /// memcert: a file over the reference handler's size limit.
    FileTooLarge {
        /// Path as given.
        path: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// memcert: an inverted or out-of-range `view_range` (spec:2.1/C7, the SDKs answer a header).
    InvalidViewRange {
        /// Path as given.
        path: String,
        /// Requested start.
        start: i64,
        /// Requested end.
        end: i64,
        /// Lines in the file.
        lines: usize,
    },
    /// memcert: the path goes through a symbolic link, which the reference never follows.
    Symlink {
        /// Path as given.
        path: String,
    },
    /// memcert: a regular file with more than one hard link (spec:3/S-9).
    HardLink {
        /// Path as given.
        path: String,
    },
    /// memcert: a path with a trailing `/` that names a file (spec:3/P-12).
    NotADirectory {
        /// Path as given.
        path: String,
    },
    /// memcert: a parent on the way is a file (spec:2.2/B8, spec:2.6/H13).
    ParentNotADirectory {
        /// Path as given.
        path: String,
    },
    /// spec:2.2/B1.
    Created {
        /// Path as given.
        path: String,
    },
    /// spec:2.2/B2, also for a directory or the root [B6, B7].
    FileExists {
        /// Path as given.
        path: String,
    },
    /// memcert: create with a trailing `/` (spec:2.2/B10).
    CreateTrailingSlash {
        /// Path as given.
        path: String,
    },
    /// spec:2.3/E1: the edit and an excerpt of the new content.
    Edited {
        /// (line number, line text) pairs around the edit.
        lines: Vec<(usize, String)>,
    },
    /// spec:2.3/E2.
    NoMatch {
        /// The old_str as sent.
        old_str: String,
        /// Path as given.
        path: String,
    },
    /// spec:2.3/E3: line numbers listed once each, ascending.
    MultipleMatches {
        /// The old_str as sent.
        old_str: String,
        /// Lines holding a match.
        lines: Vec<usize>,
    },
    /// memcert: an empty old_str (spec:2.3/E8).
    EmptyOldStr {
        /// Path as given.
        path: String,
    },
    /// spec:2.3/E10 str_replace on a missing file.
    StrReplaceNotFound {
        /// Path as given.
        path: String,
    },
    /// spec:2.3/E9, spec:2.4/F12: a directory given to str_replace or insert.
    NotAFile {
        /// Path as given.
        path: String,
    },
    /// spec:2.4/F1.
    Inserted {
        /// Path as given.
        path: String,
    },
    /// spec:2.4/F4.
    InvalidInsertLine {
        /// The insert_line as sent.
        insert_line: i64,
        /// Lines in the file.
        lines: usize,
    },
    /// spec:2.4/F13.
    InsertNotFound {
        /// Path as given.
        path: String,
    },
    /// spec:2.5/G1.
    Deleted {
        /// Path as given.
        path: String,
    },
    /// spec:2.5/G6.
    DeleteNotFound {
        /// Path as given.
        path: String,
    },
    /// spec:2.5/G3.
    DeleteRoot,
    /// spec:2.6/H1.
    Renamed {
        /// Old path as given.
        old_path: String,
        /// New path as given.
        new_path: String,
    },
    /// spec:2.6/H5.
    RenameNotFound {
        /// Old path as given.
        old_path: String,
    },
    /// spec:2.6/H3.
    RenameDestinationExists {
        /// New path as given.
        new_path: String,
    },
    /// spec:2.6/H2.
    RenameRoot,
    /// memcert: a directory moved into its own subtree (spec:2.6/H6).
    RenameIntoItself {
        /// Old path as given.
        old_path: String,
        /// New path as given.
        new_path: String,
    },
    /// memcert: a path refused by `VPath::parse`.
    InvalidPath {
        /// Path as given (control characters escaped when rendered).
        path: String,
        /// The rule broken.
        reason: ReasonName,
    },
    /// memcert: malformed input (`protocol::InputError`).
    MalformedInput {
        /// The `InputError` message.
        detail: String,
    },
    /// memcert: an unexpected I/O error, reported without any host path.
    IoError {
        /// Path as given.
        path: String,
        /// The OS error kind in words, e.g. `permission denied`.
        kind: String,
    },
}

/// A [`Reason`] that (de)serialises as its slug.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReasonName(pub Reason);

impl Serialize for ReasonName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.slug())
    }
}

impl<'de> Deserialize<'de> for ReasonName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Reason::ALL
            .into_iter()
            .find(|r| r.slug() == s)
            .map(ReasonName)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown path reason {s}")))
    }
}

/// The kind of an [`Outcome`], without its values: the key of a profile template.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum OutcomeKind {
    ViewDir,
    ViewFile,
    ViewNotFound,
    TooManyLines,
    NotUtf8,
    UnsupportedFileType,
    FileTooLarge,
    InvalidViewRange,
    Symlink,
    HardLink,
    NotADirectory,
    ParentNotADirectory,
    Created,
    FileExists,
    CreateTrailingSlash,
    Edited,
    NoMatch,
    MultipleMatches,
    EmptyOldStr,
    StrReplaceNotFound,
    NotAFile,
    Inserted,
    InvalidInsertLine,
    InsertNotFound,
    Deleted,
    DeleteNotFound,
    DeleteRoot,
    Renamed,
    RenameNotFound,
    RenameDestinationExists,
    RenameRoot,
    RenameIntoItself,
    InvalidPath,
    MalformedInput,
    IoError,
}

impl OutcomeKind {
    /// Every kind.
    pub const ALL: [OutcomeKind; 35] = [
        OutcomeKind::ViewDir,
        OutcomeKind::ViewFile,
        OutcomeKind::ViewNotFound,
        OutcomeKind::TooManyLines,
        OutcomeKind::NotUtf8,
        OutcomeKind::UnsupportedFileType,
        OutcomeKind::FileTooLarge,
        OutcomeKind::InvalidViewRange,
        OutcomeKind::Symlink,
        OutcomeKind::HardLink,
        OutcomeKind::NotADirectory,
        OutcomeKind::ParentNotADirectory,
        OutcomeKind::Created,
        OutcomeKind::FileExists,
        OutcomeKind::CreateTrailingSlash,
        OutcomeKind::Edited,
        OutcomeKind::NoMatch,
        OutcomeKind::MultipleMatches,
        OutcomeKind::EmptyOldStr,
        OutcomeKind::StrReplaceNotFound,
        OutcomeKind::NotAFile,
        OutcomeKind::Inserted,
        OutcomeKind::InvalidInsertLine,
        OutcomeKind::InsertNotFound,
        OutcomeKind::Deleted,
        OutcomeKind::DeleteNotFound,
        OutcomeKind::DeleteRoot,
        OutcomeKind::Renamed,
        OutcomeKind::RenameNotFound,
        OutcomeKind::RenameDestinationExists,
        OutcomeKind::RenameRoot,
        OutcomeKind::RenameIntoItself,
        OutcomeKind::InvalidPath,
        OutcomeKind::MalformedInput,
        OutcomeKind::IoError,
    ];

    /// The template key, snake_case (`view_not_found`).
    pub fn key(self) -> &'static str {
        match self {
            OutcomeKind::ViewDir => "view_dir",
            OutcomeKind::ViewFile => "view_file",
            OutcomeKind::ViewNotFound => "view_not_found",
            OutcomeKind::TooManyLines => "too_many_lines",
            OutcomeKind::NotUtf8 => "not_utf8",
            OutcomeKind::UnsupportedFileType => "unsupported_file_type",
            OutcomeKind::FileTooLarge => "file_too_large",
            OutcomeKind::InvalidViewRange => "invalid_view_range",
            OutcomeKind::Symlink => "symlink",
            OutcomeKind::HardLink => "hard_link",
            OutcomeKind::NotADirectory => "not_a_directory",
            OutcomeKind::ParentNotADirectory => "parent_not_a_directory",
            OutcomeKind::Created => "created",
            OutcomeKind::FileExists => "file_exists",
            OutcomeKind::CreateTrailingSlash => "create_trailing_slash",
            OutcomeKind::Edited => "edited",
            OutcomeKind::NoMatch => "no_match",
            OutcomeKind::MultipleMatches => "multiple_matches",
            OutcomeKind::EmptyOldStr => "empty_old_str",
            OutcomeKind::StrReplaceNotFound => "str_replace_not_found",
            OutcomeKind::NotAFile => "not_a_file",
            OutcomeKind::Inserted => "inserted",
            OutcomeKind::InvalidInsertLine => "invalid_insert_line",
            OutcomeKind::InsertNotFound => "insert_not_found",
            OutcomeKind::Deleted => "deleted",
            OutcomeKind::DeleteNotFound => "delete_not_found",
            OutcomeKind::DeleteRoot => "delete_root",
            OutcomeKind::Renamed => "renamed",
            OutcomeKind::RenameNotFound => "rename_not_found",
            OutcomeKind::RenameDestinationExists => "rename_destination_exists",
            OutcomeKind::RenameRoot => "rename_root",
            OutcomeKind::RenameIntoItself => "rename_into_itself",
            OutcomeKind::InvalidPath => "invalid_path",
            OutcomeKind::MalformedInput => "malformed_input",
            OutcomeKind::IoError => "io_error",
        }
    }

    /// True for the outcomes that succeed (their reply has no `is_error`).
    pub fn is_success(self) -> bool {
        matches!(
            self,
            OutcomeKind::ViewDir
                | OutcomeKind::ViewFile
                | OutcomeKind::Created
                | OutcomeKind::Edited
                | OutcomeKind::Inserted
                | OutcomeKind::Deleted
                | OutcomeKind::Renamed
        )
    }
}

impl Outcome {
    /// A file view of `lines`, numbered from `first`.
    pub fn view_file(path: &str, first: usize, lines: &[&str]) -> Outcome {
        Outcome::ViewFile {
            path: path.into(),
            first,
            count: lines.len(),
            text: lines.join("\n"),
        }
    }

    /// This outcome's kind.
    pub fn kind(&self) -> OutcomeKind {
        match self {
            Outcome::ViewDir { .. } => OutcomeKind::ViewDir,
            Outcome::ViewFile { .. } => OutcomeKind::ViewFile,
            Outcome::ViewNotFound { .. } => OutcomeKind::ViewNotFound,
            Outcome::TooManyLines { .. } => OutcomeKind::TooManyLines,
            Outcome::NotUtf8 { .. } => OutcomeKind::NotUtf8,
            Outcome::UnsupportedFileType { .. } => OutcomeKind::UnsupportedFileType,
            Outcome::FileTooLarge { .. } => OutcomeKind::FileTooLarge,
            Outcome::InvalidViewRange { .. } => OutcomeKind::InvalidViewRange,
            Outcome::Symlink { .. } => OutcomeKind::Symlink,
            Outcome::HardLink { .. } => OutcomeKind::HardLink,
            Outcome::NotADirectory { .. } => OutcomeKind::NotADirectory,
            Outcome::ParentNotADirectory { .. } => OutcomeKind::ParentNotADirectory,
            Outcome::Created { .. } => OutcomeKind::Created,
            Outcome::FileExists { .. } => OutcomeKind::FileExists,
            Outcome::CreateTrailingSlash { .. } => OutcomeKind::CreateTrailingSlash,
            Outcome::Edited { .. } => OutcomeKind::Edited,
            Outcome::NoMatch { .. } => OutcomeKind::NoMatch,
            Outcome::MultipleMatches { .. } => OutcomeKind::MultipleMatches,
            Outcome::EmptyOldStr { .. } => OutcomeKind::EmptyOldStr,
            Outcome::StrReplaceNotFound { .. } => OutcomeKind::StrReplaceNotFound,
            Outcome::NotAFile { .. } => OutcomeKind::NotAFile,
            Outcome::Inserted { .. } => OutcomeKind::Inserted,
            Outcome::InvalidInsertLine { .. } => OutcomeKind::InvalidInsertLine,
            Outcome::InsertNotFound { .. } => OutcomeKind::InsertNotFound,
            Outcome::Deleted { .. } => OutcomeKind::Deleted,
            Outcome::DeleteNotFound { .. } => OutcomeKind::DeleteNotFound,
            Outcome::DeleteRoot => OutcomeKind::DeleteRoot,
            Outcome::Renamed { .. } => OutcomeKind::Renamed,
            Outcome::RenameNotFound { .. } => OutcomeKind::RenameNotFound,
            Outcome::RenameDestinationExists { .. } => OutcomeKind::RenameDestinationExists,
            Outcome::RenameRoot => OutcomeKind::RenameRoot,
            Outcome::RenameIntoItself { .. } => OutcomeKind::RenameIntoItself,
            Outcome::InvalidPath { .. } => OutcomeKind::InvalidPath,
            Outcome::MalformedInput { .. } => OutcomeKind::MalformedInput,
            Outcome::IoError { .. } => OutcomeKind::IoError,
        }
    }

    /// True when the reply carries `is_error: true`.
    pub fn is_error(&self) -> bool {
        !self.kind().is_success()
    }
}

/// Format a size the way `format` says (see [`SizeFormat`]).
pub fn format_size(bytes: u64, format: SizeFormat) -> String {
    match format {
        SizeFormat::OneDecimal => {
            if bytes < 1024 {
                return format!("{bytes}B");
            }
            let units = ["K", "M", "G", "T", "P", "E"];
            let mut value = bytes as f64 / 1024.0;
            let mut unit = 0;
            while value >= 1024.0 && unit + 1 < units.len() {
                value /= 1024.0;
                unit += 1;
            }
            format!("{value:.1}{}", units[unit])
        }
        SizeFormat::TrimZero => {
            if bytes == 0 {
                return "0B".to_owned();
            }
            let units = ["B", "K", "M", "G"];
            let i = ((63 - bytes.leading_zeros()) / 10).min(3) as i32;
            let value = bytes as f64 / 1024f64.powi(i);
            if value.fract() == 0.0 {
                format!("{}{}", value as u64, units[i as usize])
            } else {
                format!("{value:.1}{}", units[i as usize])
            }
        }
    }
}

/// The reply text of `outcome` in `profile`'s words. `is_error` is [`Outcome::is_error`].
pub fn render(profile: Profile, outcome: &Outcome) -> String {
    let table = profile.table();
    let template = table.template(outcome.kind());
    let text = match outcome {
        Outcome::ViewDir {
            path,
            size,
            entries,
        } => listing(table, template, path, *size, entries),
        Outcome::ViewFile {
            path,
            first,
            count,
            text,
        } => numbered(
            &fill(template, &[("path", path)]),
            &mut text
                .split('\n')
                .take(*count)
                .enumerate()
                .map(|(i, l)| (first + i, l)),
            text.len() + 8 * count,
        ),
        Outcome::Edited { lines } => numbered(
            template,
            &mut lines.iter().map(|(n, l)| (*n, l.as_str())),
            lines.iter().map(|(_, l)| l.len() + 8).sum(),
        ),
        Outcome::ViewNotFound { path }
        | Outcome::NotUtf8 { path }
        | Outcome::UnsupportedFileType { path }
        | Outcome::Symlink { path }
        | Outcome::HardLink { path }
        | Outcome::NotADirectory { path }
        | Outcome::ParentNotADirectory { path }
        | Outcome::Created { path }
        | Outcome::FileExists { path }
        | Outcome::CreateTrailingSlash { path }
        | Outcome::EmptyOldStr { path }
        | Outcome::StrReplaceNotFound { path }
        | Outcome::NotAFile { path }
        | Outcome::Inserted { path }
        | Outcome::InsertNotFound { path }
        | Outcome::Deleted { path }
        | Outcome::DeleteNotFound { path } => fill(template, &[("path", path)]),
        Outcome::TooManyLines { path, lines } => {
            fill(template, &[("path", path), ("lines", &lines.to_string())])
        }
        Outcome::FileTooLarge { path, limit } => {
            fill(template, &[("path", path), ("limit", &limit.to_string())])
        }
        Outcome::InvalidViewRange {
            path,
            start,
            end,
            lines,
        } => fill(
            template,
            &[
                ("path", path),
                ("start", &start.to_string()),
                ("end", &end.to_string()),
                ("lines", &lines.to_string()),
            ],
        ),
        Outcome::NoMatch { old_str, path } => {
            fill(template, &[("old_str", old_str), ("path", path)])
        }
        Outcome::MultipleMatches { old_str, lines } => {
            let list = lines
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            fill(template, &[("old_str", old_str), ("line_numbers", &list)])
        }
        Outcome::InvalidInsertLine { insert_line, lines } => fill(
            template,
            &[
                ("insert_line", &insert_line.to_string()),
                ("n_lines", &lines.to_string()),
            ],
        ),
        Outcome::DeleteRoot | Outcome::RenameRoot => template.to_owned(),
        Outcome::Renamed { old_path, new_path }
        | Outcome::RenameIntoItself { old_path, new_path } => {
            fill(template, &[("old_path", old_path), ("new_path", new_path)])
        }
        Outcome::RenameNotFound { old_path } => fill(template, &[("old_path", old_path)]),
        Outcome::RenameDestinationExists { new_path } => fill(template, &[("new_path", new_path)]),
        Outcome::InvalidPath { path, reason } => fill(
            template,
            &[
                ("path", &display_path(path)),
                ("reason", reason.0.explanation()),
            ],
        ),
        Outcome::MalformedInput { detail } => fill(template, &[("detail", detail)]),
        Outcome::IoError { path, kind } => fill(template, &[("path", path), ("kind", kind)]),
    };
    if outcome.is_error() {
        apply_prefix(table.error_prefix, text)
    } else {
        text
    }
}

/// A directory listing: the header, then the listed folder and each entry, one `<size>\t<path>`
/// line each, in the table's size format (a directory entry ending in `/` when the table says
/// so).
fn listing(
    table: &ProfileTable,
    template: &str,
    path: &str,
    size: u64,
    entries: &[ListEntry],
) -> String {
    let mut out = fill(template, &[("path", path)]);
    let root = canonical_of(path);
    out.push('\n');
    out.push_str(&format!(
        "{}\t{}",
        format_size(size, table.size_format),
        root
    ));
    for e in entries {
        let slash = if e.dir && table.dir_trailing_slash {
            "/"
        } else {
            ""
        };
        out.push_str(&format!(
            "\n{}\t{}{}",
            format_size(e.size, table.size_format),
            e.path,
            slash
        ));
    }
    out
}

/// `header`, then `lines` as `<number>\t<line>` lines; `hint` is about the bytes the lines
/// take. One buffer for header and lines: file views are the hot path (benches/handler.rs).
fn numbered(header: &str, lines: &mut dyn Iterator<Item = (usize, &str)>, hint: usize) -> String {
    let mut out = String::with_capacity(header.len() + hint + 1);
    out.push_str(header);
    out.push('\n');
    for (i, (n, l)) in lines.enumerate() {
        if i > 0 {
            out.push('\n');
        }
        push_line_number(&mut out, n);
        out.push_str(l);
    }
    out
}

/// Append `n` right-aligned in [`LINE_NUMBER_WIDTH`] columns and a tab (`format!("{n:>6}\t")`,
/// without the formatter's cost on the file-view hot path).
fn push_line_number(out: &mut String, n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let len = digits.len() - i;
    for _ in len..LINE_NUMBER_WIDTH {
        out.push(' ');
    }
    out.push_str(std::str::from_utf8(&digits[i..]).expect("ASCII digits"));
    out.push('\t');
}

/// `text` without one leading `Error: `; how replies are compared across conventions (spec:1).
pub fn strip_error_prefix(text: &str) -> &str {
    text.strip_prefix("Error: ").unwrap_or(text)
}

fn apply_prefix(prefix: ErrorPrefix, text: String) -> String {
    match prefix {
        ErrorPrefix::AsWritten => text,
        ErrorPrefix::Never => strip_error_prefix(&text).to_owned(),
        ErrorPrefix::Always if text.starts_with("Error: ") => text,
        ErrorPrefix::Always => format!("Error: {text}"),
    }
}

/// `/memories/` or `/memories/a/` as written becomes `/memories` or `/memories/a`.
fn canonical_of(path: &str) -> &str {
    if path.len() > 1 {
        path.strip_suffix('/').unwrap_or(path)
    } else {
        path
    }
}

/// Replace `{name}` placeholders in one pass, so a value holding `{path}` is never expanded.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let key = &after[..close];
                match values.iter().find(|(k, _)| *k == key) {
                    Some((_, v)) => out.push_str(v),
                    None => {
                        out.push('{');
                        out.push_str(key);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_has_every_template_and_no_stray_keys() {
        for p in Profile::ALL {
            let t = p.table();
            assert_eq!(t.name, p.as_str());
            for k in OutcomeKind::ALL {
                assert!(t.templates.contains_key(k.key()), "{p}: {}", k.key());
            }
            for key in t.templates.keys() {
                assert!(
                    OutcomeKind::ALL.iter().any(|k| k.key() == key),
                    "{p}: stray template {key}"
                );
            }
        }
    }

    #[test]
    fn sizes_doc_rule() {
        let f = |b| format_size(b, SizeFormat::OneDecimal);
        assert_eq!(f(0), "0B");
        assert_eq!(f(120), "120B");
        assert_eq!(f(1023), "1023B");
        assert_eq!(f(1024), "1.0K");
        assert_eq!(f(1536), "1.5K");
        assert_eq!(f(4096), "4.0K");
        assert_eq!(f(5632), "5.5K");
        assert_eq!(f(1_258_291), "1.2M");
        assert_eq!(f(1 << 30), "1.0G");
        assert_eq!(f(1 << 40), "1.0T");
    }

    #[test]
    fn sizes_sdk_rule_matches_spec_d4() {
        let f = |b| format_size(b, SizeFormat::TrimZero);
        assert_eq!(f(0), "0B");
        assert_eq!(f(1000), "1000B");
        assert_eq!(f(1023), "1023B");
        assert_eq!(f(1024), "1K");
        assert_eq!(f(1536), "1.5K");
        assert_eq!(f(5632), "5.5K");
        assert_eq!(f(1_048_575), "1024.0K");
        assert_eq!(f(1_048_576), "1M");
        assert_eq!(f(1_258_291), "1.2M");
        assert_eq!(f(1 << 30), "1G");
        assert_eq!(f(1 << 40), "1024G");
    }

    #[test]
    fn prefix_conventions() {
        let o = Outcome::ViewNotFound {
            path: "/memories/nope.txt".into(),
        };
        assert_eq!(
            render(Profile::Docs, &o),
            "The path /memories/nope.txt does not exist. Please provide a valid path."
        );
        assert_eq!(
            render(Profile::PythonSdk, &o),
            "The path /memories/nope.txt does not exist. Please provide a valid path."
        );
        assert_eq!(
            render(Profile::TypescriptSdk, &o),
            "Error: The path /memories/nope.txt does not exist. Please provide a valid path."
        );
        let d = Outcome::DeleteNotFound {
            path: "/memories/g".into(),
        };
        assert_eq!(
            render(Profile::Docs, &d),
            "Error: The path /memories/g does not exist"
        );
        assert_eq!(
            render(Profile::PythonSdk, &d),
            "The path /memories/g does not exist"
        );
    }

    #[test]
    fn line_numbers_are_six_wide_right_aligned() {
        for n in [0, 1, 42, 999_999, 1_000_000, usize::MAX] {
            let mut s = String::new();
            push_line_number(&mut s, n);
            assert_eq!(s, format!("{n:>6}\t"));
        }
    }

    #[test]
    fn fill_does_not_expand_values() {
        assert_eq!(fill("a {path} b {x}", &[("path", "{x}")]), "a {x} b {x}");
        assert_eq!(fill("open { brace", &[]), "open { brace");
    }
}
