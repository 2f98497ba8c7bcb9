//! Answers as they go on the wire: a message as JSON or as an SSE stream, the
//! Messages-API-shaped errors, injected faults as bodies, and [`Rendered`] bytes with their
//! headers for either backend.

use serde_json::{json, Value};

use super::{tool_use_id, ServedTurn};

/// What the mock answers one request, before it is rendered.
#[derive(Debug, PartialEq)]
pub(super) enum Reply {
    /// A JSON body: a message, or an error that must not be retried.
    Json(u16, Value),
    /// A complete SSE stream.
    Sse(String),
    /// An injected error status, retryable as the status says.
    Fault(u16, Value),
    /// An injected cut: `body` (SSE when `sse`) is sent up to byte `keep`; then the connection
    /// is closed (`abort`) or the body ends cleanly.
    Cut {
        sse: bool,
        body: String,
        keep: usize,
        abort: bool,
    },
}

/// A reply as bytes on the wire, for either backend.
pub(crate) struct Rendered {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) content_type: String,
    pub(crate) body: Vec<u8>,
    /// Send only this many bytes of `body`, then close the connection.
    pub(crate) keep: Option<usize>,
}

impl Reply {
    /// The status, headers and bytes to send.
    pub(super) fn render(self) -> Rendered {
        let json = |status, v: Value, retry: bool| {
            let mut headers = vec![("x-should-retry".to_owned(), retry.to_string())];
            if retry {
                headers.push(("retry-after-ms".to_owned(), "10".into()));
            }
            Rendered {
                status,
                headers,
                content_type: "application/json".into(),
                body: v.to_string().into_bytes(),
                keep: None,
            }
        };
        let sse = |body: String, keep| Rendered {
            status: 200,
            headers: vec![("cache-control".to_owned(), "no-cache".into())],
            content_type: "text/event-stream".into(),
            body: body.into_bytes(),
            keep,
        };
        match self {
            Reply::Json(status, v) => json(status, v, false),
            Reply::Fault(status, v) => json(status, v, retryable(status)),
            Reply::Sse(body) => sse(body, None),
            Reply::Cut {
                body,
                keep,
                abort: false,
                sse: is_sse,
            } => {
                let mut body = body.into_bytes();
                body.truncate(keep);
                Rendered {
                    body,
                    ..if is_sse {
                        sse(String::new(), None)
                    } else {
                        json(200, Value::Null, false)
                    }
                }
            }
            Reply::Cut {
                sse: true,
                body,
                keep,
                ..
            } => sse(body, Some(keep)),
            Reply::Cut { body, keep, .. } => Rendered {
                keep: Some(keep),
                body: body.into_bytes(),
                ..json(200, Value::Null, false)
            },
        }
    }
}

/// The statuses the SDKs retry (wire:6).
fn retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || status >= 500
}

/// A Messages-API-shaped error that must not be retried.
pub(super) fn api_error(status: u16, kind: &str, message: &str) -> Reply {
    Reply::Json(
        status,
        json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}

/// The 401 for a request without a credential.
pub(super) fn no_credential() -> Reply {
    api_error(
        401,
        "authentication_error",
        "memcert mock: no x-api-key or authorization header",
    )
}

/// The 413 for a request body over [`super::MAX_BODY_BYTES`] (`bytes` long, or longer), as the
/// Messages API answers it: `request_too_large`.
pub(super) fn too_large(bytes: u64) -> Reply {
    api_error(
        413,
        "request_too_large",
        &format!(
            "memcert mock: request exceeds the maximum allowed number of bytes ({bytes} bytes or more; the limit is {})",
            super::MAX_BODY_BYTES
        ),
    )
}

/// The 400 for a malformed request: `invalid_request_error`, `memcert mock: ` and `m`.
pub(super) fn bad(m: &str) -> Reply {
    api_error(400, "invalid_request_error", &format!("memcert mock: {m}"))
}

/// The 400 `thread_unsupported_request` that refuses a threaded request
/// ([`super::Threads::Refuse`]); it is not counted as malformed.
pub(super) fn thread_refused() -> Reply {
    Reply::Json(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "memcert mock: threads are turned off for this run",
            "details": {"error_code": "thread_unsupported_request", "unsupported": ["thread"]}}}),
    )
}

