//! Teams (issue 39), in lichess's team API shapes (what berserk's `teams`
//! client calls) plus Rookery's own creation and leadership routes. Errors
//! have lichess's flat shape, `{"error": "..."}`; bodies are form-encoded
//! or JSON.
//!
//! - `POST /api/team` (Rookery's): create (`name`, `description`, `open`,
//!   `password`) → the team
//! - `GET /api/team/{teamId}` → the team (`joined`, `requested` for the
//!   person asking)
//! - `GET /api/team/{teamId}/users` → the members, NDJSON, newest first
//! - `POST /team/{teamId}/join` (and `/api/team/{teamId}/join`): `message`,
//!   `password` → `{"ok": true}`
//! - `POST /team/{teamId}/quit` (and `/api/team/{teamId}/quit`)
//! - `GET /api/team/{teamId}/requests` (`declined`) → the requests
//! - `POST /api/team/{teamId}/request/{userId}/accept|decline`
//! - `POST /api/team/{teamId}/kick/{userId}`
//! - `PUT|DELETE /api/team/{teamId}/leaders/{userId}` (Rookery's): appoint,
//!   step down
//! - `GET /api/team/of/{username}` → that person's teams
//! - `GET /api/team/all` (`page`) → lichess's paginator of teams

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use super::challenges::{boolean, text};
use crate::domain::PlayerRef;
use crate::http::error::ApiError;
use crate::http::extract::ApiQuery;
use crate::http::lichess::{Form, LichessResult};
use crate::identity::{self, Identity, Scope};
use crate::protocol::lichess as shapes;
use crate::store::teams::{TeamMember, TeamRow};
use crate::teams::{self, Joined, TeamTerms};
use crate::AppState;

/// The team routes.
pub fn routes(router: Router<AppState>) -> Router<AppState> {
    router
        .route("/api/team", post(create))
        .route("/api/team/all", get(all))
        .route("/api/team/of/{username}", get(teams_of))
        .route("/api/team/{team}", get(show))
        .route("/api/team/{team}/users", get(members))
        .route("/team/{team}/join", post(join))
        .route("/api/team/{team}/join", post(join))
        .route("/team/{team}/quit", post(quit))
        .route("/api/team/{team}/quit", post(quit))
        .route("/api/team/{team}/requests", get(requests))
        .route(
            "/api/team/{team}/request/{user}/accept",
            post(
                |s: State<AppState>, p: Path<(String, String)>, h: HeaderMap| answer(s, p, h, true),
            ),
        )
        .route(
            "/api/team/{team}/request/{user}/decline",
            post(
                |s: State<AppState>, p: Path<(String, String)>, h: HeaderMap| {
                    answer(s, p, h, false)
                },
            ),
        )
        .route("/api/team/{team}/kick/{user}", post(kick))
        .route(
            "/api/team/{team}/leaders/{user}",
            put(|s: State<AppState>, p: Path<(String, String)>, h: HeaderMap| lead(s, p, h, true))
                .delete(
                    |s: State<AppState>, p: Path<(String, String)>, h: HeaderMap| {
                        lead(s, p, h, false)
                    },
                ),
        )
}

/// The person acting, with a token that may play (sessions and player
/// tokens may do everything).
pub async fn member(state: &AppState, headers: &HeaderMap) -> Result<Identity, ApiError> {
    let person = identity::required(state.store(), headers).await?;
    person.require(Scope::Play)?;
    Ok(person)
}

fn ok() -> Json<Value> {
    Json(json!({"ok": true}))
}

/// lichess's `LightUser`.
pub fn light_user(player: &PlayerRef) -> Value {
    json!({"id": player.name.to_lowercase(), "name": player.name})
}

