//! Accounts (issue 21): sign up, log in and out, change the password, the
//! account's sessions and personal API tokens, and its games.
//!
//! - `POST /api/accounts` `{"name", "password"}` → 201 Account + cookie
//! - `POST /api/session` `{"name", "password"}` → 200 Account + cookie
//! - `DELETE /api/session` → 204 (this session ends)
//! - `GET /api/account` → Account (also lichess's shape: `id`, `username`)
//! - `PUT /api/account/password` `{"current"?, "password"}` → 204
//! - `GET /api/account/sessions`, `DELETE /api/account/sessions[/{id}]`
//! - `GET|POST /api/account/tokens`, `DELETE /api/account/tokens/{id}`
//! - `GET /api/account/games` → the person's games, live ones first

use axum::extract::{Path, State};
use axum::http::header::{SET_COOKIE, USER_AGENT};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use uuid::Uuid;

use super::players::validate_name;
use crate::http::client_ip::ClientIp;
use crate::http::error::ApiError;
use crate::http::extract::{ApiJson, MaybeJson};
use crate::identity::{self, password, Credential, Identity, Scope, Scopes};
use crate::protocol::{GameList, GameState};
use crate::store::accounts::SESSION_IDLE_MS;
use crate::store::PlayerGamesFilter;
use crate::token::{self, TokenHash};
use crate::AppState;

/// A device name is the User-Agent, cut to this many characters.
const DEVICE_CHARS: usize = 200;
/// Personal API tokens an account may hold.
const MAX_TOKENS: usize = 50;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    pub name: String,
    pub password: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewPassword {
    #[serde(default)]
    pub current: Option<String>,
    pub password: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
}

/// One rating, in lichess's `perfs` entry shape.
#[derive(Debug, Clone, Serialize)]
pub struct Perf {
    pub games: i64,
    pub rating: i64,
    pub rd: i64,
    pub prog: i64,
    pub prov: bool,
}

/// `GET /api/account`: Rookery's fields and lichess's, in one object.
#[derive(Debug, Clone, Serialize)]
pub struct Account {
    /// lichess's `id`: the name in lower case.
    pub id: String,
    /// lichess's `username`: the name as chosen.
    pub username: String,
    /// Rookery's: the name, and the player's id (UUID).
    pub name: String,
    pub player_id: String,
    pub rating: i64,
    pub provisional: bool,
    /// Whether a password is set (a token-only player has none yet).
    pub has_password: bool,
    /// The session this request came with, if it came with one.
    pub session: Option<String>,
    /// What the credential of this request may do.
    pub scopes: Vec<&'static str>,
    #[serde(rename = "createdAt")]
    pub created_at: i64,
    pub url: String,
    /// lichess's ratings by speed: Rookery has one rating for all.
    pub perfs: std::collections::BTreeMap<&'static str, Perf>,
    /// The account's verified e-mail address (issue 36), or null.
    pub email: Option<String>,
    /// An address sent a verification link not yet opened, or null.
    pub email_pending: Option<String>,
    /// lichess's title: `BOT` for a bot account (issue 24), else absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<&'static str>,
}

pub(crate) async fn account_of(state: &AppState, identity: &Identity) -> Result<Account, ApiError> {
    let (player, has_password) = state
        .store()
        .player_by_id(&identity.player.id)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    let profile = state.store().player_profile(&player.name).await?;
    let (games, created_at, rating, rd, provisional) = profile.map_or(
        (0, 0, player.rating.rating, 350, player.rating.provisional),
        |p| {
            (
                p.games,
                p.created_at,
                p.rating,
                p.rating_deviation,
                p.provisional,
            )
        },
    );
    let perf = Perf {
        games,
        rating,
        rd,
        prog: 0,
        prov: provisional,
    };
    let bot = state.store().is_bot(&player.id).await?;
    // The address is the account's own business: a session's or the
    // player token's, not an API token's (a bot's or a script's).
    let (email, email_pending) = if matches!(identity.credential, Credential::ApiToken(_)) {
        (None, None)
    } else {
        (
            state.store().email_of(&player.id).await?,
            state.store().pending_email_of(&player.id).await?,
        )
    };
    Ok(Account {
        email,
        email_pending,
        title: bot.then_some("BOT"),
        id: player.name.to_lowercase(),
        username: player.name.clone(),
        url: format!("/players/{}", player.name),
        name: player.name,
        player_id: player.id,
        rating,
        provisional,
        has_password,
        session: identity.session_id().map(str::to_string),
        scopes: identity.scopes.list(),
        created_at,
        perfs: ["bullet", "blitz", "rapid", "classical", "correspondence"]
            .into_iter()
            .map(|speed| (speed, perf.clone()))
            .collect(),
    })
}

