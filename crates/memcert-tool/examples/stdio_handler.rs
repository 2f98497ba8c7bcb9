//! memcert's reference handler behind stdio protocol v1 (`docs/protocol.md`): a template for a
//! handler in Rust, and the target of the stdio benchmark.
//!
//! ```text
//! cargo build --release --example stdio_handler
//! memcert certify --stdio target/release/examples/stdio_handler
//! ```
//!
//! It answers `hello`, `reset` (reopening the reference handler over `memories_dir`), `call` and
//! `shutdown`, one JSON line per request, and never panics on bad input: a request it cannot read
//! gets `{"ok":false,"error":...}` and it keeps serving.

use std::io::{BufRead, Write};
use std::path::Path;

use memcert_tool::handler::reference::{Options, Reference};
use memcert_tool::handler::Handler;
use memcert_tool::text::Profile;
use serde_json::{json, Value};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut handler: Option<Reference> = None;
    let options = Options {
        fsync: false,
        ..Options::default()
    };
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let request: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                answer(
                    &mut out,
                    &json!({"ok": false, "error": format!("request is not JSON: {e}")}),
                );
                continue;
            }
        };
        let reply = match request["op"].as_str() {
            Some("hello") => {
                json!({"ok": true, "protocol": 1, "handler": "memcert reference (stdio example)"})
            }
            // A linked store root is not followed: every call is then refused (bug:B10).
            Some("reset") => match request["memories_dir"].as_str() {
                Some(dir) => {
                    match Reference::open_or_refuse(Path::new(dir), Profile::Docs, options) {
                        Ok(h) => {
                            handler = Some(h);
                            json!({"ok": true})
                        }
                        Err(e) => {
                            handler = None;
                            json!({"ok": false, "error": e.to_string()})
                        }
                    }
                }
                None => json!({"ok": false, "error": "reset needs \"memories_dir\""}),
            },
            Some("call") => {
                let id = request["id"].clone();
                match handler.as_mut() {
                    Some(h) => {
                        let r = h.apply(&request["input"]);
                        json!({"id": id, "content": r.content, "is_error": r.is_error})
                    }
                    None => {
                        json!({"id": id, "ok": false, "error": "no store: the last reset failed or none was sent"})
                    }
                }
            }
            Some("shutdown") => {
                answer(&mut out, &json!({"ok": true}));
                return;
            }
            _ => {
                json!({"ok": false, "error": "unknown op; expected hello, reset, call or shutdown"})
            }
        };
        answer(&mut out, &reply);
    }
}

fn answer(out: &mut impl Write, v: &Value) {
    // A closed stdout means memcert is gone: stop quietly.
    if writeln!(out, "{v}").and_then(|_| out.flush()).is_err() {
        std::process::exit(0);
    }
}
