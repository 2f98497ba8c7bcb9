//! The scrubbed environment: an allowlist of memcert's environment plus the names the user
//! passes (`--pass-env`), a canary value for each passed name that looks secret.

use std::ffi::OsString;

/// Names kept from memcert's environment (a trailing `*`: a prefix).
pub(super) const ALLOWED: [&str; 5] = ["PATH", "LANG", "LC_*", "TZ", "MEMCERT_*"];

/// Parts of a variable name that make it look secret.
const SECRET: [&str; 10] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "CREDENTIAL",
    "AUTH",
    "PRIVATE",
    "COOKIE",
];

/// Whether a variable name looks like it holds a secret (`ANTHROPIC_API_KEY`, `GITHUB_TOKEN`).
pub(super) fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET.iter().any(|s| upper.contains(s))
}

fn allowed(name: &str) -> bool {
    ALLOWED.iter().any(|a| match a.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *a,
    })
}

/// The environment a contained handler gets, from `from` (memcert's): the allowlist, then each
/// name of `pass` (a secret-looking one with the canary value `<token>-<NAME>`, set even when
/// memcert's environment lacks it). Returns the variables and how many canaries were set.
pub(super) fn scrub(
    from: impl IntoIterator<Item = (OsString, OsString)>,
    pass: &[String],
    token: &str,
) -> (Vec<(OsString, OsString)>, usize) {
    let mut out: Vec<(OsString, OsString)> = Vec::new();
    let mut canaries = 0;
    for (k, v) in from {
        let name = k.to_string_lossy();
        // A passed name keeps its value unless it looks secret (then it gets a canary below).
        let keep = if pass.iter().any(|p| *p == name) {
            !looks_secret(&name)
        } else {
            allowed(&name)
        };
        if keep {
            out.push((k, v));
        }
    }
    for name in pass {
        if looks_secret(name) {
            out.push((name.into(), format!("{token}-{name}").into()));
            canaries += 1;
        }
    }
    (out, canaries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn keeps_the_allowlist_and_passed_names_and_hides_secrets() {
        let from = vars(&[
            ("PATH", "/bin"),
            ("LC_ALL", "C"),
            ("MEMCERT_PYTHON", "py"),
            ("ANTHROPIC_API_KEY", "real-key"),
            ("GITHUB_TOKEN", "real-token"),
            ("HOME", "/root"),
            ("PYTHONPATH", "/src"),
        ]);
        let pass = vec!["PYTHONPATH".to_owned(), "GITHUB_TOKEN".to_owned()];
        let (out, canaries) = scrub(from, &pass, "TOK");
        let got: Vec<(String, String)> = out
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect();
        let want: Vec<(String, String)> = [
            ("PATH", "/bin"),
            ("LC_ALL", "C"),
            ("MEMCERT_PYTHON", "py"),
            ("PYTHONPATH", "/src"),
            ("GITHUB_TOKEN", "TOK-GITHUB_TOKEN"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        assert_eq!(got, want);
        assert_eq!(canaries, 1);
        assert!(!looks_secret("PATH") && looks_secret("aws_secret_access_key"));
    }
}
