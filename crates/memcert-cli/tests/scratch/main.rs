//! memcert's own scratch folders (issue 13; `memcert::scratch`): every folder memcert makes is
//! private and laid out, inspected and removed through directory handles, and a folder the user
//! names passes the StrictModes check. Raced here, as `tests/race` races handlers:
//! - a thread of the same uid swaps every component of memcert's scratch paths (case
//!   sandboxes, aliases, the handler's HOME, adapter folders, an app's run folder) for links to
//!   a canary folder, back and forth and sometimes for good, while cases are laid out, run,
//!   walked and cleaned up in this process ([`same_uid`]);
//! - as root, a process running as `nobody` swaps what it can write (a `--memory-dir` tree it
//!   made, and the `memcert-*` names in /tmp and /dev/shm) while the binary runs `mock-api`
//!   and `certify` ([`other_uid`]); not root: skipped, with a line saying so.
//!
//! Nothing in the canary folders may change (a write or a delete outside memcert's scratch).
//! The CI tests run a few seconds; `long_races` (ignored) runs both longer and prints the
//! figures: `cargo test -p memcert-cli --test scratch -- --ignored --nocapture long_races`.
//! Apart from the other binaries: the same-uid race points this process's TMPDIR at a folder
//! the swapper attacks.

#[path = "../common/mod.rs"]
mod common;
use common::root;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use memcert::attack::sandbox::Sandbox;
use memcert::certify::{run_case, Config};
use memcert::protocol::ToolResult;
use memcert::scratch::{self, Scratch};
use memcert::suite::{catalog, verdict::Verdict, Case};
use memcert::target::{python, Target, TargetError};
use serde_json::Value;

/// A small xorshift generator (no RNG crate in this crate's dev-dependencies).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// What a canary folder holds: for each object (links not followed) its kind, bytes and mode.
type Snapshot = BTreeMap<PathBuf, (char, Vec<u8>, u32)>;

/// Fill `dir` with folders named like the components of memcert's scratch paths, each holding
/// a file, so that a walk that followed a link into it would find something to write or remove.
fn plant_canary(dir: &Path) {
    for d in [
        "",
        "base",
        "base/memories",
        "base/outside",
        "base/outside/sub",
        "base/etc",
        "etc",
        "memories",
        "outside",
        "outside/sub",
        "run",
        "run/base",
        "run/base/memories",
        "d",
    ] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
        std::fs::write(dir.join(d).join("keep.txt"), format!("keep {d}\n")).unwrap();
    }
    std::fs::write(dir.join("canary.txt"), "canary\n").unwrap();
    std::fs::write(dir.join("etc/passwd"), "root:x:0:0\n").unwrap();
}

fn snapshot(dir: &Path) -> Snapshot {
    fn walk(top: &Path, dir: &Path, out: &mut Snapshot) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(top).unwrap().to_path_buf();
            let mode = m.permissions().mode() & 0o7777;
            if m.is_dir() {
                out.insert(rel, ('d', Vec::new(), mode));
                walk(top, &p, out);
            } else if m.is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, ('l', t.into_os_string().into_encoded_bytes(), mode));
            } else {
                out.insert(rel, ('f', std::fs::read(&p).unwrap_or_default(), mode));
            }
        }
    }
    let mut out = Snapshot::new();
    let top = std::fs::symlink_metadata(dir).unwrap();
    out.insert(PathBuf::new(), ('d', Vec::new(), top.mode() & 0o7777));
    walk(dir, dir, &mut out);
    out
}

/// How many objects differ between two snapshots (added, removed or changed).
fn changes(before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    for (p, v) in before {
        match after.get(p) {
            None => out.push(format!("removed {}", p.display())),
            Some(w) if w != v => out.push(format!("changed {}", p.display())),
            _ => {}
        }
    }
    for p in after.keys().filter(|p| !before.contains_key(*p)) {
        out.push(format!("added {}", p.display()));
    }
    out
}

/// `renameat2(RENAME_EXCHANGE)` of two host paths.
fn exchange(a: &Path, b: &Path) -> bool {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).is_ok()
}

