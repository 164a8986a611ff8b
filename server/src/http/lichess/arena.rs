//! lichess's Arena tournament API (issue 38), the shapes berserk's
//! `tournaments` client reads:
//!
//! - `POST /api/tournament` (create) → the arena
//! - `GET /api/tournament` → `{"created", "started", "finished"}`
//! - `GET /api/tournament/{id}?page=N` → the arena with a page of standings
//! - `POST /api/tournament/{id}/join` (`password`, `pairMeAsap`; form,
//!   JSON or query) → `{"ok": true}`: joins, or comes back after a pause
//! - `POST /api/tournament/{id}/withdraw` → `{"ok": true}`: pauses (before
//!   the start: leaves); joining again comes back
//! - `GET /api/tournament/{id}/results?nb=` → NDJSON, one player a line
//! - `GET /api/tournament/{id}/games` → PGN (NDJSON with `Accept:
//!   application/x-ndjson`)
//! - `POST /api/{board,bot}/game/{id}/berserk` (in `board.rs`) → `{"ok": true}`
//!
//! The director (`tournaments/arena/`) pairs and scores; this file reads
//! and writes the arena's rows and tells the director when to look again.

use std::collections::HashMap;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::{Form, LichessResult};
use crate::http::api::challenges::{boolean, number, text};
use crate::http::error::ApiError;
use crate::identity::{self, Identity, Scope};
use crate::protocol::lichess as shapes;
use crate::protocol::ClockSettings;
use crate::store::arena::{ArenaRow, ArenaWrite, NewArena};
use crate::store::now_ms;
use crate::token::TokenHash;
use crate::tournaments::arena::standings::Standing;
use crate::tournaments::arena::standings_of;
use crate::AppState;

/// Players per page of standings (lichess's 10).
pub const PAGE: usize = 10;

/// The arena's full name, as lichess writes it: "NAME Arena".
pub fn full_name(name: &str) -> String {
    if name.to_lowercase().ends_with("arena") {
        name.to_string()
    } else {
        format!("{name} Arena")
    }
}

fn status_code(status: &str) -> i64 {
    match status {
        "created" => 10,
        "started" => 20,
        _ => 30,
    }
}

fn clock_of(row: &ArenaRow) -> ClockSettings {
    ClockSettings {
        initial_ms: u64::try_from(row.clock_initial_ms).unwrap_or(0),
        increment_ms: u64::try_from(row.clock_increment_ms).unwrap_or(0),
    }
}

