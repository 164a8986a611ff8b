//! Per-connection rate limiting: a token bucket for every TCP connection
//! (HTTP keep-alive requests share their connection's bucket) and one for
//! every WebSocket's messages.
//!
//! A bucket holds up to `burst` tokens and refills at `per_second`; each
//! request or message takes one. Per connection rather than per address, so
//! players behind one NAT do not starve each other, while a client flooding
//! one connection is slowed down (429 / `rate_limited`) without its other
//! traffic being cut.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::IncomingStream;
use tokio::net::TcpListener;
use tokio::time::Instant;

use crate::error::ApiError;
use crate::AppState;

/// Refill speed and size of a bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    pub per_second: f64,
    pub burst: u32,
}

/// A token bucket. It starts full the first time it is used.
#[derive(Debug, Default)]
pub struct TokenBucket {
    state: Option<(f64, Instant)>,
}

impl TokenBucket {
    /// Takes one token if there is one.
    pub fn try_take(&mut self, limit: RateLimit, now: Instant) -> bool {
        let burst = f64::from(limit.burst.max(1));
        let (tokens, last) = self.state.unwrap_or((burst, now));
        let refilled = (tokens
            + now.saturating_duration_since(last).as_secs_f64() * limit.per_second)
            .min(burst);
        if refilled >= 1.0 {
            self.state = Some((refilled - 1.0, now));
            true
        } else {
            self.state = Some((refilled, now));
            false
        }
    }
}

/// What axum knows about each accepted connection: its peer and its bucket.
#[derive(Debug, Clone)]
pub struct Connection {
    pub remote: SocketAddr,
    pub bucket: Arc<Mutex<TokenBucket>>,
}

impl Connected<IncomingStream<'_, TcpListener>> for Connection {
    fn connect_info(stream: IncomingStream<'_, TcpListener>) -> Connection {
        Connection {
            remote: *stream.remote_addr(),
            bucket: Arc::default(),
        }
    }
}

/// Middleware: one token per request from the connection's bucket.
pub async fn limit_requests(
    State(state): State<AppState>,
    ConnectInfo(connection): ConnectInfo<Connection>,
    request: Request,
    next: Next,
) -> Response {
    let allowed = connection
        .bucket
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .try_take(state.config.http_rate(), Instant::now());
    if !allowed {
        tracing::debug!(remote = %connection.remote, "HTTP rate limit hit");
        return ApiError::RateLimited.into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn bucket_allows_a_burst_then_the_rate() {
        let limit = RateLimit {
            per_second: 2.0,
            burst: 3,
        };
        let mut bucket = TokenBucket::default();
        let now = Instant::now();
        assert!((0..3).all(|_| bucket.try_take(limit, now)));
        assert!(!bucket.try_take(limit, now));
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(bucket.try_take(limit, Instant::now()));
        assert!(!bucket.try_take(limit, Instant::now()));
        tokio::time::advance(Duration::from_secs(60)).await;
        assert!((0..3).all(|_| bucket.try_take(limit, Instant::now())));
        assert!(!bucket.try_take(limit, Instant::now()));
    }
}
