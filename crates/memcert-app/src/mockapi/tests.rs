//! The mock's tests: conversations driven through [`answer`] on a bare [`State`], and both
//! backends over real sockets.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use memcert::suite::verdict::Verdict;

use super::session::{answer, Request, Session, State};
use super::wire::Reply;
use super::{MockApi, MockConfig, ServedTurn, SessionLog, Threads};

fn state() -> State {
    let view = json!({"command": "view", "path": "/memories"});
    State {
        config: MockConfig::default(),
        stray: Vec::new(),
        kept_bytes: 0,
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
        too_large: None,
        content_type: "application/json".into(),
        has_key: true,
        betas: betas.into(),
    };
    answer(st, &req)
}

/// The error type and message of a JSON error reply.
fn error_of(r: &Reply) -> (u16, String, String) {
    let Reply::Json(status, e) = r else {
        panic!("{r:?}")
    };
    assert_eq!(e["type"], "error");
    (
        *status,
        e["error"]["type"].as_str().unwrap().to_owned(),
        e["error"]["message"].as_str().unwrap().to_owned(),
    )
}

// See: issue 13 ("the mock answers 200 to a request without model or max_tokens, or with a
// wrong content type").
#[test]
fn a_request_without_model_max_tokens_or_messages_or_not_json_gets_the_api_400() {
    let mut st = state();
    for field in ["model", "max_tokens", "messages"] {
        let mut body = first();
        body.as_object_mut().unwrap().remove(field);
        assert_eq!(
            error_of(&post(&mut st, body)),
            (
                400,
                "invalid_request_error".into(),
                format!("memcert mock: {field}: Field required")
            )
        );
    }
    for content_type in ["text/plain", "", "application/x-www-form-urlencoded"] {
        let body = first().to_string();
        let req = Request {
            path: "/s/0/v1/messages",
            body: body.as_bytes(),
            too_large: None,
            content_type: content_type.into(),
            has_key: true,
            betas: String::new(),
        };
        let (status, kind, message) = error_of(&answer(&mut st, &req));
        assert_eq!((status, kind.as_str()), (400, "invalid_request_error"));
        assert!(
            message.contains("the content type must be application/json"),
            "{message}"
        );
    }
    let body = first().to_string();
    let req = Request {
        path: "/s/0/v1/messages",
        body: body.as_bytes(),
        too_large: None,
        content_type: "Application/JSON; charset=utf-8".into(),
        has_key: true,
        betas: String::new(),
    };
    assert!(matches!(answer(&mut st, &req), Reply::Json(200, _)));
    assert_eq!(st.sessions[0].log.malformed.len(), 6);
}

// See: issue 13 ("the mock Messages API keeps every request body (40 x 10 MB plus one 100 MB
// body: 1.58 GB)").
#[test]
fn a_body_over_the_limit_gets_the_api_413_and_history_stays_bounded() {
    let mut st = state();
    let req = Request {
        path: "/s/0/v1/messages",
        body: &[],
        too_large: Some(100 << 20),
        content_type: "application/json".into(),
        has_key: true,
        betas: String::new(),
    };
    let (status, kind, message) = error_of(&answer(&mut st, &req));
    assert_eq!((status, kind.as_str()), (413, "request_too_large"));
    assert!(message.contains("104857600 bytes"), "{message}");
    let log = &st.sessions[0].log;
    assert_eq!(log.malformed.len(), 1);
    assert_eq!(
        log.exchanges[0].request,
        json!({"not_kept": {"bytes": 104857600}})
    );
    // Past the history budget, a body is kept as its length and SHA-256.
    st.kept_bytes = super::MAX_HISTORY_BYTES - 10;
    let body = first().to_string();
    assert!(matches!(post(&mut st, first()), Reply::Json(200, _)));
    assert_eq!(
        st.sessions[0].log.exchanges[1].request,
        json!({"not_kept": {"bytes": body.len(), "sha256": memcert::certify::sha256_hex(body.as_bytes())}})
    );
    // The first MAX_EXCHANGES exchanges and MAX_LOG_LINES messages are kept, the rest counted.
    st.kept_bytes = 0;
    let mut bad = first();
    bad.as_object_mut().unwrap().remove("model");
    for _ in 0..super::MAX_EXCHANGES + 5 {
        post(&mut st, bad.clone());
    }
    let log = &st.sessions[0].log;
    assert_eq!(log.requests, super::MAX_EXCHANGES + 7);
    assert_eq!(log.exchanges.len(), super::MAX_EXCHANGES);
    assert_eq!(log.exchanges_dropped, 7);
    assert_eq!(log.malformed.len(), super::MAX_LOG_LINES);
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
    let Reply::Json(400, e) = post(&mut st, results(&["toolu_mc0_0_0", "toolu_mc0_0_1"])) else {
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
        MockApi::start_wiremock(Threads::Accept).unwrap(),
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
    let body = json!({"model": "m", "max_tokens": 1, "stream": true, "messages": [{"role": "user", "content": "hi"}]});
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
    let mut b = context(json!([{"type": "clear_tool_uses_20250919", "exclude_tools": ["memory"]}]));
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

/// The status line the listener answers to a request head that declares `content-length:
/// declared`, followed by `body` (chunked when `declared` is `None`, in 1 MiB chunks until the
/// server stops reading).
fn status_for(uri: &str, declared: Option<u64>, body: usize) -> String {
    use std::io::{Read, Write};
    let addr = uri.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let length = match declared {
        Some(n) => format!("content-length: {n}"),
        None => "transfer-encoding: chunked".into(),
    };
    write!(
        s,
        "POST /s/0/v1/messages HTTP/1.1\r\nhost: {addr}\r\nx-api-key: k\r\ncontent-type: application/json\r\n{length}\r\n\r\n"
    )
    .unwrap();
    let chunk = vec![b' '; 1 << 20];
    let mut sent = 0;
    while sent < body {
        let ok = match declared {
            Some(_) => s.write_all(&chunk),
            None => write!(s, "{:x}\r\n", chunk.len())
                .and_then(|()| s.write_all(&chunk))
                .and_then(|()| s.write_all(b"\r\n")),
        };
        if ok.is_err() {
            break;
        }
        sent += chunk.len();
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    text.lines().next().unwrap_or("").to_owned()
}

// See: issue 13 (a 100 MB body read whole by the mock).
#[test]
fn the_listener_refuses_a_body_over_the_limit_without_reading_it() {
    let m = MockApi::start(Threads::Accept).unwrap();
    m.add_session(state().sessions.remove(0).turns);
    // Declared too large: answered at once, nothing read.
    let declared = super::MAX_BODY_BYTES as u64 + 1;
    assert_eq!(
        status_for(&m.uri(), Some(declared), 0),
        "HTTP/1.1 413 Payload Too Large"
    );
    // Chunked: read up to the limit, then refused.
    assert_eq!(
        status_for(&m.uri(), None, super::MAX_BODY_BYTES + (4 << 20)),
        "HTTP/1.1 413 Payload Too Large"
    );
    let log = m.log(0);
    assert_eq!(log.malformed.len(), 2, "{:?}", log.malformed);
    assert!(
        log.malformed[0].contains(&format!("{declared} bytes")),
        "{:?}",
        log.malformed
    );
}
