//! One case against a target: whether it can run here, its sandbox and inputs, the reset, the
//! commands turn by turn (with the race running when it has one), and what the disk shows
//! before and after, handed to [`record`].

use std::path::PathBuf;
use std::time::Instant;

use serde_json::Value;

use super::lane::{Lane, Lease, Reset};
use super::race::Swapper;
use super::snapshots::listed_unchecked;
use super::{black_box_prelude, record, CaseRecord, Config, Snapshots};
use crate::attack::oracle::{Late, Observation, ReadCount};
use crate::attack::sandbox::{default_parent, tree_of, Sandbox, Tree};
use crate::attack::watch::Session;
use crate::scratch::Scratch;
use crate::suite::Case;
use crate::target::Target;

/// Why `case` cannot run against a handler with memcert's own rights (an in-process handler),
/// or `None` when it can. A case that plants permission bits ([`Case::needs_unprivileged`])
/// proves nothing when the handler runs as root (effective uid 0): permission bits do not bind
/// root. A contained handler of a root memcert runs as another uid: [`skip_reason_for`].
pub fn skip_reason(case: &Case) -> Option<String> {
    (case.needs_unprivileged() && rustix::process::geteuid().is_root()).then(|| {
        "the harness runs as root (effective uid 0), where permission bits do not bind; run it as \
         another user to test this"
            .to_owned()
    })
}

/// Why a case that plants a character device ([`Case::plants_device`]) cannot run with its
/// sandbox made in `parent`, or `None` when it can: the filesystem there is mounted `nodev`
/// (`statvfs` `ST_NODEV`), where a device node can be made but not opened, so the case would
/// prove nothing. A `mknod` the kernel refuses (no `CAP_MKNOD`) is found when the sandbox is
/// laid out, and SKIPs the case too ([`run_case`]).
pub fn device_skip_reason(case: &Case, parent: &std::path::Path) -> Option<String> {
    if !case.plants_device() {
        return None;
    }
    match rustix::fs::statvfs(parent) {
        Ok(s) if s.f_flag.contains(rustix::fs::StatVfsMountFlags::NODEV) => Some(
            "the filesystem of the case sandboxes is mounted nodev, where a planted device \
             cannot be opened; set TMPDIR to a folder on a filesystem without nodev to run it"
                .to_owned(),
        ),
        Ok(_) => None,
        Err(e) => Some(format!(
            "the filesystem of the case sandboxes could not be checked for nodev ({e})"
        )),
    }
}

/// The reason a device case is SKIPPED when laying out its sandbox failed with `e`: `mknod`
/// refused (`EPERM`, the harness lacks `CAP_MKNOD`); `None` for any other failure (ERROR).
fn mknod_refused(case: &Case, e: &std::io::Error) -> Option<String> {
    (case.plants_device() && e.kind() == std::io::ErrorKind::PermissionDenied).then(|| {
        format!(
            "a character device could not be planted (mknod: {e}); run memcert as root (or \
             with CAP_MKNOD) to test this"
        )
    })
}

/// Why `case` cannot run against `target`, or `None` when it can: a case that plants permission
/// bits is SKIPPED only when the handler itself keeps root's rights
/// ([`Target::handler_is_root`]: `--no-contain` or `--keep-root` as root, an in-process handler
/// of a root memcert); a contained handler runs as `nobody` (or as uid 0 mapped to it, without
/// capabilities) and the case runs.
pub fn skip_reason_for(case: &Case, target: &dyn Target) -> Option<String> {
    (case.needs_unprivileged() && target.handler_is_root()).then(|| {
        "the handler runs as root (uid 0 with its capabilities: --no-contain, --keep-root or an \
         in-process handler of a root memcert), where permission bits do not bind; run memcert \
         as another user, or contained, to test this"
            .to_owned()
    })
}

/// Run one case against a target and judge it. A case this process cannot run
/// ([`skip_reason`]) is SKIPPED without touching the target. Start-up is taken as unprobed
/// ([`Startup::default`]): a refusal to start is not a refusal ([`run_case_after`]).
pub fn run_case(case: &Case, target: &mut dyn Target, config: &Config) -> CaseRecord {
    run_case_after(case, target, config, &Startup::default())
}

