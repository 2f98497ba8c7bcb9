//! Starting a handler contained, and stopping it.
//!
//! memcert's child (the *waiter*) enters the namespaces and clones the *init* (PID 1) of a fresh
//! PID namespace, which clones the handler (PID 2); the handler sets its limits, `no_new_privs`
//! and the Landlock ruleset, then `exec`s. The init reaps what is given to it and exits the
//! moment the handler ends (the kernel then kills everything left in the namespace), passing
//! the handler's wait status to the waiter, which exits as the handler did. All three carry
//! `PR_SET_PDEATHSIG = SIGKILL`, so killing memcert kills the waiter, which kills the init, which
//! takes every process of its namespace with it. (The handler is not the init itself: an init
//! ignores the signals it sends itself, so a handler that kills itself would live on.)
//!
//! Between fork and exec only raw system calls run, on data prepared before the fork: no
//! allocation, no lock.

use std::collections::HashMap;
use std::ffi::{CString, OsString};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::policy::{bytes, Containment, Limits, Policy};
use super::seccomp;
use super::{env, paths, rules};

/// The uid `nobody` (and its group) that root handlers run as.
const NOBODY: u32 = 65534;

/// The highest PID of a handler's namespace (Linux 6.14 and later honour `pid_max` per PID
/// namespace): fewer than this many processes and threads at once.
const PID_MAX: &[u8] = b"1024\0";

/// How the handler's uid is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Uid {
    /// memcert is root: run as `nobody`.
    Nobody,
    /// memcert is root, `nobody` cannot read the interpreter or code: run as uid 0 mapped to
    /// `nobody` inside a user namespace, without capabilities.
    Mapped,
    /// `--keep-root`.
    KeepRoot,
    /// memcert is not root: its own uid.
    Own,
}

/// The namespaces a plan enters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Ns {
    /// A user namespace (uid map written by the process itself), then a PID namespace.
    UserPid,
    /// A PID namespace entered as root, before any uid change.
    Pid,
    /// None: memcert is a child subreaper and kills the tree.
    None,
}

/// Everything the code between fork and exec needs, prepared before.
#[derive(Debug)]
struct Plan {
    /// Drop to this uid and gid (root only), before the user namespace.
    drop_to: Option<(u32, u32)>,
    ns: Ns,
    /// `/proc/self/uid_map` and `gid_map` contents, NUL-terminated.
    uid_map: CString,
    gid_map: CString,
    /// Limits: address space, file size, CPU seconds.
    limits: [(libc::__rlimit_resource_t, u64); 4],
    /// `no_new_privs` and the Landlock ruleset (-1: none).
    nnp: bool,
    ruleset: i32,
    /// The seccomp filter refusing unix sockets (`None`: this architecture has none).
    seccomp: Option<seccomp::Filter>,
}

/// A handler's containment, decided once before its first start.
#[derive(Debug)]
pub(super) struct Prepared {
    pub(super) achieved: Containment,
    /// The uid and gid the scratch is given to, when the handler runs as another uid.
    pub(super) owner: Option<(u32, u32)>,
    plan: Option<Arc<Plan>>,
    env: Option<Vec<(OsString, OsString)>>,
    _ruleset: Option<Arc<OwnedFd>>,
}

/// A handler process started by [`super::Cell::spawn`]. Dropping it kills it and everything it
/// started.
#[derive(Debug)]
pub struct Running {
    /// The process memcert started: the waiter when the handler runs in a PID namespace (its
    /// exit status is the handler's), else the handler itself.
    pub child: Child,
    /// The PID (in memcert's namespace) of the init of the handler's namespace, when there is
    /// one: killing it kills the namespace.
    inner: Option<i32>,
    /// Whether the tree is killed by hand (no PID namespace).
    by_hand: bool,
    /// When the child started (`/proc` start time), for the hand kill.
    start: u64,
    done: bool,
    /// Whether `pid_max` was set in its PID namespace.
    pub(super) pid_max: bool,
}

