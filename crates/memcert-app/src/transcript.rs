//! Recorded conversations: what a model said to an app, turn by turn, and what the app's memory
//! handler must answer (format `memcert-transcript/1`, documented in `docs/transcripts.md`).
//!
//! A [`Transcript`] is the user's first message, then assistant turns: each one either holds
//! `tool_use` blocks (their `input` kept exactly as the model sent it, malformed or not) or is
//! the final text. Every `tool_use` lists the replies it accepts, best first, graded exactly like
//! a catalog [`Step`] ([`Accept`] and [`memcert::text::Outcome`] reused). Optional setup lays out
//! files before the app starts; optional checks look at the store after it ends.
//!
//! [`Transcript::to_case`] turns a transcript into a [`Case`] (one step per `tool_use`, in order),
//! so the same oracle and verdicts grade an app behind the mock (`mockapi`, `appcert`) and a
//! handler behind the stdio protocol.
//!
//! [`choose`] picks the transcripts of a `certify --app` or `snapshot --app` run: a folder, one
//! file or the built-in ones, narrowed by case-id globs. [`load_replay`] reads those of
//! `certify --replay`, run against a handler as cases `replay/<id>` ([`Transcript::to_case_as`]
//! with [`REPLAY_PREFIX`]).
//!
//! # Guarantees
//! - [`Transcript::load`] rejects unknown fields, an unknown `format`, a turn that is neither
//!   tool_use nor final text, a final text that is not last, a `tool_use` that accepts
//!   nothing, a [`Setup`] item or [`StoreCheck`] that breaks its rule (content or expectation
//!   given other than exactly once, a `symlink_inside` aimed outside `/memories`, a
//!   `hard_link_outside` name that climbs); the error names the file and, where serde can, the
//!   field, line and column.
//! - A well-formed [`Transcript`] serialized with serde (`serde_json::to_string`) parses back
//!   to the same value, [`Transcript::file`] (not serialized) apart: the fields left out when
//!   empty are the ones read back as empty.
//!
//! # Non-guarantees
//! - Recorded `tool_use` ids are kept for reference only: the mock serves its own ids, which
//!   encode the session and turn.
//! - [`Transcript::to_case`] keeps the turns ([`Case::turns`]): a turn of several calls is sent
//!   together behind the stdio protocol (`Target::call_batch`, concurrently for the TypeScript
//!   adapter as in its runner), the other turns one call at a time. Whether an adapter runs a
//!   batch concurrently is its own; the Python adapter runs it in order, as its runner does.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use memcert::suite::verdict::Verdict;
use memcert::suite::{Accept, Case, Check, Expected, Fs, Level, LinkTo, Step};

/// The only format this version reads.
pub const FORMAT: &str = "memcert-transcript/1";

/// The first segment of a transcript's case id in `certify --app` and `snapshot --app` runs:
/// `app/<transcript id>`.
pub const APP_PREFIX: &str = "app";

/// The first segment of a transcript's case id in `certify --replay` runs:
/// `replay/<transcript id>`.
pub const REPLAY_PREFIX: &str = "replay";

/// One recorded conversation. See the module docs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transcript {
    /// Always [`FORMAT`].
    pub format: String,
    /// Kebab-case slug; the case id is `app/<id>` (`replay/<id>` with `certify --replay`).
    pub id: String,
    /// The one sentence under test, with MUST or SHOULD.
    pub requirement: String,
    /// MUST or SHOULD (a SHOULD mismatch is NON-STRICT).
    #[serde(default = "must")]
    pub level: Level,
    /// Spec rows and bug ids it implements.
    #[serde(default)]
    pub source: Vec<String>,
    /// Laid out in the store before the app starts.
    #[serde(default)]
    pub setup: Vec<Setup>,
    /// The user's first message.
    pub user: String,
    /// Assistant turns, in order; the last is the final text.
    pub turns: Vec<Turn>,
    /// Checked in the store after the app ended.
    #[serde(default)]
    pub checks: Vec<StoreCheck>,
    /// The file it was read from, as given (the shipped ones: `fixtures/transcripts/NAME.json`);
    /// empty for one made in memory. Its cases' [`Case::defined`].
    #[serde(skip)]
    pub file: String,
}

fn must() -> Level {
    Level::Must
}

/// One assistant turn: `tool_use` blocks (optionally after some text), or the final text.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Text before the tool calls, or the whole final answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The tool calls of the turn, in the model's order; empty for the final turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_use: Vec<ToolUse>,
}

/// One `tool_use` block and the replies it accepts.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolUse {
    /// The id in the recording (reference only; the mock serves its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool name; `memory` unless recorded otherwise.
    #[serde(default = "memory")]
    pub name: String,
    /// The input exactly as the model sent it.
    pub input: Value,
    /// Acceptable replies, best first; the first match sets the verdict.
    pub accept: Vec<Accept>,
}

fn memory() -> String {
    "memory".to_owned()
}

