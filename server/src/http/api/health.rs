//! `GET /readyz` (issue 25): whether this node can serve games now. 200
//! `{"status": "ready"}` only when a write goes through the database's
//! writer, every migration is applied, the node is not shutting down and,
//! in a cluster, its NATS connection is up; else 503 `{"status": "not
//! ready", "reasons": [...]}`. `/healthz` stays the liveness answer (the
//! process serves HTTP).

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};

use crate::http::error::ApiError;
use crate::AppState;

/// The longest the database check may take before it counts as failed.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    let mut reasons = Vec::new();
    if *state.registry.shutdown_signal().borrow() {
        reasons.push("shutting down".to_string());
    }
    match tokio::time::timeout(CHECK_TIMEOUT, state.store().readiness()).await {
        Ok(Ok(None)) => {}
        Ok(Ok(Some(reason))) => reasons.push(reason),
        Ok(Err(err)) => reasons.push(format!("database: {}", ApiError::from(err).message())),
        Err(_) => reasons.push(format!(
            "database: no answer within {} s",
            CHECK_TIMEOUT.as_secs()
        )),
    }
    if let Some(reason) = state.registry.cluster_problem() {
        reasons.push(reason);
    }
    if reasons.is_empty() {
        (StatusCode::OK, Json(json!({"status": "ready"})))
    } else {
        tracing::warn!(?reasons, "not ready");
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "not ready", "reasons": reasons})),
        )
    }
}
