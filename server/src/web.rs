//! The static web client, served from `--web-dir` at `/`.
//!
//! The client is a single page: the routes of the contract's page table that
//! are not files (`/games/{id}`, `/watch`, `/scoreboard`,
//! `/players/{name}`) all get
//! `index.html`, and the page's script shows the right view. Everything else
//! is looked up as a file.

use std::path::Path;

use axum::Router;
use tower_http::services::{ServeDir, ServeFile};

pub fn service(web_dir: &Path) -> Router {
    let index = ServeFile::new(web_dir.join("index.html"));
    Router::new()
        .route_service("/games/{id}", index.clone())
        .route_service("/watch", index.clone())
        .route_service("/players/{name}", index.clone())
        .route_service("/scoreboard", index)
        .fallback_service(ServeDir::new(web_dir).append_index_html_on_directories(true))
}