/// lichess's `Team`, with `joined` and `requested` for `viewer`.
async fn team_json(
    state: &AppState,
    row: &TeamRow,
    viewer: Option<&PlayerRef>,
) -> Result<Value, ApiError> {
    let leaders = state.store().team_members(&row.id, true).await?;
    let founder = leaders
        .iter()
        .find(|m| m.player.id == row.created_by)
        .or(leaders.last())
        .map(|m| light_user(&m.player));
    let mut team = json!({
        "id": row.id,
        "name": row.name,
        "description": row.description,
        "open": row.open,
        "leader": founder,
        "leaders": leaders.iter().map(|m| light_user(&m.player)).collect::<Vec<_>>(),
        "nbMembers": row.members,
        // Rookery's: whether joining needs the team's password.
        "password": row.password_hash.is_some(),
    });
    if let Some(viewer) = viewer {
        let store = state.store();
        team["joined"] = json!(store.membership(&row.id, &viewer.id).await?.is_some());
        team["requested"] = json!(store.team_request_of(&row.id, &viewer.id).await? == Some(false));
    }
    Ok(team)
}

async fn viewer(state: &AppState, headers: &HeaderMap) -> Result<Option<PlayerRef>, ApiError> {
    Ok(identity::identify(state.store(), headers)
        .await?
        .map(|person| person.player))
}

#[derive(Debug, Deserialize, Default)]
pub struct CreateForm {
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    description: Option<Value>,
    #[serde(default)]
    open: Option<Value>,
    #[serde(default)]
    password: Option<Value>,
}

/// `POST /api/team`.
async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<CreateForm>,
) -> LichessResult<Json<Value>> {
    let person = member(&state, &headers).await?;
    let terms = TeamTerms {
        name: text(&form.name).unwrap_or_default(),
        description: text(&form.description).unwrap_or_default(),
        open: boolean(&form.open, "open")?.unwrap_or(true),
        password: text(&form.password),
    };
    let row = teams::create(state.store(), &person.player, terms).await?;
    tracing::info!(team = %row.id, by = %person.player.name, "team created");
    Ok(Json(team_json(&state, &row, Some(&person.player)).await?))
}

/// `GET /api/team/{teamId}`.
async fn show(
    State(state): State<AppState>,
    Path(team): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let row = teams::team(state.store(), &team).await?;
    let viewer = viewer(&state, &headers).await?;
    Ok(Json(team_json(&state, &row, viewer.as_ref()).await?))
}

fn ndjson(lines: impl IntoIterator<Item = Value>) -> Response {
    let mut body = String::new();
    for line in lines {
        body.push_str(&line.to_string());
        body.push('\n');
    }
    ([(CONTENT_TYPE, "application/x-ndjson")], Body::from(body)).into_response()
}

fn member_line(m: &TeamMember) -> Value {
    json!({
        "joinedTeamAt": m.joined_at,
        "id": m.player.name.to_lowercase(),
        "name": m.player.name,
        "leader": m.leader,
    })
}

/// `GET /api/team/{teamId}/users`.
async fn members(
    State(state): State<AppState>,
    Path(team): Path<String>,
) -> LichessResult<Response> {
    let row = teams::team(state.store(), &team).await?;
    let members = state.store().team_members(&row.id, false).await?;
    Ok(ndjson(members.iter().map(member_line)))
}

#[derive(Debug, Deserialize, Default)]
pub struct JoinForm {
    #[serde(default)]
    message: Option<Value>,
    #[serde(default)]
    password: Option<Value>,
}

/// `POST /team/{teamId}/join`: `{"ok": true}` when a member, or when the
/// request waits for a leader (`"requested": true` then).
async fn join(
    State(state): State<AppState>,
    Path(team): Path<String>,
    headers: HeaderMap,
    Form(form): Form<JoinForm>,
) -> LichessResult<Json<Value>> {
    let person = member(&state, &headers).await?;
    let joined = teams::join(
        state.store(),
        &person.player,
        &team,
        text(&form.message),
        text(&form.password),
    )
    .await?;
    Ok(Json(
        json!({"ok": true, "requested": joined == Joined::Requested}),
    ))
}

/// `POST /team/{teamId}/quit`.
async fn quit(
    State(state): State<AppState>,
    Path(team): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let person = member(&state, &headers).await?;
    teams::quit(state.store(), &person.player, &team).await?;
    Ok(ok())
}

