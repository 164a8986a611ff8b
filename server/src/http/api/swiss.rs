//! Swiss tournaments (issue 39), in lichess's Swiss API shapes (what
//! berserk's `tournaments` Swiss calls use) plus Rookery's additions.
//! Errors have lichess's flat shape; bodies are form-encoded or JSON.
//!
//! - `POST /api/swiss/new/{teamId}`: a team leader creates one → lichess's
//!   `SwissTournament`
//! - `GET /api/swiss/{id}` → the same, plus `standings` and `rounds`
//! - `POST /api/swiss/{id}/join`, `POST /api/swiss/{id}/withdraw` →
//!   `{"ok": true}`
//! - `POST|DELETE /api/swiss/{id}/bye` (Rookery's): ask for a bye in the
//!   next round, or take the request back
//! - `POST /api/swiss/{id}/schedule-next-round` (`date`, ms): a leader
//!   starts the next round then (`{"ok": true}`)
//! - `GET /api/swiss/{id}/results` (`nb`) → NDJSON, best first
//! - `GET /api/swiss/{id}/games` → the games' PGN
//! - `GET /swiss/{id}.trf` → the TRF-16 file (and `GET /swiss/{id}`, the
//!   tournament's web page: the client's `index.html`)
//! - `GET /api/team/{teamId}/swiss` (`max`) → NDJSON, newest first
//! - `GET /ws/swiss/{id}`: the page's socket, the tournament on each change

use axum::body::Body;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;

use super::challenges::{boolean, number, text};
use super::teams::member;
use crate::http::error::ApiError;
use crate::http::extract::ApiQuery;
use crate::http::lichess::{Form, LichessResult};
use crate::identity;
use crate::tournaments::swiss::record::Loaded;
use crate::tournaments::swiss::{self, view, SwissError, SwissTerms};
use crate::AppState;

pub fn routes(router: Router<AppState>) -> Router<AppState> {
    router
        .route("/api/swiss/new/{team}", post(create))
        .route("/api/swiss/{id}", get(show))
        .route("/api/swiss/{id}/join", post(join))
        .route("/api/swiss/{id}/withdraw", post(withdraw))
        .route(
            "/api/swiss/{id}/bye",
            post(|s: State<AppState>, p: Path<String>, h: HeaderMap| bye(s, p, h, true))
                .delete(|s: State<AppState>, p: Path<String>, h: HeaderMap| bye(s, p, h, false)),
        )
        .route("/api/swiss/{id}/schedule-next-round", post(schedule))
        .route("/api/swiss/{id}/results", get(results))
        .route("/api/swiss/{id}/games", get(games))
        .route("/api/team/{team}/swiss", get(of_team))
        .route("/swiss/{file}", get(trf))
        .route("/ws/swiss/{id}", get(socket))
}

async fn load(state: &AppState, id: &str) -> Result<Loaded, ApiError> {
    Loaded::load(state.store(), id)
        .await?
        .ok_or_else(|| SwissError::NotFound(format!("no such Swiss tournament: {id}")).into())
}

#[derive(Debug, Deserialize, Default)]
pub struct CreateForm {
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    description: Option<Value>,
    #[serde(default, rename = "clock.limit")]
    clock_limit: Option<Value>,
    #[serde(default, rename = "clock.increment")]
    clock_increment: Option<Value>,
    #[serde(default, rename = "nbRounds")]
    rounds: Option<Value>,
    #[serde(default, rename = "startsAt")]
    starts_at: Option<Value>,
    #[serde(default, rename = "roundInterval")]
    round_interval: Option<Value>,
    #[serde(default)]
    rated: Option<Value>,
    #[serde(default)]
    variant: Option<Value>,
    #[serde(default)]
    position: Option<Value>,
    #[serde(default)]
    password: Option<Value>,
    #[serde(default, rename = "forbiddenPairings")]
    forbidden_pairings: Option<Value>,
    #[serde(default, rename = "manualPairings")]
    manual_pairings: Option<Value>,
    #[serde(default, rename = "conditions.minRating.rating")]
    min_rating: Option<Value>,
    #[serde(default, rename = "conditions.maxRating.rating")]
    max_rating: Option<Value>,
    #[serde(default, rename = "conditions.nbRatedGame.nb")]
    rated_games: Option<Value>,
    #[serde(default, rename = "conditions.allowList")]
    allow_list: Option<Value>,
    /// Rookery's: a requested bye's points (0, 0.5 or 1; 0.5 by default).
    #[serde(default, rename = "byePoints")]
    bye_points: Option<Value>,
}

/// A whole number of a form or JSON value.
fn whole(value: &Option<Value>, what: &str) -> Result<Option<i64>, ApiError> {
    match number(value, what)? {
        None => Ok(None),
        Some(n) if n.fract() == 0.0 && n.abs() < 1e15 => Ok(Some(n as i64)),
        Some(_) => Err(ApiError::BadRequest(format!(
            "{what} must be a whole number"
        ))),
    }
}

