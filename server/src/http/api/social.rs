//! The community's routes (issue 37); the rules are `social/`'s, what is
//! kept `store/social.rs`'s.
//!
//! lichess's relations, in its shapes (`{"ok": true}`, NDJSON of users,
//! `{"error": ...}`), with the `challenge` scope standing for lichess's
//! `follow:read`/`follow:write`:
//! - `POST /api/rel/follow/{username}`, `/unfollow/…`, `/block/…`,
//!   `/unblock/…`
//! - `GET /api/rel/following`, `GET /api/rel/blocking` (NDJSON)
//!
//! Rookery's own, in its error shape:
//! - `GET`/`PUT /api/account/social`: the lists and who may challenge me
//! - `GET /api/account/notices`, `DELETE /api/account/notices/{id}`
//! - `POST /api/reports`
//! - `GET /api/mod/reports`, `POST /api/mod/actions`, `GET /api/mod/log`
//!   (moderators only)
//! - `POST /api/account/close`, `GET /api/account/export`

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE, SET_COOKIE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use uuid::Uuid;

use super::players::validate_name;
use crate::http::error::ApiError;
use crate::http::extract::ApiJson;
use crate::http::lichess::LichessResult;
use crate::identity::{self, password, Credential, Identity, Scope};
use crate::protocol::Status;
use crate::social::{self, ChallengeFacts, ChallengePolicy, ModAction, ReportReason};
use crate::store::social::{
    Effect, ModActionRow, NewReport, NoticeRow, ReportRow, SocialWrite, Standing, BLOCK, FOLLOW,
};
use crate::store::{now_ms, Cursor, PlayerGamesFilter, Store};
use crate::AppState;

/// The reports and audit entries a moderator's page lists at once.
const LIST_LIMIT: i64 = 200;

/// The person behind a relations request (lichess's `follow:*` scopes are
/// Rookery's `challenge`).
async fn relating(state: &AppState, headers: &HeaderMap) -> Result<Identity, ApiError> {
    let person = identity::required(state.store(), headers).await?;
    person.require(Scope::Challenge)?;
    Ok(person)
}

/// The person behind an account request that only a session or the
/// player token may make (an API token acts in games, not on the account).
async fn owner(state: &AppState, headers: &HeaderMap, what: &str) -> Result<Identity, ApiError> {
    let person = identity::required(state.store(), headers).await?;
    if matches!(person.credential, Credential::ApiToken(_)) {
        return Err(ApiError::Forbidden(format!(
            "an API token cannot {what}: log in"
        )));
    }
    Ok(person)
}

/// The account called `name`, or 404 in lichess's words.
async fn someone(store: &Store, name: &str) -> Result<Standing, ApiError> {
    let not_found = || ApiError::NotFound(format!("no such user: {name}"));
    validate_name(name).map_err(|_| not_found())?;
    store.standing_by_name(name).await?.ok_or_else(not_found)
}

/// Someone other than `person`.
async fn other(state: &AppState, person: &Identity, name: &str) -> Result<Standing, ApiError> {
    let them = someone(state.store(), name).await?;
    if them.id == person.player.id {
        return Err(ApiError::BadRequest("that is you".into()));
    }
    Ok(them)
}

/// `POST /api/rel/{follow|unfollow|block|unblock}/{username}`.
pub async fn relate(
    verb: &'static str,
    state: AppState,
    name: String,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let person = relating(&state, &headers).await?;
    let them = other(&state, &person, &name).await?;
    let from_id = person.player.id.clone();
    let to_id = them.id.clone();
    let write = match verb {
        "follow" | "block" => SocialWrite::Relate {
            from_id,
            to_id,
            kind: if verb == "follow" { FOLLOW } else { BLOCK },
            at: now_ms(),
        },
        "unfollow" => SocialWrite::Unrelate {
            from_id,
            to_id,
            kind: FOLLOW,
        },
        _ => SocialWrite::Unrelate {
            from_id,
            to_id,
            kind: BLOCK,
        },
    };
    state.store().social_write(write).await?;
    tracing::info!(player = %person.player.id, %verb, other = %them.id, "relation");
    Ok(Json(json!({"ok": true})))
}

/// lichess's user object of a related player, with `playing` (the URL of
/// a game they play now) and `disabled` (a closed account).
async fn related_user(state: &AppState, who: &Standing) -> Result<Option<Value>, ApiError> {
    let Some(profile) = state.store().player_profile(&who.name).await? else {
        return Ok(None);
    };
    let bot = state.store().is_bot(&who.id).await?;
    let online = state.registry.events().is_online(&who.id);
    let base = state.config.public_base();
    let mut user = crate::http::lichess::account::user_json(&profile, bot, online, &base);
    let (games, _) = state
        .store()
        .player_games(&who.id, PlayerGamesFilter::Unfinished, None, 10)
        .await?;
    if let Some(game) = games.iter().find(|g| g.status == Status::Active) {
        user["playing"] = json!(format!("{base}/games/{}", game.id));
    }
    if who.closed_at.is_some() {
        user["disabled"] = json!(true);
    }
    Ok(Some(user))
}

