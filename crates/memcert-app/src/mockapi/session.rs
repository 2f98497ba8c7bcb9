//! The per-conversation state machine: each request is routed to its session (or remembered as
//! stray), checked, and answered with the next turn: the first when the last message carries no
//! tool_result, else the one after the turn its tool_results answer. Threaded and full-history
//! requests are both served; with [`Threads::Refuse`] a threaded one is refused so the runner
//! falls back to full history. A fault due at the turn is delivered instead of the turn.

use serde_json::{Map, Value};

use super::capture;
use super::context::{check_context, context_applied, req_obj_context};
use super::faults::{self, Fault};
use super::wire::{self, api_error, bad, Reply};
use super::{MockConfig, ServedTurn, SessionLog, Threads, WireExchange};

/// One conversation: the turns it serves and what it saw.
pub(super) struct Session {
    pub(super) turns: Vec<ServedTurn>,
    pub(super) log: SessionLog,
}

/// Everything the mock's backends share.
#[derive(Default)]
pub(super) struct State {
    pub(super) config: MockConfig,
    pub(super) sessions: Vec<Session>,
    /// Requests that reached no session (`METHOD path`): a wrong base URL or another endpoint.
    pub(super) stray: Vec<String>,
    /// Request body bytes the sessions' exchanges keep, all together (at most
    /// [`super::MAX_HISTORY_BYTES`]).
    pub(super) kept_bytes: usize,
}

/// A request as both backends see it.
pub(super) struct Request<'a> {
    pub(super) path: &'a str,
    pub(super) body: &'a [u8],
    /// The body was over [`super::MAX_BODY_BYTES`] and was not read (`body` is then empty):
    /// its length, or the bytes seen before the limit stopped the read.
    pub(super) too_large: Option<u64>,
    /// The `content-type` header, empty when absent.
    pub(super) content_type: String,
    /// `x-api-key` or `authorization` is present.
    pub(super) has_key: bool,
    /// The `anthropic-beta` header values, joined with `,`.
    pub(super) betas: String,
}

impl Request<'_> {
    /// The `anthropic-beta` header names `name`.
    pub(super) fn beta(&self, name: &str) -> bool {
        self.betas.split(',').any(|b| b.trim() == name)
    }
}

/// Answer a request the mock does not serve with a 404 and remember it.
pub(super) fn stray(st: &mut State, method: &str, path: &str) -> Reply {
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

/// The session a path names (`.../s/<n>/v1/messages`), or the only one.
fn session_of(path: &str, sessions: usize) -> Option<usize> {
    let before = path.strip_suffix("/v1/messages")?;
    if let Some((_, n)) = before.rsplit_once("/s/") {
        return n.parse().ok().filter(|n| *n < sessions);
    }
    (sessions == 1).then_some(0)
}

/// Answer a `POST …/v1/messages` from its session, and log the exchange (and the request as
/// malformed when it gets an error it caused).
pub(super) fn answer(st: &mut State, req: &Request) -> Reply {
    let Some(n) = session_of(req.path, st.sessions.len()) else {
        return stray(st, "POST", req.path);
    };
    let session = &mut st.sessions[n];
    session.log.requests += 1;
    let reply = match req.too_large {
        Some(bytes) => wire::too_large(bytes),
        None => answer_session(session, n, &st.config, req).unwrap_or_else(|error| error),
    };
    if let Some(msg) = reply.malformed() {
        push_line(&mut session.log.malformed, msg);
    }
    let (status, answer) = reply.summary(session.log.served.last().copied());
    if session.log.exchanges.len() >= super::MAX_EXCHANGES {
        session.log.exchanges_dropped += 1;
        return reply;
    }
    let request = kept_request(&mut st.kept_bytes, req);
    st.sessions[n].log.exchanges.push(WireExchange {
        request,
        anthropic_beta: req.betas.clone(),
        status,
        answer,
    });
    reply
}

/// Add `line` to a log list of the session unless it holds [`super::MAX_LOG_LINES`] already.
pub(super) fn push_line(list: &mut Vec<String>, line: String) {
    if list.len() < super::MAX_LOG_LINES {
        list.push(line);
    }
}

/// The request body as an exchange keeps it: as JSON (or `{"unparsed": text}`) while the
/// bodies kept stay within [`super::MAX_HISTORY_BYTES`] (`kept` counts them), else
/// `{"not_kept": {"bytes": N, "sha256": hex}}` (`"sha256"` left out for a body not read).
fn kept_request(kept: &mut usize, req: &Request) -> Value {
    let len = req.body.len();
    if req.too_large.is_none() && *kept + len <= super::MAX_HISTORY_BYTES {
        *kept += len;
        return serde_json::from_slice(req.body).unwrap_or_else(
            |_| serde_json::json!({ "unparsed": String::from_utf8_lossy(req.body) }),
        );
    }
    match req.too_large {
        Some(bytes) => serde_json::json!({"not_kept": {"bytes": bytes}}),
        None => serde_json::json!({"not_kept": {
            "bytes": len,
            "sha256": memcert::certify::sha256_hex(req.body),
        }}),
    }
}

/// A step of answering: `Err` is the reply that ends the request early (an error).
type Step<T> = Result<T, Reply>;

/// Answer one request of session `n`: check the request, capture its tool_results, pick the
/// next turn, then deliver a fault due at that turn or serve the turn.
fn answer_session(
    session: &mut Session,
    n: usize,
    config: &MockConfig,
    req: &Request,
) -> Step<Reply> {
    let body = body_of(req)?;
    check_thread(&mut session.log, config.threads, &body)?;
    let stream = body.get("stream") == Some(&Value::Bool(true));
    session.log.streamed |= stream;
    let (first, last) = first_and_last_message(&mut session.log, &body)?;
    let next = pick_turn(session, n, first, last)?;
    let Some(turn) = session.turns.get(next) else {
        return Err(bad(
            "the conversation is over: there is no turn after the final text",
        ));
    };
    let attempt = count_attempt(&mut session.log, next);
    note_context(&mut session.log, &body, req);
    let message = || wire::message_json(n, next, turn, context_applied(&body));
    if let Some(fault) = faults::due(&config.faults, next + 1, attempt) {
        let log = &mut session.log;
        return Ok(deliver_fault(
            log,
            fault,
            next + 1,
            attempt,
            message,
            stream,
        ));
    }
    note_served(&mut session.log, next, turn);
    Ok(wire::whole(message(), stream))
}

/// The request body as a JSON object with the fields the Messages API requires: a 401 without
/// a credential; a 400 (`invalid_request_error`, as the API answers) for a content type other
/// than JSON, a body that is not a JSON object, or one without `model`, `max_tokens` or
/// `messages`.
fn body_of(req: &Request) -> Step<Map<String, Value>> {
    if !req.has_key {
        return Err(wire::no_credential());
    }
    if !is_json(&req.content_type) {
        let got = if req.content_type.is_empty() {
            "none".to_owned()
        } else {
            format!("{:?}", req.content_type)
        };
        return Err(bad(&format!(
            "the content type must be application/json, got {got}"
        )));
    }
    let Ok(Value::Object(req_obj)) = serde_json::from_slice::<Value>(req.body) else {
        return Err(bad("the body is not a JSON object"));
    };
    for field in ["model", "max_tokens", "messages"] {
        if req_obj.get(field).is_none_or(Value::is_null) {
            return Err(bad(&format!("{field}: Field required")));
        }
    }
    Ok(req_obj)
}

/// Whether a `content-type` value is JSON: `application/json`, parameters (`; charset=utf-8`)
/// and case aside.
fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
}

