//! Causes: the non-PASS findings of a run grouped so that one flaw reads as one line, not as
//! hundreds of verdicts (issue 11, "causes first").
//!
//! A case takes part through the findings that set its verdict (its worst ones): a FAIL reply
//! grade in a case the oracle already found UNSAFE is a symptom of the same flaw, shown with the
//! case, not a cause of its own; so is a reply grade beside a disk finding (`check`, an escape)
//! of the same verdict. Two such findings share a [`Cause`] when they have the same
//! verdict, the same effect ([`effect`]: the finding kind, except that reading, changing and
//! copying outside the root are one effect, `escape`), the same rule ([`rule`]: the first bug
//! class the case cites, else its first citation; for a wrong reply or disk state, `reply` and
//! `check`, the command instead, so one command's flaw met under several requirements is one
//! cause; none for a host path disclosed, which is how the handler words its errors) and, except for escapes, the same shape of detail ([`shape`]: paths, numbers, quoted strings, canary tokens and sandbox folders
//! replaced by placeholders). A file created outside the root that no input named is a
//! `side-effect` ([`unaimed_creation`]), grouped by its path alone. Causes come worst verdict first, then most cases, then by rule
//! and shape, so the order is stable. Every report leads with them.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::attack::oracle;
use crate::certify::{finding_step, CaseRecord};
use crate::protocol::ToolResult;
use crate::suite::verdict::Verdict;

use crate::suite::catalog::STORE_SURVIVES;

/// One cause: the findings of one verdict, kind, rule and shape, with the cases that show it.
#[derive(Clone, Debug, Serialize)]
pub struct Cause {
    /// The verdict of the findings (not of their cases, which may be worse).
    pub verdict: Verdict,
    /// The effect: the finding kind (`host-path-disclosed`, `reply`, `check`, ...), or
    /// `escape` for reads, changes and copies outside the root ([`effect`]).
    pub kind: String,
    /// The finding kinds behind the cause, sorted (`["outside-changed", "outside-read"]` for
    /// an escape; the kind itself otherwise).
    pub kinds: Vec<String>,
    /// The rule ([`rule`]) of the first case: the first bug class it cites (`bug:B10`), else
    /// its first citation (`spec:2.1/D3`); empty when it cites nothing.
    pub spec: String,
    /// Every case's rule, distinct, in run order (`spec` first). One rule for an escape or a
    /// disclosure; a wrong reply or disk state of one command may span several requirements.
    pub rules: Vec<String>,
    /// The finding's detail with the run's particulars replaced by placeholders ([`shape`]).
    pub shape: String,
    /// The one-line requirement of the example case.
    pub requirement: String,
    /// What to change in the handler, by finding kind ([`hint`]).
    pub hint: String,
    /// How many cases show the cause (`ids.len()`).
    pub count: usize,
    /// Of those, how many the expected-failures list excuses.
    pub excused: usize,
    /// The ids of the cases, in run order.
    pub ids: Vec<String>,
    /// The minimal example: the case of the cause with the fewest steps (then one whose disk
    /// shows a change, then first in run order).
    pub example: Example,
}

/// The minimal example of a cause: one case's finding, commands, replies and disk changes.
#[derive(Clone, Debug, Serialize)]
pub struct Example {
    /// The case id.
    pub case: String,
    /// The finding itself, as the case reported it.
    pub detail: String,
    /// Every command of the case with its answer.
    pub steps: Vec<ExampleStep>,
    /// What the oracle saw change on disk (findings of kind `outside-changed`,
    /// `outside-copied` and `check`), one sentence each.
    pub disk: Vec<String>,
}

/// One command of an example and its answer.
#[derive(Clone, Debug, Serialize)]
pub struct ExampleStep {
    /// The input sent.
    pub input: Value,
    /// The answer, if one came.
    pub reply: Option<ToolResult>,
    /// Why no answer came.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The one-line fix hint for a cause's effect (refined by verdict where one kind covers both a
/// leak and a slip, and by shape for a destroyed store); a generic line for a kind this table
/// lacks.
pub fn hint(kind: &str, verdict: Verdict, shape: &str) -> &'static str {
    match (kind, verdict) {
        ("escape", _) => {
            "resolve every path under the store root, refusing links, before any read, write or remove"
        }
        ("side-effect", _) => {
            "write only inside the store: logs, locks and temporary files too (or outside the memory base)"
        }
        ("outside-read", _) => {
            "resolve the path and check it stays under the store root before opening; refuse links"
        }
        ("outside-changed", _) => {
            "resolve the path under the store root before any write, create or remove; refuse links"
        }
        ("outside-copied", _) => {
            "never read content in through a link or a hard link to the outside"
        }
        ("host-path-disclosed", _) => "errors must name the virtual path, never the host path",
        ("credential-read", _) => {
            "a memory handler never reads keys, credentials or the environment; remove the code that does"
        }
        ("check", Verdict::Unsafe) if shape.starts_with(STORE_SURVIVES) => {
            "refuse every spelling of the root: compare the resolved target with the resolved root, never the string"
        }
        ("check", Verdict::Unsafe) => {
            "act on a link itself, never on its target (lstat, unlink, rename the link)"
        }
        ("check", _) => {
            "leave the disk as the rule asks (the example's disk line says what differs)"
        }
        ("reply", Verdict::Info | Verdict::Skipped | Verdict::Pass) => {
            "worth knowing; nothing to fix"
        }
        ("reply", Verdict::Fail | Verdict::Unsafe | Verdict::Error) => {
            "give the outcome the rule asks: is_error, and the change made or refused"
        }
        ("reply", Verdict::NonStrict) => {
            "allowed; the profile's exact wording or choice makes it PASS"
        }
        ("reply-too-large", _) => {
            "bound what one answer holds: refuse or page a file over a size limit (view_range), never read without a bound"
        }
        ("unbounded-read", _) if shape == SPECIAL_FILE_READ || shape.contains("hangs on ") => {
            "never open a FIFO, socket or device for reading or writing: lstat first, open with O_NONBLOCK and fstat again"
        }
        ("unbounded-read", _) => {
            "bound what one call reads: fstat first, refuse anything but a regular file and any file over a size limit, read at most that limit"
        }
        ("hang", _) => {
            "never open a FIFO, socket or device for reading or writing: lstat first, open with O_NONBLOCK and fstat again"
        }
        ("no-reply", _) => {
            "answer every command within --timeout; turn every exception into an error reply"
        }
        ("no-race", _) => {
            "the race could not be staged here: rerun, or exclude race/* on this host"
        }
        ("skipped", _) => "not run on this host: the finding says why",
        ("deadline", _) => {
            "the run's --deadline passed first: give it more time, or run fewer cases (--cases, --level)"
        }
        _ => "see the rule and the example",
    }
}

