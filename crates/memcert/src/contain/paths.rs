//! What a handler must read, derived from its command before it is restricted: the program
//! (found on `PATH`) and its folder (a version manager's whole root for a shim such as pyenv's
//! `<root>/shims/python3`); for a Python interpreter its prefixes and `sys.path` (asked
//! of it with `-S`, so no `.pth` file runs), for Node its executable and global module folders;
//! the folders of the files and folders its arguments name (a `file.py:Class` spec too), the
//! project they belong to (the nearest folder above them with a `.git`, `pyproject.toml`,
//! `package.json`, ... marker, never the home folder or above) and the `node_modules` folders
//! above them and above its working folder; system library folders; a
//! list of single `/etc` files (never `/etc` as a whole); a few devices.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// System folders any dynamically linked program reads (those that exist are allowed).
pub(super) const SYSTEM_DIRS: [&str; 12] = [
    "/usr/lib",
    "/usr/lib64",
    "/usr/lib32",
    "/lib",
    "/lib64",
    "/usr/local/lib",
    "/usr/bin",
    "/bin",
    "/usr/share/zoneinfo",
    "/usr/share/locale",
    "/usr/share/nodejs",
    "/usr/share/ca-certificates",
];

/// Single files under `/etc` an interpreter may read (those that exist are allowed).
pub(super) const ETC_FILES: [&str; 14] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/ssl/openssl.cnf",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/mime.types",
];

/// Devices it may read (`/dev/null` it may also write).
pub(super) const DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"];

/// What a handler may read, and which of those paths it cannot run without (its program,
/// interpreter and code: checked for `nobody`).
#[derive(Debug, Default)]
pub(super) struct Reads {
    /// Every path it may read, deduplicated.
    pub(super) paths: Vec<PathBuf>,
    /// Its program, interpreter and code.
    pub(super) essential: Vec<PathBuf>,
}

impl Reads {
    fn add(&mut self, p: impl Into<PathBuf>, essential: bool) {
        let p = p.into();
        if p.as_os_str().is_empty() || !p.exists() {
            return;
        }
        if let Ok(real) = p.canonicalize() {
            if real != p && !self.paths.contains(&real) {
                self.paths.push(real.clone());
            }
            if essential && !self.essential.contains(&real) {
                self.essential.push(real);
            }
        }
        if !self.paths.contains(&p) {
            self.paths.push(p);
        }
    }
}

/// Where `program` is: as named when it has a `/` (from `cwd`), else the first match on `path`.
pub(super) fn resolve_program(program: &Path, path: Option<&OsString>, cwd: &Path) -> PathBuf {
    if program.as_os_str().to_string_lossy().contains('/') {
        return cwd.join(program);
    }
    let search = path.cloned().unwrap_or_default();
    for dir in std::env::split_paths(&search) {
        let candidate = cwd.join(dir).join(program);
        if candidate
            .metadata()
            .is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0)
        {
            return candidate;
        }
    }
    program.to_path_buf()
}

/// The paths `cmd` must read, run with `env` (its environment, scrubbed); `allow` are more
/// (`--allow-read`).
pub(super) fn derive(cmd: &Command, env: &[(OsString, OsString)], allow: &[PathBuf]) -> Reads {
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let cwd = cmd.get_current_dir().map_or(here.clone(), |d| here.join(d));
    let path_var = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v);
    let program = resolve_program(Path::new(cmd.get_program()), path_var, &cwd);
    let mut reads = Reads::default();
    reads.add(&program, true);
    for p in [Some(program.clone()), program.canonicalize().ok()]
        .into_iter()
        .flatten()
    {
        if let Some(dir) = p.parent() {
            reads.add(dir, true);
        }
    }
    // A version manager's shim (pyenv, rbenv, asdf: `<root>/shims/python3`, a script that runs
    // `<root>/libexec/...` on `<root>/versions/...`): its whole root is the interpreter.
    if let Some(root) = program
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "shims"))
        .and_then(Path::parent)
    {
        reads.add(root, true);
    }
    let name = program
        .canonicalize()
        .unwrap_or_else(|_| program.clone())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let named = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let is = |prefix: &str| name.starts_with(prefix) || named.starts_with(prefix);
    if is("python") {
        for p in probe(&program, &["-S", "-c", PYTHON_PROBE], env, &cwd) {
            reads.add(p, true);
        }
    } else if is("node") {
        for p in probe(&program, &["-e", NODE_PROBE], env, &cwd) {
            let lib = p.join("../lib/node_modules");
            reads.add(p, true);
            reads.add(lib, false);
        }
    }
    let mut code = vec![cwd.clone()];
    for arg in cmd.get_args() {
        let arg = arg.to_string_lossy();
        let spec = arg.rsplit_once(':').map(|(f, _)| f);
        for candidate in std::iter::once(arg.as_ref()).chain(spec) {
            if candidate.is_empty() || candidate.starts_with('-') {
                continue;
            }
            let p = cwd.join(candidate);
            match p.metadata() {
                Ok(m) if m.is_dir() => {
                    reads.add(&p, true);
                    code.push(p);
                }
                Ok(_) => {
                    if let Some(dir) = p.parent() {
                        reads.add(dir, true);
                        code.push(dir.to_path_buf());
                    }
                }
                Err(_) => {}
            }
        }
    }
    for dir in &code {
        for up in dir.ancestors() {
            reads.add(up.join("node_modules"), false);
        }
        if let Some(project) = project_of(dir) {
            reads.add(project, true);
        }
    }
    for p in SYSTEM_DIRS.iter().chain(&ETC_FILES).chain(&DEVICES) {
        reads.add(p, false);
    }
    for p in allow {
        reads.add(here.join(p), false);
    }
    reads
}