/// [`run_case`] after the run's start-up probe ([`probe_startup`]): what the handler made
/// outside the store at start-up is not charged to the case again, and a refusal to start on a
/// store root the case replaced ([`plants_root`]) can be a PASS.
pub fn run_case_after(
    case: &Case,
    target: &mut dyn Target,
    config: &Config,
    startup: &Startup,
) -> CaseRecord {
    run_case_in(case, target, config, startup, &mut Lane::new(Reset::Fresh))
}

/// [`run_case_after`] in the sandbox `lane` gives ([`Lane::lease`]): the worker's kept
/// sandbox undone ([`Reset::Undo`]) or a fresh one. The runner's workers each hold a lane for
/// the whole run.
pub fn run_case_in(
    case: &Case,
    target: &mut dyn Target,
    config: &Config,
    startup: &Startup,
    lane: &mut Lane,
) -> CaseRecord {
    if !config.black_box {
        return run_prepared(case, &case.setup, &[], target, config, startup, lane);
    }
    match black_box_prelude(case) {
        Ok(prelude) => {
            let judged = Case {
                checks: Vec::new(),
                ..case.clone()
            };
            run_prepared(&judged, &[], &prelude, target, config, startup, lane)
        }
        Err(reason) => skipped(case, reason, config),
    }
}

/// A case's sandbox, made in the target's scratch root (an external handler may write only
/// there) or in the default temp folder.
///
/// # Ambient authority
/// As [`Sandbox::create_unchecked`].
fn sandbox_for(target: &dyn Target, setup: &[crate::suite::Fs]) -> std::io::Result<Sandbox> {
    match target.scratch() {
        Some(dir) => Sandbox::create_in_unchecked(dir, "memcert-", setup),
        None => Sandbox::create_unchecked(setup),
    }
}

/// The folders outside the sandbox a case watches: the target's scratch HOME and TMPDIR,
/// except in black-box mode, where the handler's store may be there.
fn watched<'t>(target: &'t dyn Target, config: &Config) -> Vec<&'t Scratch> {
    if config.black_box {
        Vec::new()
    } else {
        target.watched()
    }
}

/// A case not run, with the reason (graded by the oracle as any skip).
fn skipped(case: &Case, reason: String, config: &Config) -> CaseRecord {
    let obs = Observation {
        skipped: Some(reason),
        ..Observation::default()
    };
    record(case, &[], obs, config, Vec::new(), Instant::now())
}

