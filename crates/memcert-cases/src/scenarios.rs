//! Planted filesystem scenarios: what a third party can leave inside the memory root, as named,
//! documented data the sandbox lays out.
//!
//! The six commands cannot make links, sockets or permission bits, but the store is a folder on a
//! host: a sync client, another local process or a restored backup can leave there anything a
//! filesystem holds, and the handler meets it on its next command. Each [`Scenario`] names one
//! such situation, says who leaves it and which spec rows and bugs it answers, and holds the
//! [`Fs`] items that plant it (`attack::sandbox` lays them out before the target's reset). The
//! cases that send commands into them are `scenario/<scenario id>/...` in
//! `suite::catalog::scenario`.
//!
//! Older scenarios are written inline in their cases: links to the outside (absolute, relative,
//! intermediate, dangling, looping), in-root links, hard links and FIFOs in `symlink/...`, and a
//! directory swapped with a link while commands run in `race/...`. The hazards every command
//! meets (`hazard/<hazard>/<command>` in `catalog/hazard.rs`: a hard link to an outside canary
//! ([`HARD_LINK`]), a FIFO ([`FIFO`]), a socket, a character device ([`CHAR_DEVICE`], planted only
//! where `mknod` succeeds on a filesystem not mounted `nodev`) and a sparse file of 64 MiB
//! ([`HUGE_FILE`])) are planted from the constants here; its other hazards (links to an outside
//! file and folder and to a memory file, a file with mode 000, a file 32 folders deep and one
//! among 300, a linked root) plant [`Fs::Symlink`], [`Fs::Mode`], [`Fs::DeepChain`],
//! [`Fs::ManyFiles`] and [`root_symlink`]'s setup.
//!
//! | scenario | planted | source |
//! |---|---|---|
//! | [`sibling_link_relative`], [`sibling_link_absolute`] | a link to `<base>/memories_evil`, the folder beside the root whose name starts like it | spec:3/S-1, bug:B04, bug:B05 |
//! | [`socket`] | a UNIX domain socket file | spec:2.1/C27 (FIFO), spec:3/S-1 |
//! | [`no_permission_file`], [`no_permission_dir`] | a file, a folder with mode 000 | bug:B07 (raw `EACCES` errors carry the host path) |
//! | [`read_only_dir`] | a folder with mode 0500 | bug:B07 |
//! | [`non_utf8_name`] | a file name that is not UTF-8 | spec:2.1/D3, spec:2.1/D5 |
//! | [`deep_chain`] | 300 nested folders | bug:B14, spec:3/P-10 |
//! | [`many_entries`] | 5,000 files in one folder | spec:2.1/D3 |
//! | [`root_symlink`] | the store root itself replaced by a link to the outside | bug:B10 |
//! | [`root_fifo`], [`root_file`] | the store root itself replaced by a FIFO, by a regular file | bug:B10 |
//!
//! # Guarantees
//! - A scenario plants only inside its case's sandbox, and every scenario of [`all`] is used by
//!   at least one case (tested below).
//!
//! # Non-guarantees
//! - Linux only: sockets are made with `mknod(S_IFSOCK)`, names are bytes.
//! - Permission bits do not bind a process running as root. The runner SKIPs the cases of
//!   [`no_permission_file`], [`no_permission_dir`] and [`read_only_dir`]
//!   (`Case::needs_unprivileged`) when the handler keeps root's rights: `--no-contain` or
//!   `--keep-root` as root, or an in-process handler of a root memcert. A contained handler of a
//!   root memcert runs as `nobody` (or as uid 0 mapped to it, without capabilities), and they run
//!   (`certify::skip_reason_for`).

use crate::{Fs, LinkTo};

/// A named situation a third party can leave in the store. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Slug, the middle of the ids of the cases that use it (`scenario/<id>/<command>`).
    pub id: &'static str,
    /// Who leaves this in a real store.
    pub left_by: &'static str,
    /// What is planted, in words.
    pub what: &'static str,
    /// Spec rows (`spec:3/S-1`) and bug ids (`bug:B10`) it answers.
    pub source: &'static [&'static str],
    /// The items, in planting order.
    pub setup: Vec<Fs>,
}

