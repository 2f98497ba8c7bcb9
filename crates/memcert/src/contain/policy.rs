//! What containment is asked ([`Policy`], [`Limits`]) and what it achieved ([`Containment`]).

use std::path::PathBuf;

use serde::Serialize;

/// How to contain a handler process. The default contains it as far as the kernel allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Contain at all (`--no-contain` turns it off: the handler then runs as memcert's uid with
    /// memcert's environment; only its HOME and TMPDIR are redirected to the decoy HOME).
    pub enabled: bool,
    /// As root, keep root instead of running as `nobody` (`--keep-root`).
    pub keep_root: bool,
    /// More paths the handler may read (`--allow-read`).
    pub allow_read: Vec<PathBuf>,
    /// More paths the handler may write (`--allow-write`).
    pub allow_write: Vec<PathBuf>,
    /// More environment variables passed on (`--pass-env`); a name that looks secret gets a
    /// canary value instead of its own.
    pub pass_env: Vec<String>,
    /// The one TCP port the handler may connect to (an app's mock Messages API); `None`: no TCP
    /// connect at all.
    pub connect_port: Option<u16>,
    /// Resource limits.
    pub limits: Limits,
    /// Use user and PID namespaces where the kernel allows (off only to test the
    /// `PR_SET_CHILD_SUBREAPER` fallback).
    pub namespaces: bool,
    /// As root, run as uid 0 mapped to `nobody` in a user namespace, without capabilities,
    /// rather than as `nobody` itself (an app, whose memory folder is the user's and is not
    /// given away).
    pub map_root: bool,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            enabled: true,
            keep_root: false,
            allow_read: Vec::new(),
            allow_write: Vec::new(),
            pass_env: Vec::new(),
            connect_port: None,
            limits: Limits::default(),
            namespaces: true,
            map_root: false,
        }
    }
}

impl Policy {
    /// No containment (`--no-contain`).
    pub fn off() -> Policy {
        Policy {
            enabled: false,
            ..Policy::default()
        }
    }
}

/// Resource limits of a handler process (`setrlimit`, soft = hard). The number of processes is
/// bounded by its PID namespace, not by `RLIMIT_NPROC` (which counts every process of the uid).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Address space in bytes (`RLIMIT_AS`). Default 16 GiB: the pinned Node SDK handler
    /// reserves about 0.75 GiB at start-up (a test runs it under the default), but Node's
    /// `fetch` (an app's SDK client) instantiates WebAssembly, which reserves about 10 GiB of
    /// address space per instance (8 GiB fails). A handler that allocates without end fails at
    /// the limit instead of taking the machine.
    pub address_space: u64,
    /// Largest file it may write, in bytes (`RLIMIT_FSIZE`). Default 1 GiB.
    pub file_size: u64,
    /// CPU seconds of one handler process (`RLIMIT_CPU`; a handler restarted after a timeout
    /// gets a fresh budget). Default 3600.
    pub cpu_seconds: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            address_space: 16 << 30,
            file_size: 1 << 30,
            cpu_seconds: 3600,
        }
    }
}

/// The containment a handler process got on this machine: what every report records, so that a
/// run on a weaker machine can be told apart.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Containment {
    /// Whether containment was on (`--no-contain`, or an in-process handler: off).
    pub enabled: bool,
    /// `user+pid` (its own user and PID namespaces), `pid` (a PID namespace as root, with
    /// `--keep-root`), `none (subreaper)` (the `PR_SET_CHILD_SUBREAPER` fallback) or `none`.
    pub namespaces: String,
    /// The uid it runs as, in words: `65534 (nobody)`, `0 mapped to 65534 in its user
    /// namespace, no capabilities`, `0 (--keep-root)`, `1000 (memcert's own)`.
    pub uid: String,
    /// Whether `no_new_privs` was set.
    pub no_new_privs: bool,
    /// The Landlock ABI of this kernel that the ruleset used (0: no Landlock).
    pub landlock_abi: u32,
    /// The filesystem rule in words (`write: its scratch root only; read: 14 paths`).
    pub filesystem: String,
    /// The network rule in words (`TCP bind and connect denied`).
    pub network: String,
    /// The scope rule in words (`signals and abstract unix sockets scoped`).
    pub scope: String,
    /// The environment in words (`scrubbed: PATH, LANG, LC_*, TZ, MEMCERT_*; 1 canary`).
    pub env: String,
    /// The resource limits in words.
    pub limits: String,
    /// The containment features this machine (or these flags) left out, one short phrase each;
    /// empty when every feature is on.
    pub missing: Vec<String>,
    /// The handler keeps root's rights over files (uid 0 with its capabilities: `--no-contain`
    /// or `--keep-root` as root, an in-process handler of a root memcert, uid 0 with no user
    /// namespace to map it): permission bits do not bind it, and the cases that plant them are
    /// SKIPPED (`certify::skip_reason_for`). Not in reports (the uid in words is).
    #[serde(skip)]
    pub privileged: bool,
}

/// [`Containment::namespaces`] of the fallback where no PID namespace could be made: memcert is
/// a child subreaper and kills, besides the handler's own descendants, every child of memcert's
/// started after the handler (an orphan the handler left), so two handlers at once cannot be
/// told apart ([`Containment::shares_process_tree`]).
pub const SUBREAPER: &str = "none (subreaper)";

impl Containment {
    /// Whether the handler runs without a PID namespace of its own under memcert's subreaper
    /// fallback ([`SUBREAPER`]): stopping it kills every process memcert started after it, the
    /// other handlers of a parallel run (`--jobs`) included, so such a handler must run alone.
    pub fn shares_process_tree(&self) -> bool {
        self.enabled && self.namespaces == SUBREAPER
    }

