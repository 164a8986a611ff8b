//! Accepting connections: caps, timers, graceful shutdown.
//!
//! axum's own `serve` has no connection cap and no header timer, so the
//! server runs its own accept loop over hyper's HTTP/1.1 connection (with
//! upgrades, for WebSockets):
//!
//! - A global cap (`--max-connections`) and a per-IP cap
//!   (`--max-connections-per-ip`, by peer address; trusted proxies are
//!   exempt) are enforced at accept. An excess connection gets a one-shot
//!   answer written without waiting (503 `unavailable` or 429
//!   `rate_limited`, in the contract's error shape) and is closed at once:
//!   it costs no task, no buffer and no file descriptor beyond that moment.
//! - Two waiting timers ([`crate::http::timers`]): the header timer
//!   (`--header-timeout-ms`) closes a connection that does not finish
//!   sending a request's headers in time (or sends nothing at all after
//!   connecting), so a slowloris client cannot hold descriptors; the
//!   keep-alive idle timer (`--keepalive-idle-ms`) closes a connection
//!   that sends no new request after a response. Bodies have their own
//!   timer ([`crate::http::body`]), and answers the request timer
//!   ([`limit_time`]).
//! - On shutdown the loop stops accepting, asks every connection to close
//!   after its current request, and waits for them, at most
//!   [`SHUTDOWN_GRACE`]: a client that stopped reading or sending cannot
//!   hold the shutdown.
//! - With `--tls-cert` ([`crate::http::tls`]) the same loop serves HTTPS: the
//!   accepted socket, already counted and timed, is wrapped in TLS by the
//!   connection's task. The handshake runs under the header timer (a
//!   client that connects owes a request, and the handshake is its first
//!   part), so a client that trickles its handshake holds a place no
//!   longer than one that trickles its headers. A plain-HTTP request sent
//!   to the HTTPS port gets a plain 400 `bad_request` it can read, not a
//!   TLS alert; a connection over the caps is closed without an answer
//!   (answering would take a handshake: the work a full server must not
//!   take on).

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::http::client_ip::{client_key, TrustedProxies};
use crate::http::error::ApiError;
use crate::http::rate_limit::Connection;
use crate::http::timers::{ConnectionTimers, ServedBody};
use crate::util::sleep_until_opt;

/// hyper's read and write buffer limit per connection: room for the
/// largest head [`crate::http::head`] answers itself (8 KiB of target and
/// 32 KiB of headers) and for a few NDJSON lines.
const HYPER_MAX_BUF: usize = 64 * 1024;

/// The limits the accept loop enforces.
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    pub max_connections: usize,
    pub max_connections_per_ip: usize,
    pub header_timeout: Duration,
    /// How long a connection may wait between requests.
    pub keepalive_idle: Duration,
    /// Exempt from the per-IP cap: one proxy carries many clients.
    pub trusted: TrustedProxies,
    /// How long shutdown waits for open connections (`--shutdown-grace-ms`,
    /// default [`SHUTDOWN_GRACE`]).
    pub shutdown_grace: Duration,
    /// How long a part of a response may wait for the client to take it
    /// (`--ws-write-timeout-ms`).
    pub write_timeout: Duration,
    /// Each connection's kernel send buffer (`--send-buffer-bytes`; `None`:
    /// the kernel's own).
    pub send_buffer: Option<usize>,
}

/// Open connections, in total and by client key.
#[derive(Debug, Default)]
struct OpenConnections {
    total: usize,
    by_client: HashMap<IpAddr, usize>,
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    ServerFull,
    ClientFull,
}

/// A counted connection; dropping it gives its place back.
struct Admitted {
    open: Arc<Mutex<OpenConnections>>,
    client: Option<IpAddr>,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = lock(&self.open);
        open.total = open.total.saturating_sub(1);
        if let Some(client) = self.client {
            if let Some(count) = open.by_client.get_mut(&client) {
                *count -= 1;
                if *count == 0 {
                    open.by_client.remove(&client);
                }
            }
        }
    }
}

fn lock(open: &Mutex<OpenConnections>) -> std::sync::MutexGuard<'_, OpenConnections> {
    // Counters only, changed in one step: a poisoned lock still holds them.
    open.lock().unwrap_or_else(PoisonError::into_inner)
}

