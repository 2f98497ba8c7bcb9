//! Containment of handler processes (`memcert::contain`): the credential reader is UNSAFE with
//! containment on and off; contained, it changes nothing in a folder standing for the user's
//! files nor in one standing for the real home, and sees only the scrubbed environment; a
//! `setsid` child dies with the run and never touches a report; the subreaper fallback kills it
//! too; the pinned Node SDK handler runs under the default address-space limit.
//!
//! A containment feature this machine lacks skips the contained checks with a note, and fails
//! them under `MEMCERT_REQUIRE_CONTAINMENT=1` (`.ci/run` sets it).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{self, root};
use crate::processes_with;
use memcert::contain::Policy;
use memcert::suite::verdict::Verdict;
use memcert::target::stdio::Stdio;
use memcert::target::Target;

fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/handlers/hostile").join(name)
}

/// A `python3` on PATH that `nobody` can run (its file and every folder above it open to
/// others), so a contained run as root can drop to `nobody`; else the pinned interpreter.
fn python() -> (String, bool) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let Ok(real) = dir.join("python3").canonicalize() else {
            continue;
        };
        let open = real
            .ancestors()
            .skip(1)
            .all(|d| d.metadata().is_ok_and(|m| m.mode() & 0o001 != 0))
            && real.metadata().is_ok_and(|m| m.mode() & 0o005 == 0o005);
        if open {
            return (real.to_string_lossy().into_owned(), true);
        }
    }
    (common::python(), false)
}

/// Whether the run's containment (the JSON summary's `containment`) has every feature; when it
/// lacks one, a note and `false`, or a failure under `MEMCERT_REQUIRE_CONTAINMENT=1`.
fn complete(report: &Value) -> bool {
    let c = &report["summary"]["containment"];
    let missing: Vec<&str> = c["missing"]
        .as_array()
        .map(|m| m.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if missing.is_empty() && c["enabled"] == true {
        return true;
    }
    assert!(
        !memcert::contain::required(),
        "MEMCERT_REQUIRE_CONTAINMENT=1 and containment is partial here: {missing:?} ({c})"
    );
    eprintln!("note: containment is partial here, contained checks skipped: {missing:?}");
    false
}

/// A fresh folder with mode `mode` (not masked), living as long as the guard.
fn folder_with_mode(mode: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(mode),
    )
    .unwrap();
    dir
}

/// A copy of the fixture `name` in a folder of its own (open to `nobody`), as
/// `<dir>/hostile/<name>` beside `<dir>/_stdio_protocol.py` (which it imports from its parent
/// folder), so that its command line is this test's alone. `<dir>` holds an empty
/// `pyproject.toml`, as the repository holds its markers: the sandbox lets a handler read the
/// project its files belong to. The folder lives as long as the guard.
fn own_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = folder_with_mode(0o755);
    let sub = dir.path().join("hostile");
    std::fs::create_dir(&sub).unwrap();
    std::fs::set_permissions(&sub, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let protocol = "_stdio_protocol.py";
    std::fs::copy(
        root().join("fixtures/handlers").join(protocol),
        dir.path().join(protocol),
    )
    .unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "").unwrap();
    let copy = sub.join(name);
    std::fs::copy(fixture(name), &copy).unwrap();
    (dir, copy)
}

/// A folder any uid may write (`--allow-write` lifts Landlock only), for the PID file the
/// `setsid` child writes, and that file's path.
fn pid_folder() -> (tempfile::TempDir, PathBuf) {
    let pids = folder_with_mode(0o777);
    let pidfile = pids.path().join("child.pid");
    (pids, pidfile)
}

/// The command `memcert certify --stdio "<python> <handler>" <args>` with a JSON report in
/// `dir`, and that report's path. `handler` is the script and its arguments.
fn certify_command(handler: &str, args: &[&str], dir: &Path) -> (Command, PathBuf) {
    let (py, _) = python();
    let json = dir.join("report.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memcert"));
    cmd.args(["certify", "--stdio", &format!("{py} {handler}")])
        .arg("--report-json")
        .arg(&json)
        .args(args);
    (cmd, json)
}

