//! A mock of the Messages API (`POST /v1/messages`) that replays recorded assistant turns to an
//! unmodified app and captures the `tool_result` blocks its memory handler sends back.
//!
//! [`MockApi::start`] binds `127.0.0.1` on an ephemeral port: a wiremock server with a custom
//! `Respond`er, or, when a [`Fault::Drop`] must cut an answer midway (wiremock only sends whole
//! bodies), a minimal hyper listener ([`MockApi::start_listener`]) that calls the same request
//! logic. Each conversation is a session ([`MockApi::add_session`]), reached at
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
//!   no credential) with `x-should-retry: false`, and is recorded;
//! - injected [`Fault`]s (`--inject`): an error status for a turn's first requests (retryable
//!   ones with `retry-after-ms: 10`, so SDK retries are fast), an answer cut with the connection
//!   closed (`drop`), or one that ends early but cleanly (`truncate`);
//! - `context_management` is checked against the documented rules ([`ContextFinding`],
//!   `shared/spec/context-editing.md`) and answered with `applied_edits` (nothing cleared), in
//!   the message or, streamed, in `message_delta`.
//!
//! # Guarantees
//! - Listens on loopback only; dropping the [`MockApi`] stops the server and returns once its
//!   port refuses connections (at most 2 s for wiremock, which closes on its own thread).
//! - The first tool_result per id is the one kept; a later different one is noted.
//!
//! # Non-guarantees
//! - A stream is sent as one body, not event by event with pauses; events spaced in time are
//!   not served.
//! - `tools`, `system` and the echoed history are not validated.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{json, Value};

use memcert::protocol::{Content, ToolResult};
use memcert::suite::verdict::Verdict;

/// What the mock does with threaded requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Threads {
    /// Answer them like any other (the SDK keys its state on the reply ids).
    #[default]
    Accept,
    /// Answer `400 thread_unsupported_request`: the runner re-sends unthreaded, full history.
    Refuse,
}

impl std::str::FromStr for Threads {
    type Err = String;

    /// `accept` or `refuse`.
    fn from_str(s: &str) -> Result<Threads, String> {
        match s {
            "accept" => Ok(Threads::Accept),
            "refuse" => Ok(Threads::Refuse),
            _ => Err(format!("{s:?}: expected accept or refuse")),
        }
    }
}

/// A fault the mock injects, to certify the app's own retry and failure behaviour
/// (`--inject`). Turns count from 1, as a person reads a transcript; each session (transcript)
/// gets the fault anew.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// `STATUS@TURN[xTIMES]` (e.g. `529@3`, `500@2x3`): the first `times` requests for that turn
    /// get a Messages-API-shaped error with this status (`overloaded_error` for 529,
    /// `rate_limit_error` for 429, `api_error` otherwise), `x-should-retry: true` and
    /// `retry-after-ms: 10` for 408, 409, 429 and 5xx, `false` otherwise. Both pinned SDKs retry a
    /// retryable status twice (messages-api-wire §6).
    Status {
        /// HTTP status, 400..=599.
        status: u16,
        /// 1-based turn.
        turn: usize,
        /// How many requests for that turn get it.
        times: usize,
    },
    /// `drop@TURN[xTIMES]`: the answer to that turn is cut midway and the connection closed:
    /// a stream after its first delta event, a JSON body after half its bytes (the
    /// `Content-Length` promises the whole). Served by the hyper listener, since wiremock only
    /// sends whole bodies.
    Drop {
        /// 1-based turn.
        turn: usize,
        /// How many requests for that turn get it.
        times: usize,
    },
    /// `truncate@TURN[xTIMES]`: the answer to that turn ends early but cleanly (the HTTP body
    /// is complete): a stream after its first delta event, with no `message_delta` or
    /// `message_stop`; a JSON body after half its bytes. The Python SDK takes such a stream as a
    /// partial reply and stops without an error (messages-api-wire §5).
    Truncate {
        /// 1-based turn.
        turn: usize,
        /// How many requests for that turn get it.
        times: usize,
    },
}

impl std::str::FromStr for Fault {
    type Err = String;

