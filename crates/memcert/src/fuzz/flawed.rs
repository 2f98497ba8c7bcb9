//! A deliberately flawed handler for the `differential_example` fuzz target (the template a
//! Rust user copies, `fuzz/README.md`) and its regression test: never use it as a handler.
//! Only built with the `arbitrary` feature (the fuzz crate, `cargo test --all-features`).

use std::collections::HashMap;
use std::io;
use std::path::Path;

use serde_json::Value;

use crate::handler::reference::{Options, Reference};
use crate::handler::{reply, Handler};
use crate::protocol::ToolResult;
use crate::text::{Outcome, Profile};

/// The reference handler behind a write-through cache of file views, keyed by the path as
/// sent: a `view` of a file is answered from the cache when it holds the path; a `view`,
/// `create`, `str_replace` or `insert` that succeeds on a file puts its fresh view there; a
/// `delete` or `rename` forgets the exact paths it names. The flaw: deleting or renaming a
/// *folder* leaves the files under it in the cache, and a later `view` of one answers the old
/// text where the documented model says the file is gone (FAIL, `the model: not-found; the
/// handler: success`). The flaw of `fixtures/handlers/stateful/stale_after_folder_delete.py`,
/// in Rust. Answers in profile `docs`, fsync off.
pub struct StaleFolderCache {
    inner: Reference,
    /// A file view's reply by the `path` it was asked with.
    views: HashMap<String, ToolResult>,
}

impl StaleFolderCache {
    /// Over the store folder `memories_dir` (made if missing, [`Reference::open_ambient`]).
    ///
    /// # Errors
    /// The `io::Error` of opening it.
    pub fn open(memories_dir: &Path) -> io::Result<StaleFolderCache> {
        let options = Options {
            fsync: false,
            ..Options::default()
        };
        Ok(StaleFolderCache {
            inner: Reference::open_ambient(memories_dir, Profile::Docs, options)?,
            views: HashMap::new(),
        })
    }
}

impl StaleFolderCache {
    /// The file at `path` as a view shows it, cached; `None` (and nothing cached) when it is
    /// not a file.
    fn refresh(&mut self, path: &str) -> Option<ToolResult> {
        let outcome = self
            .inner
            .outcome(&serde_json::json!({"command": "view", "path": path}));
        let r = reply(Profile::Docs, &outcome);
        if matches!(outcome, Outcome::ViewFile { .. }) {
            self.views.insert(path.to_owned(), r.clone());
            Some(r)
        } else {
            None
        }
    }
}

impl Handler for StaleFolderCache {
    fn apply(&mut self, input: &Value) -> ToolResult {
        let text = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_owned);
        let command = text("command");
        let path = text("path");
        if let (Some("view"), Some(p), None) = (command.as_deref(), &path, input.get("view_range"))
        {
            if let Some(cached) = self.views.get(p) {
                return cached.clone();
            }
            if let Some(r) = self.refresh(p) {
                return r;
            }
            return self.inner.apply(input);
        }
        // The flaw: only the exact paths named are forgotten, never the files under a folder.
        for key in ["path", "old_path", "new_path"] {
            if let Some(p) = text(key) {
                self.views.remove(&p);
            }
        }
        let r = self.inner.apply(input);
        let writes = matches!(
            command.as_deref(),
            Some("create" | "str_replace" | "insert")
        );
        if let (false, true, Some(p)) = (r.is_error, writes, &path) {
            self.refresh(p);
        }
        r
    }
}
