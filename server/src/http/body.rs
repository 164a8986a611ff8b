//! Request bodies are read whole before a request is routed.
//!
//! Why: several answers need no body (`join`, `resign`, `draw`, a 401 or
//! 404 found from the path and headers, a 429), so without this the server
//! could answer before the client had finished sending. hyper then cannot
//! reuse the connection (the unread body is still on its way) and closes it
//! right after the answer, often without a `Connection: close` header. A
//! keep-alive client (a `requests.Session`, reqwest, a browser) that sends
//! its next request on that connection sees it dropped. Reading the body
//! first keeps every connection usable. Bodies are small (the body limit is
//! 16 KiB by default), so this costs nothing worth counting.
//!
//! A body over the limit is answered with 413 `too_large`, after up to
//! [`DRAIN_LIMIT`] bytes of it are read and dropped (within
//! [`DRAIN_TIMEOUT`]), as nginx's lingering close does: a client that sends
//! its whole body before it reads the answer (Python's urllib) gets the 413
//! rather than a connection reset, and a moderately oversized body leaves
//! the connection usable. A body announced larger than that is refused at
//! once and its connection closed.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

use crate::http::error::ApiError;
use crate::AppState;

/// The most an oversized body is read (and dropped) before answering 413.
pub const DRAIN_LIMIT: usize = 8 * 1024 * 1024;

/// The longest an oversized body is drained before the 413 goes out anyway.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a client may take to send a body once its headers are in: a
/// client that announces a body and never sends it does not hold its
/// request open forever.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// Middleware: buffers the request body (up to the configured limit), then
/// routes the request with the buffered body.
pub async fn read_whole_body(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let limit = state.config.http.max_body_bytes;
    // A body announced larger than the limit is refused: drained first
    // when it is not too large (so the client reads the 413), at once
    // otherwise (a client announcing 10 GB and sending a byte would hold
    // the request until the timer); either way the connection is closed.
    let announced = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    if announced.is_some_and(|length| length > limit as u64) {
        if announced.is_some_and(|length| length <= DRAIN_LIMIT as u64) {
            let body = request.into_body();
            // Whatever the drain ends with, the answer is the same 413.
            let _ = tokio::time::timeout(DRAIN_TIMEOUT, drain(body)).await;
        }
        let mut response =
            ApiError::TooLarge(format!("request bodies are limited to {limit} bytes"))
                .into_response();
        response.headers_mut().insert(
            axum::http::header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
        return response;
    }
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(BODY_TIMEOUT, read_body(body, limit)).await;
    let buffered = match read {
        Ok(Ok(buffered)) => buffered,
        Ok(Err(error)) => return error.into_response(),
        Err(_) => {
            return ApiError::BadRequest("timed out waiting for the request body".into())
                .into_response()
        }
    };
    let request = Request::from_parts(parts, Body::from(Bytes::from(buffered)));
    next.run(request).await
}

/// Reads `body` to its end (or [`DRAIN_LIMIT`] bytes), keeping nothing.
async fn drain(body: Body) {
    let mut chunks = body.into_data_stream();
    let mut seen = 0usize;
    while let Some(Ok(chunk)) = chunks.next().await {
        seen = seen.saturating_add(chunk.len());
        if seen > DRAIN_LIMIT {
            break;
        }
    }
}

/// The body, at most `limit` bytes; `too_large` beyond (after draining up
/// to [`DRAIN_LIMIT`]).
async fn read_body(body: Body, limit: usize) -> Result<Vec<u8>, ApiError> {
    let mut chunks = body.into_data_stream();
    let mut buffered = Vec::new();
    let mut seen = 0usize;
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk
            .map_err(|err| ApiError::BadRequest(format!("reading the request body: {err}")))?;
        seen = seen.saturating_add(chunk.len());
        if seen <= limit {
            buffered.extend_from_slice(&chunk);
        } else if seen > DRAIN_LIMIT.max(limit) {
            break;
        }
    }
    if seen > limit {
        return Err(ApiError::TooLarge(format!(
            "request bodies are limited to {limit} bytes"
        )));
    }
    Ok(buffered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bodies_are_read_whole_up_to_the_limit() {
        assert_eq!(read_body(Body::empty(), 4).await.unwrap(), b"");
        assert_eq!(read_body(Body::from("{}"), 4).await.unwrap(), b"{}");
        assert_eq!(read_body(Body::from("abcd"), 4).await.unwrap(), b"abcd");
        assert!(matches!(
            read_body(Body::from("abcde"), 4).await,
            Err(ApiError::TooLarge(_))
        ));
        // Far beyond the drain limit: still a clean too_large.
        let huge = vec![b'x'; DRAIN_LIMIT + 10];
        assert!(matches!(
            read_body(Body::from(huge), 4).await,
            Err(ApiError::TooLarge(_))
        ));
        // A body in chunks is put back together.
        let chunks = futures_util::stream::iter(
            ["{\"uci\":", "\"e2e4\"}"]
                .map(|part| Ok::<_, std::io::Error>(Bytes::from_static(part.as_bytes()))),
        );
        assert_eq!(
            read_body(Body::from_stream(chunks), 64).await.unwrap(),
            b"{\"uci\":\"e2e4\"}"
        );
    }
}