    /// Parse `529@3`, `500@2x3`, `drop@2`, `drop@1x2`, `truncate@2`.
    fn from_str(s: &str) -> Result<Fault, String> {
        let bad = || {
            format!("bad fault {s:?}: expected STATUS@TURN, drop@TURN or truncate@TURN, optionally xTIMES (e.g. 529@3, drop@2, 500@1x3)")
        };
        let (what, at) = s.split_once('@').ok_or_else(bad)?;
        let (turn, times) = match at.split_once('x') {
            Some((t, n)) => (t, n.parse::<usize>().map_err(|_| bad())?),
            None => (at, 1),
        };
        let turn = turn.parse::<usize>().map_err(|_| bad())?;
        if turn == 0 || times == 0 {
            return Err(format!("{}; turns and times count from 1", bad()));
        }
        match what {
            "drop" => return Ok(Fault::Drop { turn, times }),
            "truncate" => return Ok(Fault::Truncate { turn, times }),
            _ => {}
        }
        match what.parse::<u16>() {
            Ok(status @ 400..=599) => Ok(Fault::Status {
                status,
                turn,
                times,
            }),
            Ok(_) => Err(format!("{}; STATUS must be 400 to 599", bad())),
            Err(_) => Err(bad()),
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, turn, times) = match self {
            Fault::Status {
                status,
                turn,
                times,
            } => (status.to_string(), turn, times),
            Fault::Drop { turn, times } => ("drop".to_owned(), turn, times),
            Fault::Truncate { turn, times } => ("truncate".to_owned(), turn, times),
        };
        write!(f, "{what}@{turn}")?;
        if *times != 1 {
            write!(f, "x{times}")?;
        }
        Ok(())
    }
}

impl Fault {
    /// The turn it hits, counted from 1.
    pub fn turn(&self) -> usize {
        match self {
            Fault::Status { turn, .. }
            | Fault::Drop { turn, .. }
            | Fault::Truncate { turn, .. } => *turn,
        }
    }

    fn times(&self) -> usize {
        match self {
            Fault::Status { times, .. }
            | Fault::Drop { times, .. }
            | Fault::Truncate { times, .. } => *times,
        }
    }
}

/// How a mock behaves; [`Default`] is threads accepted, no faults.
#[derive(Clone, Debug, Default)]
pub struct MockConfig {
    /// What to do with threaded requests.
    pub threads: Threads,
    /// Faults to inject, in every session.
    pub faults: Vec<Fault>,
}

impl From<Threads> for MockConfig {
    fn from(threads: Threads) -> MockConfig {
        MockConfig {
            threads,
            faults: Vec::new(),
        }
    }
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

/// A finding about the request's `context_management` (`shared/spec/context-editing.md`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContextFinding {
    /// `INFO` for advice (e.g. `memory` not in `exclude_tools`), `NON-STRICT` for a rule broken.
    pub verdict: Verdict,
    /// One sentence naming the edit and the rule.
    pub detail: String,
}

/// One request as the mock received it and what it answered (`certify --app --wire-log`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireExchange {
    /// The request body as JSON, or `{"unparsed": <text>}` when it is not JSON. Headers are not
    /// kept (no credentials), but for `anthropic-beta`.
    pub request: Value,
    /// The `anthropic-beta` header values, joined with `,`; empty when absent.
    pub anthropic_beta: String,
    /// The status answered.
    pub status: u16,
    /// What was answered, in a few words: `turn 2 (JSON)`, `turn 2 (SSE)`, `injected 529`,
    /// `cut`, `truncated`, or the error message.
    pub answer: String,
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
    /// Requests per turn (0-based), faults and retries included.
    pub attempts: BTreeMap<usize, usize>,
    /// The final text turn was served.
    pub finished: bool,
    /// Requests answered with an error, with the message sent.
    pub malformed: Vec<String>,
    /// Threaded requests refused with `thread_unsupported_request`.
    pub threads_refused: usize,
    /// Injected faults delivered, one line each (`529 at turn 3`, `stream cut at turn 2`).
    pub faults: Vec<String>,
    /// Conformance notes that do not stop the conversation (`is_error: false`, a retry with a
    /// different result).
    pub notes: Vec<String>,
    /// Findings about `context_management`, each once.
    pub context: Vec<ContextFinding>,
    /// The text of the first user message of the conversation's first request.
    pub user: Option<String>,
    /// Some request carried `thread`.
    pub threaded: bool,
    /// Some request re-sent history (more than one message).
    pub full_history: bool,
    /// Some request asked for `"stream": true`.
    pub streamed: bool,
    /// Every request and what it got, in order.
    pub exchanges: Vec<WireExchange>,
}

struct Session {
    turns: Vec<ServedTurn>,
    log: SessionLog,
}

#[derive(Default)]
struct State {
    config: MockConfig,
    sessions: Vec<Session>,
    /// Requests that reached no session (`METHOD path`): a wrong base URL or another endpoint.
    stray: Vec<String>,
}

/// Answer a request the mock does not serve with a 404 and remember it.
fn stray(st: &mut State, method: &str, path: &str) -> Reply {
    if st.stray.len() < 100 {
        st.stray.push(format!("{method} {path}"));
    }
    api_error(
        404,
        "not_found_error",
        &format!(
            "memcert mock: only POST …/v1/messages under the base URL memcert gave is served, not {method} {path}"
        ),
    )
}

