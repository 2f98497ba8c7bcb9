//! Snapshot files as cases finish (`crate::baseline`): `memcert snapshot --out DIR` writes every
//! case's `.snap`; `certify --baseline DIR --update-baseline` writes a `.snap.new` beside the old
//! file for every REGRESSION and NEW case, as insta does, for `cargo insta review`, and removes
//! the `.snap.new` of a case that matches again.

use std::path::PathBuf;

use crate::baseline::{self, Comparison};
use crate::certify::{Event, Reporter};

/// What [`SnapshotWriter`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// `<case>.snap` for every case that has a snapshot (`memcert snapshot`).
    Accepted,
    /// `<case>.snap.new` for every REGRESSION and NEW case (`--update-baseline`).
    Pending,
}

/// A reporter that writes snapshot files into a folder; write errors are kept for the caller.
#[derive(Debug)]
pub struct SnapshotWriter {
    dir: PathBuf,
    write: Write,
    /// Files written.
    pub written: usize,
    /// Cases run without a snapshot (race, SKIPPED).
    pub not_recorded: usize,
    /// Case ids whose snapshot could not be written, with the error.
    pub errors: Vec<(String, std::io::Error)>,
}

impl SnapshotWriter {
    /// A writer into `dir` (which must exist).
    pub fn new(dir: PathBuf, write: Write) -> SnapshotWriter {
        SnapshotWriter {
            dir,
            write,
            written: 0,
            not_recorded: 0,
            errors: Vec::new(),
        }
    }

    /// The folder written to.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }
}

impl Reporter for SnapshotWriter {
    fn event(&mut self, event: &Event<'_>) {
        let Event::CaseFinished(rec) = event else {
            return;
        };
        let Some(snap) = &rec.snapshot else {
            self.not_recorded += 1;
            return;
        };
        let done = match (self.write, &rec.baseline) {
            (Write::Accepted, _) => baseline::write(&self.dir, snap).map(|()| true),
            (Write::Pending, Some(Comparison::Regression { .. } | Comparison::New)) => {
                baseline::write_pending(&self.dir, snap).map(|()| true)
            }
            (Write::Pending, Some(Comparison::Unchanged)) => {
                baseline::remove_pending(&self.dir, &rec.id).map(|()| false)
            }
            (Write::Pending, _) => Ok(false),
        };
        match done {
            Ok(true) => self.written += 1,
            Ok(false) => {}
            Err(e) => self.errors.push((rec.id.clone(), e)),
        }
    }
}