/// Run a case over a sandbox laid out with `setup`, after sending `prelude` (ungraded set-up
/// commands; a refused one makes the case SKIPPED).
///
/// The oracle's "before" is taken after the reset: what the handler makes outside while it is
/// built is judged once, in `startup/side-effects` ([`probe_startup`]), and the paths it made
/// then (in the probe or in this reset) are left out of the case's outside comparison. A reset
/// that fails is judged from before it: a refusal ([`refusal`]) on a case that plants its
/// store root is PASS when nothing else changed outside, anything else is ERROR.
fn run_prepared(
    case: &Case,
    setup: &[crate::suite::Fs],
    prelude: &[Value],
    target: &mut dyn Target,
    config: &Config,
    startup: &Startup,
    lane: &mut Lane,
) -> CaseRecord {
    let started = Instant::now();
    let mut obs = Observation::default();
    if let Some(why) = skip_reason_for(case, target) {
        obs.skipped = Some(why);
        return record(case, &[], obs, config, Vec::new(), started);
    }
    let parent = target
        .scratch()
        .map_or_else(|| default_parent().to_path_buf(), |p| p.to_path_buf());
    if let Some(why) = device_skip_reason(case, &parent) {
        obs.skipped = Some(why);
        return record(case, &[], obs, config, Vec::new(), started);
    }
    let lease = match lane.lease(&parent, setup, &target.decoys(), |s| sandbox_for(target, s)) {
        Ok(l) => l,
        Err(e) if mknod_refused(case, &e).is_some() => {
            obs.skipped = mknod_refused(case, &e);
            return record(case, &[], obs, config, Vec::new(), started);
        }
        Err(e) => {
            obs.replies
                .push(Err(format!("the sandbox could not be laid out: {e}")));
            return record(case, &[], obs, config, Vec::new(), started);
        }
    };
    let sandbox = lease.sandbox();
    // What the kept watches saw changed since the last case's window closed: charged here
    // (the case before it was reported already), naming the case it came after.
    obs.late.extend(
        lease
            .late()
            .iter()
            .map(|(after, t)| (Late::BeforeCommands(after.clone()), t.clone())),
    );
    // The case that ran last on this very sandbox: `None` for a new layout, whose first reset
    // is start-up.
    let before_commands = Late::BeforeCommands(lease.after_case().map(str::to_owned));
    let pre_reset = match lease.known_outside() {
        Some(template) => std::borrow::Cow::Borrowed(template),
        None => std::borrow::Cow::Owned(sandbox.outside_unchecked()),
    };
    obs.credentials = target.canaries();
    let inputs = case_inputs(case, sandbox);
    obs.inputs = inputs.iter().map(strings_of).collect();
    let mut watched_before = Vec::new();
    // A kept sandbox's watches see the reset too (the lease found them quiet since the last
    // case): when nothing may have changed the outside, the "before" is the template, not
    // walked again (certify::lane). Any such event keeps the sandbox from the next case
    // (`quiet`).
    let kept_watch = lease.watch();
    let reset_started = Instant::now();
    let reset = target.reset(sandbox.base(), sandbox.root());
    let took = reset_started.elapsed();
    let reset_window = kept_watch.map(|w| w.close_window());
    let mut quiet = matches!(&reset_window, Some(Ok((_, gap))) if !gap.changed);
    // A change during a reset that follows a case on this sandbox came after that case's last
    // answer, and is charged so (the first reset of a sandbox, a new layout's included, is
    // start-up, judged once, in `startup/side-effects`).
    if let (Some(Ok((_, gap))), Some(_)) = (reset_window, lease.after_case()) {
        obs.late.extend(
            gap.changes
                .into_iter()
                .map(|t| (before_commands.clone(), t)),
        );
    }
    // The "before" is the template the "pre-reset" is: nothing was made.
    let before_is_template = match lease.known_outside_shared() {
        Some(template) if quiet => {
            obs.before_known(sandbox, template);
            true
        }
        _ => {
            obs.before_unchecked(sandbox);
            false
        }
    };
    obs.startup_made = startup.made.clone();
    match reset {
        Ok(()) => {
            // Taken after the reset, which may (re)start the handler: what a start-up writes to
            // its HOME is not charged to the case.
            if !before_is_template {
                obs.startup_made
                    .extend(created(&pre_reset, &obs.outside_before));
            }
            watched_before = watched_trees(target, config);
            if let Err(why) = send_prelude(prelude, target) {
                return skipped(case, why, config);
            }
            // The outside is watched from here to the last answer (attack::watch): memcert's
            // own walks before and after are not in the window. A kept sandbox keeps its
            // watches (certify::lane): a window is opened on them, unless the reset gave the
            // handler other decoys (a restart), which a session of the case's own watches.
            quiet &= send_watched(
                case,
                &inputs,
                &lease,
                kept_watch,
                target,
                config,
                &mut obs,
                &before_commands,
            );
        }
        Err(e) => {
            quiet = false;
            obs.outside_before = pre_reset.into_owned().into();
            match refusal(case, &e, took, target, startup) {
                Some(why) => obs.refused_at_start = Some(why),
                None => {
                    obs.reply_too_large = too_large(&e);
                    obs.replies
                        .push(Err(format!("reset failed: {}", explain(&e, target))));
                }
            }
        }
    }
    // The "after" is walked unless the watches saw nothing that may change the outside and
    // every outside file still holds its bytes (inotify does not see writes through a shared
    // mmap; reading the held files again does): the outside is then the "before".
    let after = (quiet && lease.files_unchanged()).then(|| obs.outside_before.clone());
    obs.after_known(sandbox, case, after, lease.is_kept());
    // A change the kept watches saw after the last answer, while memcert read the store, is
    // this case's (the walk of the outside may have been skipped, or come before it).
    if let (true, Some(w)) = (quiet, lease.watch()) {
        match w.reopen_gap(lease.linked()) {
            Ok(gap) => {
                quiet = !gap.changed;
                obs.late
                    .extend(gap.changes.into_iter().map(|t| (Late::AfterLastAnswer, t)));
            }
            Err(_) => quiet = false,
        }
    }
    lane.give_back(lease, &obs.outside_after, quiet, &case.id);
    observe_watched(&mut obs, &watched(target, config), watched_before);
    record(case, &inputs, obs, config, Vec::new(), started)
}