/// The effect a finding kind groups under: `escape` for the kinds that mean the handler reached
/// outside the root ([`oracle::is_escape`]; which of them shows follows from the command the
/// case sent, not from the flaw), the kind itself otherwise.
///
/// A `hang` groups as `unbounded-read`: a call that never answered on a planted FIFO or device
/// is a read without a bound that did not end, one flaw with the read that did (`bug:B17`).
pub fn effect(kind: &str) -> &str {
    if oracle::is_escape(kind) {
        "escape"
    } else if kind == oracle::HANG {
        oracle::UNBOUNDED_READ
    } else {
        kind
    }
}

/// The shape of the cause of every hang or unbounded read on a planted FIFO, socket or device
/// (`bug:B17`): the handler lacks a file-type check, whichever command or case met it.
pub const SPECIAL_FILE_READ: &str =
    "reads a FIFO, socket or device instead of refusing it: the call hangs or its read never ends (bug:B17)";
/// The shape of the cause of every hang or unbounded read on a planted huge file (`bug:B17`):
/// the handler reads a file whole with no size limit.
pub const HUGE_FILE_READ: &str = "reads a huge file whole, with no size limit (bug:B17)";

/// The citations of the file-type and size rows: a case that cites one of them is about what a
/// command may read (`bug:B17`; a FIFO, socket or device refused, spec:2.1/C27, spec:2.3/C28).
const READ_ROWS: [&str; 3] = ["bug:B17", "spec:2.1/C27", "spec:2.3/C28"];

/// The slot and shape of an `unbounded-read` or `hang` finding of a case that cites a
/// [`READ_ROWS`] row, by the hazard its detail names at its start (`attack::oracle::hazard_at`:
/// `step 1: hangs on a FIFO: ...`, `step 1: unbounded read of a character device: ...`); `None`
/// otherwise (a root that is a FIFO, `bug:B10`, keeps its own rule and cause).
fn read_slot(source: &[String], detail: &str) -> Option<(String, String)> {
    if !source.iter().any(|s| READ_ROWS.contains(&s.as_str())) {
        return None;
    }
    match read_hazard(detail)? {
        "special-file" => Some(("special-file".into(), SPECIAL_FILE_READ.into())),
        _ => Some(("huge-file".into(), HUGE_FILE_READ.into())),
    }
}

/// What an `unbounded-read` or `hang` finding's detail says was read
/// (`attack::oracle::hazard_at` names it at the start: `step 1: hangs on a FIFO: ...`, `step 1:
/// unbounded read of a character device: ...`): `"special-file"` for a FIFO, socket or
/// character device (one flaw, no file-type check), `"huge-file"` for the planted huge file
/// (another, no size limit), `None` when it names neither (`bug:B17`).
pub fn read_hazard(detail: &str) -> Option<&'static str> {
    // The detail without its `step N: `: memcert's words up to the first colon.
    let head = detail.split_once(": ").map_or(detail, |(_, rest)| rest);
    let names = |h: &str| {
        head.starts_with(&format!("hangs on {h}:"))
            || head.starts_with(&format!("unbounded read of {h}:"))
    };
    if ["a FIFO", "a socket", "a character device"]
        .into_iter()
        .any(names)
    {
        Some("special-file")
    } else if names("a huge file") {
        Some("huge-file")
    } else {
        None
    }
}

/// The grouping slot (what besides verdict and effect keys a cause) and the shape of finding
/// `f` of case `c`, whose effect is `effect` and whose rule is `rule`; `unaimed` is the path of
/// a file created outside that no input named ([`unaimed_creation`]).
fn slot_and_shape(
    effect: &str,
    unaimed: Option<String>,
    c: &CaseRecord,
    f: &crate::attack::oracle::Finding,
    rule: &str,
) -> (String, String) {
    match (effect, unaimed) {
        // A file made and undone while the case ran: its name is often random (a temp
        // file), so the shape, not the name, makes the cause.
        (_, Some(_)) if f.detail.starts_with("while the case ran, ") => {
            (String::new(), shape(&f.detail))
        }
        (_, Some(path)) => (
            String::new(),
            format!("outside the root, {path} was created"),
        ),
        ("escape", None) => (rule.to_owned(), String::new()),
        // How a handler words its errors is one flaw whatever the case tested.
        ("host-path-disclosed", None) => (String::new(), shape(&f.detail)),
        // One stop of the whole run is one cause, whatever each case's rule.
        ("deadline", None) => (String::new(), shape(&f.detail)),
        ("reply" | "check", None) => reply_or_check_key(c, f, rule),
        // What was read, not which command or requirement met it: one flaw, one cause.
        ("unbounded-read", None) => {
            read_slot(&c.source, &f.detail).unwrap_or_else(|| (rule.to_owned(), shape(&f.detail)))
        }
        _ => (rule.to_owned(), shape(&f.detail)),
    }
}