fn admit(
    open: &Arc<Mutex<OpenConnections>>,
    limits: &ConnectionLimits,
    peer: IpAddr,
) -> Result<Admitted, Refusal> {
    let mut counts = lock(open);
    if counts.total >= limits.max_connections {
        return Err(Refusal::ServerFull);
    }
    let client = (!limits.trusted.contains(peer)).then(|| client_key(peer));
    if let Some(client) = client {
        let count = counts.by_client.entry(client).or_default();
        if *count >= limits.max_connections_per_ip {
            return Err(Refusal::ClientFull);
        }
        *count += 1;
    }
    counts.total += 1;
    Ok(Admitted {
        open: open.clone(),
        client,
    })
}

/// The whole answer to a refused connection, written in one go.
fn refusal_bytes(refusal: Refusal) -> Vec<u8> {
    let (error, extra) = match refusal {
        Refusal::ServerFull => (
            ApiError::Overloaded("the server has too many connections: try again later".into()),
            "",
        ),
        Refusal::ClientFull => (ApiError::RateLimited, "Retry-After: 1\r\n"),
    };
    error_bytes(&error, extra)
}

/// A whole HTTP/1.1 answer carrying `error` in the contract's shape, with
/// the `extra` header lines, that closes the connection.
fn error_bytes(error: &ApiError, extra: &str) -> Vec<u8> {
    let body = serde_json::to_vec(&error.body()).unwrap_or_default();
    let status = error.status();
    let mut bytes = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(&body);
    bytes
}

/// Answers and closes a refused connection without waiting for anything.
/// The request bytes already received are read first (a few KiB at most):
/// closing a socket with unread input resets it, and the reset can reach
/// the client before our answer does. Over TLS the connection is only
/// closed: the answer would need a handshake first.
fn refuse(stream: TcpStream, refusal: Refusal, tls: bool) {
    if tls {
        drop(stream);
        return;
    }
    let mut scratch = [0u8; 4096];
    for _ in 0..4 {
        match stream.try_read(&mut scratch) {
            Ok(n) if n > 0 => continue,
            _ => break,
        }
    }
    // Best effort: a full socket buffer or a client already gone just gets
    // the close.
    let _ = stream.try_write(&refusal_bytes(refusal));
    drop(stream);
}

/// How long connections get, once shutdown begins, to finish the request
/// they are serving before they are closed.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` until `shutdown` completes; then stops
/// accepting, lets every connection finish its current request (hyper's
/// graceful close) and returns when they are all closed, or after
/// [`SHUTDOWN_GRACE`]. With `tls`, every connection speaks HTTPS.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    tls: Option<TlsAcceptor>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let open = Arc::new(Mutex::new(OpenConnections::default()));
    let (stopping_tx, stopping_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of descriptors or a connection reset before we
                    // took it: pause a moment (descriptors come back as
                    // connections close) rather than spin.
                    tracing::warn!(%err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            // Reap finished connections so the set holds only open ones.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            () = &mut shutdown => break,
        };
        match admit(&open, &limits, remote.ip()) {
            Ok(admitted) => {
                let timers = ConnectionTimers::new(
                    limits.header_timeout,
                    limits.keepalive_idle,
                    limits.write_timeout,
                );
                let stream = CountedStream {
                    inner: stream,
                    _admitted: admitted,
                    timers: timers.clone(),
                };
                connections.spawn(serve_connection(
                    stream,
                    remote,
                    router.clone(),
                    timers,
                    stopping_rx.clone(),
                    tls.clone(),
                    limits.send_buffer,
                ));
            }
            Err(refusal) => {
                tracing::debug!(%remote, ?refusal, "connection refused");
                refuse(stream, refusal, tls.is_some());
            }
        }
    }
    drop(listener);
    // Every connection finishes its current request and closes; one that
    // cannot (a client that stopped reading or sending) is cut after the
    // grace period, so shutdown never waits on a client.
    stopping_tx.send_replace(true);
    let drained = tokio::time::timeout(limits.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            connections = connections.len(),
            "connections still open after the shutdown grace period: closed"
        );
        connections.shutdown().await;
    }
}

/// A socket that holds its place in the connection counts until it is
/// closed: an upgraded WebSocket keeps it after hyper lets go. It tells the
/// connection's timers when bytes arrive.
struct CountedStream {
    inner: TcpStream,
    _admitted: Admitted,
    timers: Arc<ConnectionTimers>,
}

impl AsyncRead for CountedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.timers.on_read();
        }
        polled
    }
}

impl AsyncWrite for CountedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

