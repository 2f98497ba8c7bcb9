//! The fallback where no PID namespace can be made: memcert is a child subreaper
//! (`PR_SET_CHILD_SUBREAPER`), so a process the handler started and then left (`setsid` and
//! exit) becomes memcert's child instead of init's; killing the handler kills its descendants
//! and those orphans.

use std::collections::BTreeSet;

/// A process as `/proc/<pid>/stat` shows it.
pub(super) struct Stat {
    pub(super) ppid: i32,
    pub(super) start: u64,
}

/// `/proc/<pid>/stat` of `pid`.
pub(super) fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(Stat {
        ppid: f.get(1)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

/// Kill every process descended from `root`, and every child of memcert started since `start`
/// other than `root` (an orphan of the handler's, given to memcert as subreaper), until none is
/// left (a few rounds); reap the orphans.
pub(super) fn kill_descendants(root: i32, start: u64) {
    let me = std::process::id() as i32;
    for _ in 0..20 {
        let procs: Vec<(i32, Stat)> = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(|p| stat(p).map(|s| (p, s)))
            .collect();
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