/// Something laid out in the store (virtual paths, `/memories/...`), in order, parents made
/// as needed; JSON `{"kind": "<snake_case variant>", ...fields}`. Each maps to one
/// [`memcert::suite::Fs`] item ([`Transcript::to_case`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Setup {
    /// A directory and its parents.
    Dir {
        /// Virtual path.
        path: String,
    },
    /// A regular file and its parents, its content given as exactly one of `text` and `bytes`
    /// ([`Setup::file`] picks).
    File {
        /// Virtual path.
        path: String,
        /// Content, as UTF-8 text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// Content, as bytes (a JSON array of numbers 0 to 255), for content that is not UTF-8.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<Vec<u8>>,
    },
    /// A symlink to `outside/<to>` beside the store (a canary area; `""` is `outside/`).
    SymlinkOutside {
        /// Virtual path of the link.
        path: String,
        /// Path under `outside/`.
        to: String,
    },
    /// A symlink to the host path of a virtual path inside the store (an absolute link that
    /// stays inside).
    SymlinkInside {
        /// Virtual path of the link.
        path: String,
        /// The virtual path it points at: `/memories` or `/memories/...`, without `.` or `..`
        /// names; it need not exist.
        to: String,
    },
    /// A symlink with this exact link text, planted as is (relative, dangling, a loop).
    SymlinkRaw {
        /// Virtual path of the link.
        path: String,
        /// The link text, e.g. `nowhere/at/all` or `../../outside/canary.txt`.
        target: String,
    },
    /// A FIFO (named pipe).
    Fifo {
        /// Virtual path.
        path: String,
    },
    /// A character device 1:5, a `/dev/zero` whose reads never end (bug:B17), mode 0666. Only
    /// this number can be planted: a transcript cannot name a device that reaches anything
    /// else. Planted only where memcert may `mknod` on a filesystem without `nodev`; elsewhere
    /// the case is SKIPPED.
    ZeroDevice {
        /// Virtual path.
        path: String,
    },
    /// A sparse file of 64 MiB (`memcert::suite::scenarios::HUGE_FILE_BYTES`, all zero, no block
    /// written), four times the 16 MiB a handler may read for one call: a handler that reads
    /// it whole is FAIL `unbounded-read` (bug:B17). Only this length can be planted.
    HugeFile {
        /// Virtual path.
        path: String,
    },
    /// A hard link to the outside canary file `outside/<name>` (made, holding the canary
    /// token, when the sandbox has no such file; the sandbox has `canary.txt`, `secret.txt`
    /// and `hard-source.txt`).
    HardLinkOutside {
        /// Virtual path of the link.
        path: String,
        /// The file's path under `outside/`: relative, without `.` or `..` names.
        name: String,
    },
}

