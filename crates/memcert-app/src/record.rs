//! `memcert record`: a pass-through proxy between an app and the Messages API that writes the
//! conversation it carries as a transcript (`memcert-transcript/1`, `docs/transcripts.md`), so
//! what an agent really did becomes a regression fixture for `certify --app`.
//!
//! [`Recorder::start`] binds `127.0.0.1` on an ephemeral port; the app's `ANTHROPIC_BASE_URL`
//! points at [`Recorder::url`]. Every request is sent on to the upstream base URL with the
//! path the app used (`{upstream}{path}`) and the app's own headers (less `host`,
//! `content-length`, `connection`, `accept-encoding`), and the upstream's answer goes back to
//! the app with its status and headers. Each `POST …/v1/messages` that gets a 200 is kept: the
//! request's tool_result blocks and the assistant message (JSON, or SSE reassembled from its
//! events).
//!
//! [`transcript_of`] turns what was kept into a transcript: the first user message, then one
//! turn per assistant message (a retry of the same request replaces the turn it retried), each
//! `tool_use` with its `input` exactly as sent and, as its one accepted reply, the tool_result
//! the app sent back (`{"match": "recorded"}`: same `is_error`, same text, directory sizes not
//! compared). A conversation cut short ends with a final text saying so; a tool_use that never
//! got a result accepts any reply.
//!
//! # Guarantees
//! - Credentials are never written: headers are not stored, and every credential value the app
//!   sent (`x-api-key`, `authorization`, 8 characters or more) is replaced by `[REDACTED]` in the
//!   transcript text, wherever it appears.
//! - The transcript is rewritten (atomically) after every kept exchange, so nothing is lost if
//!   the recorder is stopped midway.
//!
//! # Non-guarantees
//! - Answers are relayed once complete: a stream reaches the app in one piece, not event by
//!   event (the SDKs accept that).
//! - One conversation per recording; the setup and checks of the transcript are left empty.
//!
//! [`Recorder::wait`] is the recording loop of `memcert record`: until the conversation ends,
//! the caller's stop flag is set or the time is up, then a grace period for late retries.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::mockapi::listener::{self, BodyTooLarge, Handler, Listener};
use crate::mockapi::Rendered;
use crate::transcript::{ToolUse, Transcript, Turn, FORMAT};
use memcert::protocol::{Content, ToolResult};
use memcert::suite::verdict::Verdict;
use memcert::suite::{Accept, Level, Recorded, Reply};

/// One kept exchange: a Messages API request and the assistant message that answered it.
#[derive(Clone, Debug, PartialEq)]
pub struct Exchange {
    /// The request body.
    pub request: Value,
    /// The answer, as a message object (reassembled when it was streamed).
    pub message: Value,
}

#[derive(Default)]
struct Kept {
    exchanges: Vec<Exchange>,
    secrets: Vec<String>,
    /// The last write of the transcript failed, with why.
    write_error: Option<String>,
    /// An assistant message with a final `stop_reason` went through.
    ended: bool,
}

/// A running recorder; dropping it stops the listener.
pub struct Recorder {
    listener: Listener,
    kept: Arc<Mutex<Kept>>,
}

impl Recorder {
    /// Start a recorder that forwards to `upstream` (a base URL, `http://` or `https://`, as
    /// for `ANTHROPIC_BASE_URL`) and rewrites `out` as the transcript `id` after every kept
    /// exchange. Each upstream call may take up to `timeout`.
    ///
    /// # Errors
    /// The port cannot be bound.
    pub fn start(
        upstream: &str,
        out: &Path,
        id: &str,
        timeout: Duration,
    ) -> std::io::Result<Recorder> {
        let kept = Arc::new(Mutex::new(Kept::default()));
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .build()
            .into();
        let upstream = upstream.trim_end_matches('/').to_owned();
        let (out, id) = (out.to_owned(), id.to_owned());
        let k = Arc::clone(&kept);
        let handler: Handler =
            Arc::new(move |parts, body| forward(&agent, &upstream, parts, body, &k, &out, &id));
        let listener = Listener::start(handler, true)?;
        Ok(Recorder { listener, kept })
    }

