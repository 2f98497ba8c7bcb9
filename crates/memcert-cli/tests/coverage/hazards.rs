//! Hazards x commands (issue 12): four one-flaw fixtures on the careful body of
//! `fixtures/handlers/flawed/_careful_base.py`, each caught on exactly the `hazard/*` case its flaw
//! meets, with `bug:B17` for unbounded reads; the character-device cases run (not SKIPPED).
//!
//! `--level quick` runs the whole quick catalog (races excluded); the default level runs
//! `hazard/*` only (the 84 hazard cases are the same at quick and standard, and the flaws are
//! local; the careful body passes every case of the seven hazards added after the first five).

use std::collections::BTreeMap;

use super::{certify_fixture, Run};

/// The cases the careful body answers in its own words or with the SDKs' choices (NON-STRICT) at
/// `--level quick`: the same for every fixture built on it, none of them a hazard case. (An
/// unreadable folder is listed as empty: the permission cases run, contained, as root too.)
const BODY_QUICK: [&str; 20] = [
    "view/dir/root-trailing-slash",
    "view/file/view-range/inverted",
    "view/file/view-range/start-zero",
    "view/file/view-range/past-end",
    "view/file/line-limit/exactly",
    "create/trailing-slash",
    "insert/text-trailing-newlines",
    "delete/file-trailing-slash",
    "rename/into-own-subtree",
    "root/view/dot",
    "root/view/double-slash",
    "path/dot/inside",
    "path/empty-component",
    "scenario/non-utf8-name/listing",
    "scenario/no-permission/dir/listing",
    "malformed/view/view-range-not-list",
    "malformed/view/view-range-one-item",
    "malformed/view/view-range-strings",
    "malformed/insert/insert-line-string",
    "malformed/insert/insert-line-bool",
];

/// The seven cases of the character device.
const DEVICE_CASES: [&str; 7] = [
    "hazard/char-device/view",
    "hazard/char-device/create",
    "hazard/char-device/str_replace",
    "hazard/char-device/insert",
    "hazard/char-device/delete",
    "hazard/char-device/rename-from",
    "hazard/char-device/rename-onto",
];

/// Run `file:class` at `--level quick` (whole catalog) and at the default level (`hazard/*`),
/// and check each run's caught cases: at quick, the body's NON-STRICT cases and `flaw`; at the
/// default level, the `hazard/*` entries of `flaw`. Both runs exit 1 and run the device cases.
/// Returns the quick run.
fn caught_exactly(file: &str, class: &str, flaw: &[(&str, &str)]) -> Run {
    let quick = certify_fixture(file, class, Some("quick"), &[]);
    let mut want: BTreeMap<&str, &str> = BODY_QUICK.iter().map(|id| (*id, "NON-STRICT")).collect();
    want.extend(flaw.iter().copied());
    assert_eq!(quick.caught(), want, "{file} at --level quick");
    assert_eq!(quick.code, Some(1), "{file}");
    let default = certify_fixture(file, class, None, &["--cases", "hazard/*"]);
    let want: BTreeMap<&str, &str> = flaw
        .iter()
        .copied()
        .filter(|(id, _)| id.starts_with("hazard/"))
        .collect();
    assert_eq!(default.caught(), want, "{file} at the default level");
    assert_eq!(default.cases.len(), 84, "{file}");
    assert_eq!(default.code, Some(1), "{file}");
    for run in [&quick, &default] {
        for id in DEVICE_CASES {
            assert_ne!(
                run.cases[id].verdict, "SKIPPED",
                "{file}: {id}: {:?}",
                run.cases[id]
            );
        }
    }
    quick
}

/// The findings of `id` in `run` that start with `prefix` (`VERDICT kind: detail`).
fn findings<'r>(run: &'r Run, id: &str, prefix: &str) -> Vec<&'r String> {
    run.cases[id]
        .findings
        .iter()
        .filter(|f| f.starts_with(prefix))
        .collect()
}

