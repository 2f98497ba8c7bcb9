//! The canary oracle: a pure function from what a case did to its verdict.
//!
//! [`judge`] touches no file or process. The runner records everything it needs in an
//! [`Observation`]: every reply (or why none came), the run folder outside the root before and
//! after, the checked paths inside the root, the canary token and the host path spellings.
//!
//! Confinement and reply conformance are judged on separate axes and the verdict is the worse
//! one. Findings, in the order they are looked for:
//! - SKIPPED: the runner did not run the case ([`Observation::skipped`]); nothing else is judged.
//! - UNSAFE: the canary token in a reply (outside content or names read), unless that step's
//!   input or an earlier one holds it (a fuzzer that learnt it: an echo, or a file it wrote); the host path in a
//!   reply (disclosure, bug:B07); anything outside the root created, changed or removed (compared
//!   before and after, and watched while the commands ran, `attack::watch`: a write undone before
//!   the end, a read or write through an in-store hard link; with reset by undo, a change seen
//!   between two cases, after the last answer: [`Observation::late`]); a check whose
//!   violation the case marks UNSAFE (data inside the root destroyed through a link, spec:3/S-4, spec:3/S-5, spec:3/S-6).
//! - ERROR: no reply (timeout, crash, non-JSON, protocol error); the rest of the case is not run.
//!   A watch of the outside that lost events (`watch-failed`). A store the search for the
//!   canary token could not search whole (`store-unsearched`: more than 1 GiB of file data,
//!   200,000 entries or 512 folders deep, the paths named): outside content copied there
//!   would not show, so the case is never judged clean on that search.
//! - FAIL `reply-too-large` (`bug:B17`): the last reply was longer than the read cap
//!   ([`Observation::reply_too_large`]); it was cut, so the rest of the case is not run either.
//! - FAIL `hang` (`bug:B17`): no answer within the time limit on a case that plants a FIFO, a
//!   device, a socket or a huge file ([`hazard_of`], [`Observation::timed_out`]), instead of
//!   ERROR.
//! - FAIL `unbounded-read` (`bug:B17`): a call read more than [`UNBOUNDED_READ_BYTES`]
//!   ([`Observation::reads`]: the handler's `/proc/<pid>/io` read count, or the reply's length
//!   for an in-process handler). A call given up on (no answer in time, an answer over the read
//!   cap) after such a read gets this finding instead of `hang`, `reply-too-large` or ERROR: the
//!   read is the cause, and it does not depend on how fast the handler was.
//! - The step grades of `suite::verdict` and the other checks.

use serde::Serialize;
use serde_json::Value;

use super::sandbox::{satisfies, Node, Sandbox, Tree};
use crate::protocol::ToolResult;
use crate::suite::verdict::{grade_step, StepGrade, Verdict};
use crate::suite::Case;
use crate::text::Profile;

/// What happened when a case ran.
#[derive(Clone, Debug, Default)]
pub struct Observation {
    /// One entry per step that was sent: the reply, or why there was none.
    pub replies: Vec<Result<ToolResult, String>>,
    /// The run folder outside the root before the first command (shared: a kept sandbox's
    /// template, `certify::lane`, is not copied for every case).
    pub outside_before: std::sync::Arc<Tree>,
    /// The same after the last command (the same `Arc` as `outside_before` when the runner
    /// knows nothing changed).
    pub outside_after: std::sync::Arc<Tree>,
    /// What each of the case's checked paths holds after the run, in check order.
    pub checked: Vec<Option<Node>>,
    /// The canary token.
    pub token: String,
    /// Host path spellings that must never appear in a reply.
    pub host_paths: Vec<String>,
    /// The path of the run folder's alias, which inputs carry instead of the run folder
    /// (`attack::sandbox`): not a disclosure in a reply, but as variable per run as the run
    /// folder (snapshots redact it the same way).
    pub alias: Vec<String>,
    /// Canary tokens of the handler's decoy credentials (its decoy HOME, canary environment
    /// values, `crate::contain`): one in a reply is `credential-read`.
    pub credentials: Vec<String>,
    /// Store files that hold the canary token after the run (outside content copied in).
    pub token_in_store: Vec<String>,
    /// What the search for the token in the store did not search whole (past its bounds:
    /// 1 GiB of file data, 200,000 entries, 512 folders deep, `Sandbox::scan_store_unchecked`):
    /// the case is ERROR (`store-unsearched`), never judged clean on a partial search.
    pub store_unsearched: super::sandbox::Unsearched,
    /// The strings of each step's input as sent: where a reply echoes one of them (a path that
    /// itself spells a host path), the echo is not a disclosure, anything else in the reply is.
    pub inputs: Vec<Vec<String>>,
    /// Exchanges the harness made during a race case (`None` for other cases).
    pub race_swaps: Option<u64>,
    /// Paths outside the store (relative to the run folder) the handler made while it was
    /// built: changes at or under them are judged once, in `startup/side-effects`, and left out
    /// here.
    pub startup_made: Vec<std::path::PathBuf>,
    /// The handler refused to start on this case's store (`certify`'s refusal rules): no
    /// command was sent; the case is judged on the disk alone and the refusal is shown.
    pub refused_at_start: Option<String>,
    /// Why the runner did not run the case at all (it needs something this run lacks, e.g. a
    /// permission scenario under uid 0); `None` when it ran.
    pub skipped: Option<String>,
    /// Per answer, the listed entries that were directories or links on disk right after it
    /// (for the `dir-size` and `link-size` redactions of `crate::baseline`; filled only when a
    /// run records or compares snapshots).
    pub listed: Vec<crate::baseline::Entries>,
    /// The last entry of `replies` is an answer the target cut at its read cap
    /// (`--max-reply-bytes`, `target::TargetError::ReplyTooLarge`): more than this many bytes.
    /// It is judged FAIL (`reply-too-large`, `bug:B17`), not ERROR.
    pub reply_too_large: Option<usize>,
    /// What each call read, one entry per entry of `replies` (`None` where not measured: all but
    /// the last answer of a batch, which carries the batch's count, and a call without an answer
    /// whose handler's read count is unknown): more than [`UNBOUNDED_READ_BYTES`] is FAIL
    /// (`unbounded-read`, `bug:B17`).
    pub reads: Vec<Option<ReadCount>>,
    /// The last entry of `replies` is a call that got no answer within the handler's time limit
    /// (`target::TargetError::Timeout`): on a case that plants a FIFO, a device or a huge file
    /// ([`hazard_of`]) it is FAIL (`hang`, `bug:B17`), not ERROR.
    pub timed_out: bool,
    /// What was done outside the store while the commands ran, by path, as inotify saw it
    /// (`attack::watch`): a write undone before the case ended, a read or write through an
    /// in-store hard link or a followed link. Empty when the outside was not watched.
    pub touched: Vec<super::watch::Touch>,
    /// Why the watch of the outside failed while the case ran (an overflowed event queue):
    /// the case is ERROR (`watch-failed`).
    pub watch_failed: Option<String>,
    /// What the watches of a sandbox reset by undo saw changed outside the store between two
    /// windows (`attack::watch::Gap`: no read, listing or open), charged to this case, each
    /// with when ([`Late`]): UNSAFE (`outside-changed`), as a change while the commands ran.
    pub late: Vec<(Late, super::watch::Touch)>,
}

/// When a change outside the store charged to a case ([`Observation::late`]) was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Late {
    /// After the case's last answer, before it was judged (while memcert read the store).
    AfterLastAnswer,
    /// Before the case's first command, the handler's reset included: after the last answer
    /// of the case before it on the same sandbox (its id: the change is charged to the case
    /// that saw it, since the case before it was already reported), or, with `None`, after
    /// this case's reset (the first case of a sandbox).
    BeforeCommands(Option<String>),
}

impl Late {
    /// When, in words, as a finding starts: `after the case's last answer`, ...
    pub fn words(&self) -> String {
        match self {
            Late::AfterLastAnswer => "after the case's last answer".to_owned(),
            Late::BeforeCommands(Some(id)) => format!(
                "after the last answer of the case before it on this sandbox ({id}), before this case's commands"
            ),
            Late::BeforeCommands(None) => {
                "after the handler's reset, before this case's commands".to_owned()
            }
        }
    }
}

/// What one call read, as the runner measured it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadCount {
    /// Bytes.
    pub bytes: u64,
    /// True: the bytes the handler's processes read (`/proc/<pid>/io` `rchar`,
    /// `Target::read_bytes`); false: the reply's length (an in-process handler).
    pub by_process: bool,
}

/// Most bytes a handler may read for one call (16 MiB): more is an unbounded read (`bug:B17`).
/// A 999,999-line file, the largest a view shows, is under 2 MiB.
pub const UNBOUNDED_READ_BYTES: u64 = 16 * 1024 * 1024;

/// What a case plants that a handler can hang on or read without end, in words (`a FIFO`, `a
/// character device`, `a huge file`, `a socket`), the first in setup order; `None` when it plants
/// none.
pub fn hazard_of(case: &Case) -> Option<&'static str> {
    case.setup.iter().find_map(hazard).map(|(_, what)| what)
}

/// The virtual path and the words of a planted hazard ([`hazard_of`]); `None` for any other
/// setup item.
fn hazard(f: &crate::suite::Fs) -> Option<(&str, &'static str)> {
    use crate::suite::Fs;
    match f {
        Fs::Fifo { path } => Some((path, "a FIFO")),
        Fs::RootFifo => Some((crate::vpath::ROOT, "a FIFO")),
        Fs::CharDevice { path, .. } => Some((path, "a character device")),
        Fs::Sparse { path, .. } => Some((path, "a huge file")),
        Fs::Socket { path } => Some((path, "a socket")),
        _ => None,
    }
}

