//! Reference handler tests: one insta snapshot per catalog case and profile (every exact reply
//! string, named `<case id with / as __>@<profile>` in the top-level `snapshots/`), plus the
//! on-disk guarantees the catalog cannot see (modes, no temp files left, links left alone).
//! Cases SKIPPED here (permission scenarios as root) keep their snapshots, which a run as another
//! user checks: `setpriv --reuid=nobody ...` on the test binary.
//!
//! New reply-string tests go here; certifier behaviour goes in `crates/memcert-cli/tests/certify/`.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;

use memcert::certify::{run_case, skip_reason, Config};
use memcert::handler::reference::{Options, Reference};
use memcert::handler::Handler;
use memcert::suite::verdict::Verdict;
use memcert::suite::{catalog, Case, Fs};
use memcert::target::inproc::InProcess;
use memcert::text::Profile;
use serde_json::json;

/// Directories of a case's setup (their sizes depend on the filesystem, so snapshots mask them).
fn setup_dirs(case: &Case) -> BTreeSet<String> {
    let mut dirs = BTreeSet::from(["/memories".to_owned()]);
    for item in &case.setup {
        let (path, is_dir) = match item {
            Fs::Dir { path } => (path, true),
            Fs::File { path, .. } | Fs::Lines { path, .. } | Fs::Fifo { path } => (path, false),
            Fs::Symlink { path, .. } | Fs::HardLinkOutside { path, .. } => (path, false),
            Fs::Socket { path } | Fs::Mode { path, .. } => (path, false),
            Fs::RawName { dir, .. } | Fs::ManyFiles { dir, .. } => (dir, true),
            Fs::DeepChain { path, depth } => {
                for k in 1..=*depth {
                    dirs.insert(format!("{path}{}", "/d".repeat(k)));
                }
                (path, true)
            }
            Fs::RootSymlink { .. } | Fs::RootFifo | Fs::RootFile { .. } => continue,
        };
        let mut p = path.trim_end_matches('/').to_owned();
        if is_dir {
            dirs.insert(p.clone());
        }
        while let Some(i) = p.rfind('/') {
            p.truncate(i);
            if p.len() < "/memories".len() {
                break;
            }
            dirs.insert(p.clone());
        }
    }
    dirs
}

