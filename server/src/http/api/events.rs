//! `GET /api/stream/event` (issue 21; lichess's event stream, issue 24):
//! the person's events as NDJSON, one JSON object a line, and a bare
//! newline every [`KEEP_ALIVE`] so clients and proxies see the stream is
//! alive. It opens with what is open now: a `challenge` line for each open
//! challenge to or from the person, and a `gameStart` line for each of
//! their unfinished games; then every change as it happens. It ends when
//! the server shuts down (the client reconnects).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};

use crate::http::lichess::LichessResult;
use crate::identity::{self, Scope};
use crate::protocol::lichess as shapes;
use crate::store::now_ms;
use crate::AppState;

/// How often a bare newline is sent when nothing happens.
pub const KEEP_ALIVE: Duration = Duration::from_secs(6);

/// `GET /api/stream/event`.
pub async fn stream(State(state): State<AppState>, headers: HeaderMap) -> LichessResult<Response> {
    let person = identity::required(state.store(), &headers).await?;
    if !(person.scopes.has(Scope::Challenge)
        || person.scopes.has(Scope::Bot)
        || person.scopes.has(Scope::Play))
    {
        return Err(crate::http::error::ApiError::MissingScope(Scope::Challenge.as_str()).into());
    }
    // Subscribe first, then read what is open: an event in between is
    // sent twice at worst, never lost.
    let receiver = state.registry.events().subscribe(&person.player.id);
    let mut opening = Vec::new();
    let base = state.config.public_base();
    for row in state.store().open_challenges(&person.player.id).await? {
        let challenge = shapes::challenge(&row, Some(&person.player.id), &base, now_ms());
        opening.push(json!({"type": "challenge", "challenge": challenge}));
    }
    for game in crate::http::lichess::account::now_playing(&state, &person.player.id).await? {
        opening.push(json!({"type": "gameStart", "game": game}));
    }
    let opening: Vec<Bytes> = opening
        .into_iter()
        .map(|event| Bytes::from(format!("{event}\n")))
        .collect();
    let shutdown = state.registry.shutdown_signal();
    let lines = futures_util::stream::unfold(
        (opening.into_iter(), receiver, shutdown),
        move |(mut opening, mut receiver, mut shutdown)| async move {
            if let Some(line) = opening.next() {
                return Some((Ok::<Bytes, Infallible>(line), (opening, receiver, shutdown)));
            }
            let line = next_line(&mut receiver, &mut shutdown).await?;
            Some((Ok(line), (opening, receiver, shutdown)))
        },
    );
    let lines = while_valid(lines, Credential::of(&headers), state.store().clone());
    Ok((
        [(CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(lines),
    )
        .into_response())
}

/// `lines` for as long as `credential` names someone: it is checked again
/// before a line once [`KEEP_ALIVE`] has passed since the last check (a
/// quiet stream sends a keep-alive that often, so a stream busy with
/// events is cut as soon as a quiet one). A revoked token or an ended
/// session ("log out everywhere", a new password) ends the stream.
pub fn while_valid<S>(
    lines: S,
    credential: Credential,
    store: crate::store::Store,
) -> impl futures_util::Stream<Item = Result<Bytes, Infallible>> + Send
where
    S: futures_util::Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
{
    use futures_util::StreamExt;
    let checked = tokio::time::Instant::now();
    futures_util::stream::unfold(
        (Box::pin(lines), checked),
        move |(mut lines, mut checked)| {
            let store = store.clone();
            let credential = credential.clone();
            async move {
                let line = lines.next().await?;
                if checked.elapsed() >= KEEP_ALIVE {
                    if !credential.still_valid(&store).await {
                        return None;
                    }
                    checked = tokio::time::Instant::now();
                }
                Some((line, (lines, checked)))
            }
        },
    )
}

/// The credential a stream was opened with, checked again while it runs.
#[derive(Clone)]
pub struct Credential(Option<String>);

impl Credential {
    pub fn of(headers: &HeaderMap) -> Credential {
        let bearer = crate::identity::credentials::bearer(headers).ok().flatten();
        Credential(bearer.or_else(|| identity::session_cookie(headers)))
    }

    /// Whether it still names someone (a failed read counts as yes: a
    /// stream is not cut for a database hiccup).
    pub async fn still_valid(&self, store: &crate::store::Store) -> bool {
        match &self.0 {
            None => false,
            Some(secret) => !matches!(identity::of_token(store, secret).await, Ok(None)),
        }
    }
}

/// The next line of an event stream: an event, or a keep-alive newline
/// after [`KEEP_ALIVE`] of silence; `None` at shutdown.
async fn next_line(
    receiver: &mut broadcast::Receiver<Arc<str>>,
    shutdown: &mut watch::Receiver<bool>,
) -> Option<Bytes> {
    if *shutdown.borrow() {
        return None;
    }
    loop {
        tokio::select! {
            _ = shutdown.changed() => return None,
            event = tokio::time::timeout(KEEP_ALIVE, receiver.recv()) => match event {
                Err(_) => return Some(Bytes::from_static(b"\n")),
                Ok(Ok(line)) => return Some(Bytes::from(format!("{line}\n"))),
                // Events are not states: one skipped is lost to this
                // stream, which says nothing of it (lichess's streams do
                // the same); the opening lines of a reconnect catch up.
                Ok(Err(RecvError::Lagged(_))) => continue,
                Ok(Err(RecvError::Closed)) => return None,
            },
        }
    }
}
