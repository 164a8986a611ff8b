//! `POST /api/players`: register a name, get a player token (shown once);
//! `GET /api/players/{name}`: the player's page (rating, results, history);
//! `GET /api/players/{name}/games`: their games, paged by a cursor.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use uuid::Uuid;

use super::games::list_limit;
use crate::http::error::ApiError;
use crate::http::extract::{ApiJson, ApiQuery};
use crate::protocol::{
    CreatePlayer, GameList, PlayerCreated, PlayerGamesQuery, PlayerProfile, Status,
};
use crate::store::{Cursor, PlayerGamesFilter};
use crate::token;
use crate::AppState;

/// A name as [`crate::domain::valid_name`] wants it, or 400 saying so.
pub fn validate_name(name: &str) -> Result<(), ApiError> {
    if crate::domain::valid_name(name) {
        Ok(())
    } else {
        Err(ApiError::BadRequest(
            "a name is 1 to 20 characters of A-Z a-z 0-9 _ -".into(),
        ))
    }
}

pub async fn create(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<CreatePlayer>,
) -> Result<(StatusCode, Json<PlayerCreated>), ApiError> {
    validate_name(&request.name)?;
    let token = token::mint()?;
    let id = Uuid::new_v4();
    state
        .store()
        .create_player(id, &request.name, &token.hash)
        .await?;
    tracing::info!(player = %id, name = %request.name, "player registered");
    Ok((
        StatusCode::CREATED,
        Json(PlayerCreated {
            id: id.to_string(),
            name: request.name,
            token: token.secret,
        }),
    ))
}

fn player_not_found() -> ApiError {
    ApiError::NotFound("no such player".into())
}

/// `GET /api/players/{name}`.
pub async fn profile(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<PlayerProfile>, ApiError> {
    // A name that cannot be registered names nobody.
    validate_name(&name).map_err(|_| player_not_found())?;
    state
        .store()
        .player_profile(&name)
        .await?
        .map(Json)
        .ok_or_else(player_not_found)
}

/// `GET /api/players/{name}/games?before=CURSOR&limit=N`.
pub async fn games(
    State(state): State<AppState>,
    Path(name): Path<String>,
    ApiQuery(query): ApiQuery<PlayerGamesQuery>,
) -> Result<Json<GameList>, ApiError> {
    let limit = list_limit(query.limit.as_deref())?;
    let page = games_page(
        &state,
        &name,
        PlayerGamesFilter::All,
        query.before.as_deref(),
        limit,
    )
    .await?;
    Ok(Json(page))
}

/// The filter of a player's games for the list's `status` and `joinable`.
pub fn games_filter(statuses: &[Status], joinable: bool) -> PlayerGamesFilter {
    let has = |status| statuses.contains(&status);
    if joinable {
        return PlayerGamesFilter::Joinable;
    }
    match (
        has(Status::Waiting),
        has(Status::Active),
        has(Status::Finished),
    ) {
        (true, true, false) => PlayerGamesFilter::Unfinished,
        (true, false, false) => PlayerGamesFilter::Waiting,
        (false, true, false) => PlayerGamesFilter::Active,
        (false, false, true) => PlayerGamesFilter::Finished,
        _ => PlayerGamesFilter::All,
    }
}

/// One page of the games of the player called `name`, newest first.
pub async fn games_page(
    state: &AppState,
    name: &str,
    filter: PlayerGamesFilter,
    before: Option<&str>,
    limit: u32,
) -> Result<GameList, ApiError> {
    let before = before
        .filter(|text| !text.trim().is_empty())
        .map(Cursor::parse)
        .transpose()?;
    validate_name(name).map_err(|_| player_not_found())?;
    let player = state
        .store()
        .player_id(name)
        .await?
        .ok_or_else(player_not_found)?;
    let (mut games, next) = state
        .store()
        .player_games(&player, filter, before.as_ref(), limit)
        .await?;
    state.registry.show_presence(&mut games);
    Ok(GameList {
        games,
        next: Some(next),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in ["a", "alice", "Bob_2", "x-y", "abcdefghijklmnopqrst"] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "abcdefghijklmnopqrstu",
            "<b>bob</b>",
            "al ice",
            "élodie",
            "a\"b",
            "a\nb",
        ] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
    }
}

/// Players a search answers at most, and by default.
const SEARCH_MAX: u32 = 20;
const SEARCH_DEFAULT: u32 = 10;
/// People the online list shows at most.
const ONLINE_MAX: usize = 100;

/// `GET /api/players?prefix=&limit=`.
#[derive(Debug, serde::Deserialize)]
pub struct SearchQuery {
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default)]
    pub limit: Option<String>,
}

