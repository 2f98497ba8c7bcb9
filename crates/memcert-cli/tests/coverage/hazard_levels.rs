//! Hazards x commands x levels (issue 12): the reference handler's exact verdict on every
//! `hazard/*` case at `--level quick` (all twelve hazards x seven commands at the base depth),
//! and `memcert cases --level full` holding each of them again one and three folders down
//! (`/depth-1`, `/depth-3`), which `quick` and `standard` do not.

use std::collections::BTreeMap;

use memcert::certify;
use memcert::suite::catalog;

use super::common::memcert;

/// The hazards in catalog order, and the seven commands each meets.
const HAZARDS: [&str; 12] = [
    "hardlink-outside",
    "fifo",
    "socket",
    "char-device",
    "huge-file",
    "symlink-outside-file",
    "symlink-outside-dir",
    "symlink-inside",
    "unreadable-file",
    "deep-folder",
    "wide-folder",
    "linked-root",
];
const COMMANDS: [&str; 7] = [
    "view",
    "create",
    "str_replace",
    "insert",
    "delete",
    "rename-from",
    "rename-onto",
];

/// What the reference gets on `hazard/<hazard>/<command>`: PASS, but the unreadable file's
/// cases are SKIPPED where this process is root (permission bits do not bind an in-process
/// handler of a root memcert: `certify::skip_reason`). The device's cases run, as in
/// `hazards.rs` (these tests run where `mknod` succeeds: as root, in CI).
fn reference_verdict(hazard: &str, unreadable_skipped: bool) -> &'static str {
    if hazard == "unreadable-file" && unreadable_skipped {
        "SKIPPED"
    } else {
        "PASS"
    }
}

#[test]
fn the_reference_passes_every_hazard_command_pair_at_quick() {
    let cases = catalog::for_level(catalog::RunLevel::Quick);
    let unreadable = cases
        .iter()
        .find(|c| c.id == "hazard/unreadable-file/view")
        .unwrap();
    let unreadable_skipped = certify::skip_reason(unreadable).is_some();
    let want: BTreeMap<String, &str> = HAZARDS
        .iter()
        .flat_map(|h| {
            COMMANDS.iter().map(move |c| {
                (
                    format!("hazard/{h}/{c}"),
                    reference_verdict(h, unreadable_skipped),
                )
            })
        })
        .collect();
    assert_eq!(want.len(), 84);

    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let (code, stdout, _) = memcert(&[
        "certify",
        "--level",
        "quick",
        "--cases",
        "hazard/*",
        "--report-json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let got: BTreeMap<String, &str> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn full_adds_each_hazard_but_the_linked_root_one_and_three_folders_down() {
    let ids = |level: &str| -> Vec<String> {
        let (code, stdout, _) = memcert(&["cases", "--level", level, "--cases", "hazard/*"]);
        assert_eq!(code, Some(0), "{stdout}");
        stdout.lines().map(str::to_owned).collect()
    };
    let base: Vec<String> = HAZARDS
        .iter()
        .flat_map(|h| COMMANDS.iter().map(move |c| format!("hazard/{h}/{c}")))
        .collect();
    assert_eq!(ids("quick"), base);
    assert_eq!(ids("standard"), base);
    let mut want = base.clone();
    for depth in [1, 3] {
        want.extend(
            base.iter()
                .filter(|id| !id.starts_with("hazard/linked-root/"))
                .map(|id| format!("{id}/depth-{depth}")),
        );
    }
    let full = ids("full");
    assert_eq!(full.len(), 84 + 2 * 77);
    assert_eq!(full, want);
}