impl Prepared {
    pub(super) fn new(
        policy: &Policy,
        cmd: &Command,
        scratch: &Path,
        extra_write: &[PathBuf],
        token: &str,
    ) -> Prepared {
        let euid = rustix::process::geteuid().as_raw();
        if !policy.enabled {
            return Prepared {
                achieved: Containment::off(euid),
                owner: None,
                plan: None,
                env: None,
                _ruleset: None,
            };
        }
        // The limits applied, decided once for the plan and the report.
        let policy = &Policy {
            limits: within_hard_limits(policy.limits),
            ..policy.clone()
        };
        let (vars, canaries) = env::scrub(std::env::vars_os(), &policy.pass_env, token);
        let reads = paths::derive(cmd, &vars, &policy.allow_read);
        let mut missing = Vec::new();
        let (uid, why_mapped) = if euid != 0 {
            (Uid::Own, None)
        } else if policy.keep_root {
            missing.push("runs as root (--keep-root)".to_owned());
            (Uid::KeepRoot, None)
        } else if policy.map_root {
            (Uid::Mapped, None)
        } else {
            match paths::unreachable_by(&reads.essential, NOBODY, NOBODY) {
                Some(p) => (Uid::Mapped, Some(p)),
                None => (Uid::Nobody, None),
            }
        };
        let ns = choose_ns(uid, policy.namespaces);
        let (drop_to, uid_words, owner) = uid_words(uid, ns, euid, why_mapped.as_deref());
        if ns == Ns::None {
            missing.push(if policy.namespaces {
                "no user or PID namespace here: PR_SET_CHILD_SUBREAPER fallback (a process that outlives memcert itself is not killed)".to_owned()
            } else {
                "namespaces turned off: PR_SET_CHILD_SUBREAPER fallback".to_owned()
            });
            // SAFETY: prctl on this process with constant arguments.
            unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        }
        if uid == Uid::Mapped && ns != Ns::UserPid {
            missing.push("runs as root: no user namespace to map it".to_owned());
        }
        let abi = rules::kernel_abi();
        let mut write: Vec<PathBuf> = vec![scratch.to_path_buf()];
        write.extend(extra_write.iter().cloned());
        write.extend(policy.allow_write.iter().cloned());
        let ruleset = if abi == 0 {
            missing.push("no Landlock in this kernel: reads and writes are not restricted".into());
            None
        } else {
            let wanted = rules::Wanted {
                read: &reads.paths,
                write: &write,
                connect_port: policy.connect_port,
            };
            match rules::build(abi, &wanted) {
                Ok(fd) => Some(Arc::new(fd)),
                Err(e) => {
                    missing.push(format!("no Landlock ruleset: {e}"));
                    None
                }
            }
        };
        // The ruleset uses what ABI 6 has (later ABIs add logging and flags memcert does not use).
        let abi = if ruleset.is_some() { abi.min(6) } else { 0 };
        if (1..4).contains(&abi) {
            missing.push(format!("Landlock ABI {abi} < 4: TCP is not restricted"));
        }
        if (1..6).contains(&abi) {
            missing.push(format!(
                "Landlock ABI {abi} < 6: signals and abstract sockets are not scoped"
            ));
        }
        let limits = policy.limits;
        let seccomp = seccomp::no_unix_sockets();
        if seccomp.is_none() {
            missing.push(
                "no seccomp filter for this architecture: unix sockets by path are not refused"
                    .into(),
            );
        }
        let unix_refused = seccomp.is_some();
        let plan = Plan {
            drop_to,
            ns,
            uid_map: map_line(uid, euid),
            gid_map: map_line(uid, rustix::process::getegid().as_raw()),
            limits: [
                (libc::RLIMIT_AS, limits.address_space),
                (libc::RLIMIT_FSIZE, limits.file_size),
                (libc::RLIMIT_CPU, limits.cpu_seconds),
                (libc::RLIMIT_CORE, 0),
            ],
            nnp: true,
            ruleset: ruleset.as_ref().map_or(-1, |f| f.as_raw_fd()),
            seccomp,
        };
        let achieved = Containment {
            uid: uid_words,
            missing,
            privileged: privileged(uid, ns, euid),
            ..described(
                policy,
                ns,
                abi,
                (write.len(), reads.paths.len()),
                canaries,
                unix_refused,
            )
        };
        Prepared {
            achieved,
            owner,
            plan: Some(Arc::new(plan)),
            env: Some(vars),
            _ruleset: ruleset,
        }
    }

