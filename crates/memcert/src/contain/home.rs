//! The decoy HOME: the handler's HOME and TMPDIR, holding canary credentials where tools look
//! for real ones (`.ssh/id_ed25519`, `.aws/credentials`, `.netrc`). Every value holds the cell's
//! token, so a reply that carries one shows that the handler read credentials.

use std::io;
use std::path::Path;

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

/// Make `home` (mode 0700) with the decoy credentials of `token` in it.
///
/// # Ambient authority
/// Creates folders and files by host path, in a folder memcert just made.
pub(super) fn lay_out(home: &Path, token: &str) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new().mode(0o700).create(home)?;
    for (rel, text) in files(token) {
        let path = home.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .mode(0o700)
                .recursive(true)
                .create(dir)?;
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        io::Write::write_all(&mut f, text.as_bytes())?;
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
