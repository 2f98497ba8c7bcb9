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
//!   catalog: 2026.12.1
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
//! `info.catalog` is the case catalog version the snapshot was recorded with
//! (`memcert_cases::CATALOG_VERSION`, `YEAR.MONTH.N`); a file without it (recorded before
//! memcert wrote it) is read as recorded with an unknown catalog, and one whose `catalog` is not
//! a catalog version is refused like any malformed file. A baseline recorded with another
//! catalog still compares (the answers are what count), but the binary warns once on stderr and
//! the reports say so: the catalog's cases may have been added, retired or changed since
//! (`CHANGELOG.md`), which shows as NEW, STALE or a REGRESSION whose inputs changed.
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
//! # Reading a baseline
//! A baseline folder may come from anywhere (a pull request, a shared checkout), so its files are
//! read defensively ([`read_snap`]): each is opened without following a link and without
//! blocking (`O_NOFOLLOW | O_NONBLOCK`), its type and size are checked through the opened handle,
//! and anything but a regular file of at most [`MAX_SNAP_BYTES`] is refused before a byte is
//! read ([`Error::NotRegular`], [`Error::TooLarge`]): a FIFO cannot hang the run, a link to
//! `/dev/zero` cannot fill memory. Counts in the file (`content: N lines`) are never trusted for
//! an allocation: a count past the end of the file is the one-line [`Error::Format`]. Each is
//! exit 2 on the command line.
//!
//! # Non-guarantees
//! - Race cases (`race/...`), cases that plant a huge file (`hazard/huge-file/...`: whether a
//!   handler reading it whole answers before memcert stops waiting depends on its speed) and
//!   SKIPPED cases are neither recorded nor compared: their answers depend on timing or on the
//!   user memcert runs as.
//! - Answers that vary for other reasons (a handler's own timestamps or random ids, a concurrent
//!   batch whose winner is timing) are not redacted; exclude those cases with `--exclude`.
//!
//! # Layout
//! The types shared by every step are here; the redaction rules and [`Redactor`] are in
//! `redact`, the `.snap` file format (render, parse, file names, writing) in `snap`, reading a
//! baseline folder, comparing a case with it and a run's totals in `compare`.

// The format example above shows the file's real tab characters.
#![allow(clippy::tabs_in_doc_comments)]

mod compare;
mod redact;
mod snap;

pub use compare::{diff, recorded_catalogs, Baseline, BaselineSummary, CatalogCount};
pub use redact::{entry_key, listing_lines, Redactor};
pub use snap::{
    case_id_of, file_name, read_snap, remove_pending, write, write_pending, MAX_SNAP_BYTES,
};

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::protocol::ToolResult;

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
    /// A `.snap` entry that is not a regular file (a link, FIFO, socket, device or folder): it
    /// is not opened for reading.
    #[error("{path}: not a regular file ({kind}); a baseline holds regular .snap files only")]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is: `a symbolic link`, `a FIFO`, `a character device`, ...
        kind: &'static str,
    },
    /// A `.snap` file over [`MAX_SNAP_BYTES`]: it is not read.
    #[error("{path}: {bytes} bytes, over the {limit}-byte limit of a snapshot file")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// [`MAX_SNAP_BYTES`].
        limit: u64,
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
    /// The catalog version it was recorded with (the header's `info.catalog`); `None`: unknown
    /// (a file without it).
    pub catalog: Option<crate::suite::CatalogVersion>,
    /// Each step's input as compact JSON, redacted (the header's `info.input`).
    pub input: Vec<String>,
    /// Names of the rules that replaced something (the header's `info.redactions`).
    pub redactions: Vec<String>,
    /// One answer per step that was sent.
    pub steps: Vec<Answer>,
}

/// How one case compares with the baseline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
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