/// Send the case's commands inside a watch window of the outside: on the kept sandbox's
/// watches (`kept`) when they still watch the handler's decoys, else a session of the case's
/// own. The touches (or why the watch failed) go to `obs`, and what the kept watches saw
/// changed between the reset's window and this one to its `late`, as `before`;
/// returns true when the kept watches saw nothing that may change the outside from the
/// "before" to the last answer (false for a session of the case's own, or any failure).
#[allow(clippy::too_many_arguments)]
fn send_watched(
    case: &Case,
    inputs: &[Value],
    lease: &Lease,
    kept: Option<&Session>,
    target: &mut dyn Target,
    config: &Config,
    obs: &mut Observation,
    before: &Late,
) -> bool {
    let sandbox = lease.sandbox();
    let decoys = target.decoys();
    let kept = kept.filter(|_| lease.watches_decoys(&decoys));
    // Opening a window on the kept watches says whether anything changed since the "before".
    let opened = kept.map(|w| {
        w.reopen_gap(&[]).map(|gap| {
            obs.late
                .extend(gap.changes.into_iter().map(|t| (before.clone(), t)));
            gap.changed
        })
    });
    let own = kept
        .is_none()
        .then(|| Session::start(sandbox, &decoys))
        .flatten();
    send_turns(case, inputs, sandbox, target, config, obs);
    let (touched, quiet) = match (kept, opened, own) {
        (Some(w), Some(Ok(changed_before)), _) => match w.close_window() {
            Ok((t, gap)) => (Some(Ok(t)), !changed_before && !gap.changed),
            Err(why) => (Some(Err(why)), false),
        },
        (_, Some(Err(why)), _) => (Some(Err(why)), false),
        (_, _, Some(w)) => (Some(w.finish()), false),
        _ => (None, false),
    };
    match touched {
        Some(Ok(touched)) => obs.touched = touched,
        Some(Err(why)) => obs.watch_failed = Some(why),
        None => {}
    }
    quiet
}

/// What the run's start-up probe saw ([`probe_startup`]).
#[derive(Clone, Debug, Default)]
pub struct Startup {
    /// The handler was built over a plain sandbox: a later refusal to start is about that
    /// case's store, not a handler that cannot start at all.
    pub started: bool,
    /// Paths outside the store (relative to the run folder) the start-up made; changes at or
    /// under them are judged once, in `startup/side-effects`, not in every case.
    pub made: Vec<PathBuf>,
}

/// True when `case` replaces the store root itself before the handler starts (a link, a FIFO,
/// a regular file): a handler may rightly refuse to start there.
pub fn plants_root(case: &Case) -> bool {
    use crate::suite::Fs;
    case.setup.iter().any(|f| {
        matches!(
            f,
            Fs::RootSymlink { .. } | Fs::RootFifo | Fs::RootFile { .. }
        )
    })
}

/// The refusal shown when a failed reset is the handler refusing to start on this case's
/// store: only on a case that [`plants_root`], after the run's probe started the handler over
/// a plain store, within the handler's time limit ([`Target::timeout`]), and only for an error
/// answer to the reset (the adapters' `reset refused: ...`) or an exit with a non-zero code
/// and a message on stderr. A timeout, a death by signal, a spawn failure or a protocol fault
/// is not a refusal (`None`: the case is ERROR).
fn refusal(
    case: &Case,
    e: &crate::target::TargetError,
    took: std::time::Duration,
    target: &dyn Target,
    startup: &Startup,
) -> Option<String> {
    use crate::target::TargetError;
    if !plants_root(case) || !startup.started || target.timeout().is_some_and(|t| took > t) {
        return None;
    }
    match e {
        // The prefix is the harness's own wording (target::stdio), the rest the handler's.
        TargetError::Protocol(m) => m
            .strip_prefix("reset refused: ")
            .filter(|why| !why.trim().is_empty())
            .map(|why| format!("the handler refused to start on this store: {why}")),
        TargetError::Exited { status, stderr }
            if status.starts_with("exit status: ")
                && status != "exit status: 0"
                && !stderr.trim().is_empty() =>
        {
            Some(format!(
                "the handler refused to start on this store ({status}): {stderr}"
            ))
        }
        _ => None,
    }
}

