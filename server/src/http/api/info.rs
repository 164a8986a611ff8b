//! `GET /api/levels` (the engine's difficulty table) and
//! `GET /api/scoreboard` (from the recorded results).

use axum::extract::State;
use axum::Json;
use rookery_engine::level::LEVELS;

use crate::http::error::ApiError;
use crate::protocol::{LevelView, Scoreboard};
use crate::AppState;

pub async fn levels() -> Json<Vec<LevelView>> {
    Json(
        LEVELS
            .iter()
            .map(|level| LevelView {
                level: level.number,
                name: level.name,
                elo: level.elo,
                max_depth: level.max_depth,
                max_think_ms: level.max_think_ms,
                max_nodes: level.max_nodes,
                temperature_cp: level.temperature_cp,
            })
            .collect(),
    )
}

pub async fn scoreboard(State(state): State<AppState>) -> Result<Json<Scoreboard>, ApiError> {
    Ok(Json(state.store().scoreboard().await?))
}
