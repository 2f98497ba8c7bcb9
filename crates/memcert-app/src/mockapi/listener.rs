//! The minimal hyper listener: the same [`answer`] as the wiremock responder, plus cut bodies
//! (a [`super::Fault::Drop`]); also the front of `memcert record` ([`crate::record`]).
//!
//! A request body is read up to [`super::MAX_BODY_BYTES`] and no further: one whose
//! `content-length` says more is not read at all, a chunked one is dropped once it passes the
//! limit. The handler is then called with an empty body and a [`BodyTooLarge`] in the request's
//! extensions (the mock answers 413 `request_too_large`), and the connection is closed.

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

use super::session::{answer, stray, Request, State};
use super::wire::{api_error, Rendered};

/// Answers one request (head and whole body).
pub(crate) type Handler =
    Arc<dyn Fn(&hyper::http::request::Parts, &[u8]) -> Rendered + Send + Sync>;

/// A running listener; [`Listener::stop`] (or drop) closes the port and every connection.
pub(crate) struct Listener {
    pub(crate) addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// In a request's extensions: its body was over [`super::MAX_BODY_BYTES`] and was not read
/// (the handler gets an empty body); its length when `content-length` gave it, else the
/// limit plus one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyTooLarge(pub(crate) u64);

/// The 413 `request_too_large` for a request whose body was not read ([`BodyTooLarge`]), for
/// handlers other than the mock's (`memcert record` forwards nothing then).
pub(crate) fn too_large(t: BodyTooLarge) -> Rendered {
    super::wire::too_large(t.0).render()
}

/// The mock's handler: `POST …/v1/messages` answered from the shared state.
pub(super) fn mock(state: Arc<Mutex<State>>) -> Handler {
    Arc::new(move |parts, body| {
        let path = parts.uri.path();
        if parts.method != hyper::Method::POST || !path.ends_with("/v1/messages") {
            let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
            return stray(&mut st, parts.method.as_str(), path).render();
        }
        let request = Request {
            path,
            body,
            too_large: parts.extensions.get::<BodyTooLarge>().map(|t| t.0),
            content_type: parts
                .headers
                .get(hyper::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned(),
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
    let (mut parts, body) = req.into_parts();
    let (body, too_large) = read_body(&parts, body).await;
    if let Some(bytes) = too_large {
        parts.extensions.insert(BodyTooLarge(bytes));
    }
    let r = if blocking {
        let parts = parts.clone();
        match tokio::task::spawn_blocking(move || handler(&parts, &body)).await {
            Ok(r) => r,
            Err(_) => api_error(500, "api_error", "memcert: the handler failed").render(),
        }
    } else {
        handler(&parts, &body)
    };
    let mut b = hyper::Response::builder()
        .status(r.status)
        .header("content-type", &r.content_type);
    if too_large.is_some() {
        // The rest of the body is never read: the connection cannot be used again.
        b = b.header("connection", "close");
    }
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

/// The request body, read up to [`super::MAX_BODY_BYTES`]; `(empty, Some(bytes))` when it is
/// larger ([`BodyTooLarge`]), and empty when it cannot be read.
async fn read_body(parts: &hyper::http::request::Parts, body: Incoming) -> (Bytes, Option<u64>) {
    let limit = super::MAX_BODY_BYTES;
    let declared = parts
        .headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(n) = declared.filter(|n| *n > limit as u64) {
        return (Bytes::new(), Some(n));
    }
    match http_body_util::Limited::new(body, limit).collect().await {
        Ok(b) => (b.to_bytes(), None),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            (Bytes::new(), Some(limit as u64 + 1))
        }
        Err(_) => (Bytes::new(), None),
    }
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
