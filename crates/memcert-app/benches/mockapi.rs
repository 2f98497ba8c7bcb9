//! The mock Messages API on loopback: round trips per second and the latency one turn adds,
//! for both backends (wiremock, and the hyper listener that memcert uses), JSON and SSE.
//!
//! A round trip is one `POST /v1/messages` answered with one assistant turn: the client
//! alternates the conversation's first request (answered with a memory tool_use) and the
//! request carrying its tool_result (answered with the final text), on one keep-alive
//! connection, as an SDK does. Latency is the time from the first byte sent to the last byte
//! received, per round trip; the median is what the mock adds to each turn of an app's run.
//!
//! `cargo bench --bench mockapi [-- ROUND_TRIPS]` (default 20,000 per configuration); prints
//! figures, not run in CI. Goal (issue 5): at least 2,000 round trips/s and under 1 ms added
//! latency per turn at the median.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use memcert_app::mockapi::{tool_use_id, MockApi, ServedTurn, Threads};
use serde_json::json;

/// Send one request and read one response (Content-Length framed); the response body.
fn round_trip(w: &mut TcpStream, r: &mut BufReader<TcpStream>, head: &str, body: &str) -> Vec<u8> {
    w.write_all(head.as_bytes()).unwrap();
    w.write_all(body.as_bytes()).unwrap();
    let mut len = None;
    let mut line = String::new();
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        let l = line.to_ascii_lowercase();
        if let Some(v) = l.strip_prefix("content-length:") {
            len = Some(v.trim().parse::<usize>().unwrap());
        }
        assert!(
            !l.starts_with("http/1.1") || l.starts_with("http/1.1 200"),
            "{line}"
        );
    }
    let mut out = vec![0; len.expect("a Content-Length")];
    r.read_exact(&mut out).unwrap();
    out
}

fn run(mock: &MockApi, stream: bool, n: usize) -> (f64, Vec<Duration>) {
    let session = mock.add_session(vec![
        ServedTurn {
            text: Some("Checking.".into()),
            tool_use: vec![(
                "memory".into(),
                json!({"command": "view", "path": "/memories"}),
            )],
        },
        ServedTurn {
            text: Some("Done.".into()),
            tool_use: vec![],
        },
    ]);
    let addr = mock.uri().trim_start_matches("http://").to_owned();
    let path = format!("/s/{session}/v1/messages");
    let start = json!({"model": "m", "max_tokens": 1024, "stream": stream,
        "tools": [{"type": "memory_20250818", "name": "memory"}],
        "messages": [{"role": "user", "content": "Remember that I like coffee."}]})
    .to_string();
    let result = json!({"model": "m", "max_tokens": 1024, "stream": stream,
        "thread": {"type": "continue", "previous_message_id": format!("msg_mc{session}_0")},
        "messages": [{"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": tool_use_id(session, 0, 0),
            "content": "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories"}]}]})
    .to_string();
    let head = |body: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nhost: {addr}\r\nx-api-key: k\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
    };
    let (h1, h2) = (head(&start), head(&result));
    let mut w = TcpStream::connect(&addr).unwrap();
    w.set_nodelay(true).unwrap();
    let mut r = BufReader::new(w.try_clone().unwrap());
    // Warm up.
    for _ in 0..200 {
        round_trip(&mut w, &mut r, &h1, &start);
    }
    let mut lat = Vec::with_capacity(n);
    let t0 = Instant::now();
    for i in 0..n {
        let t = Instant::now();
        let body = if i % 2 == 0 {
            round_trip(&mut w, &mut r, &h1, &start)
        } else {
            round_trip(&mut w, &mut r, &h2, &result)
        };
        lat.push(t.elapsed());
        assert!(!body.is_empty());
    }
    let rate = n as f64 / t0.elapsed().as_secs_f64();
    lat.sort();
    (rate, lat)
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20_000);
    println!("mock Messages API, loopback, one keep-alive connection, {n} round trips each");
    println!(
        "{:<10} {:<6} {:>14} {:>12} {:>12} {:>12}",
        "backend", "body", "round trips/s", "median", "p90", "p99"
    );
    for backend in ["wiremock", "listener"] {
        for stream in [false, true] {
            let mock = if backend == "wiremock" {
                MockApi::start_wiremock(Threads::Accept).unwrap()
            } else {
                MockApi::start_listener(Threads::Accept).unwrap()
            };
            let (rate, lat) = run(&mock, stream, n);
            let q = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)];
            println!(
                "{:<10} {:<6} {:>14.0} {:>12?} {:>12?} {:>12?}",
                backend,
                if stream { "SSE" } else { "JSON" },
                rate,
                q(0.5),
                q(0.9),
                q(0.99)
            );
        }
    }
}
