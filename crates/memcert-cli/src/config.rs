//! `memcert.toml` (or `--config FILE`): any flag of any subcommand, so a CI job or the Action
//! needs one line. Flags given on the command line win.
//!
//! ```toml
//! [certify]
//! python = "my_app/memory.py:MyMemoryTool"
//! profile = "python-sdk"
//! expected-failures = "memcert-expected.toml"
//! sarif = "memcert.sarif"
//! exclude = ["race/*"]
//! memory-dir-unknown = true
//! ```
//!
//! A table per subcommand (`[certify]`, `[snapshot]`, `[mock-api]`, ...), whose keys are the
//! subcommand's long flags without `--` (`python-exe` or `python_exe`). A string or number is
//! the flag's value, `true` gives a switch (`false` leaves it out), an array repeats the flag.
//! The config's flags go before the command line's, and a flag the command line gives is taken
//! from the command line alone (a list flag too), so the command line always wins.
//!
//! Read from `--config FILE` when given, else `memcert.toml` in the current folder when there is
//! one; `--no-config` reads none. Relative paths in it are taken from the current folder, as on
//! the command line.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The config file's name in the current folder.
pub const FILE_NAME: &str = "memcert.toml";

/// Largest config file read, in bytes.
pub const MAX_BYTES: u64 = 1 << 20;

/// Where the config comes from: `--config FILE` (`--config=FILE`) in `argv`, else
/// [`FILE_NAME`] in the current folder when it is a file; none with `--no-config`.
fn config_path(argv: &[OsString]) -> Result<Option<PathBuf>> {
    let mut given = None;
    let mut it = argv.iter().skip(1);
    while let Some(a) = it.next() {
        let Some(s) = a.to_str() else { continue };
        if s == "--" {
            break;
        }
        if s == "--no-config" {
            return Ok(None);
        }
        if s == "--config" {
            given = Some(PathBuf::from(it.next().context("--config needs a FILE")?));
        } else if let Some(v) = s.strip_prefix("--config=") {
            given = Some(PathBuf::from(v));
        }
    }
    if given.is_some() {
        return Ok(given);
    }
    let here = PathBuf::from(FILE_NAME);
    Ok(here.is_file().then_some(here))
}

/// Whether the command line gives `--long` (as `--long` or `--long=...`).
fn given(argv: &[OsString], long: &str) -> bool {
    let flag = format!("--{long}");
    argv.iter()
        .filter_map(|a| a.to_str())
        .take_while(|a| *a != "--")
        .any(|a| a == flag || a.strip_prefix(&flag).is_some_and(|r| r.starts_with('=')))
}

/// The flags a TOML value gives `--long`: a switch, a value, or the flag repeated.
fn flags(long: &str, value: &toml::Value, at: &str) -> Result<Vec<OsString>> {
    let one = |v: &toml::Value| -> Result<OsString> {
        Ok(match v {
            toml::Value::String(s) => format!("--{long}={s}").into(),
            toml::Value::Integer(n) => format!("--{long}={n}").into(),
            toml::Value::Float(x) => format!("--{long}={x}").into(),
            _ => bail!("{at}: `{long}` must be a string, a number, true/false or an array of them"),
        })
    };
    Ok(match value {
        toml::Value::Boolean(true) => vec![format!("--{long}").into()],
        toml::Value::Boolean(false) => vec![],
        toml::Value::Array(items) => items.iter().map(one).collect::<Result<_>>()?,
        v => vec![one(v)?],
    })
}

/// `argv` with the config's flags for its subcommand put before the command line's own
/// ([module docs](self)); `argv` unchanged when there is no subcommand, no config, or help is
/// asked for (`--help`, `-h`: a broken config never hides the help).
///
/// # Errors
/// `--config FILE` unreadable or missing; a file over [`MAX_BYTES`]; TOML that does not parse;
/// a key outside a `[subcommand]` table, a table that names no subcommand, a key that is not a
/// long flag of its subcommand, or a value of another type. Each as one line naming the file.
pub fn with_config(argv: Vec<OsString>, cli: &clap::Command) -> Result<Vec<OsString>> {
    let Some(sub_name) = argv.get(1).and_then(|a| a.to_str()).map(str::to_owned) else {
        return Ok(argv);
    };
    let Some(sub) = cli.find_subcommand(&sub_name) else {
        return Ok(argv);
    };
    if given(&argv, "help") || argv.iter().any(|a| a == "-h") {
        return Ok(argv);
    }
    let Some(path) = config_path(&argv)? else {
        return Ok(argv);
    };
    let table = read(&path)?;
    let at = path.display().to_string();
    for (key, value) in &table {
        if !value.is_table() {
            bail!("{at}: `{key}` is outside a [subcommand] table; put flags under [certify], [snapshot], ...");
        }
        if cli.find_subcommand(key).is_none() {
            bail!("{at}: [{key}] names no memcert subcommand");
        }
    }
    let Some(toml::Value::Table(mine)) = table.get(&sub_name) else {
        return Ok(argv);
    };
    let longs: Vec<&str> = sub.get_arguments().filter_map(|a| a.get_long()).collect();
    let mut added = Vec::new();
    for (key, value) in mine {
        let long = key.replace('_', "-");
        if !longs.contains(&long.as_str()) || long == "config" || long == "no-config" {
            bail!("{at}: [{sub_name}] `{key}` is not a flag of memcert {sub_name} (memcert {sub_name} --help lists them)");
        }
        if !given(&argv, &long) {
            added.extend(flags(&long, value, &format!("{at}: [{sub_name}]"))?);
        }
    }
    let mut out = argv[..2].to_vec();
    out.extend(added);
    out.extend_from_slice(&argv[2..]);
    Ok(out)
}