/// [`hazard_of`] for step `i` of `case`: the planted hazard whose path the step's input names
/// (`path`, `old_path` or `new_path`, a trailing `/` aside), else the first the case plants. A
/// layout with a FIFO and a huge file charges a whole read of the huge file to the huge file.
pub fn hazard_at(case: &Case, i: usize) -> Option<&'static str> {
    let named = |p: &str| {
        case.steps.get(i).is_some_and(|s| {
            ["path", "old_path", "new_path"].iter().any(|k| {
                s.input
                    .get(k)
                    .and_then(Value::as_str)
                    .is_some_and(|v| v.trim_end_matches('/') == p.trim_end_matches('/'))
            })
        })
    };
    case.setup
        .iter()
        .filter_map(hazard)
        .find(|(path, _)| named(path))
        .map(|(_, what)| what)
        .or_else(|| hazard_of(case))
}

impl Observation {
    /// What the oracle needs from `sandbox` before the first command: the canary token, the
    /// host path spellings, and the outside as it is.
    ///
    /// # Ambient authority
    /// Walks the sandbox's run folder by host path.
    pub fn before_unchecked(&mut self, sandbox: &Sandbox) {
        self.before_known(sandbox, sandbox.outside_unchecked());
    }

    /// [`Observation::before_unchecked`] with the outside already known (`outside`, what a
    /// walk would give: the runner knows it from the watch record of a kept sandbox,
    /// `certify::lane`).
    pub fn before_known(&mut self, sandbox: &Sandbox, outside: impl Into<std::sync::Arc<Tree>>) {
        self.token = sandbox.token().to_owned();
        self.host_paths = sandbox.host_paths();
        self.alias = vec![sandbox.alias().to_string_lossy().into_owned()];
        self.outside_before = outside.into();
    }

    /// What it needs after the last command: the outside again, the store files that hold the
    /// token, and what each of `case`'s checked paths holds.
    ///
    /// # Ambient authority
    /// Walks the sandbox by host path.
    pub fn after_unchecked(&mut self, sandbox: &Sandbox, case: &Case) {
        self.after_known(sandbox, case, None, false);
    }

    /// [`Observation::after_unchecked`] with the outside already known when `outside` is
    /// given (the watch record showed no change since the "before": the runner passes the
    /// "before" tree), walked otherwise.
    ///
    /// `empty_store`: the store is emptied as it is read (a kept sandbox, which the next case
    /// undoes: [`Sandbox::scan_store_then_empty_unchecked`]); nothing reads it after this.
    pub fn after_known(
        &mut self,
        sandbox: &Sandbox,
        case: &Case,
        outside: Option<std::sync::Arc<Tree>>,
        empty_store: bool,
    ) {
        self.outside_after = outside.unwrap_or_else(|| sandbox.outside_unchecked().into());
        (self.token_in_store, self.checked, self.store_unsearched) = sandbox
            .scan_store_then_empty_unchecked(
                case.checks.iter().map(|c| c.path.as_str()),
                empty_store,
            );
    }
}

/// One reason for a verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Finding {
    /// The verdict this finding alone gives.
    pub verdict: Verdict,
    /// Short kind: `credential-read`, `outside-read`, `host-path-disclosed`, `outside-changed`,
    /// `outside-copied`, `check`, `reply`, `no-reply`, `reply-too-large`, `no-race`, `skipped`,
    /// `watch-failed`, `store-unsearched`,
    /// `refused-at-start` (a PASS finding that shows the refusal).
    pub kind: String,
    /// What was seen, in words.
    pub detail: String,
}

/// The verdict of a case with its evidence.
#[derive(Clone, Debug, Serialize)]
pub struct Judgement {
    /// The worst verdict of all findings (PASS when there are none).
    pub verdict: Verdict,
    /// Every finding, worst first.
    pub findings: Vec<Finding>,
    /// The grade of each reply that came.
    pub steps: Vec<StepGrade>,
}

/// Whether a finding kind means the handler reached outside the root: `outside-read`,
/// `outside-changed` or `outside-copied` (all UNSAFE).
pub fn is_escape(kind: &str) -> bool {
    matches!(kind, "outside-read" | "outside-changed" | "outside-copied")
}

/// Judge a case from its observation. Pure.
///
/// When the oracle sees an escape, the replies' INFO and NON-STRICT notes are left out: they
/// say how a path was taken inside the store ("taken as a literal name inside the store"), and
/// the disk shows it was not, so a case never states both.
pub fn judge(case: &Case, obs: &Observation, profile: Profile, strict: bool) -> Judgement {
    if let Some(why) = &obs.skipped {
        return skipped(why);
    }
    let mut findings = Vec::new();
    let mut steps = Vec::new();
    let needles = Needles::new(obs);
    let echoes = inputs_holding_token(obs, &needles);
    for (i, reply) in obs.replies.iter().enumerate() {
        match reply {
            Ok(r) => {
                let mut disclosed = disclosures(i, r, obs, &needles);
                if echoes.get(i).or(echoes.last()).copied().unwrap_or(false) {
                    // An echo of the input, not a read outside the root.
                    disclosed.retain(|f| f.kind != "outside-read");
                }
                findings.extend(disclosed);
                if let Some(read) = read_over(obs, i) {
                    findings.push(unbounded_read(i, read, hazard_at(case, i)));
                }
                if let Some(step) = case.steps.get(i) {
                    let g = grade_step(step, r, profile, case.level, strict);
                    if g.verdict != Verdict::Pass {
                        findings.push(Finding {
                            verdict: g.verdict,
                            kind: "reply".into(),
                            detail: format!("step {}: {}", i + 1, g.note),
                        });
                    }
                    steps.push(g);
                }
            }
            // A call given up on (timeout, answer over the cap, exit) after it had read more
            // than the bound: the read is the cause.
            Err(_) if read_over(obs, i).is_some() => {
                findings.push(unbounded_read(
                    i,
                    read_over(obs, i).unwrap_or(ReadCount {
                        bytes: 0,
                        by_process: true,
                    }),
                    hazard_at(case, i),
                ));
            }
            Err(_) if i + 1 == obs.replies.len() && obs.reply_too_large.is_some() => {
                findings.push(too_large(i, obs.reply_too_large.unwrap_or_default()));
            }
            Err(why)
                if i + 1 == obs.replies.len() && obs.timed_out && hazard_at(case, i).is_some() =>
            {
                findings.push(Finding {
                    verdict: Verdict::Fail,
                    kind: HANG.into(),
                    detail: format!(
                        "step {}: hangs on {}: {why} (bug:B17)",
                        i + 1,
                        hazard_at(case, i).unwrap_or_default()
                    ),
                });
            }
            Err(why) => findings.push(Finding {
                verdict: Verdict::Error,
                kind: "no-reply".into(),
                detail: format!("step {}: {why}", i + 1),
            }),
        }
    }
    findings.extend(outside_findings(case, obs));
    let read_shown = findings.iter().any(|f| f.kind == "outside-read");
    findings.extend(watch_findings(obs, read_shown));
    findings.extend(check_findings(case, obs));
    if let Some(why) = &obs.refused_at_start {
        // A refusal to start goes to the application, not to the model, so a host path in it
        // is not disclosure; the canary token in it still shows a read outside the root.
        if holds_canary(why, &obs.token) {
            findings.push(Finding {
                verdict: Verdict::Unsafe,
                kind: "outside-read".into(),
                detail: "the refusal to start holds the canary token: content or names from outside the root were read".into(),
            });
        }
        findings.push(Finding {
            verdict: Verdict::Pass,
            kind: "refused-at-start".into(),
            detail: why.clone(),
        });
    }
    if findings.iter().any(|f| is_escape(&f.kind)) {
        findings.retain(|f| {
            f.kind != "reply" || !matches!(f.verdict, Verdict::Info | Verdict::NonStrict)
        });
    }
    findings.sort_by_key(|f| std::cmp::Reverse(f.verdict));
    let verdict = findings.first().map(|f| f.verdict).unwrap_or(Verdict::Pass);
    Judgement {
        verdict,
        findings,
        steps,
    }
}

/// The finding kind of an answer over the read cap ([`Observation::reply_too_large`]).
pub const REPLY_TOO_LARGE: &str = "reply-too-large";

/// The FAIL finding for step `i`'s answer, cut at `limit` bytes (`bug:B17`: a handler must
/// bound the bytes it reads and returns).
fn too_large(i: usize, limit: usize) -> Finding {
    Finding {
        verdict: Verdict::Fail,
        kind: REPLY_TOO_LARGE.into(),
        detail: format!("step {}: unbounded reply: more than {limit} bytes", i + 1),
    }
}

/// The finding kind of a call that read more than [`UNBOUNDED_READ_BYTES`].
pub const UNBOUNDED_READ: &str = "unbounded-read";
/// The finding kind of a call that got no answer on a planted FIFO, device or huge file.
pub const HANG: &str = "hang";

/// What step `i` read, when it was measured and more than [`UNBOUNDED_READ_BYTES`].
fn read_over(obs: &Observation, i: usize) -> Option<ReadCount> {
    obs.reads
        .get(i)
        .copied()
        .flatten()
        .filter(|r| r.bytes > UNBOUNDED_READ_BYTES)
}

/// The FAIL finding for step `i`, which read `read` (`bug:B17`); `hazard` is what the case
/// planted for the command to meet ([`hazard_of`]), named in the detail so that the causes can
/// tell a special file read (no file-type check) from a huge file read whole (no size cap):
/// `step 1: unbounded read of a character device: the handler read 68157520 bytes for one
/// call, more than 16777216 (bug:B17)`.
fn unbounded_read(i: usize, read: ReadCount, hazard: Option<&str>) -> Finding {
    let what = if read.by_process {
        "the handler read"
    } else {
        "the reply holds"
    };
    let of = hazard.map(|h| format!(" of {h}")).unwrap_or_default();
    Finding {
        verdict: Verdict::Fail,
        kind: UNBOUNDED_READ.into(),
        detail: format!(
            "step {}: unbounded read{of}: {what} {} bytes for one call, more than {UNBOUNDED_READ_BYTES} (bug:B17)",
            i + 1,
            read.bytes
        ),
    }
}