#[derive(Debug, Deserialize, Default)]
pub struct RequestsQuery {
    #[serde(default)]
    declined: Option<String>,
}

/// `GET /api/team/{teamId}/requests`: a leader's view.
async fn requests(
    State(state): State<AppState>,
    Path(team): Path<String>,
    ApiQuery(query): ApiQuery<RequestsQuery>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let person = member(&state, &headers).await?;
    let row = teams::led_by(state.store(), &team, &person.player).await?;
    let declined = boolean(&query.declined.map(Value::String), "declined")?.unwrap_or(false);
    let rows = state.store().team_requests(&row.id, declined).await?;
    Ok(Json(Value::Array(
        rows.iter()
            .map(|r| {
                json!({
                    "request": {
                        "teamId": r.team_id,
                        "userId": r.player.name.to_lowercase(),
                        "date": r.created_at,
                        "message": r.message,
                    },
                    "user": shapes::user(&r.player.name, r.player.rating, false),
                })
            })
            .collect(),
    )))
}

/// `POST /api/team/{teamId}/request/{userId}/accept|decline`.
async fn answer(
    State(state): State<AppState>,
    Path((team, user)): Path<(String, String)>,
    headers: HeaderMap,
    accept: bool,
) -> LichessResult<Json<Value>> {
    let person = member(&state, &headers).await?;
    teams::answer_request(state.store(), &person.player, &team, &user, accept).await?;
    Ok(ok())
}

/// `POST /api/team/{teamId}/kick/{userId}`.
async fn kick(
    State(state): State<AppState>,
    Path((team, user)): Path<(String, String)>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let person = member(&state, &headers).await?;
    teams::kick(state.store(), &person.player, &team, &user).await?;
    Ok(ok())
}

/// `PUT|DELETE /api/team/{teamId}/leaders/{userId}`.
async fn lead(
    State(state): State<AppState>,
    Path((team, user)): Path<(String, String)>,
    headers: HeaderMap,
    lead: bool,
) -> LichessResult<Json<Value>> {
    let person = member(&state, &headers).await?;
    teams::set_leader(state.store(), &person.player, &team, &user, lead).await?;
    Ok(ok())
}

/// `GET /api/team/of/{username}`.
async fn teams_of(
    State(state): State<AppState>,
    Path(username): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let player = teams::user(state.store(), &username).await?;
    let viewer = viewer(&state, &headers).await?;
    let rows = state.store().teams_of(&player.id).await?;
    let mut teams = Vec::with_capacity(rows.len());
    for row in &rows {
        teams.push(team_json(&state, row, viewer.as_ref()).await?);
    }
    Ok(Json(Value::Array(teams)))
}

#[derive(Debug, Deserialize, Default)]
pub struct PageQuery {
    #[serde(default)]
    page: Option<String>,
}

/// Teams per page of `GET /api/team/all` (lichess's).
const PER_PAGE: i64 = 15;

/// `GET /api/team/all`: every team, most members first, in lichess's
/// paginator.
async fn all(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<PageQuery>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let page = match query.page.as_deref().map(str::trim) {
        None | Some("") => 1,
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|p| (1..=10_000).contains(p))
            .ok_or_else(|| ApiError::BadRequest("page is a number from 1".into()))?,
    };
    let total = state.store().team_count().await?;
    let rows = state
        .store()
        .teams_page((page - 1) * PER_PAGE, PER_PAGE)
        .await?;
    let viewer = viewer(&state, &headers).await?;
    let mut results = Vec::with_capacity(rows.len());
    for row in &rows {
        results.push(team_json(&state, row, viewer.as_ref()).await?);
    }
    let pages = (total + PER_PAGE - 1) / PER_PAGE;
    Ok(Json(json!({
        "currentPage": page,
        "maxPerPage": PER_PAGE,
        "currentPageResults": results,
        "nbResults": total,
        "previousPage": (page > 1).then_some(page - 1),
        "nextPage": (page < pages).then_some(page + 1),
        "nbPages": pages,
    })))
}