/// Paths in `after` and not in `before` whose parent was there before (the tops of what was
/// made).
fn created(before: &Tree, after: &Tree) -> Vec<PathBuf> {
    after
        .keys()
        .filter(|p| !before.contains_key(*p))
        .filter(|p| {
            p.parent()
                .is_none_or(|d| d.as_os_str().is_empty() || before.contains_key(d))
        })
        .cloned()
        .collect()
}

/// Judge what the handler does while it is built, once per run: a plain sandbox, the outside
/// walked, the handler reset over it, the outside walked again. Returns what later cases need
/// ([`Startup`]) and, when the start-up changed anything outside the store, the case
/// `startup/side-effects` (UNSAFE, the changes named), which the run reports first.
pub fn probe_startup(target: &mut dyn Target, config: &Config) -> (Startup, Option<CaseRecord>) {
    let started = Instant::now();
    let Ok(sandbox) = sandbox_for(target, &[]) else {
        return (Startup::default(), None);
    };
    let mut obs = Observation::default();
    obs.before_unchecked(&sandbox);
    let ok = target.reset(sandbox.base(), sandbox.root()).is_ok();
    obs.outside_after = sandbox.outside_unchecked().into();
    let startup = Startup {
        started: ok,
        made: created(&obs.outside_before, &obs.outside_after),
    };
    if crate::attack::oracle::diff(&obs.outside_before, &obs.outside_after).is_empty() {
        return (startup, None);
    }
    let case = startup_case();
    let quiet = Config {
        snapshots: super::Snapshots::Off,
        ..config.clone()
    };
    (
        startup,
        Some(record(&case, &[], obs, &quiet, Vec::new(), started)),
    )
}

/// The `startup/side-effects` case: no command, no check; its findings are the changes outside
/// the store while the handler was built.
pub fn startup_case() -> Case {
    Case {
        id: STARTUP_CASE.into(),
        source: vec!["spec:3".into()],
        defined: concat!(file!(), ":", line!()).into(),
        requirement: "Building or resetting the handler over a store MUST NOT create, change or remove anything outside the store.".into(),
        level: crate::suite::Level::Must,
        setup: Vec::new(),
        steps: Vec::new(),
        checks: Vec::new(),
        race: None,
        turns: Vec::new(),
    }
}

/// The id of [`startup_case`].
pub const STARTUP_CASE: &str = "startup/side-effects";

/// The case's inputs as sent in `sandbox`: `{RUN}` and `{DOWN:d}` filled in through the
/// sandbox's alias ([`instantiate_in`]).
fn case_inputs(case: &Case, sandbox: &Sandbox) -> Vec<Value> {
    case.steps
        .iter()
        .map(|s| instantiate_in(&s.input, sandbox))
        .collect()
}

/// [`instantiate`] for `sandbox`, through its alias ([`Sandbox::alias`]): `{RUN}` becomes the
/// alias's path and `{DOWN:d}` leads down through the alias wherever it can
/// (`attack::payloads::instantiate_via`), so the run folder's real host path is in no input.
pub fn instantiate_in(input: &Value, sandbox: &Sandbox) -> Value {
    let run = sandbox.alias().to_string_lossy();
    let root = sandbox.root().to_string_lossy();
    let alias_root = sandbox.alias_root();
    fill(
        input,
        run.trim_start_matches('/'),
        &root,
        &alias_root.to_string_lossy(),
    )
}

/// Everything under each watched folder ([`watched`]), in that order.
fn watched_trees(target: &dyn Target, config: &Config) -> Vec<Tree> {
    watched(target, config)
        .iter()
        .map(|w| tree_of(w.dir()))
        .collect()
}

