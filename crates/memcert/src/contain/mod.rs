//! Containment of out-of-process handlers: each handler process memcert starts (a `--python`,
//! `--node` or `--stdio` handler, an `--app`) runs in a [`Cell`]: its own user and PID
//! namespaces, an unprivileged uid, `no_new_privs`, a Landlock ruleset, a scrubbed environment,
//! a decoy HOME holding canary credentials, and resource limits. What it achieved on this
//! machine is a [`Containment`], recorded in every report.
//!
//! `README.md` beside this file states, cap-std style, what is and is not guaranteed; the
//! guarantees in short:
//!
//! # Guarantees (where the kernel has the feature; [`Containment::missing`] lists the others)
//! - The handler runs in its own PID namespace inside its own user namespace, under a minimal
//!   init (PID 1, memcert's code) that exits the moment the handler ends: when it ends, or is
//!   killed, or memcert is killed (parent-death signals on the handler, the init and the small
//!   waiter process between memcert and them), the kernel kills every process it started,
//!   `setsid` ones included. Where namespaces are refused, memcert is a child subreaper and kills the
//!   handler's tree when it stops it (but not when memcert itself is killed).
//! - As root, the handler runs as `nobody` (the scratch root is given to that uid), or, when its
//!   interpreter or code is not readable by `nobody`, as uid 0 mapped to `nobody` inside its
//!   user namespace with no capability anywhere; `--keep-root` keeps root.
//! - With Landlock, the handler may write only inside its scratch root (the case sandboxes with
//!   their canaries, its HOME and TMPDIR) and `--allow-write` paths; it may read that root, its
//!   interpreter, code and dependencies, system library folders, a list of single `/etc` files
//!   and `--allow-read` paths. From ABI 4 TCP bind and connect are denied (an app may connect to
//!   the mock's port only); from ABI 6 signals and abstract unix sockets are scoped.
//! - Its environment holds `PATH`, `LANG`, `LC_*`, `TZ`, `MEMCERT_*` and `--pass-env` names only;
//!   a passed name that looks secret gets a canary value.
//!
//! # Non-guarantees
//! - In-process Rust handlers ([`crate::target::inproc`], [`crate::certify()`]) cannot be
//!   contained: they run with memcert's own rights.
//! - Reads are not watched: a handler that reads the decoy credentials is caught only when a
//!   canary value reaches a reply (`credential-read`).
//! - What Landlock's ABI on this machine does not cover (UDP, `ioctl` on pipes) is not
//!   restricted. Unix sockets are refused by a seccomp filter (`seccomp`), on x86_64 and aarch64.
//!
//! # Layout
//! `policy`: what is asked ([`Policy`], [`Limits`]) and what was achieved ([`Containment`]);
//! `paths`: what a handler must read, derived from its command before it is restricted;
//! `rules`: the Landlock ruleset; `seccomp`: the filter refusing unix sockets; `env`: the scrubbed
//! environment; `home`: the decoy HOME;
//! `owner`: giving the scratch to the handler's uid by handle; `spawn`: the code that runs
//! between fork and exec, and stopping a contained process; `tree`: the process tree killed
//! by hand where there is no PID namespace.

mod env;
mod home;
mod owner;
mod paths;
mod policy;
mod rules;
mod seccomp;
mod spawn;
mod tree;

pub use policy::{Containment, Limits, Policy, SUBREAPER};
pub use spawn::Running;
pub use tree::{proc_stat, processes, ProcStat};

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::scratch::Scratch;

/// A handler's place to run: a private scratch root (which holds the case sandboxes, their
/// canaries and the decoy HOME) and, once [`Cell::prepare`]d for a command, the rules it runs
/// under. Dropping it removes the scratch root.
#[derive(Debug)]
pub struct Cell {
    /// Declared first, so it is removed first: it lies inside `scratch`.
    home: Scratch,
    scratch: Scratch,
    token: String,
    prepared: Option<spawn::Prepared>,
}

impl Cell {
    /// A fresh scratch root in [`crate::attack::sandbox::default_parent`] (mode 0700, made and
    /// removed by handle, [`crate::scratch`]) with the decoy HOME `home-XXXXXX/` in it.
    ///
    /// # Errors
    /// The I/O error of making the folders.
    pub fn new() -> io::Result<Cell> {
        Cell::new_in(crate::attack::sandbox::default_parent())
    }

    /// [`Cell::new`] in `parent`.
    ///
    /// # Errors
    /// The I/O error of making the folders.
    pub fn new_in(parent: &Path) -> io::Result<Cell> {
        let scratch = Scratch::new_in(parent, "memcert-scratch-")?;
        let token = format!("MEMCERT-CREDENTIAL-{:016x}", fastrand::u64(..));
        let home = scratch.child("home-")?;
        home::lay_out(home.dir(), &token)?;
        Ok(Cell {
            scratch,
            home,
            token,
            prepared: None,
        })
    }