/// The arena as lichess's lists show it.
pub fn summary(row: &ArenaRow, now: i64) -> Value {
    let clock = clock_of(row);
    let speed = shapes::speed(Some(clock));
    let mut arena = json!({
        "id": row.id,
        "createdBy": row.creator_name.to_lowercase(),
        "system": "arena",
        "minutes": (row.finishes_at - row.starts_at) as f64 / 60_000.0,
        "clock": {"limit": clock.initial_ms / 1000, "increment": clock.increment_ms / 1000},
        "rated": row.rated,
        "fullName": full_name(&row.name),
        "name": row.name,
        "nbPlayers": row.nb_players,
        "variant": {"key": "standard", "short": "Std", "name": "Standard"},
        "startsAt": row.starts_at,
        "finishesAt": row.finishes_at,
        "status": status_code(&row.status),
        "perf": {"key": speed, "name": capitalised(speed)},
        "berserkable": row.berserkable,
        "streakable": row.streakable,
        "private": row.entry_code_hash.is_some(),
        "botsAllowed": row.bots_allowed,
        "isStarted": row.status == "started",
        "isFinished": row.status == "finished",
    });
    if row.status == "created" {
        arena["secondsToStart"] = json!(((row.starts_at - now).max(0) + 999) / 1000);
    } else if row.status == "started" {
        arena["secondsToFinish"] = json!(((row.finishes_at - now).max(0) + 999) / 1000);
    }
    if let Some(rating) = row.min_rating {
        arena["minRating"] = json!({"rating": rating});
    }
    if let Some(nb) = row.min_rated_games {
        arena["minRatedGames"] = json!({"nb": nb});
    }
    arena
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// One player of the standings, as lichess writes it.
pub fn standing_json(line: &Standing) -> Value {
    let mut player = json!({
        "name": line.player.name,
        "id": line.player.name.to_lowercase(),
        "rank": line.rank,
        "rating": line.player.rating,
        "score": line.score,
        "sheet": {"scores": line.sheet.digits(), "fire": line.fire},
        "nb": {"game": line.games, "berserk": line.berserks, "win": line.sheet.wins()},
        "playing": line.playing,
    });
    if let Some(performance) = line.performance {
        player["performance"] = json!(performance);
    }
    if !line.player.active {
        player["withdraw"] = json!(true);
    }
    player
}

/// The arena with a page of its standings (1 first), the podium once it
/// is over, its games being played, and its statistics.
pub async fn full(state: &AppState, row: &ArenaRow, page: usize) -> Result<Value, ApiError> {
    let store = state.store();
    let players = store.arena_players(&row.id).await?;
    let pairings = store.arena_pairings(&row.id).await?;
    let lines = standings_of(&players, &pairings, row.streakable);
    let mut arena = summary(row, now_ms());
    let pages = lines.len().div_ceil(PAGE).max(1);
    let page = page.clamp(1, pages);
    arena["standing"] = json!({
        "page": page,
        "pages": pages,
        "players": lines.iter().skip((page - 1) * PAGE).take(PAGE).map(standing_json).collect::<Vec<_>>(),
    });
    if row.status == "finished" {
        arena["podium"] = json!(lines.iter().take(3).map(standing_json).collect::<Vec<_>>());
    }
    let by_id: HashMap<&str, &Standing> = lines
        .iter()
        .map(|line| (line.player.id.as_str(), line))
        .collect();
    let duel_player = |id: &str| {
        by_id.get(id).map_or(
            json!({}),
            |line| json!({"n": line.player.name, "r": line.player.rating, "k": line.rank}),
        )
    };
    arena["duels"] = json!(pairings
        .iter()
        .filter(|p| !p.settled)
        .map(
            |p| json!({"id": p.game_id, "p": [duel_player(&p.white_id), duel_player(&p.black_id)]})
        )
        .collect::<Vec<_>>());
    let counted: Vec<_> = pairings
        .iter()
        .filter(|p| p.settled && !p.aborted)
        .collect();
    let average = if players.is_empty() {
        0
    } else {
        (players.iter().map(|p| p.rating).sum::<f64>() / players.len() as f64).round() as i64
    };
    arena["stats"] = json!({
        "games": counted.len(),
        "moves": counted.iter().map(|p| p.plies).sum::<i64>(),
        "whiteWins": counted.iter().filter(|p| p.winner.as_deref() == Some("white")).count(),
        "blackWins": counted.iter().filter(|p| p.winner.as_deref() == Some("black")).count(),
        "draws": counted.iter().filter(|p| p.winner.is_none()).count(),
        "berserks": counted.iter().map(|p| (p.berserk & 1) + ((p.berserk >> 1) & 1)).sum::<i64>(),
        "averageRating": average,
    });
    Ok(arena)
}

/// An arena by its id (404 in lichess's shape when there is none).
pub async fn load(state: &AppState, id: &str) -> Result<ArenaRow, ApiError> {
    let not_found = || ApiError::NotFound("no such tournament".into());
    if id.is_empty() || id.len() > 16 || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(not_found());
    }
    state.store().arena(id).await?.ok_or_else(not_found)
}

async fn person(state: &AppState, headers: &HeaderMap) -> Result<Identity, ApiError> {
    let person = identity::required(state.store(), headers).await?;
    if person.scopes.has(Scope::Play)
        || person.scopes.has(Scope::Bot)
        || person.scopes.has(Scope::Challenge)
    {
        Ok(person)
    } else {
        Err(ApiError::MissingScope(Scope::Play.as_str()))
    }
}