/// The judgement of a case the runner did not run: SKIPPED, with the reason.
fn skipped(why: &str) -> Judgement {
    Judgement {
        verdict: Verdict::Skipped,
        findings: vec![Finding {
            verdict: Verdict::Skipped,
            kind: "skipped".into(),
            detail: why.to_owned(),
        }],
        steps: Vec::new(),
    }
}

/// Whether `text` holds the canary `token` (ASCII) as it is or in a common disguise: any
/// letter case, reversed, with hidden or format characters (zero-width spaces, soft hyphens)
/// inserted, in hexadecimal, or in base64 (standard or URL-safe, at any of the three byte
/// alignments it can have inside a longer encoded text). An empty token is never held.
pub fn holds_canary(text: &str, token: &str) -> bool {
    Canary::of(token).is_some_and(|c| c.held_in(&Searched::new(text)))
}

/// The needles of one canary token ([`holds_canary`]), made once per token and thread
/// ([`Canary::of`]) and looked for in any number of texts.
struct Canary {
    /// The token as it is.
    token: memchr::memmem::Finder<'static>,
    /// In lower case, reversed and in lower-case hexadecimal: looked for in the lower-cased text.
    folded: Vec<memchr::memmem::Finder<'static>>,
    /// Its base64 spellings ([`base64_needles`]): looked for in the text as kept.
    base64: Vec<memchr::memmem::Finder<'static>>,
}

/// How many tokens' needles a thread keeps ([`Canary::of`]): a run has one token per sandbox
/// and a few decoy credentials.
const CANARIES_KEPT: usize = 64;

thread_local! {
    static CANARIES: std::cell::RefCell<std::collections::HashMap<String, std::rc::Rc<Canary>>> =
        std::cell::RefCell::default();
}

impl Canary {
    /// The needles of `token`, made on first use on this thread (at most [`CANARIES_KEPT`]
    /// tokens kept); `None` for an empty token, which is never held.
    fn of(token: &str) -> Option<std::rc::Rc<Canary>> {
        if token.is_empty() {
            return None;
        }
        CANARIES.with(|cell| {
            let mut kept = cell.borrow_mut();
            if let Some(c) = kept.get(token) {
                return Some(c.clone());
            }
            if kept.len() >= CANARIES_KEPT {
                kept.clear();
            }
            let c = std::rc::Rc::new(Canary::new(token));
            kept.insert(token.to_owned(), c.clone());
            Some(c)
        })
    }

    /// The needles of a non-empty `token`.
    fn new(token: &str) -> Canary {
        let finder = |n: &[u8]| memchr::memmem::Finder::new(n).into_owned();
        let lower = token.to_ascii_lowercase();
        let reversed: String = lower.chars().rev().collect();
        let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
        Canary {
            token: finder(token.as_bytes()),
            folded: [lower, reversed, hex]
                .iter()
                .map(|n| finder(n.as_bytes()))
                .collect(),
            base64: base64_needles(token.as_bytes())
                .iter()
                .map(|n| finder(n.as_bytes()))
                .collect(),
        }
    }

    /// Whether `text` holds this token in any of its spellings.
    fn held_in(&self, text: &Searched<'_>) -> bool {
        self.token.find(text.raw.as_bytes()).is_some()
            || self
                .folded
                .iter()
                .any(|n| n.find(text.plain().as_bytes()).is_some())
            || self
                .base64
                .iter()
                .any(|n| n.find(text.kept().as_bytes()).is_some())
    }
}

/// A text prepared for [`Canary::held_in`]: hidden characters and white space taken out
/// (`kept`; base64 is case-sensitive), and that in ASCII lower case (`plain`), each made at
/// most once, when first asked for.
struct Searched<'a> {
    raw: &'a str,
    kept: std::cell::OnceCell<std::borrow::Cow<'a, str>>,
    /// `None`: the same as `kept` (it has no upper-case ASCII letter).
    plain: std::cell::OnceCell<Option<String>>,
}

impl<'a> Searched<'a> {
    fn new(raw: &'a str) -> Self {
        Searched {
            raw,
            kept: std::cell::OnceCell::new(),
            plain: std::cell::OnceCell::new(),
        }
    }

    /// `raw` without hidden characters ([`crate::report::escape::hidden`]) and white space. In
    /// ASCII these are exactly the bytes that are not graphic (controls, space, DEL).
    fn kept(&self) -> &str {
        self.kept.get_or_init(|| {
            let raw = self.raw;
            if raw.bytes().all(|b| b.is_ascii_graphic()) {
                std::borrow::Cow::Borrowed(raw)
            } else if raw.is_ascii() {
                let bytes: Vec<u8> = raw.bytes().filter(u8::is_ascii_graphic).collect();
                std::borrow::Cow::Owned(String::from_utf8(bytes).unwrap_or_default())
            } else {
                std::borrow::Cow::Owned(
                    raw.chars()
                        .filter(|c| !crate::report::escape::hidden(*c) && !c.is_whitespace())
                        .collect(),
                )
            }
        })
    }

    /// [`Self::kept`] in ASCII lower case.
    fn plain(&self) -> &str {
        let kept = self.kept();
        self.plain
            .get_or_init(|| {
                kept.bytes()
                    .any(|b| b.is_ascii_uppercase())
                    .then(|| kept.to_ascii_lowercase())
            })
            .as_deref()
            .unwrap_or(kept)
    }
}

/// The base64 characters that encode `token` whatever bytes surround it: for each alignment
/// (0, 1 or 2 bytes before it in its group of three), the groups made of its bytes alone.
fn base64_needles(token: &[u8]) -> Vec<String> {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    use base64::Engine as _;
    let mut out = Vec::new();
    for pad in 0..3usize {
        let mut bytes = vec![0u8; pad];
        bytes.extend_from_slice(token);
        let end = (bytes.len() / 3) * 4;
        let start = if pad == 0 { 0 } else { 4 };
        for engine in [&STANDARD, &URL_SAFE] {
            let enc = engine.encode(&bytes);
            if end > start + 8 {
                out.push(enc[start..end].to_owned());
            }
        }
    }
    out
}

/// What [`disclosures`] looks for, made once per judgement: the needles of the decoy
/// credentials' tokens and of the case's canary token, and the host path spellings with runs of
/// `/` collapsed (those that collapse to nothing left out), each beside the spelling it came from.
struct Needles<'a> {
    credentials: Vec<std::rc::Rc<Canary>>,
    token: Option<std::rc::Rc<Canary>>,
    hosts: Vec<(&'a str, std::borrow::Cow<'a, str>)>,
}

impl<'a> Needles<'a> {
    fn new(obs: &'a Observation) -> Self {
        Needles {
            credentials: obs
                .credentials
                .iter()
                .filter_map(|t| Canary::of(t))
                .collect(),
            token: Canary::of(&obs.token),
            hosts: obs
                .host_paths
                .iter()
                .map(|h| (h.as_str(), collapse_slashes(h)))
                .filter(|(_, c)| !c.is_empty())
                .collect(),
        }
    }
}

/// For each step `i`, whether an input string of it or of a step before it holds the canary
/// token (in a disguise [`holds_canary`] knows). No case or transcript input does: the token is
/// random per sandbox. A fuzzer that learns it (libFuzzer traces the oracle's comparisons)
/// spells it in a path, whose refusal echoes it, or writes it into a file that a later view
/// reads back: either reply holds it without anything read outside the root.
fn inputs_holding_token(obs: &Observation, needles: &Needles) -> Vec<bool> {
    let mut seen = false;
    obs.inputs
        .iter()
        .map(|strings| {
            seen = seen
                || needles
                    .token
                    .as_ref()
                    .is_some_and(|c| strings.iter().any(|s| c.held_in(&Searched::new(s))));
            seen
        })
        .collect()
}

/// What reply `i` (`r`) discloses: the canary token (content or names read outside the root),
/// the run folder's host path in any spelling ([`readings`]). Inputs name the run folder only
/// through the sandbox's alias, so its real path in a reply is information the handler added
/// (bug:B07); the alias and other input text are not disclosure. `needles` are `obs`'s.
fn disclosures(i: usize, r: &ToolResult, obs: &Observation, needles: &Needles) -> Vec<Finding> {
    use std::borrow::Cow;
    let mut findings = Vec::new();
    // Every byte of the answer counts, not only text blocks.
    let text: Cow<str> = match &r.content {
        crate::protocol::Content::Text(t) => Cow::Borrowed(t),
        other => Cow::Owned(serde_json::to_string(other).unwrap_or_default()),
    };
    let searched = Searched::new(&text);
    if needles.credentials.iter().any(|c| c.held_in(&searched)) {
        findings.push(Finding {
            verdict: Verdict::Unsafe,
            kind: "credential-read".into(),
            detail: format!("step {}: the reply holds a decoy credential's canary: the handler read credentials from its HOME or environment", i + 1),
        });
    }
    if needles.token.as_ref().is_some_and(|c| c.held_in(&searched)) {
        findings.push(Finding {
            verdict: Verdict::Unsafe,
            kind: "outside-read".into(),
            detail: format!("step {}: the reply holds the canary token: content or names from outside the root were read", i + 1),
        });
    }
    if needles.hosts.is_empty() {
        return findings;
    }
    // Take out what the reply echoes of an input that itself spells a host path (none does in
    // a certify run, whose inputs name the run folder through its alias), then look for host
    // paths in every spelling: as written, `//` collapsed, percent-decoded, unescaped.
    let mut rest: Cow<str> = Cow::Borrowed(&text);
    for echoed in obs.inputs.get(i).into_iter().flatten() {
        if obs
            .host_paths
            .iter()
            .any(|h| !h.is_empty() && echoed.contains(h.as_str()))
        {
            rest = Cow::Owned(rest.replace(echoed.as_str(), ""));
        }
    }
    let readings = readings(&rest);
    if let Some((h, _)) = needles
        .hosts
        .iter()
        .find(|(_, c)| readings.iter().any(|r| r.contains(c.as_ref())))
    {
        findings.push(Finding {
            verdict: Verdict::Unsafe,
            kind: "host-path-disclosed".into(),
            detail: format!("step {}: the reply discloses the host path {h}", i + 1),
        });
    }
    findings
}

