//! Coverage: one-flaw handlers that the catalog before 2026.12.3 certified, each otherwise
//! careful, caught at `--level quick` and at the default level with exact case ids and verdicts,
//! and no case ERROR in their runs. Each class of flaw has a module of its own:
//!
//! - `hazards`: every command against every planted hazard (hard links, FIFOs, devices, huge
//!   files), bug:B17 for unbounded reads and hangs;
//! - `spelling`: check/use gaps on trimmed, invisible and normalised characters (bug:B22,
//!   bug:B24) and aliasing stores (bug:B08);
//! - `watch`: writes outside undone before the case ends, and escapes past the base folder.
//!
//! The fixtures live in `fixtures/handlers/flawed/` and are run through the `memcert` binary as
//! a user would run them, with a JSON report.

#[path = "../common/mod.rs"]
mod common;
mod watch;
use common::*;

mod hazard_levels;
mod hazards;

use std::collections::BTreeMap;
use std::process::Command;

mod spelling;

/// One case of a run: its verdict and its findings as `VERDICT kind: detail` lines.
#[derive(Debug)]
pub struct Ran {
    /// The case's verdict, as the report spells it (`UNSAFE`).
    pub verdict: String,
    /// `VERDICT kind: detail`, one per finding, in report order.
    pub findings: Vec<String>,
}

/// A whole run of `memcert certify` on one fixture.
#[derive(Debug)]
pub struct Run {
    /// The process's exit code.
    pub code: Option<i32>,
    /// Every case of the run by id.
    pub cases: BTreeMap<String, Ran>,
    /// The report's causes, as `VERDICT kind count: shape [ids]`, in report order.
    pub causes: Vec<String>,
}

impl Run {
    /// The ids and verdicts of the cases whose verdict is not PASS, INFO or SKIPPED.
    pub fn caught(&self) -> BTreeMap<&str, &str> {
        self.cases
            .iter()
            .filter(|(_, r)| !matches!(r.verdict.as_str(), "PASS" | "INFO" | "SKIPPED"))
            .map(|(id, r)| (id.as_str(), r.verdict.as_str()))
            .collect()
    }
}

/// Run `memcert certify --python fixtures/handlers/flawed/<file>:<class>` at `level`
/// (`"quick"`, or `None` for the default level), races excluded, with `extra` arguments, and
/// read its JSON report. Panics (the test fails) when any case is ERROR, naming them.
pub fn certify_fixture(file: &str, class: &str, level: Option<&str>, extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let spec = format!("fixtures/handlers/flawed/{file}:{class}");
    let py = python();
    let mut args = vec![
        "certify",
        "--python",
        &spec,
        "--python-exe",
        &py,
        "--exclude",
        "race/*",
        "--report-json",
        json.to_str().unwrap(),
    ];
    if let Some(level) = level {
        args.extend(["--level", level]);
    }
    args.extend(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_memcert"))
        .args(&args)
        .current_dir(root())
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "{spec}: no report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut cases = BTreeMap::new();
    for c in report["cases"].as_array().unwrap() {
        let findings = c["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{} {}: {}",
                    f["verdict"].as_str().unwrap_or(""),
                    f["kind"].as_str().unwrap_or(""),
                    f["detail"].as_str().unwrap_or("")
                )
            })
            .collect();
        cases.insert(
            c["id"].as_str().unwrap().to_owned(),
            Ran {
                verdict: c["verdict"].as_str().unwrap().to_owned(),
                findings,
            },
        );
    }
    let errors: Vec<(&String, &Vec<String>)> = cases
        .iter()
        .filter(|(_, r)| r.verdict == "ERROR")
        .map(|(id, r)| (id, &r.findings))
        .collect();
    assert!(errors.is_empty(), "{spec}: ERROR cases: {errors:#?}");
    let causes = report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let ids: Vec<&str> = c["ids"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|i| i.as_str())
                .collect();
            format!(
                "{} {} {}: {} [{}]",
                c["verdict"].as_str().unwrap_or(""),
                c["kind"].as_str().unwrap_or(""),
                c["count"],
                c["shape"].as_str().unwrap_or(""),
                ids.join(", ")
            )
        })
        .collect();
    Run {
        code: out.status.code(),
        cases,
        causes,
    }
}
