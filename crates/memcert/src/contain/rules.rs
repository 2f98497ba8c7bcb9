//! The Landlock ruleset, built in memcert (the `landlock` crate) before the handler is started,
//! and applied in the handler's process just before `exec` (`landlock_restrict_self` on the
//! ruleset's file descriptor: no allocation between fork and exec).

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, ABI,
};

/// The Landlock ABI this kernel speaks (0: none), asked of the kernel itself
/// (`landlock_create_ruleset` with `LANDLOCK_CREATE_RULESET_VERSION`).
pub(super) fn kernel_abi() -> u32 {
    // SAFETY: the version query takes no attribute and returns a number or -1.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    u32::try_from(v).unwrap_or(0)
}

/// The `landlock` crate's ABI for a kernel ABI number (capped at the newest the crate knows).
fn abi_of(n: u32) -> ABI {
    match n {
        0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        _ => ABI::V6,
    }
}

/// What the ruleset allows.
pub(super) struct Wanted<'a> {
    /// Paths it may read (and execute).
    pub(super) read: &'a [PathBuf],
    /// Paths it may write (and read).
    pub(super) write: &'a [PathBuf],
    /// The one TCP port it may connect to.
    pub(super) connect_port: Option<u16>,
}

/// A ruleset for `abi` (from [`kernel_abi`]) allowing `wanted`, as the file descriptor to
/// restrict with.
///
/// # Errors
/// The `landlock` crate's error, in words.
pub(super) fn build(abi: u32, wanted: &Wanted) -> Result<OwnedFd, String> {
    let abi = abi_of(abi);
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .map_err(|e| e.to_string())?;
    if abi as u32 >= 4 {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| e.to_string())?;
    }
    if abi as u32 >= 6 {
        ruleset = ruleset
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(|e| e.to_string())?;
    }
    let mut created = ruleset.create().map_err(|e| e.to_string())?;
    let rule = |path: &Path, access: BitFlags<AccessFs>| -> Option<PathBeneath<PathFd>> {
        let fd = PathFd::new(path).ok()?;
        let access = if path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(abi)
        };
        Some(PathBeneath::new(fd, access))
    };
    for p in wanted.read {
        if let Some(r) = rule(p, read) {
            created = created.add_rule(r).map_err(|e| e.to_string())?;
        }
    }
    for p in wanted
        .write
        .iter()
        .map(PathBuf::as_path)
        .chain([Path::new("/dev/null")])
    {
        if let Some(r) = rule(p, all) {
            created = created.add_rule(r).map_err(|e| e.to_string())?;
        }
    }
    if let (Some(port), true) = (wanted.connect_port, abi as u32 >= 4) {
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(|e| e.to_string())?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| "Landlock is not supported here".to_owned())
}