/// `GET /api/players?prefix=ca&limit=10`: the players whose name starts
/// with `prefix`, ignoring case (issue 36: the header's search).
pub async fn search(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<SearchQuery>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let prefix = query.prefix.unwrap_or_default();
    if prefix.is_empty() {
        return Err(ApiError::BadRequest(
            "prefix is required: the first letters of a name".into(),
        ));
    }
    if !crate::domain::valid_name(&prefix) {
        return Err(ApiError::BadRequest(
            "prefix is 1 to 20 characters of A-Z a-z 0-9 _ - (a name's first letters)".into(),
        ));
    }
    let limit = match query.limit.as_deref() {
        None => SEARCH_DEFAULT,
        Some(text) => text
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=SEARCH_MAX).contains(n))
            .ok_or_else(|| {
                ApiError::BadRequest(format!("limit is a whole number from 1 to {SEARCH_MAX}"))
            })?,
    };
    let events = state.registry.events();
    let players: Vec<serde_json::Value> = state
        .store()
        .search_players(&prefix, limit)
        .await?
        .into_iter()
        .map(|hit| {
            let online = events.is_online(&hit.id);
            serde_json::json!({
                "name": hit.name,
                "rating": hit.rating,
                "provisional": hit.provisional,
                "online": online,
            })
        })
        .collect();
    Ok(Json(serde_json::json!({ "players": players })))
}

/// `GET /api/online`: the people with a page of this site open now (an
/// event stream on any node of the cluster), by name, each with the game
/// they are playing (`playing`: its id, or null in the lobby). Two queries
/// however many are online: the players, then the games of those shown.
pub async fn online(State(state): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    let ids = state.registry.events().online_players();
    let mut people = state.store().players_by_ids(&ids).await?;
    people.sort_by_cached_key(|person| person.name.to_lowercase());
    let total = people.len();
    people.truncate(ONLINE_MAX);
    let shown: Vec<String> = people.iter().map(|person| person.id.clone()).collect();
    let playing = state.store().active_games_of(&shown).await?;
    let players: Vec<serde_json::Value> = people
        .iter()
        .map(|person| {
            serde_json::json!({
                "name": person.name,
                "rating": person.rating,
                "provisional": person.provisional,
                "playing": playing.get(&person.id),
            })
        })
        .collect();
    Ok(Json(
        serde_json::json!({ "players": players, "total": total }),
    ))
}

/// `GET /api/players/{name}/stakes`: what the asking account stands to
/// win or lose in a rated game against `name` (issue 36: shown before a
/// challenge is sent or accepted).
pub async fn stakes(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: axum::http::HeaderMap,
) -> Result<Json<serde_json::Value>, ApiError> {
    let me = crate::identity::required(state.store(), &headers).await?;
    validate_name(&name).map_err(|_| player_not_found())?;
    let them = state
        .store()
        .player_id(&name)
        .await?
        .ok_or_else(player_not_found)?;
    if them == me.player.id {
        return Err(ApiError::SamePlayer);
    }
    let side = |player: &str, opponent: &str| {
        let store = state.store().clone();
        let (player, opponent) = (player.to_string(), opponent.to_string());
        async move {
            let stakes = store
                .rating_stakes(&player, &opponent)
                .await?
                .ok_or_else(player_not_found)?;
            Ok::<_, ApiError>(serde_json::json!({
                "win": stakes[0], "draw": stakes[1], "loss": stakes[2],
            }))
        }
    };
    let (Some((mine, _)), Some((theirs, _))) = (
        state.store().player_by_id(&me.player.id).await?,
        state.store().player_by_id(&them).await?,
    ) else {
        return Err(player_not_found());
    };
    let mut you = side(&me.player.id, &them).await?;
    you["name"] = mine.name.into();
    you["rating"] = mine.rating.rating.into();
    let mut opponent = side(&them, &me.player.id).await?;
    opponent["name"] = theirs.name.into();
    opponent["rating"] = theirs.rating.rating.into();
    Ok(Json(
        serde_json::json!({ "you": you, "opponent": opponent }),
    ))
}
