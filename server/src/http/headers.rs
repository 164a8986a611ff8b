//! Security headers on every answer (issue 35): the page may only run and
//! load what this server serves ([`CONTENT_SECURITY_POLICY`]), no other
//! site may frame it, content types are not sniffed, the address of a
//! page (a game's, with its id) is not sent to other sites, and under TLS
//! browsers are told to come back over HTTPS only. A header a handler set
//! itself is kept.

use axum::extract::{Request, State};
use axum::http::header::{
    CONTENT_SECURITY_POLICY, REFERRER_POLICY, STRICT_TRANSPORT_SECURITY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

/// The web client is plain modules from this origin: scripts, styles,
/// images and sockets from `'self'` only (styles may be set inline, as
/// the board sizes its pieces; images may be `data:`/`blob:` URLs, as
/// piece sets and downloads are), no plugins, no framing, forms and
/// `<base>` only towards this site.
pub const POLICY: &str = "default-src 'self'; script-src 'self'; \
    style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; \
    connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; \
    form-action 'self'; frame-ancestors 'none'";

/// HSTS under TLS: a year.
pub const HSTS: &str = "max-age=31536000";

/// Whether this server speaks TLS itself (then HSTS is sent).
#[derive(Debug, Clone, Copy)]
pub struct Tls(pub bool);

pub async fn security_headers(
    State(Tls(tls)): State<Tls>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let mut set = |name: HeaderName, value: &'static str| {
        headers
            .entry(name)
            .or_insert_with(|| HeaderValue::from_static(value));
    };
    set(CONTENT_SECURITY_POLICY, POLICY);
    set(X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(X_FRAME_OPTIONS, "DENY");
    set(REFERRER_POLICY, "same-origin");
    if tls {
        set(STRICT_TRANSPORT_SECURITY, HSTS);
    }
    response
}
