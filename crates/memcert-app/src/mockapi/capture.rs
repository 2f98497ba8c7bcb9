//! The tool_results a request carries: their ids checked against the mock's own (every
//! tool_use of the turn they answer, in order), each parsed into a [`Captured`], the first per
//! id kept and a differing repeat noted.

use serde_json::Value;

use memcert::protocol::{Content, ToolResult};

use super::session::{push_line, Session};
use super::wire::{bad, Reply};
use super::{tool_use_id, Captured, ServedTurn, SessionLog};

/// A tool_use id the mock issued, with the turn and index it names.
type IssuedId = (String, usize, usize);

/// The tool_result blocks of the last message; none when its content is a string.
pub(super) fn tool_result_blocks(last: &Value) -> Result<Vec<&Value>, Reply> {
    match &last["content"] {
        Value::Array(a) => Ok(a.iter().filter(|b| b["type"] == "tool_result").collect()),
        Value::String(_) => Ok(Vec::new()),
        _ => Err(bad(
            "the last message's `content` must be a string or an array",
        )),
    }
}

/// Capture the tool_result `blocks` (not empty) into session `n`'s log; returns the turn
/// (0-based) they answer.
pub(super) fn capture(session: &mut Session, n: usize, blocks: &[&Value]) -> Result<usize, Reply> {
    let ids = issued_ids(n, blocks)?;
    let turn = ids[0].1;
    check_answers_turn(&session.turns, n, turn, &ids)?;
    let results = parse_results(&mut session.log, turn, blocks, &ids)?;
    keep_first(&mut session.log, results);
    Ok(turn)
}

fn parse_tool_use_id(id: &str) -> Option<(usize, usize, usize)> {
    let mut it = id.strip_prefix("toolu_mc")?.split('_');
    let s = it.next()?.parse().ok()?;
    let t = it.next()?.parse().ok()?;
    let k = it.next()?.parse().ok()?;
    it.next().is_none().then_some((s, t, k))
}

/// Each block's `tool_use_id`, which must be one the mock issued in session `n`.
fn issued_ids(n: usize, blocks: &[&Value]) -> Result<Vec<IssuedId>, Reply> {
    let mut ids = Vec::new();
    for b in blocks {
        let id = b["tool_use_id"].as_str().unwrap_or("");
        match parse_tool_use_id(id) {
            Some((s, t, k)) if s == n => ids.push((id.to_owned(), t, k)),
            _ => {
                return Err(bad(&format!(
                    "tool_use_id {id:?} was not issued in this conversation"
                )))
            }
        }
    }
    Ok(ids)
}

/// The ids answer every tool_use of `turn`, in order.
fn check_answers_turn(
    turns: &[ServedTurn],
    n: usize,
    turn: usize,
    ids: &[IssuedId],
) -> Result<(), Reply> {
    let expected: Vec<String> = match turns.get(turn) {
        Some(t) => (0..t.tool_use.len())
            .map(|k| tool_use_id(n, turn, k))
            .collect(),
        None => Vec::new(),
    };
    let got: Vec<String> = ids.iter().map(|(id, _, _)| id.clone()).collect();
    if got != expected {
        return Err(bad(&format!(
            "the last message must answer every tool_use of the previous turn, in order: expected tool_result blocks for {expected:?}, got {got:?}"
        )));
    }
    Ok(())
}

/// Each block as a [`Captured`] of `turn`, with its id.
fn parse_results(
    log: &mut SessionLog,
    turn: usize,
    blocks: &[&Value],
    ids: &[IssuedId],
) -> Result<Vec<(String, Captured)>, Reply> {
    let mut results = Vec::new();
    for (b, (id, _, k)) in blocks.iter().zip(ids) {
        let is_error = is_error_of(log, id, b)?;
        let content = content_of(id, b)?;
        results.push((
            id.clone(),
            Captured {
                turn,
                index: *k,
                result: ToolResult { content, is_error },
            },
        ));
    }
    Ok(results)
}

/// A block's `is_error`: absent or null is `false`, a boolean is itself (an explicit `false` is
/// noted, once), anything else is malformed.
fn is_error_of(log: &mut SessionLog, id: &str, b: &Value) -> Result<bool, Reply> {
    match b.get("is_error") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(true)) => Ok(true),
        Some(Value::Bool(false)) => {
            let note = format!(
                "{id}: `is_error: false` sent on a success (the SDK runners leave the key out)"
            );
            if !log.notes.contains(&note) {
                push_line(&mut log.notes, note);
            }
            Ok(false)
        }
        Some(other) => Err(bad(&format!(
            "{id}: `is_error` must be a boolean, got {other}"
        ))),
    }
}

/// A block's `content`: absent or null is empty text.
fn content_of(id: &str, b: &Value) -> Result<Content, Reply> {
    match b.get("content") {
        None | Some(Value::Null) => Ok(Content::Text(String::new())),
        Some(c) => serde_json::from_value::<Content>(c.clone())
            .map_err(|e| bad(&format!("{id}: `content`: {e}"))),
    }
}

/// Keep the first result per id; a repeat that differs is noted.
fn keep_first(log: &mut SessionLog, results: Vec<(String, Captured)>) {
    for (id, c) in results {
        match log.results.get(&id) {
            Some(old) if old.result != c.result => push_line(
                &mut log.notes,
                format!(
                    "{id}: a repeated request carried a different tool_result; the first is kept"
                ),
            ),
            Some(_) => {}
            None => {
                log.results.insert(id, c);
            }
        }
    }
}