    /// The base URL for the app's `ANTHROPIC_BASE_URL`, `http://127.0.0.1:P`.
    pub fn url(&self) -> String {
        format!("http://{}", self.listener.addr)
    }

    /// Exchanges kept so far.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.lock().exchanges.clone()
    }

    /// An answer with a final `stop_reason` (not `tool_use`) has gone through.
    pub fn ended(&self) -> bool {
        self.lock().ended
    }

    /// Why the transcript file could not be written, if it could not.
    pub fn write_error(&self) -> Option<String> {
        self.lock().write_error.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn forward(
    agent: &ureq::Agent,
    upstream: &str,
    parts: &hyper::http::request::Parts,
    body: &[u8],
    kept: &Mutex<Kept>,
    out: &Path,
    id: &str,
) -> Rendered {
    if let Some(t) = parts.extensions.get::<BodyTooLarge>() {
        return listener::too_large(*t);
    }
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let url = format!("{upstream}{path}");
    let mut secrets = Vec::new();
    let mut req = ureq::http::Request::builder()
        .method(parts.method.as_str())
        .uri(&url);
    for (k, v) in &parts.headers {
        let name = k.as_str();
        if matches!(
            name,
            "host" | "content-length" | "connection" | "accept-encoding" | "transfer-encoding"
        ) {
            continue;
        }
        if let (true, Ok(s)) = (name == "x-api-key" || name == "authorization", v.to_str()) {
            let secret = s.strip_prefix("Bearer ").unwrap_or(s);
            if secret.len() >= 8 {
                secrets.push(secret.to_owned());
            }
        }
        req = req.header(name, v.as_bytes());
    }
    let failed = |status: u16, why: String| {
        Rendered {
        status,
        headers: vec![("x-should-retry".into(), "false".into())],
        content_type: "application/json".into(),
        body: json!({"type": "error", "error": {"type": "api_error", "message": format!("memcert record: {why}")}})
            .to_string()
            .into_bytes(),
        keep: None,
    }
    };
    let req = match req.body(body.to_vec()) {
        Ok(r) => r,
        Err(e) => return failed(400, format!("cannot forward the request: {e}")),
    };
    let mut resp = match agent.run(req) {
        Ok(r) => r,
        Err(e) => {
            return failed(
                502,
                format!("the upstream {upstream} cannot be reached: {e}"),
            )
        }
    };
    let status = resp.status().as_u16();
    let mut headers = Vec::new();
    let mut content_type = "application/json".to_owned();
    for (k, v) in resp.headers() {
        let Ok(v) = v.to_str() else { continue };
        match k.as_str() {
            "content-type" => content_type = v.to_owned(),
            "content-length" | "content-encoding" | "transfer-encoding" | "connection" => {}
            name => headers.push((name.to_owned(), v.to_owned())),
        }
    }
    let answer = match resp
        .body_mut()
        .with_config()
        .limit(64 * 1024 * 1024)
        .read_to_vec()
    {
        Ok(b) => b,
        Err(e) => return failed(502, format!("the upstream's answer broke off: {e}")),
    };
    if status == 200
        && path
            .split('?')
            .next()
            .unwrap_or("")
            .ends_with("/v1/messages")
    {
        let message = if content_type.starts_with("text/event-stream") {
            message_of_sse(&String::from_utf8_lossy(&answer))
        } else {
            serde_json::from_slice(&answer).ok()
        };
        if let (Ok(request), Some(message)) = (serde_json::from_slice::<Value>(body), message) {
            let mut k = kept.lock().unwrap_or_else(|e| e.into_inner());
            for s in secrets {
                if !k.secrets.contains(&s) {
                    k.secrets.push(s);
                }
            }
            let stop = message["stop_reason"].as_str().unwrap_or("");
            k.ended |= !stop.is_empty() && stop != "tool_use" && stop != "pause_turn";
            k.exchanges.push(Exchange { request, message });
            let text = redact(
                &transcript_json(&transcript_of(&k.exchanges, id)),
                &k.secrets,
            );
            k.write_error = memcert::report::write_atomic(out, &text)
                .err()
                .map(|e| format!("cannot write {}: {e}", out.display()));
        }
    }
    Rendered {
        status,
        headers,
        content_type,
        body: answer,
        keep: None,
    }
}

/// Replace every secret by `[REDACTED]`.
fn redact(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .fold(text.to_owned(), |t, s| t.replace(s.as_str(), "[REDACTED]"))
}

fn transcript_json(t: &Transcript) -> String {
    let mut s = serde_json::to_string_pretty(t).unwrap_or_default();
    s.push('\n');
    s
}

/// The message an SSE body carries: `message_start`'s message with the content blocks built
/// from `content_block_start`/`_delta` (text, `input_json_delta` pieces joined and parsed) and
/// `message_delta`'s `stop_reason`. `None` without a `message_start`.
pub fn message_of_sse(body: &str) -> Option<Value> {
    let mut message: Option<Value> = None;
    let mut blocks: Vec<Value> = Vec::new();
    let mut partial: Vec<String> = Vec::new();
    for line in body.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let Ok(ev) = serde_json::from_str::<Value>(data.trim_start()) else {
            continue;
        };
        let i = ev["index"].as_u64().unwrap_or(0) as usize;
        match ev["type"].as_str().unwrap_or("") {
            "message_start" => message = Some(ev["message"].clone()),
            "content_block_start" => {
                if blocks.len() <= i {
                    blocks.resize(i + 1, Value::Null);
                    partial.resize(i + 1, String::new());
                }
                blocks[i] = ev["content_block"].clone();
            }
            "content_block_delta" if i < blocks.len() => {
                let d = &ev["delta"];
                match d["type"].as_str().unwrap_or("") {
                    "text_delta" => {
                        let t = format!(
                            "{}{}",
                            blocks[i]["text"].as_str().unwrap_or(""),
                            d["text"].as_str().unwrap_or("")
                        );
                        blocks[i]["text"] = Value::String(t);
                    }
                    "input_json_delta" => {
                        partial[i].push_str(d["partial_json"].as_str().unwrap_or(""))
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(m) = message.as_mut() {
                    m["stop_reason"] = ev["delta"]["stop_reason"].clone();
                }
            }
            _ => {}
        }
    }
    let mut message = message?;
    for (b, p) in blocks.iter_mut().zip(&partial) {
        if b["type"] == "tool_use" && !p.is_empty() {
            b["input"] = serde_json::from_str(p).unwrap_or(Value::String(p.clone()));
        }
    }
    message["content"] = Value::Array(blocks.into_iter().filter(|b| !b.is_null()).collect());
    Some(message)
}

/// The tool_result blocks of a request's last message, by tool_use id.
fn results_of(request: &Value) -> Vec<(String, ToolResult)> {
    let last = request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or(Value::Null);
    last["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let content = serde_json::from_value::<Content>(b["content"].clone())
                .unwrap_or(Content::Text(String::new()));
            (
                b["tool_use_id"].as_str().unwrap_or("").to_owned(),
                ToolResult {
                    content,
                    is_error: b["is_error"] == true,
                },
            )
        })
        .collect()
}

/// The text of the first user message of a conversation.
fn first_user_text(request: &Value) -> String {
    let first = &request["messages"][0];
    match &first["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Build the transcript `id` from kept exchanges; see the module docs.
pub fn transcript_of(exchanges: &[Exchange], id: &str) -> Transcript {
    // (the ids a request answered, the message that answered it), retries replacing.
    let mut turns: Vec<(Vec<String>, &Value)> = Vec::new();
    let mut results = std::collections::BTreeMap::new();
    let mut user = String::new();
    for ex in exchanges {
        let answered: Vec<String> = results_of(&ex.request)
            .into_iter()
            .map(|(id, r)| {
                results.insert(id.clone(), r);
                id
            })
            .collect();
        if answered.is_empty() {
            // A conversation (re)starts: a thread create, or full history from the start.
            turns.clear();
            user = first_user_text(&ex.request);
        } else if let Some(at) = turns.iter().position(|(a, _)| *a == answered) {
            turns.truncate(at);
        }
        turns.push((answered, &ex.message));
    }
    let mut out: Vec<Turn> = turns
        .iter()
        .map(|(_, m)| {
            let blocks = m["content"].as_array().cloned().unwrap_or_default();
            let text: Vec<&str> = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            let tool_use = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| {
                    let tid = b["id"].as_str().unwrap_or("").to_owned();
                    let accept = match results.get(&tid) {
                        Some(r) => vec![Accept {
                            verdict: Verdict::Pass,
                            reply: Reply::Recorded(Recorded {
                                text: r.content.text().unwrap_or_default(),
                                is_error: r.is_error,
                            }),
                            profiles: Vec::new(),
                            note: "the reply when this conversation was recorded".into(),
                        }],
                        None => [Reply::AnySuccess, Reply::AnyError]
                            .into_iter()
                            .map(|reply| Accept {
                                verdict: Verdict::Pass,
                                reply,
                                profiles: Vec::new(),
                                note: "no reply was recorded for this call".into(),
                            })
                            .collect(),
                    };
                    ToolUse {
                        id: Some(tid),
                        name: b["name"].as_str().unwrap_or("memory").to_owned(),
                        input: b["input"].clone(),
                        accept,
                    }
                })
                .collect::<Vec<_>>();
            Turn {
                text: (!text.is_empty()).then(|| text.join("\n")),
                tool_use,
            }
        })
        .collect();
    if out.last().is_none_or(|t| !t.tool_use.is_empty()) {
        out.push(Turn {
            text: Some("(memcert record: the recording ended here)".into()),
            tool_use: Vec::new(),
        });
    }
    Transcript {
        format: FORMAT.into(),
        id: id.to_owned(),
        requirement: "The handler MUST answer every memory call as it did when this conversation was recorded (memcert record).".into(),
        level: Level::Must,
        source: vec!["recorded".into()],
        setup: Vec::new(),
        user,
        turns: out,
        checks: Vec::new(),
        file: String::new(),
    }
}

/// A transcript id from an output file name: its stem, lower-cased, anything but `a-z 0-9 -`
/// turned into `-`.
pub fn id_for(out: &Path) -> String {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let id: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .collect();
    let id = id.trim_matches('-').to_owned();
    if id.is_empty() {
        "recorded".into()
    } else {
        id
    }
}

/// Where `memcert record` writes by default when `--out` names a folder.
pub fn out_path(out: &Path) -> PathBuf {
    if out.is_dir() {
        out.join("recorded.json")
    } else {
        out.to_owned()
    }
}

/// How long [`Recorder::wait`] keeps relaying after the recording stops: late retries of the
/// last request still go through.
pub const GRACE: Duration = Duration::from_millis(500);

/// Why a recording stopped ([`Recorder::wait`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// An answer ended the conversation (a `stop_reason` other than `tool_use`).
    Ended,
    /// The caller's stop flag was set (SIGINT or SIGTERM).
    Interrupted,
    /// The time limit passed.
    TimeUp,
}

/// What a finished recording holds ([`Recorder::wait`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recording {
    /// The exchanges kept (Messages API answers recorded); 0 when nothing went through.
    pub answers: usize,
    /// Why it stopped.
    pub ending: Ending,
}

