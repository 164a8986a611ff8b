//! Getting an account back (issue 36): an optional e-mail address on the
//! account, verified by a link, and "forgot password" links. Mail goes
//! through the operator's SMTP server (`--smtp-host`, [`crate::mail`]);
//! without one these routes say so (503 `mail_unavailable`).
//!
//! - `GET /api/account/recovery` → `{"mail": bool}`: whether this server
//!   sends mail (the forms say so before anyone types)
//! - `PUT /api/account/email` `{"email": "a@b.example" | null}` → 202 (a
//!   verification link is on its way) or 204 (the address is forgotten)
//! - `POST /api/account/email/verify` `{"token"}` → 204
//! - `POST /api/account/forgot` `{"login": name or address}` → 202, the
//!   same answer whether or not an account matches (no enumeration)
//! - `GET /api/account/reset?token=` → `{"name"}` of a usable reset link
//! - `POST /api/account/reset` `{"token", "password"}` → 204: the new
//!   password, every session of the account ended

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::{Extension, Json};
use serde::Deserialize;
use tokio::time::Instant;

use crate::http::client_ip::ClientIp;
use crate::http::error::ApiError;
use crate::http::extract::{ApiJson, ApiQuery};
use crate::identity::{self, password, Credential};
use crate::mail::{plausible_address, Letter, Mailer, RESET_LINK_TTL, VERIFY_LINK_TTL};
use crate::store::now_ms;
use crate::store::recovery::{LinkPurpose, LinkRefused};
use crate::token::{self, TokenHash};
use crate::AppState;

/// One reset letter per account at most this often: a second request
/// within it sends nothing (and answers the same).
const RESET_EVERY_MS: i64 = 60_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmailRequest {
    pub email: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    pub token: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForgotRequest {
    pub login: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResetRequest {
    pub token: String,
    pub password: String,
}

#[derive(Debug, Deserialize)]
pub struct ResetQuery {
    #[serde(default)]
    pub token: Option<String>,
}

fn mailer(state: &AppState) -> Result<&Mailer, ApiError> {
    state.mailer.as_ref().ok_or(ApiError::MailUnavailable)
}

/// A request that may send mail takes a token from the client's mail
/// bucket.
fn charge(state: &AppState, client: std::net::IpAddr) -> Result<(), ApiError> {
    if state.limits.mails.try_take(client, Instant::now()) {
        return Ok(());
    }
    metrics::counter!("rookery_rate_limited_total", "what" => "mail").increment(1);
    Err(ApiError::Limited(
        "too many mail requests from this address: try again later".into(),
    ))
}

/// A link's token as the store keeps it; an empty or overlong one names
/// no link.
fn link_hash(token: &str) -> Result<TokenHash, ApiError> {
    if token.is_empty() || token.len() > 128 {
        return Err(unusable());
    }
    Ok(TokenHash::of(token))
}

fn unusable() -> ApiError {
    ApiError::BadRequest("this link is unknown, used already or expired: ask for a new one".into())
}

fn expiry(ttl: std::time::Duration) -> i64 {
    now_ms() + i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX / 2)
}

/// `GET /api/account/recovery`.
pub async fn info(State(state): State<AppState>) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "mail": state.mailer.is_some() }))
}

/// `PUT /api/account/email`: `null` forgets the address at once; an
/// address gets a verification link and becomes the account's only when
/// it is opened.
pub async fn set_email(
    State(state): State<AppState>,
    Extension(ClientIp(client)): Extension<ClientIp>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<EmailRequest>,
) -> Result<StatusCode, ApiError> {
    let person = identity::required(state.store(), &headers).await?;
    if matches!(person.credential, Credential::ApiToken(_)) {
        return Err(ApiError::Forbidden(
            "an API token cannot change the account's address: log in".into(),
        ));
    }
    let Some(email) = request.email.map(|e| e.trim().to_string()) else {
        state.store().clear_email(&person.player.id).await?;
        tracing::info!(player = %person.player.id, "e-mail address removed");
        return Ok(StatusCode::NO_CONTENT);
    };
    if !plausible_address(&email) {
        return Err(ApiError::BadRequest(
            "that is not an e-mail address (name@example.org, at most 254 characters)".into(),
        ));
    }
    let mailer = mailer(&state)?;
    charge(&state, client)?;
    let link = token::mint()?;
    state
        .store()
        .create_link(
            &link.hash,
            &person.player.id,
            LinkPurpose::Verify,
            Some(&email),
            expiry(VERIFY_LINK_TTL),
        )
        .await?;
    let letter = Letter::Verify {
        name: person.player.name.clone(),
        token: link.secret,
    };
    if let Err(err) = mailer.send(&email, &letter).await {
        tracing::warn!(%err, player = %person.player.id, "verification mail not sent");
        return Err(ApiError::MailFailed);
    }
    tracing::info!(player = %person.player.id, "verification link sent");
    Ok(StatusCode::ACCEPTED)
}