#[test]
fn insert_without_the_hard_link_check_is_unsafe_on_the_outside_canary() {
    let run = caught_exactly(
        "hardlink_insert.py",
        "HardlinkInsertMemoryTool",
        &[("hazard/hardlink-outside/insert", "UNSAFE")],
    );
    assert_eq!(
        findings(&run, "hazard/hardlink-outside/insert", "UNSAFE"),
        ["UNSAFE outside-changed: outside the root, base/outside/hard-source.txt was changed"]
    );
}

#[test]
fn create_that_overwrites_in_place_is_unsafe_through_a_hard_link() {
    let run = caught_exactly(
        "create_in_place.py",
        "CreateInPlaceMemoryTool",
        &[
            ("hazard/hardlink-outside/create", "UNSAFE"),
            // The overwrite itself, which the doc allows (spec:2.2/B2).
            ("hazard/huge-file/create", "NON-STRICT"),
            ("hazard/deep-folder/create", "NON-STRICT"),
            ("hazard/wide-folder/create", "NON-STRICT"),
            ("create/existing-file", "NON-STRICT"),
            ("create/existing-through-view", "NON-STRICT"),
            ("batch/create-twice", "NON-STRICT"),
        ],
    );
    assert_eq!(
        findings(&run, "hazard/hardlink-outside/create", "UNSAFE"),
        ["UNSAFE outside-changed: outside the root, base/outside/hard-source.txt was changed"]
    );
}

#[test]
fn a_read_of_a_character_device_is_an_unbounded_read() {
    let run = caught_exactly(
        "device_read.py",
        "DeviceReadMemoryTool",
        &[("hazard/char-device/view", "FAIL")],
    );
    let f = findings(&run, "hazard/char-device/view", "FAIL");
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].starts_with(
            "FAIL unbounded-read: step 1: unbounded read of a character device: the handler read "
        ) && f[0].ends_with(" bytes for one call, more than 16777216 (bug:B17)"),
        "{f:?}"
    );
}

#[test]
fn a_huge_file_read_whole_before_its_size_is_checked_is_an_unbounded_read() {
    let run = caught_exactly(
        "huge_read.py",
        "HugeReadMemoryTool",
        &[("hazard/huge-file/view", "FAIL")],
    );
    let f = findings(&run, "hazard/huge-file/view", "FAIL");
    assert_eq!(f.len(), 1, "{f:?}");
    // More than the bound, at most the whole 64 MiB file and a few bytes of the request line
    // and the interpreter's own (memcert stops waiting once the bound is passed).
    let bytes: u64 = f[0]
        .strip_prefix(
            "FAIL unbounded-read: step 1: unbounded read of a huge file: the handler read ",
        )
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{f:?}"));
    assert!(
        ((16 << 20) + 1..(64 << 20) + (1 << 20)).contains(&bytes),
        "{bytes}"
    );
}

#[test]
fn a_view_with_no_file_type_check_is_one_cause_over_the_fifo_and_the_device() {
    // Only the cases a view meets a special file in; a FIFO hangs until --timeout.
    let run = certify_fixture(
        "no_type_check.py",
        "NoTypeCheckMemoryTool",
        None,
        &[
            "--cases",
            "view/fifo",
            "--cases",
            "hazard/*",
            "--cases",
            "scenario/socket/*",
            "--jobs",
            "1",
            "--timeout",
            "3",
        ],
    );
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.caught(),
        BTreeMap::from([
            ("hazard/char-device/view", "FAIL"),
            ("hazard/fifo/view", "FAIL"),
            ("view/fifo", "FAIL"),
        ])
    );
    assert_eq!(
        run.causes,
        ["FAIL unbounded-read 3: reads a FIFO, socket or device instead of refusing it: the call hangs or its read never ends (bug:B17) [view/fifo, hazard/fifo/view, hazard/char-device/view]"]
    );
}
