//! memcert-cases: the case catalog and how a case's replies are graded.
//!
//! A [`Case`] is one literal holding its id, the spec rows it comes from, the requirement under
//! test, the files laid out before it runs, the commands it sends with the replies it accepts
//! (best first), and the checks on disk after it ran. Cases are data: the certifier runs them,
//! [`verdict`] grades the replies, `attack::oracle` judges confinement.
//!
//! Ids are slugs (lower-case words, `_`, `.` and `-`, separated by `/`) whose first segment is the catalog file
//! (`view/file/view-range/inverted` lives in `catalog/view.rs`).
#![deny(missing_docs)]

pub mod catalog;
pub mod explain;
pub mod list;
pub mod meaning;
pub mod payloads;
pub mod scenarios;
pub mod spec;
pub mod verdict;
pub mod version;

pub use version::{CatalogVersion, CatalogVersionError};

/// The version of the case catalog: the cases, their requirements and how they grade. Every
/// change to the catalog (a case added, retired, or changed in verdict) bumps it and adds an
/// entry to `CHANGELOG.md` at the repository root. `YEAR.MONTH.N` ([`CatalogVersion`]).
pub const CATALOG_VERSION: &str = "2026.12.5";

use serde::{Deserialize, Serialize};
use serde_json::Value;

use memcert_tool::text::{Outcome, Profile};
use verdict::Verdict;

/// How binding a case's requirement is: a mismatch of a [`Level::Should`] case is
/// [`Verdict::NonStrict`] (or [`Verdict::Fail`] with `--strict`), of a [`Level::Must`] case
/// [`Verdict::Fail`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The requirement is a MUST.
    Must,
    /// The requirement is a SHOULD.
    Should,
}

/// Something laid out under the sandbox before a case runs.
///
/// Paths are virtual (`/memories/...`); the sandbox maps them under the store root.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fs {
    /// A directory (and its parents).
    Dir {
        /// Virtual path.
        path: String,
    },
    /// A regular file with this content (and its parent directories).
    File {
        /// Virtual path.
        path: String,
        /// Content, as bytes (may be invalid UTF-8).
        content: Vec<u8>,
    },
    /// A file of `count` lines, each `x`, each ending in `\n` (for the line limit).
    Lines {
        /// Virtual path.
        path: String,
        /// Number of lines.
        count: usize,
    },
    /// A symbolic link.
    Symlink {
        /// Virtual path of the link.
        path: String,
        /// Where it points.
        target: LinkTo,
    },
    /// A FIFO (named pipe).
    Fifo {
        /// Virtual path.
        path: String,
    },
    /// A hard link inside the root to the outside file `outside/<name>` (a canary).
    HardLinkOutside {
        /// Virtual path of the link.
        path: String,
        /// Name of the file under the sandbox's `outside/` folder.
        name: String,
    },
    /// A UNIX domain socket file, as a server that bound it and exited leaves behind (nothing
    /// listens on it).
    Socket {
        /// Virtual path.
        path: String,
    },
    /// A character device node (`mknod(S_IFCHR)`, mode 0666) with this major and minor number,
    /// e.g. `1:5`, a `/dev/zero`-like node whose reads never end: a handler that reads it
    /// without a bound is `bug:B17`. A device can be planted only by a harness allowed to
    /// `mknod` one, on a filesystem not mounted `nodev`: elsewhere the case is SKIPPED
    /// ([`Case::plants_device`]).
    CharDevice {
        /// Virtual path.
        path: String,
        /// Major device number.
        major: u32,
        /// Minor device number.
        minor: u32,
    },
    /// A sparse regular file of `len` bytes, all zero (`set_len` on a new file: no block
    /// written), such as the 64 MiB file a handler must not read whole (`bug:B17`).
    Sparse {
        /// Virtual path.
        path: String,
        /// Length in bytes.
        len: u64,
    },
    /// Permission bits set on a path planted before (a file or directory, never a link), e.g.
    /// `0o000` or a read-only `0o500` directory. Permission bits do not bind a process running
    /// as root: a case holding one is SKIPPED when the harness's effective uid is 0
    /// ([`Case::needs_unprivileged`]).
    Mode {
        /// Virtual path.
        path: String,
        /// The permission bits (`0o000` ..= `0o777`).
        mode: u32,
    },
    /// A regular file whose name is these bytes, which need not be valid UTF-8 (a name a
    /// virtual path cannot spell), in the virtual directory `dir` (made if missing).
    RawName {
        /// Virtual path of the directory holding it.
        dir: String,
        /// The file name, as bytes (no `/`, no NUL).
        name: Vec<u8>,
        /// Content.
        content: Vec<u8>,
    },
    /// A chain of `depth` nested directories, each named `d`, below the directory `path`, with
    /// `bottom.txt` holding `bottom\n` in the deepest one: `path/d/d/.../d/bottom.txt`.
    DeepChain {
        /// Virtual path of the top directory.
        path: String,
        /// Directories below it.
        depth: usize,
    },
    /// `count` regular files named `f00000.txt`, `f00001.txt`, ..., each holding `x\n`, in the
    /// virtual directory `dir` (made if missing).
    ManyFiles {
        /// Virtual path of the directory.
        dir: String,
        /// Number of files.
        count: usize,
    },
    /// The store root itself replaced by a symbolic link: the (still empty) root directory is
    /// removed and a link to `target` takes its place. The sandbox lays this out before the
    /// target's reset, so the handler starts over the link. Plant it first: items planted after
    /// it land wherever the link points.
    RootSymlink {
        /// Where the link points.
        target: LinkTo,
    },
    /// The store root itself replaced by a FIFO (named pipe), as [`Fs::RootSymlink`]: plant it
    /// first, before anything else.
    RootFifo,
    /// The store root itself replaced by a regular file holding `content`, as
    /// [`Fs::RootSymlink`]: plant it first, before anything else.
    RootFile {
        /// Content.
        content: Vec<u8>,
    },
}

