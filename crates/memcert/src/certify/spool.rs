//! Finished records kept out of memory: a [`Spool`] writes each [`CaseRecord`] once, as one
//! line of JSON, to an anonymous temporary file (created by handle and already unlinked, so no
//! path names it and nothing is left behind), and reads them back in run order when the reports
//! are rendered. One spool serves every report of a run (`crate::report::Spooled`).
//!
//! A spooled record has everything the reports read; its [`CaseRecord::snapshot`] is left out
//! (`None` when read back): snapshots are for the baseline writers, which take the records from
//! the events themselves.

use std::fs::File;
use std::io::{self, BufRead as _, BufReader, BufWriter, Seek as _, SeekFrom, Write as _};

use serde::{Deserialize, Serialize};

use super::record::{CaseRecord, StepRecord};
use crate::attack::oracle::Finding;
use crate::baseline::Comparison;
use crate::suite::verdict::Verdict;
use crate::suite::Level;

/// The longest line a spool reads back, in bytes (64 MiB): a record keeps at most
/// [`super::KEEP_BYTES`] of each reply, error and finding (unless
/// [`super::Config::keep_reply_bytes`] says more), so a longer line is not one this spool wrote.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// The stored form of a record: every field of [`CaseRecord`] but the snapshot (the JSON
/// report's own form, `CaseOut`, labels the steps and leaves fields out).
#[derive(Serialize, Deserialize)]
struct Stored {
    id: String,
    category: String,
    requirement: String,
    source: Vec<String>,
    defined: String,
    level: Level,
    verdict: Verdict,
    expected_failure: Option<String>,
    findings: Vec<Finding>,
    steps: Vec<StepRecord>,
    duration_ms: u64,
    baseline: Option<Comparison>,
    timed_out: bool,
}

impl Stored {
    fn of(r: &CaseRecord) -> Stored {
        Stored {
            id: r.id.clone(),
            category: r.category.clone(),
            requirement: r.requirement.clone(),
            source: r.source.clone(),
            defined: r.defined.clone(),
            level: r.level,
            verdict: r.verdict,
            expected_failure: r.expected_failure.clone(),
            findings: r.findings.clone(),
            steps: r.steps.clone(),
            duration_ms: r.duration_ms,
            baseline: r.baseline.clone(),
            timed_out: r.timed_out,
        }
    }

    fn into_record(self) -> CaseRecord {
        CaseRecord {
            id: self.id,
            category: self.category,
            requirement: self.requirement,
            source: self.source,
            defined: self.defined,
            level: self.level,
            verdict: self.verdict,
            expected_failure: self.expected_failure,
            findings: self.findings,
            steps: self.steps,
            duration_ms: self.duration_ms,
            snapshot: None,
            baseline: self.baseline,
            timed_out: self.timed_out,
        }
    }
}

/// Case records written once to an anonymous temporary file, one JSON line each, and read back
/// in the order written.
pub struct Spool {
    out: BufWriter<File>,
    len: usize,
    /// The file was read since the last write: its offset is not at the end.
    read: bool,
}

impl std::fmt::Debug for Spool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spool").field("len", &self.len).finish()
    }
}

impl Spool {
    /// An empty spool in the temp folder (`$TMPDIR`, else `/tmp`), a file with no name.
    ///
    /// # Errors
    /// The I/O error of creating the file.
    pub fn new() -> io::Result<Spool> {
        Ok(Spool {
            out: BufWriter::new(tempfile::tempfile()?),
            len: 0,
            read: false,
        })
    }

    /// Records written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no record was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append `record` (without its snapshot).
    ///
    /// # Errors
    /// The I/O error of writing the file.
    pub fn push(&mut self, record: &CaseRecord) -> io::Result<()> {
        if self.read {
            self.out.get_mut().seek(SeekFrom::End(0))?;
            self.read = false;
        }
        serde_json::to_writer(&mut self.out, &Stored::of(record)).map_err(io::Error::from)?;
        self.out.write_all(b"\n")?;
        self.len += 1;
        Ok(())
    }

    /// Every record written, in order, read one at a time. Records pushed afterwards are
    /// appended after the last one as before.
    ///
    /// # Errors
    /// The I/O error of flushing the file or reading it back; each item, the error of reading
    /// or decoding its line (`InvalidData` for a line longer than [`MAX_LINE`]).
    pub fn records(&mut self) -> io::Result<Records> {
        self.out.flush()?;
        let mut f = self.out.get_ref().try_clone()?;
        // The clone shares the offset: reading moves it, so the writer seeks back to the end
        // before writing again (`push` after `records`).
        f.seek(SeekFrom::Start(0))?;
        self.read = true;
        Ok(Records {
            lines: BufReader::new(f),
            left: self.len,
            line: Vec::new(),
        })
    }

    /// Every record written, in order, all at once.
    ///
    /// # Errors
    /// As [`Spool::records`].
    pub fn load(&mut self) -> io::Result<Vec<CaseRecord>> {
        self.records()?.collect()
    }
}

/// The records of a [`Spool`], in order ([`Spool::records`]).
pub struct Records {
    lines: BufReader<File>,
    left: usize,
    line: Vec<u8>,
}

impl Iterator for Records {
    type Item = io::Result<CaseRecord>;

    fn next(&mut self) -> Option<io::Result<CaseRecord>> {
        use std::io::Read as _;
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.line.clear();
        let read = (&mut self.lines)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut self.line);
        Some(match read {
            Err(e) => Err(e),
            Ok(_) if self.line.last() != Some(&b'\n') => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a spooled record ends early or is longer than the spool's line cap",
            )),
            Ok(_) => serde_json::from_slice::<Stored>(&self.line)
                .map(Stored::into_record)
                .map_err(io::Error::from),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{test_record, test_view_step};

    #[test]
    fn records_come_back_in_order_without_their_snapshot() {
        let mut spool = Spool::new().unwrap();
        let a = CaseRecord {
            steps: vec![test_view_step(Verdict::Fail)],
            baseline: Some(Comparison::New),
            timed_out: true,
            snapshot: Some(crate::baseline::Snapshot {
                case_id: "view/a".into(),
                catalog: None,
                input: vec![],
                redactions: vec![],
                steps: vec![],
            }),
            ..test_record("view/a", Verdict::Fail)
        };
        let b = test_record("create/b", Verdict::Pass);
        spool.push(&a).unwrap();
        spool.push(&b).unwrap();
        assert_eq!(spool.len(), 2);
        let back = spool.load().unwrap();
        let json = |r: &CaseRecord| serde_json::to_string(r).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(json(&back[0]), json(&a));
        assert_eq!(json(&back[1]), json(&b));
        assert!(back[0].timed_out);
        assert_eq!(back[0].snapshot, None);
        // Written after a read: appended, not over the first line.
        spool.push(&b).unwrap();
        let ids: Vec<String> = spool.records().unwrap().map(|r| r.unwrap().id).collect();
        assert_eq!(ids, ["view/a", "create/b", "create/b"]);
        assert_eq!(spool.len(), 3);
    }
}