impl CreateForm {
    fn terms(&self) -> Result<SwissTerms, ApiError> {
        if let Some(variant) = text(&self.variant).filter(|v| v != "standard") {
            return Err(ApiError::BadRequest(format!(
                "variant {variant:?} is not played in Swiss tournaments here"
            )));
        }
        for (value, what) in [
            (&self.position, "position"),
            (&self.password, "password"),
            (&self.forbidden_pairings, "forbiddenPairings"),
            (&self.manual_pairings, "manualPairings"),
            (&self.max_rating, "conditions.maxRating.rating"),
            (&self.allow_list, "conditions.allowList"),
        ] {
            if text(value).is_some() || matches!(value, Some(Value::Number(_))) {
                return Err(ApiError::BadRequest(format!(
                    "{what} is not supported by Rookery's Swiss tournaments"
                )));
            }
        }
        let required = |value: &Option<Value>, what: &str| {
            whole(value, what)?.ok_or_else(|| ApiError::BadRequest(format!("{what} is required")))
        };
        let bye_points = match number(&self.bye_points, "byePoints")? {
            None => None,
            Some(p) if p == 0.0 || p == 0.5 || p == 1.0 => Some((p * 2.0) as i64),
            Some(_) => return Err(ApiError::BadRequest("byePoints is 0, 0.5 or 1".into())),
        };
        Ok(SwissTerms {
            name: text(&self.name),
            description: text(&self.description),
            clock_limit: required(&self.clock_limit, "clock.limit")?,
            clock_increment: required(&self.clock_increment, "clock.increment")?,
            rounds: required(&self.rounds, "nbRounds")?,
            round_interval: whole(&self.round_interval, "roundInterval")?,
            starts_at: whole(&self.starts_at, "startsAt")?,
            rated: boolean(&self.rated, "rated")?,
            min_rating: whole(&self.min_rating, "conditions.minRating.rating")?,
            min_rated_games: whole(&self.rated_games, "conditions.nbRatedGame.nb")?,
            bye_points,
        })
    }
}

/// `POST /api/swiss/new/{teamId}`.
async fn create(
    State(state): State<AppState>,
    Path(team): Path<String>,
    headers: HeaderMap,
    Form(form): Form<CreateForm>,
) -> LichessResult<Json<Value>> {
    let person = member(&state, &headers).await?;
    let terms = form.terms()?;
    let row = swiss::create(state.store(), &person.player, &team, terms).await?;
    tracing::info!(swiss = %row.id, team = %row.team_id, "Swiss created");
    state.swiss.changed(&row.id).await;
    let loaded = load(&state, &row.id).await?;
    Ok(Json(view::info(&loaded, None)))
}

/// `GET /api/swiss/{id}`: lichess's info (`verdicts` for the person
/// asking), with Rookery's `standings` and `rounds`.
async fn show(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let loaded = load(&state, &id).await?;
    let viewer = identity::identify(state.store(), &headers).await?;
    let verdicts = match &viewer {
        Some(person) => Some(swiss::verdicts(state.store(), &loaded.row, &person.player).await?),
        None => None,
    };
    let mut info = view::info(&loaded, verdicts.as_deref());
    info["standings"] = Value::Array(view::standings_lines(&loaded));
    info["rounds"] = Value::Array(view::rounds(&loaded));
    if let Some(person) = viewer {
        let me = loaded
            .players
            .iter()
            .find(|p| p.player.id == person.player.id);
        info["me"] = json!({
            "joined": me.is_some_and(|p| !p.withdrawn),
            "absentNext": me.is_some_and(|p| p.absent_next),
            "leader": state.store().membership(&loaded.row.team_id, &person.player.id).await? == Some(true),
        });
    }
    Ok(Json(info))
}

fn ok() -> Json<Value> {
    Json(json!({"ok": true}))
}

/// `POST /api/swiss/{id}/join` (a `password` is accepted and ignored:
/// Rookery's Swiss tournaments have none).
async fn join(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let person = member(&state, &headers).await?;
    swiss::join(state.store(), &person.player, &id).await?;
    state.swiss.changed(&id).await;
    Ok(ok())
}

/// `POST /api/swiss/{id}/withdraw`.
async fn withdraw(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let person = member(&state, &headers).await?;
    swiss::withdraw(state.store(), &person.player, &id).await?;
    state.swiss.changed(&id).await;
    Ok(ok())
}

/// `POST|DELETE /api/swiss/{id}/bye`.
async fn bye(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    absent: bool,
) -> LichessResult<Json<Value>> {
    let person = member(&state, &headers).await?;
    swiss::absent(state.store(), &person.player, &id, absent).await?;
    state.swiss.changed(&id).await;
    Ok(ok())
}

#[derive(Debug, Deserialize, Default)]
pub struct ScheduleForm {
    #[serde(default)]
    date: Option<Value>,
}

