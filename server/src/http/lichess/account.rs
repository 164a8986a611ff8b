//! lichess's account and user endpoints (issue 24): who plays now, a
//! user's public data, online statuses, token tests, bot accounts.

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::LichessResult;
use crate::http::api::players::validate_name;
use crate::http::error::ApiError;
use crate::identity::{self, Scope, Scopes};
use crate::protocol::{PlayerProfile, Status};
use crate::store::PlayerGamesFilter;
use crate::AppState;

/// lichess's scope names for Rookery's scopes.
fn lichess_scopes(scopes: Scopes) -> String {
    let mut names = Vec::new();
    if scopes.has(Scope::Play) {
        names.push("board:play");
    }
    if scopes.has(Scope::Challenge) {
        names.extend(["challenge:read", "challenge:write"]);
    }
    if scopes.has(Scope::Bot) {
        names.push("bot:play");
    }
    names.join(",")
}

/// `GET /api/account/playing`: the person's ongoing games.
pub async fn playing(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let person = identity::required(state.store(), &headers).await?;
    let now_playing = now_playing(&state, &person.player.id).await?;
    Ok(Json(json!({ "nowPlaying": now_playing })))
}

/// The player's active games, as the game objects of lichess's events
/// (`/api/account/playing`, and the `gameStart` lines that open an event
/// stream).
pub async fn now_playing(state: &AppState, player_id: &str) -> Result<Vec<Value>, ApiError> {
    let (games, _) = state
        .store()
        .player_games(player_id, PlayerGamesFilter::Unfinished, None, 50)
        .await?;
    let mut now_playing = Vec::new();
    for game in games.iter().filter(|g| g.status == Status::Active) {
        let Ok(id) = Uuid::parse_str(&game.id) else {
            continue;
        };
        let Ok(live) = state.registry.snapshot(id).await else {
            continue;
        };
        if let Some((side, _)) = live.seat_of_player(player_id) {
            // A tournament's game names its arena or Swiss, as its
            // gameStart did.
            let arena = state.store().arena_of_game(&game.id).await?;
            let swiss = match arena {
                Some(_) => None,
                None => state.store().swiss_of_game(&game.id).await?,
            };
            let source = if arena.is_some() {
                "arena"
            } else if swiss.is_some() {
                "swiss"
            } else if live.seat(side.other()).ai_level().is_some() {
                "ai"
            } else {
                "friend"
            };
            now_playing.extend(
                live.event_games(source)
                    .into_iter()
                    .filter(|(player, _)| player == player_id)
                    .map(|(_, mut game)| {
                        if let Some((id, _)) = &arena {
                            game["tournamentId"] = Value::String(id.clone());
                        }
                        if let Some((id, _, _)) = &swiss {
                            game["swissId"] = Value::String(id.clone());
                        }
                        game
                    }),
            );
        }
    }
    Ok(now_playing)
}

/// lichess's public user of a profile.
pub fn user_json(profile: &PlayerProfile, bot: bool, online: bool, base: &str) -> Value {
    let perf = json!({
        "games": profile.games,
        "rating": profile.rating,
        "rd": profile.rating_deviation,
        "prog": 0,
        "prov": profile.provisional,
    });
    let perfs: serde_json::Map<String, Value> =
        ["bullet", "blitz", "rapid", "classical", "correspondence"]
            .into_iter()
            .map(|speed| (speed.to_string(), perf.clone()))
            .collect();
    let mut user = json!({
        "id": profile.name.to_lowercase(),
        "username": profile.name,
        "perfs": perfs,
        "createdAt": profile.created_at,
        "online": online,
        "url": format!("{base}/players/{}", profile.name),
        "count": {
            "all": profile.games,
            "rated": profile.games,
            "win": profile.wins,
            "loss": profile.losses,
            "draw": profile.draws,
        },
    });
    if bot {
        user["title"] = json!("BOT");
    }
    user
}

