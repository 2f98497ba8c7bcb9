//! What one run of a sequence did ([`Trial`]: each command's two replies, the store on disk and
//! the model's tree, the changes outside) and the four checks of it.

use serde_json::Value;

use crate::handler::model::{paths, Dir as ModelDir, Entry};
use crate::protocol::ToolResult;
use crate::text::OutcomeKind;

/// One command as both sides answered it.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The `tool_use` input sent.
    pub input: Value,
    /// The reference handler's reply.
    pub reference: ToolResult,
    /// The model's reply.
    pub model: ToolResult,
    /// The kind of the model's outcome (for seed selection and statistics).
    pub kind: OutcomeKind,
}

/// What one run of a [`Sequence`](super::Sequence) did.
#[derive(Clone, Debug)]
pub struct Trial {
    /// Every command sent, in order.
    pub exchanges: Vec<Exchange>,
    /// The store after the run, walked without following links, in the model's terms (a
    /// regular file with more than one link is [`Entry::HardLinked`], a FIFO, socket or device
    /// [`Entry::Special`]).
    pub disk: ModelDir,
    /// The model's tree after the run.
    pub model: ModelDir,
    /// Changes outside the store since the harness was made, in words.
    pub outside_changes: Vec<String>,
    /// Host path spellings and the canary token: no reply may hold one the model's does not.
    pub secrets: Vec<String>,
    /// Why the model stopped following the disk, if it did.
    pub uncovered: Option<String>,
}

impl Trial {
    /// Check 1: no reference reply holds a secret that the model's reply does not.
    ///
    /// # Errors
    /// The first leak, in words.
    pub fn check_no_leak(&self) -> Result<(), String> {
        for (i, x) in self.exchanges.iter().enumerate() {
            let (r, m) = (x.reference.text(), x.model.text());
            if let Some(s) = self
                .secrets
                .iter()
                .find(|s| r.contains(s.as_str()) && !m.contains(s.as_str()))
            {
                return Err(format!(
                    "command {}: the reference's reply holds {s:?} (host path or canary): {}\n{r}",
                    i + 1,
                    x.input
                ));
            }
        }
        Ok(())
    }

    /// Check 2: every reply of the reference equals the model's.
    ///
    /// # Errors
    /// The first difference, in words.
    pub fn check_replies(&self) -> Result<(), String> {
        for (i, x) in self.exchanges.iter().enumerate() {
            if x.reference != x.model {
                return Err(format!(
                    "command {}: {}\nreference (is_error {}):\n{}\nmodel (is_error {}):\n{}",
                    i + 1,
                    x.input,
                    x.reference.is_error,
                    x.reference.text(),
                    x.model.is_error,
                    x.model.text()
                ));
            }
        }
        Ok(())
    }

    /// Check 3: the store on disk equals the model's tree (skipped when the model stopped
    /// following the disk).
    ///
    /// # Errors
    /// The first path that differs, in words.
    pub fn check_tree(&self) -> Result<(), String> {
        if self.uncovered.is_some() || self.disk == self.model {
            return Ok(());
        }
        let (disk, model) = (paths(&self.disk), paths(&self.model));
        for p in disk.keys().chain(model.keys()) {
            let (d, m) = (disk.get(p), model.get(p));
            let same = match (d, m) {
                (Some(Entry::Dir(_)), Some(Entry::Dir(_))) => true,
                _ => d == m,
            };
            if !same {
                return Err(format!(
                    "the store differs from the model at {}: disk {d:?}, model {m:?}",
                    p.display()
                ));
            }
        }
        unreachable!("two different trees differ at some path")
    }

    /// Check 4: nothing outside the store changed.
    ///
    /// # Errors
    /// The changes, in words.
    pub fn check_outside(&self) -> Result<(), String> {
        if self.outside_changes.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "changed outside the store: {}",
                self.outside_changes.join("; ")
            ))
        }
    }

    /// All four checks, in order.
    ///
    /// # Errors
    /// The first failed check, in words.
    pub fn check(&self) -> Result<(), String> {
        self.check_no_leak()?;
        self.check_replies()?;
        self.check_tree()?;
        self.check_outside()
    }
}