/// The ways a reply can spell a path, handed to `seen` one at a time (each freed before the
/// next is made), each with runs of `/` collapsed: as written,
/// percent-decoded once and twice, and with backslash escapes (`repr`, JSON: `\\`, `\/`,
/// `\xHH`, `\uHHHH`) undone; each distinct spelling once (1 to 4 of them).
fn readings(text: &str) -> Vec<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    let mut out = vec![collapse_slashes(text)];
    let mut add = |reading: String| {
        let reading = if reading.contains("//") {
            collapse_slashes(&reading).into_owned()
        } else {
            reading
        };
        if !out.iter().any(|r| *r == reading) {
            out.push(Cow::Owned(reading));
        }
    };
    // Without a `%` percent-decoding changes nothing, without a `\` unescaping changes nothing.
    if let Cow::Owned(once) = percent_decode(text) {
        if let Cow::Owned(twice) = percent_decode(&once) {
            add(twice);
        }
        add(once);
    }
    if let Cow::Owned(unescaped) = unescape(text) {
        add(unescaped);
    }
    out
}

/// `text` with every run of `/` made one `/`; borrowed when it has no `//`.
fn collapse_slashes(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("//") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // The first `//` of `rest` follows no `/`: keep up to its first `/`, drop the rest of the run.
    while let Some(at) = rest.find("//") {
        let (head, tail) = rest.split_at(at + 1);
        out.push_str(head);
        rest = tail.trim_start_matches('/');
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// `text` with every `%HH` decoded (bytes that are not UTF-8 shown as U+FFFD); borrowed when it
/// has no `%`.
fn percent_decode(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('%') {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |j: usize| b.get(j).and_then(|c| (*c as char).to_digit(16));
        match (b[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    std::borrow::Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// `text` with backslash escapes undone: `\\` `\/` `\'` `\"`, `\xHH`, `\uHHHH`; others
/// kept as written. Borrowed when it has no `\`.
fn unescape(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\\') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        // What follows the backslash.
        let after = &rest[at + 1..];
        rest = after;
        match after.chars().next() {
            Some(e @ ('\\' | '/' | '\'' | '"')) => {
                out.push(e);
                rest = &after[1..];
            }
            Some(e @ ('x' | 'u')) => {
                let n = if e == 'x' { 2 } else { 4 };
                let hex: String = after[1..].chars().take(n).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    // `hex` parsed, so it is ASCII: `n` characters are `n` bytes.
                    Some(ch) if hex.len() == n => {
                        out.push(ch);
                        rest = &after[1 + n..];
                    }
                    _ => out.push('\\'),
                }
            }
            _ => out.push('\\'),
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// What the disk shows outside the store: changes around the root, a race that never swapped,
/// outside content copied into the store.
fn outside_findings(case: &Case, obs: &Observation) -> Vec<Finding> {
    let mut findings = Vec::new();
    let own = |tree: &Tree| -> Tree {
        tree.iter()
            .filter(|(p, _)| !obs.startup_made.iter().any(|m| p.starts_with(m)))
            .map(|(p, n)| (p.clone(), n.clone()))
            .collect()
    };
    // Borrowed when the handler made nothing at start-up (the trees hold file contents).
    let (before, after) = if obs.startup_made.is_empty() {
        (
            std::borrow::Cow::Borrowed(&*obs.outside_before),
            std::borrow::Cow::Borrowed(&*obs.outside_after),
        )
    } else {
        (
            std::borrow::Cow::Owned(own(&obs.outside_before)),
            std::borrow::Cow::Owned(own(&obs.outside_after)),
        )
    };
    for change in diff(&before, &after) {
        findings.push(Finding {
            verdict: Verdict::Unsafe,
            kind: "outside-changed".into(),
            detail: change,
        });
    }
    if case.race.is_some() && obs.race_swaps == Some(0) {
        findings.push(Finding {
            verdict: Verdict::Error,
            kind: "no-race".into(),
            detail: "the harness could not exchange the raced names: the race did not happen"
                .into(),
        });
    }
    for path in &obs.token_in_store {
        findings.push(Finding {
            verdict: Verdict::Unsafe,
            kind: "outside-copied".into(),
            detail: format!(
                "{path} holds the canary token: outside content was copied into the store"
            ),
        });
    }
    let unsearched = &obs.store_unsearched;
    if unsearched.total > 0 {
        let more = unsearched.total - unsearched.first.len();
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        findings.push(Finding {
            verdict: Verdict::Error,
            kind: STORE_UNSEARCHED.into(),
            detail: format!(
                "the store held more than memcert searches for the canary token (1 GiB of file data, 200000 entries, 512 folders deep): {}{more} not searched whole; outside content copied there would not show, so the case is not judged clean",
                unsearched.first.join(", ")
            ),
        });
    }
    findings
}

/// The finding kind of a store the token search could not search whole
/// ([`Observation::store_unsearched`]): ERROR, the case is not judged clean.
pub const STORE_UNSEARCHED: &str = "store-unsearched";

/// What the watch saw outside the store while the commands ran ([`Observation::touched`]),
/// then what the watches of a sandbox reset by undo saw changed between two windows and charged
/// to this case ([`Observation::late`], each with when it came, [`Late::words`]): one finding
/// per path and time, beside what the before/after comparison already shows: a path the
/// comparison names is not named again, and reads are named only when no other finding shows
/// an outside read (`read_shown`). A path the handler made at start-up is its own
/// (`startup/side-effects`). A decoy credential touched is `credential-read`, any other path
/// `outside-read` or `outside-changed`, all UNSAFE. A failed watch is ERROR (`watch-failed`).
fn watch_findings(obs: &Observation, read_shown: bool) -> Vec<Finding> {
    let mut findings = Vec::new();
    if let Some(why) = &obs.watch_failed {
        findings.push(Finding {
            verdict: Verdict::Error,
            kind: "watch-failed".into(),
            detail: why.clone(),
        });
    }
    // Made only when a path outside was changed, not only read.
    let changed = std::cell::OnceCell::new();
    let changed = || changed.get_or_init(|| changed_paths(&obs.outside_before, &obs.outside_after));
    let while_ran = "while the case ran";
    let touched = obs.touched.iter().filter(|t| t.decoy);
    let touched = touched.chain(obs.touched.iter().filter(|t| !t.decoy));
    let late = obs.late.iter().map(|(when, t)| (when.words(), t));
    for (when, t) in touched.map(|t| (while_ran.to_owned(), t)).chain(late) {
        let reads_only = t.ops.iter().all(|o| o.reads());
        if !t.decoy
            && (obs.startup_made.iter().any(|m| t.path.starts_with(m))
                || (reads_only && read_shown)
                || (!reads_only && changed().contains(&t.path)))
        {
            continue;
        }
        let (kind, what) = match (t.decoy, reads_only) {
            (true, _) => (
                "credential-read",
                format!(
                    "the decoy credential {} in the handler's HOME",
                    t.path.display()
                ),
            ),
            (false, true) => (
                "outside-read",
                format!("outside the root, {}", t.path.display()),
            ),
            (false, false) => (
                "outside-changed",
                format!("outside the root, {}", t.path.display()),
            ),
        };
        let ops: Vec<&str> = t.ops.iter().map(|o| o.words()).collect();
        findings.push(Finding {
            verdict: Verdict::Unsafe,
            kind: kind.into(),
            detail: format!("{when}, {what} was {}", ops.join(", ")),
        });
    }
    findings
}

/// The paths whose node or mode differs between two trees, or that only one of them holds.
fn changed_paths(before: &Tree, after: &Tree) -> std::collections::BTreeSet<std::path::PathBuf> {
    if before == after {
        return std::collections::BTreeSet::new();
    }
    let mut out: std::collections::BTreeSet<_> = before
        .iter()
        .filter(|(p, n)| after.get(*p) != Some(*n))
        .map(|(p, _)| p.clone())
        .collect();
    out.extend(after.keys().filter(|p| !before.contains_key(*p)).cloned());
    out
}

/// The case's checks that the paths inside the store do not satisfy.
fn check_findings(case: &Case, obs: &Observation) -> Vec<Finding> {
    let mut findings = Vec::new();
    // A run cut short by a fault still shows damage: UNSAFE checks always count, the others
    // only when every command was answered.
    let complete = obs.replies.len() == case.steps.len() && obs.replies.iter().all(Result::is_ok);
    for (check, node) in case.checks.iter().zip(&obs.checked) {
        let counts = complete || check.verdict == Verdict::Unsafe;
        if counts && !satisfies(node.as_ref(), &check.expect) {
            // The behaviour behind a wrong file, in words, when one fits (issue 11).
            let why = match (&check.expect, node.as_ref()) {
                (crate::suite::Expected::File(want), None | Some(Node::File(_))) => {
                    let found = match node.as_ref() {
                        Some(Node::File(b)) => Some(b.as_slice()),
                        _ => None,
                    };
                    let flags: Vec<Option<bool>> = obs
                        .replies
                        .iter()
                        .map(|r| r.as_ref().ok().map(|r| r.is_error))
                        .collect();
                    crate::suite::meaning::explain_check(case, &check.path, want, found, &flags)
                }
                _ => None,
            };
            let why = why.map(|w| format!("{w}; ")).unwrap_or_default();
            findings.push(Finding {
                verdict: check.verdict,
                kind: "check".into(),
                detail: format!(
                    "{}: {why}expected {}, found {}",
                    check.what,
                    describe_expected(&check.expect),
                    describe(node.as_ref())
                ),
            });
        }
    }
    findings
}

/// Changes between two trees, one sentence each, relative paths only.
pub fn diff(before: &Tree, after: &Tree) -> Vec<String> {
    let mut out = Vec::new();
    // The common case, nothing changed: one pass of byte comparisons, no lookups.
    if before == after {
        return out;
    }
    for (p, (n, mode)) in before {
        match after.get(p) {
            None => out.push(format!("outside the root, {} was removed", p.display())),
            Some((m, _)) if m != n => {
                out.push(format!("outside the root, {} was changed", p.display()))
            }
            Some((_, m)) if m != mode => out.push(format!(
                "outside the root, the mode of {} was changed from {mode:o} to {m:o}",
                p.display()
            )),
            _ => {}
        }
    }
    for p in after.keys() {
        if !before.contains_key(p) {
            out.push(format!("outside the root, {} was created", p.display()));
        }
    }
    out
}

fn describe(node: Option<&Node>) -> String {
    match node {
        None => "nothing".into(),
        Some(Node::Dir) => "a directory".into(),
        Some(Node::Symlink(_)) => "a symlink".into(),
        Some(Node::Other) => "a special file".into(),
        Some(Node::File(b)) => format!(
            "a file holding {}",
            Value::String(String::from_utf8_lossy(b).into_owned())
        ),
    }
}

fn describe_expected(e: &crate::suite::Expected) -> String {
    use crate::suite::Expected::*;
    match e {
        Absent => "nothing".into(),
        Dir => "a directory".into(),
        Symlink => "a symlink".into(),
        File(b) => format!(
            "a file holding {}",
            Value::String(String::from_utf8_lossy(b).into_owned())
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_canary_is_found_in_its_common_disguises_and_nowhere_else() {
        use base64::Engine as _;
        let token = "MEMCERT-CREDENTIAL-0123456789abcdef";
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let held = [
            format!("key: {token}"),
            format!("(cache-id {})", b64(&format!("ssh key\n{token}\nend"))),
            format!("{}", b64(&format!("xy{token}"))),
            format!("{}", b64(&format!("x{token}z"))),
            token.to_lowercase(),
            token.chars().rev().collect(),
            token.bytes().map(|b| format!("{b:02X}")).collect(),
            token.chars().flat_map(|c| [c, '\u{200b}']).collect(),
        ];
        for text in &held {
            assert!(super::holds_canary(text, token), "{text}");
        }
        let not_held = [
            String::new(),
            "MEMCERT-CREDENTIAL-0123456789abcdeX".to_owned(),
            b64("MEMCERT-CREDENTIAL-0123"),
        ];
        for text in &not_held {
            assert!(!super::holds_canary(text, token), "{text}");
        }
        assert!(!super::holds_canary("anything", ""));
    }

    use super::*;
    use crate::suite::catalog;
    use std::path::PathBuf;

    fn case(id: &str) -> Case {
        catalog::all().into_iter().find(|c| c.id == id).unwrap()
    }

    #[test]
    fn canary_token_in_a_reply_is_unsafe_whatever_the_grade() {
        let c = case("symlink/outside-file/view");
        let obs = Observation {
            replies: vec![Ok(ToolResult::error("MEMCERT-CANARY-00 leaked"))],
            token: "MEMCERT-CANARY-00".into(),
            ..Default::default()
        };
        let j = judge(&c, &obs, Profile::Docs, false);
        assert_eq!(j.verdict, Verdict::Unsafe);
        assert_eq!(j.findings[0].kind, "outside-read");
    }

    // See: issue 12, "a case whose handler times out on a planted FIFO, device or huge file is
    // FAIL (B17), not ERROR".
    #[test]
    fn a_timeout_on_a_planted_hazard_is_a_hang_elsewhere_an_error_and_a_big_read_is_the_cause() {
        let timeout = || Observation {
            replies: vec![Err("no answer within 10s".into())],
            checked: vec![Some(Node::File(b"notes\n".to_vec()))],
            timed_out: true,
            ..Default::default()
        };
        let j = judge(&case("hazard/fifo/view"), &timeout(), Profile::Docs, false);
        assert_eq!(j.verdict, Verdict::Fail);
        assert_eq!(j.findings[0].kind, HANG);
        assert_eq!(
            j.findings[0].detail,
            "step 1: hangs on a FIFO: no answer within 10s (bug:B17)"
        );
        let j = judge(&case("view/missing"), &timeout(), Profile::Docs, false);
        assert_eq!(j.verdict, Verdict::Error);
        // The read count taken before the handler was stopped: 64 MiB read, the read is the cause.
        let obs = Observation {
            reads: vec![Some(ReadCount {
                bytes: 64 << 20,
                by_process: true,
            })],
            ..timeout()
        };
        let j = judge(&case("hazard/huge-file/view"), &obs, Profile::Docs, false);
        assert_eq!(j.verdict, Verdict::Fail);
        assert_eq!(j.findings.len(), 1, "{:?}", j.findings);
        assert_eq!(
            j.findings[0].detail,
            "step 1: unbounded read of a huge file: the handler read 67108864 bytes for one call, more than 16777216 (bug:B17)"
        );
    }

    #[test]
    fn a_read_is_charged_to_the_hazard_the_step_names_not_the_first_planted() {
        use crate::suite::Fs;
        let mut c = case("hazard/huge-file/view");
        c.setup.insert(
            0,
            Fs::Fifo {
                path: "/memories/fifo".into(),
            },
        );
        let obs = Observation {
            replies: vec![Ok(ToolResult::error("too large"))],
            reads: vec![Some(ReadCount {
                bytes: 64 << 20,
                by_process: true,
            })],
            ..Default::default()
        };
        let j = judge(&c, &obs, Profile::Docs, false);
        assert_eq!(hazard_of(&c), Some("a FIFO"));
        assert_eq!(hazard_at(&c, 0), Some("a huge file"));
        assert_eq!(
            j.findings[0].detail,
            "step 1: unbounded read of a huge file: the handler read 67108864 bytes for one call, more than 16777216 (bug:B17)"
        );
        // A step that names none: the first planted.
        c.steps[0].input = serde_json::json!({"command": "view", "path": "/memories"});
        assert_eq!(hazard_at(&c, 0), Some("a FIFO"));
    }

    #[test]
    fn a_reply_longer_than_16_mib_in_process_is_an_unbounded_read_and_16_mib_is_not() {
        let c = case("hazard/huge-file/view");
        for (bytes, verdict) in [
            (UNBOUNDED_READ_BYTES, Verdict::Pass),
            (UNBOUNDED_READ_BYTES + 1, Verdict::Fail),
        ] {
            let obs = Observation {
                replies: vec![Ok(ToolResult::error("too large"))],
                checked: vec![Some(Node::File(b"notes\n".to_vec()))],
                reads: vec![Some(ReadCount {
                    bytes,
                    by_process: false,
                })],
                ..Default::default()
            };
            let j = judge(&c, &obs, Profile::Docs, false);
            assert_eq!(j.verdict, verdict, "{bytes}: {:?}", j.findings);
        }
    }

    #[test]
    fn outside_changes_are_unsafe_and_named_relatively() {
        let c = case("traversal/dotdot/create-escape");
        let mut after = Tree::new();
        after.insert(
            PathBuf::from("base/escape.md"),
            (Node::File(b"pwned\n".to_vec()), 0o600),
        );
        let obs = Observation {
            replies: vec![Ok(ToolResult::ok(
                "File created successfully at: /memories/../escape.md",
            ))],
            outside_after: after.into(),
            checked: vec![Some(Node::File(b"a\n".to_vec()))],
            ..Default::default()
        };
        let j = judge(&c, &obs, Profile::Docs, false);
        assert_eq!(j.verdict, Verdict::Unsafe);
        assert_eq!(
            j.findings[0].detail,
            "outside the root, base/escape.md was created"
        );
        assert_eq!(j.findings[1].verdict, Verdict::Fail);
    }

    #[test]
    fn changes_seen_between_two_windows_are_unsafe_with_when_they_came() {
        use crate::attack::watch::{Op, Touch};
        let c = case("view/file/empty");
        let touch = |path: &str, ops: Vec<Op>| Touch {
            path: PathBuf::from(path),
            ops,
            decoy: false,
        };
        let mut after = Tree::new();
        after.insert(
            PathBuf::from("base/walked.txt"),
            (Node::File(b"x\n".to_vec()), 0o600),
        );
        let obs = Observation {
            replies: vec![Ok(ToolResult::ok("anything"))],
            outside_after: after.into(),
            startup_made: vec![PathBuf::from("base/cache")],
            late: vec![
                (
                    Late::AfterLastAnswer,
                    touch("base/outside/secret.txt", vec![Op::Written]),
                ),
                // The "after" walk shows it: named once, by the comparison.
                (
                    Late::AfterLastAnswer,
                    touch("base/walked.txt", vec![Op::Created, Op::Written]),
                ),
                (
                    Late::BeforeCommands(Some("view/file/other".into())),
                    touch("base/canary.txt", vec![Op::Deleted]),
                ),
                (
                    Late::BeforeCommands(None),
                    touch("base/new.txt", vec![Op::Created]),
                ),
                // Made at start-up: the handler's own.
                (
                    Late::BeforeCommands(None),
                    touch("base/cache/log", vec![Op::Written]),
                ),
            ],
            ..Default::default()
        };
        let j = judge(&c, &obs, Profile::Docs, false);
        assert_eq!(j.verdict, Verdict::Unsafe);
        let details: Vec<(&str, &str)> = j
            .findings
            .iter()
            .filter(|f| f.kind != "reply")
            .map(|f| (f.kind.as_str(), f.detail.as_str()))
            .collect();
        assert_eq!(
            details,
            [
                ("outside-changed", "outside the root, base/walked.txt was created"),
                (
                    "outside-changed",
                    "after the case's last answer, outside the root, base/outside/secret.txt was written"
                ),
                (
                    "outside-changed",
                    "after the last answer of the case before it on this sandbox (view/file/other), before this case's commands, outside the root, base/canary.txt was deleted"
                ),
                (
                    "outside-changed",
                    "after the handler's reset, before this case's commands, outside the root, base/new.txt was created"
                ),
            ]
        );
    }

    #[test]
    fn host_path_in_a_reply_is_unsafe() {
        let c = case("symlink/loop/view");
        let obs = Observation {
            replies: vec![Ok(ToolResult::error(
                "RuntimeError(\"Symlink loop from '/tmp/memcert-x/base/memories/loop'\")",
            ))],
            host_paths: vec!["/tmp/memcert-x".into()],
            ..Default::default()
        };
        assert_eq!(
            judge(&c, &obs, Profile::PythonSdk, false).verdict,
            Verdict::Unsafe
        );
    }

    // See: issue 13 ("a handler that answers 60 MB per call took memcert to 449 MB"), bug:B17.
    #[test]
    fn an_answer_over_the_read_cap_is_fail_not_error() {
        let c = case("create/new-file");
        let obs = Observation {
            replies: vec![Err("unbounded reply: more than 1024 bytes".into())],
            checked: vec![None],
            reply_too_large: Some(1024),
            ..Default::default()
        };
        let j = judge(&c, &obs, Profile::Docs, false);
        assert_eq!(j.verdict, Verdict::Fail);
        assert_eq!(j.findings.len(), 1);
        assert_eq!(j.findings[0].kind, REPLY_TOO_LARGE);
        assert_eq!(
            j.findings[0].detail,
            "step 1: unbounded reply: more than 1024 bytes"
        );
    }

    #[test]
    fn what_the_watch_saw_is_unsafe_once_per_path_and_a_lost_watch_is_error() {
        use crate::attack::watch::{Op, Touch};
        let c = case("create/new-file");
        let mut after = Tree::new();
        after.insert(
            PathBuf::from("base/left.txt"),
            (Node::File(b"x".to_vec()), 0o600),
        );
        let obs = Observation {
            replies: vec![Ok(ToolResult::ok(
                "File created successfully at: /memories/notes.txt",
            ))],
            checked: vec![Some(Node::File(b"Hello\nWorld\n".to_vec()))],
            outside_after: after.into(),
            touched: vec![
                Touch {
                    path: PathBuf::from("base/.tmp"),
                    ops: vec![Op::Created, Op::Written, Op::RenamedAway],
                    decoy: false,
                },
                // Named by the before/after comparison already.
                Touch {
                    path: PathBuf::from("base/left.txt"),
                    ops: vec![Op::Created],
                    decoy: false,
                },
                Touch {
                    path: PathBuf::from("base/outside/hard-source.txt"),
                    ops: vec![Op::Read],
                    decoy: false,
                },
            ],
            ..Default::default()
        };
        let j = judge(&c, &obs, Profile::Docs, false);
        let found: Vec<(&str, &str)> = j
            .findings
            .iter()
            .map(|f| (f.kind.as_str(), f.detail.as_str()))
            .collect();
        assert_eq!(
            found,
            vec![
                ("outside-changed", "outside the root, base/left.txt was created"),
                ("outside-changed", "while the case ran, outside the root, base/.tmp was created, written, renamed away"),
                ("outside-read", "while the case ran, outside the root, base/outside/hard-source.txt was read"),
            ]
        );
        assert_eq!(j.verdict, Verdict::Unsafe);
        let lost = Observation {
            watch_failed: Some("the inotify queue overflowed".into()),
            ..obs
        };
        let j = judge(&c, &lost, Profile::Docs, false);
        let failed = j
            .findings
            .iter()
            .find(|f| f.kind == "watch-failed")
            .unwrap();
        assert_eq!(failed.verdict, Verdict::Error);
        assert_eq!(failed.detail, "the inotify queue overflowed");
        let alone = Observation {
            watch_failed: Some("the inotify queue overflowed".into()),
            replies: lost.replies.clone(),
            checked: lost.checked.clone(),
            ..Default::default()
        };
        assert_eq!(
            judge(&c, &alone, Profile::Docs, false).verdict,
            Verdict::Error
        );
    }

    #[test]
    fn no_reply_is_error_and_skips_checks() {
        let c = case("create/new-file");
        let obs = Observation {
            replies: vec![Err("no answer within 1 s".into())],
            checked: vec![None],
            ..Default::default()
        };
        let j = judge(&c, &obs, Profile::Docs, false);
        assert_eq!(j.verdict, Verdict::Error);
        assert_eq!(j.findings.len(), 1);
    }

    #[test]
    fn outside_content_copied_into_the_store_is_unsafe_even_behind_an_error() {
        let c = case("symlink/outside-file/str_replace");
        let obs = Observation {
            replies: vec![Ok(ToolResult::error("no"))],
            token_in_store: vec!["/memories/evil_link.txt".into()],
            checked: vec![Some(Node::Symlink("x".into()))],
            ..Default::default()
        };
        let j = judge(&c, &obs, Profile::Docs, false);
        assert_eq!(j.verdict, Verdict::Unsafe);
        assert_eq!(j.findings[0].kind, "outside-copied");
    }

    #[test]
    fn a_store_not_searched_whole_for_the_token_is_error_never_clean() {
        let c = case("view/file/empty");
        let mut obs = Observation {
            replies: vec![Ok(ToolResult::ok("anything"))],
            ..Default::default()
        };
        let clean = judge(&c, &obs, Profile::Docs, false).verdict;
        assert_ne!(clean, Verdict::Error);
        obs.store_unsearched = crate::attack::sandbox::Unsearched {
            first: vec!["/memories/big.bin".into(), "/memories/d/d".into()],
            total: 5,
        };
        let j = judge(&c, &obs, Profile::Docs, false);
        assert_eq!(j.verdict, Verdict::Error);
        let f: Vec<_> = j
            .findings
            .iter()
            .filter(|f| f.kind == STORE_UNSEARCHED)
            .collect();
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].detail,
            "the store held more than memcert searches for the canary token (1 GiB of file data, 200000 entries, 512 folders deep): /memories/big.bin, /memories/d/d and 3 more not searched whole; outside content copied there would not show, so the case is not judged clean"
        );
    }

    #[test]
    fn unsafe_checks_count_after_a_crash() {
        let c = case("symlink/inner-file/delete");
        let obs = Observation {
            replies: vec![Err("the handler exited".into())],
            checked: vec![None],
            ..Default::default()
        };
        let j = judge(&c, &obs, Profile::Docs, false);
        assert_eq!(j.verdict, Verdict::Unsafe);
        assert_eq!(j.findings.len(), 2);
    }

    #[test]
    fn the_token_in_any_content_block_is_found() {
        let c = case("symlink/outside-file/view");
        let content: crate::protocol::Content = serde_json::from_value(
            serde_json::json!([{"type": "document", "source": {"data": "MEMCERT-CANARY-00"}}]),
        )
        .unwrap();
        let obs = Observation {
            replies: vec![Ok(ToolResult {
                content,
                is_error: true,
            })],
            token: "MEMCERT-CANARY-00".into(),
            ..Default::default()
        };
        assert_eq!(
            judge(&c, &obs, Profile::Docs, false).verdict,
            Verdict::Unsafe
        );
    }

    #[test]
    fn a_mode_change_outside_is_unsafe() {
        let mut before = Tree::new();
        before.insert(
            PathBuf::from("base/outside/secret.txt"),
            (Node::File(b"s".to_vec()), 0o644),
        );
        let mut after = before.clone();
        after.insert(
            PathBuf::from("base/outside/secret.txt"),
            (Node::File(b"s".to_vec()), 0o666),
        );
        assert_eq!(
            diff(&before, &after),
            ["outside the root, the mode of base/outside/secret.txt was changed from 644 to 666"]
        );
    }

    #[test]
    fn an_echoed_host_path_is_fine_but_a_second_one_is_not() {
        let c = case("traversal/deep/view-run-canary");
        let sent = "/memories/../../tmp/memcert-x/canary.txt".to_owned();
        let obs = |reply: &str| Observation {
            replies: vec![Ok(ToolResult::error(reply))],
            host_paths: vec!["/tmp/memcert-x".into(), "memcert-x".into()],
            inputs: vec![vec![sent.clone()]],
            ..Default::default()
        };
        let echo = format!("Invalid path {sent}");
        assert_eq!(
            judge(&c, &obs(&echo), Profile::Docs, false).verdict,
            Verdict::Pass
        );
        let leak = format!("Invalid path {sent} (store at /tmp/memcert-x/base/memories)");
        assert_eq!(
            judge(&c, &obs(&leak), Profile::Docs, false).verdict,
            Verdict::Unsafe
        );
    }

    #[test]
    fn a_token_the_input_holds_may_be_echoed_but_one_it_does_not_is_a_read() {
        // Found by `cargo fuzz run differential_example -- -len_control=0` from an empty corpus
        // after about 5,600 runs: libFuzzer learnt the token from the oracle's comparisons and
        // spelt it in a `delete` path, whose refusal echoed it (a false UNSAFE outside-read, which
        // differential_reference would have crashed on too). The token is random per sandbox, so
        // the crash input does not replay.
        const TOKEN: &str = "MEMCERT-CANARY-730b41c9594155af";
        let c = case("traversal/deep/view-run-canary");
        let obs = |sent: &str, reply: &str| Observation {
            replies: vec![Ok(ToolResult::error(reply))],
            token: TOKEN.into(),
            inputs: vec![vec![sent.to_owned()]],
            ..Default::default()
        };
        let verdict = |sent: &str, reply: &str| judge(&c, &obs(sent, reply), Profile::Docs, false);
        let sent = format!("/memories/{}", TOKEN.to_ascii_lowercase());
        assert_eq!(
            verdict(&sent, &format!("The path {sent} does not exist")).verdict,
            Verdict::Pass
        );
        let read = verdict("/memories/x", &format!("{TOKEN} SECRET"));
        assert_eq!(read.verdict, Verdict::Unsafe);
        assert_eq!(read.findings[0].kind, "outside-read");
        // Written into the store by one step and read back by a later one: no read outside.
        let written = Observation {
            replies: vec![
                Ok(ToolResult::ok("File created successfully at: /memories/a")),
                Ok(ToolResult::ok(format!("     1\t{TOKEN}"))),
            ],
            token: TOKEN.into(),
            inputs: vec![
                vec!["/memories/a".to_owned(), TOKEN.to_owned()],
                vec!["/memories/a".to_owned()],
            ],
            ..Default::default()
        };
        let kinds: Vec<String> = judge(&c, &written, Profile::Docs, false)
            .findings
            .into_iter()
            .filter(|f| f.verdict == Verdict::Unsafe)
            .map(|f| f.kind)
            .collect();
        assert_eq!(kinds, Vec::<String>::new());
    }

    #[test]
    fn the_real_path_in_any_spelling_is_disclosed_but_the_alias_is_not() {
        let c = case("traversal/deep/view-run-canary");
        let sent = "/memories/../../tmp/memcert-alias-q1w2e3/canary.txt".to_owned();
        let obs = |reply: &str| Observation {
            replies: vec![Ok(ToolResult::error(reply))],
            host_paths: vec!["/tmp/memcert-x1y2z3".into(), "memcert-x1y2z3".into()],
            inputs: vec![vec![sent.clone()]],
            ..Default::default()
        };
        let verdict = |reply: &str| judge(&c, &obs(reply), Profile::Docs, false).verdict;
        // The input repeated through repr, `//` collapsed or percent-encoded: no disclosure.
        assert_eq!(
            verdict(&format!("ValueError('bad path: {sent}')")),
            Verdict::Pass
        );
        assert_eq!(
            verdict("No such path /memories/../../tmp/memcert-alias-q1w2e3//canary.txt"),
            Verdict::Pass
        );
        // The real run folder in any spelling: disclosed.
        for leak in [
            "at /tmp/memcert-x1y2z3/base/memories",
            "at //tmp//memcert-x1y2z3/base",
            "at %2Ftmp%2Fmemcert%2Dx1y2z3%2Fbase",
            "at %252Ftmp%252Fmemcert%252Dx1y2z3",
            "at '\\x2ftmp\\x2fmemcert\\x2dx1y2z3'",
            "at \\/tmp\\/memcert-x1y2z3",
        ] {
            assert_eq!(verdict(leak), Verdict::Unsafe, "{leak}");
        }
    }

    #[test]
    fn a_skipped_case_is_skipped_with_its_reason_and_nothing_else() {
        let c = case("view/missing");
        let obs = Observation {
            skipped: Some("runs as root".into()),
            // Ignored: a skipped case was not run.
            outside_after: Tree::from([(PathBuf::from("x"), (Node::Dir, 0o700))]).into(),
            ..Default::default()
        };
        let j = judge(&c, &obs, Profile::Docs, true);
        assert_eq!(j.verdict, Verdict::Skipped);
        assert_eq!(j.findings.len(), 1);
        assert_eq!(j.findings[0].kind, "skipped");
        assert_eq!(j.findings[0].detail, "runs as root");
        assert!(j.steps.is_empty());
    }

    #[test]
    fn a_race_that_never_swapped_is_an_error() {
        let c = case("race/swap-dir/create");
        let obs = Observation {
            replies: c
                .steps
                .iter()
                .map(|_| Ok(ToolResult::error("no")))
                .collect(),
            race_swaps: Some(0),
            ..Default::default()
        };
        let j = judge(&c, &obs, Profile::Docs, false);
        assert_eq!(j.verdict, Verdict::Error);
        assert_eq!(j.findings[0].kind, "no-race");
    }
}

/// The oracle's text functions as they were before they were made cheaper, and proofs that the
/// new ones give the same answers.
#[cfg(test)]
mod old_vs_new {
    use super::{Finding, Observation, ToolResult};
    use proptest::prelude::*;

    /// The implementations before `Canary`, `Searched` and `Needles`, word for word.
    mod old {
        use super::super::Tree;
        use super::{Finding, Observation, ToolResult};
        use crate::suite::verdict::Verdict;

        /// Whether `text` holds the canary `token` (ASCII) as it is or in a common disguise: any
        /// letter case, reversed, with hidden or format characters (zero-width spaces, soft hyphens)
        /// inserted, in hexadecimal, or in base64 (standard or URL-safe, at any of the three byte
        /// alignments it can have inside a longer encoded text). An empty token is never held.
        pub(super) fn holds_canary(text: &str, token: &str) -> bool {
            if token.is_empty() {
                return false;
            }
            if text.contains(token) {
                return true;
            }
            // Hidden characters and white space taken out; base64 is case-sensitive, the rest is
            // looked for in lower case.
            let kept: String = text
                .chars()
                .filter(|c| !crate::report::escape::hidden(*c) && !c.is_whitespace())
                .collect();
            let plain = kept.to_ascii_lowercase();
            let lower = token.to_ascii_lowercase();
            let reversed: String = lower.chars().rev().collect();
            let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
            if [&lower, &reversed, &hex]
                .iter()
                .any(|n| plain.contains(n.as_str()))
            {
                return true;
            }
            base64_needles(token.as_bytes())
                .iter()
                .any(|n| kept.contains(n.as_str()))
        }

        /// The base64 characters that encode `token` whatever bytes surround it: for each alignment
        /// (0, 1 or 2 bytes before it in its group of three), the groups made of its bytes alone.
        fn base64_needles(token: &[u8]) -> Vec<String> {
            use base64::engine::general_purpose::{STANDARD, URL_SAFE};
            use base64::Engine as _;
            let mut out = Vec::new();
            for pad in 0..3usize {
                let mut bytes = vec![0u8; pad];
                bytes.extend_from_slice(token);
                let end = (bytes.len() / 3) * 4;
                let start = if pad == 0 { 0 } else { 4 };
                for engine in [&STANDARD, &URL_SAFE] {
                    let enc = engine.encode(&bytes);
                    if end > start + 8 {
                        out.push(enc[start..end].to_owned());
                    }
                }
            }
            out
        }

        /// What reply `i` (`r`) discloses: the canary token (content or names read outside the root),
        /// the run folder's host path in any spelling ([`readings`]). Inputs name the run folder only
        /// through the sandbox's alias, so its real path in a reply is information the handler added
        /// (bug:B07); the alias and other input text are not disclosure.
        pub(super) fn disclosures(i: usize, r: &ToolResult, obs: &Observation) -> Vec<Finding> {
            let mut findings = Vec::new();
            // Every byte of the answer counts, not only text blocks.
            let text = match &r.content {
                crate::protocol::Content::Text(t) => t.clone(),
                other => serde_json::to_string(other).unwrap_or_default(),
            };
            if obs.credentials.iter().any(|t| holds_canary(&text, t)) {
                findings.push(Finding {
                verdict: Verdict::Unsafe,
                kind: "credential-read".into(),
                detail: format!("step {}: the reply holds a decoy credential's canary: the handler read credentials from its HOME or environment", i + 1),
            });
            }
            if holds_canary(&text, &obs.token) {
                findings.push(Finding {
                verdict: Verdict::Unsafe,
                kind: "outside-read".into(),
                detail: format!("step {}: the reply holds the canary token: content or names from outside the root were read", i + 1),
            });
            }
            // Take out what the reply echoes of an input that itself spells a host path (none does in
            // a certify run, whose inputs name the run folder through its alias), then look for host
            // paths in every spelling: as written, `//` collapsed, percent-decoded, unescaped.
            let mut rest = text.clone();
            for echoed in obs.inputs.get(i).into_iter().flatten() {
                if obs
                    .host_paths
                    .iter()
                    .any(|h| !h.is_empty() && echoed.contains(h.as_str()))
                {
                    rest = rest.replace(echoed.as_str(), "");
                }
            }
            let readings = readings(&rest);
            if let Some(h) = obs.host_paths.iter().find(|h| {
                let h = collapse_slashes(h);
                !h.is_empty() && readings.iter().any(|r| r.contains(h.as_str()))
            }) {
                findings.push(Finding {
                    verdict: Verdict::Unsafe,
                    kind: "host-path-disclosed".into(),
                    detail: format!("step {}: the reply discloses the host path {h}", i + 1),
                });
            }
            findings
        }

        /// The ways a reply can spell a path, each with runs of `/` collapsed: as written,
        /// percent-decoded once and twice, and with backslash escapes (`repr`, JSON: `\\`, `\/`,
        /// `\xHH`, `\uHHHH`) undone.
        pub(super) fn readings(text: &str) -> Vec<String> {
            let once = percent_decode(text);
            let twice = percent_decode(&once);
            [text.to_owned(), once, twice, unescape(text)]
                .iter()
                .map(|t| collapse_slashes(t))
                .collect()
        }

        /// `text` with every run of `/` made one `/`.
        pub(super) fn collapse_slashes(text: &str) -> String {
            let mut out = String::with_capacity(text.len());
            for c in text.chars() {
                if !(c == '/' && out.ends_with('/')) {
                    out.push(c);
                }
            }
            out
        }

        /// `text` with every `%HH` decoded (bytes that are not UTF-8 shown as U+FFFD).
        pub(super) fn percent_decode(text: &str) -> String {
            let b = text.as_bytes();
            let mut out = Vec::with_capacity(b.len());
            let mut i = 0;
            while i < b.len() {
                let hex = |j: usize| b.get(j).and_then(|c| (*c as char).to_digit(16));
                match (b[i], hex(i + 1), hex(i + 2)) {
                    (b'%', Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 3;
                    }
                    (c, _, _) => {
                        out.push(c);
                        i += 1;
                    }
                }
            }
            String::from_utf8_lossy(&out).into_owned()
        }

        /// `text` with backslash escapes undone: `\\` `\/` `\'` `\"`, `\xHH`, `\uHHHH`; others
        /// kept as written.
        pub(super) fn unescape(text: &str) -> String {
            let mut out = String::with_capacity(text.len());
            let mut chars = text.chars().peekable();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    out.push(c);
                    continue;
                }
                match chars.peek().copied() {
                    Some(e @ ('\\' | '/' | '\'' | '"')) => {
                        chars.next();
                        out.push(e);
                    }
                    Some(e @ ('x' | 'u')) => {
                        let n = if e == 'x' { 2 } else { 4 };
                        let hex: String = chars.clone().skip(1).take(n).collect();
                        match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                            Some(ch) if hex.len() == n => {
                                out.push(ch);
                                for _ in 0..=n {
                                    chars.next();
                                }
                            }
                            _ => out.push(c),
                        }
                    }
                    _ => out.push(c),
                }
            }
            out
        }

        /// Changes between two trees, one sentence each, relative paths only.
        pub(super) fn diff(before: &Tree, after: &Tree) -> Vec<String> {
            let mut out = Vec::new();
            for (p, (n, mode)) in before {
                match after.get(p) {
                    None => out.push(format!("outside the root, {} was removed", p.display())),
                    Some((m, _)) if m != n => {
                        out.push(format!("outside the root, {} was changed", p.display()))
                    }
                    Some((_, m)) if m != mode => out.push(format!(
                        "outside the root, the mode of {} was changed from {mode:o} to {m:o}",
                        p.display()
                    )),
                    _ => {}
                }
            }
            for p in after.keys() {
                if !before.contains_key(p) {
                    out.push(format!("outside the root, {} was created", p.display()));
                }
            }
            out
        }

        /// The paths whose node or mode differs between two trees, or that only one of them holds.
        pub(super) fn changed_paths(
            before: &Tree,
            after: &Tree,
        ) -> std::collections::BTreeSet<std::path::PathBuf> {
            let mut out: std::collections::BTreeSet<_> = before
                .iter()
                .filter(|(p, n)| after.get(*p) != Some(*n))
                .map(|(p, _)| p.clone())
                .collect();
            out.extend(after.keys().filter(|p| !before.contains_key(*p)).cloned());
            out
        }
    }

    const TOKEN: &str = "MEMCERT-CANARY-0a1B2c";

    /// A small tree outside the root: few names, so that two trees often share paths.
    fn tree() -> impl Strategy<Value = super::Tree> {
        use super::Node;
        let node = prop_oneof![
            Just(Node::File(b"a".to_vec())),
            Just(Node::File(b"b".to_vec())),
            Just(Node::Dir),
            Just(Node::Symlink("x".into())),
            Just(Node::Other),
        ];
        proptest::collection::btree_map(
            proptest::sample::select(vec!["base", "base/a", "base/a/b", "base/c", "base//a", "d"])
                .prop_map(std::path::PathBuf::from),
            (node, proptest::sample::select(vec![0o600u32, 0o644])),
            0..5,
        )
    }

    /// Pieces that exercise every branch: escapes whole and cut, slashes, hidden and white
    /// characters, non-ASCII text, the token in its disguises.
    fn piece() -> impl Strategy<Value = String> {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD.encode(format!("x{TOKEN}"));
        let url = base64::engine::general_purpose::URL_SAFE.encode(format!("?>{TOKEN}"));
        let hex: String = TOKEN.bytes().map(|b| format!("{b:02X}")).collect();
        let fixed: Vec<String> = [
            "%",
            "%2",
            "%2F",
            "%2f",
            "%25",
            "%252F",
            "%C3",
            "%A9",
            "%FF",
            "%zz",
            "a",
            "F",
            "0",
            "9",
            "e",
            "/",
            "//",
            "\\",
            "\\\\",
            "x",
            "u",
            "\\x2f",
            "\\x2",
            "\\u002F",
            "\\u00e9",
            "\\uD800",
            "\\x+1",
            "\\u+2f",
            "\\/",
            "\\'",
            "\\\"",
            "+",
            "-",
            "'",
            "\"",
            "é",
            "日",
            "\u{10FFFF}",
            "\u{200b}",
            "\u{202e}",
            "\u{ad}",
            "\u{feff}",
            "\u{85}",
            "\u{a0}",
            " ",
            "\n",
            "\t",
            "\r",
            "\u{7f}",
            "\u{0}",
            "/tmp/memcert-x1",
            "memcert-x1",
            "MEMCERT",
            "canary",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([
            TOKEN.to_owned(),
            TOKEN.to_ascii_lowercase(),
            TOKEN.chars().rev().collect(),
            hex.clone(),
            hex[..10].to_owned(),
            b64,
            url,
        ])
        .collect();
        prop_oneof![
            4 => proptest::sample::select(fixed),
            1 => any::<char>().prop_map(String::from),
            1 => "[%/\\\\xu0-9a-fA-F]{1,4}",
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(piece(), 0..24).prop_map(|v| v.concat())
    }

    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => Just(TOKEN.to_owned()),
            1 => Just(String::new()),
            2 => text(),
        ]
    }

    /// Each distinct string of `v`, sorted.
    fn set(v: impl IntoIterator<Item = String>) -> Vec<String> {
        let mut v: Vec<String> = v.into_iter().collect();
        v.sort();
        v.dedup();
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        #[test]
        fn the_spellings_of_a_reply_are_the_old_ones(t in text()) {
            prop_assert_eq!(super::collapse_slashes(&t), old::collapse_slashes(&t));
            prop_assert_eq!(super::percent_decode(&t), old::percent_decode(&t));
            prop_assert_eq!(super::unescape(&t), old::unescape(&t));
            let new: Vec<String> = super::readings(&t).into_iter().map(|r| r.into_owned()).collect();
            prop_assert_eq!(set(new.clone()), set(old::readings(&t)));
            prop_assert_eq!(new.len(), set(new.clone()).len());
        }

        #[test]
        fn changes_outside_are_the_old_ones(before in tree(), after in tree(), same in any::<bool>()) {
            let after = if same { before.clone() } else { after };
            prop_assert_eq!(super::diff(&before, &after), old::diff(&before, &after));
            prop_assert_eq!(
                super::changed_paths(&before, &after),
                old::changed_paths(&before, &after)
            );
        }

        #[test]
        fn a_canary_is_held_exactly_where_it_was(t in text(), tok in token()) {
            prop_assert_eq!(super::holds_canary(&t, &tok), old::holds_canary(&t, &tok));
            prop_assert_eq!(super::holds_canary(&t, TOKEN), old::holds_canary(&t, TOKEN));
        }

        #[test]
        fn disclosures_are_the_old_ones(
            replies in proptest::collection::vec(text(), 1..4),
            tok in token(),
            credentials in proptest::collection::vec(token(), 0..3),
            hosts in proptest::collection::vec(
                prop_oneof![
                    Just("/tmp/memcert-x1".to_owned()),
                    Just("memcert-x1".to_owned()),
                    Just("//".to_owned()),
                    Just(String::new()),
                    text(),
                ],
                0..3,
            ),
            inputs in proptest::collection::vec(proptest::collection::vec(text(), 0..3), 0..4),
            json in any::<bool>(),
        ) {
            let obs = Observation {
                token: tok,
                credentials,
                host_paths: hosts,
                inputs,
                ..Default::default()
            };
            let needles = super::Needles::new(&obs);
            for (i, t) in replies.iter().enumerate() {
                let r = if json {
                    ToolResult {
                        content: serde_json::from_value(
                            serde_json::json!([{"type": "document", "source": {"data": t}}]),
                        )
                        .unwrap(),
                        is_error: false,
                    }
                } else {
                    ToolResult::ok(t)
                };
                let new: Vec<Finding> = super::disclosures(i, &r, &obs, &needles);
                prop_assert_eq!(new, old::disclosures(i, &r, &obs));
            }
        }
    }

    #[test]
    fn tricky_spellings_have_exact_readings() {
        assert_eq!(super::unescape("\\x+1"), "\u{1}");
        assert_eq!(super::unescape("a\\\\x41"), "a\\x41");
        assert_eq!(super::unescape("\\u00e9\\x2F\\q\\"), "é/\\q\\");
        assert_eq!(super::unescape("\\uD800\\x4"), "\\uD800\\x4");
        assert_eq!(super::unescape("\\u日本語abc"), "\\u日本語abc");
        assert_eq!(super::collapse_slashes("a///b//c/"), "a/b/c/");
        assert_eq!(super::collapse_slashes("日//本"), "日/本");
        assert_eq!(super::percent_decode("%252F%zz%e9%4"), "%2F%zz\u{FFFD}%4");
        assert_eq!(super::percent_decode("%C3%A9"), "é");
        assert_eq!(
            super::readings("%252F%252F\\/x"),
            ["%252F%252F\\/x", "/\\/x", "%2F%2F\\/x", "%252F%252F/x"]
        );
        // `%zz` decodes to itself: one reading.
        assert_eq!(super::readings("a%zz//b"), ["a%zz/b"]);
        assert_eq!(super::readings(""), [""]);
    }

    #[test]
    fn tricky_canaries_are_held_or_not_exactly() {
        let t = "MEMCERT-CANARY-0a1B2c";
        let hex: String = t.bytes().map(|b| format!("{b:02X}")).collect();
        let held = [
            "memcert-canary-0a1b2c".to_owned(),
            format!("MEM\u{202e}CERT\t-CANARY\u{200b}-0a1B2c"),
            format!("x {}\n{} y", &hex[..20], &hex[20..]),
            "c2B1a0-YRANAC-TRECMEM".to_owned(),
            format!("é{t}日"),
        ];
        for text in &held {
            assert!(super::holds_canary(text, t), "{text}");
            assert!(old::holds_canary(text, t), "{text}");
        }
        let not_held = [
            "MEMCERT-CANARY-0a1B2".to_owned(),
            // A non-breaking hyphen is neither hidden nor white space.
            "MEMCERT\u{2011}CANARY-0a1B2c".to_owned(),
            hex.to_lowercase()[..40].to_owned(),
        ];
        for text in &not_held {
            assert!(!super::holds_canary(text, t), "{text}");
            assert!(!old::holds_canary(text, t), "{text}");
        }
    }
}