    /// Start `cmd` as planned, with HOME and TMPDIR set to `home`.
    pub(super) fn spawn(&self, mut cmd: Command, home: &Path) -> io::Result<Running> {
        if let Some(vars) = &self.env {
            let explicit: Vec<(OsString, Option<OsString>)> = cmd
                .get_envs()
                .map(|(k, v)| (k.to_owned(), v.map(|v| v.to_owned())))
                .collect();
            cmd.env_clear();
            cmd.envs(vars.iter().map(|(k, v)| (k, v)));
            for (k, v) in explicit {
                match v {
                    Some(v) => cmd.env(k, v),
                    None => cmd.env_remove(k),
                };
            }
        }
        for var in ["HOME", "TMPDIR", "TMP", "TEMP"] {
            cmd.env(var, home);
        }
        cmd.process_group(0);
        let Some(plan) = self.plan.clone() else {
            // SAFETY: one raw system call.
            unsafe {
                cmd.pre_exec(|| {
                    cloexec_from_3();
                    Ok(())
                });
            }
            let child = cmd.spawn()?;
            return Ok(Running::new(child, None, false));
        };
        let (report_r, report_w) = pipe()?;
        let report = report_w.as_raw_fd();
        let parent = std::process::id() as i32;
        // SAFETY: the closure makes raw system calls only, on data prepared before the fork.
        unsafe {
            cmd.pre_exec(move || enter(&plan, parent, report, false));
        }
        let spawned = cmd.spawn();
        drop(report_w);
        let child = spawned?;
        let mut buf = Vec::new();
        let _ = std::fs::File::from(report_r).read_to_end(&mut buf);
        // Messages (each one atomic write): `P` and the handler's PID from the waiter, `S` and
        // whether `pid_max` was set from the handler.
        let (mut inner, mut pid_max) = (None, false);
        let mut rest = buf.as_slice();
        while let Some((&tag, tail)) = rest.split_first() {
            match (tag, tail) {
                (b'P', [a, b, c, d, more @ ..]) => {
                    inner = Some(i32::from_le_bytes([*a, *b, *c, *d]));
                    rest = more;
                }
                (b'S', [flag, more @ ..]) => {
                    pid_max = *flag == 1;
                    rest = more;
                }
                _ => break,
            }
        }
        let mut running = Running::new(child, inner, self.achieved.namespaces.starts_with("none"));
        running.pid_max = pid_max;
        Ok(running)
    }
}

/// The rules of a containment in words (its uid and missing features left empty).
fn described(
    policy: &Policy,
    ns: Ns,
    abi: u32,
    (writes, reads): (usize, usize),
    canaries: usize,
    unix_refused: bool,
) -> Containment {
    let limits = policy.limits;
    Containment {
        enabled: true,
        namespaces: match ns {
            Ns::UserPid => "user+pid",
            Ns::Pid => "pid",
            Ns::None => super::policy::SUBREAPER,
        }
        .into(),
        no_new_privs: true,
        landlock_abi: abi,
        filesystem: if abi == 0 {
            "not restricted".into()
        } else {
            format!(
                "write: its scratch root{}; read: {} paths",
                if writes > 1 {
                    format!(" and {} more", writes - 1)
                } else {
                    " only".into()
                },
                reads
            )
        },
        network: format!(
            "{}; {}",
            match (abi >= 4, policy.connect_port) {
                (false, _) => "TCP not restricted".to_owned(),
                (true, None) => "TCP bind and connect denied".to_owned(),
                (true, Some(p)) => format!("TCP bind denied, connect to port {p} only"),
            },
            if unix_refused {
                "unix sockets refused (seccomp; socketpair allowed)"
            } else {
                "unix sockets by path not restricted"
            }
        ),
        scope: if abi >= 6 {
            "signals and abstract unix sockets scoped".into()
        } else {
            "signals and abstract unix sockets not scoped".into()
        },
        env: format!(
            "scrubbed ({}{}, {} canar{})",
            env::ALLOWED.join(" "),
            if policy.pass_env.is_empty() {
                String::new()
            } else {
                format!(" + {}", policy.pass_env.join(" "))
            },
            canaries,
            if canaries == 1 { "y" } else { "ies" }
        ),
        limits: format!(
            "address space {}, file size {}, CPU {} s, processes: {}",
            bytes(limits.address_space),
            bytes(limits.file_size),
            limits.cpu_seconds,
            if ns == Ns::None {
                "not bounded"
            } else {
                "its PID namespace"
            }
        ),
        missing: Vec::new(),
        uid: String::new(),
        privileged: false,
    }
}

/// Whether a handler run with `uid` in `ns` keeps root's rights over files
/// (`Containment::privileged`): with `--keep-root`, and as uid 0 that no user namespace maps to
/// `nobody`; `Mapped` in a user namespace has no capability outside it.
fn privileged(uid: Uid, ns: Ns, euid: u32) -> bool {
    match uid {
        Uid::KeepRoot => true,
        Uid::Mapped => ns != Ns::UserPid,
        Uid::Own => euid == 0,
        Uid::Nobody => false,
    }
}