/// The folder beside the root that sibling links point to (canaries inside, named with the
/// token too, so a listing through the link is caught).
pub const SIBLING: &str = "memories_evil";
/// The relative sibling link, `-> ../memories_evil`.
pub const SIBLING_LINK_RELATIVE: &str = "/memories/sib_rel";
/// The absolute sibling link, `-> <base>/memories_evil`.
pub const SIBLING_LINK_ABSOLUTE: &str = "/memories/sib_abs";
/// The planted socket.
pub const SOCKET: &str = "/memories/sock";
/// The file with mode 000.
pub const LOCKED_FILE: &str = "/memories/locked.txt";
/// The folder with mode 000, holding `a.txt`.
pub const LOCKED_DIR: &str = "/memories/locked";
/// The folder with mode 0500, holding `a.txt`.
pub const READ_ONLY_DIR: &str = "/memories/ro";
/// Content of the files inside the locked and read-only folders, and of the locked file.
pub const LOCKED_TEXT: &str = "locked\n";
/// The folder holding `ok.txt` and a file whose name is [`NON_UTF8_NAME`].
pub const NON_UTF8_DIR: &str = "/memories/raw";
/// A name that is not UTF-8: `bad`, the byte 0xFF, `.txt`.
pub const NON_UTF8_NAME: &[u8] = b"bad\xff.txt";
/// The top of the deep chain.
pub const DEEP_TOP: &str = "/memories/deep";
/// Levels of the deep chain below [`DEEP_TOP`]: deeper than a handler's descriptor budget or a
/// recursive walk's comfort, within `PATH_MAX` (`/d` x 300 is 600 bytes).
pub const DEEP_DEPTH: usize = 300;
/// The folder with many files.
pub const MANY_DIR: &str = "/memories/many";
/// Files in [`MANY_DIR`].
pub const MANY_COUNT: usize = 5000;
/// Permission bits of [`READ_ONLY_DIR`].
pub const READ_ONLY_MODE: u32 = 0o500;

/// The planted hard link of the `hazard/hardlink-outside/*` cases (to `outside/hard-source.txt`).
pub const HARD_LINK: &str = "/memories/hard.txt";
/// The planted FIFO of the `hazard/fifo/*` cases.
pub const FIFO: &str = "/memories/pipe.md";
/// The planted character device of the `hazard/char-device/*` cases.
pub const CHAR_DEVICE: &str = "/memories/zero.md";
/// Its device number, major and minor: 1:5, what `/dev/zero` is on Linux (reads never end, so
/// an unbounded read shows).
pub const CHAR_DEVICE_NUMBER: (u32, u32) = (1, 5);
/// The planted sparse file of the `hazard/huge-file/*` cases.
pub const HUGE_FILE: &str = "/memories/huge.md";
/// Its length in bytes: 64 MiB, four times the 16 MiB a handler may read for one call
/// (`bug:B17`), all zero and sparse (no block written).
pub const HUGE_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The virtual path of the file at the bottom of the deep chain.
pub fn deep_bottom() -> String {
    format!("{DEEP_TOP}{}/bottom.txt", "/d".repeat(DEEP_DEPTH))
}

/// The name of the `i`-th file of [`MANY_DIR`] (`f00000.txt` ...), as the sandbox plants it.
pub fn many_name(i: usize) -> String {
    format!("f{i:05}.txt")
}

/// A relative link to the folder beside the root: `/memories/sib_rel -> ../memories_evil`. A
/// prefix check without a separator (`startsWith(<base>/memories)`) takes its real path for a
/// path inside the root (bug:B05).
pub fn sibling_link_relative() -> Scenario {
    Scenario {
        id: "sibling-link/relative",
        left_by: "a sync client or a script that links two stores side by side",
        what: "/memories/sib_rel -> ../memories_evil (relative link text)",
        source: &["spec:3/S-1", "bug:B04", "bug:B05"],
        setup: vec![Fs::Symlink {
            path: SIBLING_LINK_RELATIVE.into(),
            target: LinkTo::Raw(format!("../{SIBLING}")),
        }],
    }
}

