//! Operator actions, allowed with `Authorization: Bearer ADMIN_TOKEN` (the
//! `--admin-token` the server was started with). Without a configured
//! token they are refused outright, so a default install has no admin door.
//!
//! - `DELETE /api/games/{id}`: ends a live game as `aborted` (no result,
//!   it counts nowhere), e.g. an AI v AI game hogging the search threads.
//! - `GET /api/admin/stats`: what the node holds now (games in memory, the
//!   AI's threads and queues, the writer's counters).

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::Json;
use serde::Serialize;

use crate::ai::AiStats;
use crate::http::error::ApiError;
use crate::http::extract::game_id;
use crate::protocol::GameState;
use crate::store::WriterStats;
use crate::token::TokenHash;
use crate::AppState;

/// Checks the request's Bearer token against the admin token.
fn require_admin(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(admin) = &state.config.ops.admin_token else {
        return Err(ApiError::Forbidden(
            "operator actions are disabled: start the server with --admin-token".into(),
        ));
    };
    let given = crate::identity::credentials::required_bearer(headers)?;
    // Comparing hashes: the time taken says nothing about the secret.
    if TokenHash::of(&given) != TokenHash::of(&admin.0) {
        return Err(ApiError::Unauthorized);
    }
    Ok(())
}

/// What `GET /api/admin/stats` answers.
#[derive(Debug, Serialize)]
pub struct Stats {
    /// Games in memory on this node (each with its actor, or a proxy).
    pub games_in_memory: usize,
    /// AI v AI games counted against `--max-ai-games`.
    pub ai_v_ai_games: usize,
    pub ai: AiStats,
    pub writer: WriterStats,
}

/// `GET /api/admin/stats`.
pub async fn stats(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Stats>, ApiError> {
    require_admin(&state, &headers)?;
    Ok(Json(Stats {
        games_in_memory: state.registry.in_memory(),
        ai_v_ai_games: state.ai_games.ids().len(),
        ai: state.registry.ai().stats(),
        writer: state.store().writer_stats(),
    }))
}

/// `DELETE /api/games/{id}`: the game, ended as `aborted`. 409 `game_over`
/// if it had already ended.
pub async fn abort_game(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<GameState>, ApiError> {
    require_admin(&state, &headers)?;
    let id = game_id(&id)?;
    let game = state.registry.abort(id).await?;
    state.ai_games.forget(id);
    tracing::info!(game = %id, "game aborted by an operator");
    Ok(Json(game))
}
