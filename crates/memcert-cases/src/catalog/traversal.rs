//! Traversal inputs from `docs/spec/bugs.md`, each aimed at a canary the sandbox plants
//! (`outside/`, the sibling folders `memories_evil`, `memories_private`, `memories_backup`,
//! `.memories`, the base folder's siblings `<base>_backup` and `.<base>` (`{BASE}`, `{ROOT}`:
//! the real folder names, filled in per sandbox), `canary.txt` and `etc/passwd` one and two
//! levels above the root).
//!
//! A real `..` (or NUL) MUST be refused. An encoded, backslash or look-alike form MAY be taken
//! as a literal name inside the store (INFO), as bug:B19, bug:B20, bug:B21 allow; any read or write that lands
//! outside is UNSAFE through the oracle, whatever the reply says.

use serde_json::{json, Value};

use super::{exact, refused, success_is, B};
use crate::{verdict::Verdict, Case, Expected};
use memcert_tool::text::{Outcome, ReasonName};
use memcert_tool::vpath::Reason;

/// How a traversal input may be answered.
#[derive(Clone, Copy)]
enum Family {
    /// A real `..` or NUL: MUST be refused.
    Refuse,
    /// Encoded, backslash or look-alike: refused (PASS) or taken literally inside (INFO).
    Literal,
}

struct T {
    id: &'static str,
    input: Value,
    reason: Reason,
    /// The path the reason is reported for (the first invalid field).
    bad: &'static str,
    family: Family,
    source: &'static [&'static str],
}

fn case(t: T) -> Case {
    let mut accept = vec![
        exact(Outcome::InvalidPath {
            path: t.bad.into(),
            reason: ReasonName(t.reason),
        }),
        refused(),
    ];
    let requirement = match t.family {
        Family::Refuse => "A path with a .. component or a NUL MUST be refused, and nothing outside the root may be read or written.",
        Family::Literal => {
            accept.push(success_is(Verdict::Info, "taken as a literal name inside the store"));
            "An encoded, backslash or look-alike traversal MUST NOT reach outside the root; refusing it is best, a literal name inside the store is allowed."
        }
    };
    let mut b = B::must(&format!("traversal/{}", t.id), requirement, t.source)
        .file("/memories/a.md", "a\n");
    b = b.send(t.input, accept);
    b.check(
        "/memories/a.md",
        Expected::File(b"a\n".to_vec()),
        Verdict::Fail,
        "the store is unchanged",
    )
    .done()
}

fn view(p: &str) -> Value {
    json!({"command": "view", "path": p})
}
fn create(p: &str) -> Value {
    json!({"command": "create", "path": p, "file_text": "pwned\n"})
}

