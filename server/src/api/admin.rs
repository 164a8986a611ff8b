//! Operator actions, allowed with `Authorization: Bearer ADMIN_TOKEN` (the
//! `--admin-token` the server was started with). Without a configured
//! token they are refused outright, so a default install has no admin door.
//!
//! - `DELETE /api/games/{id}`: ends a live game as `aborted` (no result,
//!   it counts nowhere), e.g. an AI v AI game hogging the search threads.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::Json;

use crate::auth::{self, TokenHash};
use crate::error::ApiError;
use crate::extract::game_id;
use crate::live::actor::Command;
use crate::protocol::GameState;
use crate::AppState;

/// Checks the request's Bearer token against the admin token.
fn require_admin(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(admin) = &state.config.admin_token else {
        return Err(ApiError::Forbidden(
            "operator actions are disabled: start the server with --admin-token".into(),
        ));
    };
    let given = auth::required_bearer(headers)?;
    // Comparing hashes: the time taken says nothing about the secret.
    if TokenHash::of(&given) != TokenHash::of(&admin.0) {
        return Err(ApiError::Unauthorized);
    }
    Ok(())
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
    let game = state
        .registry
        .call_result(id, |reply| Command::Abort { reply })
        .await?;
    state.ai_games.forget(id);
    tracing::info!(game = %id, "game aborted by an operator");
    Ok(Json(game))
}