/// An absolute link to the folder beside the root: `/memories/sib_abs -> <base>/memories_evil`.
pub fn sibling_link_absolute() -> Scenario {
    Scenario {
        id: "sibling-link/absolute",
        left_by: "a sync client or a script that links two stores side by side",
        what: "/memories/sib_abs -> <base>/memories_evil (absolute link text)",
        source: &["spec:3/S-1", "bug:B04", "bug:B05"],
        setup: vec![Fs::Symlink {
            path: SIBLING_LINK_ABSOLUTE.into(),
            target: LinkTo::Sibling(SIBLING.into()),
        }],
    }
}

/// A UNIX domain socket file with nothing listening: opening it fails at once (`ENXIO`), but a
/// handler that reads before it checks the type, or lists sizes by following `stat`, meets it.
pub fn socket() -> Scenario {
    Scenario {
        id: "socket",
        left_by: "a local server (an editor, an agent daemon) that bound its socket in the store",
        what: "/memories/sock, a socket, beside /memories/notes.txt",
        source: &["spec:2.1/C27", "bug:B17"],
        setup: vec![
            Fs::File {
                path: "/memories/notes.txt".into(),
                content: b"notes\n".to_vec(),
            },
            Fs::Socket {
                path: SOCKET.into(),
            },
        ],
    }
}

/// A file with mode 000: every open fails with `EACCES`, whose raw message carries the host
/// path in some runtimes (bug:B07).
pub fn no_permission_file() -> Scenario {
    Scenario {
        id: "no-permission/file",
        left_by: "a restored backup or another user's process (umask, chmod)",
        what: "/memories/locked.txt with mode 000",
        source: &["bug:B07"],
        setup: vec![
            Fs::File {
                path: LOCKED_FILE.into(),
                content: LOCKED_TEXT.as_bytes().to_vec(),
            },
            Fs::Mode {
                path: LOCKED_FILE.into(),
                mode: 0o000,
            },
        ],
    }
}

/// A folder with mode 000 holding `a.txt`: it can be named and `lstat`ed, not listed or entered.
pub fn no_permission_dir() -> Scenario {
    Scenario {
        id: "no-permission/dir",
        left_by: "a restored backup or another user's process (umask, chmod)",
        what: "/memories/locked/ (holding a.txt) with mode 000, beside /memories/notes.txt",
        source: &["bug:B07"],
        setup: vec![
            Fs::File {
                path: "/memories/notes.txt".into(),
                content: b"notes\n".to_vec(),
            },
            Fs::File {
                path: format!("{LOCKED_DIR}/a.txt"),
                content: LOCKED_TEXT.as_bytes().to_vec(),
            },
            Fs::Mode {
                path: LOCKED_DIR.into(),
                mode: 0o000,
            },
        ],
    }
}

/// A read-only folder (mode 0500) holding `a.txt`: it can be listed and read, but nothing can be
/// created, removed or renamed in it, so a write must fail cleanly and leave no debris.
pub fn read_only_dir() -> Scenario {
    Scenario {
        id: "read-only-dir",
        left_by: "a restored backup or a sync client that keeps a shared folder read-only",
        what: "/memories/ro/ (holding a.txt) with mode 0500, and /memories/a.md",
        source: &["bug:B07"],
        setup: vec![
            Fs::File {
                path: "/memories/a.md".into(),
                content: b"a\n".to_vec(),
            },
            Fs::File {
                path: format!("{READ_ONLY_DIR}/a.txt"),
                content: LOCKED_TEXT.as_bytes().to_vec(),
            },
            Fs::Mode {
                path: READ_ONLY_DIR.into(),
                mode: READ_ONLY_MODE,
            },
        ],
    }
}

/// A folder holding `ok.txt` and a file whose name is not UTF-8 ([`NON_UTF8_NAME`]), which no
/// JSON path can spell: runtimes that decode names strictly crash, lossy ones show U+FFFD.
pub fn non_utf8_name() -> Scenario {
    Scenario {
        id: "non-utf8-name",
        left_by: "a sync client or an archive from a system with another name encoding (Latin-1)",
        what: "/memories/raw/ holding ok.txt and bad<0xFF>.txt",
        source: &["spec:2.1/D3", "spec:2.1/D5"],
        setup: vec![
            Fs::File {
                path: format!("{NON_UTF8_DIR}/ok.txt"),
                content: b"ok\n".to_vec(),
            },
            Fs::RawName {
                dir: NON_UTF8_DIR.into(),
                name: NON_UTF8_NAME.to_vec(),
                content: b"x\n".to_vec(),
            },
        ],
    }
}