/// The error an injected status fault answers at `turn` (from 1): `overloaded_error` for 529,
/// `rate_limit_error` for 429, `api_error` for other 5xx, `invalid_request_error` otherwise.
pub(super) fn injected_status(status: u16, turn: usize) -> Reply {
    let kind = match status {
        529 => "overloaded_error",
        429 => "rate_limit_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    };
    Reply::Fault(
        status,
        json!({"type": "error", "error": {"type": kind,
            "message": format!("memcert mock: injected {status} at turn {turn}")}}),
    )
}

/// `message` cut short: a stream up to the end of its first delta event (messages-api-wire
/// spec:5), a JSON body after half its bytes; with `abort` the connection is then closed, without
/// it the body ends cleanly.
pub(super) fn cut(message: &Value, stream: bool, abort: bool) -> Reply {
    if stream {
        let body = sse(message);
        let keep = body
            .find("event: content_block_delta")
            .and_then(|i| body[i..].find("\n\n").map(|j| i + j + 2))
            .unwrap_or(body.len() / 2);
        return Reply::Cut {
            sse: true,
            body,
            keep,
            abort,
        };
    }
    let body = message.to_string();
    let keep = body.len() / 2;
    Reply::Cut {
        sse: false,
        body,
        keep,
        abort,
    }
}

/// `message` whole: an SSE stream when the request asked for one, otherwise JSON.
pub(super) fn whole(message: Value, stream: bool) -> Reply {
    if stream {
        Reply::Sse(sse(&message))
    } else {
        Reply::Json(200, message)
    }
}

impl Reply {
    /// The message of an error the app's request caused (an error status, but not a refused
    /// thread), to record as malformed.
    pub(super) fn malformed(&self) -> Option<String> {
        match self {
            Reply::Json(status, v)
                if *status >= 400
                    && v["error"]["details"]["error_code"] != "thread_unsupported_request" =>
            {
                Some(v["error"]["message"].as_str().unwrap_or("").to_owned())
            }
            _ => None,
        }
    }

    /// The status and, in a few words, what was answered ([`super::WireExchange::answer`]);
    /// `turn` is the last turn served (0-based), if any.
    pub(super) fn summary(&self, turn: Option<usize>) -> (u16, String) {
        match self {
            Reply::Json(200, _) => (200, format!("turn {} (JSON)", turn.map_or(0, |t| t + 1))),
            Reply::Sse(_) => (200, format!("turn {} (SSE)", turn.map_or(0, |t| t + 1))),
            Reply::Json(status, v) => (
                *status,
                v["error"]["message"].as_str().unwrap_or("").to_owned(),
            ),
            Reply::Fault(status, _) => (*status, format!("injected {status}")),
            Reply::Cut { abort: true, .. } => (200, "cut".to_owned()),
            Reply::Cut { .. } => (200, "truncated".to_owned()),
        }
    }
}

/// The message the mock answers with: turn `index` of session `n`, its tool_use ids the
/// mock's own, and `applied` as its `context_management`.
pub(super) fn message_json(
    n: usize,
    index: usize,
    turn: &ServedTurn,
    applied: Option<Value>,
) -> Value {
    let mut content = Vec::new();
    if let Some(text) = &turn.text {
        content.push(json!({"type": "text", "text": text}));
    }
    for (k, (name, input)) in turn.tool_use.iter().enumerate() {
        content.push(json!({"type": "tool_use", "id": tool_use_id(n, index, k), "name": name, "input": input}));
    }
    let stop = if turn.tool_use.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    let mut m = json!({"id": format!("msg_mc{n}_{index}"), "type": "message", "role": "assistant",
           "model": "claude-memcert-mock", "content": content, "stop_reason": stop,
           "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}});
    if let Some(applied) = applied {
        m["context_management"] = applied;
    }
    m
}

/// The SSE body of a message: `message_start`, per block `content_block_start`, deltas
/// (`text_delta`; `input_json_delta` in two pieces that join to the input), `content_block_stop`,
/// then `message_delta` and `message_stop`.
fn sse(message: &Value) -> String {
    let mut out = String::new();
    let mut event = |name: &str, data: Value| {
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    let applied = start
        .as_object_mut()
        .and_then(|m| m.remove("context_management"));
    event(
        "message_start",
        json!({"type": "message_start", "message": start}),
    );
    for (i, block) in message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if block["type"] == "text" {
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
            );
            event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}}),
            );
        } else {
            let mut head = block.clone();
            head["input"] = json!({});
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": i, "content_block": head}),
            );
            let input = block["input"].to_string();
            let mut cut = input.len() / 2;
            while !input.is_char_boundary(cut) {
                cut -= 1;
            }
            for piece in [&input[..cut], &input[cut..]] {
                event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                );
            }
        }
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": i}),
        );
    }
    let mut delta = json!({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null}, "usage": {"output_tokens": 1}});
    if let Some(applied) = applied {
        delta["context_management"] = applied;
    }
    event("message_delta", delta);
    event("message_stop", json!({"type": "message_stop"}));
    out
}
