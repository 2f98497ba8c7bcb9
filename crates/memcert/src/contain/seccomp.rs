//! The one seccomp filter a contained handler gets: `socket(AF_UNIX, ...)` fails with `EACCES`.
//!
//! Landlock does not govern connecting to a unix socket by path, and a handler run as uid 0
//! mapped into its user namespace (an app; a Python under `/root`) passes the permission check
//! of root's sockets (`docker.sock`, a database's socket) as their owner. Refusing the socket
//! call itself closes that; `socketpair` (what Python's asyncio and Node's libuv use for their
//! own pipes) stays allowed, and so does everything else. System calls of another ABI (i386
//! through `int 0x80`, x32) fail with `ENOSYS`, so the filter cannot be stepped around.

use std::fmt;
use std::io;

/// `offsetof(struct seccomp_data, nr)`, `arch`, `args[0]` (its low 32 bits, little-endian).
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0: u32 = 16;
const LD_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const RET: u16 = 0x06; // BPF_RET | BPF_K
const ALLOW: u32 = 0x7fff_0000; // SECCOMP_RET_ALLOW
const ERRNO: u32 = 0x0005_0000; // SECCOMP_RET_ERRNO
/// x32 system calls carry this bit in their number (`__X32_SYSCALL_BIT`).
const X32_BIT: u32 = 0x4000_0000;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: Option<u32> = Some(0xC000_003E);
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: Option<u32> = Some(0xC000_00B7);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const AUDIT_ARCH: Option<u32> = None;

/// The filter program, built before the fork (the code between fork and exec allocates
/// nothing).
pub(super) struct Filter(Vec<libc::sock_filter>);

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Filter({} instructions)", self.0.len())
    }
}

fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The filter refusing `socket(AF_UNIX, ...)`, or `None` on an architecture it does not know.
pub(super) fn no_unix_sockets() -> Option<Filter> {
    let arch = AUDIT_ARCH?;
    Some(Filter(vec![
        /* 0 */ op(LD_ABS, 0, 0, ARCH),
        /* 1 */ op(JEQ, 0, 6, arch), // another ABI: 8
        /* 2 */ op(LD_ABS, 0, 0, NR),
        /* 3 */ op(JGE, 4, 0, X32_BIT), // x32: 8
        /* 4 */ op(JEQ, 0, 2, libc::SYS_socket as u32), // not socket: 7
        /* 5 */ op(LD_ABS, 0, 0, ARG0),
        /* 6 */ op(JEQ, 2, 0, libc::AF_UNIX as u32), // AF_UNIX: 9
        /* 7 */ op(RET, 0, 0, ALLOW),
        /* 8 */ op(RET, 0, 0, ERRNO | libc::ENOSYS as u32),
        /* 9 */ op(RET, 0, 0, ERRNO | libc::EACCES as u32),
    ]))
}

/// Install `filter` on the calling thread (after `no_new_privs`).
///
/// # Safety
/// A raw `prctl`; call between fork and exec, in the single-threaded child.
pub(super) unsafe fn install(filter: &Filter) -> io::Result<()> {
    let prog = libc::sock_fprog {
        len: filter.0.len() as u16,
        filter: filter.0.as_ptr().cast_mut(),
    };
    if libc::prctl(
        libc::PR_SET_SECCOMP,
        libc::SECCOMP_MODE_FILTER as libc::c_ulong,
        &prog as *const libc::sock_fprog,
    ) != 0
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