    /// The first field in which `other` differs from this containment, as
    /// `FIELD: THIS vs OTHER` (`namespaces: user+pid vs none (subreaper)`); `None` when they are
    /// the same. For the handlers of one parallel run, which must all run under one policy.
    pub fn difference(&self, other: &Containment) -> Option<String> {
        let on = |b: bool| if b { "on" } else { "off" };
        let fields = [
            (
                "containment",
                on(self.enabled).to_owned(),
                on(other.enabled).to_owned(),
            ),
            (
                "namespaces",
                self.namespaces.clone(),
                other.namespaces.clone(),
            ),
            ("uid", self.uid.clone(), other.uid.clone()),
            (
                "no_new_privs",
                on(self.no_new_privs).to_owned(),
                on(other.no_new_privs).to_owned(),
            ),
            (
                "Landlock ABI",
                self.landlock_abi.to_string(),
                other.landlock_abi.to_string(),
            ),
            (
                "filesystem",
                self.filesystem.clone(),
                other.filesystem.clone(),
            ),
            ("network", self.network.clone(), other.network.clone()),
            ("scope", self.scope.clone(), other.scope.clone()),
            ("env", self.env.clone(), other.env.clone()),
            ("limits", self.limits.clone(), other.limits.clone()),
            ("missing", self.missing.join("; "), other.missing.join("; ")),
        ];
        fields
            .into_iter()
            .find(|(_, a, b)| a != b)
            .map(|(field, a, b)| format!("{field}: {a} vs {b}"))
    }

    /// The record of a run with containment turned off (`--no-contain`).
    pub fn off(uid: u32) -> Containment {
        Containment {
            enabled: false,
            namespaces: "none".into(),
            uid: format!("{uid} (memcert's own)"),
            no_new_privs: false,
            landlock_abi: 0,
            filesystem: "not restricted".into(),
            network: "not restricted".into(),
            scope: "not scoped".into(),
            env: "not scrubbed (HOME and TMPDIR are the decoy HOME)".into(),
            limits: "none".into(),
            missing: vec!["containment turned off (--no-contain)".into()],
            privileged: uid == 0,
        }
    }

    /// The record of an in-process Rust handler, which cannot be contained.
    pub fn in_process() -> Containment {
        Containment {
            enabled: false,
            namespaces: "none".into(),
            uid: "memcert's own (in-process handler)".into(),
            no_new_privs: false,
            landlock_abi: 0,
            filesystem: "not restricted".into(),
            network: "not restricted".into(),
            scope: "not scoped".into(),
            env: "memcert's own".into(),
            limits: "none".into(),
            missing: vec!["an in-process handler cannot be contained".into()],
            privileged: rustix::process::geteuid().is_root(),
        }
    }

    /// One line for report headers: `user+pid namespaces, uid 65534 (nobody), no_new_privs,
    /// Landlock ABI 6 (...), ...`, or why there is none.
    pub fn line(&self) -> String {
        if !self.enabled {
            return match self.missing.first() {
                Some(why) => format!("none: {why}"),
                None => "none".into(),
            };
        }
        let landlock = if self.landlock_abi == 0 {
            "no Landlock".to_owned()
        } else {
            format!("Landlock ABI {} ({})", self.landlock_abi, self.filesystem)
        };
        format!(
            "{} namespaces, uid {}, {}{}, {}, {}, env {}, limits {}",
            self.namespaces,
            self.uid,
            if self.no_new_privs {
                "no_new_privs, "
            } else {
                ""
            },
            landlock,
            self.network,
            self.scope,
            self.env,
            self.limits
        )
    }
}

/// `n` bytes in words: `8 GiB`, `512 MiB`, `1000 bytes`.
pub(super) fn bytes(n: u64) -> String {
    if n >= 1 << 30 && n % (1 << 30) == 0 {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_names_every_rule_or_why_there_is_none() {
        assert_eq!(
            Containment::off(0).line(),
            "none: containment turned off (--no-contain)"
        );
        let c = Containment {
            enabled: true,
            namespaces: "user+pid".into(),
            uid: "65534 (nobody)".into(),
            no_new_privs: true,
            landlock_abi: 6,
            filesystem: "write: scratch root only".into(),
            network: "TCP bind and connect denied".into(),
            scope: "signals and abstract unix sockets scoped".into(),
            env: "scrubbed".into(),
            limits: "address space 4 GiB".into(),
            missing: Vec::new(),
            privileged: false,
        };
        assert_eq!(c.line(), "user+pid namespaces, uid 65534 (nobody), no_new_privs, Landlock ABI 6 (write: scratch root only), TCP bind and connect denied, signals and abstract unix sockets scoped, env scrubbed, limits address space 4 GiB");
        assert_eq!(bytes(8 << 30), "8 GiB");
        assert_eq!(bytes(3 << 20), "3 MiB");
    }

    #[test]
    fn the_subreaper_fallback_shares_the_process_tree_and_differences_are_named() {
        let full = Containment {
            enabled: true,
            namespaces: "user+pid".into(),
            ..Containment::default()
        };
        let fallback = Containment {
            namespaces: SUBREAPER.into(),
            ..full.clone()
        };
        assert!(!full.shares_process_tree());
        assert!(fallback.shares_process_tree());
        assert!(!Containment::off(0).shares_process_tree());
        assert_eq!(full.difference(&full.clone()), None);
        assert_eq!(
            full.difference(&fallback).as_deref(),
            Some("namespaces: user+pid vs none (subreaper)")
        );
        assert_eq!(
            full.difference(&Containment::in_process()).as_deref(),
            Some("containment: on vs off")
        );
    }
}