/// Run `cmd`; its output and the JSON report it wrote at `json` (a panic with its stderr when
/// there is none).
fn run_for_report(mut cmd: Command, json: &Path) -> (Output, Value) {
    let out = cmd.output().unwrap();
    let text = std::fs::read_to_string(json).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, serde_json::from_str(&text).unwrap())
}

/// [`certify_command`] on `script` with `env` (and a real-looking `GITHUB_TOKEN`), run.
fn certify(script: &Path, args: &[&str], env: &[(&str, &Path)], dir: &Path) -> (Output, Value) {
    let (mut cmd, json) = certify_command(&script.display().to_string(), args, dir);
    cmd.env("GITHUB_TOKEN", "ghp-the-real-secret-value");
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_for_report(cmd, &json)
}

/// The credential reader's run over `view /memories/`, with a folder standing for the user's
/// files (holding `keep.txt`) and one for the real home; returns the report and both folders.
fn credential_run(extra: &[&str]) -> (Output, Value, tempfile::TempDir, tempfile::TempDir) {
    let (_copy_dir, script) = own_copy("credential_thief.py");
    let dir = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(user.path().join("keep.txt"), "the user's file\n").unwrap();
    let mut args = vec![
        "--cases",
        "view/dir/root-trailing-slash",
        "--pass-env",
        "GITHUB_TOKEN",
    ];
    args.extend_from_slice(extra);
    let (out, report) = certify(
        &script,
        &args,
        &[
            ("MEMCERT_HOSTILE_USER_DIR", user.path()),
            ("MEMCERT_HOSTILE_REAL_HOME", home.path()),
        ],
        dir.path(),
    );
    assert!(
        processes_with(&script.to_string_lossy()).is_empty(),
        "a handler process is left"
    );
    (out, report, user, home)
}

