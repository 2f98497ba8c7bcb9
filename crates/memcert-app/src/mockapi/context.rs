//! `context_management` in a request: checked against the documented rules
//! (`docs/spec/context-editing.md`) into [`ContextFinding`]s, and the `applied_edits` an
//! answer reports.

use serde::Serialize;
use serde_json::{json, Value};

use memcert::suite::verdict::Verdict;

use super::session::Request;

/// A finding about the request's `context_management` (`docs/spec/context-editing.md`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContextFinding {
    /// `INFO` for advice (e.g. `memory` not in `exclude_tools`), `NON-STRICT` for a rule broken.
    pub verdict: Verdict,
    /// One sentence naming the edit and the rule.
    pub detail: String,
}

/// The request's `context_management`, unless absent or null.
pub(super) fn req_obj_context(req: &serde_json::Map<String, Value>) -> Option<&Value> {
    req.get("context_management").filter(|c| !c.is_null())
}

/// A plausible `context_management` for the answer: one `applied_edits` entry per known
/// clearing edit, with nothing cleared (the mock's conversations stay far below any trigger).
pub(super) fn context_applied(req: &serde_json::Map<String, Value>) -> Option<Value> {
    let edits = req_obj_context(req)?.get("edits")?.as_array()?;
    let applied: Vec<Value> = edits
        .iter()
        .filter_map(|e| match e["type"].as_str()? {
            t @ CLEAR_TOOL_USES => {
                Some(json!({"type": t, "cleared_tool_uses": 0, "cleared_input_tokens": 0}))
            }
            t @ CLEAR_THINKING => {
                Some(json!({"type": t, "cleared_thinking_turns": 0, "cleared_input_tokens": 0}))
            }
            _ => None,
        })
        .collect();
    Some(json!({ "applied_edits": applied }))
}

const CLEAR_TOOL_USES: &str = "clear_tool_uses_20250919";
const CLEAR_THINKING: &str = "clear_thinking_20251015";
const COMPACT: &str = "compact_20260112";
const CONTEXT_BETA: &str = "context-management-2025-06-27";

/// Check `context_management` against the documented rules (`docs/spec/context-editing.md`,
/// parameter shapes as in the pinned SDKs' types): the beta header, `edits` an array of
/// objects with a known `type`, each parameter's shape, `clear_thinking_20251015` before
/// `clear_tool_uses_20250919`, and (advice, INFO) `memory` in `exclude_tools`.
pub(super) fn check_context(c: &Value, req: &Request) -> Vec<ContextFinding> {
    let mut out = Vec::new();
    let mut rule = |detail: String| {
        out.push(ContextFinding {
            verdict: Verdict::NonStrict,
            detail,
        })
    };
    if !req.beta(CONTEXT_BETA) {
        rule(format!(
            "context_management is sent without the `anthropic-beta: {CONTEXT_BETA}` header"
        ));
    }
    let Some(edits) = c.get("edits").and_then(Value::as_array) else {
        rule("context_management.edits must be an array of edits".into());
        return out;
    };
    let tokens = |v: &Value, kinds: &[&str]| {
        v.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| kinds.contains(&t))
            && v.get("value").and_then(Value::as_u64).is_some()
            && v.as_object().is_some_and(|o| o.len() == 2)
    };
    let mut advice = Vec::new();
    let mut first_tool_uses = None;
    for (i, e) in edits.iter().enumerate() {
        let at = format!("context_management.edits[{i}]");
        let Some(obj) = e.as_object() else {
            rule(format!("{at} must be an object with a `type`"));
            continue;
        };
        let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            CLEAR_TOOL_USES => {
                first_tool_uses.get_or_insert(i);
                for (k, v) in obj {
                    let ok = match k.as_str() {
                        "type" => true,
                        "trigger" => tokens(v, &["input_tokens", "tool_uses"]),
                        "keep" => tokens(v, &["tool_uses"]),
                        "clear_at_least" => v.is_null() || tokens(v, &["input_tokens"]),
                        "exclude_tools" => {
                            v.is_null()
                                || v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
                        }
                        "clear_tool_inputs" => {
                            v.is_null()
                                || v.is_boolean()
                                || v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
                        }
                        _ => {
                            rule(format!("{at} ({kind}): unknown parameter `{k}`"));
                            continue;
                        }
                    };
                    if !ok {
                        rule(format!("{at} ({kind}): `{k}` has the wrong shape: {v}"));
                    }
                }
                let excluded = obj
                    .get("exclude_tools")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|t| t == "memory"));
                if !excluded {
                    advice.push(ContextFinding {
                        verdict: Verdict::Info,
                        detail: format!("{at} ({kind}): `memory` is not in `exclude_tools`, so the agent's own memory calls can be cleared (the documented advice is to exclude it)"),
                    });
                }
            }
            CLEAR_THINKING => {
                if let Some(t) = first_tool_uses {
                    rule(format!("{at} ({CLEAR_THINKING}) comes after context_management.edits[{t}] ({CLEAR_TOOL_USES}); it must be listed first"));
                }
                for (k, v) in obj {
                    let ok = match k.as_str() {
                        "type" => true,
                        "keep" => {
                            v == "all"
                                || tokens(v, &["thinking_turns"])
                                || (v["type"] == "all"
                                    && v.as_object().is_some_and(|o| o.len() == 1))
                        }
                        _ => {
                            rule(format!("{at} ({kind}): unknown parameter `{k}`"));
                            continue;
                        }
                    };
                    if !ok {
                        rule(format!("{at} ({kind}): `{k}` has the wrong shape: {v}"));
                    }
                }
            }
            COMPACT => advice.push(ContextFinding {
                verdict: Verdict::Info,
                detail: format!("{at} ({COMPACT}): compaction is not checked by the mock"),
            }),
            other => rule(format!("{at}: unknown strategy type {other:?}")),
        }
    }
    out.extend(advice);
    out
}