/// Send the black-box set-up commands, in order.
///
/// # Errors
/// Why the case is SKIPPED: the first command the handler refused or did not answer.
fn send_prelude(prelude: &[Value], target: &mut dyn Target) -> Result<(), String> {
    for input in prelude {
        let refused = match target.call(input) {
            Ok(r) if !r.is_error => None,
            Ok(r) => Some(format!("the handler refused it: {}", r.text())),
            Err(e) => Some(explain(&e, target)),
        };
        if let Some(why) = refused {
            let path = input["path"].as_str().unwrap_or("");
            return Err(format!("black-box set-up: create {path} failed ({why})"));
        }
    }
    Ok(())
}

/// Send the case's commands turn by turn, with the race running when the case has one; stop
/// at the first command that got no answer. Replies (and, when the run takes snapshots, the
/// entries each listing names) go to `obs`.
fn send_turns(
    case: &Case,
    inputs: &[Value],
    sandbox: &Sandbox,
    target: &mut dyn Target,
    config: &Config,
    obs: &mut Observation,
) {
    let snapshot_listings = !matches!(config.snapshots, Snapshots::Off) && !config.black_box;
    let listings = snapshot_listings.then_some(sandbox);
    let swapper = case
        .race
        .as_ref()
        .map(|r| Swapper::start(sandbox.entry_at(&r.a), sandbox.entry_at(&r.b), r.max_swaps));
    let mut at = 0;
    for size in case.turn_sizes() {
        let turn = &inputs[at.min(inputs.len())..(at + size).min(inputs.len())];
        at += size;
        if !send_turn(turn, target, listings, obs) {
            break;
        }
    }
    if let Some(s) = swapper {
        obs.race_swaps = Some(s.stop());
    }
}

/// Send one turn: several commands as one batch, one command alone. False when a command got
/// no answer (the case stops there). With `listings`, the entries each answer lists that are
/// directories or links on disk go to `obs.listed`.
fn send_turn(
    turn: &[Value],
    target: &mut dyn Target,
    listings: Option<&Sandbox>,
    obs: &mut Observation,
) -> bool {
    if turn.len() > 1 {
        let before = target.read_bytes();
        return match target.call_batch(turn) {
            Ok(rs) => {
                let total: u64 = rs.iter().map(|r| r.text().len() as u64).sum();
                obs.reads.extend(vec![None; rs.len().saturating_sub(1)]);
                obs.reads
                    .push(Some(read_count(before, target.read_bytes(), total)));
                if let Some(sandbox) = listings {
                    obs.listed
                        .extend(rs.iter().map(|r| listed_unchecked(sandbox, r)));
                }
                obs.replies.extend(rs.into_iter().map(Ok));
                true
            }
            Err(e) => {
                obs.reads.push(measured(before, target.read_bytes()));
                obs.reply_too_large = too_large(&e);
                obs.timed_out = matches!(e, crate::target::TargetError::Timeout(_));
                obs.replies.push(Err(explain(&e, target)));
                false
            }
        };
    }
    for input in turn {
        let before = target.read_bytes();
        match target.call(input) {
            Ok(r) => {
                let len = r.text().len() as u64;
                obs.reads
                    .push(Some(read_count(before, target.read_bytes(), len)));
                if let Some(sandbox) = listings {
                    obs.listed.push(listed_unchecked(sandbox, &r));
                }
                obs.replies.push(Ok(r))
            }
            Err(e) => {
                obs.reads.push(measured(before, target.read_bytes()));
                obs.reply_too_large = too_large(&e);
                obs.timed_out = matches!(e, crate::target::TargetError::Timeout(_));
                obs.replies.push(Err(explain(&e, target)));
                return false;
            }
        }
    }
    true
}

/// What a call read: the growth of the handler's read count ([`Target::read_bytes`]) from
/// `before` to `after` when both were measured, else `reply_len`, the reply's length.
fn read_count(before: Option<u64>, after: Option<u64>, reply_len: u64) -> ReadCount {
    match (before, after) {
        (Some(b), Some(a)) => ReadCount {
            bytes: a.saturating_sub(b),
            by_process: true,
        },
        _ => ReadCount {
            bytes: reply_len,
            by_process: false,
        },
    }
}