/// `POST /api/account/email/verify`: the link's address becomes the
/// account's (no login needed: the link is opened from a mailbox).
pub async fn verify_email(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<TokenRequest>,
) -> Result<StatusCode, ApiError> {
    let hash = link_hash(&request.token)?;
    match state.store().verify_email(&hash).await? {
        Ok(()) => Ok(StatusCode::NO_CONTENT),
        Err(LinkRefused::Unusable) => Err(unusable()),
        Err(LinkRefused::EmailTaken) => Err(ApiError::EmailTaken),
    }
}

/// `POST /api/account/forgot`: sends a reset link to the verified address
/// of the account named (by name or address), if there is one. The answer
/// is the same either way, and comes before the account is even looked up,
/// so it tells nobody whether a name or address has an account.
pub async fn forgot(
    State(state): State<AppState>,
    Extension(ClientIp(client)): Extension<ClientIp>,
    ApiJson(request): ApiJson<ForgotRequest>,
) -> Result<StatusCode, ApiError> {
    let login = request.login.trim();
    if login.is_empty() || login.len() > 254 {
        return Err(ApiError::BadRequest(
            "login is your name or your account's e-mail address".into(),
        ));
    }
    let mailer = mailer(&state)?.clone();
    charge(&state, client)?;
    // Everything after this answer happens off the request: how long the
    // lookup, the write and the SMTP server take would tell a known account
    // from an unknown one.
    let store = state.store().clone();
    let login = login.to_string();
    tokio::spawn(async move {
        if let Err(err) = send_reset_link(&store, &mailer, &login).await {
            tracing::warn!(%err, "password reset mail not sent");
        }
    });
    Ok(StatusCode::ACCEPTED)
}

/// Mints, keeps and mails a reset link for the account `login` names, if
/// it has a verified address and was not sent one in the last minute.
async fn send_reset_link(
    store: &crate::store::Store,
    mailer: &Mailer,
    login: &str,
) -> anyhow::Result<()> {
    let Some(account) = store.recoverable(login).await? else {
        tracing::info!("password reset asked for no account with an address");
        return Ok(());
    };
    let last = store
        .last_link_at(&account.player_id, LinkPurpose::Reset)
        .await?;
    if last.is_some_and(|at| now_ms() - at < RESET_EVERY_MS) {
        tracing::info!(player = %account.player_id, "password reset asked again too soon");
        return Ok(());
    }
    let link = token::mint()?;
    store
        .create_link(
            &link.hash,
            &account.player_id,
            LinkPurpose::Reset,
            None,
            expiry(RESET_LINK_TTL),
        )
        .await?;
    let letter = Letter::Reset {
        name: account.name,
        token: link.secret,
    };
    mailer.send(&account.email, &letter).await?;
    tracing::info!(player = %account.player_id, "password reset link sent");
    Ok(())
}

/// `GET /api/account/reset?token=`: whose password a link resets, if it
/// still works (the page shows the name above the form).
pub async fn check_reset(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<ResetQuery>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let hash = link_hash(query.token.as_deref().unwrap_or_default())?;
    let name = state
        .store()
        .reset_link_account(&hash)
        .await?
        .ok_or_else(unusable)?;
    Ok(Json(serde_json::json!({ "name": name })))
}

/// `POST /api/account/reset`: the new password; every session of the
/// account ends (its open sockets and streams see that at their next
/// check), and the link and every other reset link of it are spent.
pub async fn reset(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<ResetRequest>,
) -> Result<StatusCode, ApiError> {
    let hash = link_hash(&request.token)?;
    let name = state
        .store()
        .reset_link_account(&hash)
        .await?
        .ok_or_else(unusable)?;
    password::check_new(&request.password, &name)?;
    let password_hash = password::hash(request.password).await?;
    match state.store().reset_password(&hash, password_hash).await? {
        Ok(()) => {
            tracing::info!(%name, "password reset by link");
            Ok(StatusCode::NO_CONTENT)
        }
        Err(_) => Err(unusable()),
    }
}