async fn serve_connection(
    stream: CountedStream,
    remote: SocketAddr,
    router: Router,
    timers: Arc<ConnectionTimers>,
    mut stopping: watch::Receiver<bool>,
    tls: Option<TlsAcceptor>,
    send_buffer: Option<usize>,
) {
    if let Err(err) = stream.inner.set_nodelay(true) {
        tracing::debug!(%err, "TCP_NODELAY");
    }
    if let Some(bytes) = send_buffer {
        if let Err(err) = socket2::SockRef::from(&stream.inner).set_send_buffer_size(bytes) {
            tracing::debug!(%err, "SO_SNDBUF");
        }
    }
    match tls {
        None => serve_http(stream, remote, router, timers, stopping).await,
        Some(acceptor) => {
            if let Some(stream) = handshake(acceptor, stream, remote, &timers, &mut stopping).await
            {
                serve_http(stream, remote, router, timers, stopping).await;
            }
        }
    }
}

/// The TLS handshake of an accepted connection, within its header timer
/// (which runs from the accept and does not move until a request's head
/// is complete); `None` when the connection is done with.
async fn handshake(
    acceptor: TlsAcceptor,
    stream: CountedStream,
    remote: SocketAddr,
    timers: &ConnectionTimers,
    stopping: &mut watch::Receiver<bool>,
) -> Option<tokio_rustls::server::TlsStream<CountedStream>> {
    let deadline = timers.deadline();
    let work = async move {
        // A TLS client opens with a handshake record (byte 0x16); an HTTP
        // request opens with its method's letters.
        let mut first = [0u8; 1];
        match stream.inner.peek(&mut first).await {
            Ok(0) | Err(_) => return None,
            Ok(_) if first[0].is_ascii_alphabetic() => {
                tracing::debug!(%remote, "plain HTTP on the HTTPS port");
                answer_plain_http(stream).await;
                return None;
            }
            Ok(_) => {}
        }
        match acceptor.accept(stream).await {
            Ok(stream) => Some(stream),
            Err(err) => {
                tracing::debug!(%remote, %err, "TLS handshake failed");
                None
            }
        }
    };
    tokio::select! {
        done = work => done,
        () = sleep_until_opt(deadline) => {
            tracing::debug!(%remote, "no TLS handshake within the header timer: closed");
            None
        }
        // Shutdown began (or the loop is gone): no request was taken yet,
        // so there is nothing to finish.
        _ = stopping.wait_for(|stop| *stop) => None,
    }
}

/// Tells a plain-HTTP client at the HTTPS port, in plain HTTP, to use
/// https://, and closes. Its request head (what has come of it, at most
/// 8 KiB) is read first: closing a socket with unread input resets it, and
/// the reset can overtake the answer.
async fn answer_plain_http(mut stream: CountedStream) {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while head.len() < 8192 && !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let error = ApiError::BadRequest("this port speaks HTTPS: use https:// (and wss://)".into());
    // Best effort: a client already gone just gets the close.
    let _ = stream.write_all(&error_bytes(&error, "")).await;
    let _ = stream.shutdown().await;
}