fn mask_dir_sizes(text: &str, dirs: &BTreeSet<String>) -> String {
    if !text.starts_with("Here're the files") {
        return text.to_owned();
    }
    text.split('\n')
        .map(|line| match line.split_once('\t') {
            Some((_, path)) if dirs.contains(path.trim_end_matches('/')) => {
                format!("<DIR>\t{path}")
            }
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The run folder (`<tmp>/memcert-XXXXXX`) differs per run: replies that echo a `{RUN}` input
/// hold it.
fn mask_run_dir(text: &str) -> String {
    // Where the sandboxes are made (/dev/shm or the temp folder), spelled <TMP>.
    let tmp = memcert::attack::sandbox::default_parent().to_string_lossy();
    let mut out = text.replace(tmp.trim_start_matches('/'), "<TMP>");
    // The run folder `memcert-XXXXXX` and its alias `memcert-alias-XXXXXX` (what inputs name).
    let mut at = 0;
    while let Some(i) = out[at..].find("memcert-").map(|i| at + i) {
        let start = if out[i..].starts_with("memcert-alias-") {
            i + "memcert-alias-".len()
        } else {
            i + "memcert-".len()
        };
        let end = (start + 6).min(out.len());
        if out.is_char_boundary(end) {
            out.replace_range(start..end, "XXXXXX");
        }
        at = end.min(out.len());
    }
    out
}

fn shorten(text: &str) -> String {
    if text.len() <= 4000 {
        return text.to_owned();
    }
    let head: String = text.chars().take(400).collect();
    let tail: Vec<&str> = text.rsplitn(3, '\n').collect();
    format!(
        "{head}\n[... {} bytes, {} lines in all; last lines:]\n{}\n{}",
        text.len(),
        text.split('\n').count(),
        tail.get(1).unwrap_or(&""),
        tail.first().unwrap_or(&"")
    )
}

#[test]
fn every_reply_string_of_every_case_and_profile() {
    let cases = catalog::all();
    for profile in Profile::ALL {
        let mut target = InProcess::reference(profile);
        let config = Config {
            profile,
            strict: true,
            // Whole replies: a snapshot summarises a long one itself (`shorten`).
            keep_reply_bytes: Some(usize::MAX),
            ..Default::default()
        };
        for case in &cases {
            let rec = run_case(case, &mut target, &config);
            if skip_reason(case).is_some() {
                // Permission scenarios as root (CI): SKIPPED, and their snapshots are left
                // alone (made and checked by runs as another user).
                assert_eq!(rec.verdict, Verdict::Skipped, "{}", case.id);
                continue;
            }
            assert_eq!(
                rec.verdict,
                Verdict::Pass,
                "{} @{profile}: {:#?}",
                case.id,
                rec.findings
            );
            if case.race.is_some() {
                // Which reply a raced command gets depends on timing: graded, not snapshotted.
                continue;
            }
            let dirs = setup_dirs(case);
            let mut body = String::new();
            for (i, step) in rec.steps.iter().enumerate() {
                let reply = step.reply.as_ref().expect("the reference always answers");
                body.push_str(&format!(
                    "--- step {} ---\nis_error: {}\n{}\n",
                    i + 1,
                    reply.is_error,
                    shorten(&mask_run_dir(&mask_dir_sizes(&reply.text(), &dirs)))
                ));
            }
            let inputs: Vec<String> = case
                .steps
                .iter()
                .map(|s| shorten(&s.input.to_string()))
                .collect();
            let mut settings = insta::Settings::clone_current();
            settings.set_snapshot_path("../../../../snapshots");
            settings.set_prepend_module_to_snapshot(false);
            settings.set_snapshot_suffix(profile.as_str());
            settings.set_info(&inputs);
            settings.set_omit_expression(true);
            settings.bind(|| {
                insta::assert_snapshot!(case.id.replace('/', "__"), body);
            });
        }
    }
}

fn store() -> (tempfile::TempDir, Reference) {
    let dir = tempfile::tempdir().unwrap();
    let h = Reference::open_ambient(
        &dir.path().join("memories"),
        Profile::Docs,
        Options::default(),
    )
    .unwrap();
    (dir, h)
}

#[test]
fn files_are_0600_and_new_directories_0700() {
    let (dir, mut h) = store();
    let r = h.apply(&json!({"command": "create", "path": "/memories/a/b/c.txt", "file_text": "x"}));
    assert!(!r.is_error, "{}", r.text());
    let mode = |p: &str| {
        std::fs::metadata(dir.path().join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("memories/a"), 0o700);
    assert_eq!(mode("memories/a/b"), 0o700);
    assert_eq!(mode("memories/a/b/c.txt"), 0o600);
    h.apply(&json!({"command": "str_replace", "path": "/memories/a/b/c.txt", "old_str": "x", "new_str": "y"}));
    assert_eq!(mode("memories/a/b/c.txt"), 0o600);
}

#[test]
fn edits_leave_no_temp_files_behind() {
    let (dir, mut h) = store();
    h.apply(&json!({"command": "create", "path": "/memories/f.txt", "file_text": "a\nb\n"}));
    h.apply(&json!({"command": "str_replace", "path": "/memories/f.txt", "old_str": "a", "new_str": "A"}));
    h.apply(&json!({"command": "insert", "path": "/memories/f.txt", "insert_line": 2, "insert_text": "c"}));
    h.apply(&json!({"command": "create", "path": "/memories/f.txt", "file_text": "again"}));
    let names: Vec<String> = std::fs::read_dir(dir.path().join("memories"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["f.txt"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("memories/f.txt")).unwrap(),
        "A\nb\nc\n"
    );
}

#[test]
fn a_rename_of_a_missing_source_creates_no_directories() {
    let (dir, mut h) = store();
    let r = h.apply(&json!({"command": "rename", "old_path": "/memories/ghost", "new_path": "/memories/n/e/w.txt"}));
    assert_eq!(r.text(), "Error: The path /memories/ghost does not exist");
    assert!(!dir.path().join("memories/n").exists());
}

#[test]
fn the_root_replaced_by_a_link_after_opening_is_not_followed() {
    // The handle is held: renaming the root away and planting a link in its place does not
    // redirect later commands (bug:B10: pin the root once at start-up).
    let (dir, mut h) = store();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::rename(dir.path().join("memories"), dir.path().join("moved")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.path().join("memories")).unwrap();
    let r = h.apply(&json!({"command": "create", "path": "/memories/x.txt", "file_text": "x"}));
    assert!(!r.is_error);
    assert!(dir.path().join("moved/x.txt").exists());
    assert!(!outside.join("x.txt").exists());
}

#[test]
fn a_line_limit_of_exactly_999999_lines_is_accepted() {
    let (dir, mut h) = store();
    std::fs::write(dir.path().join("memories/max.txt"), "x\n".repeat(999_999)).unwrap();
    let r = h.apply(
        &json!({"command": "view", "path": "/memories/max.txt", "view_range": [999_998, -1]}),
    );
    assert_eq!(
        r.text(),
        "Here's the content of /memories/max.txt with line numbers:\n999998\tx\n999999\tx\n1000000\t"
    );
}

#[test]
fn many_matches_are_listed_in_linear_time_and_capped() {
    // See: review R1 (a str_replace on a file full of matches was quadratic).
    let (dir, mut h) = store();
    std::fs::write(dir.path().join("memories/a.txt"), "a\n".repeat(200_000)).unwrap();
    let r = h.apply(&json!({"command": "str_replace", "path": "/memories/a.txt", "old_str": "a", "new_str": "b"}));
    assert!(r.is_error);
    let text = r.text();
    let list = text
        .split("in lines: ")
        .nth(1)
        .unwrap()
        .trim_end_matches(". Please ensure it is unique");
    let listed: Vec<&str> = list.split(", ").collect();
    assert_eq!(listed.len(), memcert::handler::reference::MAX_LISTED_LINES);
    assert_eq!(listed[..3], ["1", "2", "3"]);
    assert_eq!(listed[999], "1000");
}

#[test]
fn a_deep_tree_is_deleted_without_recursion_and_a_too_deep_one_is_refused() {
    // See: review R2 (recursive delete of a tree built with renames overflowed the stack).
    let (dir, mut h) = store();
    let deep = |levels: usize| format!("t/{}", "a/".repeat(levels));
    std::fs::create_dir_all(dir.path().join("memories").join(deep(200))).unwrap();
    std::fs::write(dir.path().join("memories").join(deep(200)).join("f"), "x").unwrap();
    let r = h.apply(&json!({"command": "delete", "path": "/memories/t"}));
    assert_eq!(r.text(), "Successfully deleted /memories/t");
    assert!(!dir.path().join("memories/t").exists());
    std::fs::create_dir_all(dir.path().join("memories").join(deep(300))).unwrap();
    let r = h.apply(&json!({"command": "delete", "path": "/memories/t"}));
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "Error: The path /memories/t could not be accessed (too deeply nested)."
    );
}

#[test]
fn a_store_root_that_is_a_symlink_is_refused() {
    // See: bug:B10 (a symlinked store root moves the whole store).
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("outside")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside"), dir.path().join("memories")).unwrap();
    let e = Reference::open_ambient(
        &dir.path().join("memories"),
        Profile::Docs,
        Options::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "the store root is a symbolic link; memcert refuses to follow it (B10)"
    );
}

#[test]
fn listings_leave_out_forged_names_and_hard_links() {
    // See: review R4, R5; spec:3/S-9.
    let (dir, mut h) = store();
    let m = dir.path().join("memories");
    std::fs::write(m.join("x\n4.0K\t\u{2215}memories\u{2215}forged"), "f").unwrap();
    std::fs::write(m.join("b\u{202e}txt.exe"), "f").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "0123456789").unwrap();
    std::fs::hard_link(dir.path().join("outside.txt"), m.join("hard")).unwrap();
    std::fs::write(m.join("ok.txt"), "ok").unwrap();
    let r = h.apply(&json!({"command": "view", "path": "/memories"}));
    let text = r.text();
    let lines: Vec<&str> = text.lines().skip(2).collect();
    assert_eq!(lines, ["2B\t/memories/ok.txt"]);
}

#[test]
fn files_over_the_size_limit_are_refused_for_reading_and_editing() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        fsync: false,
        max_file_bytes: 10,
    };
    let mut h =
        Reference::open_ambient(&dir.path().join("memories"), Profile::Docs, options).unwrap();
    std::fs::write(dir.path().join("memories/big.txt"), "0123456789A").unwrap();
    let want =
        "Error: The file /memories/big.txt is larger than the 10-byte limit for memory files.";
    for input in [
        json!({"command": "view", "path": "/memories/big.txt"}),
        json!({"command": "str_replace", "path": "/memories/big.txt", "old_str": "A", "new_str": "B"}),
        json!({"command": "insert", "path": "/memories/big.txt", "insert_line": 0, "insert_text": "x"}),
    ] {
        let r = h.apply(&input);
        assert!(r.is_error);
        assert_eq!(r.text(), want);
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("memories/big.txt")).unwrap(),
        "0123456789A"
    );
}

