//! The SARIF report validates against the SARIF 2.1.0 JSON schema, on a real run with findings
//! (the reference handler at the quick level graded as the Python SDK, so FAIL and NON-STRICT
//! causes appear), and holds one result per FAIL or UNSAFE cause, each with a
//! repository-relative location and a fingerprint.
//!
//! `sarif-2.1.0.schema.json` beside this file is the OASIS SARIF 2.1.0 schema
//! (`$id` https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json)
//! as the `serde-sarif` 0.8.0 crate ships it in `src/schema.json` (SHA-256
//! af47e7b67f24efe74076621fd3a5fbe7398add9e84fe820c971219a385895cea).

use std::path::PathBuf;

use memcert::handler::reference::{Options as RefOptions, Reference};
use memcert::report::{causes, sarif};
use memcert::suite::catalog::RunLevel;
use memcert::suite::verdict::Verdict;
use memcert::text::Profile;
use serde_json::Value;

fn schema() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/sarif_schema/sarif-2.1.0.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn errors_of(log: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(&schema()).unwrap();
    validator
        .iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path))
        .collect()
}

#[test]
fn a_real_sarif_report_validates_and_has_one_result_per_cause() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("memories");
    std::fs::create_dir(&root).unwrap();
    let opts = RefOptions {
        fsync: false,
        ..RefOptions::default()
    };
    let mut h = Reference::open_ambient(&root, Profile::Docs, opts).unwrap();
    let run = memcert::certify(
        &mut h,
        &memcert::Options {
            level: RunLevel::Quick,
            exclude: vec!["race/*".into()],
            profile: Profile::PythonSdk,
            ..Default::default()
        },
    )
    .unwrap();
    let options = sarif::Options {
        location: "handlers/my%20handler.py".into(),
        non_strict: true,
    };
    let log: Value =
        serde_json::from_str(&sarif::render_with(&run.summary, &run.cases, &options)).unwrap();
    assert_eq!(errors_of(&log), Vec::<String>::new());

    let causes = causes::causes(&run.cases);
    let reported = causes
        .iter()
        .filter(|c| {
            matches!(
                c.verdict,
                Verdict::Unsafe | Verdict::Fail | Verdict::NonStrict
            )
        })
        .count();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(reported > 0, "the run has causes to report");
    assert_eq!(results.len(), reported);
    for r in results {
        let location = &r["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(location["uri"], "handlers/my%20handler.py");
        assert_eq!(location["uriBaseId"], "%SRCROOT%");
        assert_eq!(
            r["partialFingerprints"]["memcertCause/v1"]
                .as_str()
                .unwrap()
                .len(),
            32
        );
    }
}

#[test]
fn the_validator_catches_a_wrong_log() {
    let log = serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": [{"level": "severe"}]}]});
    let errors = errors_of(&log);
    assert_eq!(
        errors,
        [
            "/runs/0/results/0/level: \"severe\" is not one of \"none\", \"note\" or 2 other candidates",
            "/runs/0/results/0: \"message\" is a required property",
            "/runs/0/tool/driver: \"name\" is a required property",
        ]
    );
}