/// Put a link to `target` at `p` (the object that was there goes to `p~lnk`), wait a moment,
/// and put it back unless `keep`. True when the link was put in place.
fn swap_for_link(p: &Path, target: &Path, keep: bool, spin: usize) -> bool {
    let Some(lnk) = lnk_of(p) else {
        return false;
    };
    if std::os::unix::fs::symlink(target, &lnk).is_err() {
        return false;
    }
    let swapped = exchange(p, &lnk);
    if swapped {
        for _ in 0..spin {
            std::thread::yield_now();
        }
        if keep {
            return true;
        }
        exchange(p, &lnk);
    }
    if std::fs::symlink_metadata(&lnk).is_ok_and(|m| m.is_symlink()) {
        let _ = std::fs::remove_file(&lnk);
    }
    swapped
}

/// Where [`swap_for_link`] puts the object it swaps out: `p~lnk`.
fn lnk_of(p: &Path) -> Option<PathBuf> {
    let name = p.file_name()?;
    Some(p.with_file_name(format!("{}~lnk", name.to_string_lossy())))
}

/// Remove what a swap left in place at `p` (the link, and the object renamed to `p~lnk`),
/// which memcert no longer reaches: the swapper's garbage, so the folders it walks stay small.
fn collect_garbage(p: &Path) {
    if std::fs::symlink_metadata(p).is_ok_and(|m| m.is_symlink()) {
        let _ = std::fs::remove_file(p);
    }
    let Some(lnk) = lnk_of(p) else { return };
    match std::fs::symlink_metadata(&lnk) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(&lnk);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(&lnk);
        }
        Err(_) => {}
    }
}

/// Every object below `dir` down to `depth` levels, links and the swapper's own `~lnk` names
/// left out.
fn components(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.to_string_lossy().contains("~lnk") {
            continue;
        }
        let Ok(t) = e.file_type() else { continue };
        if t.is_symlink() {
            continue;
        }
        out.push(p.clone());
        if t.is_dir() && depth > 1 && out.len() < 400 {
            components(&p, depth - 1, out);
        }
    }
}

/// The folders of the same-uid race: `tmp` (this process's TMPDIR, where memcert makes its
/// scratch folders), `app` (where an app's run folder is laid out) and `canary` (where the
/// swapper's links point), under the crate's target temp folder.
struct Region {
    tmp: PathBuf,
    app: PathBuf,
    canary: PathBuf,
}

/// The region, made once per process, with TMPDIR pointed at `tmp` before memcert opens any
/// temp folder; the lock keeps two races of this process apart.
fn region() -> (&'static Region, std::sync::MutexGuard<'static, ()>) {
    static REGION: OnceLock<Region> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let r = REGION.get_or_init(|| {
        let top = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("scratch-race");
        let _ = std::fs::remove_dir_all(&top);
        let r = Region {
            tmp: top.join("tmp"),
            app: top.join("app"),
            canary: top.join("canary"),
        };
        for d in [&top, &r.tmp, &r.app] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        std::env::set_var("TMPDIR", &r.tmp);
        r
    });
    (r, guard)
}

/// A handler that touches no file: every disk operation of a case is memcert's own. It has a
/// HOME scratch folder, watched like an external handler's.
struct Quiet {
    home: Scratch,
}

impl Target for Quiet {
    fn describe(&self) -> String {
        "quiet".into()
    }
    fn reset(&mut self, _: &Path, _: &Path) -> Result<(), TargetError> {
        Ok(())
    }
    fn call(&mut self, _: &Value) -> Result<ToolResult, TargetError> {
        Ok(ToolResult::ok("ok"))
    }
    fn watched(&self) -> Vec<&Scratch> {
        vec![&self.home]
    }
}

/// What a same-uid race did.
#[derive(Debug, Default)]
struct Figures {
    rounds: usize,
    swaps: u64,
    left_swapped: u64,
    errors: usize,
    leftovers: usize,
    outside: Vec<String>,
}

/// Cases with setup (links, FIFOs, modes, deep chains, many files) and some plain ones; the
/// race cases run their own swapper on handles.
fn race_cases() -> Vec<Case> {
    catalog::all()
        .into_iter()
        .enumerate()
        .filter(|(i, c)| !c.setup.is_empty() || i % 50 == 0 || c.race.is_some())
        .map(|(_, c)| c)
        .collect()
}

