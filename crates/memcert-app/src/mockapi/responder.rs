//! The wiremock backend: a server on its own runtime whose responders hand each request to the
//! same [`answer`] as the hyper listener, and answer anything else as stray.

use std::sync::{Arc, Mutex};

use super::session::{answer, stray, Request, State};

/// Start a wiremock server on `127.0.0.1` serving `state`, on a runtime of its own; the
/// server must be dropped before the runtime.
pub(super) fn start(
    state: &Arc<Mutex<State>>,
) -> std::io::Result<(wiremock::MockServer, tokio::runtime::Runtime)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let responder = Responder(Arc::clone(state));
    let stray_state = Arc::clone(state);
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
        // Everything else: a 404 that is remembered ([`super::MockApi::stray`]).
        wiremock::Mock::given(wiremock::matchers::any())
            .respond_with(StrayResponder(Arc::clone(&stray_state)))
            .with_priority(10)
            .mount(&server)
            .await;
        server
    });
    Ok((server, runtime))
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
        // wiremock has read the whole body already: the limit is applied, but not to memory
        // (`MockApi::start_wiremock`).
        let too_large =
            (request.body.len() > super::MAX_BODY_BYTES).then_some(request.body.len() as u64);
        let req = Request {
            path: request.url.path(),
            body: if too_large.is_some() {
                &[]
            } else {
                &request.body
            },
            too_large,
            content_type: header("content-type"),
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
