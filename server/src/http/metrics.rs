//! The metrics' edge: each API request counted by route and status, and
//! `GET /metrics`, the scrape (with the levels read at that moment). The
//! recorder itself is `crate::metrics`.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics::{counter, gauge, histogram};

use crate::http::error::ApiError;
use crate::AppState;

/// Middleware of the HTTP API: counts each request by its route template
/// (never the raw path: ids would make a series per game) and status.
pub async fn track_requests(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_string();
    let method = request.method().as_str().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    counter!("rookery_http_requests_total", "route" => route.clone(), "method" => method, "status" => status)
        .increment(1);
    histogram!("rookery_http_request_duration_seconds", "route" => route)
        .record(started.elapsed().as_secs_f64());
    response
}

/// `GET /metrics`: with `--admin-token`, it needs that token as Bearer;
/// without one, it is served to anyone (put it behind the proxy's rules,
/// or serve it on `--metrics-addr` only).
pub async fn scrape(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if let Some(admin) = &state.config.ops.admin_token {
        let given = crate::identity::credentials::required_bearer(&headers)?;
        if crate::token::TokenHash::of(&given) != crate::token::TokenHash::of(&admin.0) {
            return Err(ApiError::Unauthorized);
        }
    }
    Ok(render(&state).into_response())
}

/// The text of a scrape, with the levels read now.
pub fn render(state: &AppState) -> ([(axum::http::HeaderName, &'static str); 1], String) {
    let handle = crate::metrics::handle();
    gauge!("rookery_games_in_memory").set(state.registry.in_memory() as f64);
    let ai = state.registry.ai().stats();
    gauge!("rookery_ai_threads").set(ai.threads as f64);
    gauge!("rookery_ai_searches_running").set(ai.running as f64);
    gauge!("rookery_ai_queue", "class" => "human").set(ai.waiting_human as f64);
    gauge!("rookery_ai_queue", "class" => "ai_v_ai").set(ai.waiting_ai_v_ai as f64);
    gauge!("rookery_ai_v_ai_games").set(state.ai_games.ids().len() as f64);
    let writer = state.store().writer_stats();
    counter!("rookery_db_transactions_total").absolute(writer.batches);
    counter!("rookery_db_writes_total").absolute(writer.writes);
    counter!("rookery_db_failed_transactions_total").absolute(writer.failed_batches);
    handle.run_upkeep();
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        handle.render(),
    )
}