/// How long a swap left in place stays before the swapper removes it (memcert meets the link
/// for that long).
const GARBAGE_AFTER: Duration = Duration::from_millis(300);

/// The same-uid race: `rounds` cases (and every other round an adapter folder or an app run
/// folder) laid out, run, walked and removed while a thread swaps their components for links
/// to the canary folder.
fn same_uid(rounds: usize) -> Figures {
    let (r, _guard) = region();
    let _ = std::fs::remove_dir_all(&r.canary);
    plant_canary(&r.canary);
    let before = snapshot(&r.canary);
    let app_root = r.app.join("run/base/memories");
    // What memcert resolves before it runs: the temp folder, the app's run folder.
    drop(Sandbox::create_unchecked(&[]).unwrap());
    scratch::check_run_folder(&r.app.join("run")).unwrap();
    let mut target = Quiet {
        home: Scratch::new("memcert-home-").unwrap(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, roots, canary) = (
            Arc::clone(&stop),
            vec![r.tmp.clone(), r.app.clone()],
            r.canary.clone(),
        );
        std::thread::spawn(move || {
            let mut rng = Rng(0x13_5eed);
            let (mut swaps, mut kept) = (0, 0);
            let mut garbage = std::collections::VecDeque::new();
            while !stop.load(Ordering::Relaxed) {
                while garbage
                    .front()
                    .is_some_and(|(t, _): &(Instant, PathBuf)| t.elapsed() > GARBAGE_AFTER)
                {
                    if let Some((_, p)) = garbage.pop_front() {
                        collect_garbage(&p);
                    }
                }
                let mut found = Vec::new();
                for root in &roots {
                    components(root, 4, &mut found);
                }
                if found.is_empty() {
                    std::thread::yield_now();
                    continue;
                }
                let p = &found[rng.below(found.len())];
                let to = match rng.below(2) {
                    0 => canary.clone(),
                    _ => canary.join(p.file_name().unwrap_or_default()),
                };
                let keep = rng.below(8) == 0;
                if swap_for_link(p, &to, keep, rng.below(20)) {
                    swaps += 1;
                    kept += u64::from(keep);
                    if keep {
                        garbage.push_back((Instant::now(), p.clone()));
                    }
                }
            }
            (swaps, kept)
        })
    };
    let cases = race_cases();
    let config = Config {
        race_rounds: Some(1),
        ..Default::default()
    };
    let mut f = Figures::default();
    for i in 0..rounds {
        let case = &cases[(i * 7) % cases.len()];
        if run_case(case, &mut target, &config).verdict == Verdict::Error {
            f.errors += 1;
        }
        match i % 4 {
            1 => {
                if let Ok(dir) = Scratch::new("memcert-adapter-") {
                    let _ = python::adapter_command(&dir, "python3", "x.py:X");
                }
            }
            3 => {
                if let Ok(sb) = Sandbox::create_at_unchecked(&app_root, &case.setup) {
                    sb.outside_unchecked();
                    sb.token_in_store_unchecked();
                }
            }
            _ => {}
        }
        f.rounds += 1;
        if rounds >= 5_000 && f.rounds % 1_000 == 0 {
            eprintln!("same-uid race: {} rounds", f.rounds);
        }
    }
    drop(target);
    stop.store(true, Ordering::Relaxed);
    (f.swaps, f.left_swapped) = swapper.join().unwrap();
    f.outside = changes(&before, &snapshot(&r.canary));
    // What the swapper renamed away for good stays behind (memcert never reaches it again);
    // this test removes it.
    for dir in [&r.tmp, &r.app] {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            f.leftovers += 1;
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                std::fs::remove_dir_all(&p).unwrap();
            } else {
                std::fs::remove_file(&p).unwrap();
            }
        }
    }
    f
}

fn check_same_uid(f: &Figures) {
    println!(
        "same-uid race: {} rounds, {} swaps for links ({} left in place for {} ms), {} cases \
         ERROR under the race, {} top-level entries left at the end, writes or deletes outside \
         memcert's scratch: {}",
        f.rounds,
        f.swaps,
        f.left_swapped,
        GARBAGE_AFTER.as_millis(),
        f.errors,
        f.leftovers,
        f.outside.len()
    );
    assert!(f.outside.is_empty(), "{:?}", f.outside);
    assert!(f.swaps > 0, "the swapper never swapped");
}