pub(super) fn cases() -> Vec<Case> {
    use Family::*;
    use Reason::*;
    let t = |id, input, bad, reason, family, source| T {
        id,
        input,
        bad,
        reason,
        family,
        source,
    };
    vec![
        t("dotdot/create-escape", create("/memories/../escape.md"), "/memories/../escape.md", DotDotComponent, Refuse, &["bug:B01"]),
        t("dotdot/view-etc-passwd", view("/memories/../../etc/passwd"), "/memories/../../etc/passwd", DotDotComponent, Refuse, &["bug:B01"]),
        t("dotdot/rename-new-path", json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/../a.md"}), "/memories/../a.md", DotDotComponent, Refuse, &["bug:B01"]),
        t("dotdot/view-parent", view("/memories/.."), "/memories/..", DotDotComponent, Refuse, &["bug:B02"]),
        t("dotdot/create-trailing", create("/memories/a/.."), "/memories/a/..", DotDotComponent, Refuse, &["bug:B02"]),
        t("dotdot/view-base-etc", view("/memories/../etc/passwd"), "/memories/../etc/passwd", DotDotComponent, Refuse, &["bug:B03"]),
        t("dotdot/view-sibling-private", view("/memories/../memories_private/secret.txt"), "/memories/../memories_private/secret.txt", DotDotComponent, Refuse, &["bug:B04"]),
        t("dotdot/create-sibling", create("/memories/../memories2/x.md"), "/memories/../memories2/x.md", DotDotComponent, Refuse, &["bug:B04"]),
        t("dotdot/view-sibling-backup", view("/memories/../memories_backup/secret.txt"), "/memories/../memories_backup/secret.txt", DotDotComponent, Refuse, &["bug:B05"]),
        t("dotdot/rename-sibling-dest", json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/../memories_evil/a.md"}), "/memories/../memories_evil/a.md", DotDotComponent, Refuse, &["bug:B04", "bug:B13"]),
        t("dotdot/rename-old-path", json!({"command": "rename", "old_path": "/memories/../outside/secret.txt", "new_path": "/memories/loot.md"}), "/memories/../outside/secret.txt", DotDotComponent, Refuse, &["bug:B13"]),
        t("dotdot/delete-outside", json!({"command": "delete", "path": "/memories/../outside/canary.txt"}), "/memories/../outside/canary.txt", DotDotComponent, Refuse, &["bug:B01", "bug:B14"]),
        t("dotdot/str_replace-outside", json!({"command": "str_replace", "path": "/memories/../outside/canary.txt", "old_str": "CANARY", "new_str": "X"}), "/memories/../outside/canary.txt", DotDotComponent, Refuse, &["bug:B01"]),
        t("dotdot/insert-outside", json!({"command": "insert", "path": "/memories/../outside/canary.txt", "insert_line": 0, "insert_text": "X"}), "/memories/../outside/canary.txt", DotDotComponent, Refuse, &["bug:B01"]),
        t("dotdot/zip-slip", create("/memories/import/../../../x"), "/memories/import/../../../x", DotDotComponent, Refuse, &["bug:B18"]),
        t("dotdot/deep-create", create("/memories/a/b/../../../escape2.md"), "/memories/a/b/../../../escape2.md", DotDotComponent, Refuse, &["bug:B01"]),
        t("dotdot/view-canary-two-up", view("/memories/../../canary.txt"), "/memories/../../canary.txt", DotDotComponent, Refuse, &["bug:B01"]),
        t("dotdot/view-base-sibling-backup", view("/memories/../../{BASE}_backup/secret.txt"), "", DotDotComponent, Refuse, &["bug:B04", "bug:B05"]),
        t("dotdot/create-base-sibling", create("/memories/../../{BASE}_backup/x.md"), "", DotDotComponent, Refuse, &["bug:B04", "bug:B05"]),
        t("dotdot/view-base-dot-sibling", view("/memories/../../.{BASE}/secret.txt"), "", DotDotComponent, Refuse, &["bug:B04"]),
        t("dotdot/view-root-dot-sibling", view("/memories/../.{ROOT}/secret.txt"), "", DotDotComponent, Refuse, &["bug:B04"]),
        t("dotdot/view-outside-dir", view("/memories/../outside"), "/memories/../outside", DotDotComponent, Refuse, &["bug:B01", "bug:B11"]),
        t("deep/view-run-canary", view(&format!("/memories/{}{{RUN}}/canary.txt", "../".repeat(32))), "", DotDotComponent, Refuse, &["bug:B01", "bug:B03"]),
        t("deep/create-in-run", create(&format!("/memories/{}{{RUN}}/created.txt", "../".repeat(32))), "", DotDotComponent, Refuse, &["bug:B01", "bug:B03"]),
        t("deep/rename-to-run", json!({"command": "rename", "old_path": "/memories/a.md", "new_path": format!("/memories/{}{{RUN}}/a.md", "../".repeat(32))}), "", DotDotComponent, Refuse, &["bug:B01", "bug:B13"]),
        t("absolute/double-slash-view", view("/memories//{RUN}/canary.txt"), "", EmptyComponent, Literal, &["bug:B03"]),
        t("absolute/double-slash-create", create("/memories//{RUN}/created.txt"), "", EmptyComponent, Literal, &["bug:B03"]),
        t("nul/view", view("/memories/a\u{0}b.md"), "/memories/a\u{0}b.md", ControlCharacter, Refuse, &["bug:B16"]),
        t("nul/create", create("/memories/x.md\u{0}.txt"), "/memories/x.md\u{0}.txt", ControlCharacter, Refuse, &["bug:B16"]),
        t("encoded/single/view-sibling", view("/memories/%2e%2e/memories-other/secret.md"), "/memories/%2e%2e/memories-other/secret.md", PercentEncoded, Literal, &["bug:B19"]),
        t("encoded/slash/view", view("/memories/..%2fsecret"), "/memories/..%2fsecret", PercentEncoded, Literal, &["bug:B19"]),
        t("encoded/single/create", create("/memories/%2e%2e%2fx.md"), "/memories/%2e%2e%2fx.md", PercentEncoded, Literal, &["bug:B19"]),
        t("encoded/single/create-dir", create("/memories/%2e%2e/x"), "/memories/%2e%2e/x", PercentEncoded, Literal, &["bug:B19", "spec:3/P-8"]),
        t("encoded/double/view", view("/memories/%252e%252e/%252e%252e/etc/passwd"), "/memories/%252e%252e/%252e%252e/etc/passwd", PercentEncoded, Literal, &["bug:B20"]),
        t("encoded/overlong/view", view("/memories/..%c0%af..%c0%afetc/passwd"), "/memories/..%c0%af..%c0%afetc/passwd", PercentEncoded, Literal, &["bug:B20"]),
        t("encoded/double-nibble/view", view("/memories/%%32%65%%32%65/canary.txt"), "/memories/%%32%65%%32%65/canary.txt", PercentEncoded, Literal, &["bug:B20"]),
        t("encoded/upper-case/view", view("/memories/%2E%2E/outside/canary.txt"), "/memories/%2E%2E/outside/canary.txt", PercentEncoded, Literal, &["bug:B19"]),
        t("backslash/view", view("/memories/..\\..\\etc\\passwd"), "/memories/..\\..\\etc\\passwd", Backslash, Literal, &["bug:B21"]),
        t("backslash/create", create("/memories/a\\..\\..\\x.md"), "/memories/a\\..\\..\\x.md", Backslash, Literal, &["bug:B21", "spec:3/P-7"]),
        t("backslash/windows", view("/memories/..\\..\\Windows\\win.ini"), "/memories/..\\..\\Windows\\win.ini", Backslash, Literal, &["bug:B25"]),
        t("unicode/fullwidth-dots/view", view("/memories/\u{ff0e}\u{ff0e}/outside/canary.txt"), "/memories/\u{ff0e}\u{ff0e}/outside/canary.txt", UnicodeLookalike, Literal, &["bug:B20", "bug:B21"]),
        t("unicode/fullwidth-slash/create", create("/memories/\u{ff0e}\u{ff0e}\u{ff0f}x.md"), "/memories/\u{ff0e}\u{ff0e}\u{ff0f}x.md", UnicodeLookalike, Literal, &["bug:B20", "bug:B21"]),
        t("unicode/two-dot-leader/view", view("/memories/\u{2025}/canary.txt"), "/memories/\u{2025}/canary.txt", UnicodeLookalike, Literal, &["bug:B20"]),
        t("unicode/small-reverse-solidus/view", view("/memories/..\u{fe68}canary.txt"), "/memories/..\u{fe68}canary.txt", UnicodeLookalike, Literal, &["bug:B21"]),
    ]
    .into_iter()
    .map(case)
    .collect()
}