/// What a call that got no answer read, when the handler's read count was measured before and
/// after it (`None` otherwise: there is no reply to measure).
fn measured(before: Option<u64>, after: Option<u64>) -> Option<ReadCount> {
    Some(ReadCount {
        bytes: after?.saturating_sub(before?),
        by_process: true,
    })
}

/// Record the watched folders outside the sandbox in `obs`, before (`before`, one tree per
/// folder of `watched`) and now, each path under the folder's name; walked through their
/// handles, links not followed.
fn observe_watched(obs: &mut Observation, watched: &[&Scratch], before: Vec<Tree>) {
    if watched.is_empty() {
        return;
    }
    // Copies of the trees when they are shared (a kept sandbox's template).
    let outside_before = std::sync::Arc::make_mut(&mut obs.outside_before);
    let outside_after = std::sync::Arc::make_mut(&mut obs.outside_after);
    for (w, before) in watched.iter().zip(before) {
        let name = w
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (rel, node) in before {
            outside_before.insert(std::path::Path::new(&name).join(rel), node);
        }
        for (rel, node) in tree_of(w.dir()) {
            outside_after.insert(std::path::Path::new(&name).join(rel), node);
        }
    }
}

/// Every string value of an input and its escaped rendering (replies may escape control
/// characters of a path, vpath::display_path), longest first, so a longer echo is taken out
/// before a shorter one inside it (`Observation::inputs`).
pub fn strings_of(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for s in crate::protocol::strings_in(v) {
        let shown = crate::vpath::display_path(&s);
        if shown != s {
            out.push(shown);
        }
        out.push(s);
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// The read cap an answer passed, when `e` says one did (`Observation::reply_too_large`).
fn too_large(e: &crate::target::TargetError) -> Option<usize> {
    match e {
        crate::target::TargetError::ReplyTooLarge { limit, .. }
        | crate::target::TargetError::ReplyTooLargeUnsent { limit, .. } => Some(*limit),
        _ => None,
    }
}

/// A target error with its causes, and the handler's last stderr lines when the error does not
/// carry them already.
fn explain(e: &crate::target::TargetError, target: &dyn Target) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    if !matches!(e, crate::target::TargetError::Exited { .. }) {
        let last = crate::target::last_lines(&target.stderr_tail());
        if !last.is_empty() {
            text.push_str(&format!("; stderr ends with: {last}"));
        }
    }
    text
}

/// Fill in the run-time parts of a case input: `{BASE}` and `{ROOT}` the names of the base
/// folder and of the store root, `{RUN}` becomes the run folder's absolute path
/// without its leading `/` (so `/memories/../../(...)/{RUN}/canary.txt` reaches a canary from any
/// depth), and `{DOWN:d}` the way back down from the d-th ancestor of the store root at `root`
/// (see `attack::payloads::instantiate`).
pub fn instantiate(input: &Value, run: &str, root: &str) -> Value {
    fill(input, run, root, root)
}

/// [`instantiate`] with `{DOWN:d}` led through `alias_root` where it can, and `{BASE}` and
/// `{ROOT}` made the names of the base folder and of the store root (`base`, `memories` in a
/// temp sandbox; an app's own names), which the canaries beside them are named after
/// (`attack::sandbox`).
fn fill(input: &Value, run: &str, root: &str, alias_root: &str) -> Value {
    match input {
        Value::String(s)
            if ["{RUN}", "{DOWN:", "{BASE}", "{ROOT}"]
                .iter()
                .any(|p| s.contains(p)) =>
        {
            let root_path = std::path::Path::new(root);
            let name = |p: Option<&std::path::Path>| {
                p.and_then(std::path::Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            let s = s
                .replace("{BASE}", &name(root_path.parent()))
                .replace("{ROOT}", &name(Some(root_path)))
                .replace("{RUN}", run);
            Value::String(crate::attack::payloads::instantiate_via(
                &s, root, alias_root,
            ))
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| fill(v, run, root, alias_root)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), fill(v, run, root, alias_root)))
                .collect(),
        ),
        other => other.clone(),
    }
}