/// The effect of a file created outside the root that no input of its case aimed at.
pub const SIDE_EFFECT: &str = "side-effect";

/// For a file created outside the root whose name is in none of the case's inputs (nothing
/// aimed at it: a log, a lock or a temp file the handler writes beside the store), its path
/// relative to the run folder. Such a creation is grouped by that path whatever the case's
/// rule: a log written on every write is one cause, not one per requirement. A change to or
/// removal of an existing file (a canary reached through a link) is never a side effect.
pub fn unaimed_creation(c: &CaseRecord, kind: &str, detail: &str) -> Option<String> {
    if kind != "outside-changed" {
        return None;
    }
    // Also the watch's record of a file made and undone while the case ran (`attack::watch`:
    // "while the case ran, outside the root, base/.tmp-1 was created, written, renamed away").
    let path = match detail.strip_prefix("while the case ran, outside the root, ") {
        Some(rest) => rest
            .split_once(" was ")
            .filter(|(_, ops)| ops.starts_with("created"))
            .map(|(p, _)| p)?,
        None => detail
            .strip_prefix("outside the root, ")?
            .strip_suffix(" was created")?,
    };
    let name = path.rsplit('/').next().filter(|n| !n.is_empty())?;
    let aimed = c.steps.iter().any(|s| {
        crate::protocol::strings_in(&s.input)
            .iter()
            .any(|t| t.contains(name))
    });
    (!aimed).then(|| path.to_owned())
}

/// The grouping slot and shape of a `reply` or `check` finding. A finding that names a
/// behaviour (a check's explanation, `... keeps its content: replaced all 2 occurrences; ...`;
/// a reply note such as "reads as an error but is_error is false") groups by that behaviour
/// alone, whatever the command or the requirement: one flaw met by every command is one cause.
/// A plain mismatch ("reported success (...); the case expects an error") is about its case's
/// requirement: it groups by rule. A check without an explanation groups by the command.
fn reply_or_check_key(
    c: &CaseRecord,
    f: &crate::attack::oracle::Finding,
    rule: &str,
) -> (String, String) {
    let shaped = shape(&f.detail);
    if f.kind == "check" {
        // `{what}: {why}; expected {..}, found {..}` or `{what}: expected {..}, found {..}`.
        let why = f
            .detail
            .split_once(": ")
            .map(|(_, rest)| rest)
            .filter(|rest| !rest.starts_with("expected "))
            .and_then(|rest| rest.rsplit_once("; expected ").map(|(why, _)| why));
        return match why {
            Some(why) => ("behaviour".into(), shape(why)),
            None => (format!("command:{}", command_of(c)), shaped),
        };
    }
    if shaped.contains("the case expects") {
        (format!("rule:{rule}"), shaped)
    } else {
        // The note without its `step N: ` ([`finding_step`]): one behaviour in any step.
        let note = match finding_step(f) {
            Some(_) => f.detail.split_once(": ").map_or("", |(_, note)| note),
            None => &f.detail,
        };
        ("behaviour".into(), shape(note))
    }
}

/// The command a check finding is about: the last step that is not a `view` (the change the
/// check looks at), else the last step; empty when the case sent nothing.
fn command_of(c: &CaseRecord) -> String {
    let name = |i: usize| -> Option<String> {
        c.steps
            .get(i)?
            .input
            .get("command")?
            .as_str()
            .map(str::to_owned)
    };
    (0..c.steps.len())
        .rev()
        .find_map(|i| name(i).filter(|n| n != "view"))
        .or_else(|| c.steps.len().checked_sub(1).and_then(name))
        .unwrap_or_default()
}

/// The rule a case's findings group under: its first `bug:` citation (a class of flaw, the
/// mechanism), else its first citation (a requirement), else empty. One mechanism met through
/// several requirements (a root guard on the raw string, bug:B07, under `root/delete/*` and
/// `payload/root-alias/*`) is then one cause.
pub fn rule(source: &[String]) -> String {
    source
        .iter()
        .find(|s| s.starts_with("bug:"))
        .or_else(|| source.first())
        .cloned()
        .unwrap_or_default()
}

/// Group the findings that set each non-PASS case's verdict into causes, worst verdict first,
/// then most cases. Shapes: an escape's is the sentence [`escape_shape`] makes of its kinds;
/// every other cause's is its findings' common [`shape`]. The same as adding every case to a
/// [`Fold`] in order.
pub fn causes(cases: &[CaseRecord]) -> Vec<Cause> {
    let mut fold = Fold::default();
    for c in cases {
        fold.add(c);
    }
    fold.finish()
}

/// A cause's key: (verdict, effect, slot, shape).
type Key = (Verdict, String, String, String);

/// What a [`Fold`] keeps of one cause while the cases come.
#[derive(Debug, Default)]
struct Group {
    /// The ids of its cases, in run order.
    ids: Vec<String>,
    /// The run index of the last case added (a case counts once per cause).
    last: Option<usize>,
    /// Of its cases, those the expected-failures list excuses.
    excused: usize,
    /// The finding kinds seen, in the order met.
    kinds: Vec<String>,
    /// The rules seen, in the order met.
    rules: Vec<String>,
    /// The example so far: its rank (steps, no disk change, run index), the example and its
    /// case's requirement.
    best: Option<((usize, bool, usize), Example, String)>,
}

