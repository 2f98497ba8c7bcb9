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

#[cfg(test)]
mod tests {
    #[test]
    fn every_decoy_holds_the_token() {
        for (_, text) in super::files("TOKEN-1") {
            assert!(text.contains("TOKEN-1"), "{text}");
        }
    }
}
