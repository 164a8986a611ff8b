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
//! A body over the limit is answered with 413 `too_large`. Up to
//! [`DRAIN_LIMIT`] bytes are read and dropped first, so that the connection
//! survives a moderately oversized body too; past that the connection is
//! given up.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

use crate::error::ApiError;
use crate::AppState;

/// The most an oversized body is read (and dropped) before answering 413.
pub const DRAIN_LIMIT: usize = 1024 * 1024;

/// Middleware: buffers the request body (up to the configured limit), then
/// routes the request with the buffered body.
pub async fn read_whole_body(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let limit = state.config.max_body_bytes;
    let (parts, body) = request.into_parts();
    let mut chunks = body.into_data_stream();
    let mut buffered = Vec::new();
    let mut seen = 0usize;
    while let Some(chunk) = chunks.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(err) => {
                return ApiError::BadRequest(format!("reading the request body: {err}"))
                    .into_response()
            }
        };
        seen = seen.saturating_add(chunk.len());
        if seen <= limit {
            buffered.extend_from_slice(&chunk);
        } else if seen > DRAIN_LIMIT.max(limit) {
            break;
        }
    }
    if seen > limit {
        return ApiError::TooLarge(format!("request bodies are limited to {limit} bytes"))
            .into_response();
    }
    let request = Request::from_parts(parts, Body::from(Bytes::from(buffered)));
    next.run(request).await
}
