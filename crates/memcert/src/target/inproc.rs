//! In-process targets: a [`Handler`] made by a closure for each case.
//!
//! # Non-guarantees
//! - An in-process handler cannot be contained: it runs with memcert's own rights (no
//!   namespace, uid change, Landlock or limits; [`crate::contain`] is for handler processes).

use std::path::Path;

use serde_json::Value;

use super::{Target, TargetError};
use crate::handler::reference::{Options, Reference};
use crate::handler::Handler;
use crate::protocol::ToolResult;
use crate::text::Profile;

/// Builds a fresh handler for a case from `(base_dir, memories_dir)`. Both the factory and
/// its handlers are `Send`, so an [`InProcess`] target can be one worker of a parallel run
/// (`certify::run_parallel`).
pub type Factory = Box<dyn FnMut(&Path, &Path) -> std::io::Result<Box<dyn Handler + Send>> + Send>;

/// A handler running in this process.
pub struct InProcess {
    name: String,
    factory: Factory,
    current: Option<Box<dyn Handler + Send>>,
}

impl InProcess {
    /// A target named `name` whose handlers `factory` builds.
    pub fn new(name: impl Into<String>, factory: Factory) -> Self {
        InProcess {
            name: name.into(),
            factory,
            current: None,
        }
    }

    /// The built-in reference handler answering in `profile` (fsync off: sandboxes are
    /// throw-away).
    ///
    /// Over a store root that is a symbolic link (bug:B10), a FIFO or a regular file every command is refused with the
    /// reason ([`Reference::open_or_refuse`]) instead of a failed reset, which the runner would
    /// grade ERROR as a harness fault. Any other failure to open stays a reset error.
    pub fn reference(profile: Profile) -> Self {
        let options = Options {
            fsync: false,
            ..Options::default()
        };
        InProcess::new(
            format!("memcert reference handler (profile {profile})"),
            Box::new(move |_base, root| {
                let h = Reference::open_or_refuse(root, profile, options)?;
                Ok(Box::new(h) as Box<dyn Handler + Send>)
            }),
        )
    }
}

impl Target for InProcess {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn reset(&mut self, base_dir: &Path, memories_dir: &Path) -> Result<(), TargetError> {
        self.current = Some((self.factory)(base_dir, memories_dir)?);
        Ok(())
    }

    fn call(&mut self, input: &Value) -> Result<ToolResult, TargetError> {
        match self.current.as_mut() {
            Some(h) => Ok(h.apply(input)),
            None => Err(TargetError::Protocol("call before reset".into())),
        }
    }
}

/// A handler the caller owns, borrowed for one run (what [`crate::certify::certify`] drives):
/// [`Handler::reset`] gives it a fresh store before each case.
pub struct Borrowed<'a, H: Handler + ?Sized> {
    name: String,
    handler: &'a mut H,
    ready: bool,
}

impl<'a, H: Handler + ?Sized> Borrowed<'a, H> {
    /// Drive `handler`, named `name` in reports.
    pub fn new(name: impl Into<String>, handler: &'a mut H) -> Self {
        Borrowed {
            name: name.into(),
            handler,
            ready: false,
        }
    }
}

impl<H: Handler + ?Sized> Target for Borrowed<'_, H> {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn reset(&mut self, base_dir: &Path, memories_dir: &Path) -> Result<(), TargetError> {
        self.ready = false;
        // The handler's own error, not the harness's.
        self.handler
            .reset(base_dir, memories_dir)
            .map_err(|e| TargetError::Protocol(e.to_string()))?;
        self.ready = true;
        Ok(())
    }

    fn call(&mut self, input: &Value) -> Result<ToolResult, TargetError> {
        if !self.ready {
            return Err(TargetError::Protocol(
                "call before a successful reset".into(),
            ));
        }
        Ok(self.handler.apply(input))
    }
}