/// Files and folders that mark the root of a project.
const PROJECT_MARKERS: [&str; 7] = [
    ".git",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "package.json",
    "Cargo.toml",
    "requirements.txt",
];

/// The project a code folder belongs to: the nearest folder above it (itself included) that
/// holds a project marker, so that a handler may import its siblings (`../lib`); never `/`, the
/// home folder, a temp folder or a folder above one of them.
fn project_of(dir: &Path) -> Option<PathBuf> {
    let stops: Vec<PathBuf> = [std::env::var_os("HOME").map(PathBuf::from)]
        .into_iter()
        .flatten()
        .chain([
            std::env::temp_dir(),
            PathBuf::from("/tmp"),
            PathBuf::from("/dev/shm"),
        ])
        .collect();
    for up in dir.ancestors() {
        if up.parent().is_none() || stops.iter().any(|s| s.starts_with(up)) {
            return None;
        }
        if PROJECT_MARKERS.iter().any(|m| up.join(m).exists()) {
            return Some(up.to_path_buf());
        }
    }
    None
}

/// Prints a JSON list of the interpreter's prefixes and path entries (run with `-S`).
const PYTHON_PROBE: &str = "import sys, site, sysconfig, json\n\
try:\n    site.venv(None)\nexcept Exception:\n    pass\n\
p = [sys.executable, sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix] + [x for x in sys.path if x]\n\
try:\n    p += site.getsitepackages()\nexcept Exception:\n    pass\n\
for k in ('stdlib', 'platstdlib', 'purelib', 'platlib'):\n    \
try:\n        p.append(sysconfig.get_path(k))\n    except Exception:\n        pass\n\
print(json.dumps(p))";

/// Prints a JSON list of Node's executable folder and global module folders.
const NODE_PROBE: &str = "const path = require('path');\
process.stdout.write(JSON.stringify([path.dirname(process.execPath), ...require('module').globalPaths]))";

/// Run `program args` (20 s at most) and read the JSON list of paths it prints.
fn probe(program: &Path, args: &[&str], env: &[(OsString, OsString)], cwd: &Path) -> Vec<PathBuf> {
    let child = Command::new(program)
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return Vec::new();
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().ok().flatten().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let Ok(out) = child.wait_with_output() else {
        return Vec::new();
    };
    serde_json::from_slice::<Vec<String>>(&out.stdout)
        .unwrap_or_default()
        .into_iter()
        .map(PathBuf::from)
        .collect()
}

/// The first of `paths` that `uid`/`gid` cannot reach (a folder on the way it may not search,
/// or the path itself it may not read), by the permission bits.
pub(super) fn unreachable_by(paths: &[PathBuf], uid: u32, gid: u32) -> Option<PathBuf> {
    let may = |m: &std::fs::Metadata, bits: u32| {
        let mode = m.mode();
        let class = if m.uid() == uid {
            mode >> 6
        } else if m.gid() == gid {
            mode >> 3
        } else {
            mode
        };
        class & bits == bits
    };
    for p in paths {
        let Ok(real) = p.canonicalize() else { continue };
        for up in real.ancestors().skip(1) {
            if let Ok(m) = up.metadata() {
                if !may(&m, 0o1) {
                    return Some(up.to_path_buf());
                }
            }
        }
        if let Ok(m) = real.metadata() {
            let need = if m.is_dir() { 0o5 } else { 0o4 };
            if !may(&m, need) {
                return Some(real);
            }
        }
    }
    None
}