/// A thread of the same uid swaps memcert's scratch components for links to a canary folder
/// during layout, run and cleanup: the canary folder never changes.
// See: issue 13, "memcert's own scratch by handle" and its race acceptance point.
#[test]
fn same_uid_swaps_never_make_memcert_write_or_delete_outside_its_scratch() {
    check_same_uid(&same_uid(150));
}

/// The uid of `nobody` (65534 where /etc/passwd does not say).
fn nobody() -> u32 {
    std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("nobody:"))
                .and_then(|l| l.split(':').nth(2).and_then(|u| u.parse().ok()))
        })
        .unwrap_or(65534)
}

/// The attacker's side, run as `nobody` by [`other_uid`] (this binary, this test only): make a
/// `--memory-dir` tree in /tmp with an empty run folder anyone can write, print `TREE <path>`,
/// then until stdin closes swap the run folder and whatever memcert made in it for links to
/// the victim folder, and try to rename, remove and write into every `memcert-*` folder in
/// /tmp and /dev/shm that is not its own; print `FIGURES <swaps> <kept> <tried> <succeeded>`.
#[test]
#[ignore = "the other-uid attacker: started as nobody by the other-uid race"]
fn other_uid_attacker() {
    let Ok(victim) = std::env::var("MEMCERT_SCRATCH_ATTACKER") else {
        return;
    };
    let victim = PathBuf::from(victim);
    let tree = PathBuf::from(format!("/tmp/memcert-race-other-{}", std::process::id()));
    let run = tree.join("run");
    std::fs::create_dir(&tree).unwrap();
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o777)).unwrap();
    println!("TREE {}", tree.display());
    std::io::stdout().flush().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&stop);
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        s.store(true, Ordering::Relaxed);
    });
    let me = rustix::process::geteuid().as_raw();
    let mut rng = Rng(0x0bad_5eed);
    let (mut swaps, mut kept, mut tried, mut succeeded) = (0u64, 0u64, 0u64, 0u64);
    let mut seen = std::collections::BTreeSet::new();
    let started = Instant::now();
    while !stop.load(Ordering::Relaxed) && started.elapsed() < Duration::from_secs(600) {
        let mut found = vec![run.clone()];
        components(&run, 2, &mut found);
        let p = &found[rng.below(found.len())];
        let to = victim.join(p.strip_prefix(&tree).unwrap_or(p));
        // The run folder itself always comes back, so memcert's refusal is mostly for its owner.
        let keep = rng.below(16) == 0 && *p != run;
        if swap_for_link(p, &to, keep, rng.below(20)) {
            swaps += 1;
            kept += u64::from(keep);
        }
        for parent in ["/tmp", "/dev/shm"] {
            for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
                let p = e.path();
                let name = e.file_name().to_string_lossy().into_owned();
                let theirs = e.metadata().is_ok_and(|m| m.uid() != me);
                if !name.starts_with("memcert-") || !theirs || !seen.insert(p.clone()) {
                    continue;
                }
                tried += 1;
                let moved = p.with_file_name(format!("{name}~moved"));
                let attempts = [
                    std::fs::rename(&p, &moved).is_ok(),
                    std::fs::write(p.join("planted"), "x").is_ok(),
                    std::fs::remove_dir(&p).is_ok() || std::fs::remove_file(&p).is_ok(),
                ];
                succeeded += attempts.iter().filter(|ok| **ok).count() as u64;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tree);
    println!("FIGURES {swaps} {kept} {tried} {succeeded}");
}

/// Whether memcert's one-line refusal `line` is one the other-uid attacker's link, in place at
/// that moment, makes: named as a link, as a folder that is not empty, or met as a link that
/// was swapped in between memcert's look at a folder and its `O_NOFOLLOW` open of it (the open
/// fails with `ENOTDIR`).
fn swapped_in(line: &str) -> bool {
    line.contains("is a symbolic link")
        || line.contains("must be absent or empty")
        || line.contains("Not a directory (os error 20)")
}

/// What an other-uid race did.
#[derive(Debug, Default)]
struct OtherFigures {
    runs: usize,
    refused: usize,
    swaps: u64,
    kept: u64,
    tried: u64,
    succeeded: u64,
    outside: Vec<String>,
}

