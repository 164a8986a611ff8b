//! The static web client, served from `--web-dir` at `/`.
//!
//! The client is a single page: the routes of the contract's page table that
//! are not files (`/games/{id}`, `/watch`, `/scoreboard`,
//! `/players/{name}`), and the account pages of issue 21 (`/login`,
//! `/signup`, `/account`, `/me/games`, `/challenges/{id}`: the `url` of a
//! challenge) all get `index.html`, and the page's script shows the right
//! view; so do the arenas of issue 38 (`/arenas`, `/arenas/{id}`), the team
//! pages of issue 39 (`/teams`, `/team/{id}`), the analysis board of issue
//! 36 (`/analysis`) and a Swiss tournament's page,
//! `/swiss/{id}`, which shares its route with the TRF file `/swiss/{id}.trf`
//! (the Swiss API's handler calls [`page`] for every name without `.trf`).
//! The page of one thing (a game, a player, a challenge, a team, an arena,
//! a Swiss) answers 404, still with the page, when there is no such thing
//! (issue 36). The account-recovery pages (`/forgot-password`,
//! `/reset-password`, `/verify-email`) and `/help` are pages too.
//! Everything else
//! is looked up as a file; an address that names no file gets the site's own
//! `404.html` (the header and a way back), still with status 404, so a
//! mistyped link is not a dead end and crawlers and scripts still see a
//! missing page. `/api` paths never reach this router's fallback: the API
//! answers its unknown paths with the JSON error of the contract.

use std::path::Path;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::header::{IF_MODIFIED_SINCE, IF_NONE_MATCH};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tower::ServiceExt;
use tower_http::services::{ServeDir, ServeFile};
use uuid::Uuid;

use crate::store::StoreError;
use crate::AppState;

pub fn service(state: &AppState) -> Router {
    let web_dir = &state.config.web_dir;
    let index = ServeFile::new(web_dir.join("index.html"));
    // `not_found_service` sets the status of whatever it answers to 404;
    // without a `404.html` the answer is the plain, empty 404 of before.
    let files = ServeDir::new(web_dir)
        .append_index_html_on_directories(true)
        .not_found_service(ServeFile::new(web_dir.join("404.html")));
    let pages = Router::new()
        .route("/games/{id}", get(game_page))
        .route("/players/{name}", get(player_page))
        .route("/challenges/{id}", get(challenge_page))
        .route("/team/{id}", get(team_page))
        .route("/arenas/{id}", get(arena_page))
        .with_state(state.clone());
    Router::new()
        .merge(pages)
        .route_service("/watch", index.clone())
        .route_service("/login", index.clone())
        .route_service("/signup", index.clone())
        .route_service("/forgot-password", index.clone())
        .route_service("/reset-password", index.clone())
        .route_service("/verify-email", index.clone())
        .route_service("/help", index.clone())
        .route_service("/account", index.clone())
        .route_service("/me/games", index.clone())
        .route_service("/mod", index.clone())
        .route_service("/teams", index.clone())
        .route_service("/arenas", index.clone())
        .route_service("/analysis", index.clone())
        .route_service("/scoreboard", index)
        .fallback_service(files)
}

/// `index.html` for a page whose route another router holds (`/swiss/{id}`,
/// next to `/swiss/{id}.trf`), answered as the routes above answer it.
pub async fn page(web_dir: &Path, request: Request) -> Response {
    match ServeFile::new(web_dir.join("index.html"))
        .oneshot(request)
        .await
    {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    }
    .into_response()
}

/// The page of a game, player, challenge, team, arena or Swiss: the web
/// client, with status 404 when the thing is not there (issue 36), so
/// scripts and crawlers see a missing page while a person sees the page's
/// own "not found" with the header. A database error serves the page as
/// 200: the page itself then says what the API answers.
pub async fn entity_page(
    web_dir: &Path,
    found: Result<bool, StoreError>,
    mut request: Request,
) -> Response {
    let missing = matches!(found, Ok(false));
    if missing {
        // A 404 is never "not modified".
        request.headers_mut().remove(IF_NONE_MATCH);
        request.headers_mut().remove(IF_MODIFIED_SINCE);
    }
    let mut response = page(web_dir, request).await;
    if missing && response.status() == StatusCode::OK {
        *response.status_mut() = StatusCode::NOT_FOUND;
    }
    response
}

/// A path segment as text; a malformed escape names nothing.
fn segment(path: Result<UrlPath<String>, PathRejection>) -> Option<String> {
    path.ok().map(|UrlPath(text)| text)
}

async fn game_page(
    State(state): State<AppState>,
    path: Result<UrlPath<String>, PathRejection>,
    request: Request,
) -> Response {
    let found = match segment(path).and_then(|id| Uuid::parse_str(&id).ok()) {
        Some(id) => state.store().game_exists(id).await,
        None => Ok(false),
    };
    entity_page(&state.config.web_dir, found, request).await
}

async fn player_page(
    State(state): State<AppState>,
    path: Result<UrlPath<String>, PathRejection>,
    request: Request,
) -> Response {
    let found = match segment(path).filter(|name| crate::domain::valid_name(name)) {
        Some(name) => state.store().player_id(&name).await.map(|id| id.is_some()),
        None => Ok(false),
    };
    entity_page(&state.config.web_dir, found, request).await
}

async fn challenge_page(
    State(state): State<AppState>,
    path: Result<UrlPath<String>, PathRejection>,
    request: Request,
) -> Response {
    let found = match segment(path) {
        Some(id) => state.store().challenge(&id).await.map(|c| c.is_some()),
        None => Ok(false),
    };
    entity_page(&state.config.web_dir, found, request).await
}

async fn team_page(
    State(state): State<AppState>,
    path: Result<UrlPath<String>, PathRejection>,
    request: Request,
) -> Response {
    let found = match segment(path) {
        Some(id) => state.store().team(&id).await.map(|t| t.is_some()),
        None => Ok(false),
    };
    entity_page(&state.config.web_dir, found, request).await
}

async fn arena_page(
    State(state): State<AppState>,
    path: Result<UrlPath<String>, PathRejection>,
    request: Request,
) -> Response {
    let found = match segment(path) {
        Some(id) => state.store().arena(&id).await.map(|a| a.is_some()),
        None => Ok(false),
    };
    entity_page(&state.config.web_dir, found, request).await
}
