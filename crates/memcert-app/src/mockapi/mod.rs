//! A mock of the Messages API (`POST /v1/messages`) that replays recorded assistant turns to an
//! unmodified app and captures the `tool_result` blocks its memory handler sends back.
//!
//! [`MockApi::start`] binds `127.0.0.1` on an ephemeral port: a minimal hyper listener
//! ([`MockApi::start_listener`]), which reads a request body only up to [`MAX_BODY_BYTES`] and
//! can cut an answer midway ([`Fault::Drop`]). A wiremock server with a custom `Respond`er
//! calling the same request logic ([`MockApi::start_wiremock`]) is kept for the tests and the
//! benchmark that compare the two. Each conversation is a session ([`MockApi::add_session`]), reached at
//! [`MockApi::base_url`] (`http://127.0.0.1:P/s/<n>`, for `ANTHROPIC_BASE_URL`); any prefix
//! before `/v1/messages` is accepted, and with a single session the `/s/<n>` part may be left out.
//!
//! How a request is answered (facts in `docs/spec/wire.md`):
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
//! - a malformed request (no credential; a content type other than `application/json`; a body
//!   that is not a JSON object or lacks `model`, `max_tokens` or `messages`, as the real API
//!   requires; tool_results missing, extra or out of order, ids the mock never issued, a
//!   non-boolean `is_error`) gets a Messages-API-shaped 400 `invalid_request_error` (401 for no
//!   credential) with `x-should-retry: false`, and is recorded;
//! - a body over [`MAX_BODY_BYTES`] (32 MiB, the Messages API's own request limit) gets the
//!   API's 413 `{"type":"error","error":{"type":"request_too_large",...}}`, unread, and is
//!   recorded as malformed;
//! - injected [`Fault`]s (`--inject`): an error status for a turn's first requests (retryable
//!   ones with `retry-after-ms: 10`, so SDK retries are fast), an answer cut with the connection
//!   closed (`drop`), or one that ends early but cleanly (`truncate`);
//! - `context_management` is checked against the documented rules ([`ContextFinding`],
//!   `docs/spec/context-editing.md`) and answered with `applied_edits` (nothing cleared), in
//!   the message or, streamed, in `message_delta`.
//!
//! # Guarantees
//! - Listens on loopback only; dropping the [`MockApi`] stops the server and returns once its
//!   port refuses connections (at most 2 s for wiremock, which closes on its own thread).
//! - The first tool_result per id is the one kept; a later different one is noted.
//! - Bounded memory (the listener): one request body is held up to [`MAX_BODY_BYTES`]; a
//!   session keeps its first [`MAX_EXCHANGES`] exchanges ([`SessionLog::exchanges`], later ones
//!   only counted), their request bodies as JSON while all sessions together keep at most
//!   [`MAX_HISTORY_BYTES`] (then as `{"not_kept": {"bytes": N, "sha256": hex}}`), and at most
//!   [`MAX_LOG_LINES`] malformed-request messages and notes. What grows with the transcript (one
//!   tool_result per tool_use the mock issued, each up to a body) is kept whole: it is graded.
//!
//! # Non-guarantees
//! - A stream is sent as one body, not event by event with pauses; events spaced in time are
//!   not served.
//! - The wiremock backend ([`MockApi::start_wiremock`]) reads a whole body before the limit is
//!   applied: its memory is not bounded by [`MAX_BODY_BYTES`].
//! - A body over the limit is not read: a client still writing it may see the connection closed
//!   before it reads the 413.
//! - `tools`, `system` and the echoed history are not validated.
//!
//! # Layout
//! This module holds the public types and [`MockApi`]; `session` routes each request and runs
//! the per-conversation state machine, `capture` checks and keeps the tool_results, `faults`
//! parses `--inject` and says which request a fault hits, `context` checks
//! `context_management`, `wire` encodes answers (JSON, SSE, API-shaped errors), and the two
//! backends are `responder` (wiremock) and `listener` (hyper, also used by `memcert record`).