    /// The scratch root: case sandboxes are made in it.
    pub fn scratch(&self) -> &Path {
        self.scratch.path()
    }

    /// The decoy HOME (also the handler's TMPDIR).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// The decoy HOME's folder, held by handle (the runner compares it before and after each
    /// case).
    pub fn home_scratch(&self) -> &Scratch {
        &self.home
    }

    /// The decoy credential files of the HOME ([`home::files`]), each as `~/<path>` and an
    /// `O_PATH` handle opened from the HOME's handle, no link followed; a decoy the handler
    /// removed or replaced by a link is left out.
    pub fn decoys(&self) -> Vec<(std::path::PathBuf, std::os::fd::OwnedFd)> {
        home::open_decoys(self.home.dir())
    }

    /// The canary token every decoy credential and every canary environment value holds: in a
    /// reply, it shows that the handler read credentials.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Decide, once, how `cmd` runs under `policy`: what it may read, which uid, which
    /// namespaces, the ruleset. `extra_write` are more folders it may write (an app's sandbox);
    /// `connect_port` the one TCP port it may connect to. Later calls keep the first decision.
    pub fn prepare(&mut self, policy: &Policy, cmd: &Command, extra_write: &[PathBuf]) {
        if self.prepared.is_none() {
            self.prepared = Some(spawn::Prepared::new(
                policy,
                cmd,
                self.scratch.path(),
                extra_write,
                &self.token,
            ));
        }
    }

    /// What [`Cell::prepare`] achieved (`None` before it ran).
    pub fn containment(&self) -> Option<&Containment> {
        self.prepared.as_ref().map(|p| &p.achieved)
    }

    /// Start `cmd` contained, with HOME and TMPDIR set to the decoy HOME. The cell must have
    /// been prepared for it.
    ///
    /// # Errors
    /// The spawn error; an error caused by the sandbox says so and names `--allow-read`,
    /// `--allow-write` and `--no-contain`.
    pub fn spawn(&mut self, cmd: Command) -> io::Result<Running> {
        let prepared = self
            .prepared
            .as_mut()
            .ok_or_else(|| io::Error::other("the containment cell was not prepared"))?;
        let running = prepared.spawn(cmd, self.home.path())?;
        if running.pid_max && !prepared.achieved.limits.contains("pid_max") {
            prepared.achieved.limits.push_str(" (pid_max 1024)");
        }
        Ok(running)
    }

    /// Give everything in the scratch root to the handler's uid (when it runs as another uid
    /// than memcert): call after laying out a case's sandbox, before the handler touches it.
    ///
    /// The walk starts at the scratch root's handle and never follows a link; the root itself
    /// stays memcert's (mode 0711), so memcert can still make case sandboxes in it.
    pub fn adopt(&self) {
        if let Some(p) = &self.prepared {
            if let Some((uid, gid)) = p.owner {
                owner::give(self.scratch.dir(), uid, gid);
            }
        }
    }

    /// [`Cell::adopt`], and everything at and below `store` (a path in the scratch root, the
    /// case's store root) walked whole: a sandbox reset by undo keeps folders that are already
    /// the handler's, and memcert planted new files in them (`certify::lane`). A `store` not in
    /// the scratch root is left alone; the walk goes by handle from the scratch root, no link
    /// followed.
    pub fn adopt_store(&self, store: &std::path::Path) {
        self.adopt();
        if let (Some(p), Ok(rel)) = (&self.prepared, store.strip_prefix(self.scratch.path())) {
            if let Some((uid, gid)) = p.owner {
                owner::give_below(self.scratch.dir(), rel, uid, gid);
            }
        }
    }
}

/// The hint a start-up error caused by the sandbox gets.
pub const SANDBOX_HINT: &str = "memcert's sandbox may have blocked it: add what it needs with --allow-read PATH or --allow-write PATH, or run it uncontained with --no-contain";

/// Whether a handler's error text looks like the sandbox refused it: `EACCES`, `EPERM`, or a
/// module it could not load (an unreadable folder looks empty to an import).
pub fn looks_denied(text: &str) -> bool {
    [
        "Permission denied",
        "Operation not permitted",
        "EACCES",
        "EPERM",
        "ModuleNotFoundError",
        "ERR_MODULE_NOT_FOUND",
        "Cannot find module",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// Whether `MEMCERT_REQUIRE_CONTAINMENT=1` is set: tests then fail, instead of skipping, when a
/// containment feature is missing on this machine.
pub fn required() -> bool {
    std::env::var_os("MEMCERT_REQUIRE_CONTAINMENT").is_some_and(|v| v == "1")
}