/// The causes of a run built one case at a time, in run order ([`Fold::add`]), then sorted
/// ([`Fold::finish`]): what [`causes`] gives for the same cases. It keeps per cause only its
/// case ids, counts and one example, never the cases themselves, so a report can be made from
/// records read one at a time.
#[derive(Debug, Default)]
pub struct Fold {
    groups: BTreeMap<Key, Group>,
    /// Cases added so far.
    added: usize,
}

impl Fold {
    /// Add the next case of the run: the findings that set its verdict join their causes.
    pub fn add(&mut self, c: &CaseRecord) {
        let i = self.added;
        self.added += 1;
        let rule = rule(&c.source);
        let worst = c.findings.iter().map(|f| f.verdict).max();
        // A case counts once per effect: its first finding of an effect gives the shape (two
        // checks of one wiped store are one event).
        let mut seen: Vec<&str> = Vec::new();
        // A reply grade beside a disk finding of the same verdict is its symptom (the reply
        // reports what the handler wrongly did): the disk finding is the cause.
        let on_disk = c
            .findings
            .iter()
            .any(|f| Some(f.verdict) == worst && (f.kind == "check" || oracle::is_escape(&f.kind)));
        // A race's "leaked in k of n rounds" sums up the escape the same case shows: one flaw,
        // one cause (the escape's), the rounds stay in the case's findings.
        let escaped = c
            .findings
            .iter()
            .any(|f| Some(f.verdict) == worst && oracle::is_escape(&f.kind));
        // Files created outside that no input named are a side effect, unless the case also
        // escaped where an input aimed (then they are that escape's work: a store reached
        // through a linked root holds what the handler makes there); of a created tree only
        // its top counts.
        let unaimed_of: Vec<Option<String>> = c
            .findings
            .iter()
            .map(|f| unaimed_creation(c, &f.kind, &f.detail))
            .collect();
        let aimed_escape = c
            .findings
            .iter()
            .zip(&unaimed_of)
            .any(|(f, u)| oracle::is_escape(&f.kind) && u.is_none());
        let tops: Vec<&str> = unaimed_of.iter().flatten().map(String::as_str).collect();
        for (f, unaimed) in c.findings.iter().zip(&unaimed_of) {
            if f.verdict == Verdict::Pass
                || Some(f.verdict) != worst
                || (on_disk && f.kind == "reply")
                || (escaped && f.kind == "race-rounds")
            {
                continue;
            }
            let unaimed = unaimed.clone().filter(|_| !aimed_escape);
            if let Some(p) = &unaimed {
                if tops.iter().any(|t| p.starts_with(&format!("{t}/"))) {
                    continue;
                }
            }
            let effect = match unaimed {
                Some(_) => SIDE_EFFECT,
                None => effect(&f.kind),
            };
            if effect != "escape" && effect != SIDE_EFFECT && seen.contains(&effect) {
                continue;
            }
            seen.push(effect);
            let (slot, shape) = slot_and_shape(effect, unaimed, c, f, &rule);
            // A read cause is the class of flaw, whichever row each case cites: its rule (and
            // so its SARIF rule id and fingerprint) does not depend on which cases it holds.
            let rule = if slot == "special-file" || slot == "huge-file" {
                "bug:B17".to_owned()
            } else {
                rule.clone()
            };
            let key = (f.verdict, effect.to_owned(), slot, shape);
            let g = self.groups.entry(key).or_default();
            if !g.kinds.contains(&f.kind) {
                g.kinds.push(f.kind.clone());
            }
            if effect != SIDE_EFFECT && !rule.is_empty() && !g.rules.contains(&rule) {
                g.rules.push(rule.clone());
            }
            if g.last == Some(i) {
                continue;
            }
            g.last = Some(i);
            g.ids.push(c.id.clone());
            g.excused += usize::from(c.expected_failure.is_some());
            // The example: the fewest steps, then one whose disk shows the damage, then run
            // order.
            let no_disk = !c.findings.iter().any(|f| shows_disk(&f.kind));
            let rank = (c.steps.len(), no_disk, i);
            if g.best.as_ref().is_none_or(|(best, _, _)| rank < *best) {
                g.best = Some((rank, example(c, f.detail.clone()), c.requirement.clone()));
            }
        }
    }

    /// The causes of the cases added, worst verdict first, then most cases, then by rule, kind
    /// and shape.
    pub fn finish(self) -> Vec<Cause> {
        let mut out: Vec<Cause> = self
            .groups
            .into_iter()
            .filter_map(|((verdict, kind, _slot, shape), g)| {
                let (_, example, requirement) = g.best?;
                let mut kinds = g.kinds;
                kinds.sort();
                let spec = g.rules.first().cloned().unwrap_or_default();
                let shape = if kind == "escape" {
                    escape_shape(&kinds)
                } else {
                    shape
                };
                Some(Cause {
                    verdict,
                    hint: hint(&kind, verdict, &shape).to_owned(),
                    kind,
                    kinds,
                    spec,
                    rules: g.rules,
                    shape,
                    requirement,
                    count: g.ids.len(),
                    excused: g.excused,
                    ids: g.ids,
                    example,
                })
            })
            .collect();
        out.sort_by(|a, b| {
            (b.verdict, b.count)
                .cmp(&(a.verdict, a.count))
                .then_with(|| (&a.spec, &a.kind, &a.shape).cmp(&(&b.spec, &b.kind, &b.shape)))
        });
        out
    }
}

