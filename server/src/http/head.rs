//! A request's head, checked before anything else reads it: HTTP/1.1
//! requires `Host` (RFC 9112, section 3.2), and the request line and the
//! header section have limits, answered in the contract's error shape (414
//! and 431 `too_large`) rather than hyper's bare status lines.
//!
//! hyper keeps its own, larger limits as the last guard (a head over about
//! 400 KiB, a target over 64 KiB, more than [`HYPER_MAX_HEADERS`] header
//! lines): those are answered by hyper itself, with an empty body.

use axum::extract::Request;
use axum::http::{header, HeaderValue, Version};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::http::error::ApiError;

/// The longest request target (path and query) served: 8 KiB, as most
/// servers and proxies allow.
pub const MAX_TARGET_BYTES: usize = 8 * 1024;
/// The largest header section served (names, values and their line
/// endings): 32 KiB.
pub const MAX_HEADER_BYTES: usize = 32 * 1024;
/// The most header lines served.
pub const MAX_HEADER_LINES: usize = 100;
/// hyper's own limit on header lines, above ours so that ours answers.
pub const HYPER_MAX_HEADERS: usize = 2 * MAX_HEADER_LINES;

/// Middleware: refuses a request whose head breaks the rules above. The
/// connection is closed after the answer (the body, if any, is unread).
pub async fn check_head(request: Request, next: Next) -> Response {
    match refusal(&request) {
        None => next.run(request).await,
        Some(err) => {
            let mut response = err.into_response();
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            response
        }
    }
}

fn refusal(request: &Request) -> Option<ApiError> {
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |target| target.as_str().len());
    if target > MAX_TARGET_BYTES {
        return Some(ApiError::UriTooLong(format!(
            "request targets are limited to {MAX_TARGET_BYTES} bytes"
        )));
    }
    let headers = request.headers();
    let bytes: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    if headers.len() > MAX_HEADER_LINES || bytes > MAX_HEADER_BYTES {
        return Some(ApiError::HeadersTooLarge(format!(
            "request headers are limited to {MAX_HEADER_LINES} lines and {MAX_HEADER_BYTES} bytes"
        )));
    }
    if request.version() == Version::HTTP_11
        && !headers.contains_key(header::HOST)
        && request.uri().authority().is_none()
    {
        return Some(ApiError::BadRequest(
            "an HTTP/1.1 request needs a Host header".into(),
        ));
    }
    None
}
