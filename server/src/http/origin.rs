//! Cross-site requests: a page on another site must not act for a visitor.
//!
//! Browsers send an `Origin` header with every state-changing request and
//! every WebSocket handshake. A request that changes something (any method
//! but GET, HEAD and OPTIONS) or opens a WebSocket, and whose `Origin` is
//! present but neither the server's own (the request's `Host`) nor listed
//! with `--allowed-origin`, is refused with 403 `forbidden`. Requests with
//! no `Origin` (curl, bots, the tests, same-origin GETs) pass: the check is
//! about browsers, which always send it where it matters.
//!
//! Seat tokens are bearer tokens the page must hold, so a foreign page
//! cannot move for a player anyway; the check also stops it from creating
//! games, joining seats or opening sockets in the visitor's name and from
//! the visitor's address (which our per-IP limits would charge).

use axum::extract::{Request, State};
use axum::http::header::{HOST, ORIGIN};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::config::values::AllowedOrigin;
use crate::http::error::ApiError;
use crate::AppState;

/// Whether `origin` (an `Origin` header) may act on a server reached as
/// `host` (the `Host` header).
pub fn is_allowed(origin: &str, host: Option<&str>, allowed: &[AllowedOrigin]) -> bool {
    let origin = origin.trim().to_ascii_lowercase();
    if allowed.iter().any(|allowed| allowed.as_str() == origin) {
        return true;
    }
    // The server's own origin: same host and port as the request was sent
    // to. The scheme is not compared: behind a TLS proxy the page is https
    // while the proxy talks http to us.
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false; // "null" (sandboxed frames, files) and garbage
    };
    let Some(host) = host.map(|host| host.trim().to_ascii_lowercase()) else {
        return false;
    };
    let default_port = match scheme {
        "http" => ":80",
        "https" => ":443",
        _ => return false,
    };
    let strip = |authority: &str| -> String {
        authority
            .strip_suffix(default_port)
            .unwrap_or(authority)
            .to_string()
    };
    strip(authority) == strip(&host)
}

/// Whether a request needs the check: it changes something, or it opens a
/// WebSocket.
fn needs_check(request: &Request) -> bool {
    !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) || request.uri().path().starts_with("/ws/")
}

/// Middleware: refuses cross-site state-changing requests and WebSockets.
pub async fn check_origin(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if needs_check(&request) {
        if let Some(origin) = request.headers().get(ORIGIN) {
            let host = request.headers().get(HOST).and_then(|h| h.to_str().ok());
            let allowed = origin
                .to_str()
                .is_ok_and(|origin| is_allowed(origin, host, &state.config.http.allowed_origins));
            if !allowed {
                let shown = String::from_utf8_lossy(origin.as_bytes()).into_owned();
                return ApiError::Forbidden(format!(
                    "cross-site request refused: pages from {shown:?} may not act on this server \
                     (an operator can allow an origin with --allowed-origin)"
                ))
                .into_response();
            }
        }
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        let allowed = vec!["https://chess.example.org"
            .parse::<AllowedOrigin>()
            .unwrap()];
        let cases = [
            ("http://127.0.0.1:8080", Some("127.0.0.1:8080"), true),
            ("HTTP://Example.org", Some("example.org"), true),
            ("https://example.org", Some("example.org:443"), true),
            ("https://example.org", Some("example.org"), true),
            ("http://example.org:8080", Some("example.org"), false),
            ("http://evil.example", Some("example.org"), false),
            ("https://chess.example.org", Some("10.0.0.5:8080"), true),
            ("https://chess.example.org.evil", Some("example.org"), false),
            ("null", Some("example.org"), false),
            ("http://example.org", None, false),
            ("", Some("example.org"), false),
        ];
        for (origin, host, expected) in cases {
            assert_eq!(
                is_allowed(origin, host, &allowed),
                expected,
                "{origin} on {host:?}"
            );
        }
        for bad in ["chess.example.org", "ftp://x", "https://", "https://a/b"] {
            assert!(bad.parse::<AllowedOrigin>().is_err(), "{bad}");
        }
    }
}
