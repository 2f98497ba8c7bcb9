//! The JSON report has the shape `docs/report.schema.json` declares, checked on real reports
//! (the reference handler at the quick level, and a leaky handler whose report holds findings)
//! by a small validator of the schema keywords that file uses: `type`, `const`, `enum`,
//! `properties`, `required`, `additionalProperties: false`, `items`, `anyOf` and local `$ref`.

use std::path::PathBuf;

use memcert::handler::reference::{Options as RefOptions, Reference};
use memcert::report::json;
use memcert::suite::catalog::RunLevel;
use memcert::text::Profile;
use serde_json::Value;

fn schema() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/report.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every place `value` breaks `schema`, as `json-pointer: why`.
fn check(root: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return check(root, &root["$defs"][name], value, at, errors);
    }
    if let Some(c) = schema.get("const") {
        if c != value {
            errors.push(format!("{at}: {value} is not {c}"));
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(value) {
            errors.push(format!("{at}: {value} is not one of {e:?}"));
        }
    }
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        let ok = any.iter().any(|s| {
            let mut e = Vec::new();
            check(root, s, value, at, &mut e);
            e.is_empty()
        });
        if !ok {
            errors.push(format!("{at}: matches no anyOf branch"));
        }
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let actual = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_u64() || n.is_i64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        if !types.contains(&actual) && !(actual == "integer" && types.contains(&"number")) {
            errors.push(format!("{at}: {actual} is not {types:?}"));
        }
    }
    if let (Some(obj), Some(props)) = (value.as_object(), schema.get("properties")) {
        for key in schema["required"].as_array().into_iter().flatten() {
            if !obj.contains_key(key.as_str().unwrap()) {
                errors.push(format!("{at}: missing {key}"));
            }
        }
        for (k, v) in obj {
            match props.get(k) {
                Some(s) => check(root, s, v, &format!("{at}/{k}"), errors),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errors.push(format!("{at}: unknown key {k}"))
                }
                None => {}
            }
        }
    }
    if let (Some(arr), Some(items)) = (value.as_array(), schema.get("items")) {
        for (i, v) in arr.iter().enumerate() {
            check(root, items, v, &format!("{at}/{i}"), errors);
        }
    }
}

fn errors_of(report: &Value) -> Vec<String> {
    let schema = schema();
    let mut errors = Vec::new();
    check(&schema, &schema, report, "", &mut errors);
    errors
}

fn reference_report(cases: &[&str]) -> Value {
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
            cases: cases.iter().map(|s| s.to_string()).collect(),
            exclude: vec!["race/*".into()],
            // The reference answers in the docs profile; graded as the Python SDK it gets
            // NON-STRICT and FAIL findings, so the report holds findings too.
            profile: Profile::PythonSdk,
            ..Default::default()
        },
    )
    .unwrap();
    serde_json::from_str(&json::render(&run.summary, &run.cases)).unwrap()
}

#[test]
fn a_real_report_has_the_declared_shape() {
    let report = reference_report(&[]);
    assert_eq!(report["schema_version"], json::SCHEMA_VERSION);
    assert!(report["cases"].as_array().unwrap().len() > 200);
    let with_findings = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["findings"].as_array().unwrap().is_empty())
        .count();
    assert!(with_findings > 0, "the report holds findings");
    assert!(
        !report["causes"].as_array().unwrap().is_empty(),
        "the report holds causes"
    );
    assert_eq!(report["catalog"], memcert::suite::CATALOG_VERSION);
    assert_eq!(errors_of(&report), Vec::<String>::new());
}

/// Answers every command with 100,000 bytes of text: over the reports' keep cap.
struct Verbose;

impl memcert::handler::Handler for Verbose {
    fn apply(&mut self, _input: &Value) -> memcert::protocol::ToolResult {
        memcert::protocol::ToolResult::error("e".repeat(100_000))
    }

    fn reset(&mut self, _base: &std::path::Path, _store: &std::path::Path) -> std::io::Result<()> {
        Ok(())
    }
}

// See: issue 13 ("a handler that answers 60 MB ... a 251 MB JSON report"): reply texts are kept
// cut at 64 KiB with their length and SHA-256 (schema 4), and the summary holds the peak memory.
#[test]
fn a_report_with_cut_replies_has_the_declared_shape() {
    let run = memcert::certify(
        &mut Verbose,
        &memcert::Options {
            cases: vec!["view/missing".into(), "delete/missing".into()],
            ..Default::default()
        },
    )
    .unwrap();
    let report: Value = serde_json::from_str(&json::render(&run.summary, &run.cases)).unwrap();
    let step = &report["cases"][0]["steps"][0];
    assert_eq!(
        step["reply"]["content"].as_str().unwrap().len(),
        memcert::certify::KEEP_BYTES
    );
    assert_eq!(step["reply_cut"]["bytes"], 100_000);
    assert_eq!(step["reply_cut"]["kept"], memcert::certify::KEEP_BYTES);
    assert_eq!(
        step["reply_cut"]["sha256"],
        memcert::certify::sha256_hex("e".repeat(100_000).as_bytes())
    );
    assert!(report["summary"]["peak_memory_kib"].as_u64().unwrap() > 0);
    assert_eq!(errors_of(&report), Vec::<String>::new());
}

#[test]
fn the_validator_catches_a_wrong_shape() {
    let mut report = reference_report(&["view/dir/empty-root"]);
    report["schema_version"] = 1.into();
    report["causes"] = serde_json::json!([{"verdict": "FAIL"}]);
    report["cases"][0]["verdict"] = "MAYBE".into();
    report["cases"][0]
        .as_object_mut()
        .unwrap()
        .insert("extra".into(), 1.into());
    report["summary"].as_object_mut().unwrap().remove("total");
    assert_eq!(
        errors_of(&report),
        [
            "/cases/0: unknown key extra",
            "/cases/0/verdict: \"MAYBE\" is not one of [String(\"PASS\"), String(\"NON-STRICT\"), String(\"INFO\"), String(\"FAIL\"), String(\"UNSAFE\"), String(\"ERROR\"), String(\"SKIPPED\")]",
            "/causes/0: missing \"kind\"",
            "/causes/0: missing \"kinds\"",
            "/causes/0: missing \"spec\"",
            "/causes/0: missing \"rules\"",
            "/causes/0: missing \"shape\"",
            "/causes/0: missing \"requirement\"",
            "/causes/0: missing \"hint\"",
            "/causes/0: missing \"count\"",
            "/causes/0: missing \"excused\"",
            "/causes/0: missing \"ids\"",
            "/causes/0: missing \"example\"",
            "/schema_version: 1 is not 6",
            "/summary: missing \"total\"",
        ]
    );
}