/// The one sentence of an escape cause, from its sorted finding kinds:
/// `reached outside the root (changed, copied into the store, read)` and the like.
pub fn escape_shape(kinds: &[String]) -> String {
    let what: Vec<&str> = kinds
        .iter()
        .filter_map(|k| match k.as_str() {
            "outside-read" => Some("read"),
            "outside-changed" => Some("changed"),
            "outside-copied" => Some("copied into the store"),
            _ => None,
        })
        .collect();
    let list = what.join(", ");
    format!("reached outside the root ({list})")
}

fn example(c: &CaseRecord, detail: String) -> Example {
    Example {
        case: c.id.clone(),
        detail,
        steps: c
            .steps
            .iter()
            .map(|s| ExampleStep {
                input: s.input.clone(),
                reply: s.reply.clone(),
                error: s.error.clone(),
            })
            .collect(),
        disk: c
            .findings
            .iter()
            .filter(|f| shows_disk(&f.kind))
            .map(|f| f.detail.clone())
            .collect(),
    }
}

/// Whether a finding of `kind` tells what changed on disk (an example's [`Example::disk`]).
fn shows_disk(kind: &str) -> bool {
    matches!(kind, "outside-changed" | "outside-copied" | "check")
}

/// Causes per verdict (every verdict with at least one cause), the way reports count them.
pub fn counts(causes: &[Cause]) -> BTreeMap<Verdict, usize> {
    let mut by = BTreeMap::new();
    for c in causes {
        *by.entry(c.verdict).or_default() += 1;
    }
    by
}

/// `"3 UNSAFE, 2 FAIL"`: the counts of [`counts`], worst verdict first; `"none"` for none.
pub fn counts_line(causes: &[Cause]) -> String {
    let parts: Vec<String> = counts(causes)
        .into_iter()
        .rev()
        .map(|(v, n)| format!("{n} {v}"))
        .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// The shape of a finding's detail: the run's particulars replaced by placeholders so that the
/// same flaw seen in different cases reads the same. In order: a canary token
/// (`MEMCERT-CANARY-<hex>`) becomes `<token>`; a double-quoted string (JSON escapes honoured;
/// one left open runs to the end) `"…"`; a word holding a `/` `<path>` and a word starting
/// with `memcert-` (a sandbox folder) `<sandbox>` (surrounding `(`, `)`, `,`, `.`, `;`, `:`,
/// `'` kept); every run of digits (with `,` between digits) `N`. An outside change's verb is
/// left out ([`one_change`]). Single quotes are left alone:
/// they are apostrophes in memcert's own words.
pub fn shape(detail: &str) -> String {
    let detail = one_change(&canary_free(detail));
    let mut out = String::with_capacity(detail.len());
    let mut rest = detail.as_str();
    while let Some(q) = rest.find('"') {
        words(&rest[..q], &mut out);
        out.push_str("\"…\"");
        let after = &rest[q + 1..];
        let mut escaped = false;
        let end = after.char_indices().find(|&(_, c)| {
            let close = c == '"' && !escaped;
            escaped = c == '\\' && !escaped;
            close
        });
        rest = match end {
            Some((e, _)) => &after[e + 1..],
            None => "",
        };
    }
    words(rest, &mut out);
    out
}

/// The oracle's sentence for an outside change (`outside the root, P was created`) with its
/// verb as `created, changed or removed`: which of the three follows from the command the case
/// sent, not from the flaw, so one escape through every command field is one cause.
fn one_change(text: &str) -> String {
    const HEAD: &str = "outside the root, ";
    match text.strip_prefix(HEAD) {
        Some(rest) if !rest.starts_with("the mode of ") => {
            for verb in [" was created", " was changed", " was removed"] {
                if let Some(path) = rest.strip_suffix(verb) {
                    return format!("{HEAD}{path} was created, changed or removed");
                }
            }
            text.to_owned()
        }
        _ => text.to_owned(),
    }
}

/// `text` with every canary token replaced by `<token>`.
fn canary_free(text: &str) -> String {
    const PREFIX: &str = "MEMCERT-CANARY-";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(PREFIX) {
        out.push_str(&rest[..i]);
        out.push_str("<token>");
        let tail = &rest[i + PREFIX.len()..];
        let hex = tail
            .char_indices()
            .find(|(_, c)| !c.is_ascii_hexdigit())
            .map_or(tail.len(), |(j, _)| j);
        rest = &tail[hex..];
    }
    out.push_str(rest);
    out
}

/// Append `text` to `out` word by word (whitespace kept): paths and sandbox folders as
/// placeholders, digit runs as `N`.
fn words(text: &str, out: &mut String) {
    let mut start = 0;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        if c.is_whitespace() || i == text.len() {
            word(&text[start..i], out);
            if i < text.len() {
                out.push(c);
            }
            start = i + c.len_utf8();
        }
    }
}

fn word(w: &str, out: &mut String) {
    let edge = |c: char| matches!(c, '(' | ')' | ',' | '.' | ';' | ':' | '\'' | '[' | ']');
    let core = w.trim_matches(edge);
    let placeholder = if core.contains('/') {
        Some("<path>")
    } else if core.starts_with("memcert-") {
        Some("<sandbox>")
    } else {
        None
    };
    match placeholder {
        Some(p) if !core.is_empty() => {
            let lead = w.len() - w.trim_start_matches(edge).len();
            let tail = w.len() - w.trim_end_matches(edge).len();
            out.push_str(&w[..lead]);
            out.push_str(p);
            out.push_str(&w[w.len() - tail..]);
        }
        _ => numbers(w, out),
    }
}