/// Target of a planted symlink.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "to", content = "path", rename_all = "snake_case")]
pub enum LinkTo {
    /// Absolute host path of `outside/<rel>` (a canary area); `""` is `outside/` itself.
    Outside(String),
    /// Absolute host path of a virtual path inside the root.
    Inside(String),
    /// This exact link text (relative links, dangling absolute paths, loops).
    Raw(String),
    /// Absolute host path of the folder `<base>/<name>` beside the root (`memories_evil`, whose
    /// name starts like the root's: prefix confusion, bug:B04, bug:B05).
    Sibling(String),
}

/// One command and the replies it may get, best first.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// The `tool_use` input, sent as is (malformed or not).
    pub input: Value,
    /// Acceptable replies, best first; the first that matches sets the verdict.
    pub accept: Vec<Accept>,
    /// The step tests the numbered view format (`spec:2.1/C1`): a file view shown without line
    /// numbers is a wrong meaning (FAIL for a MUST case), where elsewhere it is other words
    /// (NON-STRICT). A case declares it for all its steps (the catalog's `tests_view_format`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tests_view_format: bool,
}

/// One acceptable reply and the verdict it earns. Transcripts (`crate::transcript`) read it
/// from JSON: `profiles` and `note` may be left out.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Accept {
    /// Verdict when the reply matches.
    pub verdict: Verdict,
    /// What the reply must look like.
    pub reply: Reply,
    /// Profiles this applies to; empty means all.
    #[serde(default)]
    pub profiles: Vec<Profile>,
    /// Why this reply is acceptable at this grade (shown in reports).
    #[serde(default)]
    pub note: String,
}

/// A pattern a reply is matched against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "match", content = "outcome", rename_all = "snake_case")]
pub enum Reply {
    /// Exactly this outcome in the run's profile: same `is_error`, same text after an optional
    /// `Error: ` prefix, directory sizes in listings not compared.
    Exact(Outcome),
    /// Any reply with `is_error: true`.
    AnyError,
    /// Any reply without `is_error`.
    AnySuccess,
    /// Exactly the reply a handler gave when the conversation was recorded (`memcert record`):
    /// same `is_error`, same text, directory sizes in `view` listings not compared.
    Recorded(Recorded),
}

