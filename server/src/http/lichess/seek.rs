//! lichess's `POST /api/board/seek` (issue 38): a seek for a game with
//! anyone at this clock.
//!
//! - Real-time (`time` minutes and `increment` seconds): the person enters
//!   that clock's pool (`pools/`); the request stays open, sending a bare
//!   newline every few seconds, until the pool pairs them (the game's
//!   `gameStart` arrives on their event stream) and then ends. Closing the
//!   request cancels the seek.
//! - Correspondence (`days`): an open untimed game is posted in the lobby
//!   at once and the answer is `{"id": GAME}`, as lichess answers.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::time::Instant;
use uuid::Uuid;

use super::{Form, LichessResult};
use crate::http::api::challenges::{boolean, clock_of, draw_color, number, text};
use crate::http::error::ApiError;
use crate::identity::{self, Scope};
use crate::live::game::LiveGame;
use crate::pools::{Entrant, PoolKey, Pools};
use crate::protocol::{SeatKind, Side};
use crate::store::now_ms;
use crate::token;
use crate::AppState;

/// A bare newline this often keeps the request (and proxies) alive.
const KEEP_ALIVE: Duration = Duration::from_secs(6);

#[derive(Debug, Deserialize, Default)]
pub struct SeekForm {
    #[serde(default)]
    pub time: Option<Value>,
    #[serde(default)]
    pub increment: Option<Value>,
    #[serde(default)]
    pub days: Option<Value>,
    #[serde(default)]
    pub rated: Option<Value>,
    #[serde(default)]
    pub color: Option<Value>,
    #[serde(default)]
    pub variant: Option<Value>,
    #[serde(default, rename = "ratingRange")]
    pub rating_range: Option<Value>,
}

/// `ratingRange`: `1500-1800`, or empty for any.
fn rating_range(value: &Option<Value>) -> Result<Option<(f64, f64)>, ApiError> {
    let Some(range) = text(value) else {
        return Ok(None);
    };
    let bad = || ApiError::BadRequest("ratingRange must look like 1500-1800".into());
    let (low, high) = range.split_once('-').ok_or_else(bad)?;
    let low: f64 = low.trim().parse().map_err(|_| bad())?;
    let high: f64 = high.trim().parse().map_err(|_| bad())?;
    if !(low.is_finite() && high.is_finite()) || low > high {
        return Err(bad());
    }
    Ok(Some((low, high)))
}

/// `POST /api/board/seek`.
pub async fn seek(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<SeekForm>,
) -> LichessResult<Response> {
    let person = identity::required(state.store(), &headers).await?;
    if !person.scopes.has(Scope::Play) {
        return Err(ApiError::MissingScope(Scope::Play.as_str()).into());
    }
    if let Some(variant) = text(&form.variant).filter(|v| v != "standard") {
        return Err(ApiError::BadRequest(format!("variant {variant:?} is not played here")).into());
    }
    let rated = boolean(&form.rated, "rated")?.unwrap_or(false);
    let wish = text(&form.color).unwrap_or_else(|| "random".into());
    // Validated whatever the kind of seek.
    draw_color(&wish)?;
    let range = rating_range(&form.rating_range)?;
    let time = number(&form.time, "time")?;
    let increment = number(&form.increment, "increment")?;
    let days = number(&form.days, "days")?;
    match (time, days) {
        (Some(_), Some(_)) => {
            Err(ApiError::BadRequest("send either time and increment, or days".into()).into())
        }
        (None, Some(days)) => correspondence(&state, person.player, days, &wish).await,
        (time, None) => {
            let minutes =
                time.ok_or_else(|| ApiError::BadRequest("time (minutes) is required".into()))?;
            let clock = clock_of(Some(minutes * 60.0), Some(increment.unwrap_or(0.0)))?
                .ok_or_else(|| ApiError::BadRequest("a clock is required".into()))?;
            if clock.initial_ms % 1000 != 0 {
                return Err(ApiError::BadRequest("time must be whole seconds".into()).into());
            }
            let pool = PoolKey {
                initial_s: u32::try_from(clock.initial_ms / 1000).unwrap_or(0),
                increment_s: u32::try_from(clock.increment_ms / 1000).unwrap_or(0),
            };
            let colour = Side::parse(&wish);
            let entrant = Entrant {
                player: Some(person.player.clone()),
                rated,
                colour,
                range,
            };
            let ticket = state.pools.enter(pool, entrant).await?;
            tracing::info!(player = %person.player.name, pool = %pool.name(), "board seek");
            Ok(held_open(state.pools.clone(), ticket))
        }
    }
}

/// Leaves the pool when the request's body is dropped (the client closed
/// it, or the server shuts down) before a pairing.
struct SeekGuard {
    pools: Pools,
    ticket: String,
    paired: bool,
}

impl Drop for SeekGuard {
    fn drop(&mut self) {
        if !self.paired {
            self.pools.leave(&self.ticket);
        }
    }
}

fn held_open(pools: Pools, ticket: crate::pools::Ticket) -> Response {
    let guard = SeekGuard {
        pools,
        ticket: ticket.id,
        paired: false,
    };
    let lines = futures_util::stream::unfold(
        (guard, ticket.paired, false),
        |(mut guard, mut paired, done)| async move {
            if done {
                return None;
            }
            tokio::select! {
                told = paired.recv() => {
                    guard.paired = told.is_some();
                    // Paired (or the pool let go): the request ends.
                    Some((Ok::<Bytes, Infallible>(Bytes::from_static(b"\n")), (guard, paired, true)))
                }
                _ = tokio::time::sleep(KEEP_ALIVE) => {
                    Some((Ok(Bytes::from_static(b"\n")), (guard, paired, false)))
                }
            }
        },
    );
    (
        [(CONTENT_TYPE, "text/plain; charset=utf-8")],
        Body::from_stream(lines),
    )
        .into_response()
}

/// A correspondence seek: an open untimed game in the lobby, answered at
/// once with its id.
async fn correspondence(
    state: &AppState,
    player: crate::domain::PlayerRef,
    days: f64,
    wish: &str,
) -> LichessResult<Response> {
    if ![1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 14.0].contains(&days) {
        return Err(ApiError::BadRequest("days must be 1, 2, 3, 5, 7, 10 or 14".into()).into());
    }
    let (_, side) = draw_color(wish)?;
    let mut live = LiveGame::new(
        Uuid::new_v4(),
        now_ms(),
        [SeatKind::Human, SeatKind::Human],
        None,
        crate::domain::Variant::Standard,
        None,
    )?;
    live.take_seat(side, token::mint()?.hash, Some(player), Instant::now())?;
    state
        .store()
        .insert_game(&live.record(), &live.history())
        .await?;
    let id = live.id;
    state.registry.insert(live).await?;
    tracing::info!(game = %id, "correspondence seek");
    Ok(axum::Json(json!({"id": id.to_string()})).into_response())
}