/// Append `w` with every digit run (digits joined by `,`) as `N`.
fn numbers(w: &str, out: &mut String) {
    let chars: Vec<char> = w.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() {
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || (chars[i] == ','
                        && chars.get(i + 1).is_some_and(char::is_ascii_digit)
                        && chars[i - 1].is_ascii_digit()))
            {
                i += 1;
            }
            out.push('N');
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
}

/// The first line of a reply or error, at most `max` characters, for one-line examples.
pub fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    let more = text.lines().nth(1).is_some();
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None if more => format!("{line} …"),
        None => line.to_owned(),
    }
}

/// The rule of a cause as reports show it: `spec:2.3/E3`, or `spec:2.3/E3 +2` when its cases
/// span more rules ([`Cause::rules`]).
pub fn rules_label(c: &Cause) -> String {
    match c.rules.len() {
        0 | 1 => c.spec.clone(),
        n => format!("{} +{}", c.spec, n - 1),
    }
}

/// One line for an example step's answer: `is_error: true` and the reply's first line, or the
/// reason no answer came.
pub fn reply_line(step: &ExampleStep, max: usize) -> String {
    match (&step.reply, &step.error) {
        (Some(r), _) => format!(
            "{}{}",
            if r.is_error { "is_error: true, " } else { "" },
            serde_json::to_string(&first_line(&r.text(), max)).unwrap_or_default()
        ),
        (None, Some(e)) => format!("no answer: {}", first_line(e, max)),
        (None, None) => "no answer".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attack::oracle::Finding;
    use crate::report::test_record;

    fn finding(v: Verdict, kind: &str, detail: &str) -> Finding {
        Finding {
            verdict: v,
            kind: kind.into(),
            detail: detail.into(),
        }
    }

    #[test]
    fn shape_replaces_the_particulars() {
        let cases = [
            (
                "step 2: the reply discloses the host path /tmp/memcert-x1/store",
                "step N: the reply discloses the host path <path>",
            ),
            (
                "step 1: the reply discloses the host path memcert-AbC9",
                "step N: the reply discloses the host path <sandbox>",
            ),
            (
                "/memories/sr.txt keeps its content: expected a file holding \"a\\\"b\", found nothing",
                "<path> keeps its content: expected a file holding \"…\", found nothing",
            ),
            (
                "outside the root, outside/canary-MEMCERT-CANARY-00ff00ff00ff00ff.txt was removed",
                "outside the root, <path> was created, changed or removed",
            ),
            (
                "outside the root, the mode of outside/a.txt was changed from 644 to 600",
                "outside the root, the mode of <path> was changed from N to N",
            ),
            (
                "step 1: the reply holds MEMCERT-CANARY-0123456789abcdef here",
                "step N: the reply holds <token> here",
            ),
            (
                "step 1: refuses a file of exactly 999,999 lines (of 4.0K)",
                "step N: refuses a file of exactly N lines (of N.NK)",
            ),
            ("the first create's text is kept", "the first create's text is kept"),
            ("open \"quote to the end", "open \"…\""),
            ("(/memories/a.txt).", "(<path>)."),
        ];
        for (detail, want) in cases {
            assert_eq!(shape(detail), want, "{detail}");
        }
    }

    #[test]
    fn a_view_without_a_file_type_check_is_one_cause_and_a_huge_read_another() {
        let rec = |id: &str, source: &[&str], kind: &str, detail: &str| CaseRecord {
            source: source.iter().map(|s| (*s).to_owned()).collect(),
            findings: vec![finding(Verdict::Fail, kind, detail)],
            ..test_record(id, Verdict::Fail)
        };
        let hang = "step 1: hangs on a FIFO: no answer within 10s; the handler was stopped and will be restarted (bug:B17)";
        let got = causes(&[
            rec("view/fifo", &["spec:2.1/C27"], "hang", hang),
            rec("hazard/fifo/view", &["spec:2.1/C27", "bug:B17"], "hang", hang),
            rec(
                "hazard/char-device/view",
                &["spec:2.1/C27", "bug:B17"],
                "unbounded-read",
                "step 1: unbounded read of a character device: the handler read 68157520 bytes for one call, more than 16777216 (bug:B17)",
            ),
            rec(
                "hazard/huge-file/view",
                &["bug:B17"],
                "unbounded-read",
                "step 1: unbounded read of a huge file: the handler read 67108864 bytes for one call, more than 16777216 (bug:B17)",
            ),
            // A root that is a FIFO is another flaw (no check that the root is a folder).
            rec("scenario/root-fifo/view", &["bug:B10"], "hang", hang),
        ]);
        // Its own shape: the hang's words, particulars masked.
        let root_fifo = shape(hang);
        let seen: Vec<(&str, &str, &str, Vec<&str>, Vec<&str>)> = got
            .iter()
            .map(|c| {
                (
                    c.kind.as_str(),
                    c.spec.as_str(),
                    c.shape.as_str(),
                    c.kinds.iter().map(String::as_str).collect(),
                    c.ids.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                (
                    "unbounded-read",
                    "bug:B17",
                    SPECIAL_FILE_READ,
                    vec!["hang", "unbounded-read"],
                    vec!["view/fifo", "hazard/fifo/view", "hazard/char-device/view"],
                ),
                (
                    "unbounded-read",
                    "bug:B10",
                    root_fifo.as_str(),
                    vec!["hang"],
                    vec!["scenario/root-fifo/view"],
                ),
                (
                    "unbounded-read",
                    "bug:B17",
                    HUGE_FILE_READ,
                    vec!["unbounded-read"],
                    vec!["hazard/huge-file/view"],
                ),
            ]
        );
        assert!(
            got[0]
                .hint
                .starts_with("never open a FIFO, socket or device"),
            "{}",
            got[0].hint
        );
        assert!(
            got[2].hint.starts_with("bound what one call reads"),
            "{}",
            got[2].hint
        );
    }

    #[test]
    fn a_temp_file_made_and_undone_outside_by_every_write_is_one_side_effect() {
        let write = |id: &str, tmp: &str| {
            CaseRecord {
            source: vec!["spec:2.4/F1".into()],
            steps: vec![crate::certify::StepRecord {
                input: serde_json::json!({"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "x"}),
                reply: None,
                reply_cut: None,
                error: None,
                expected: String::new(),
                verdict: Verdict::Pass,
            }],
            findings: vec![finding(
                Verdict::Unsafe,
                "outside-changed",
                &format!("while the case ran, outside the root, base/{tmp} was created, written, renamed away"),
            )],
            ..test_record(id, Verdict::Unsafe)
        }
        };
        let got = causes(&[
            write("insert/at-top", ".tmp-1-a8f"),
            write("str_replace/success", ".tmp-7-c01"),
        ]);
        let keys: Vec<(Verdict, &str, &str, usize)> = got
            .iter()
            .map(|c| (c.verdict, c.kind.as_str(), c.shape.as_str(), c.count))
            .collect();
        assert_eq!(
            keys,
            [(
                Verdict::Unsafe,
                SIDE_EFFECT,
                "while the case ran, outside the root, <path> was created, written, renamed away",
                2
            )]
        );
    }

    #[test]
    fn a_race_that_escaped_is_one_cause_the_escape() {
        let race = |id: &str| CaseRecord {
            source: vec!["bug:B12".into()],
            findings: vec![
                finding(Verdict::Unsafe, "race-rounds", "leaked in 3 of 5 rounds"),
                finding(
                    Verdict::Unsafe,
                    "outside-read",
                    "outside the root, outside/canary.txt was read",
                ),
            ],
            ..test_record(id, Verdict::Unsafe)
        };
        let got = causes(&[race("race/swap-dir/view"), race("race/swap-dir/create")]);
        let keys: Vec<(Verdict, &str, &str, usize)> = got
            .iter()
            .map(|c| (c.verdict, c.kind.as_str(), c.spec.as_str(), c.count))
            .collect();
        assert_eq!(keys, [(Verdict::Unsafe, "escape", "bug:B12", 2)]);
        // A race whose rounds finding stands alone (no escape seen in the last round) keeps it.
        let alone = CaseRecord {
            source: vec!["bug:B12".into()],
            findings: vec![finding(
                Verdict::Unsafe,
                "race-rounds",
                "leaked in 1 of 5 rounds",
            )],
            ..test_record("race/swap-dir/view", Verdict::Unsafe)
        };
        assert_eq!(causes(&[alone])[0].kind, "race-rounds");
    }

    #[test]
    fn findings_group_by_verdict_kind_rule_and_shape_worst_first() {
        let with = |id: &str, v: Verdict, src: &str, fs: Vec<Finding>, steps: usize| CaseRecord {
            findings: fs,
            source: vec![src.into()],
            steps: (0..steps)
                .map(|_| crate::certify::StepRecord {
                    input: serde_json::json!({"command": "view"}),
                    reply: None,
                    reply_cut: None,
                    error: Some("e".into()),
                    expected: String::new(),
                    verdict: Verdict::Error,
                })
                .collect(),
            ..test_record(id, v)
        };
        let leak = |p: &str| {
            finding(
                Verdict::Unsafe,
                "host-path-disclosed",
                &format!("step 1: the reply discloses the host path {p}"),
            )
        };
        let cases = vec![
            with(
                "a/1",
                Verdict::Unsafe,
                "spec:2.1/D3",
                vec![leak("/tmp/x/a")],
                3,
            ),
            with(
                "a/2",
                Verdict::Unsafe,
                "spec:2.1/D3",
                vec![leak("/tmp/y/b"), leak("/tmp/y/c")],
                1,
            ),
            with(
                "b/1",
                Verdict::Unsafe,
                "spec:3/S-4",
                vec![leak("/tmp/z")],
                1,
            ),
            with(
                "c/1",
                Verdict::Fail,
                "spec:2.1/D3",
                vec![finding(Verdict::Fail, "reply", "step 1: x")],
                1,
            ),
            with(
                "c/2",
                Verdict::Fail,
                "spec:2.1/D3",
                vec![finding(Verdict::Fail, "reply", "step 2: x")],
                1,
            ),
            with(
                "c/3",
                Verdict::Fail,
                "spec:2.1/D3",
                vec![finding(Verdict::Fail, "reply", "step 2: x")],
                1,
            ),
            with("d/1", Verdict::Pass, "spec:2.1/D3", vec![], 1),
        ];
        let got: Vec<(Verdict, &str, &str, usize, &str)> = Vec::new();
        let all = causes(&cases);
        let got = all.iter().fold(got, |mut g, c| {
            g.push((
                c.verdict,
                c.kind.as_str(),
                c.spec.as_str(),
                c.count,
                c.example.case.as_str(),
            ));
            g
        });
        assert_eq!(
            got,
            [
                // A disclosure is one cause whatever the cases tested: its rules are listed.
                (
                    Verdict::Unsafe,
                    "host-path-disclosed",
                    "spec:2.1/D3",
                    3,
                    "a/2"
                ),
                (Verdict::Fail, "reply", "spec:2.1/D3", 3, "c/1"),
            ]
        );
        assert_eq!(all[0].ids, ["a/1", "a/2", "b/1"]);
        assert_eq!(all[0].rules, ["spec:2.1/D3", "spec:3/S-4"]);
        assert_eq!(
            all[0].example.detail,
            "step 1: the reply discloses the host path /tmp/y/b"
        );
        assert_eq!(
            all[0].hint,
            hint("host-path-disclosed", Verdict::Unsafe, "")
        );
        assert_eq!(counts_line(&all), "1 UNSAFE, 1 FAIL");
        assert_eq!(counts_line(&[]), "none");
    }

    /// Escapes are one effect; a reply grade beside a disk finding, and any finding below the
    /// case's verdict, are symptoms; the rule is the first bug class; a file created outside
    /// that no input named is a side effect grouped by its path alone.
    #[test]
    #[allow(clippy::too_many_lines)] // one table of cases and the exact causes they make
    fn one_flaw_is_one_cause() {
        let case = |id: &str, source: &[&str], path: &str, findings: Vec<Finding>| CaseRecord {
            source: source.iter().map(|s| s.to_string()).collect(),
            verdict: findings.iter().map(|f| f.verdict).max().unwrap(),
            findings,
            steps: vec![crate::certify::StepRecord {
                input: serde_json::json!({"command": "create", "path": path, "file_text": "x"}),
                reply: None,
                reply_cut: None,
                error: None,
                expected: String::new(),
                verdict: Verdict::Pass,
            }],
            ..test_record(id, Verdict::Pass)
        };
        let created = |p: &str| {
            finding(
                Verdict::Unsafe,
                "outside-changed",
                &format!("outside the root, {p} was created"),
            )
        };
        let cases = vec![
            case(
                "p/view",
                &["spec:3/S-1", "bug:B19", "bug:B01"],
                "/memories/%2e%2e/outside/canary.txt",
                vec![
                    finding(
                        Verdict::Unsafe,
                        "outside-read",
                        "step 1: the reply holds the canary token",
                    ),
                    finding(Verdict::Fail, "reply", "step 1: reported success"),
                ],
            ),
            case(
                "p/create",
                &["bug:B19"],
                "/memories/%2e%2e/outside/pwned.txt",
                vec![created("base/outside/pwned.txt")],
            ),
            case(
                "p/rename",
                &["bug:B19"],
                "/memories/%2e%2e/outside/pwned.txt",
                vec![
                    finding(
                        Verdict::Unsafe,
                        "outside-copied",
                        "/memories/loot.md holds the canary token",
                    ),
                    finding(
                        Verdict::Unsafe,
                        "outside-changed",
                        "outside the root, base/outside/canary.txt was removed",
                    ),
                ],
            ),
            case(
                "w/0",
                &["spec:2.2/B1"],
                "/memories/a.md",
                vec![
                    created("base/memory.log"),
                    created("base/tree"),
                    created("base/tree/HEAD"),
                ],
            ),
            // Beside an aimed escape, an unnamed creation is that escape's work.
            case(
                "p/create-2",
                &["bug:B19"],
                "/memories/%2e%2e/outside/pwned.txt",
                vec![
                    created("base/outside/pwned.txt"),
                    created("base/outside/.log"),
                ],
            ),
            case(
                "w/1",
                &["spec:2.2/B1"],
                "/memories/a.md",
                vec![created("base/memory.log")],
            ),
            case(
                "w/2",
                &["spec:2.4/F1"],
                "/memories/b.md",
                vec![created("base/memory.log")],
            ),
            case(
                "d/1",
                &["spec:2.5/G1"],
                "/memories/x",
                vec![
                    finding(
                        Verdict::Fail,
                        "check",
                        "/memories/x survives: expected a file, found nothing",
                    ),
                    finding(
                        Verdict::Fail,
                        "check",
                        "/memories/y survives: expected a file, found nothing",
                    ),
                    finding(Verdict::Fail, "reply", "step 1: reported success"),
                ],
            ),
        ];
        let all = causes(&cases);
        let got: Vec<(Verdict, &str, &str, usize, &str)> = all
            .iter()
            .map(|c| {
                (
                    c.verdict,
                    c.kind.as_str(),
                    c.spec.as_str(),
                    c.count,
                    c.shape.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    Verdict::Unsafe,
                    "escape",
                    "bug:B19",
                    4,
                    "reached outside the root (changed, copied into the store, read)"
                ),
                (
                    Verdict::Unsafe,
                    "side-effect",
                    "",
                    3,
                    "outside the root, base/memory.log was created"
                ),
                (
                    Verdict::Unsafe,
                    "side-effect",
                    "",
                    1,
                    "outside the root, base/tree was created"
                ),
                (
                    Verdict::Fail,
                    "check",
                    "spec:2.5/G1",
                    1,
                    "<path> survives: expected a file, found nothing"
                ),
            ]
        );
        assert_eq!(
            all[0].kinds,
            ["outside-changed", "outside-copied", "outside-read"]
        );
        assert_eq!(all[0].ids, ["p/view", "p/create", "p/rename", "p/create-2"]);
        // The fewest steps (all one), then one whose disk shows the damage.
        assert_eq!(all[0].example.case, "p/create");
        assert_eq!(all[1].ids, ["w/0", "w/1", "w/2"]);
        assert!(all[1].rules.is_empty());
    }
}
