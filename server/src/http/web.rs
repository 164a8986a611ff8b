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
//! Everything else
//! is looked up as a file; an address that names no file gets the site's own
//! `404.html` (the header and a way back), still with status 404, so a
//! mistyped link is not a dead end and crawlers and scripts still see a
//! missing page. `/api` paths never reach this router's fallback: the API
//! answers its unknown paths with the JSON error of the contract.

use std::path::Path;

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower::ServiceExt;
use tower_http::services::{ServeDir, ServeFile};

pub fn service(web_dir: &Path) -> Router {
    let index = ServeFile::new(web_dir.join("index.html"));
    // `not_found_service` sets the status of whatever it answers to 404;
    // without a `404.html` the answer is the plain, empty 404 of before.
    let files = ServeDir::new(web_dir)
        .append_index_html_on_directories(true)
        .not_found_service(ServeFile::new(web_dir.join("404.html")));
    Router::new()
        .route_service("/games/{id}", index.clone())
        .route_service("/watch", index.clone())
        .route_service("/players/{name}", index.clone())
        .route_service("/login", index.clone())
        .route_service("/signup", index.clone())
        .route_service("/account", index.clone())
        .route_service("/me/games", index.clone())
        .route_service("/challenges/{id}", index.clone())
        .route_service("/mod", index.clone())
        .route_service("/teams", index.clone())
        .route_service("/team/{id}", index.clone())
        .route_service("/arenas", index.clone())
        .route_service("/arenas/{id}", index.clone())
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
