//! The fallback where no PID namespace can be made: memcert is a child subreaper
//! (`PR_SET_CHILD_SUBREAPER`), so a process the handler started and then left (`setsid` and
//! exit) becomes memcert's child instead of init's; killing the handler kills its descendants
//! and those orphans.

use std::collections::BTreeSet;

/// A process as `/proc/<pid>/stat` shows it (fields 4, 5, 22 and 3 of proc(5)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    /// Its parent's PID.
    pub ppid: i32,
    /// Its process group.
    pub pgrp: i32,
    /// When it started, in clock ticks after boot: with the PID, a process's identity.
    pub start: u64,
    /// Whether it is a zombie (ended, not yet reaped).
    pub zombie: bool,
}

/// `/proc/<pid>/stat` of `pid`; `None` when it is gone or unreadable.
pub fn proc_stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcStat {
        zombie: *f.first()? == "Z",
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

/// Every process `/proc` lists now, with its [`ProcStat`].
pub fn processes() -> Vec<(i32, ProcStat)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|p| proc_stat(p).map(|s| (p, s)))
        .collect()
}

/// Kill every process descended from `root`, and every child of memcert started since `start`
/// other than `root` (an orphan of the handler's, given to memcert as subreaper), until none is
/// left (a few rounds); reap the orphans.
pub(super) fn kill_descendants(root: i32, start: u64) {
    let me = std::process::id() as i32;
    for _ in 0..20 {
        let procs = processes();
        let mut tree: BTreeSet<i32> = procs
            .iter()
            .filter(|(p, s)| s.ppid == me && *p != root && s.start >= start)
            .map(|(p, _)| *p)
            .collect();
        tree.insert(root);
        loop {
            let before = tree.len();
            for (p, s) in &procs {
                if tree.contains(&s.ppid) {
                    tree.insert(*p);
                }
            }
            if tree.len() == before {
                break;
            }
        }
        tree.remove(&root);
        if tree.is_empty() {
            return;
        }
        for p in &tree {
            // SAFETY: kill with a constant signal; waitpid on our own children only.
            unsafe {
                libc::kill(*p, libc::SIGKILL);
            }
        }
        for (p, s) in &procs {
            if s.ppid == me && tree.contains(p) {
                // SAFETY: as above.
                unsafe {
                    libc::waitpid(*p, std::ptr::null_mut(), 0);
                }
            }
        }
    }
}