enum Backend {
    Wiremock {
        // Dropped before the runtime that started it.
        server: Option<wiremock::MockServer>,
        _runtime: tokio::runtime::Runtime,
    },
    Listener(listener::Listener),
}

/// A running mock; see the module docs. Dropping it stops the server.
pub struct MockApi {
    backend: Backend,
    uri: String,
    state: Arc<Mutex<State>>,
}

impl MockApi {
    /// Start a mock on `127.0.0.1` with an ephemeral port: wiremock, or the hyper listener when
    /// a [`Fault::Drop`] is asked for.
    ///
    /// # Errors
    /// The runtime cannot be built or the port cannot be bound.
    pub fn start(config: impl Into<MockConfig>) -> std::io::Result<MockApi> {
        let config = config.into();
        let cut = config
            .faults
            .iter()
            .any(|f| matches!(f, Fault::Drop { .. }));
        let state = Arc::new(Mutex::new(State {
            config,
            sessions: Vec::new(),
            stray: Vec::new(),
        }));
        if cut {
            return MockApi::start_listener_with(state);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let responder = Responder(Arc::clone(&state));
        let stray_state = Arc::clone(&state);
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
            // Everything else: a 404 that is remembered ([`MockApi::stray`]).
            wiremock::Mock::given(wiremock::matchers::any())
                .respond_with(StrayResponder(Arc::clone(&stray_state)))
                .with_priority(10)
                .mount(&server)
                .await;
            server
        });
        Ok(MockApi {
            uri: server.uri(),
            backend: Backend::Wiremock {
                server: Some(server),
                _runtime: runtime,
            },
            state,
        })
    }

    /// Start the hyper listener whatever the faults (it serves everything wiremock does, and
    /// cut streams); the tests run both backends through the same conversations.
    ///
    /// # Errors
    /// The runtime cannot be built or the port cannot be bound.
    pub fn start_listener(config: impl Into<MockConfig>) -> std::io::Result<MockApi> {
        MockApi::start_listener_with(Arc::new(Mutex::new(State {
            config: config.into(),
            sessions: Vec::new(),
            stray: Vec::new(),
        })))
    }

    fn start_listener_with(state: Arc<Mutex<State>>) -> std::io::Result<MockApi> {
        let l = listener::Listener::start(listener::mock(Arc::clone(&state)), false)?;
        Ok(MockApi {
            uri: format!("http://{}", l.addr),
            backend: Backend::Listener(l),
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
        self.uri.clone()
    }

    /// The base URL of a session, for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self, session: usize) -> String {
        format!("{}/s/{session}", self.uri())
    }

    /// Requests that reached no session (`METHOD path`, the first 100): an app pointed at a
    /// wrong base URL, or calling another endpoint.
    pub fn stray(&self) -> Vec<String> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.stray.clone()
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
        match &mut self.backend {
            Backend::Wiremock { server, .. } => {
                drop(server.take());
                // wiremock closes its listener on its own thread: wait (at most 2 s) until the
                // port refuses, so nothing listens once the mock is dropped.
                let addr = self.uri.trim_start_matches("http://");
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
                while std::net::TcpStream::connect(addr).is_ok()
                    && std::time::Instant::now() < deadline
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            }
            Backend::Listener(l) => l.stop(),
        }
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

/// A request as both backends see it.
struct Request<'a> {
    path: &'a str,
    body: &'a [u8],
    /// `x-api-key` or `authorization` is present.
    has_key: bool,
    /// The `anthropic-beta` header values, joined with `,`.
    betas: String,
}

impl Request<'_> {
    fn beta(&self, name: &str) -> bool {
        self.betas.split(',').any(|b| b.trim() == name)
    }
}

struct Responder(Arc<Mutex<State>>);

struct StrayResponder(Arc<Mutex<State>>);

impl wiremock::Respond for StrayResponder {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let r = {
            let mut st = self.0.lock().unwrap_or_else(|e| e.into_inner());
            stray(&mut st, request.method.as_str(), request.url.path()).render()
        };
        wiremock::ResponseTemplate::new(r.status).set_body_raw(r.body, &r.content_type)
    }
}

impl wiremock::Respond for Responder {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let header = |name: &str| {
            request
                .headers
                .get_all(name)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect::<Vec<_>>()
                .join(",")
        };
        let req = Request {
            path: request.url.path(),
            body: &request.body,
            has_key: request.headers.contains_key("x-api-key")
                || request.headers.contains_key("authorization"),
            betas: header("anthropic-beta"),
        };
        let r = {
            let mut st = self.0.lock().unwrap_or_else(|e| e.into_inner());
            answer(&mut st, &req).render()
        };
        // wiremock sends whole bodies only; `MockApi::start` picks the listener for cuts.
        debug_assert!(r.keep.is_none());
        let mut t = wiremock::ResponseTemplate::new(r.status);
        for (k, v) in r.headers {
            t = t.insert_header(k, v);
        }
        t.set_body_raw(r.body, &r.content_type)
    }
}