/// The config file as a TOML table, at most [`MAX_BYTES`] read.
fn read(path: &Path) -> Result<toml::Table> {
    use std::io::Read as _;
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read the config {}", path.display()))?;
    let mut text = String::new();
    file.take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read the config {}", path.display()))?;
    if text.len() as u64 > MAX_BYTES {
        bail!("the config {} is over {MAX_BYTES} bytes", path.display());
    }
    toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("the config {} is not TOML: {}", path.display(), e.message()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli() -> clap::Command {
        clap::Command::new("memcert").subcommand(
            clap::Command::new("certify")
                .arg(clap::Arg::new("python").long("python"))
                .arg(
                    clap::Arg::new("cases")
                        .long("cases")
                        .action(clap::ArgAction::Append),
                )
                .arg(
                    clap::Arg::new("strict")
                        .long("strict")
                        .action(clap::ArgAction::SetTrue),
                )
                .arg(clap::Arg::new("timeout").long("timeout")),
        )
    }

    fn args(config: &Path, rest: &[&str]) -> Result<Vec<String>> {
        let mut argv: Vec<OsString> = vec!["memcert".into(), "certify".into()];
        argv.push("--config".into());
        argv.push(config.into());
        argv.extend(rest.iter().map(OsString::from));
        Ok(with_config(argv, &cli())?
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect())
    }

    #[test]
    fn config_flags_go_first_and_the_command_line_wins() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.toml");
        std::fs::write(
            &f,
            "[certify]\npython = \"h.py:H\"\ncases = [\"view/*\", \"delete/*\"]\nstrict = true\ntimeout = 2.5\n",
        )
        .unwrap();
        let conf = f.to_str().unwrap();
        assert_eq!(
            args(&f, &["--cases", "x/*"]).unwrap(),
            [
                "memcert",
                "certify",
                "--python=h.py:H",
                "--strict",
                "--timeout=2.5",
                "--config",
                conf,
                "--cases",
                "x/*"
            ]
        );
        assert_eq!(
            args(&f, &["--python=o.py:O"]).unwrap(),
            [
                "memcert",
                "certify",
                "--cases=view/*",
                "--cases=delete/*",
                "--strict",
                "--timeout=2.5",
                "--config",
                conf,
                "--python=o.py:O"
            ]
        );
    }

    #[test]
    fn bad_configs_are_one_line_errors() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.toml");
        let d = f.display();
        for (text, want) in [
            ("[certify]\nnope = 1\n", format!("{d}: [certify] `nope` is not a flag of memcert certify (memcert certify --help lists them)")),
            ("python = \"x\"\n", format!("{d}: `python` is outside a [subcommand] table; put flags under [certify], [snapshot], ...")),
            ("[certfy]\n", format!("{d}: [certfy] names no memcert subcommand")),
            ("[certify]\npython = {a = 1}\n", format!("{d}: [certify]: `python` must be a string, a number, true/false or an array of them")),
        ] {
            std::fs::write(&f, text).unwrap();
            assert_eq!(args(&f, &[]).unwrap_err().to_string(), want);
        }
        std::fs::write(&f, "[certify\n").unwrap();
        assert!(args(&f, &[])
            .unwrap_err()
            .to_string()
            .starts_with(&format!("the config {d} is not TOML: ")));
        let missing = dir.path().join("none.toml");
        assert_eq!(
            format!("{:#}", args(&missing, &[]).unwrap_err())
                .split(':')
                .next()
                .unwrap(),
            format!("cannot read the config {}", missing.display())
        );
    }
}