/// The `Set-Cookie` of a new session (or, with `None`, of its end).
pub(crate) fn session_cookie(state: &AppState, token: Option<&str>) -> HeaderValue {
    let secure = if state.config.secure_cookies() {
        "; Secure"
    } else {
        ""
    };
    let value = match token {
        Some(token) => format!(
            "{}={token}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
            identity::SESSION_COOKIE,
            SESSION_IDLE_MS / 1000
        ),
        None => format!(
            "{}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{secure}",
            identity::SESSION_COOKIE
        ),
    };
    // Built from a hex token and constants: always a valid header value.
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static(""))
}

fn device(headers: &HeaderMap) -> String {
    let agent = headers
        .get(USER_AGENT)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("unknown device");
    agent.chars().take(DEVICE_CHARS).collect()
}

/// Starts a session for `player_id`: its row, and the answer that sets the
/// cookie.
async fn start_session(
    state: &AppState,
    headers: &HeaderMap,
    player_id: &str,
    status: StatusCode,
) -> Result<Response, ApiError> {
    let token = token::mint()?;
    let id = state
        .store()
        .create_session(player_id, &token.hash, &device(headers))
        .await?;
    let identity = identity::of_token(state.store(), &token.secret)
        .await?
        .ok_or_else(|| ApiError::internal("a new session cannot be read back"))?;
    let account = account_of(state, &identity).await?;
    tracing::info!(player = %player_id, session = %id, "session started");
    let mut response = (status, Json(account)).into_response();
    response
        .headers_mut()
        .insert(SET_COOKIE, session_cookie(state, Some(&token.secret)));
    Ok(response)
}

/// `POST /api/accounts`.
pub async fn sign_up(
    State(state): State<AppState>,
    Extension(ClientIp(client)): Extension<ClientIp>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<Credentials>,
) -> Result<Response, ApiError> {
    validate_name(&request.name)?;
    password::check_new(&request.password, &request.name)?;
    // Checked last, so that a refused name or password costs nothing of
    // the address's sign-ups.
    if !state.limits.signups.try_take(client, Instant::now()) {
        metrics::counter!("rookery_rate_limited_total", "what" => "signup").increment(1);
        return Err(ApiError::Limited(format!(
            "at most {} new accounts an hour from one address: try again later",
            state.config.http.signups_per_hour
        )));
    }
    let hash = password::hash(request.password).await?;
    let id = Uuid::new_v4();
    state
        .store()
        .create_account(id, &request.name, hash)
        .await?;
    tracing::info!(player = %id, name = %request.name, "account created");
    start_session(&state, &headers, &id.to_string(), StatusCode::CREATED).await
}

/// `POST /api/session`: a wrong name and a wrong password get the same
/// answer after the same work (a decoy hash is checked for a name nobody
/// has), and failures are throttled ([`identity::throttle`]).
pub async fn log_in(
    State(state): State<AppState>,
    Extension(ClientIp(client)): Extension<ClientIp>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<Credentials>,
) -> Result<Response, ApiError> {
    state
        .login_throttle
        .check(&request.name, client, false, Instant::now())?;
    let found = if validate_name(&request.name).is_ok() {
        state.store().credentials(&request.name).await?
    } else {
        None
    };
    let stored = found.as_ref().and_then(|c| c.password_hash.clone());
    let matches = password::verify(stored, request.password).await?;
    let Some(found) = found.filter(|_| matches) else {
        state
            .login_throttle
            .failed(&request.name, client, Instant::now());
        tracing::info!(%client, "failed login");
        return Err(ApiError::WrongCredentials);
    };
    state
        .login_throttle
        .succeeded(&request.name, client, Instant::now());
    start_session(&state, &headers, &found.player.id, StatusCode::OK).await
}