/// `GET /api/rel/following` and `GET /api/rel/blocking`: NDJSON of users.
pub async fn list(
    kind: &'static str,
    state: AppState,
    headers: HeaderMap,
) -> LichessResult<Response> {
    let person = relating(&state, &headers).await?;
    let mut body = String::new();
    for named in state.store().relations_of(&person.player.id, kind).await? {
        let Some(who) = state.store().standing(&named.id).await? else {
            continue;
        };
        if let Some(user) = related_user(&state, &who).await? {
            body.push_str(&user.to_string());
            body.push('\n');
        }
    }
    Ok(([(CONTENT_TYPE, "application/x-ndjson")], Body::from(body)).into_response())
}

/// What `GET /api/account/social` answers.
#[derive(Debug, Serialize)]
pub struct SocialView {
    pub challenge_policy: String,
    pub moderator: bool,
    /// Until when (ms) a moderator's timeout keeps the person out of chat.
    pub chat_silenced_until: Option<i64>,
    pub following: Vec<String>,
    pub blocking: Vec<String>,
}

async fn social_view(state: &AppState, player_id: &str) -> Result<SocialView, ApiError> {
    let standing = state
        .store()
        .standing(player_id)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    let names = |list: Vec<crate::store::social::Named>| list.into_iter().map(|n| n.name).collect();
    Ok(SocialView {
        challenge_policy: standing.challenge_policy,
        moderator: standing.moderator,
        chat_silenced_until: standing
            .chat_silenced_until
            .filter(|until| *until > now_ms()),
        following: names(state.store().relations_of(player_id, FOLLOW).await?),
        blocking: names(state.store().relations_of(player_id, BLOCK).await?),
    })
}