/// [`DEEP_DEPTH`] nested folders under [`DEEP_TOP`] with `bottom.txt` at the bottom: a
/// recursive delete or walk that holds one descriptor or stack frame per level runs out.
pub fn deep_chain() -> Scenario {
    Scenario {
        id: "deep-chain",
        left_by: "a restored backup, or a tree built up by renames over time",
        what: "/memories/deep/d/d/.../d/bottom.txt, 300 folders deep, beside /memories/keep.txt",
        source: &["bug:B14", "spec:3/P-10"],
        setup: vec![
            Fs::File {
                path: "/memories/keep.txt".into(),
                content: b"keep me\n".to_vec(),
            },
            Fs::DeepChain {
                path: DEEP_TOP.into(),
                depth: DEEP_DEPTH,
            },
        ],
    }
}

/// [`MANY_COUNT`] files in one folder: a listing or delete must stay bounded in time.
pub fn many_entries() -> Scenario {
    Scenario {
        id: "many-entries",
        left_by: "a sync client or a runaway process that writes one file per event",
        what: "/memories/many/ holding f00000.txt .. f04999.txt, each `x\\n`",
        source: &["spec:2.1/D3"],
        setup: vec![Fs::ManyFiles {
            dir: MANY_DIR.into(),
            count: MANY_COUNT,
        }],
    }
}

/// The store root itself replaced by a link to the sandbox's `outside/` folder (canaries inside)
/// before the handler starts: a handler that resolves or follows its root stores everything
/// outside (bug:B10, and the related pi-subagents #244 / qwen-code #6842 reports).
pub fn root_symlink() -> Scenario {
    Scenario {
        id: "root-symlink",
        left_by:
            "a dotfile manager, a sync client or an operator who moved the store and linked it",
        what: "<base>/memories -> <base>/outside (the store root is a link)",
        source: &["bug:B10"],
        setup: vec![Fs::RootSymlink {
            target: LinkTo::Outside(String::new()),
        }],
    }
}

/// The text of the regular file that replaces the store root in [`root_file`].
pub const ROOT_FILE_TEXT: &str = "a file where the memory folder should be\n";

/// The store root itself replaced by a FIFO (named pipe) before the handler starts: a handler
/// that opens its root as a file blocks; one that makes the folder over it fails.
pub fn root_fifo() -> Scenario {
    Scenario {
        id: "root-fifo",
        left_by: "another program that made a named pipe where the store folder belongs",
        what: "<base>/memories is a FIFO",
        source: &["bug:B10"],
        setup: vec![Fs::RootFifo],
    }
}

/// The store root itself replaced by a regular file ([`ROOT_FILE_TEXT`]) before the handler
/// starts: a handler must neither serve it as a folder nor replace it.
pub fn root_file() -> Scenario {
    Scenario {
        id: "root-file",
        left_by: "a user or a program that saved a file under the store folder's name",
        what: "<base>/memories is a regular file",
        source: &["bug:B10"],
        setup: vec![Fs::RootFile {
            content: ROOT_FILE_TEXT.as_bytes().to_vec(),
        }],
    }
}

/// Every scenario of this module, in the order of the table in the module docs.
pub fn all() -> Vec<Scenario> {
    vec![
        sibling_link_relative(),
        sibling_link_absolute(),
        socket(),
        no_permission_file(),
        no_permission_dir(),
        read_only_dir(),
        non_utf8_name(),
        deep_chain(),
        many_entries(),
        root_symlink(),
        root_fifo(),
        root_file(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    #[test]
    fn every_scenario_is_used_by_a_case_that_plants_it_first() {
        let cases = catalog::all();
        for s in all() {
            let users: Vec<_> = cases
                .iter()
                .filter(|c| c.id.starts_with(&format!("scenario/{}/", s.id)))
                .collect();
            assert!(!users.is_empty(), "no case uses {}", s.id);
            for c in users {
                assert!(c.setup.starts_with(&s.setup), "{}", c.id);
                assert!(c.source.iter().any(|x| s.source.contains(&x.as_str())));
            }
        }
    }
}
