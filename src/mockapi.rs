//! A mock of the Messages API (`POST /v1/messages`) that replays recorded assistant turns to an
//! unmodified app and captures the `tool_result` blocks its memory handler sends back.
//!
//! [`MockApi::start`] binds `127.0.0.1` on an ephemeral port (a wiremock server with a custom
//! `Respond`er). Each conversation is a session ([`MockApi::add_session`]), reached at
//! [`MockApi::base_url`] (`http://127.0.0.1:P/s/<n>`, for `ANTHROPIC_BASE_URL`); any prefix
//! before `/v1/messages` is accepted, and with a single session the `/s/<n>` part may be left out.
//!
//! How a request is answered (facts in `shared/spec/messages-api-wire.md`):
//! - the next turn is picked from the `tool_use_id`s of the last user message, which the mock
//!   made (`toolu_mc<session>_<turn>_<k>`), so a retry or a thread replay gets the same answer;
//!   a last message without tool_result blocks starts the conversation;
//! - both conversation modes of the pinned SDKs work: server-side threads (`thread:
//!   create/continue`, only the new tool_results sent; the default of `anthropic` 2.14.0 and
//!   `@anthropic-ai/sdk` 1.14.0) and full history; [`Threads::Refuse`] answers any threaded
//!   request with `thread_unsupported_request`, which makes the runners fall back to full
//!   history for the rest of the run;
//! - `"stream": true` in the body gets a complete SSE body (named events, `input_json_delta`,
//!   `message_delta`, `message_stop`), otherwise a JSON message;
//! - a malformed request (not JSON, no credential, tool_results missing, extra or out of order,
//!   ids the mock never issued, a non-boolean `is_error`) gets a Messages-API-shaped 400 (401 for
//!   no credential) with `x-should-retry: false`, and is recorded.
//!
//! # Guarantees
//! - Listens on loopback only; dropping the [`MockApi`] stops the server (it is never pooled).
//! - The first tool_result per id is the one kept; a later different one is noted.
//!
//! # Non-guarantees
//! - SSE is served as one buffered body (wiremock cannot flush event by event), so faults that
//!   cut a stream midway or space events in time are not possible here.
//! - `tools`, `system` and the echoed history are not validated.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{json, Value};

use crate::protocol::{Content, ToolResult};

/// What the mock does with threaded requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Threads {
    /// Answer them like any other (the SDK keys its state on the reply ids).
    #[default]
    Accept,
    /// Answer `400 thread_unsupported_request`: the runner re-sends unthreaded, full history.
    Refuse,
}

/// One assistant turn as the mock serves it.
#[derive(Clone, Debug, PartialEq)]
pub struct ServedTurn {
    /// A text block first, if any.
    pub text: Option<String>,
    /// `(name, input)` of each tool_use block, in order; empty ends the conversation.
    pub tool_use: Vec<(String, Value)>,
}

/// A tool_result as received.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Captured {
    /// Turn (0-based) of the tool_use it answers.
    pub turn: usize,
    /// Index of the tool_use in its turn.
    pub index: usize,
    /// Content and `is_error`.
    pub result: ToolResult,
}

/// Everything a session saw.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SessionLog {
    /// Requests to `/v1/messages` for this session.
    pub requests: usize,
    /// Tool results by tool_use id, the first of each kept.
    pub results: BTreeMap<String, Captured>,
    /// Turns served, in order (a retry serves a turn again).
    pub served: Vec<usize>,
    /// The final text turn was served.
    pub finished: bool,
    /// Requests answered with an error, with the message sent.
    pub malformed: Vec<String>,
    /// Threaded requests refused with `thread_unsupported_request`.
    pub threads_refused: usize,
    /// Conformance notes that do not stop the conversation (`is_error: false`, a retry with a
    /// different result).
    pub notes: Vec<String>,
    /// Some request carried `thread`.
    pub threaded: bool,
    /// Some request re-sent history (more than one message).
    pub full_history: bool,
    /// Some request asked for `"stream": true`.
    pub streamed: bool,
}

struct Session {
    turns: Vec<ServedTurn>,
    log: SessionLog,
}

#[derive(Default)]
struct State {
    threads: Threads,
    sessions: Vec<Session>,
}

/// A running mock; see the module docs. Dropping it stops the server.
pub struct MockApi {
    // Dropped before the runtime that started it.
    server: Option<wiremock::MockServer>,
    _runtime: tokio::runtime::Runtime,
    state: Arc<Mutex<State>>,
}