#[derive(Debug, PartialEq)]
enum Reply {
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
    fn render(self) -> Rendered {
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

/// The statuses the SDKs retry (messages-api-wire §6).
fn retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || status >= 500
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

fn answer(st: &mut State, req: &Request) -> Reply {
    let Some(n) = session_of(req.path, st.sessions.len()) else {
        return stray(st, "POST", req.path);
    };
    let session = &mut st.sessions[n];
    session.log.requests += 1;
    let reply = answer_session(session, n, &st.config, req);
    if let Reply::Json(status, v) = &reply {
        if *status >= 400 && v["error"]["details"]["error_code"] != "thread_unsupported_request" {
            let msg = v["error"]["message"].as_str().unwrap_or("").to_owned();
            session.log.malformed.push(msg);
        }
    }
    let turn = session.log.served.last().copied();
    let (status, answer) = match &reply {
        Reply::Json(200, _) => (200, format!("turn {} (JSON)", turn.map_or(0, |t| t + 1))),
        Reply::Sse(_) => (200, format!("turn {} (SSE)", turn.map_or(0, |t| t + 1))),
        Reply::Json(status, v) => (
            *status,
            v["error"]["message"].as_str().unwrap_or("").to_owned(),
        ),
        Reply::Fault(status, _) => (*status, format!("injected {status}")),
        Reply::Cut { abort: true, .. } => (200, "cut".to_owned()),
        Reply::Cut { .. } => (200, "truncated".to_owned()),
    };
    session.log.exchanges.push(WireExchange {
        request: serde_json::from_slice(req.body)
            .unwrap_or_else(|_| json!({ "unparsed": String::from_utf8_lossy(req.body) })),
        anthropic_beta: req.betas.clone(),
        status,
        answer,
    });
    reply
}

fn answer_session(session: &mut Session, n: usize, config: &MockConfig, req: &Request) -> Reply {
    let bad = |m: String| api_error(400, "invalid_request_error", &format!("memcert mock: {m}"));
    if !req.has_key {
        return api_error(
            401,
            "authentication_error",
            "memcert mock: no x-api-key or authorization header",
        );
    }
    let Ok(Value::Object(req_obj)) = serde_json::from_slice::<Value>(req.body) else {
        return bad("the body is not a JSON object".into());
    };
    let thread = req_obj
        .get("thread")
        .filter(|t| !t.is_null() && **t != false);
    if thread.is_some() {
        session.log.threaded = true;
        if config.threads == Threads::Refuse {
            session.log.threads_refused += 1;
            return Reply::Json(
                400,
                json!({"type": "error", "error": {"type": "invalid_request_error",
                    "message": "memcert mock: threads are turned off for this run",
                    "details": {"error_code": "thread_unsupported_request", "unsupported": ["thread"]}}}),
            );
        }
    }
    let stream = req_obj.get("stream") == Some(&Value::Bool(true));
    session.log.streamed |= stream;
    let Some(messages) = req_obj.get("messages").and_then(Value::as_array) else {
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
        if session.log.user.is_none() {
            session.log.user = match &messages[0]["content"] {
                Value::String(t) => Some(t.clone()),
                Value::Array(b) => Some(
                    b.iter()
                        .filter_map(|b| b["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                _ => None,
            };
        }
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
    let attempt = {
        let a = session.log.attempts.entry(next).or_default();
        *a += 1;
        *a
    };
    if let Some(c) = req_obj_context(&req_obj) {
        for f in check_context(c, req) {
            if !session.log.context.contains(&f) {
                session.log.context.push(f);
            }
        }
    }
    // Faults count the requests for their turn; a retry past `times` is served normally.
    let mut earlier = 0;
    for fault in config.faults.iter().filter(|f| f.turn() == next + 1) {
        if attempt > earlier + fault.times() {
            earlier += fault.times();
            continue;
        }
        match *fault {
            Fault::Status { status, .. } => {
                session
                    .log
                    .faults
                    .push(format!("{status} at turn {} (attempt {attempt})", next + 1));
                let kind = match status {
                    529 => "overloaded_error",
                    429 => "rate_limit_error",
                    500..=599 => "api_error",
                    _ => "invalid_request_error",
                };
                return Reply::Fault(
                    status,
                    json!({"type": "error", "error": {"type": kind,
                        "message": format!("memcert mock: injected {status} at turn {}", next + 1)}}),
                );
            }
            Fault::Drop { .. } | Fault::Truncate { .. } => {
                let abort = matches!(fault, Fault::Drop { .. });
                let what = if abort { "cut" } else { "truncated" };
                session.log.faults.push(format!(
                    "answer {what} at turn {} (attempt {attempt})",
                    next + 1
                ));
                let message = message_json(n, next, turn, context_applied(&req_obj));
                if stream {
                    let body = sse(&message);
                    // Up to the end of the first delta event (messages-api-wire §5).
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
                return Reply::Cut {
                    sse: false,
                    body,
                    keep,
                    abort,
                };
            }
        }
    }
    session.log.served.push(next);
    if turn.tool_use.is_empty() {
        session.log.finished = true;
    }
    let message = message_json(n, next, turn, context_applied(&req_obj));
    if stream {
        Reply::Sse(sse(&message))
    } else {
        Reply::Json(200, message)
    }
}

/// The request's `context_management`, unless absent or null.
fn req_obj_context(req: &serde_json::Map<String, Value>) -> Option<&Value> {
    req.get("context_management").filter(|c| !c.is_null())
}

/// A plausible `context_management` for the answer: one `applied_edits` entry per known
/// clearing edit, with nothing cleared (the mock's conversations stay far below any trigger).
fn context_applied(req: &serde_json::Map<String, Value>) -> Option<Value> {
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

/// Check `context_management` against the documented rules (`shared/spec/context-editing.md`,
/// parameter shapes as in the pinned SDKs' types): the beta header, `edits` an array of
/// objects with a known `type`, each parameter's shape, `clear_thinking_20251015` before
/// `clear_tool_uses_20250919`, and (advice, INFO) `memory` in `exclude_tools`.
fn check_context(c: &Value, req: &Request) -> Vec<ContextFinding> {
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

fn message_json(n: usize, index: usize, turn: &ServedTurn, applied: Option<Value>) -> Value {
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

/// The hyper listener: the same [`answer`] as the wiremock responder, plus cut bodies; also the
/// front of `memcert record` ([`crate::record`]).
pub(crate) mod listener {
    use std::convert::Infallible;
    use std::future::Future;
    use std::net::SocketAddr;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll};
    use std::time::Duration;

    use bytes::Bytes;
    use http_body_util::BodyExt;
    use hyper::body::{Body, Frame, Incoming};

    use super::{answer, Rendered, Request, State};

    /// Answers one request (head and whole body).
    pub(crate) type Handler =
        Arc<dyn Fn(&hyper::http::request::Parts, &[u8]) -> Rendered + Send + Sync>;

    /// A running listener; [`Listener::stop`] (or drop) closes the port and every connection.
    pub(crate) struct Listener {
        pub(crate) addr: SocketAddr,
        stop: Option<tokio::sync::oneshot::Sender<()>>,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    /// The mock's handler: `POST …/v1/messages` answered from the shared state.
    pub(super) fn mock(state: Arc<Mutex<State>>) -> Handler {
        Arc::new(move |parts, body| {
            let path = parts.uri.path();
            if parts.method != hyper::Method::POST || !path.ends_with("/v1/messages") {
                let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
                return super::stray(&mut st, parts.method.as_str(), path).render();
            }
            let request = Request {
                path,
                body,
                has_key: parts.headers.contains_key("x-api-key")
                    || parts.headers.contains_key("authorization"),
                betas: parts
                    .headers
                    .get_all("anthropic-beta")
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .collect::<Vec<_>>()
                    .join(","),
            };
            let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
            answer(&mut st, &request).render()
        })
    }

    impl Listener {
        /// Bind `127.0.0.1:0` and serve `handler` on a thread of its own; with `blocking`, each
        /// request runs on tokio's blocking pool (for a handler that does I/O).
        pub(crate) fn start(handler: Handler, blocking: bool) -> std::io::Result<Listener> {
            let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
            std_listener.set_nonblocking(true)?;
            let addr = std_listener.local_addr()?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (tx, mut rx) = tokio::sync::oneshot::channel::<()>();
            let thread = std::thread::Builder::new()
                .name("memcert-listener".into())
                .spawn(move || {
                    runtime.block_on(async move {
                        let Ok(listener) = tokio::net::TcpListener::from_std(std_listener) else {
                            return;
                        };
                        loop {
                            tokio::select! {
                                _ = &mut rx => break,
                                accepted = listener.accept() => {
                                    let Ok((stream, _)) = accepted else { continue };
                                    let handler = Arc::clone(&handler);
                                    tokio::spawn(async move {
                                        let service = hyper::service::service_fn(move |req| {
                                            serve(Arc::clone(&handler), blocking, req)
                                        });
                                        let _ = hyper::server::conn::http1::Builder::new()
                                            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                                            .await;
                                    });
                                }
                            }
                        }
                    });
                    // Dropping the runtime here cancels every connection task.
                    runtime.shutdown_background();
                })?;
            Ok(Listener {
                addr,
                stop: Some(tx),
                thread: Some(thread),
            })
        }

        pub(crate) fn stop(&mut self) {
            if let Some(tx) = self.stop.take() {
                let _ = tx.send(());
            }
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }

    impl Drop for Listener {
        fn drop(&mut self) {
            self.stop();
        }
    }

    async fn serve(
        handler: Handler,
        blocking: bool,
        req: hyper::Request<Incoming>,
    ) -> Result<hyper::Response<MockBody>, Infallible> {
        let (parts, body) = req.into_parts();
        let body = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let r = if blocking {
            let parts = parts.clone();
            match tokio::task::spawn_blocking(move || handler(&parts, &body)).await {
                Ok(r) => r,
                Err(_) => {
                    super::api_error(500, "api_error", "memcert: the handler failed").render()
                }
            }
        } else {
            handler(&parts, &body)
        };
        let mut b = hyper::Response::builder()
            .status(r.status)
            .header("content-type", &r.content_type);
        for (k, v) in &r.headers {
            b = b.header(k.as_str(), v);
        }
        let body = match r.keep {
            None => MockBody::whole(r.body),
            Some(keep) => {
                // A JSON body promises all its bytes; a stream is chunked.
                if r.content_type == "application/json" {
                    b = b.header("content-length", r.body.len());
                }
                MockBody::cut(r.body, keep)
            }
        };
        Ok(b.body(body)
            .unwrap_or_else(|_| hyper::Response::new(MockBody::whole(Vec::new()))))
    }

    /// A body sent whole, or cut: its first `keep` bytes, a pause so they reach the client,
    /// then an error that makes hyper close the connection without ending the body.
    pub(super) struct MockBody {
        data: Option<Bytes>,
        exact_len: Option<u64>,
        cut: Option<Pin<Box<tokio::time::Sleep>>>,
    }

    impl MockBody {
        fn whole(body: Vec<u8>) -> MockBody {
            MockBody {
                exact_len: Some(body.len() as u64),
                data: Some(Bytes::from(body)),
                cut: None,
            }
        }

        fn cut(body: Vec<u8>, keep: usize) -> MockBody {
            let mut body = Bytes::from(body);
            body.truncate(keep);
            MockBody {
                data: Some(body),
                exact_len: None,
                cut: Some(Box::pin(tokio::time::sleep(Duration::from_millis(50)))),
            }
        }
    }

    impl Body for MockBody {
        type Data = Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
            if let Some(d) = self.data.take() {
                return Poll::Ready(Some(Ok(Frame::data(d))));
            }
            match self.cut.as_mut() {
                None => Poll::Ready(None),
                Some(sleep) => match sleep.as_mut().poll(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(()) => {
                        self.cut = None;
                        Poll::Ready(Some(Err(std::io::Error::other(
                            "memcert mock: injected cut",
                        ))))
                    }
                },
            }
        }

        fn is_end_stream(&self) -> bool {
            self.data.is_none() && self.cut.is_none()
        }

        fn size_hint(&self) -> hyper::body::SizeHint {
            match self.exact_len {
                Some(n) => hyper::body::SizeHint::with_exact(n),
                None => hyper::body::SizeHint::default(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        let view = json!({"command": "view", "path": "/memories"});
        State {
            config: MockConfig::default(),
            stray: Vec::new(),
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
        post_with(st, body, "")
    }

    fn post_with(st: &mut State, body: Value, betas: &str) -> Reply {
        let body = body.to_string();
        let req = Request {
            path: "/prefix/s/0/v1/messages",
            body: body.as_bytes(),
            has_key: true,
            betas: betas.into(),
        };
        answer(st, &req)
    }

    fn first() -> Value {
        json!({"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]})
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
        let answers: Vec<(u16, &str)> = log
            .exchanges
            .iter()
            .map(|e| (e.status, e.answer.as_str()))
            .collect();
        assert_eq!(
            answers,
            [
                (200, "turn 1 (JSON)"),
                (200, "turn 2 (JSON)"),
                (200, "turn 2 (JSON)")
            ]
        );
        assert_eq!(
            log.exchanges[0].request["thread"],
            json!({"type": "create"})
        );
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
        st.config.threads = Threads::Refuse;
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
        for m in [
            MockApi::start(Threads::Accept).unwrap(),
            MockApi::start_listener(Threads::Accept).unwrap(),
        ] {
            let addr = m.uri().trim_start_matches("http://").to_owned();
            assert!(addr.starts_with("127.0.0.1:"), "{addr}");
            let open = TcpStream::connect(&addr).expect("the mock listens");
            drop(m);
            let deadline = Instant::now() + Duration::from_secs(5);
            while TcpStream::connect(&addr).is_ok() {
                assert!(Instant::now() < deadline, "{addr} still listens after drop");
                std::thread::sleep(Duration::from_millis(20));
            }
            drop(open);
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

    #[test]
    fn faults_parse_and_print_back() {
        for s in [
            "529@3",
            "500@2x3",
            "drop@2",
            "drop@1x2",
            "429@1",
            "truncate@4",
        ] {
            assert_eq!(s.parse::<Fault>().unwrap().to_string(), s);
        }
        assert_eq!(
            "529@3".parse::<Fault>(),
            Ok(Fault::Status {
                status: 529,
                turn: 3,
                times: 1
            })
        );
        assert_eq!(
            "drop@2x2".parse::<Fault>(),
            Ok(Fault::Drop { turn: 2, times: 2 })
        );
        assert_eq!(
            "200@1".parse::<Fault>().unwrap_err(),
            "bad fault \"200@1\": expected STATUS@TURN, drop@TURN or truncate@TURN, optionally xTIMES (e.g. 529@3, drop@2, 500@1x3); STATUS must be 400 to 599"
        );
        for bad in ["529", "200@1", "drop@0", "529@1x0", "cut@2", "529@x"] {
            let e = bad.parse::<Fault>().unwrap_err();
            assert!(e.starts_with(&format!("bad fault {bad:?}")), "{e}");
        }
    }

    #[test]
    fn a_status_fault_answers_its_turn_then_the_retry_is_served() {
        let mut st = state();
        st.config.faults = vec!["529@1x2".parse().unwrap()];
        for attempt in 1..=2 {
            let Reply::Fault(529, e) = post(&mut st, first()) else {
                panic!()
            };
            assert_eq!(e["error"]["type"], "overloaded_error");
            assert_eq!(
                st.sessions[0].log.faults.last().unwrap(),
                &format!("529 at turn 1 (attempt {attempt})")
            );
        }
        let Reply::Json(200, m) = post(&mut st, first()) else {
            panic!()
        };
        assert_eq!(m["id"], "msg_mc0_0");
        let log = &st.sessions[0].log;
        assert_eq!(log.attempts, BTreeMap::from([(0, 3)]));
        assert_eq!(log.served, [0]);
        assert!(
            log.malformed.is_empty(),
            "an injected fault is not malformed"
        );
        let r = Reply::Fault(529, json!({})).render();
        assert_eq!(
            r.headers,
            [
                ("x-should-retry".to_owned(), "true".to_owned()),
                ("retry-after-ms".to_owned(), "10".to_owned())
            ]
        );
        let r = Reply::Fault(400, json!({})).render();
        assert_eq!(
            r.headers,
            [("x-should-retry".to_owned(), "false".to_owned())]
        );
    }

    #[test]
    fn a_drop_fault_cuts_the_stream_after_its_first_delta() {
        let mut st = state();
        st.config.faults = vec!["drop@1".parse().unwrap()];
        let mut body = first();
        body["stream"] = json!(true);
        let Reply::Cut {
            sse: true,
            body: b,
            keep,
            abort: true,
        } = post(&mut st, body.clone())
        else {
            panic!()
        };
        let sent = &b[..keep];
        assert!(sent.ends_with("\n\n"), "{sent}");
        let names: Vec<&str> = sent
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta"
            ]
        );
        assert!(matches!(post(&mut st, body), Reply::Sse(_)));
        let Reply::Json(200, _) = post(&mut st, first()) else {
            panic!()
        };
        let mut st = state();
        st.config.faults = vec!["drop@1".parse().unwrap()];
        let Reply::Cut {
            sse: false,
            body,
            keep,
            abort: true,
        } = post(&mut st, first())
        else {
            panic!()
        };
        assert_eq!(keep, body.len() / 2);
        assert_eq!(
            st.sessions[0].log.faults,
            ["answer cut at turn 1 (attempt 1)"]
        );
    }

    #[test]
    fn a_truncated_answer_is_a_complete_body_that_stops_early() {
        let mut st = state();
        st.config.faults = vec!["truncate@1".parse().unwrap()];
        let mut body = first();
        body["stream"] = json!(true);
        let r = post(&mut st, body).render();
        assert_eq!(
            (r.status, r.content_type.as_str(), r.keep),
            (200, "text/event-stream", None)
        );
        let text = String::from_utf8(r.body).unwrap();
        assert!(
            text.ends_with("\n\n") && text.contains("input_json_delta"),
            "{text}"
        );
        assert!(!text.contains("message_stop"), "{text}");
        assert_eq!(
            st.sessions[0].log.faults,
            ["answer truncated at turn 1 (attempt 1)"]
        );
    }

    fn context(edits: Value) -> Value {
        let mut b = first();
        b["context_management"] = json!({ "edits": edits });
        b
    }

    fn context_findings(body: Value, betas: &str) -> Vec<(Verdict, String)> {
        let mut st = state();
        post_with(&mut st, body, betas);
        st.sessions[0]
            .log
            .context
            .iter()
            .map(|f| (f.verdict, f.detail.clone()))
            .collect()
    }

    #[test]
    fn context_management_is_checked_against_the_documented_rules() {
        let good = context(json!([
            {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}},
            {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 100000},
             "keep": {"type": "tool_uses", "value": 3}, "clear_at_least": {"type": "input_tokens", "value": 5000},
             "exclude_tools": ["memory"], "clear_tool_inputs": false}
        ]));
        assert_eq!(
            context_findings(good.clone(), "context-management-2025-06-27"),
            []
        );
        let mut st = state();
        let Reply::Json(200, m) = post_with(&mut st, good, "context-management-2025-06-27") else {
            panic!()
        };
        assert_eq!(
            m["context_management"],
            json!({"applied_edits": [
                {"type": "clear_thinking_20251015", "cleared_thinking_turns": 0, "cleared_input_tokens": 0},
                {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 0, "cleared_input_tokens": 0}]})
        );
        let bad = context(json!([
            {"type": "clear_tool_uses_20250919", "keep": {"type": "input_tokens", "value": 3}, "max": 1},
            {"type": "clear_thinking_20251015"},
            {"type": "clear_everything"}
        ]));
        let ns = Verdict::NonStrict;
        assert_eq!(
            context_findings(bad, "other-beta"),
            [
                (ns, "context_management is sent without the `anthropic-beta: context-management-2025-06-27` header".to_owned()),
                (ns, "context_management.edits[0] (clear_tool_uses_20250919): `keep` has the wrong shape: {\"type\":\"input_tokens\",\"value\":3}".to_owned()),
                (ns, "context_management.edits[0] (clear_tool_uses_20250919): unknown parameter `max`".to_owned()),
                (ns, "context_management.edits[1] (clear_thinking_20251015) comes after context_management.edits[0] (clear_tool_uses_20250919); it must be listed first".to_owned()),
                (ns, "context_management.edits[2]: unknown strategy type \"clear_everything\"".to_owned()),
                (Verdict::Info, "context_management.edits[0] (clear_tool_uses_20250919): `memory` is not in `exclude_tools`, so the agent's own memory calls can be cleared (the documented advice is to exclude it)".to_owned()),
            ]
        );
    }

    #[test]
    fn a_streamed_answer_reports_applied_edits_in_message_delta() {
        let mut st = state();
        let mut b =
            context(json!([{"type": "clear_tool_uses_20250919", "exclude_tools": ["memory"]}]));
        b["stream"] = json!(true);
        let Reply::Sse(text) = post_with(&mut st, b, "context-management-2025-06-27") else {
            panic!()
        };
        let data: Vec<Value> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect();
        assert_eq!(data[0]["message"].get("context_management"), None);
        let delta = data.iter().find(|d| d["type"] == "message_delta").unwrap();
        assert_eq!(
            delta["context_management"]["applied_edits"][0]["type"],
            "clear_tool_uses_20250919"
        );
    }

    /// One raw HTTP/1.1 request; the bytes until the server closes or `limit` passes.
    fn raw_post(uri: &str, body: &str) -> Vec<u8> {
        use std::io::{Read, Write};
        let addr = uri.trim_start_matches("http://");
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        write!(
            s,
            "POST /s/0/v1/messages HTTP/1.1\r\nhost: {addr}\r\nx-api-key: k\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        out
    }

    #[test]
    fn the_listener_serves_whole_answers_and_cuts_on_request() {
        let turns = state().sessions.remove(0).turns;
        let m = MockApi::start_listener(Threads::Accept).unwrap();
        m.add_session(turns.clone());
        let out = String::from_utf8(raw_post(&m.uri(), &first().to_string())).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains("content-type: application/json"), "{head}");
        let v: Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["content"][0]["id"], "toolu_mc0_0_0");

        let m = MockApi::start(MockConfig {
            threads: Threads::Accept,
            faults: vec!["drop@1".parse().unwrap()],
        })
        .unwrap();
        m.add_session(turns);
        let mut b = first();
        b["stream"] = json!(true);
        let out = String::from_utf8(raw_post(&m.uri(), &b.to_string())).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.contains("transfer-encoding: chunked"), "{head}");
        assert!(body.contains("event: content_block_delta"), "{body}");
        assert!(!body.contains("message_stop"), "{body}");
        assert!(
            !body.ends_with("0\r\n\r\n"),
            "the chunked body is never ended: {body}"
        );
        assert_eq!(m.log(0).faults, ["answer cut at turn 1 (attempt 1)"]);
    }
}