/// `POST /api/swiss/{id}/schedule-next-round`: `date` in ms (the past or
/// none: now).
async fn schedule(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<ScheduleForm>,
) -> LichessResult<Json<Value>> {
    let person = member(&state, &headers).await?;
    let at = whole(&form.date, "date")?.unwrap_or(0);
    swiss::schedule(state.store(), &person.player, &id, at).await?;
    state.swiss.changed(&id).await;
    // lichess's spec says 204, but berserk reads a JSON body: both read
    // 200 with `{"ok": true}`.
    Ok(ok())
}

fn ndjson(lines: impl IntoIterator<Item = Value>) -> Response {
    let mut body = String::new();
    for line in lines {
        body.push_str(&line.to_string());
        body.push('\n');
    }
    ([(CONTENT_TYPE, "application/x-ndjson")], Body::from(body)).into_response()
}

#[derive(Debug, Deserialize, Default)]
pub struct ResultsQuery {
    #[serde(default)]
    nb: Option<String>,
    #[serde(default)]
    max: Option<String>,
}

fn limit(value: Option<&str>, what: &str) -> Result<usize, ApiError> {
    match value.map(str::trim) {
        None | Some("") => Ok(usize::MAX),
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| ApiError::BadRequest(format!("{what} is a number from 1"))),
    }
}

/// `GET /api/swiss/{id}/results`.
async fn results(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<ResultsQuery>,
) -> LichessResult<Response> {
    let nb = limit(query.nb.as_deref(), "nb")?;
    let loaded = load(&state, &id).await?;
    Ok(ndjson(view::standings_lines(&loaded).into_iter().take(nb)))
}

/// `GET /api/team/{teamId}/swiss`.
async fn of_team(
    State(state): State<AppState>,
    Path(team): Path<String>,
    ApiQuery(query): ApiQuery<ResultsQuery>,
) -> LichessResult<Response> {
    let max = limit(query.max.as_deref(), "max")?;
    let team = crate::teams::team(state.store(), &team).await?;
    let rows = state
        .store()
        .team_swiss(&team.id, i64::try_from(max).unwrap_or(i64::MAX))
        .await?;
    let mut lines = Vec::with_capacity(rows.len());
    for row in rows {
        if let Some(loaded) = Loaded::load(state.store(), &row.id).await? {
            lines.push(view::info(&loaded, None));
        }
    }
    Ok(ndjson(lines))
}

/// `GET /api/swiss/{id}/games`: every game, by round and board, as PGN
/// (`[Event]` the tournament, `[Round]` its round).
async fn games(State(state): State<AppState>, Path(id): Path<String>) -> LichessResult<Response> {
    let loaded = load(&state, &id).await?;
    let mut body = String::new();
    for pairing in &loaded.pairings {
        let Some(game) = pairing
            .game_id
            .as_deref()
            .and_then(|g| uuid::Uuid::parse_str(g).ok())
        else {
            continue;
        };
        // A game the retention sweep deleted is left out.
        let Ok(live) = state.registry.snapshot(game).await else {
            continue;
        };
        body.push_str(&super::games::export_pgn(&state, &live, &[]).await?);
        body.push_str("\n\n");
    }
    Ok(([(CONTENT_TYPE, "application/x-chess-pgn")], body).into_response())
}

/// `GET /swiss/{id}.trf`: the TRF file; `GET /swiss/{id}`: the
/// tournament's web page (one route, so that the two do not clash).
async fn trf(
    State(state): State<AppState>,
    Path(file): Path<String>,
    request: Request,
) -> LichessResult<Response> {
    let Some(id) = file.strip_suffix(".trf") else {
        let found = state.store().swiss(&file).await.map(|s| s.is_some());
        return Ok(crate::http::web::entity_page(&state.config.web_dir, found, request).await);
    };
    let loaded = load(&state, id).await?;
    Ok((
        [(CONTENT_TYPE, "text/plain; charset=utf-8")],
        view::trf_text(&loaded),
    )
        .into_response())
}

/// `GET /ws/swiss/{id}`: the tournament now, then again after every change
/// (a round paired, a result, a player joining), as `page_message`.
async fn socket(
    ws: WebSocketUpgrade,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> LichessResult<Response> {
    // Subscribed before the first read, so no change falls in between.
    let changes = state.swiss.watch(&id);
    let loaded = load(&state, &id).await?;
    let first = view::page_message(&loaded).to_string();
    let shutdown = state.registry.shutdown_signal();
    Ok(ws.on_upgrade(move |socket| follow(socket, first, changes, shutdown)))
}

async fn follow(
    mut socket: WebSocket,
    first: String,
    mut changes: tokio::sync::broadcast::Receiver<std::sync::Arc<str>>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    if socket.send(Message::Text(first.into())).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            change = changes.recv() => match change {
                Ok(text) => {
                    if socket.send(Message::Text(text.to_string().into())).await.is_err() {
                        return;
                    }
                }
                // Fell behind: the next change is complete anyway.
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                // The page sends nothing but pings, which axum answers.
                Some(Ok(_)) => {}
            },
            _ = shutdown.changed() => {
                // Best effort: the connection ends either way.
                drop(socket.send(Message::Close(None)).await);
                return;
            }
        }
    }
}