fn memcert(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memcert"))
        .args(args)
        .env_remove("TMPDIR")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The other-uid race, as root: `nobody` pre-creates the `--memory-dir` tree and swaps what it
/// can while `mock-api` (refused, then with --insecure-dirs) and `certify` (sandboxes in
/// /dev/shm) run `rounds` times each. `None` when not root.
fn other_uid(rounds: usize) -> Option<OtherFigures> {
    if !rustix::process::geteuid().is_root() {
        println!(
            "other-uid race skipped: it needs root (to run an attacker as nobody); run the \
             tests as root to race a process of another uid"
        );
        return None;
    }
    let victim = tempfile::Builder::new()
        .prefix("memcert-race-victim-")
        .tempdir()
        .unwrap();
    plant_canary(victim.path());
    std::fs::set_permissions(victim.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = snapshot(victim.path());
    let uid = nobody();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "other_uid_attacker", "--nocapture"])
        .args(["--test-threads", "1"])
        .env("MEMCERT_SCRATCH_ATTACKER", victim.path())
        .uid(uid)
        .gid(uid)
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let tree = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.split_once("TREE ").map(|(_, p)| PathBuf::from(p)))
        .expect("the attacker's tree");
    let memory_dir = tree.join("run/base/memories");
    let memory_dir = memory_dir.to_str().unwrap();
    let transcript = root().join("fixtures/transcripts/symlink-outside.json");
    let transcript = transcript.to_str().unwrap();
    let mock = ["mock-api", "--timeout", "0.2", "--transcript", transcript];
    let mut f = OtherFigures::default();
    for _ in 0..rounds {
        let (code, _, stderr) = memcert(&[&mock[..], &["--memory-dir", memory_dir]].concat());
        assert_eq!(code, Some(2), "{stderr}");
        let line = stderr.trim_end();
        assert!(!line.contains('\n'), "one line: {line}");
        // Refused for its owner, or (when the attacker's link is in place at that moment) as a
        // link, a folder that is not empty, or a link met as it was swapped in between memcert's
        // look at a folder and its open of it with no link followed (`Not a directory`).
        let strict = line.contains(&format!("{} is owned by uid {uid}", tree.display()))
            && line.ends_with("or pass --insecure-dirs");
        assert!(strict || swapped_in(line), "{line}");
        f.refused += usize::from(strict);
        let insecure = [&mock[..], &["--memory-dir", memory_dir, "--insecure-dirs"]].concat();
        let (code, out, err) = memcert(&insecure);
        assert!(matches!(code, Some(1 | 2)), "{code:?} {out}{err}");
        // With --insecure-dirs the owner is accepted: a refusal can only be the attacker's
        // link in place at that moment.
        if code == Some(2) {
            assert!(
                !err.contains("--insecure-dirs") && swapped_in(&err),
                "{err}"
            );
        }
        let (code, out, err) = memcert(&["certify", "--cases", "symlink/*"]);
        assert!(matches!(code, Some(0 | 1)), "{code:?} {out}{err}");
        f.runs += 3;
    }
    drop(child.stdin.take());
    let figures = lines
        .map_while(Result::ok)
        .find_map(|l| l.split_once("FIGURES ").map(|(_, f)| f.to_owned()))
        .expect("the attacker's figures");
    child.wait().unwrap();
    let n: Vec<u64> = figures.split(' ').map(|n| n.parse().unwrap()).collect();
    (f.swaps, f.kept, f.tried, f.succeeded) = (n[0], n[1], n[2], n[3]);
    f.outside = changes(&before, &snapshot(victim.path()));
    let _ = std::fs::remove_dir_all(&tree);
    Some(f)
}

fn check_other_uid(f: &OtherFigures) {
    println!(
        "other-uid race: {} memcert runs ({} refused without --insecure-dirs), {} swaps for \
         links by nobody ({} left in place), {} memcert folders in /tmp and /dev/shm attacked, \
         {} attacks succeeded, writes or deletes outside memcert's scratch: {}",
        f.runs,
        f.refused,
        f.swaps,
        f.kept,
        f.tried,
        f.succeeded,
        f.outside.len()
    );
    assert!(f.outside.is_empty(), "{:?}", f.outside);
    assert_eq!(f.succeeded, 0);
    assert!(f.swaps > 0, "the attacker never swapped");
}