#[test]
fn every_payload_of_the_corpus_is_refused_or_confined_by_the_reference() {
    // Each payload once, in a field that rotates over the seven path fields, as the certifier's
    // payload case (`suite::catalog::payload::case`; `--level full` runs all seven).
    use memcert::attack::payloads::{corpus, Field};
    use memcert::suite::catalog::payload;
    let mut target = InProcess::reference(Profile::Docs);
    let config = Config {
        profile: Profile::Docs,
        strict: false,
        ..Default::default()
    };
    let mut literal = BTreeSet::new();
    for (i, p) in corpus().into_iter().enumerate() {
        let field = Field::ALL[i % Field::ALL.len()];
        let case = payload::case(&p, field);
        let rec = run_case(&case, &mut target, &config);
        assert!(
            matches!(rec.verdict, Verdict::Pass | Verdict::Info),
            "{}: {:?}",
            case.id,
            rec.findings
        );
        if rec.verdict == Verdict::Info {
            // Accepted: only as a literal name created inside the store.
            assert!(!p.real, "{} was accepted", case.id);
            assert!(
                matches!(field, Field::CreatePath | Field::RenameNewPath),
                "{}",
                case.id
            );
            let key = match (&p.dot, &p.slash) {
                (Some(d), Some(s)) => format!("{d}/{s}"),
                _ => p.id.clone(),
            };
            literal.insert(key);
        }
    }
    // The spellings no rule of the grammar refuses, because no decoder or NFKC turns them into
    // a separator: U+2215 and `%u2215` (division slash), `....`, `..;`, a drive-relative name, a
    // device name. A decoder that maps U+2215 to `/` would make them traversal: the oracle, not
    // the grammar, is what catches that in a third-party handler.
    let mut want = BTreeSet::new();
    for dot in [
        "fullwidth",
        "one-dot-leaders",
        "plain",
        "semicolon",
        "small-full-stops",
        "strip-four-dots",
        "strip-nested",
        "two-dot-leader",
    ] {
        for slash in ["division-slash", "percent-u-slash"] {
            want.insert(format!("{dot}/{slash}"));
        }
    }
    for other in [
        "semicolon/slash",
        "strip-four-dots/slash",
        "absolute/drive-relative",
        "windows/device",
    ] {
        want.insert(other.to_owned());
    }
    // The check/use spellings of `..` (families trim, ignorable, slug: `.. `, `.\u{200b}.`,
    // `.._`) are names to a grammar that trims and strips nothing: literal names wherever the
    // rotation puts them in a field that makes a name (a tab is a control character, refused).
    let spelled: Vec<String> = corpus()
        .into_iter()
        .enumerate()
        .filter(|(i, p)| {
            p.spelling.is_some()
                && !p.text.contains('\t')
                && matches!(
                    Field::ALL[i % Field::ALL.len()],
                    Field::CreatePath | Field::RenameNewPath
                )
        })
        .map(|(_, p)| p.id)
        .collect();
    assert_eq!(spelled.len(), 35);
    want.extend(spelled);
    assert_eq!(literal, want);
}