impl MockApi {
    /// Start a mock on `127.0.0.1` with an ephemeral port.
    ///
    /// # Errors
    /// The runtime cannot be built.
    pub fn start(threads: Threads) -> std::io::Result<MockApi> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let state = Arc::new(Mutex::new(State {
            threads,
            sessions: Vec::new(),
        }));
        let responder = Responder(Arc::clone(&state));
        let server = runtime.block_on(async {
            let server = wiremock::MockServer::builder()
                .disable_request_recording()
                .start()
                .await;
            wiremock::Mock::given(wiremock::matchers::method("POST"))
                .and(wiremock::matchers::path_regex(r"/v1/messages$"))
                .respond_with(responder)
                .mount(&server)
                .await;
            server
        });
        Ok(MockApi {
            server: Some(server),
            _runtime: runtime,
            state,
        })
    }

    /// Add a conversation; returns its session number.
    pub fn add_session(&self, turns: Vec<ServedTurn>) -> usize {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.sessions.push(Session {
            turns,
            log: SessionLog::default(),
        });
        st.sessions.len() - 1
    }

    /// The server's address, `http://127.0.0.1:P`.
    pub fn uri(&self) -> String {
        self.server.as_ref().map(|s| s.uri()).unwrap_or_default()
    }

    /// The base URL of a session, for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self, session: usize) -> String {
        format!("{}/s/{session}", self.uri())
    }

    /// What a session saw so far.
    pub fn log(&self, session: usize) -> SessionLog {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.sessions
            .get(session)
            .map(|s| s.log.clone())
            .unwrap_or_default()
    }
}

impl Drop for MockApi {
    fn drop(&mut self) {
        drop(self.server.take());
    }
}

/// The id the mock gives the `k`-th tool_use of `turn` in `session`.
pub fn tool_use_id(session: usize, turn: usize, k: usize) -> String {
    format!("toolu_mc{session}_{turn}_{k}")
}

fn parse_tool_use_id(id: &str) -> Option<(usize, usize, usize)> {
    let mut it = id.strip_prefix("toolu_mc")?.split('_');
    let s = it.next()?.parse().ok()?;
    let t = it.next()?.parse().ok()?;
    let k = it.next()?.parse().ok()?;
    it.next().is_none().then_some((s, t, k))
}

struct Responder(Arc<Mutex<State>>);

impl wiremock::Respond for Responder {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let has_key = request.headers.contains_key("x-api-key")
            || request.headers.contains_key("authorization");
        let mut st = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let reply = answer(&mut st, request.url.path(), &request.body, has_key);
        match reply {
            Reply::Json(status, body) => wiremock::ResponseTemplate::new(status)
                .insert_header("x-should-retry", "false")
                .set_body_json(body),
            Reply::Sse(body) => wiremock::ResponseTemplate::new(200)
                .insert_header("cache-control", "no-cache")
                .set_body_raw(body, "text/event-stream"),
        }
    }
}

#[derive(Debug, PartialEq)]
enum Reply {
    Json(u16, Value),
    Sse(String),
}