/// Note a threaded request, and refuse it when threads are refused.
fn check_thread(log: &mut SessionLog, threads: Threads, body: &Map<String, Value>) -> Step<()> {
    let thread = body.get("thread").filter(|t| !t.is_null() && **t != false);
    if thread.is_some() {
        log.threaded = true;
        if threads == Threads::Refuse {
            log.threads_refused += 1;
            return Err(wire::thread_refused());
        }
    }
    Ok(())
}

/// The first and last of the request's `messages`, the last the user's; a request re-sending
/// history is noted.
fn first_and_last_message<'a>(
    log: &mut SessionLog,
    body: &'a Map<String, Value>,
) -> Step<(&'a Value, &'a Value)> {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Err(bad("`messages` must be an array"));
    };
    log.full_history |= messages.len() > 1;
    let (Some(first), Some(last)) = (messages.first(), messages.last()) else {
        return Err(bad("`messages` is empty"));
    };
    if last["role"] != "user" {
        return Err(bad("the last message must have role `user`"));
    }
    Ok((first, last))
}

/// The turn (0-based) the request asks for: the first when the last message carries no
/// tool_result (the conversation's user message is noted), else the one after the turn its
/// tool_results answer (they are captured).
fn pick_turn(session: &mut Session, n: usize, first: &Value, last: &Value) -> Step<usize> {
    let blocks = capture::tool_result_blocks(last)?;
    if blocks.is_empty() {
        note_user(&mut session.log, first);
        return Ok(0);
    }
    let turn = capture::capture(session, n, &blocks)?;
    Ok(turn + 1)
}

/// Note the text of the conversation's first user message, once.
fn note_user(log: &mut SessionLog, first: &Value) {
    if log.user.is_none() {
        log.user = match &first["content"] {
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
}

/// Count one more request for turn `next` (0-based); how many there were, this one included.
fn count_attempt(log: &mut SessionLog, next: usize) -> usize {
    let a = log.attempts.entry(next).or_default();
    *a += 1;
    *a
}

/// Note each new finding about the request's `context_management`.
fn note_context(log: &mut SessionLog, body: &Map<String, Value>, req: &Request) {
    if let Some(c) = req_obj_context(body) {
        for f in check_context(c, req) {
            if !log.context.contains(&f) {
                log.context.push(f);
            }
        }
    }
}

/// Deliver `fault` at `turn` (from 1), noted with its attempt: its error status, or `message`
/// cut or truncated.
fn deliver_fault(
    log: &mut SessionLog,
    fault: Fault,
    turn: usize,
    attempt: usize,
    message: impl FnOnce() -> Value,
    stream: bool,
) -> Reply {
    match fault {
        Fault::Status { status, .. } => {
            log.faults
                .push(format!("{status} at turn {turn} (attempt {attempt})"));
            wire::injected_status(status, turn)
        }
        Fault::Drop { .. } | Fault::Truncate { .. } => {
            let abort = matches!(fault, Fault::Drop { .. });
            let what = if abort { "cut" } else { "truncated" };
            log.faults
                .push(format!("answer {what} at turn {turn} (attempt {attempt})"));
            wire::cut(&message(), stream, abort)
        }
    }
}

/// Note turn `next` (0-based) as served, and the conversation as finished at its final text.
fn note_served(log: &mut SessionLog, next: usize, turn: &ServedTurn) {
    log.served.push(next);
    if turn.tool_use.is_empty() {
        log.finished = true;
    }
}
