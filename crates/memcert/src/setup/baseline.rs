//! The baseline policy of a run (`memcert certify --baseline DIR [--update-baseline]`): which
//! snapshots its answers are compared with, and where the pending `.snap.new` files of its
//! REGRESSION and NEW cases go.
//!
//! # Guarantees
//! - [`load`] refuses a missing folder, a bad snapshot file and a folder without snapshots,
//!   each with advice that fits: record one, fix or remove that file (re-recording everything
//!   would accept any real regression), record one (a green run would compare nothing).
//! - [`BaselinePolicy::snapshots`] checks, before the run, that pending files can be written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::baseline::{self, Baseline};
use crate::certify::Snapshots;
use crate::report::snapshots::{SnapshotWriter, Write};

/// A run's baseline: the folder of snapshots to compare with, if any, and whether to write a
/// `.snap.new` for every REGRESSION and NEW case.
#[derive(Clone, Debug, Default)]
pub struct BaselinePolicy {
    /// The baseline folder (made by `memcert snapshot`); no comparison when `None`.
    pub dir: Option<PathBuf>,
    /// Write pending `.snap.new` files into `dir` (ignored without `dir`).
    pub update: bool,
}

/// Why the baseline cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BaselineError {
    /// The folder does not exist.
    #[error("{dir}: no such folder; record one with `memcert snapshot --out {dir}` and commit it", dir = .0.display())]
    Missing(PathBuf),
    /// A file in the folder cannot be read or is not a snapshot.
    #[error("{}: fix or remove that file (re-recording the whole folder would accept any real regression)", dir.display())]
    Load {
        /// The baseline folder.
        dir: PathBuf,
        /// The file and what is wrong with it.
        #[source]
        source: baseline::Error,
    },
    /// The folder holds no `.snap` file.
    #[error("{dir}: no .snap file in this folder; record one with `memcert snapshot --out {dir}` and commit it", dir = .0.display())]
    Empty(PathBuf),
    /// Pending `.snap.new` files cannot be written in the folder.
    #[error("cannot write .snap.new files in {}", dir.display())]
    NotWritable {
        /// The baseline folder.
        dir: PathBuf,
        /// The I/O error of a trial write.
        #[source]
        source: std::io::Error,
    },
}

/// A pending `.snap.new` file that could not be written during the run.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the pending snapshot of {id} ({file} in {}): {error}{}", dir.display(), more_note(*more))]
pub struct PendingError {
    /// The case id of the first file that failed.
    pub id: String,
    /// Its file name (`<name>.snap.new`).
    pub file: String,
    /// The baseline folder.
    pub dir: PathBuf,
    /// Why it failed.
    pub error: std::io::Error,
    /// How many more failed.
    pub more: usize,
}

fn more_note(more: usize) -> String {
    match more {
        0 => String::new(),
        n => format!(" ({n} more failed the same way)"),
    }
}

impl BaselinePolicy {
    /// What the run does with snapshots: nothing without a folder, else compare with the
    /// loaded baseline ([`load`]); with [`BaselinePolicy::update`], after checking that pending
    /// files can be written.
    ///
    /// # Errors
    /// [`BaselineError`].
    pub fn snapshots(&self) -> Result<Snapshots, BaselineError> {
        let snapshots = match &self.dir {
            None => Snapshots::Off,
            Some(dir) => Snapshots::Compare(Arc::new(load(dir)?)),
        };
        if self.update {
            if let Some(dir) = &self.dir {
                crate::report::check_writable(&dir.join("probe.snap.new")).map_err(|source| {
                    BaselineError::NotWritable {
                        dir: dir.clone(),
                        source,
                    }
                })?;
            }
        }
        Ok(snapshots)
    }

    /// With a folder and [`BaselinePolicy::update`]: the reporter that writes the `.snap.new`
    /// files; check it with [`pending_written`] after the run.
    pub fn pending_writer(&self) -> Option<SnapshotWriter> {
        self.dir
            .clone()
            .filter(|_| self.update)
            .map(|dir| SnapshotWriter::new(dir, Write::Pending))
    }
}

/// Load the baseline folder `dir`.
///
/// # Errors
/// [`BaselineError::Missing`], [`BaselineError::Load`] or [`BaselineError::Empty`].
pub fn load(dir: &Path) -> Result<Baseline, BaselineError> {
    if !dir.is_dir() {
        return Err(BaselineError::Missing(dir.to_owned()));
    }
    let b = Baseline::load(dir).map_err(|source| BaselineError::Load {
        dir: dir.to_owned(),
        source,
    })?;
    if b.snapshots.is_empty() {
        return Err(BaselineError::Empty(dir.to_owned()));
    }
    Ok(b)
}

/// After the run: how many pending files `pending` wrote.
///
/// # Errors
/// [`PendingError`] for the first file that could not be written.
pub fn pending_written(pending: SnapshotWriter) -> Result<usize, PendingError> {
    let dir = pending.dir().to_owned();
    let more = pending.errors.len().saturating_sub(1);
    match pending.errors.into_iter().next() {
        Some((id, error)) => Err(PendingError {
            file: baseline::file_name(&id) + ".new",
            id,
            dir,
            error,
            more,
        }),
        None => Ok(pending.written),
    }
}
