//! What the runner tells reporters ([`Event`]), the [`Reporter`] trait, and two reporters of
//! the runner's own: one that keeps the records, one that fans events out.

use super::{CaseRecord, Summary};
use crate::text::Profile;

/// What the runner tells reporters.
#[derive(Debug)]
pub enum Event<'a> {
    /// Before the first case.
    Started {
        /// Target description.
        target: &'a str,
        /// Profile used.
        profile: Profile,
        /// Number of cases to run.
        total: usize,
    },
    /// After each case.
    CaseFinished(&'a CaseRecord),
    /// After the last case.
    Finished(&'a Summary),
}

/// A consumer of run events (terminal, JSON, ...).
pub trait Reporter {
    /// Handle one event.
    fn event(&mut self, event: &Event<'_>);
}

/// A reporter that keeps every finished case, in run order (for callers that want the records
/// rather than a report: `memcert::certify`, tests).
#[derive(Debug, Default)]
pub struct Collect(pub Vec<CaseRecord>);

impl Reporter for Collect {
    fn event(&mut self, event: &Event<'_>) {
        if let Event::CaseFinished(r) = event {
            self.0.push((*r).clone());
        }
    }
}

/// Fan one event stream out to several reporters.
#[derive(Default)]
pub struct Fanout<'a>(pub Vec<&'a mut dyn Reporter>);

impl Reporter for Fanout<'_> {
    fn event(&mut self, event: &Event<'_>) {
        for r in self.0.iter_mut() {
            r.event(event);
        }
    }
}