fn api_error(status: u16, kind: &str, message: &str) -> Reply {
    Reply::Json(
        status,
        json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}

/// The session a path names (`.../s/<n>/v1/messages`), or the only one.
fn session_of(path: &str, sessions: usize) -> Option<usize> {
    let before = path.strip_suffix("/v1/messages")?;
    if let Some((_, n)) = before.rsplit_once("/s/") {
        return n.parse().ok().filter(|n| *n < sessions);
    }
    (sessions == 1).then_some(0)
}

fn answer(st: &mut State, path: &str, body: &[u8], has_key: bool) -> Reply {
    let threads = st.threads;
    let Some(n) = session_of(path, st.sessions.len()) else {
        return api_error(
            404,
            "not_found_error",
            &format!("memcert mock: no session at {path}; use the base URL memcert gave"),
        );
    };
    let session = &mut st.sessions[n];
    session.log.requests += 1;
    let reply = answer_session(session, n, threads, body, has_key);
    if let Reply::Json(status, v) = &reply {
        if *status >= 400 && v["error"]["details"]["error_code"] != "thread_unsupported_request" {
            let msg = v["error"]["message"].as_str().unwrap_or("").to_owned();
            session.log.malformed.push(msg);
        }
    }
    reply
}

fn answer_session(
    session: &mut Session,
    n: usize,
    threads: Threads,
    body: &[u8],
    has_key: bool,
) -> Reply {
    let bad = |m: String| api_error(400, "invalid_request_error", &format!("memcert mock: {m}"));
    if !has_key {
        return api_error(
            401,
            "authentication_error",
            "memcert mock: no x-api-key or authorization header",
        );
    }
    let Ok(Value::Object(req)) = serde_json::from_slice::<Value>(body) else {
        return bad("the body is not a JSON object".into());
    };
    let thread = req.get("thread").filter(|t| !t.is_null() && **t != false);
    if thread.is_some() {
        session.log.threaded = true;
        if threads == Threads::Refuse {
            session.log.threads_refused += 1;
            return Reply::Json(
                400,
                json!({"type": "error", "error": {"type": "invalid_request_error",
                    "message": "memcert mock: threads are turned off for this run",
                    "details": {"error_code": "thread_unsupported_request", "unsupported": ["thread"]}}}),
            );
        }
    }
    let stream = req.get("stream") == Some(&Value::Bool(true));
    session.log.streamed |= stream;
    let Some(messages) = req.get("messages").and_then(Value::as_array) else {
        return bad("`messages` must be an array".into());
    };
    session.log.full_history |= messages.len() > 1;
    let Some(last) = messages.last() else {
        return bad("`messages` is empty".into());
    };
    if last["role"] != "user" {
        return bad("the last message must have role `user`".into());
    }
    let blocks: Vec<&Value> = match &last["content"] {
        Value::Array(a) => a.iter().filter(|b| b["type"] == "tool_result").collect(),
        Value::String(_) => Vec::new(),
        _ => return bad("the last message's `content` must be a string or an array".into()),
    };
    let next = if blocks.is_empty() {
        0
    } else {
        let mut ids = Vec::new();
        for b in &blocks {
            let id = b["tool_use_id"].as_str().unwrap_or("");
            match parse_tool_use_id(id) {
                Some((s, t, k)) if s == n => ids.push((id.to_owned(), t, k)),
                _ => {
                    return bad(format!(
                        "tool_use_id {id:?} was not issued in this conversation"
                    ))
                }
            }
        }
        let turn = ids[0].1;
        let expected: Vec<String> = match session.turns.get(turn) {
            Some(t) => (0..t.tool_use.len())
                .map(|k| tool_use_id(n, turn, k))
                .collect(),
            None => Vec::new(),
        };
        let got: Vec<String> = ids.iter().map(|(id, _, _)| id.clone()).collect();
        if got != expected {
            return bad(format!(
                "the last message must answer every tool_use of the previous turn, in order: expected tool_result blocks for {expected:?}, got {got:?}"
            ));
        }
        let mut results = Vec::new();
        for (b, (id, _, k)) in blocks.iter().zip(&ids) {
            let is_error = match b.get("is_error") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(true)) => true,
                Some(Value::Bool(false)) => {
                    let note = format!("{id}: `is_error: false` sent on a success (the SDK runners leave the key out)");
                    if !session.log.notes.contains(&note) {
                        session.log.notes.push(note);
                    }
                    false
                }
                Some(other) => {
                    return bad(format!("{id}: `is_error` must be a boolean, got {other}"))
                }
            };
            let content = match b.get("content") {
                None | Some(Value::Null) => Content::Text(String::new()),
                Some(c) => match serde_json::from_value::<Content>(c.clone()) {
                    Ok(c) => c,
                    Err(e) => return bad(format!("{id}: `content`: {e}")),
                },
            };
            results.push((
                id.clone(),
                Captured {
                    turn,
                    index: *k,
                    result: ToolResult { content, is_error },
                },
            ));
        }
        for (id, c) in results {
            match session.log.results.get(&id) {
                Some(old) if old.result != c.result => session.log.notes.push(format!(
                    "{id}: a repeated request carried a different tool_result; the first is kept"
                )),
                Some(_) => {}
                None => {
                    session.log.results.insert(id, c);
                }
            }
        }
        turn + 1
    };
    let Some(turn) = session.turns.get(next) else {
        return bad("the conversation is over: there is no turn after the final text".into());
    };
    session.log.served.push(next);
    if turn.tool_use.is_empty() {
        session.log.finished = true;
    }
    let message = message_json(n, next, turn);
    if stream {
        Reply::Sse(sse(&message))
    } else {
        Reply::Json(200, message)
    }
}