/// The arena's creation form (lichess's field names).
#[derive(Debug, Deserialize, Default)]
pub struct CreateForm {
    #[serde(default)]
    pub name: Option<Value>,
    #[serde(default, rename = "clockTime")]
    pub clock_time: Option<Value>,
    #[serde(default, rename = "clockIncrement")]
    pub clock_increment: Option<Value>,
    #[serde(default)]
    pub minutes: Option<Value>,
    #[serde(default, rename = "waitMinutes")]
    pub wait_minutes: Option<Value>,
    #[serde(default, rename = "startDate")]
    pub start_date: Option<Value>,
    #[serde(default)]
    pub variant: Option<Value>,
    #[serde(default)]
    pub rated: Option<Value>,
    #[serde(default)]
    pub position: Option<Value>,
    #[serde(default)]
    pub berserkable: Option<Value>,
    #[serde(default)]
    pub streakable: Option<Value>,
    #[serde(default)]
    pub password: Option<Value>,
    #[serde(default, rename = "conditions.minRating.rating")]
    pub min_rating: Option<Value>,
    #[serde(default, rename = "conditions.nbRatedGame.nb")]
    pub min_rated_games: Option<Value>,
    #[serde(default, rename = "botsAllowed")]
    pub bots_allowed: Option<Value>,
}

fn arena_id() -> Result<String, ApiError> {
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(ApiError::internal)?;
    Ok(bytes
        .iter()
        .map(|b| char::from(LETTERS[usize::from(*b) % LETTERS.len()]))
        .collect())
}

/// `POST /api/tournament`.
pub async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<CreateForm>,
) -> LichessResult<Json<Value>> {
    let person = person(&state, &headers).await?;
    if !state.config.may_create_arenas(&person.player.name) {
        return Err(ApiError::Forbidden(
            "this server lets only some accounts create tournaments".into(),
        )
        .into());
    }
    let bad = |message: &str| ApiError::BadRequest(message.to_string());
    if let Some(variant) = text(&form.variant).filter(|v| v != "standard") {
        return Err(ApiError::BadRequest(format!("variant {variant:?} is not played here")).into());
    }
    if text(&form.position).is_some() {
        return Err(bad("arenas start from the standard position").into());
    }
    let name = text(&form.name).unwrap_or_else(|| format!("{}'s", person.player.name));
    if name.chars().count() < 2 || name.chars().count() > 30 {
        return Err(bad("name: 2 to 30 characters").into());
    }
    if name.chars().any(char::is_control) {
        return Err(bad("name: no control characters").into());
    }
    let clock_minutes = number(&form.clock_time, "clockTime")?
        .ok_or_else(|| bad("clockTime (minutes) is required"))?;
    let increment = number(&form.clock_increment, "clockIncrement")?
        .ok_or_else(|| bad("clockIncrement (seconds) is required"))?;
    if !(0.0..=60.0).contains(&clock_minutes) || !(0.0..=60.0).contains(&increment) {
        return Err(bad("clockTime is 0 to 60 minutes and clockIncrement 0 to 60 seconds").into());
    }
    if clock_minutes == 0.0 && increment == 0.0 {
        return Err(bad("a clock of 0+0 cannot be played").into());
    }
    let minutes = number(&form.minutes, "minutes")?
        .ok_or_else(|| bad("minutes (the duration) is required"))?;
    // lichess takes a fixed list from 20 minutes on; any duration from a
    // few seconds (a club's quick event, a test) to 12 hours is taken here.
    if !(0.05..=720.0).contains(&minutes) {
        return Err(bad("minutes (the duration) is 0.05 to 720").into());
    }
    let now = now_ms();
    let starts_at = match (
        number(&form.start_date, "startDate")?,
        number(&form.wait_minutes, "waitMinutes")?,
    ) {
        (Some(date), _) => {
            let date = date as i64;
            if date < now - 60_000 || date > now + 30 * 86_400_000 {
                return Err(
                    bad("startDate must be within the next 30 days (ms since the epoch)").into(),
                );
            }
            date.max(now)
        }
        (None, Some(wait)) if (0.0..=43_200.0).contains(&wait) => now + (wait * 60_000.0) as i64,
        (None, Some(_)) => return Err(bad("waitMinutes is 0 to 43200").into()),
        // lichess's default: five minutes from now.
        (None, None) => now + 5 * 60_000,
    };
    let min_rating = number(&form.min_rating, "conditions.minRating.rating")?;
    let min_rated_games = number(&form.min_rated_games, "conditions.nbRatedGame.nb")?;
    if min_rating.is_some_and(|r| !(0.0..=4000.0).contains(&r))
        || min_rated_games.is_some_and(|n| !(0.0..=1000.0).contains(&n))
    {
        return Err(bad("conditions: a rating 0 to 4000, rated games 0 to 1000").into());
    }
    let entry_code = text(&form.password);
    if entry_code.as_ref().is_some_and(|code| code.len() > 100) {
        return Err(bad("password: at most 100 characters").into());
    }
    let id = arena_id()?;
    let new = NewArena {
        id: id.clone(),
        name,
        created_by: person.player.id.clone(),
        clock_initial_ms: (clock_minutes * 60_000.0) as i64,
        clock_increment_ms: (increment * 1000.0) as i64,
        starts_at,
        finishes_at: starts_at + (minutes * 60_000.0) as i64,
        rated: boolean(&form.rated, "rated")?.unwrap_or(true),
        berserkable: boolean(&form.berserkable, "berserkable")?.unwrap_or(true),
        streakable: boolean(&form.streakable, "streakable")?.unwrap_or(true),
        entry_code_hash: entry_code.map(|code| TokenHash::of(&code).0),
        min_rating: min_rating.map(|r| r as i64),
        min_rated_games: min_rated_games.map(|n| n as i64),
        bots_allowed: boolean(&form.bots_allowed, "botsAllowed")?.unwrap_or(false),
        created_at: now,
    };
    state.store().write_arena(ArenaWrite::Create(new)).await?;
    tracing::info!(arena = %id, by = %person.player.name, "arena created");
    state.arenas.changed(&id);
    let row = load(&state, &id).await?;
    Ok(Json(full(&state, &row, 1).await?))
}

