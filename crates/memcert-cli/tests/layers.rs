//! The workspace's layers are enforced by the manifests, not by a comment: every dependency
//! (normal, dev or build) between memcert's own crates points from a higher layer to a lower one,
//! read from `cargo metadata`; no crate depends on itself.

use std::process::Command;

use serde_json::Value;

/// The crates from the lowest layer to the highest (the root Cargo.toml says what each holds).
const LAYERS: [&str; 5] = [
    "memcert-tool",
    "memcert-cases",
    "memcert",
    "memcert-app",
    "memcert-cli",
];

fn rank(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == name)
}

/// The workspace members of `meta` (sorted) and every dependency edge that does not point down.
fn judge(meta: &Value) -> (Vec<String>, Vec<String>) {
    let mut members: Vec<String> = Vec::new();
    let mut wrong: Vec<String> = Vec::new();
    for pkg in meta["packages"].as_array().unwrap() {
        let name = pkg["name"].as_str().unwrap();
        let Some(from) = rank(name) else {
            wrong.push(format!("{name} is in no layer: add it to LAYERS"));
            continue;
        };
        members.push(name.to_owned());
        for dep in pkg["dependencies"].as_array().unwrap() {
            let dep_name = dep["name"].as_str().unwrap();
            let Some(to) = rank(dep_name) else {
                continue;
            };
            let kind = dep["kind"].as_str().unwrap_or("normal");
            if to >= from {
                wrong.push(format!("{name} -> {dep_name} ({kind})"));
            }
        }
    }
    members.sort();
    (members, wrong)
}

#[test]
fn dependencies_point_only_down_the_layers() {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (members, wrong) = judge(&meta);
    let mut want: Vec<String> = LAYERS.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(members, want, "the workspace members are the layers");
    assert_eq!(wrong, Vec::<String>::new(), "dependencies that point up");
}

#[test]
fn upward_and_sideways_edges_are_caught() {
    let meta = serde_json::json!({"packages": [
        {"name": "memcert-tool", "dependencies": [
            {"name": "memcert", "kind": null},
            {"name": "serde", "kind": null}]},
        {"name": "memcert-cases", "dependencies": [
            {"name": "memcert-tool", "kind": null},
            {"name": "memcert-cases", "kind": "dev"},
            {"name": "memcert-app", "kind": "build"}]},
        {"name": "other", "dependencies": []}
    ]});
    let (members, wrong) = judge(&meta);
    assert_eq!(members, ["memcert-cases", "memcert-tool"]);
    assert_eq!(
        wrong,
        [
            "memcert-tool -> memcert (normal)",
            "memcert-cases -> memcert-cases (dev)",
            "memcert-cases -> memcert-app (build)",
            "other is in no layer: add it to LAYERS",
        ]
    );
}