/// The transcript file could not be written (the message says which and why).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct WriteError(pub String);

impl Recorder {
    /// Wait until an answer ends the conversation, `stop` is set or `limit` passes (polling
    /// every 20 ms), then [`GRACE`]; then what was recorded.
    ///
    /// # Errors
    /// [`WriteError`] when the last write of the transcript failed.
    pub fn wait(
        &self,
        limit: Duration,
        stop: &std::sync::atomic::AtomicBool,
    ) -> Result<Recording, WriteError> {
        use std::sync::atomic::Ordering;
        let deadline = std::time::Instant::now() + limit;
        while !self.ended() && std::time::Instant::now() < deadline && !stop.load(Ordering::Relaxed)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(GRACE);
        let answers = self.exchanges().len();
        if let Some(e) = self.write_error() {
            return Err(WriteError(e));
        }
        let ending = if self.ended() {
            Ending::Ended
        } else if stop.load(Ordering::Relaxed) {
            Ending::Interrupted
        } else {
            Ending::TimeUp
        };
        Ok(Recording { answers, ending })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(request: Value, message: Value) -> Exchange {
        Exchange { request, message }
    }

    fn tool_turn(id: &str, path: &str) -> Value {
        json!({"id": "msg", "role": "assistant", "stop_reason": "tool_use", "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": id, "name": "memory", "input": {"command": "view", "path": path}}]})
    }

    fn results(id: &str, text: &str) -> Value {
        json!({"messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": text}]}]})
    }

    #[test]
    fn a_conversation_becomes_a_transcript_and_a_retry_replaces_its_turn() {
        let start = json!({"messages": [{"role": "user", "content": "Hi there"}]});
        let done = json!({"role": "assistant", "stop_reason": "end_turn", "content": [{"type": "text", "text": "Done."}]});
        let t = transcript_of(
            &[
                ex(start.clone(), tool_turn("t1", "/memories")),
                ex(results("t1", "listing"), tool_turn("t2", "/memories/a")),
                // The app retried the same request: its answer replaces the one before.
                ex(results("t1", "listing"), tool_turn("t3", "/memories/b")),
                ex(results("t3", "no such file"), done),
            ],
            "my-run",
        );
        assert_eq!(t.user, "Hi there");
        assert_eq!(t.turns.len(), 3);
        assert_eq!(t.turns[1].tool_use[0].id.as_deref(), Some("t3"));
        assert_eq!(
            t.turns[1].tool_use[0].input,
            json!({"command": "view", "path": "/memories/b"})
        );
        assert_eq!(
            t.turns[1].tool_use[0].accept[0].reply,
            Reply::Recorded(Recorded {
                text: "no such file".into(),
                is_error: false
            })
        );
        assert_eq!(t.turns[2].text.as_deref(), Some("Done."));
        // What it writes loads back as a valid transcript.
        let back = Transcript::parse(&transcript_json(&t), Path::new("x.json")).unwrap();
        assert_eq!(back.turns.len(), 3);
    }

    #[test]
    fn a_cut_recording_ends_with_a_final_text_and_unanswered_calls_accept_anything() {
        let start =
            json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "Go"}]}]});
        let t = transcript_of(&[ex(start, tool_turn("t1", "/memories"))], "cut");
        assert_eq!(t.turns.len(), 2);
        let accepts: Vec<&Reply> = t.turns[0].tool_use[0]
            .accept
            .iter()
            .map(|a| &a.reply)
            .collect();
        assert_eq!(accepts, [&Reply::AnySuccess, &Reply::AnyError]);
        assert_eq!(
            t.turns[1].text.as_deref(),
            Some("(memcert record: the recording ended here)")
        );
        Transcript::parse(&transcript_json(&t), Path::new("x.json")).unwrap();
    }

    #[test]
    fn a_stream_is_reassembled_into_its_message() {
        let sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"memory\",\"input\":{}}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\": \\\"vi\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"ew\\\"}\"}}\n\n\
event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n\
event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let m = message_of_sse(sse).unwrap();
        assert_eq!(
            m["content"],
            json!([{"type": "text", "text": "Hello"},
                   {"type": "tool_use", "id": "t", "name": "memory", "input": {"command": "view"}}])
        );
        assert_eq!(m["stop_reason"], "tool_use");
        assert_eq!(message_of_sse("data: {}\n\n"), None);
    }

    #[test]
    fn secrets_are_redacted_and_ids_are_slugs() {
        assert_eq!(
            redact(
                "key sk-ant-123456 and sk-ant-123456",
                &["sk-ant-123456".into()]
            ),
            "key [REDACTED] and [REDACTED]"
        );
        assert_eq!(id_for(Path::new("dir/My Run_2.json")), "my-run-2");
        assert_eq!(id_for(Path::new("dir/__.json")), "recorded");
    }
}