/// `GET /api/tournament`.
pub async fn list(State(state): State<AppState>) -> LichessResult<Json<Value>> {
    let now = now_ms();
    let rows = state.store().arenas_listed(20).await?;
    let pick = |status: &str| -> Vec<Value> {
        rows.iter()
            .filter(|row| row.status == status)
            .map(|row| summary(row, now))
            .collect()
    };
    Ok(Json(json!({
        "created": pick("created"),
        "started": pick("started"),
        "finished": pick("finished"),
    })))
}

#[derive(Debug, Deserialize, Default)]
pub struct PageQuery {
    #[serde(default)]
    pub page: Option<String>,
}

/// `GET /api/tournament/{id}`.
pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<PageQuery>,
) -> LichessResult<Json<Value>> {
    let page = match query.page.as_deref().map(str::trim) {
        None | Some("") => 1,
        Some(page) => page
            .parse::<usize>()
            .ok()
            .filter(|page| (1..=10_000).contains(page))
            .ok_or_else(|| ApiError::BadRequest("page must be a number from 1".into()))?,
    };
    let row = load(&state, &id).await?;
    Ok(Json(full(&state, &row, page).await?))
}

#[derive(Debug, Deserialize, Default)]
pub struct JoinForm {
    #[serde(default)]
    pub password: Option<Value>,
    #[serde(default, rename = "pairMeAsap")]
    pub pair_me_asap: Option<Value>,
}

/// `POST /api/tournament/{id}/join`. berserk sends its fields in the query
/// string, other clients in the body: both are read.
pub async fn join(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    Form(form): Form<JoinForm>,
) -> LichessResult<Json<Value>> {
    let person = person(&state, &headers).await?;
    let row = load(&state, &id).await?;
    if row.status == "finished" {
        return Err(ApiError::BadRequest("this tournament is over".into()).into());
    }
    let from_query = |key: &str| query.get(key).map(|v| Value::String(v.clone()));
    let password = text(&form.password).or_else(|| text(&from_query("password")));
    // Read for its errors: every free player is paired at the next wave.
    let asap = form
        .pair_me_asap
        .clone()
        .or_else(|| from_query("pairMeAsap"));
    boolean(&asap.map(lower), "pairMeAsap")?;
    if let Some(hash) = &row.entry_code_hash {
        let given = password.map(|code| TokenHash::of(&code).0);
        if given.as_deref() != Some(hash.as_str()) {
            return Err(ApiError::Forbidden("wrong entry code".into()).into());
        }
    }
    let facts = state
        .store()
        .join_facts(&person.player.id)
        .await?
        .ok_or_else(|| ApiError::internal("a person without a player row"))?;
    if facts.bot && !row.bots_allowed {
        return Err(ApiError::Forbidden("bots may not join this tournament".into()).into());
    }
    if let Some(min) = row.min_rating {
        if (facts.rating.round() as i64) < min {
            return Err(
                ApiError::Forbidden(format!("a rating of at least {min} is required")).into(),
            );
        }
    }
    if let Some(min) = row.min_rated_games {
        if facts.rated_games < min {
            return Err(
                ApiError::Forbidden(format!("at least {min} rated games are required")).into(),
            );
        }
    }
    state
        .store()
        .write_arena(ArenaWrite::Join {
            arena_id: row.id.clone(),
            player_id: person.player.id.clone(),
            at: now_ms(),
        })
        .await?;
    tracing::info!(arena = %row.id, player = %person.player.name, "arena join");
    state.arenas.changed(&row.id);
    Ok(Json(json!({"ok": true})))
}