/// A reply as recorded (`{"match": "recorded", "outcome": {"text": …, "is_error": …}}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recorded {
    /// The reply's text (its text blocks joined with `\n`).
    pub text: String,
    /// Whether it was flagged as an error.
    #[serde(default)]
    pub is_error: bool,
}

/// A fact about the store checked after the case ran.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// Virtual path checked (never followed if it is a link).
    pub path: String,
    /// What must hold.
    pub expect: Expected,
    /// Verdict when it does not hold.
    pub verdict: Verdict,
    /// The requirement, for reports.
    pub what: String,
}

/// What a [`Check`] requires of its path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "is", content = "value", rename_all = "snake_case")]
pub enum Expected {
    /// A regular file with exactly this content.
    File(Vec<u8>),
    /// A directory.
    Dir,
    /// Nothing (not even a dangling link).
    Absent,
    /// A symlink.
    Symlink,
}

/// One test case. See the module docs.
#[derive(Clone, Debug, Serialize)]
pub struct Case {
    /// Stable slug id, e.g. `view/file/view-range/inverted`.
    pub id: String,
    /// Spec rows (`spec:2.1/C7`, `spec:3/S-4`) and bug ids (`bug:B04`) it implements.
    pub source: Vec<String>,
    /// Where it is defined, workspace-relative: `file:line` of its builder call in the catalog
    /// (`crates/memcert-cases/src/catalog/view.rs:42`), of its record in `payloads.toml`, or the
    /// transcript file it came from. Shown by `memcert cases --format jsonl` and in reports; never
    /// written into `.snap` headers, so a moved line changes no baseline.
    pub defined: String,
    /// The one sentence under test, with MUST or SHOULD.
    pub requirement: String,
    /// MUST or SHOULD.
    pub level: Level,
    /// Laid out before the case runs, in order.
    pub setup: Vec<Fs>,
    /// Commands, in order.
    pub steps: Vec<Step>,
    /// Checked on disk after the last command.
    pub checks: Vec<Check>,
    /// A concurrent swap the harness runs while the steps are sent (TOCTOU cases).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub race: Option<Race>,
    /// How the steps group into assistant turns, as sizes in order: a turn of several steps
    /// is sent together (`Target::call_batch`; a batch case is one such turn, a transcript keeps
    /// its turns), each reply still graded by its own step. Empty: one step per turn.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<usize>,
}

impl Case {
    /// The steps' turns as sizes: [`Case::turns`], or one step per turn.
    pub fn turn_sizes(&self) -> Vec<usize> {
        if self.turns.is_empty() {
            vec![1; self.steps.len()]
        } else {
            self.turns.clone()
        }
    }
}

/// A bounded race: while the case's steps run, the harness keeps exchanging two in-root names
/// atomically (`renameat2(RENAME_EXCHANGE)`), typically a real directory and a planted symlink to
/// the outside, as another local process could (spec:3/S-10, bug:B12, bug:B13). It stops when the last step
/// is answered, or after [`Race::max_swaps`] exchanges, whichever comes first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Race {
    /// Virtual path of one name (e.g. the real directory `/memories/real`).
    pub a: String,
    /// Virtual path of the other (e.g. the planted link `/memories/.swap`).
    pub b: String,
    /// Upper bound on exchanges.
    pub max_swaps: u64,
}

impl Case {
    /// The first segment of the id (`view`, `traversal`, ...), the case's category.
    pub fn category(&self) -> &str {
        self.id.split('/').next().unwrap_or("")
    }

    /// True when the case plants a character device ([`Fs::CharDevice`]), which the runner can
    /// lay out only where `mknod` succeeds and the filesystem is not mounted `nodev`; elsewhere
    /// the case is SKIPPED with that reason.
    pub fn plants_device(&self) -> bool {
        self.setup
            .iter()
            .any(|f| matches!(f, Fs::CharDevice { .. }))
    }

    /// True when the case plants permission bits ([`Fs::Mode`]), which only bind a process that
    /// is not root: the runner SKIPs such a case when its effective uid is 0.
    pub fn needs_unprivileged(&self) -> bool {
        self.setup.iter().any(|f| matches!(f, Fs::Mode { .. }))
    }
}