/// `GET /api/user/{username}`.
pub async fn user(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> LichessResult<Json<Value>> {
    let not_found = || ApiError::NotFound("no such user".into());
    validate_name(&name).map_err(|_| not_found())?;
    let profile = state
        .store()
        .player_profile(&name)
        .await?
        .ok_or_else(not_found)?;
    let id = state
        .store()
        .player_id(&name)
        .await?
        .ok_or_else(not_found)?;
    let bot = state.store().is_bot(&id).await?;
    let online = state.registry.events().is_online(&id);
    Ok(Json(user_json(
        &profile,
        bot,
        online,
        &state.config.public_base(),
    )))
}

#[derive(Debug, Deserialize)]
pub struct StatusQuery {
    #[serde(default)]
    pub ids: Option<String>,
}

/// `GET /api/users/status?ids=a,b`: up to 100 names.
pub async fn statuses(
    State(state): State<AppState>,
    Query(query): Query<StatusQuery>,
) -> LichessResult<Json<Value>> {
    let mut out = Vec::new();
    for name in query
        .ids
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .take(100)
    {
        if validate_name(name).is_err() {
            continue;
        }
        let Some(found) = state.store().credentials(name).await? else {
            continue;
        };
        let mut status = json!({
            "id": found.player.name.to_lowercase(),
            "name": found.player.name,
            "online": state.registry.events().is_online(&found.player.id),
        });
        if state.store().is_bot(&found.player.id).await? {
            status["title"] = json!("BOT");
        }
        out.push(status);
    }
    Ok(Json(Value::Array(out)))
}

/// `POST /api/token/test`: a body of comma-separated tokens; each maps to
/// `{"userId", "scopes", "expires": null}` or `null`.
pub async fn token_test(State(state): State<AppState>, body: Bytes) -> LichessResult<Json<Value>> {
    let text = String::from_utf8_lossy(&body);
    let mut answer = serde_json::Map::new();
    for token in text
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .take(1000)
    {
        let found = identity::of_token(state.store(), token).await?;
        let value = match found {
            Some(person) => json!({
                "userId": person.player.name.to_lowercase(),
                "scopes": lichess_scopes(person.scopes),
                "expires": Value::Null,
            }),
            None => Value::Null,
        };
        answer.insert(token.to_string(), value);
    }
    Ok(Json(Value::Object(answer)))
}

/// `POST /api/bot/account/upgrade`: an account with no games becomes a
/// bot account, for good.
pub async fn upgrade(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let person = identity::required(state.store(), &headers).await?;
    person.require(Scope::Bot)?;
    if state.store().is_bot(&person.player.id).await? {
        return Ok(Json(json!({"ok": true})));
    }
    if !state.store().upgrade_to_bot(&person.player.id).await? {
        return Err(ApiError::BadRequest(
            "this account has played games: only a new account can become a bot".into(),
        )
        .into());
    }
    tracing::info!(player = %person.player.id, "account upgraded to a bot");
    Ok(Json(json!({"ok": true})))
}

#[derive(Debug, Deserialize)]
pub struct OnlineQuery {
    #[serde(default)]
    pub nb: Option<usize>,
}

/// `GET /api/bot/online`: NDJSON of the bots with an event stream open.
pub async fn online_bots(
    State(state): State<AppState>,
    Query(query): Query<OnlineQuery>,
) -> LichessResult<Response> {
    let limit = query.nb.unwrap_or(50).clamp(1, 300);
    let base = state.config.public_base();
    let mut lines = String::new();
    for bot in state.store().bots().await? {
        if lines.lines().count() >= limit {
            break;
        }
        if !state.registry.events().is_online(&bot.id) {
            continue;
        }
        if let Some(profile) = state.store().player_profile(&bot.name).await? {
            lines.push_str(&user_json(&profile, true, true, &base).to_string());
            lines.push('\n');
        }
    }
    Ok(([(CONTENT_TYPE, "application/x-ndjson")], Body::from(lines)).into_response())
}