fn lower(value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(s.to_lowercase()),
        other => other,
    }
}

/// `POST /api/tournament/{id}/withdraw`: a pause (the player keeps their
/// points; joining again comes back).
pub async fn withdraw(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let person = person(&state, &headers).await?;
    let row = load(&state, &id).await?;
    state
        .store()
        .write_arena(ArenaWrite::Pause {
            arena_id: row.id.clone(),
            player_id: person.player.id.clone(),
        })
        .await?;
    state.arenas.changed(&row.id);
    Ok(Json(json!({"ok": true})))
}

#[derive(Debug, Deserialize, Default)]
pub struct ResultsQuery {
    #[serde(default)]
    pub nb: Option<String>,
    #[serde(default)]
    pub sheet: Option<String>,
}

/// `GET /api/tournament/{id}/results`: NDJSON, leader first.
pub async fn results(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<ResultsQuery>,
) -> LichessResult<Response> {
    let row = load(&state, &id).await?;
    let nb = match query.nb.as_deref().map(str::trim) {
        None | Some("") => usize::MAX,
        Some(nb) => nb
            .parse::<usize>()
            .map_err(|_| ApiError::BadRequest("nb must be a number".into()))?,
    };
    let with_sheet = matches!(query.sheet.as_deref(), Some("true" | "1"));
    let store = state.store();
    let players = store.arena_players(&row.id).await?;
    let pairings = store.arena_pairings(&row.id).await?;
    let mut body = String::new();
    for line in standings_of(&players, &pairings, row.streakable)
        .iter()
        .take(nb)
    {
        let mut result = json!({
            "rank": line.rank,
            "score": line.score,
            "rating": line.player.rating,
            "username": line.player.name,
        });
        if let Some(performance) = line.performance {
            result["performance"] = json!(performance);
        }
        if with_sheet {
            result["sheet"] = json!({"scores": line.sheet.digits(), "fire": line.fire});
        }
        body.push_str(&result.to_string());
        body.push('\n');
    }
    Ok(([(CONTENT_TYPE, "application/x-ndjson")], Body::from(body)).into_response())
}

/// `GET /api/tournament/{id}/games`: the arena's games in the order they
/// were paired (aborted ones left out), PGN (with `[Event]` the arena's
/// name), or NDJSON.
pub async fn games(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Response> {
    let row = load(&state, &id).await?;
    let ndjson = headers
        .get(ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.contains("application/x-ndjson"));
    let mut body = String::new();
    // Aborted games are no part of an arena (as on lichess).
    for pairing in state.store().arena_pairings(&row.id).await? {
        if pairing.aborted {
            continue;
        }
        let Ok(game) = Uuid::parse_str(&pairing.game_id) else {
            continue;
        };
        // A game deleted by the retention sweep (aborted) is skipped.
        let Ok(live) = state.registry.snapshot(game).await else {
            continue;
        };
        if ndjson {
            let mut json = super::export::game_json(&live);
            json["tournament"] = json!(row.id);
            body.push_str(&json.to_string());
            body.push('\n');
        } else {
            // lichess's separation: two empty lines after each game.
            let pgn = crate::http::api::games::export_pgn(&state, &live, &[]).await?;
            body.push_str(pgn.trim_end());
            body.push_str("\n\n\n");
        }
    }
    let kind = if ndjson {
        "application/x-ndjson"
    } else {
        "application/x-chess-pgn"
    };
    Ok(([(CONTENT_TYPE, kind)], Body::from(body)).into_response())
}