/// A case as a transcript (what `memcert fuzz --out` writes, replayed with `certify --replay`):
/// one turn per step, then a final text turn; its setup and its FAIL checks kept. `None` when
/// the case plants what a transcript cannot (a socket, a numbered-lines file, a link to a
/// sibling folder, anything at the root). Checks of another verdict, and checks that a path is
/// a link, are left out: they never make a case FAIL.
pub fn transcript_of(case: &Case, id: &str, user: &str) -> Option<Transcript> {
    let setup = case
        .setup
        .iter()
        .map(|f| {
            Some(match f {
                Fs::Dir { path } => Setup::Dir { path: path.clone() },
                Fs::File { path, content } => Setup::file(path.clone(), content),
                Fs::Symlink { path, target } => match target {
                    LinkTo::Outside(to) => Setup::SymlinkOutside {
                        path: path.clone(),
                        to: to.clone(),
                    },
                    LinkTo::Inside(to) => Setup::SymlinkInside {
                        path: path.clone(),
                        to: to.clone(),
                    },
                    LinkTo::Raw(t) => Setup::SymlinkRaw {
                        path: path.clone(),
                        target: t.clone(),
                    },
                    _ => return None,
                },
                Fs::Fifo { path } => Setup::Fifo { path: path.clone() },
                Fs::CharDevice { path, major, minor }
                    if (*major, *minor) == memcert::suite::scenarios::CHAR_DEVICE_NUMBER =>
                {
                    Setup::ZeroDevice { path: path.clone() }
                }
                Fs::Sparse { path, len } if *len == memcert::suite::scenarios::HUGE_FILE_BYTES => {
                    Setup::HugeFile { path: path.clone() }
                }
                Fs::HardLinkOutside { path, name } => Setup::HardLinkOutside {
                    path: path.clone(),
                    name: name.clone(),
                },
                _ => return None,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let checks = case
        .checks
        .iter()
        .filter(|c| c.verdict == Verdict::Fail)
        .filter_map(|c| {
            let mut check = StoreCheck {
                path: c.path.clone(),
                text: None,
                bytes: None,
                absent: false,
                dir: false,
            };
            match &c.expect {
                Expected::File(b) => check = StoreCheck::file(c.path.clone(), b),
                Expected::Absent => check.absent = true,
                Expected::Dir => check.dir = true,
                Expected::Symlink => return None,
            }
            Some(check)
        })
        .collect();
    let mut turns: Vec<Turn> = case
        .steps
        .iter()
        .map(|s| Turn {
            text: None,
            tool_use: vec![ToolUse {
                id: None,
                name: "memory".into(),
                input: s.input.clone(),
                accept: s.accept.clone(),
            }],
        })
        .collect();
    turns.push(Turn {
        text: Some("Done.".into()),
        tool_use: Vec::new(),
    });
    Some(Transcript {
        format: FORMAT.into(),
        id: id.into(),
        requirement: case.requirement.clone(),
        level: case.level,
        source: case.source.clone(),
        setup,
        user: user.into(),
        turns,
        checks,
        file: String::new(),
    })
}

impl Setup {
    /// A [`Setup::File`] holding `content`: as `text` when it is UTF-8, else as `bytes`.
    pub fn file(path: impl Into<String>, content: &[u8]) -> Setup {
        let (text, bytes) = match std::str::from_utf8(content) {
            Ok(t) => (Some(t.to_owned()), None),
            Err(_) => (None, Some(content.to_vec())),
        };
        Setup::File {
            path: path.into(),
            text,
            bytes,
        }
    }

    /// The catalog form of this item.
    fn to_fs(&self) -> Fs {
        match self.clone() {
            Setup::Dir { path } => Fs::Dir { path },
            Setup::File { path, text, bytes } => Fs::File {
                path,
                content: bytes
                    .or_else(|| text.map(String::into_bytes))
                    .unwrap_or_default(),
            },
            Setup::SymlinkOutside { path, to } => Fs::Symlink {
                path,
                target: LinkTo::Outside(to),
            },
            Setup::SymlinkInside { path, to } => Fs::Symlink {
                path,
                target: LinkTo::Inside(to),
            },
            Setup::SymlinkRaw { path, target } => Fs::Symlink {
                path,
                target: LinkTo::Raw(target),
            },
            Setup::Fifo { path } => Fs::Fifo { path },
            Setup::ZeroDevice { path } => {
                let (major, minor) = memcert::suite::scenarios::CHAR_DEVICE_NUMBER;
                Fs::CharDevice { path, major, minor }
            }
            Setup::HugeFile { path } => Fs::Sparse {
                path,
                len: memcert::suite::scenarios::HUGE_FILE_BYTES,
            },
            Setup::HardLinkOutside { path, name } => Fs::HardLinkOutside { path, name },
        }
    }

    /// What breaks a rule of the format: the field and why; `None` when it is well formed.
    fn invalid(&self) -> Option<(&'static str, &'static str)> {
        match self {
            Setup::File { text, bytes, .. } if text.is_some() == bytes.is_some() => {
                Some(("", "give exactly one of `text` and `bytes`"))
            }
            Setup::SymlinkInside { to, .. }
                if !(to == "/memories" || to.starts_with("/memories/"))
                    || to.split('/').any(|n| n == "." || n == "..") =>
            {
                Some((
                    "to",
                    "must be /memories or a path below it, without `.` or `..` names",
                ))
            }
            Setup::HardLinkOutside { name, .. }
                if name
                    .split('/')
                    .any(|n| n.is_empty() || n == "." || n == "..") =>
            {
                Some((
                    "name",
                    "must be a relative path under outside/, without empty, `.` or `..` names",
                ))
            }
            _ => None,
        }
    }
}

/// What must hold in the store after the app ended (a FAIL when it does not): exactly one of
/// `text`, `bytes`, `absent: true` and `dir: true`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreCheck {
    /// Virtual path, never followed if it is a link.
    pub path: String,
    /// A regular file with exactly this content, as UTF-8 text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A regular file with exactly this content, as bytes (a JSON array of numbers 0 to 255).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Vec<u8>>,
    /// Nothing may be there (not even a dangling link).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
    /// A directory must be there (not a link to one).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dir: bool,
}

impl StoreCheck {
    /// A check that `path` is a regular file holding `content`: as `text` when it is UTF-8,
    /// else as `bytes`.
    pub fn file(path: impl Into<String>, content: &[u8]) -> StoreCheck {
        let (text, bytes) = match std::str::from_utf8(content) {
            Ok(t) => (Some(t.to_owned()), None),
            Err(_) => (None, Some(content.to_vec())),
        };
        StoreCheck {
            path: path.into(),
            text,
            bytes,
            absent: false,
            dir: false,
        }
    }

    /// What it requires, and the catalog check's description.
    fn expected(&self) -> (Expected, String) {
        let path = &self.path;
        match (&self.bytes, &self.text) {
            (Some(b), _) => (
                Expected::File(b.clone()),
                format!("{path} holds what the conversation wrote"),
            ),
            (None, Some(t)) => (
                Expected::File(t.clone().into_bytes()),
                format!("{path} holds what the conversation wrote"),
            ),
            (None, None) if self.dir => (Expected::Dir, format!("{path} is a folder")),
            (None, None) => (Expected::Absent, format!("{path} is gone")),
        }
    }
}

/// Why a transcript could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TranscriptError {
    /// The file or folder could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Not JSON, or not a transcript (serde names the field, line and column).
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// serde's message.
        message: String,
    },
    /// JSON of the right shape that breaks a rule of the format.
    #[error("{path}: {field}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Where, e.g. `turns[2].tool_use[0].accept`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A folder without any `*.json` transcript.
    #[error("{0}: no *.json transcript in this folder")]
    Empty(PathBuf),
    /// Two transcripts of one run ([`load_replay`]) have the same id, so their cases would too.
    #[error("{first} and {second} have the same id {id:?}; give each transcript its own id")]
    DuplicateId {
        /// The id.
        id: String,
        /// The file read first ([`Transcript::file`]).
        first: String,
        /// The file read second.
        second: String,
    },
}

impl Transcript {
    /// Read a transcript from text; `path` names it in errors.
    ///
    /// # Errors
    /// [`TranscriptError::Parse`] or [`TranscriptError::Invalid`].
    pub fn parse(text: &str, path: &Path) -> Result<Transcript, TranscriptError> {
        let mut t: Transcript = serde_json::from_str(text).map_err(|e| TranscriptError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let invalid = |field: String, message: &str| TranscriptError::Invalid {
            path: path.to_owned(),
            field,
            message: message.to_owned(),
        };
        t.file = path.display().to_string();
        if t.format != FORMAT {
            return Err(invalid(
                "format".into(),
                &format!(
                    "unknown format {:?}; this memcert reads {FORMAT:?}",
                    t.format
                ),
            ));
        }
        if t.id.is_empty()
            || !t
                .id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-/".contains(c))
        {
            return Err(invalid(
                "id".into(),
                "must be a kebab-case slug (a-z, 0-9, -, /)",
            ));
        }
        match t.turns.last() {
            None => return Err(invalid("turns".into(), "at least the final text turn")),
            Some(last) if !last.tool_use.is_empty() || last.text.is_none() => {
                return Err(invalid(
                    format!("turns[{}]", t.turns.len() - 1),
                    "the last turn must be the final text, without tool_use",
                ))
            }
            _ => {}
        }
        for (i, turn) in t.turns.iter().enumerate().take(t.turns.len() - 1) {
            if turn.tool_use.is_empty() {
                return Err(invalid(
                    format!("turns[{i}]"),
                    "only the last turn may be without tool_use",
                ));
            }
            for (k, u) in turn.tool_use.iter().enumerate() {
                if u.accept.is_empty() {
                    return Err(invalid(
                        format!("turns[{i}].tool_use[{k}].accept"),
                        "list at least one acceptable reply",
                    ));
                }
            }
        }
        for (i, s) in t.setup.iter().enumerate() {
            if let Some((field, why)) = s.invalid() {
                let at = if field.is_empty() {
                    format!("setup[{i}]")
                } else {
                    format!("setup[{i}].{field}")
                };
                return Err(invalid(at, why));
            }
        }
        for (i, c) in t.checks.iter().enumerate() {
            let given = [c.text.is_some(), c.bytes.is_some(), c.absent, c.dir];
            if given.iter().filter(|g| **g).count() != 1 {
                return Err(invalid(
                    format!("checks[{i}]"),
                    "give exactly one of `text`, `bytes`, `absent: true` and `dir: true`",
                ));
            }
        }
        Ok(t)
    }

    /// Read one transcript file.
    ///
    /// # Errors
    /// See [`TranscriptError`].
    pub fn load(path: &Path) -> Result<Transcript, TranscriptError> {
        let text = std::fs::read_to_string(path).map_err(|source| TranscriptError::Read {
            path: path.to_owned(),
            source,
        })?;
        Transcript::parse(&text, path)
    }

    /// Read every `*.json` file of a folder, sorted by file name.
    ///
    /// # Errors
    /// The first file that cannot be loaded, or a folder without transcripts.
    pub fn load_dir(dir: &Path) -> Result<Vec<Transcript>, TranscriptError> {
        let read = |source| TranscriptError::Read {
            path: dir.to_owned(),
            source,
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(read)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(TranscriptError::Empty(dir.to_owned()));
        }
        files.iter().map(|f| Transcript::load(f)).collect()
    }

    /// The transcripts shipped in `fixtures/transcripts/`, compiled in (the default of
    /// `memcert certify --app`).
    pub fn builtin() -> Vec<Transcript> {
        [
            (
                "create-edit-insert-view.json",
                include_str!("../../../fixtures/transcripts/create-edit-insert-view.json"),
            ),
            (
                "create-view.json",
                include_str!("../../../fixtures/transcripts/create-view.json"),
            ),
            (
                "delete-file-and-folder.json",
                include_str!("../../../fixtures/transcripts/delete-file-and-folder.json"),
            ),
            (
                "edit-steps.json",
                include_str!("../../../fixtures/transcripts/edit-steps.json"),
            ),
            (
                "insert-top-and-end.json",
                include_str!("../../../fixtures/transcripts/insert-top-and-end.json"),
            ),
            (
                "one-turn-dependent.json",
                include_str!("../../../fixtures/transcripts/one-turn-dependent.json"),
            ),
            (
                "one-turn-independent.json",
                include_str!("../../../fixtures/transcripts/one-turn-independent.json"),
            ),
            (
                "prefix-confusion.json",
                include_str!("../../../fixtures/transcripts/prefix-confusion.json"),
            ),
            (
                "rename-steps.json",
                include_str!("../../../fixtures/transcripts/rename-steps.json"),
            ),
            (
                "str-replace-refused.json",
                include_str!("../../../fixtures/transcripts/str-replace-refused.json"),
            ),
            (
                "symlink-outside.json",
                include_str!("../../../fixtures/transcripts/symlink-outside.json"),
            ),
            (
                "traversal-refused.json",
                include_str!("../../../fixtures/transcripts/traversal-refused.json"),
            ),
            (
                "traversal-variants.json",
                include_str!("../../../fixtures/transcripts/traversal-variants.json"),
            ),
            (
                "two-tool-uses.json",
                include_str!("../../../fixtures/transcripts/two-tool-uses.json"),
            ),
            (
                "view-range.json",
                include_str!("../../../fixtures/transcripts/view-range.json"),
            ),
        ]
        .into_iter()
        .map(|(name, text)| {
            let file = format!("fixtures/transcripts/{name}");
            Transcript::parse(text, Path::new(&file)).expect("shipped transcripts are valid")
        })
        .collect()
    }

    /// The case id of `certify --app`: `app/<id>` ([`APP_PREFIX`]).
    pub fn case_id(&self) -> String {
        self.case_id_in(APP_PREFIX)
    }

    /// The case id under `prefix`: `<prefix>/<id>` (`replay/<id>` with [`REPLAY_PREFIX`]).
    pub fn case_id_in(&self, prefix: &str) -> String {
        format!("{prefix}/{}", self.id)
    }

    /// Every `tool_use` of the transcript in order, with its turn number (0-based).
    pub fn tool_uses(&self) -> impl Iterator<Item = (usize, &ToolUse)> {
        self.turns
            .iter()
            .enumerate()
            .flat_map(|(i, t)| t.tool_use.iter().map(move |u| (i, u)))
    }

    /// The transcript as the catalog case `app/<id>` of `certify --app`: see
    /// [`Transcript::to_case_as`].
    pub fn to_case(&self) -> Case {
        self.to_case_as(APP_PREFIX)
    }

    /// The transcript as a catalog case with the id `<prefix>/<id>` (`app`: [`APP_PREFIX`],
    /// `replay`: [`REPLAY_PREFIX`]): one step per `tool_use`, in order; setup and checks mapped
    /// to their catalog forms ([`Setup`] to [`Fs`]; a check to [`Expected::File`],
    /// [`Expected::Absent`] or [`Expected::Dir`], a failed one FAIL); the turns kept as
    /// [`Case::turns`] when one holds several calls (each such turn is sent together, like a
    /// batch case, the others one call at a time).
    pub fn to_case_as(&self, prefix: &str) -> Case {
        Case {
            id: self.case_id_in(prefix),
            source: self.source.clone(),
            defined: self.file.clone(),
            requirement: self.requirement.clone(),
            level: self.level,
            setup: self.setup.iter().map(Setup::to_fs).collect(),
            steps: self
                .tool_uses()
                .map(|(_, u)| Step {
                    input: u.input.clone(),
                    accept: u.accept.clone(),
                    tests_view_format: false,
                })
                .collect(),
            checks: self
                .checks
                .iter()
                .map(|c| {
                    let (expect, what) = c.expected();
                    Check {
                        path: c.path.clone(),
                        expect,
                        verdict: Verdict::Fail,
                        what,
                    }
                })
                .collect(),
            race: None,
            turns: {
                let sizes: Vec<usize> = self
                    .turns
                    .iter()
                    .map(|t| t.tool_use.len())
                    .filter(|n| *n > 0)
                    .collect();
                if sizes.iter().any(|n| *n > 1) {
                    sizes
                } else {
                    Vec::new()
                }
            },
        }
    }
}

/// The transcripts of `certify --replay PATH...` (also `snapshot` and `cases`), in the order
/// given: each path a transcript file, or a folder whose `*.json` files are all transcripts,
/// read in file-name order. Their cases are [`Transcript::to_case_as`] with [`REPLAY_PREFIX`].
///
/// # Errors
/// The first path that cannot be loaded ([`TranscriptError::Read`], [`TranscriptError::Parse`],
/// [`TranscriptError::Invalid`], [`TranscriptError::Empty`] for a folder without `*.json`), or
/// [`TranscriptError::DuplicateId`] naming the two files of the first id read twice.
pub fn load_replay(paths: &[PathBuf]) -> Result<Vec<Transcript>, TranscriptError> {
    let mut all: Vec<Transcript> = Vec::new();
    for path in paths {
        let loaded = if path.is_dir() {
            Transcript::load_dir(path)?
        } else {
            vec![Transcript::load(path)?]
        };
        for t in loaded {
            if let Some(first) = all.iter().find(|o| o.id == t.id) {
                return Err(TranscriptError::DuplicateId {
                    id: t.id,
                    first: first.file.clone(),
                    second: t.file,
                });
            }
            all.push(t);
        }
    }
    Ok(all)
}

/// The transcripts a `certify --app` or `snapshot --app` run takes ([`choose`]).
#[derive(Clone, Debug)]
pub struct Chosen {
    /// The transcripts to run, in load order.
    pub transcripts: Vec<Transcript>,
    /// The case ids of every transcript that exists, run or not, for STALE snapshots (with one
    /// file, its folder's transcripts exist too).
    pub known: Vec<String>,
}

/// Why [`choose`] has no transcript to run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChooseError {
    /// The file or folder cannot be loaded.
    #[error(transparent)]
    Load(#[from] TranscriptError),
    /// A case glob does not parse, or the globs leave no transcript.
    #[error(transparent)]
    Select(#[from] memcert::select::SelectError),
}

/// The transcripts of `source` (a folder of `*.json`, or one file; `None`: the built-in ones)
/// whose case ids (`app/<transcript id>`) the globs `include` (all when empty) and `exclude`
/// keep, and the case ids of every transcript that exists.
///
/// # Errors
/// [`ChooseError::Load`] first, then [`ChooseError::Select`] for a bad glob or no transcript.
pub fn choose(
    source: Option<&Path>,
    include: &[String],
    exclude: &[String],
) -> Result<Chosen, ChooseError> {
    let (transcripts, all) = load_source(source)?;
    let known = all
        .iter()
        .chain(&transcripts)
        .map(Transcript::case_id)
        .collect();
    let transcripts = select(transcripts, include, exclude)?;
    Ok(Chosen { transcripts, known })
}

/// The transcripts of `source`, and (for one file) those of its folder, which also exist.
fn load_source(
    source: Option<&Path>,
) -> Result<(Vec<Transcript>, Vec<Transcript>), TranscriptError> {
    Ok(match source {
        Some(file) if file.is_file() => {
            let one = Transcript::load(file)?;
            let folder = file.parent().and_then(|d| Transcript::load_dir(d).ok());
            (vec![one], folder.unwrap_or_default())
        }
        Some(dir) => (Transcript::load_dir(dir)?, Vec::new()),
        None => (Transcript::builtin(), Vec::new()),
    })
}

/// The transcripts whose case ids (`app/<transcript id>`) the globs keep, in order; none is an
/// error ([`memcert::select::narrow`]).
///
/// # Errors
/// [`memcert::select::SelectError`].
pub fn select(
    transcripts: Vec<Transcript>,
    include: &[String],
    exclude: &[String],
) -> Result<Vec<Transcript>, memcert::select::SelectError> {
    let cases: Vec<Case> = transcripts.iter().map(Transcript::to_case).collect();
    let keep: Vec<String> = memcert::select::narrow(cases, include, exclude)?
        .into_iter()
        .map(|c| c.id)
        .collect();
    Ok(transcripts
        .into_iter()
        .filter(|t| keep.contains(&t.case_id()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: Value) -> Result<Transcript, TranscriptError> {
        Transcript::parse(&v.to_string(), Path::new("t.json"))
    }

    fn minimal() -> Value {
        serde_json::json!({
            "format": FORMAT, "id": "x", "requirement": "r", "user": "hi",
            "turns": [
                {"tool_use": [{"input": {"command": "view", "path": "/memories"},
                               "accept": [{"verdict": "PASS", "reply": {"match": "any_success"}}]}]},
                {"text": "done"}
            ]
        })
    }

    /// The zero device reads back as a 1:5 device; a transcript cannot name another number,
    /// and a case planting one is not written as a transcript.
    #[test]
    fn only_the_zero_device_can_be_planted() {
        let mut v = minimal();
        v["setup"] = serde_json::json!([{"kind": "zero_device", "path": "/memories/zero"}]);
        let c = parse(v.clone()).unwrap().to_case();
        assert_eq!(
            c.setup,
            vec![Fs::CharDevice {
                path: "/memories/zero".into(),
                major: 1,
                minor: 5
            }]
        );
        assert!(c.plants_device());
        assert_eq!(
            transcript_of(&c, "x", "hi").map(|t| t.setup),
            Some(vec![Setup::ZeroDevice {
                path: "/memories/zero".into()
            }])
        );
        v["setup"][0]["major"] = serde_json::json!(1);
        assert!(parse(v).is_err());
        let mem = Case {
            setup: vec![Fs::CharDevice {
                path: "/memories/mem".into(),
                major: 1,
                minor: 1,
            }],
            ..c
        };
        assert!(transcript_of(&mem, "x", "hi").is_none());
    }

    /// The huge file reads back as a sparse file of 64 MiB; a case planting a sparse file of
    /// another length is not written as a transcript.
    #[test]
    fn only_the_huge_file_of_64_mib_can_be_planted() {
        let mut v = minimal();
        v["setup"] = serde_json::json!([{"kind": "huge_file", "path": "/memories/huge.md"}]);
        let c = parse(v.clone()).unwrap().to_case();
        assert_eq!(
            c.setup,
            vec![Fs::Sparse {
                path: "/memories/huge.md".into(),
                len: 64 * 1024 * 1024,
            }]
        );
        assert_eq!(
            transcript_of(&c, "x", "hi").map(|t| t.setup),
            Some(vec![Setup::HugeFile {
                path: "/memories/huge.md".into()
            }])
        );
        v["setup"][0]["len"] = serde_json::json!(1);
        assert!(parse(v).is_err());
        let small = Case {
            setup: vec![Fs::Sparse {
                path: "/memories/huge.md".into(),
                len: 1024,
            }],
            ..c
        };
        assert!(transcript_of(&small, "x", "hi").is_none());
    }

    #[test]
    fn a_minimal_transcript_becomes_a_one_step_case() {
        let t = parse(minimal()).unwrap();
        let c = t.to_case();
        assert_eq!(c.id, "app/x");
        assert_eq!(c.steps.len(), 1);
        assert_eq!(c.level, Level::Must);
        assert!(c.turns.is_empty());
        assert_eq!(c.turn_sizes(), [1]);
    }

    #[test]
    fn turns_of_several_calls_are_kept() {
        let call = serde_json::json!({
            "input": {"command": "view", "path": "/memories"},
            "accept": [{"verdict": "PASS", "reply": {"match": "any_success"}}]
        });
        let mut v = minimal();
        v["turns"][0]["tool_use"] = serde_json::json!([call, call]);
        let one_turn = parse(v.clone()).unwrap().to_case();
        assert_eq!(one_turn.turn_sizes(), [2]);
        // Two turns, one of two calls: the first two calls go together, the third after them.
        v["turns"] =
            serde_json::json!([{"tool_use": [call, call]}, {"tool_use": [call]}, {"text": "done"}]);
        let two_turns = parse(v).unwrap().to_case();
        assert_eq!(two_turns.steps.len(), 3);
        assert_eq!(two_turns.turns, [2, 1]);
        assert_eq!(two_turns.turn_sizes(), [2, 1]);
    }

    #[test]
    fn errors_name_the_file_and_the_field() {
        let mut v = minimal();
        v["turns"][0]["tool_use"][0]["accept"] = serde_json::json!([]);
        let e = parse(v).unwrap_err().to_string();
        assert_eq!(
            e,
            "t.json: turns[0].tool_use[0].accept: list at least one acceptable reply"
        );
        let mut v = minimal();
        v["turns"][0]["tool_use"][0]["accept"][0]["verdict"] = "GOOD".into();
        let e = parse(v).unwrap_err().to_string();
        assert!(e.starts_with("t.json: unknown verdict \"GOOD\""), "{e}");
        let mut v = minimal();
        v["colour"] = "red".into();
        let e = parse(v).unwrap_err().to_string();
        assert!(e.contains("unknown field `colour`"), "{e}");
        let mut v = minimal();
        v["turns"] = serde_json::json!([{"text": "done"}, {"text": "again"}]);
        let e = parse(v).unwrap_err().to_string();
        assert_eq!(
            e,
            "t.json: turns[0]: only the last turn may be without tool_use"
        );
        let mut v = minimal();
        v["format"] = "memcert-transcript/9".into();
        assert!(parse(v).unwrap_err().to_string().contains("format"));
    }

    /// `minimal()` with this setup and these checks.
    fn with(setup: Value, checks: Value) -> Value {
        let mut v = minimal();
        v["setup"] = setup;
        v["checks"] = checks;
        v
    }

    #[test]
    fn every_setup_kind_parses_and_maps_to_its_catalog_item() {
        let t = parse(with(
            serde_json::json!([
                {"kind": "dir", "path": "/memories/d"},
                {"kind": "file", "path": "/memories/a.txt", "text": "alpha\n"},
                {"kind": "file", "path": "/memories/bin.dat", "bytes": [255, 254, 10]},
                {"kind": "symlink_outside", "path": "/memories/out", "to": ""},
                {"kind": "symlink_inside", "path": "/memories/in", "to": "/memories/d"},
                {"kind": "symlink_raw", "path": "/memories/dang", "target": "nowhere/at/all"},
                {"kind": "fifo", "path": "/memories/fifo"},
                {"kind": "hard_link_outside", "path": "/memories/hard.txt", "name": "hard-source.txt"}
            ]),
            serde_json::json!([]),
        ))
        .unwrap();
        let path = |p: &str| p.to_owned();
        assert_eq!(
            t.to_case().setup,
            [
                Fs::Dir {
                    path: path("/memories/d")
                },
                Fs::File {
                    path: path("/memories/a.txt"),
                    content: b"alpha\n".to_vec()
                },
                Fs::File {
                    path: path("/memories/bin.dat"),
                    content: vec![0xff, 0xfe, b'\n']
                },
                Fs::Symlink {
                    path: path("/memories/out"),
                    target: LinkTo::Outside(String::new())
                },
                Fs::Symlink {
                    path: path("/memories/in"),
                    target: LinkTo::Inside(path("/memories/d"))
                },
                Fs::Symlink {
                    path: path("/memories/dang"),
                    target: LinkTo::Raw(path("nowhere/at/all"))
                },
                Fs::Fifo {
                    path: path("/memories/fifo")
                },
                Fs::HardLinkOutside {
                    path: path("/memories/hard.txt"),
                    name: path("hard-source.txt")
                },
            ]
        );
        assert_eq!(
            Setup::file("/memories/bin.dat", b"\xff\xfe\n"),
            t.setup[2],
            "bytes that are not UTF-8 are given as bytes"
        );
        assert_eq!(Setup::file("/memories/a.txt", b"alpha\n"), t.setup[1]);
    }

    #[test]
    fn setup_items_that_break_a_rule_are_refused_with_their_field() {
        let refused = |item: Value| {
            parse(with(
                serde_json::json!([{"kind": "dir", "path": "/memories/d"}, item]),
                serde_json::json!([]),
            ))
            .unwrap_err()
            .to_string()
        };
        let both = "t.json: setup[1]: give exactly one of `text` and `bytes`";
        assert_eq!(
            refused(serde_json::json!({"kind": "file", "path": "/memories/f"})),
            both
        );
        assert_eq!(
            refused(
                serde_json::json!({"kind": "file", "path": "/memories/f", "text": "a", "bytes": [97]})
            ),
            both
        );
        let inside =
            "t.json: setup[1].to: must be /memories or a path below it, without `.` or `..` names";
        for to in [
            "/etc",
            "/memoriesX",
            "memories/d",
            "/memories/../x",
            "/memories/./d",
        ] {
            assert_eq!(
                refused(
                    serde_json::json!({"kind": "symlink_inside", "path": "/memories/l", "to": to})
                ),
                inside,
                "{to}"
            );
        }
        let outside = "t.json: setup[1].name: must be a relative path under outside/, without empty, `.` or `..` names";
        for name in ["", "/etc/passwd", "../canary.txt", "sub//x", "sub/"] {
            assert_eq!(
                refused(
                    serde_json::json!({"kind": "hard_link_outside", "path": "/memories/h", "name": name})
                ),
                outside,
                "{name:?}"
            );
        }
        let e = refused(serde_json::json!({"kind": "fifo", "path": "/memories/p", "to": "x"}));
        assert!(
            e.starts_with("t.json: unknown field `to`, expected `path`"),
            "{e}"
        );
        let e = refused(serde_json::json!({"kind": "socket", "path": "/memories/s"}));
        assert!(e.starts_with("t.json: unknown variant `socket`, expected one of `dir`, `file`, `symlink_outside`, `symlink_inside`, `symlink_raw`, `fifo`, `zero_device`, `huge_file`, `hard_link_outside`"), "{e}");
        // Inside links may point at the root itself, outside links at a nested canary.
        assert!(parse(with(
            serde_json::json!([
                {"kind": "symlink_inside", "path": "/memories/l", "to": "/memories"},
                {"kind": "hard_link_outside", "path": "/memories/h", "name": "sub/inner.txt"}
            ]),
            serde_json::json!([])
        ))
        .is_ok());
    }

    #[test]
    fn checks_map_to_a_file_bytes_a_folder_or_nothing() {
        let t = parse(with(
            serde_json::json!([]),
            serde_json::json!([
                {"path": "/memories/a.txt", "text": "alpha\n"},
                {"path": "/memories/bin.dat", "bytes": [255, 10]},
                {"path": "/memories/d", "dir": true},
                {"path": "/memories/gone", "absent": true}
            ]),
        ))
        .unwrap();
        let checks: Vec<(String, Expected, Verdict, String)> = t
            .to_case()
            .checks
            .into_iter()
            .map(|c| (c.path, c.expect, c.verdict, c.what))
            .collect();
        let row =
            |p: &str, e: Expected, what: &str| (p.to_owned(), e, Verdict::Fail, what.to_owned());
        assert_eq!(
            checks,
            [
                row(
                    "/memories/a.txt",
                    Expected::File(b"alpha\n".to_vec()),
                    "/memories/a.txt holds what the conversation wrote"
                ),
                row(
                    "/memories/bin.dat",
                    Expected::File(vec![0xff, b'\n']),
                    "/memories/bin.dat holds what the conversation wrote"
                ),
                row("/memories/d", Expected::Dir, "/memories/d is a folder"),
                row("/memories/gone", Expected::Absent, "/memories/gone is gone"),
            ]
        );
        assert_eq!(
            StoreCheck::file("/memories/bin.dat", b"\xff\n"),
            t.checks[1]
        );
        assert_eq!(StoreCheck::file("/memories/a.txt", b"alpha\n"), t.checks[0]);
        let one = "t.json: checks[0]: give exactly one of `text`, `bytes`, `absent: true` and `dir: true`";
        for bad in [
            serde_json::json!({"path": "/memories/d"}),
            serde_json::json!({"path": "/memories/d", "dir": true, "absent": true}),
            serde_json::json!({"path": "/memories/d", "dir": true, "text": ""}),
            serde_json::json!({"path": "/memories/d", "bytes": [], "text": ""}),
        ] {
            let e = parse(with(serde_json::json!([]), serde_json::json!([bad]))).unwrap_err();
            assert_eq!(e.to_string(), one, "{bad}");
        }
    }

    /// A transcript serialized with serde reads back as the same transcript (the fuzzer writes
    /// its findings so).
    #[test]
    fn transcripts_written_with_serde_parse_back_unchanged() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/transcripts");
        let mut all = Transcript::load_dir(&dir).unwrap();
        all.extend(Transcript::load_dir(&dir.join("../replay")).unwrap());
        let mut made = parse(minimal()).unwrap();
        made.setup = vec![
            Setup::file("/memories/bin.dat", b"\xff\n"),
            Setup::file("/memories/a.txt", b"a\n"),
            Setup::SymlinkInside {
                path: "/memories/in".into(),
                to: "/memories/d".into(),
            },
            Setup::SymlinkRaw {
                path: "/memories/dang".into(),
                target: "nowhere".into(),
            },
            Setup::Fifo {
                path: "/memories/fifo".into(),
            },
            Setup::HardLinkOutside {
                path: "/memories/hard.txt".into(),
                name: "hard-source.txt".into(),
            },
        ];
        made.checks = vec![
            StoreCheck::file("/memories/bin.dat", b"\xff\n"),
            StoreCheck {
                path: "/memories/d".into(),
                text: None,
                bytes: None,
                absent: false,
                dir: true,
            },
        ];
        all.push(made);
        for t in all {
            let text = serde_json::to_string_pretty(&t).unwrap();
            let back = Transcript::parse(&text, Path::new(&t.file)).unwrap();
            assert_eq!(
                serde_json::to_value(&back).unwrap(),
                serde_json::to_value(&t).unwrap(),
                "{}",
                t.file
            );
            assert_eq!(back.setup, t.setup, "{}", t.file);
            assert_eq!(back.checks, t.checks, "{}", t.file);
            assert_eq!(
                serde_json::to_value(back.to_case()).unwrap(),
                serde_json::to_value(t.to_case()).unwrap(),
                "{}",
                t.file
            );
        }
    }

    #[test]
    fn replay_cases_are_named_replay_and_keep_everything_else() {
        let t = parse(minimal()).unwrap();
        let (app, replay) = (t.to_case(), t.to_case_as(REPLAY_PREFIX));
        assert_eq!(app.id, "app/x");
        assert_eq!(replay.id, "replay/x");
        assert_eq!(t.case_id_in(REPLAY_PREFIX), "replay/x");
        let mut same = serde_json::to_value(&replay).unwrap();
        same["id"] = "app/x".into();
        assert_eq!(same, serde_json::to_value(&app).unwrap());
    }

    #[test]
    fn replay_loads_files_and_folders_in_order_and_refuses_one_id_twice() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, id: &str| {
            let mut v = minimal();
            v["id"] = id.into();
            let p = dir.path().join(name);
            std::fs::write(&p, v.to_string()).unwrap();
            p
        };
        let folder = dir.path().join("f");
        std::fs::create_dir(&folder).unwrap();
        let b = write("f/b.json", "bee");
        let a = write("f/a.json", "ay");
        std::fs::write(folder.join("notes.txt"), "not a transcript").unwrap();
        let one = write("one.json", "one");
        let ids = |paths: &[PathBuf]| -> Vec<String> {
            load_replay(paths)
                .unwrap()
                .into_iter()
                .map(|t| t.id)
                .collect()
        };
        assert_eq!(ids(&[one.clone(), folder.clone()]), ["one", "ay", "bee"]);
        assert_eq!(ids(&[folder.clone(), one.clone()]), ["ay", "bee", "one"]);
        let again = write("again.json", "bee");
        let e = load_replay(&[folder.clone(), again.clone()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{} and {} have the same id \"bee\"; give each transcript its own id",
                b.display(),
                again.display()
            )
        );
        let e = load_replay(&[a.clone(), a.clone()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("have the same id \"ay\""), "{e}");
        let missing = dir.path().join("missing.json");
        let e = load_replay(&[missing.clone()]).unwrap_err();
        assert_eq!(e.to_string(), format!("cannot read {}", missing.display()));
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let e = load_replay(&[empty.clone()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}: no *.json transcript in this folder", empty.display())
        );
    }

    #[test]
    fn the_shipped_transcripts_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/transcripts");
        let all = Transcript::load_dir(&dir).unwrap();
        assert!(all.len() >= 4);
        let mut ids: Vec<_> = all.iter().map(|t| t.id.clone()).collect();
        ids.dedup();
        assert_eq!(ids.len(), all.len(), "transcript ids are unique");
        assert_eq!(
            Transcript::builtin().len(),
            all.len(),
            "builtin() lists every file"
        );
    }
}
