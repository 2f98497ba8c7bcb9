//! The decoy HOME: the handler's HOME and TMPDIR, holding canary credentials where tools look
//! for real ones (`.ssh/id_ed25519`, `.aws/credentials`, `.netrc`). Every value holds the cell's
//! token, so a reply that carries one shows that the handler read credentials.

use std::io;
use std::path::Path;

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt as _};
use cap_std::fs::{Dir, OpenOptionsExt as _};

/// The decoy credential files, relative to HOME, and their text given the token.
pub(super) fn files(token: &str) -> [(&'static str, String); 3] {
    [
        (
            ".ssh/id_ed25519",
            format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{token}-ssh-key\n-----END OPENSSH PRIVATE KEY-----\n"
            ),
        ),
        (
            ".aws/credentials",
            format!(
                "[default]\naws_access_key_id = AKIA{token}\naws_secret_access_key = {token}-aws-secret\n"
            ),
        ),
        (
            ".netrc",
            format!("machine api.example.com\n  login memcert\n  password {token}-netrc\n"),
        ),
    ]
}

/// Lay the decoy credentials of `token` out in the folder `home` (folders 0700, files 0600,
/// made new, never through a link).
///
/// # Errors
/// Any I/O error of making them.
pub(super) fn lay_out(home: &Dir, token: &str) -> io::Result<()> {
    for (rel, text) in files(token) {
        let rel = Path::new(rel);
        let dir = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) => crate::scratch::create_nofollow(home, parent)?,
            None => home.try_clone()?,
        };
        let mut o = cap_std::fs::OpenOptions::new();
        o.write(true).create_new(true).mode(0o600);
        o.follow(FollowSymlinks::No);
        let name = rel.file_name().unwrap_or_default();
        io::Write::write_all(&mut dir.open_with(name, &o)?, text.as_bytes())?;
    }
    Ok(())
}

/// The decoy files under `home` ([`files`]) as `~/<path>` and an `O_PATH | O_NOFOLLOW` handle
/// each, opened through `home`'s handle; a decoy the handler removed or replaced by a link or a
/// folder is left out.
pub(super) fn open_decoys(home: &Dir) -> Vec<(std::path::PathBuf, std::os::fd::OwnedFd)> {
    use rustix::fs::{openat, FileType, Mode, OFlags};
    let mut out = Vec::new();
    for (rel, _) in files("") {
        let rel = Path::new(rel);
        let mut dir: std::os::fd::OwnedFd = match home.try_clone() {
            Ok(d) => d.into_std_file().into(),
            Err(_) => return out,
        };
        let parts: Vec<_> = rel.components().collect();
        let mut ok = true;
        for part in &parts[..parts.len() - 1] {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match openat(&dir, part.as_os_str(), flags, Mode::empty()) {
                Ok(d) => dir = d,
                Err(_) => {
                    ok = false;
                    break;
                }
            }
        }
        let name = rel.file_name().unwrap_or_default();
        let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        if let (true, Ok(fd)) = (ok, openat(&dir, name, flags, Mode::empty())) {
            let regular = rustix::fs::fstat(&fd)
                .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile);
            if regular {
                out.push((Path::new("~").join(rel), fd));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_decoy_holds_the_token() {
        for (_, text) in super::files("TOKEN-1") {
            assert!(text.contains("TOKEN-1"), "{text}");
        }
    }
}