fn kinds(case: &Value) -> Vec<String> {
    case["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_owned())
        .collect()
}

// See: issue 13 ("No containment": a handler that deleted a user file, wrote to the real home
// and read an SSH key was CERTIFIED).
#[test]
fn credential_reader_is_unsafe_and_changes_nothing_outside_when_contained() {
    let (out, report, user, home) = credential_run(&[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let case = &report["cases"][0];
    assert_eq!(case["verdict"], "UNSAFE", "{case}");
    assert!(
        kinds(case).contains(&"credential-read".to_owned()),
        "{case}"
    );
    let text = report.to_string();
    assert!(
        !text.contains("ghp-the-real-secret-value"),
        "a real secret reached the report"
    );
    if !complete(&report) {
        return;
    }
    let reply = case["steps"][0]["reply"]["content"].as_str().unwrap();
    assert_eq!(
        std::fs::read_to_string(user.path().join("keep.txt")).unwrap(),
        "the user's file\n",
        "the user's file was changed: {reply}"
    );
    assert_eq!(
        std::fs::read_dir(home.path()).unwrap().count(),
        0,
        "{reply}"
    );
    assert!(
        reply.contains("read /etc/shadow: PermissionError"),
        "{reply}"
    );
    assert!(
        reply.contains("-GITHUB_TOKEN"),
        "the passed secret is a canary: {reply}"
    );
    assert!(
        !reply.contains("CARGO"),
        "the environment is scrubbed: {reply}"
    );
    let c = &report["summary"]["containment"];
    assert_eq!(c["namespaces"], "user+pid", "{c}");
    assert!(
        reply.contains(" pid=2"),
        "the handler runs under the init of its own PID namespace: {reply}"
    );
    if rustix::process::geteuid().is_root() && python().1 {
        assert_eq!(c["uid"], "65534 (nobody)", "{c}");
        assert!(reply.starts_with("uid=65534 euid=65534"), "{reply}");
    }
}

#[test]
fn credential_reader_is_unsafe_uncontained_too() {
    let (out, report, _user, _home) = credential_run(&["--no-contain"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let case = &report["cases"][0];
    assert_eq!(case["verdict"], "UNSAFE", "{case}");
    assert!(
        kinds(case).contains(&"credential-read".to_owned()),
        "{case}"
    );
    assert_eq!(report["summary"]["containment"]["enabled"], false);
}

// See: issue 13 ("a decoy HOME holding canary credentials ...: a canary value in a reply, or an
// open of a decoy file, is UNSAFE"): a handler that reads the key and keeps it to itself.
#[test]
fn a_key_read_and_kept_quiet_is_unsafe_contained_or_not() {
    for extra in [&[][..], &["--no-contain"][..]] {
        let (_copy_dir, script) = own_copy("quiet_key_reader.py");
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["--cases", "view/dir/root-trailing-slash"];
        args.extend_from_slice(extra);
        let (out, report) = certify(&script, &args, &[], dir.path());
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {out:?}");
        let case = &report["cases"][0];
        assert_eq!(case["verdict"], "UNSAFE", "{extra:?}: {case}");
        let credential: Vec<&str> = case["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "credential-read")
            .map(|f| f["detail"].as_str().unwrap())
            .collect();
        assert_eq!(
            credential,
            ["while the case ran, the decoy credential ~/.ssh/id_ed25519 in the handler's HOME was opened, read"],
            "{extra:?}: {case}"
        );
    }
}

// See: issue 13 ("Children outlive memcert": a setsid child rewrote the Markdown report to
// CERTIFIED and the JUnit to 0 failures two seconds after memcert exited).
#[test]
fn setsid_child_dies_with_the_run_and_never_touches_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let (pids, pidfile) = pid_folder();
    let (junit, md) = (dir.path().join("junit.xml"), dir.path().join("summary.md"));
    let reports = format!(
        "{}:{}:{}",
        junit.display(),
        md.display(),
        dir.path().join("report.json").display()
    );
    let allow = pids.path().to_string_lossy().into_owned();
    let (_copy_dir, script) = own_copy("outliving_child.py");
    let (out, report) = certify(
        &script,
        &[
            "--cases",
            "view/dir/root-trailing-slash",
            "--junit",
            junit.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
            "--allow-write",
            &allow,
        ],
        &[
            ("MEMCERT_HOSTILE_PIDFILE", &pidfile),
            ("MEMCERT_HOSTILE_REPORTS", Path::new(&reports)),
        ],
        dir.path(),
    );
    // Every call refused: NON-STRICT here, not a run that cannot start.
    assert_ne!(out.status.code(), Some(2), "{out:?}");
    if !complete(&report) {
        return;
    }
    let written: Vec<Vec<u8>> = [&junit, &md, &dir.path().join("report.json")]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let child: i32 = std::fs::read_to_string(&pidfile)
        .expect("the child wrote its PID: it was started")
        .trim()
        .parse()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let marker = script.to_string_lossy();
    assert!(
        processes_with(&marker).is_empty(),
        "the setsid child {child} outlived the run"
    );
    for (p, before) in [&junit, &md, &dir.path().join("report.json")]
        .iter()
        .zip(&written)
    {
        assert_eq!(
            &std::fs::read(p).unwrap(),
            before,
            "{} was rewritten",
            p.display()
        );
    }
}

/// The fallback where no namespace is made: memcert is a child subreaper and kills the
/// `setsid` child the handler left when it stops the handler.
#[test]
fn subreaper_fallback_kills_a_setsid_child() {
    let (pids, pidfile) = pid_folder();
    let (_copy_dir, script) = own_copy("outliving_child.py");
    let mut cmd = Command::new(python().0);
    cmd.arg(&script).env("MEMCERT_HOSTILE_PIDFILE", &pidfile);
    let policy = Policy {
        namespaces: false,
        allow_write: vec![pids.path().to_path_buf()],
        ..Policy::default()
    };
    let mut target = Stdio::new(cmd, Duration::from_secs(20)).contained(policy);
    target.start().unwrap();
    assert!(target.containment().namespaces.starts_with("none"));
    let deadline = Instant::now() + Duration::from_secs(10);
    let child: i32 = loop {
        if let Ok(t) = std::fs::read_to_string(&pidfile) {
            if let Ok(p) = t.trim().parse() {
                break p;
            }
        }
        assert!(Instant::now() < deadline, "the child never wrote its PID");
        std::thread::sleep(Duration::from_millis(20));
    };
    target.shutdown();
    drop(target);
    let gone = memcert::contain::proc_stat(child).is_none_or(|s| s.zombie);
    assert!(gone, "the setsid child {child} is still running");
}

/// The pinned Node SDK handler starts and answers under the default limits (address space
/// 16 GiB).
#[test]
fn node_sdk_handler_runs_under_the_default_address_space_limit() {
    let (_dir, mut target) = common::sdk_target(memcert::text::Profile::TypescriptSdk);
    let cases = memcert::certify::select(
        memcert::suite::catalog::for_level(memcert::suite::catalog::RunLevel::Quick),
        &["view/dir/root-trailing-slash".to_owned()],
        &[],
    )
    .unwrap();
    let records = common::run_cases(&mut target, memcert::text::Profile::TypescriptSdk, &cases);
    let c = target.containment();
    assert!(c.limits.starts_with("address space 16 GiB"), "{c:?}");
    assert!(
        records.iter().all(|r| r.verdict != Verdict::Error),
        "{:?}",
        records
            .iter()
            .map(|r| (&r.id, r.verdict, &r.findings))
            .collect::<Vec<_>>()
    );
    if !c.missing.is_empty() {
        assert!(
            !memcert::contain::required(),
            "containment is partial: {:?}",
            c.missing
        );
    }
}

/// Descriptors memcert inherited without close-on-exec (a CI wrapper's `9<secret 8>>log`) never
/// reach the handler, contained or not: its answer lists none, and the log is not written.
#[test]
fn descriptors_memcert_inherited_never_reach_the_handler() {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "INHERITED-SECRET").unwrap();
    let log = dir.path().join("ci.log");
    std::fs::write(&log, "").unwrap();
    let handler = fixture("inherited_fds.py").display().to_string();
    for extra in [&[][..], &["--no-contain"][..]] {
        let secret_f = std::fs::File::open(&secret).unwrap();
        let log_f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        let (s, l) = (secret_f.as_raw_fd(), log_f.as_raw_fd());
        let mut args = vec!["--cases", "view/missing"];
        args.extend_from_slice(extra);
        let (mut cmd, json) = certify_command(&handler, &args, dir.path());
        // SAFETY: dup2 only, between fork and exec; the copies on 9 and 8 lack CLOEXEC.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(s, 9) < 0 || libc::dup2(l, 8) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let (_, report) = run_for_report(cmd, &json);
        assert_eq!(
            report["cases"][0]["steps"][0]["reply"]["content"], "Error: no descriptors",
            "{extra:?}"
        );
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "", "{extra:?}");
    }
}

/// Run under a hard address-space limit lower than the handler's default (16 GiB), memcert
/// applies its own limit instead (a process in a new user namespace cannot raise a hard limit):
/// the handler starts, and the report states the limit applied.
#[test]
fn a_lower_hard_limit_of_memcert_is_the_handlers() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let handler = fixture("inherited_fds.py").display().to_string();
    let (mut cmd, json) = certify_command(&handler, &["--cases", "view/missing"], dir.path());
    // SAFETY: setrlimit only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let r = libc::rlimit {
                rlim_cur: 8 << 30,
                rlim_max: 8 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let (_, report) = run_for_report(cmd, &json);
    assert_eq!(report["cases"][0]["verdict"], "NON-STRICT");
    let limits = report["summary"]["containment"]["limits"].as_str().unwrap();
    assert!(limits.starts_with("address space 8 GiB, "), "{limits}");
}

/// A contained handler cannot open a unix socket (seccomp): a listener any user may connect to
/// is reached uncontained and refused contained, whatever uid the handler runs as.
#[test]
fn a_contained_handler_cannot_reach_a_unix_socket() {
    use std::os::unix::fs::PermissionsExt;
    let dir = folder_with_mode(0o755);
    let sock = dir.path().join("daemon.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o666)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let serving = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok((mut s, _)) = listener.accept() {
                    let _ = std::io::Write::write_all(&mut s, b"daemon-hello");
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let handler = format!("{} {}", fixture("unix_socket.py").display(), sock.display());
    let reply = |extra: &[&str]| {
        let mut args = vec!["--cases", "view/missing"];
        args.extend_from_slice(extra);
        let (cmd, json) = certify_command(&handler, &args, dir.path());
        let (_, report) = run_for_report(cmd, &json);
        report["cases"][0]["steps"][0]["reply"]["content"].clone()
    };
    let uncontained = reply(&["--no-contain"]);
    let contained = reply(&[]);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    serving.join().unwrap();
    assert_eq!(uncontained, "Error: connected: daemon-hello");
    assert_eq!(contained, "Error: refused: EACCES");
}