/// The namespaces `uid` can have here (probed once per kind of plan).
fn choose_ns(uid: Uid, wanted: bool) -> Ns {
    if !wanted {
        return Ns::None;
    }
    let candidates: &[Ns] = match uid {
        Uid::Nobody | Uid::Mapped => &[Ns::UserPid, Ns::Pid],
        Uid::KeepRoot => &[Ns::Pid],
        Uid::Own => &[Ns::UserPid],
    };
    candidates
        .iter()
        .copied()
        .find(|ns| probe(uid, *ns))
        .unwrap_or(Ns::None)
}

/// The uid to drop to before the namespaces, the uid in words, and the owner to give the
/// scratch to.
#[allow(clippy::type_complexity)]
fn uid_words(
    uid: Uid,
    ns: Ns,
    euid: u32,
    why: Option<&Path>,
) -> (Option<(u32, u32)>, String, Option<(u32, u32)>) {
    match (uid, ns) {
        (Uid::Nobody, _) => (
            Some((NOBODY, NOBODY)),
            format!("{NOBODY} (nobody)"),
            Some((NOBODY, NOBODY)),
        ),
        (Uid::Mapped, Ns::UserPid) => (
            None,
            format!(
                "0 mapped to {NOBODY} in its user namespace, no capabilities ({})",
                why.map_or_else(
                    || "its files are not given to nobody".to_owned(),
                    |p| format!("{} is not readable by nobody", p.display())
                )
            ),
            None,
        ),
        (Uid::Mapped, _) => (None, "0 (no user namespace to map it)".into(), None),
        (Uid::KeepRoot, _) => (None, "0 (--keep-root)".into(), None),
        (Uid::Own, _) => (None, format!("{euid} (memcert's own)"), None),
    }
}

/// The one-line id map `inside outside 1`: `nobody` inside for a root handler (`nobody`
/// outside too when it dropped to it, else uid 0), the same id inside and out otherwise.
fn map_line(uid: Uid, own: u32) -> CString {
    let (inside, outside) = match uid {
        Uid::Nobody => (NOBODY, NOBODY),
        Uid::Mapped => (NOBODY, own),
        Uid::KeepRoot | Uid::Own => (own, own),
    };
    CString::new(format!("{inside} {outside} 1")).expect("no NUL in numbers")
}

/// Whether `ns` can be entered with `uid`'s plan here: a throwaway child runs the namespace
/// steps and exits without `exec`. Remembered per kind of plan.
fn probe(uid: Uid, ns: Ns) -> bool {
    static SEEN: OnceLock<Mutex<HashMap<(Uid, Ns), bool>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Mutex::default);
    if let Some(ok) = seen
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(uid, ns))
    {
        return *ok;
    }
    let euid = rustix::process::geteuid().as_raw();
    let plan = Arc::new(Plan {
        drop_to: (uid == Uid::Nobody).then_some((NOBODY, NOBODY)),
        ns,
        uid_map: map_line(uid, euid),
        gid_map: map_line(uid, rustix::process::getegid().as_raw()),
        limits: [(libc::RLIMIT_CORE, 0); 4],
        nnp: false,
        ruleset: -1,
        seccomp: None,
    });
    let parent = std::process::id() as i32;
    let program = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/"));
    let mut cmd = Command::new(program);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: as in `spawn`; the child exits without exec.
    unsafe {
        cmd.pre_exec(move || enter(&plan, parent, -1, true));
    }
    let ok = cmd
        .spawn()
        .and_then(|mut c| c.wait())
        .is_ok_and(|s| s.code() == Some(0));
    seen.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert((uid, ns), ok);
    ok
}

/// A pipe, both ends close-on-exec.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [-1; 2];
    // SAFETY: pipe2 writes two new descriptors into `fds`, which we then own.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(last());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

fn last() -> io::Error {
    io::Error::last_os_error()
}

/// Write `data` (NUL-terminated) to the file `path` (NUL-terminated).
unsafe fn write_file(path: &[u8], data: &[u8]) -> io::Result<()> {
    let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(last());
    }
    let len = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let n = libc::write(fd, data.as_ptr().cast(), len);
    libc::close(fd);
    if n < 0 {
        return Err(last());
    }
    Ok(())
}

