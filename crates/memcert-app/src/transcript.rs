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
//! file or the built-in ones, narrowed by case-id globs.
//!
//! # Guarantees
//! - [`Transcript::load`] rejects unknown fields, an unknown `format`, a turn that is neither
//!   tool_use nor final text, a final text that is not last, and a `tool_use` that accepts
//!   nothing; the error names the file and, where serde can, the field, line and column.
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

/// One recorded conversation. See the module docs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transcript {
    /// Always [`FORMAT`].
    pub format: String,
    /// Kebab-case slug; the case id is `app/<id>`.
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

/// Something laid out in the store (virtual paths, `/memories/...`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Setup {
    /// A directory and its parents.
    Dir {
        /// Virtual path.
        path: String,
    },
    /// A UTF-8 file and its parents.
    File {
        /// Virtual path.
        path: String,
        /// Content.
        text: String,
    },
    /// A symlink to `outside/<to>` beside the store (a canary area; `""` is `outside/`).
    SymlinkOutside {
        /// Virtual path of the link.
        path: String,
        /// Path under `outside/`.
        to: String,
    },
}

/// What must hold in the store after the app ended (a FAIL when it does not).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreCheck {
    /// Virtual path, never followed if it is a link.
    pub path: String,
    /// The file's exact content; absent with `absent: true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Nothing may be there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
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
        for (i, c) in t.checks.iter().enumerate() {
            if c.absent == c.text.is_some() {
                return Err(invalid(
                    format!("checks[{i}]"),
                    "give exactly one of `text` and `absent: true`",
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

    /// The case id: `app/<id>`.
    pub fn case_id(&self) -> String {
        format!("app/{}", self.id)
    }

    /// Every `tool_use` of the transcript in order, with its turn number (0-based).
    pub fn tool_uses(&self) -> impl Iterator<Item = (usize, &ToolUse)> {
        self.turns
            .iter()
            .enumerate()
            .flat_map(|(i, t)| t.tool_use.iter().map(move |u| (i, u)))
    }

    /// The transcript as a catalog case: one step per `tool_use`, in order; setup and checks
    /// mapped to their catalog forms (a failed check is FAIL); the turns kept as
    /// [`Case::turns`] when one holds several calls (each such turn is sent together, like a
    /// batch case, the others one call at a time).
    pub fn to_case(&self) -> Case {
        Case {
            id: self.case_id(),
            source: self.source.clone(),
            defined: self.file.clone(),
            requirement: self.requirement.clone(),
            level: self.level,
            setup: self
                .setup
                .iter()
                .map(|s| match s {
                    Setup::Dir { path } => Fs::Dir { path: path.clone() },
                    Setup::File { path, text } => Fs::File {
                        path: path.clone(),
                        content: text.clone().into_bytes(),
                    },
                    Setup::SymlinkOutside { path, to } => Fs::Symlink {
                        path: path.clone(),
                        target: LinkTo::Outside(to.clone()),
                    },
                })
                .collect(),
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
                .map(|c| Check {
                    path: c.path.clone(),
                    expect: match &c.text {
                        Some(t) => Expected::File(t.clone().into_bytes()),
                        None => Expected::Absent,
                    },
                    verdict: Verdict::Fail,
                    what: match &c.text {
                        Some(_) => format!("{} holds what the conversation wrote", c.path),
                        None => format!("{} is gone", c.path),
                    },
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