/// `GET /api/account/social`.
pub async fn get(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<SocialView>, ApiError> {
    let person = identity::required(state.store(), &headers).await?;
    Ok(Json(social_view(&state, &person.player.id).await?))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocialSettings {
    pub challenge_policy: String,
}

/// `PUT /api/account/social` `{"challenge_policy"}`.
pub async fn set(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(settings): ApiJson<SocialSettings>,
) -> Result<Json<SocialView>, ApiError> {
    let person = owner(&state, &headers, "change settings").await?;
    let policy = ChallengePolicy::parse(&settings.challenge_policy).ok_or_else(|| {
        ApiError::BadRequest("challenge_policy is everyone, following or nobody".into())
    })?;
    state
        .store()
        .social_write(SocialWrite::SetChallengePolicy {
            player_id: person.player.id.clone(),
            policy: policy.as_str(),
        })
        .await?;
    Ok(Json(social_view(&state, &person.player.id).await?))
}

/// Whether `challenger` may challenge `dest` (their setting, blocks, a
/// closed account): 400 in lichess's words otherwise. Called by
/// `POST /api/challenge/{username}`.
pub async fn may_challenge(state: &AppState, challenger: &str, dest: &str) -> Result<(), ApiError> {
    let store = state.store();
    let them = store.standing(dest).await?.ok_or(ApiError::Unauthorized)?;
    let facts = ChallengeFacts {
        policy: ChallengePolicy::parse(&them.challenge_policy).unwrap_or(ChallengePolicy::Everyone),
        they_follow_me: store.relation(dest, challenger).await?.as_deref() == Some(FOLLOW),
        blocked: store.blocks_between(challenger, dest).await?,
        closed: them.closed_at.is_some(),
    };
    social::may_challenge(facts).map_err(|denied| ApiError::BadRequest(denied.message(&them.name)))
}

/// Whether a game between `a` and `b` may be rated: not with a marked
/// cheater in it.
pub async fn may_be_rated(state: &AppState, a: &str, b: &str) -> Result<bool, ApiError> {
    let store = state.store();
    Ok(!store.is_marked_cheater(a).await? && !store.is_marked_cheater(b).await?)
}

/// `GET /api/account/notices`: what moderators told the person, not yet
/// dismissed.
pub async fn notices(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let person = identity::required(state.store(), &headers).await?;
    let notices: Vec<NoticeRow> = state.store().unseen_notices(&person.player.id).await?;
    Ok(Json(json!({ "notices": notices })))
}

/// `DELETE /api/account/notices/{id}`: dismissed.
pub async fn dismiss_notice(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    let person = identity::required(state.store(), &headers).await?;
    state
        .store()
        .social_write(SocialWrite::NoticeSeen {
            player_id: person.player.id.clone(),
            id,
            at: now_ms(),
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewReportBody {
    pub username: String,
    pub reason: String,
    pub text: String,
    #[serde(default)]
    pub game: Option<String>,
}

/// `POST /api/reports` `{"username", "reason", "text", "game"?}`.
pub async fn report(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<NewReportBody>,
) -> Result<(StatusCode, Json<ReportRow>), ApiError> {
    let person = identity::required(state.store(), &headers).await?;
    let suspect = other(&state, &person, &body.username).await?;
    let reason = ReportReason::parse(&body.reason)
        .ok_or_else(|| ApiError::BadRequest("reason is cheat, abuse, sandbag or other".into()))?;
    let text = social::chat::clean(&body.text);
    if text.is_empty() || text.chars().count() > social::REPORT_CHARS {
        return Err(ApiError::BadRequest(format!(
            "text has 1 to {} characters",
            social::REPORT_CHARS
        )));
    }
    let game_id = match body
        .game
        .as_deref()
        .map(str::trim)
        .filter(|g| !g.is_empty())
    {
        Some(game) => Some(
            Uuid::parse_str(game)
                .map_err(|_| ApiError::BadRequest("game is a game's id".into()))?
                .to_string(),
        ),
        None => None,
    };
    let day_ago = now_ms() - 24 * 3600 * 1000;
    if state
        .store()
        .reports_filed_since(&person.player.id, day_ago)
        .await?
        >= social::REPORTS_PER_DAY
    {
        return Err(ApiError::Limited(format!(
            "at most {} reports a day",
            social::REPORTS_PER_DAY
        )));
    }
    let id = Uuid::new_v4().to_string();
    state
        .store()
        .social_write(SocialWrite::Report(NewReport {
            id: id.clone(),
            reporter_id: person.player.id.clone(),
            suspect_id: suspect.id.clone(),
            reason: reason.as_str(),
            text,
            game_id,
            at: now_ms(),
        }))
        .await?;
    tracing::info!(report = %id, reporter = %person.player.id, suspect = %suspect.id, "report");
    let row = state
        .store()
        .report(&id)
        .await?
        .ok_or_else(|| ApiError::internal("a new report is missing"))?;
    Ok((StatusCode::CREATED, Json(row)))
}

/// The moderator behind a request: 403 for anyone else (and for an API
/// token: moderation takes a session or the player token).
async fn moderator(state: &AppState, headers: &HeaderMap) -> Result<Identity, ApiError> {
    let person = owner(state, headers, "moderate").await?;
    let standing = state.store().standing(&person.player.id).await?;
    if !standing.is_some_and(|s| s.moderator) {
        return Err(ApiError::Forbidden("only moderators may do this".into()));
    }
    Ok(person)
}

/// `GET /api/mod/reports`: the open reports, oldest first.
pub async fn queue(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    moderator(&state, &headers).await?;
    let reports = state.store().open_reports(LIST_LIMIT).await?;
    Ok(Json(json!({ "reports": reports })))
}

/// `GET /api/mod/log`: the audit log, newest first.
pub async fn log(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    moderator(&state, &headers).await?;
    let actions: Vec<ModActionRow> = state.store().mod_log(LIST_LIMIT).await?;
    Ok(Json(json!({ "actions": actions })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionBody {
    pub action: String,
    #[serde(default)]
    pub username: Option<String>,
    #[serde(default)]
    pub report: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub minutes: Option<f64>,
}

/// `POST /api/mod/actions` `{"action", "username"?, "report"?, "text"?,
/// "minutes"?}`: acts on a player (the report's suspect when only the
/// report is named), closes the report, writes the audit log.
pub async fn act(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ActionBody>,
) -> Result<(StatusCode, Json<ModActionRow>), ApiError> {
    let person = moderator(&state, &headers).await?;
    let action = ModAction::parse(&body.action, body.text.as_deref(), body.minutes)
        .map_err(ApiError::BadRequest)?;
    let store = state.store();
    let report = match body.report.as_deref() {
        Some(id) => {
            let row = store
                .report(id)
                .await?
                .ok_or_else(|| ApiError::NotFound("no such report".into()))?;
            if row.closed_at.is_some() {
                return Err(ApiError::BadRequest("this report is closed already".into()));
            }
            Some(row)
        }
        None => None,
    };
    let name = match (&body.username, &report) {
        (Some(name), Some(row)) if !name.eq_ignore_ascii_case(&row.suspect) => {
            return Err(ApiError::BadRequest(
                "the report is about someone else".into(),
            ))
        }
        (Some(name), _) => name.clone(),
        (None, Some(row)) => row.suspect.clone(),
        (None, None) => {
            return Err(ApiError::BadRequest("name a username or a report".into()));
        }
    };
    if action == ModAction::Dismiss && report.is_none() {
        return Err(ApiError::BadRequest("dismiss needs a report".into()));
    }
    let target = other(&state, &person, &name).await?;
    let now = now_ms();
    let effect = match &action {
        ModAction::Warn { text } => Effect::Notice {
            id: Uuid::new_v4().to_string(),
            text: text.clone(),
        },
        ModAction::Timeout { minutes } => Effect::Silence {
            until: now + minutes * 60_000,
        },
        ModAction::MarkCheater => Effect::Cheater(true),
        ModAction::UnmarkCheater => Effect::Cheater(false),
        ModAction::Close => Effect::Close {
            token_hash: Store::unusable_token_hash()?,
        },
        ModAction::Dismiss => Effect::None,
    };
    let told = match &effect {
        Effect::Notice { id, text } => Some(json!({"id": id, "text": text, "created_at": now})),
        _ => None,
    };
    let report_id = report.as_ref().map(|row| row.id.as_str());
    let id = store
        .record_mod_action(
            Some(&person.player.id),
            action.key(),
            &target.id,
            &action.details(),
            report_id,
            effect,
        )
        .await?;
    // The person hears of a warning at once if their event stream is open;
    // otherwise on their next page load (`GET /api/account/notices`).
    if let Some(notice) = told {
        state
            .registry
            .events()
            .send(&target.id, &json!({"type": "notice", "notice": notice}));
    }
    tracing::info!(moderator = %person.player.id, action = action.key(), target = %target.id, "moderator action");
    Ok((
        StatusCode::CREATED,
        Json(ModActionRow {
            id,
            moderator: Some(person.player.name.clone()),
            action: action.key().to_string(),
            target: target.name,
            details: action.details(),
            report_id: report.map(|row| row.id),
            created_at: now,
        }),
    ))
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CloseBody {
    #[serde(default)]
    pub password: Option<String>,
}

/// `POST /api/account/close` `{"password"}`: the owner closes their
/// account (the password is asked when the account has one).
pub async fn close(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<CloseBody>,
) -> Result<Response, ApiError> {
    let person = owner(&state, &headers, "close the account").await?;
    let stored = state
        .store()
        .credentials(&person.player.name)
        .await?
        .and_then(|c| c.password_hash);
    if stored.is_some() && !password::verify(stored, body.password.unwrap_or_default()).await? {
        return Err(ApiError::WrongCredentials);
    }
    state
        .store()
        .social_write(SocialWrite::Close {
            player_id: person.player.id.clone(),
            token_hash: Store::unusable_token_hash()?,
            at: now_ms(),
        })
        .await?;
    tracing::info!(player = %person.player.id, "account closed by its owner");
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .insert(SET_COOKIE, super::accounts::session_cookie(&state, None));
    Ok(response)
}

/// Games read per page while exporting.
const EXPORT_PAGE: u32 = 100;

/// `GET /api/account/export`: one JSON download with the account, its
/// settings and lists, its reports and notices, and every game as PGN.
pub async fn export(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let person = owner(&state, &headers, "export the account").await?;
    let account = super::accounts::account_of(&state, &person).await?;
    let social = social_view(&state, &person.player.id).await?;
    let mut pgn = String::new();
    let mut games = 0;
    let mut cursor = None;
    loop {
        let (page, next) = state
            .store()
            .player_games(
                &person.player.id,
                PlayerGamesFilter::All,
                cursor.as_ref(),
                EXPORT_PAGE,
            )
            .await?;
        for game in &page {
            let Ok(id) = Uuid::parse_str(&game.id) else {
                continue;
            };
            let Ok(live) = state.registry.snapshot(id).await else {
                continue;
            };
            pgn.push_str(&super::games::export_pgn(&state, &live, &[]).await?);
            pgn.push_str("\n\n");
            games += 1;
        }
        match next {
            Some(next) => cursor = Some(Cursor::parse(&next)?),
            None => break,
        }
    }
    let body = json!({
        "exported_at": now_ms(),
        "account": account,
        "social": social,
        "games": games,
        "pgn": pgn,
    });
    let name = format!(
        "attachment; filename=\"rookery-{}.json\"",
        person.player.name.to_lowercase()
    );
    let mut response = Json(body).into_response();
    if let Ok(value) = name.parse() {
        response.headers_mut().insert(CONTENT_DISPOSITION, value);
    }
    Ok(response)
}