/// `limits`, each lowered to memcert's own hard limit where that is lower: a process in a new
/// user namespace cannot raise a hard limit (`ulimit -v` below 16 GiB would otherwise keep
/// every contained handler from starting). The report shows the limits applied.
fn within_hard_limits(mut limits: Limits) -> Limits {
    let hard = |resource| {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given.
        let ok = unsafe { libc::getrlimit(resource, &mut r) } == 0;
        if ok && r.rlim_max != libc::RLIM_INFINITY {
            r.rlim_max
        } else {
            u64::MAX
        }
    };
    limits.address_space = limits.address_space.min(hard(libc::RLIMIT_AS));
    limits.file_size = limits.file_size.min(hard(libc::RLIMIT_FSIZE));
    limits.cpu_seconds = limits.cpu_seconds.min(hard(libc::RLIMIT_CPU));
    limits
}

/// Mark every descriptor from 3 up close-on-exec (`close_range` with `CLOSE_RANGE_CLOEXEC`):
/// what memcert inherited from its own parent (a CI wrapper's log on fd 9, a jobserver pipe)
/// never reaches the handler, while std's exec-error pipe still works until the exec.
unsafe fn cloexec_from_3() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC);
}

/// Send one message to memcert on the report pipe.
unsafe fn tell(report: i32, msg: &[u8]) {
    if report >= 0 {
        libc::write(report, msg.as_ptr().cast(), msg.len());
    }
}

/// Between fork and exec, in memcert's child: the namespaces, then (as the handler) limits,
/// `no_new_privs` and Landlock. With `probe`, exit 0 once the namespaces are entered.
///
/// Only raw system calls on `plan`'s prepared data: no allocation.
fn enter(plan: &Plan, parent: i32, report: i32, probe: bool) -> io::Result<()> {
    // SAFETY: raw system calls on prepared data, in a single-threaded child.
    unsafe {
        // memcert makes itself not dumpable (`attack::watch`); the child is dumpable, as a fork
        // of a dumpable process is, so that its `/proc/self` files (the uid and gid maps below)
        // stay its own.
        if libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) != 0 {
            return Err(last());
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
            return Err(last());
        }
        if libc::getppid() != parent {
            libc::_exit(1);
        }
        if plan.ns == Ns::Pid && libc::unshare(libc::CLONE_NEWPID) != 0 {
            return Err(last());
        }
        if let Some((uid, gid)) = plan.drop_to {
            if libc::syscall(libc::SYS_setgroups, 0, std::ptr::null::<libc::gid_t>()) != 0
                || libc::syscall(libc::SYS_setresgid, gid, gid, gid) != 0
                || libc::syscall(libc::SYS_setresuid, uid, uid, uid) != 0
                || libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) != 0
            {
                return Err(last());
            }
        }
        if plan.ns == Ns::UserPid {
            if libc::unshare(libc::CLONE_NEWUSER) != 0 {
                return Err(last());
            }
            write_file(b"/proc/self/setgroups\0", b"deny\0")?;
            write_file(b"/proc/self/uid_map\0", plan.uid_map.as_bytes_with_nul())?;
            write_file(b"/proc/self/gid_map\0", plan.gid_map.as_bytes_with_nul())?;
            if libc::unshare(libc::CLONE_NEWPID) != 0 {
                return Err(last());
            }
        }
        let mut pid_max = false;
        if plan.ns != Ns::None {
            // The init's status pipe: the handler's wait status, from the init to the waiter.
            let mut status = [-1; 2];
            if libc::pipe2(status.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return Err(last());
            }
            let init_pid = clone()?;
            if init_pid > 0 {
                libc::close(status[1]);
                wait_for(init_pid, report, status[0], probe);
            }
            // The init (PID 1) of the new namespace.
            libc::close(status[0]);
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(last());
            }
            if probe {
                libc::_exit(0);
            }
            pid_max = write_file(b"/proc/sys/kernel/pid_max\0", PID_MAX).is_ok();
            let handler = clone()?;
            if handler > 0 {
                init(handler, status[1]);
            }
            // The handler (PID 2).
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(last());
            }
        } else if probe {
            libc::_exit(0);
        }
        for (resource, limit) in plan.limits {
            let r = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(resource, &r) != 0 {
                return Err(last());
            }
        }
        if plan.nnp && libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(last());
        }
        if plan.ruleset >= 0
            && libc::syscall(libc::SYS_landlock_restrict_self, plan.ruleset, 0) != 0
        {
            return Err(last());
        }
        if let Some(filter) = &plan.seccomp {
            seccomp::install(filter)?;
        }
        tell(report, &[b'S', u8::from(pid_max)]);
        cloexec_from_3();
        Ok(())
    }
}

