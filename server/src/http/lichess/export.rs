//! lichess's game exports (issue 24): `GET /game/export/{id}` and
//! `GET /api/games/user/{username}`, as PGN by default, or as JSON
//! (NDJSON for the list) when the request's `Accept` asks for it.

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::board::status_name;
use super::LichessResult;
use crate::domain::GameSeat;
use crate::http::api::players::validate_name;
use crate::http::error::ApiError;
use crate::live::game::LiveGame;
use crate::protocol::lichess as shapes;
use crate::protocol::Side;
use crate::store::PlayerGamesFilter;
use crate::AppState;

fn wants(headers: &HeaderMap, kind: &str) -> bool {
    headers
        .get(ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.contains(kind))
}

/// lichess's game JSON (the export shape).
pub fn game_json(live: &LiveGame) -> Value {
    let state = live.state(tokio::time::Instant::now());
    let player = |side: Side| match live.seat(side) {
        GameSeat::Ai { level } => json!({"aiLevel": level}),
        seat => match seat.player() {
            Some(p) => json!({
                "user": {"name": p.name, "id": p.name.to_lowercase()},
                "rating": p.rating.rating,
                "provisional": p.rating.provisional,
            }),
            None => json!({"name": "Anonymous"}),
        },
    };
    let clock = live.clock_settings();
    let variant = live.variant();
    let mut game = json!({
        "id": live.id.to_string(),
        "rated": live.is_rated(),
        "variant": variant.key(),
        "speed": shapes::speed(clock),
        "perf": shapes::perf(variant, clock),
        "createdAt": live.created_at,
        "lastMoveAt": live.updated_at,
        "status": status_name(&state),
        "players": {"white": player(Side::White), "black": player(Side::Black)},
        "moves": state.san.join(" "),
    });
    if let Some(clock) = clock {
        game["clock"] = json!({
            "initial": clock.initial_ms / 1000,
            "increment": clock.increment_ms / 1000,
            "totalTime": clock.initial_ms / 1000 + 40 * clock.increment_ms / 1000,
        });
    }
    if let Some(winner) = live.ending().and_then(|e| e.winner) {
        game["winner"] = json!(winner.as_str());
    }
    let initial = shapes::initial_fen(variant, &live.game().initial_position().to_fen());
    if initial != "startpos" {
        game["initialFen"] = json!(initial);
    }
    game
}

/// `GET /game/export/{id}`.
pub async fn game(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Response> {
    let id =
        Uuid::parse_str(id.trim_end_matches(".pgn")).map_err(|_| ApiError::game_not_found())?;
    let live = state.registry.snapshot(id).await?;
    if wants(&headers, "application/json") {
        let mut json = game_json(&live);
        // A tournament's game names it, as lichess's export does (the web
        // game page offers berserk and the way back to the arena by it).
        let key = id.to_string();
        if let Some((arena, _)) = state.store().arena_of_game(&key).await? {
            json["tournament"] = json!(arena);
        } else if let Some((swiss, _, _)) = state.store().swiss_of_game(&key).await? {
            json["swiss"] = json!(swiss);
        }
        return Ok(axum::Json(json).into_response());
    }
    let pgn = crate::http::api::games::export_pgn(&state, &live, &[]).await?;
    Ok(([(CONTENT_TYPE, "application/x-chess-pgn")], pgn).into_response())
}

#[derive(Debug, Deserialize)]
pub struct UserGamesQuery {
    #[serde(default)]
    pub max: Option<u32>,
}

/// `GET /api/games/user/{username}`: the player's games, newest first
/// (`max`, default and at most 100).
pub async fn user_games(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(query): Query<UserGamesQuery>,
    headers: HeaderMap,
) -> LichessResult<Response> {
    let not_found = || ApiError::NotFound("no such user".into());
    validate_name(&name).map_err(|_| not_found())?;
    let player = state
        .store()
        .player_id(&name)
        .await?
        .ok_or_else(not_found)?;
    let limit = query.max.unwrap_or(100).clamp(1, 100);
    let (games, _) = state
        .store()
        .player_games(&player, PlayerGamesFilter::All, None, limit)
        .await?;
    let ndjson = wants(&headers, "application/x-ndjson");
    let mut body = String::new();
    for game in &games {
        let Ok(id) = Uuid::parse_str(&game.id) else {
            continue;
        };
        let Ok(live) = state.registry.snapshot(id).await else {
            continue;
        };
        if ndjson {
            body.push_str(&game_json(&live).to_string());
            body.push('\n');
        } else {
            body.push_str(&crate::http::api::games::export_pgn(&state, &live, &[]).await?);
            body.push_str("\n\n");
        }
    }
    let kind = if ndjson {
        "application/x-ndjson"
    } else {
        "application/x-chess-pgn"
    };
    Ok(([(CONTENT_TYPE, kind)], Body::from(body)).into_response())
}