/// `DELETE /api/session`: ends the session of this request (its cookie, or
/// a session token sent as Bearer). Without one, nothing to end: 204 all
/// the same, and the cookie is cleared.
pub async fn log_out(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if let Some(identity) = identity::identify(state.store(), &headers).await? {
        if let Credential::Session(id) = &identity.credential {
            state
                .store()
                .end_sessions(&identity.player.id, Some(id), None)
                .await?;
        }
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .insert(SET_COOKIE, session_cookie(&state, None));
    Ok(response)
}

/// `GET /api/account`.
pub async fn get(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Account>, ApiError> {
    let identity = identity::required(state.store(), &headers).await?;
    Ok(Json(account_of(&state, &identity).await?))
}

/// `PUT /api/account/password`: sets or changes the password. A player
/// without one (a token-only player claiming their name) needs no
/// `current`; otherwise `current` must be right (401, and it counts as a
/// failed login). Other sessions end; this one stays.
pub async fn set_password(
    State(state): State<AppState>,
    Extension(ClientIp(client)): Extension<ClientIp>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<NewPassword>,
) -> Result<StatusCode, ApiError> {
    let identity = identity::required(state.store(), &headers).await?;
    if matches!(identity.credential, Credential::ApiToken(_)) {
        return Err(ApiError::Forbidden(
            "an API token cannot change the password: log in".into(),
        ));
    }
    let name = identity.player.name.clone();
    let stored = state
        .store()
        .credentials(&name)
        .await?
        .and_then(|c| c.password_hash);
    if let Some(stored) = stored {
        // The account's own session: the name's count never refuses it
        // (only this address's and this pair's).
        let own_session = identity.session_id().is_some();
        state
            .login_throttle
            .check(&name, client, own_session, Instant::now())?;
        let current = request.current.clone().unwrap_or_default();
        if !password::verify(Some(stored), current).await? {
            state.login_throttle.failed(&name, client, Instant::now());
            return Err(ApiError::WrongCredentials);
        }
    }
    password::check_new(&request.password, &name)?;
    let hash = password::hash(request.password).await?;
    state
        .store()
        .set_password(&identity.player.id, hash)
        .await?;
    state
        .store()
        .end_sessions(&identity.player.id, None, identity.session_id())
        .await?;
    tracing::info!(player = %identity.player.id, "password set");
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Serialize)]
pub struct SessionView {
    pub id: String,
    pub device: String,
    pub created_at: i64,
    pub last_seen_at: i64,
    /// The session of this request.
    pub current: bool,
}

/// `GET /api/account/sessions`: the account's live sessions, most recently
/// seen first.
pub async fn sessions(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<serde_json::Value>, ApiError> {
    let identity = identity::required(state.store(), &headers).await?;
    // Where the account is logged in is the account's business, not a
    // bot's or script's (issue 35): an API token may not read it.
    managing(&identity)?;
    let sessions: Vec<SessionView> = state
        .store()
        .sessions_of(&identity.player.id)
        .await?
        .into_iter()
        .map(|row| SessionView {
            current: identity.session_id() == Some(row.id.as_str()),
            id: row.id,
            device: row.device,
            created_at: row.created_at,
            last_seen_at: row.last_seen_at,
        })
        .collect();
    Ok(Json(serde_json::json!({ "sessions": sessions })))
}

/// Only a session or the player token manages sessions and tokens: an API
/// token cannot mint more of itself or log its owner out.
fn managing(identity: &Identity) -> Result<(), ApiError> {
    if matches!(identity.credential, Credential::ApiToken(_)) {
        return Err(ApiError::Forbidden(
            "an API token cannot manage sessions or tokens: log in".into(),
        ));
    }
    Ok(())
}

/// `DELETE /api/account/sessions/{id}`: logs one session out.
pub async fn end_session(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let identity = identity::required(state.store(), &headers).await?;
    managing(&identity)?;
    let known = state
        .store()
        .sessions_of(&identity.player.id)
        .await?
        .iter()
        .any(|row| row.id == id);
    if !known {
        return Err(ApiError::NotFound("no such session".into()));
    }
    state
        .store()
        .end_sessions(&identity.player.id, Some(&id), None)
        .await?;
    let mut response = StatusCode::NO_CONTENT.into_response();
    if identity.session_id() == Some(id.as_str()) {
        response
            .headers_mut()
            .insert(SET_COOKIE, session_cookie(&state, None));
    }
    Ok(response)
}

/// `DELETE /api/account/sessions`: logs out everywhere, this session too.
pub async fn end_all_sessions(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let identity = identity::required(state.store(), &headers).await?;
    managing(&identity)?;
    state
        .store()
        .end_sessions(&identity.player.id, None, None)
        .await?;
    tracing::info!(player = %identity.player.id, "logged out everywhere");
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .insert(SET_COOKIE, session_cookie(&state, None));
    Ok(response)
}

#[derive(Debug, Serialize)]
pub struct TokenView {
    pub id: String,
    pub description: String,
    pub scopes: Vec<&'static str>,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    /// The token itself: in the answer that creates it, never again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// `POST /api/account/tokens` `{"description", "scopes": ["play",
/// "challenge", "bot"]}` → 201, with the token (shown once).
pub async fn create_token(
    State(state): State<AppState>,
    headers: HeaderMap,
    MaybeJson(request): MaybeJson<NewToken>,
) -> Result<(StatusCode, Json<TokenView>), ApiError> {
    let identity = identity::required(state.store(), &headers).await?;
    managing(&identity)?;
    let request = request.unwrap_or_default();
    let description = request
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .unwrap_or("personal token");
    if description.chars().count() > 100 {
        return Err(ApiError::BadRequest(
            "a description has at most 100 characters".into(),
        ));
    }
    let scopes: Scopes = match request.scopes {
        None => [Scope::Play, Scope::Challenge].into_iter().collect(),
        Some(names) => names
            .iter()
            .map(|name| {
                Scope::parse(name).ok_or_else(|| {
                    ApiError::BadRequest(format!("unknown scope {name:?}: play, challenge or bot"))
                })
            })
            .collect::<Result<_, _>>()?,
    };
    if scopes.list().is_empty() {
        return Err(ApiError::BadRequest(
            "a token needs at least one scope: play, challenge or bot".into(),
        ));
    }
    if state
        .store()
        .api_tokens_of(&identity.player.id)
        .await?
        .len()
        >= MAX_TOKENS
    {
        return Err(ApiError::Limited(format!(
            "an account holds at most {MAX_TOKENS} tokens: revoke one first"
        )));
    }
    let minted = token::mint()?;
    let token = format!("{}{}", identity::API_TOKEN_PREFIX, minted.secret);
    let (id, created_at) = state
        .store()
        .create_api_token(
            &identity.player.id,
            &TokenHash::of(&token),
            description,
            &scopes.text(),
        )
        .await?;
    tracing::info!(player = %identity.player.id, token = %id, "API token created");
    Ok((
        StatusCode::CREATED,
        Json(TokenView {
            id,
            description: description.to_string(),
            scopes: scopes.list(),
            created_at,
            last_used_at: None,
            token: Some(token),
        }),
    ))
}

/// `GET /api/account/tokens`.
pub async fn tokens(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<serde_json::Value>, ApiError> {
    let identity = identity::required(state.store(), &headers).await?;
    managing(&identity)?;
    let tokens: Vec<TokenView> = state
        .store()
        .api_tokens_of(&identity.player.id)
        .await?
        .into_iter()
        .map(|row| TokenView {
            id: row.id,
            description: row.description,
            scopes: Scopes::of_text(&row.scopes).list(),
            created_at: row.created_at,
            last_used_at: row.last_used_at,
            token: None,
        })
        .collect();
    Ok(Json(serde_json::json!({ "tokens": tokens })))
}

/// `DELETE /api/account/tokens/{id}`: revoked at once.
pub async fn revoke_token(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    let identity = identity::required(state.store(), &headers).await?;
    managing(&identity)?;
    if state
        .store()
        .revoke_api_token(&identity.player.id, &id)
        .await?
    {
        tracing::info!(player = %identity.player.id, token = %id, "API token revoked");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound("no such token".into()))
    }
}

/// `DELETE /api/token` (lichess's): revokes the personal API token the
/// request is made with; 204. Any other credential is 400.
pub async fn revoke_own_token(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    let identity = identity::required(state.store(), &headers).await?;
    let Credential::ApiToken(id) = &identity.credential else {
        return Err(ApiError::BadRequest(
            "DELETE /api/token revokes the personal API token sent as Bearer".into(),
        ));
    };
    state
        .store()
        .revoke_api_token(&identity.player.id, id)
        .await?;
    tracing::info!(player = %identity.player.id, token = %id, "API token revoked by itself");
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/account/games`: the person's games, unfinished ones first
/// (newest first), then the most recent finished ones.
pub async fn games(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<GameList>, ApiError> {
    let identity = identity::required(state.store(), &headers).await?;
    let store = state.store();
    let (mut live, _) = store
        .player_games(&identity.player.id, PlayerGamesFilter::Unfinished, None, 50)
        .await?;
    let (finished, _) = store
        .player_games(&identity.player.id, PlayerGamesFilter::Finished, None, 20)
        .await?;
    live.extend(finished);
    let mut games: Vec<GameState> = live;
    state.registry.show_presence(&mut games);
    Ok(Json(GameList { games, next: None }))
}