/// `fork` as a raw `clone`: the child's PID in the parent, 0 in the child.
unsafe fn clone() -> io::Result<libc::pid_t> {
    let pid = libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_ulong, 0, 0, 0, 0);
    if pid < 0 {
        return Err(last());
    }
    Ok(pid as libc::pid_t)
}

/// Wait for `pid` (retrying on `EINTR`); its wait status.
unsafe fn reap(pid: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    loop {
        let r = libc::waitpid(pid, &mut status, 0);
        if r == pid {
            return status;
        }
        if r < 0 && *libc::__errno_location() != libc::EINTR {
            libc::_exit(125);
        }
    }
}

/// The init of the handler's PID namespace: close everything but the status pipe, reap every
/// process given to it, and when the handler ends, send its wait status to the waiter and exit,
/// so that the kernel kills whatever else is left in the namespace. (The handler is not the
/// init itself: an init ignores the signals it sends itself, so a handler that kills itself
/// would live on.)
unsafe fn init(handler: libc::pid_t, status: i32) -> ! {
    if status > 0 {
        libc::syscall(libc::SYS_close_range, 0u32, (status - 1) as u32, 0u32);
    }
    libc::syscall(libc::SYS_close_range, (status + 1) as u32, u32::MAX, 0u32);
    loop {
        let mut st = 0;
        let r = libc::waitpid(-1, &mut st, 0);
        if r == handler {
            let b = st.to_le_bytes();
            libc::write(status, b.as_ptr().cast(), b.len());
            libc::_exit(0);
        }
        if r < 0 && *libc::__errno_location() != libc::EINTR {
            libc::_exit(125);
        }
    }
}

/// The waiter: tell memcert the init's PID, close everything but the status pipe, wait for the
/// init and exit as the handler did (as the init did when it sent nothing).
unsafe fn wait_for(init: libc::pid_t, report: i32, status_pipe: i32, probe: bool) -> ! {
    let p = init.to_le_bytes();
    tell(report, &[b'P', p[0], p[1], p[2], p[3]]);
    if status_pipe > 0 {
        libc::syscall(libc::SYS_close_range, 0u32, (status_pipe - 1) as u32, 0u32);
    }
    libc::syscall(
        libc::SYS_close_range,
        (status_pipe + 1) as u32,
        u32::MAX,
        0u32,
    );
    let mut status = reap(init);
    let mut b = [0u8; 4];
    if libc::read(status_pipe, b.as_mut_ptr().cast(), 4) == 4 {
        status = libc::c_int::from_le_bytes(b);
    }
    if probe {
        libc::_exit(if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            1
        });
    }
    if libc::WIFEXITED(status) {
        libc::_exit(libc::WEXITSTATUS(status));
    }
    let sig = libc::WTERMSIG(status);
    libc::prctl(libc::PR_SET_PDEATHSIG, 0, 0, 0, 0);
    libc::signal(sig, libc::SIG_DFL);
    libc::kill(libc::getpid(), sig);
    libc::_exit(128 + sig);
}

impl Running {
    /// A process started without containment (no scratch folder could be made): killed with
    /// its process group.
    pub fn uncontained(child: Child) -> Running {
        Running::new(child, None, false)
    }

    fn new(child: Child, inner: Option<i32>, by_hand: bool) -> Running {
        let start = super::tree::proc_stat(child.id() as i32).map_or(0, |s| s.start);
        Running {
            child,
            inner,
            by_hand,
            start,
            done: false,
            pid_max: false,
        }
    }

    /// Kill the handler and every process it started; when it returns, they are gone (in a PID
    /// namespace) or killed (the subreaper fallback).
    pub fn kill(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        let pid = self.child.id() as i32;
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            // Exited and reaped: its namespace is gone; only the fallback has orphans to find.
            if self.by_hand {
                super::tree::kill_descendants(pid, self.start);
            }
            return;
        }
        if let Some(inner) = self.inner {
            // SAFETY: kill with constant signal on the init's PID, which the waiter reported; the
            // waiter has not been reaped, so the init's PID is not reused unless it exited
            // already.
            unsafe { libc::kill(inner, libc::SIGKILL) };
            // The waiter exits once the whole namespace is gone.
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        if let Some(p) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
        if self.by_hand {
            super::tree::kill_descendants(pid, self.start);
        }
        let _ = self.child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}