/// Serves HTTP/1.1 (with upgrades) on an accepted connection, plain or
/// TLS, until it closes, its timers run out, or shutdown closes it after
/// its current request.
async fn serve_http<S>(
    stream: S,
    remote: SocketAddr,
    router: Router,
    timers: Arc<ConnectionTimers>,
    mut stopping: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let connection = Connection { remote };
    let served_by = timers.clone();
    let service = tower::service_fn(move |request: hyper::Request<Incoming>| {
        // hyper calls the service once a request's head is complete.
        let served = served_by.serving();
        let mut request = request.map(Body::new);
        request
            .extensions_mut()
            .insert(ConnectInfo(connection.clone()));
        let answer = router.clone().oneshot(request);
        async move {
            let response = answer.await?;
            Ok::<_, std::convert::Infallible>(response.map(|body| ServedBody::wrap(body, served)))
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    // Our own timers replace hyper's header timer, which would also run
    // while the connection waits idle between requests.
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(None)
        .max_headers(crate::http::head::HYPER_MAX_HEADERS)
        // Also what hyper buffers of a response before it waits for the
        // socket: a client that stops reading holds at most this (and the
        // kernel's send buffer) until the write timer closes it.
        .max_buf_size(HYPER_MAX_BUF)
        .keep_alive(true);
    let conn = builder
        .serve_connection(TokioIo::new(stream), TowerToHyperService::new(service))
        .with_upgrades();
    let mut conn = std::pin::pin!(conn);
    let mut asked_to_stop = false;
    loop {
        let deadline = timers.deadline();
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(err) = result {
                    tracing::debug!(%remote, %err, "connection ended with an error");
                }
                return;
            }
            // The phase moved: read the new deadline.
            () = timers.changed() => {}
            () = sleep_until_opt(deadline) => {
                if let Some(expired) = timers.expired(Instant::now()) {
                    // Between requests or in a head, dropping the
                    // connection loses nothing; a response the client
                    // stopped taking (the write timer) is given up.
                    tracing::debug!(%remote, ?expired, "connection timer ran out: closed");
                    return;
                }
            }
            changed = stopping.wait_for(|stop| *stop), if !asked_to_stop => {
                // Either shutdown began or the loop is gone: close after the
                // current request either way.
                let _ = changed.map(|_| ());
                asked_to_stop = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// How long a request may take to be answered (`--request-timeout-ms`).
#[derive(Debug, Clone, Copy)]
pub struct RequestTimeout(pub Duration);

/// Middleware: a request (its body already read) must be answered within
/// the [`RequestTimeout`], or it gets 503 `unavailable`. Streams and
/// WebSockets are not cut: the timer covers producing the response head,
/// not the body that follows.
pub async fn limit_time(
    State(RequestTimeout(limit)): State<RequestTimeout>,
    request: Request,
    next: Next,
) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::Overloaded(format!(
            "the server could not answer within {} ms: try again",
            limit.as_millis()
        ))
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(total: usize, per_ip: usize) -> ConnectionLimits {
        ConnectionLimits {
            max_connections: total,
            max_connections_per_ip: per_ip,
            header_timeout: Duration::from_secs(1),
            keepalive_idle: Duration::from_secs(1),
            trusted: TrustedProxies::new(vec!["10.0.0.1".parse().unwrap()]),
            shutdown_grace: SHUTDOWN_GRACE,
            write_timeout: Duration::from_secs(1),
            send_buffer: None,
        }
    }

    #[test]
    fn caps_count_and_give_back() {
        let open = Arc::new(Mutex::new(OpenConnections::default()));
        let limits = limits(3, 2);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let first = admit(&open, &limits, a).unwrap();
        let _second = admit(&open, &limits, a).unwrap();
        assert_eq!(admit(&open, &limits, a).err(), Some(Refusal::ClientFull));
        let _third = admit(&open, &limits, proxy).unwrap();
        assert_eq!(admit(&open, &limits, b).err(), Some(Refusal::ServerFull));
        drop(first);
        let _fourth = admit(&open, &limits, b).unwrap();
        assert_eq!(lock(&open).total, 3);
        assert_eq!(lock(&open).by_client.len(), 2);
    }

    #[test]
    fn refusals_are_whole_http_answers() {
        let text = String::from_utf8(refusal_bytes(Refusal::ClientFull)).unwrap();
        assert!(
            text.starts_with("HTTP/1.1 429 Too Many Requests\r\n"),
            "{text}"
        );
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"]["code"], "rate_limited");
        let text = String::from_utf8(refusal_bytes(Refusal::ServerFull)).unwrap();
        assert!(text.starts_with("HTTP/1.1 503 "), "{text}");
    }

    #[tokio::test]
    async fn slow_answers_time_out_but_slow_bodies_do_not() {
        use axum::routing::get;
        use futures_util::StreamExt;

        let pause = Duration::from_millis(300);
        let router = Router::new()
            .route(
                "/slow",
                get(move || async move {
                    tokio::time::sleep(pause).await;
                    "late"
                }),
            )
            .route(
                "/stream",
                get(move || async move {
                    // The head at once, the body's end after the limit.
                    let parts = futures_util::stream::iter(["first ", "second"]).then(
                        move |part| async move {
                            if part == "second" {
                                tokio::time::sleep(pause).await;
                            }
                            Ok::<_, std::convert::Infallible>(part)
                        },
                    );
                    Body::from_stream(parts)
                }),
            )
            .layer(axum::middleware::from_fn_with_state(
                RequestTimeout(Duration::from_millis(50)),
                limit_time,
            ));
        let call = |path: &'static str| {
            let router = router.clone();
            async move {
                let request = Request::builder().uri(path).body(Body::empty()).unwrap();
                let response = router.oneshot(request).await.unwrap();
                let status = response.status().as_u16();
                let body = axum::body::to_bytes(response.into_body(), 1 << 16)
                    .await
                    .unwrap();
                (status, String::from_utf8_lossy(&body).into_owned())
            }
        };
        let (status, body) = call("/slow").await;
        assert_eq!(status, 503);
        let body: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["error"]["code"], "unavailable");
        assert!(body["error"]["message"].as_str().unwrap().contains("50 ms"));
        assert_eq!(call("/stream").await, (200, "first second".to_string()));
    }
}