mod capture;
mod context;
mod faults;
pub(crate) mod listener;
mod responder;
mod session;
#[cfg(test)]
mod tests;
mod wire;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

use memcert::protocol::ToolResult;

pub use context::ContextFinding;
pub use faults::Fault;
pub(crate) use wire::Rendered;

use session::{Session, State};

/// The largest request body the mock reads, in bytes (32 MiB: the Messages API's own limit for
/// a request); a larger one gets 413 `request_too_large`.
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;
/// Exchanges a session keeps in [`SessionLog::exchanges`] (the `--wire-log`); later requests
/// are counted in [`SessionLog::requests`] and [`SessionLog::exchanges_dropped`].
pub const MAX_EXCHANGES: usize = 1000;
/// Request body bytes the exchanges of one mock keep as JSON, all sessions together (64 MiB);
/// a body past that is kept as its length and SHA-256.
pub const MAX_HISTORY_BYTES: usize = 64 * 1024 * 1024;
/// Malformed-request messages ([`SessionLog::malformed`]) and notes ([`SessionLog::notes`]) a
/// session keeps, each.
pub const MAX_LOG_LINES: usize = 100;

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

/// One request as the mock received it and what it answered (`certify --app --wire-log`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireExchange {
    /// The request body as JSON, or `{"unparsed": <text>}` when it is not JSON, or
    /// `{"not_kept": {"bytes": N, "sha256": hex}}` past [`MAX_HISTORY_BYTES`] (no `sha256` for a
    /// body over [`MAX_BODY_BYTES`], which is not read). Headers are not kept (no
    /// credentials), but for `anthropic-beta`.
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
    /// Requests answered with an error, with the message sent (the first [`MAX_LOG_LINES`]).
    pub malformed: Vec<String>,
    /// Threaded requests refused with `thread_unsupported_request`.
    pub threads_refused: usize,
    /// Injected faults delivered, one line each (`529 at turn 3`, `stream cut at turn 2`).
    pub faults: Vec<String>,
    /// Conformance notes that do not stop the conversation (`is_error: false`, a retry with a
    /// different result); the first [`MAX_LOG_LINES`].
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
    /// Every request and what it got, in order: the first [`MAX_EXCHANGES`].
    pub exchanges: Vec<WireExchange>,
    /// Requests past [`MAX_EXCHANGES`], not kept in `exchanges`.
    pub exchanges_dropped: usize,
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
    /// Start a mock on `127.0.0.1` with an ephemeral port: the hyper listener
    /// ([`MockApi::start_listener`]), whose memory is bounded (see the module docs).
    ///
    /// # Errors
    /// The runtime cannot be built or the port cannot be bound.
    pub fn start(config: impl Into<MockConfig>) -> std::io::Result<MockApi> {
        MockApi::start_listener(config)
    }

    /// Start the wiremock backend instead, for the tests and the benchmark that compare the
    /// backends; not for a [`Fault::Drop`] (wiremock sends whole bodies only), and it reads a
    /// whole request body before [`MAX_BODY_BYTES`] is applied.
    ///
    /// # Errors
    /// The runtime cannot be built or the port cannot be bound.
    pub fn start_wiremock(config: impl Into<MockConfig>) -> std::io::Result<MockApi> {
        let state = Arc::new(Mutex::new(State {
            config: config.into(),
            ..State::default()
        }));
        let (server, runtime) = responder::start(&state)?;
        Ok(MockApi {
            uri: server.uri(),
            backend: Backend::Wiremock {
                server: Some(server),
                _runtime: runtime,
            },
            state,
        })
    }

    /// Start the hyper listener (it serves everything wiremock does, cut streams, and reads a
    /// body only up to [`MAX_BODY_BYTES`]); the tests run both backends through the same
    /// conversations.
    ///
    /// # Errors
    /// The runtime cannot be built or the port cannot be bound.
    pub fn start_listener(config: impl Into<MockConfig>) -> std::io::Result<MockApi> {
        MockApi::start_listener_with(Arc::new(Mutex::new(State {
            config: config.into(),
            ..State::default()
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