fn message_json(n: usize, index: usize, turn: &ServedTurn) -> Value {
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
    json!({"id": format!("msg_mc{n}_{index}"), "type": "message", "role": "assistant",
           "model": "claude-memcert-mock", "content": content, "stop_reason": stop,
           "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}})
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
    event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null}, "usage": {"output_tokens": 1}}),
    );
    event("message_stop", json!({"type": "message_stop"}));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        let view = json!({"command": "view", "path": "/memories"});
        State {
            threads: Threads::Accept,
            sessions: vec![Session {
                turns: vec![
                    ServedTurn {
                        text: None,
                        tool_use: vec![("memory".into(), view.clone()), ("memory".into(), view)],
                    },
                    ServedTurn {
                        text: Some("done".into()),
                        tool_use: vec![],
                    },
                ],
                log: SessionLog::default(),
            }],
        }
    }

    fn post(st: &mut State, body: Value) -> Reply {
        answer(
            st,
            "/prefix/s/0/v1/messages",
            body.to_string().as_bytes(),
            true,
        )
    }

    fn results(ids: &[&str]) -> Value {
        let blocks: Vec<Value> = ids
            .iter()
            .map(|id| json!({"type": "tool_result", "tool_use_id": id, "content": "ok"}))
            .collect();
        json!({"model": "m", "max_tokens": 1, "thread": {"type": "continue", "previous_message_id": "msg_mc0_0"},
               "messages": [{"role": "user", "content": blocks}]})
    }

    #[test]
    fn a_threaded_conversation_runs_and_retries_get_the_same_turn() {
        let mut st = state();
        let first = json!({"model": "m", "max_tokens": 1, "thread": {"type": "create"},
                           "messages": [{"role": "user", "content": "hi"}]});
        let Reply::Json(200, m) = post(&mut st, first) else {
            panic!()
        };
        assert_eq!(m["content"][1]["id"], "toolu_mc0_0_1");
        assert_eq!(m["stop_reason"], "tool_use");
        let again = post(&mut st, results(&["toolu_mc0_0_0", "toolu_mc0_0_1"]));
        assert_eq!(
            again,
            post(&mut st, results(&["toolu_mc0_0_0", "toolu_mc0_0_1"]))
        );
        let log = &st.sessions[0].log;
        assert!(log.finished && log.threaded && log.malformed.is_empty());
        assert_eq!(log.results.len(), 2);
        assert_eq!(log.served, [0, 1, 1]);
    }

    #[test]
    fn missing_or_reordered_results_get_a_400() {
        let mut st = state();
        for ids in [
            &["toolu_mc0_0_1", "toolu_mc0_0_0"][..],
            &["toolu_mc0_0_0"],
            &["toolu_x"],
        ] {
            let Reply::Json(400, e) = post(&mut st, results(ids)) else {
                panic!()
            };
            assert_eq!(e["type"], "error");
            assert_eq!(e["error"]["type"], "invalid_request_error");
        }
        assert_eq!(st.sessions[0].log.malformed.len(), 3);
        assert!(st.sessions[0].log.results.is_empty());
    }

    #[test]
    fn refused_threads_are_not_malformed() {
        let mut st = state();
        st.threads = Threads::Refuse;
        let Reply::Json(400, e) = post(&mut st, results(&["toolu_mc0_0_0", "toolu_mc0_0_1"]))
        else {
            panic!()
        };
        assert_eq!(
            e["error"]["details"]["error_code"],
            "thread_unsupported_request"
        );
        assert!(st.sessions[0].log.malformed.is_empty());
    }

    #[test]
    fn dropping_the_mock_closes_its_port() {
        use std::net::TcpStream;
        use std::time::{Duration, Instant};
        let m = MockApi::start(Threads::Accept).unwrap();
        let addr = m.uri().trim_start_matches("http://").to_owned();
        assert!(addr.starts_with("127.0.0.1:"), "{addr}");
        drop(TcpStream::connect(&addr).expect("the mock listens"));
        drop(m);
        let deadline = Instant::now() + Duration::from_secs(5);
        while TcpStream::connect(&addr).is_ok() {
            assert!(Instant::now() < deadline, "{addr} still listens after drop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn the_stream_carries_the_input_as_json_deltas_and_ends_with_message_stop() {
        let mut st = state();
        let body = json!({"stream": true, "messages": [{"role": "user", "content": "hi"}]});
        let Reply::Sse(text) = post(&mut st, body) else {
            panic!()
        };
        let names: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(names.first(), Some(&"message_start"));
        assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);
        let joined: String = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str::<Value>(d).unwrap())
            .filter(|d| d["delta"]["type"] == "input_json_delta" && d["index"] == 0)
            .map(|d| d["delta"]["partial_json"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            serde_json::from_str::<Value>(&joined).unwrap(),
            json!({"command": "view", "path": "/memories"})
        );
    }
}
