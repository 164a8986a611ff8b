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