/// A process running as another uid (`nobody`, when the tests run as root) swaps the
/// `--memory-dir` tree it made and attacks memcert's folders in /tmp and /dev/shm while the
/// binary runs: the tree is refused (one line naming the folder and --insecure-dirs, exit 2),
/// with --insecure-dirs nothing outside is written or removed, and no attack on memcert's own
/// folders succeeds.
// See: issue 13, the critical bug (an empty run folder of another user, swapped during layout
// and cleanup) and the race acceptance point.
#[test]
fn another_uid_cannot_make_memcert_write_or_delete_outside_its_scratch() {
    if let Some(f) = other_uid(1) {
        check_other_uid(&f);
    }
}

/// A `--memory-dir` whose folders another user could change is refused before anything runs,
/// in one line naming the folder and `--insecure-dirs`, exit 2: a folder above it writable by
/// others and not sticky; a run folder (two levels up) that is empty but not private; as root,
/// an empty run folder owned by `nobody` (the critical case). `--insecure-dirs` runs
/// it, and nothing is left in the folders.
// See: issue 13, the critical bug (`--app` and `mock-api` accepted another user's empty run
// folder).
#[test]
fn a_memory_dir_others_can_change_is_refused_in_one_line() {
    let s = tempfile::tempdir().unwrap();
    let transcript = root().join("fixtures/transcripts/symlink-outside.json");
    let mock = |memory_dir: &Path, extra: &[&str]| {
        let mut args = vec!["mock-api", "--timeout", "0.2", "--transcript"];
        args.push(transcript.to_str().unwrap());
        args.extend(["--memory-dir", memory_dir.to_str().unwrap()]);
        args.extend(extra);
        memcert(&args)
    };
    let refused = |memory_dir: &Path, folder: &Path, why: &str| {
        let (code, _, stderr) = mock(memory_dir, &[]);
        assert_eq!(code, Some(2), "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "memcert: error: --memory-dir {}: {} {why}: another user could swap what memcert makes in it for a link; fix its owner or mode, or pass --insecure-dirs\n",
                memory_dir.display(),
                folder.display()
            )
        );
        let (code, stdout, stderr) = mock(memory_dir, &["--insecure-dirs"]);
        assert_eq!(code, Some(1), "{stdout}{stderr}");
        assert!(
            stdout.contains("the conversation was not finished"),
            "{stdout}"
        );
    };
    let open = s.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    refused(
        &open.join("x/run/base/memories"),
        &open,
        "is writable by group or others (mode 0777) and not sticky",
    );
    assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0);
    let run = s.path().join("shared/run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).unwrap();
    refused(
        &run.join("base/memories"),
        &run,
        "is not private (mode 0755; remove it or `chmod 700` it)",
    );
    assert_eq!(std::fs::read_dir(&run).unwrap().count(), 0);
    if rustix::process::geteuid().is_root() {
        let theirs = s.path().join("theirs/run");
        std::fs::create_dir_all(&theirs).unwrap();
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
        let uid = rustix::process::Uid::from_raw(nobody());
        rustix::fs::chown(&theirs, Some(uid), None).unwrap();
        refused(
            &theirs.join("base/memories"),
            &theirs,
            &format!("is owned by uid {}, not by you (uid 0); memcert lays out only in a folder it makes or an empty one of yours", nobody()),
        );
        assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
    } else {
        println!("the run folder of another user is checked as root only (chown)");
    }
}

/// Both races at length, with their figures printed (not run in CI).
#[test]
#[ignore = "long: prints the race figures"]
fn long_races() {
    let rounds = |var: &str, default: usize| {
        std::env::var(var)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let started = Instant::now();
    check_same_uid(&same_uid(rounds("MEMCERT_SAME_UID_ROUNDS", 20_000)));
    println!("({:.1} s)", started.elapsed().as_secs_f64());
    let started = Instant::now();
    if let Some(f) = other_uid(rounds("MEMCERT_OTHER_UID_ROUNDS", 30)) {
        check_other_uid(&f);
    }
    println!("({:.1} s)", started.elapsed().as_secs_f64());
}
