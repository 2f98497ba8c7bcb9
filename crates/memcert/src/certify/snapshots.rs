//! The runner's side of baselines ([`Snapshots`]): the directories and links a listing answer
//! names, a case's snapshot and its comparison with the baseline, and a run's baseline totals.

use serde_json::Value;

use super::{Config, Snapshots};
use crate::attack::oracle::Observation;
use crate::attack::sandbox::Sandbox;
use crate::baseline::{Baseline, BaselineSummary, Comparison, Snapshot};
use crate::protocol::ToolResult;
use crate::suite::Case;

/// The entries of a listing answer that are directories or links on disk now, right after the
/// answer (`crate::baseline`'s `dir-size` and `link-size` rules).
///
/// # Ambient authority
/// None: `lstat` by handle inside the case's run folder ([`Sandbox::store_lstat`]: listing
/// paths resolved lexically, `baseline::entry_key`; intermediate links are followed, as by the
/// handler that listed them, as long as they stay inside the run folder).
pub fn listed_unchecked(sandbox: &Sandbox, reply: &ToolResult) -> crate::baseline::Entries {
    use crate::baseline::{entry_key, listing_lines, EntryKind};
    let text = reply.text();
    let mut out = crate::baseline::Entries::new();
    for (_, _, path) in listing_lines(&text) {
        let Some(key) = entry_key(path) else { continue };
        let rel = key["/memories".len()..].trim_start_matches('/');
        match sandbox.store_lstat(std::path::Path::new(rel)) {
            Some(m) if m.file_type().is_symlink() => out.insert(key, EntryKind::Link),
            Some(m) if m.is_dir() => out.insert(key, EntryKind::Dir),
            _ => continue,
        };
    }
    out
}

/// Whether a case's answers depend on timing: a race, or a case that plants a huge file (whether
/// a handler that reads it whole answers, or is stopped once its read passes the bound, depends
/// on its speed). Such cases have no snapshot.
fn timing_dependent(case: &Case) -> bool {
    case.race.is_some() || crate::attack::oracle::hazard_of(case) == Some("a huge file")
}

/// The redacted snapshot of a case's answers, when the run takes snapshots
/// ([`Config::snapshots`]) and the case can have one (not SKIPPED, not [`timing_dependent`]).
pub(super) fn case_snapshot(
    case: &Case,
    inputs: &[Value],
    obs: &Observation,
    config: &Config,
) -> Option<Snapshot> {
    match (&config.snapshots, &obs.skipped, timing_dependent(case)) {
        (Snapshots::Off, _, _) | (_, Some(_), _) | (_, _, true) => None,
        _ => Some(
            crate::baseline::Redactor::new(
                &[&obs.host_paths[..], &obs.alias[..]].concat(),
                &obs.token,
            )
            .snapshot(&case.id, inputs, &obs.replies, &obs.listed),
        ),
    }
}

/// How a case compares with the baseline, when the run compares ([`Snapshots::Compare`]): its
/// `snapshot` compared, or why there is none.
pub(super) fn case_comparison(
    snapshot: Option<&Snapshot>,
    obs: &Observation,
    config: &Config,
) -> Option<Comparison> {
    match &config.snapshots {
        Snapshots::Compare(b) => Some(match (snapshot, &obs.skipped) {
            (Some(s), _) => b.compare(s),
            (None, Some(_)) => Comparison::NotCompared {
                reason: "SKIPPED: no answers to compare".into(),
            },
            (None, None) => Comparison::NotCompared {
                reason: "a race or a huge file: its answers depend on timing".into(),
            },
        }),
        _ => None,
    }
}

/// The totals of a comparison with `baseline`: the run's comparisons (of the cases whose ids
/// are `run`), and every snapshot whose case was not run: STALE when neither memcert's catalog
/// (every level) nor `known` ([`super::Config::known`]) has the case, else not run.
pub(super) fn baseline_summary(
    baseline: &Baseline,
    run: &[std::borrow::Cow<'_, str>],
    compared: &[(String, Comparison)],
    known: &[String],
) -> BaselineSummary {
    let run: Vec<&str> = run.iter().map(|id| id.as_ref()).collect();
    baseline_summary_of(baseline, &run, compared, &|left| {
        let catalog = crate::suite::list::Cases::level(crate::suite::catalog::RunLevel::Full);
        let all: std::collections::HashSet<String> = catalog
            .ids()
            .map(std::borrow::Cow::into_owned)
            .chain(known.iter().cloned())
            .collect();
        left.iter().map(|id| all.contains(*id)).collect()
    })
}

/// [`baseline_summary`] for any set of cases: `run` are the ids run, `exists` says for each
/// snapshot left over whether its case still exists (not run) or not (STALE).
pub fn baseline_summary_of(
    baseline: &Baseline,
    run: &[&str],
    compared: &[(String, Comparison)],
    exists: &dyn Fn(&[&String]) -> Vec<bool>,
) -> BaselineSummary {
    let mut s = BaselineSummary {
        dir: baseline.dir.display().to_string(),
        other_catalogs: baseline.other_catalogs(),
        snapshots: baseline.snapshots.len(),
        ..BaselineSummary::default()
    };
    for (id, c) in compared {
        match c {
            Comparison::Unchanged => s.unchanged += 1,
            Comparison::Regression { .. } => s.regressions.push(id.clone()),
            Comparison::New => s.new.push(id.clone()),
            Comparison::NotCompared { .. } => s.not_compared += 1,
        }
    }
    let run: std::collections::HashSet<&str> = run.iter().copied().collect();
    let left: Vec<&String> = baseline
        .snapshots
        .keys()
        .filter(|id| !run.contains(id.as_str()))
        .collect();
    if !left.is_empty() {
        for (id, still) in left.iter().zip(exists(&left)) {
            if still {
                s.not_run += 1;
            } else {
                s.stale.push((*id).clone());
            }
        }
    }
    s
}
