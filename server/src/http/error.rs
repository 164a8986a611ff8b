//! The one error type of the service. Every HTTP error body and every
//! WebSocket `error` message is built from an [`ApiError`], so the two can
//! never disagree about codes, and the status of each code lives in one place
//! (the table of the contract, `docs/API.md`).
//!
//! Internal causes (database failures, a vanished actor) are logged here and
//! never sent to the client: the client gets a generic message.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::live::error::{LiveError, Refusal};
use crate::live::game::GameError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Malformed JSON, an unknown field value, a bad FEN, a bad query.
    #[error("{0}")]
    BadRequest(String),
    /// The move is not legal in the game's current position.
    #[error("{0}")]
    IllegalMove(String),
    /// No token, or a token the server does not know.
    #[error("a valid token is required")]
    Unauthorized,
    /// A valid token that does not allow this (another game's seat, a spectator).
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    /// The path exists but not with this method (an addition to the table).
    #[error("this method is not allowed here")]
    MethodNotAllowed,
    #[error("it is not your turn")]
    NotYourTurn(String),
    #[error("the game is over")]
    GameOver,
    #[error("no free seat in this game")]
    SeatTaken,
    /// Analysis of a game still being played (an addition to the table).
    #[error("the game is not over yet: only finished games can be analysed")]
    NotFinished,
    /// Joining with the registered player who holds the other seat (an
    /// addition to the contract's table).
    #[error("you already hold the other seat of this game: a player cannot play themselves")]
    SamePlayer,
    #[error("this name is taken")]
    NameTaken,
    /// A login with a wrong name or a wrong password: one answer for both
    /// (401 `unauthorized`), so it tells nobody which names exist.
    #[error("wrong name or password")]
    WrongCredentials,
    /// A new password that is too short, too long or too common (400
    /// `weak_password`, an addition).
    #[error("{0}")]
    WeakPassword(String),
    /// A valid token without the scope this needs (403 `missing_scope`,
    /// an addition).
    #[error("this token lacks the scope {0:?}")]
    MissingScope(&'static str),
    /// Too many failed logins: wait `retry_after` seconds (429
    /// `rate_limited` with `Retry-After`).
    #[error("too many failed logins: try again in {retry_after} s")]
    LoginThrottled { retry_after: u64 },
    /// A player's abort after each side has moved (an addition).
    #[error("each side has moved: the game can no longer be aborted (resign instead)")]
    AbortTooLate,
    /// A takeback asked with no move of one's own to take back (an addition).
    #[error("{0}")]
    NothingToTakeBack(String),
    /// A rematch that cannot be offered (the game goes on, or had no
    /// opponent) (an addition).
    #[error("{0}")]
    NoRematch(String),
    #[error("{0}")]
    TooLarge(String),
    /// A request target over the limit (414 `too_large`, an addition).
    #[error("{0}")]
    UriTooLong(String),
    /// A header section over the limit (431 `too_large`, an addition).
    #[error("{0}")]
    HeadersTooLarge(String),
    #[error("too many requests: slow down")]
    RateLimited,
    /// A cap was reached (429 `rate_limited`), with a message saying which.
    #[error("{0}")]
    Limited(String),
    /// The server is shutting down (an addition to the contract's table).
    #[error("the server is shutting down")]
    Unavailable,
    /// The database could not store a change (disk full, read-only file,
    /// locked): nothing changed, or, when `ambiguous`, the change may have
    /// been stored and the game was reloaded from the database.
    #[error("{}", if *ambiguous {
        "the database could not confirm this change: reload the game to see whether it was saved"
    } else {
        "the database could not save this change, so nothing changed: try again shortly"
    })]
    DatabaseUnavailable { ambiguous: bool },
    /// In a cluster: this node lost the game's lease (another node took it
    /// over) while handling the request; nothing of it was stored. The
    /// registry retries on the new owner; a client that still sees it
    /// retries too (503 `unavailable`).
    #[error("the game moved to another node of the cluster: try again")]
    LeaseLost,
    /// The game did not answer within the request deadline.
    #[error("the game did not answer in time: reload it before trying again")]
    GameTimeout,
    /// Too busy to serve this now (too many connections, an answer that
    /// took too long): 503 `unavailable` with a message saying why.
    #[error("{0}")]
    Overloaded(String),
    /// This server sends no mail (no `--smtp-host`): 503
    /// `mail_unavailable` (issue 36).
    #[error("this server sends no mail: ask its operator to reset your password (rookery-server admin reset-password NAME)")]
    MailUnavailable,
    /// The SMTP server refused or could not be reached: 503 `mail_failed`.
    #[error("the mail could not be sent: try again later")]
    MailFailed,
    /// A verification link for an address another account has verified
    /// since: 409 `email_taken`.
    #[error("this address already belongs to another account")]
    EmailTaken,
    /// Anything that is our fault; the cause is logged, not sent.
    #[error("internal error")]
    Internal(String),
}

/// The JSON shape of an error: `{"error": {"code", "message"}}`.
#[derive(Debug, Serialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize)]
pub struct ErrorDetail {
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) | ApiError::IllegalMove(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized | ApiError::WrongCredentials => StatusCode::UNAUTHORIZED,
            ApiError::WeakPassword(_) => StatusCode::BAD_REQUEST,
            ApiError::MissingScope(_) => StatusCode::FORBIDDEN,
            ApiError::LoginThrottled { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::NotYourTurn(_)
            | ApiError::GameOver
            | ApiError::SeatTaken
            | ApiError::NotFinished
            | ApiError::SamePlayer
            | ApiError::NameTaken
            | ApiError::AbortTooLate
            | ApiError::NothingToTakeBack(_)
            | ApiError::NoRematch(_)
            | ApiError::EmailTaken => StatusCode::CONFLICT,
            ApiError::MailUnavailable | ApiError::MailFailed => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UriTooLong(_) => StatusCode::URI_TOO_LONG,
            ApiError::HeadersTooLarge(_) => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ApiError::RateLimited | ApiError::Limited(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable
            | ApiError::Overloaded(_)
            | ApiError::DatabaseUnavailable { .. }
            | ApiError::LeaseLost
            | ApiError::GameTimeout => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest(_) => "bad_request",
            ApiError::IllegalMove(_) => "illegal_move",
            ApiError::Unauthorized | ApiError::WrongCredentials => "unauthorized",
            ApiError::WeakPassword(_) => "weak_password",
            ApiError::MissingScope(_) => "missing_scope",
            ApiError::LoginThrottled { .. } => "rate_limited",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound(_) => "not_found",
            ApiError::MethodNotAllowed => "method_not_allowed",
            ApiError::NotYourTurn(_) => "not_your_turn",
            ApiError::GameOver => "game_over",
            ApiError::SeatTaken => "seat_taken",
            ApiError::NotFinished => "not_finished",
            ApiError::SamePlayer => "same_player",
            ApiError::NameTaken => "name_taken",
            ApiError::AbortTooLate => "abort_too_late",
            ApiError::NothingToTakeBack(_) => "nothing_to_take_back",
            ApiError::NoRematch(_) => "no_rematch",
            ApiError::MailUnavailable => "mail_unavailable",
            ApiError::MailFailed => "mail_failed",
            ApiError::EmailTaken => "email_taken",
            ApiError::TooLarge(_) | ApiError::UriTooLong(_) | ApiError::HeadersTooLarge(_) => {
                "too_large"
            }
            ApiError::RateLimited | ApiError::Limited(_) => "rate_limited",
            ApiError::Unavailable
            | ApiError::Overloaded(_)
            | ApiError::DatabaseUnavailable { .. }
            | ApiError::LeaseLost
            | ApiError::GameTimeout => "unavailable",
            ApiError::Internal(_) => "internal",
        }
    }

    /// The message the client sees. Internal causes stay in the log.
    pub fn message(&self) -> String {
        match self {
            ApiError::NotYourTurn(detail) => detail.clone(),
            other => other.to_string(),
        }
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code(),
                message: self.message(),
            },
        }
    }

    pub fn internal(cause: impl std::fmt::Display) -> ApiError {
        ApiError::Internal(cause.to_string())
    }

    pub fn game_not_found() -> ApiError {
        ApiError::NotFound("no such game".into())
    }

    /// Logs an error at the level its kind deserves: ours at `error`, the
    /// client's at `debug` (they are normal traffic).
    pub fn log(&self) {
        match self {
            ApiError::Internal(cause) => tracing::error!(%cause, "internal error"),
            ApiError::Unavailable => tracing::info!("request refused: shutting down"),
            ApiError::DatabaseUnavailable { .. } | ApiError::GameTimeout => {
                tracing::warn!(code = self.code(), message = %self.message(), "request failed")
            }
            other => {
                tracing::debug!(code = other.code(), message = %other.message(), "client error")
            }
        }
    }
}

impl ApiError {
    /// A game's answer of kind `refusal`, with its message: the one map
    /// from the live floor's kinds of answer to the contract's errors.
    pub fn refused(refusal: Refusal, message: String) -> ApiError {
        match refusal {
            Refusal::BadRequest => ApiError::BadRequest(message),
            Refusal::IllegalMove => ApiError::IllegalMove(message),
            Refusal::Unauthorized => ApiError::Unauthorized,
            Refusal::Forbidden => ApiError::Forbidden(message),
            Refusal::NotFound => ApiError::NotFound(message),
            Refusal::NotYourTurn => ApiError::NotYourTurn(message),
            Refusal::GameOver => ApiError::GameOver,
            Refusal::SeatTaken => ApiError::SeatTaken,
            Refusal::NotFinished => ApiError::NotFinished,
            Refusal::SamePlayer => ApiError::SamePlayer,
            Refusal::AbortTooLate => ApiError::AbortTooLate,
            Refusal::NothingToTakeBack => ApiError::NothingToTakeBack(message),
            Refusal::NoRematch => ApiError::NoRematch(message),
            Refusal::RateLimited => ApiError::Limited(message),
            Refusal::Unavailable => ApiError::Overloaded(message),
            Refusal::Moved => ApiError::LeaseLost,
            Refusal::Internal => ApiError::Internal(message),
        }
    }
}

impl From<GameError> for ApiError {
    /// A live game's refusal, as the contract's code.
    fn from(err: GameError) -> ApiError {
        ApiError::refused(err.refusal(), err.to_string())
    }
}

impl From<LiveError> for ApiError {
    /// The live floor's error, as the contract's code. What the floors
    /// below said is kept as they said it (the store's ambiguity, the
    /// internal cause); the rest goes by its kind.
    fn from(err: LiveError) -> ApiError {
        match err {
            LiveError::Game(err) => err.into(),
            LiveError::Store(err) => err.into(),
            LiveError::Moved => ApiError::LeaseLost,
            LiveError::ShuttingDown => ApiError::Unavailable,
            LiveError::Timeout => ApiError::GameTimeout,
            LiveError::Internal(cause) => ApiError::Internal(cause),
            other => ApiError::refused(other.refusal(), other.to_string()),
        }
    }
}

impl From<crate::ai::analysis::AnalysisError> for ApiError {
    fn from(err: crate::ai::analysis::AnalysisError) -> ApiError {
        use crate::ai::analysis::AnalysisError;
        match err {
            AnalysisError::Limited(message) => ApiError::refused(Refusal::RateLimited, message),
            AnalysisError::NoSuchGame => {
                ApiError::refused(Refusal::NotFound, "no such game".to_string())
            }
            AnalysisError::ShuttingDown => ApiError::Unavailable,
            AnalysisError::Store(err) => err.into(),
            AnalysisError::Internal(cause) => ApiError::Internal(cause),
        }
    }
}

impl From<crate::store::StoreError> for ApiError {
    /// The store's failure, as the contract's code: the one place where a
    /// database problem becomes an HTTP or WebSocket answer.
    fn from(err: crate::store::StoreError) -> ApiError {
        use crate::store::StoreError;
        match err {
            StoreError::Unavailable { ambiguous } => ApiError::DatabaseUnavailable { ambiguous },
            StoreError::Fenced => ApiError::LeaseLost,
            StoreError::Closed => ApiError::Unavailable,
            StoreError::NameTaken => ApiError::NameTaken,
            StoreError::BadCursor(message) => ApiError::BadRequest(message),
            StoreError::Internal(cause) => ApiError::Internal(format!("database: {cause}")),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.log();
        let mut response = (self.status(), axum::Json(self.body())).into_response();
        if let ApiError::LoginThrottled { retry_after } = self {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(retry_after.max(1)),
            );
        }
        response
    }
}

impl From<crate::protocol::validate::Invalid> for ApiError {
    fn from(err: crate::protocol::validate::Invalid) -> ApiError {
        ApiError::BadRequest(err.0)
    }
}

impl From<crate::identity::IdentityError> for ApiError {
    fn from(err: crate::identity::IdentityError) -> ApiError {
        use crate::identity::IdentityError;
        match err {
            IdentityError::Unauthorized => ApiError::Unauthorized,
            IdentityError::MissingScope(scope) => ApiError::MissingScope(scope),
            IdentityError::WeakPassword(why) => ApiError::WeakPassword(why),
            IdentityError::LoginThrottled { retry_after } => {
                ApiError::LoginThrottled { retry_after }
            }
            IdentityError::ShuttingDown => ApiError::Unavailable,
            IdentityError::Store(err) => ApiError::from(err),
            IdentityError::Internal(cause) => ApiError::internal(cause),
        }
    }
}

impl From<crate::teams::TeamError> for ApiError {
    fn from(err: crate::teams::TeamError) -> ApiError {
        use crate::teams::TeamError;
        match err {
            TeamError::NotFound(message) => ApiError::NotFound(message),
            TeamError::Forbidden(message) => ApiError::Forbidden(message),
            // lichess answers a refused change with 400 and its reason.
            TeamError::Invalid(message) | TeamError::Conflict(message) => {
                ApiError::BadRequest(message)
            }
            TeamError::Store(err) => err.into(),
        }
    }
}

impl From<crate::tournaments::swiss::SwissError> for ApiError {
    fn from(err: crate::tournaments::swiss::SwissError) -> ApiError {
        use crate::tournaments::swiss::SwissError;
        match err {
            SwissError::NotFound(message) => ApiError::NotFound(message),
            SwissError::Forbidden(message) => ApiError::Forbidden(message),
            SwissError::Invalid(message) | SwissError::Conflict(message) => {
                ApiError::BadRequest(message)
            }
            SwissError::Team(err) => err.into(),
            SwissError::Store(err) => err.into(),
            SwissError::Internal(cause) => ApiError::Internal(cause),
        }
    }
}

impl From<crate::token::RandomUnavailable> for ApiError {
    fn from(err: crate::token::RandomUnavailable) -> ApiError {
        ApiError::internal(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::messages::Reply;

    /// An error crossing the wire keeps its code and message, so a client
    /// of another node reads the answer the owner's own client would.
    #[test]
    fn errors_cross_the_wire_with_their_code_and_message() {
        let cases = [
            LiveError::Game(GameError::Illegal("e2e5".into())),
            LiveError::Game(GameError::NotYourTurn),
            LiveError::Game(GameError::SeatTaken),
            LiveError::Unauthorized,
            LiveError::Forbidden("this token holds a seat in another game".into()),
            LiveError::Limited("too many".into()),
            LiveError::Store(crate::store::StoreError::Unavailable { ambiguous: true }),
        ];
        for err in cases {
            let here = ApiError::from(err.clone());
            let json = serde_json::to_string(&Reply::Done(Err(err))).unwrap();
            let Reply::Done(Err(there)) = serde_json::from_str::<Reply>(&json).unwrap() else {
                panic!("not an error answer: {json}");
            };
            let there = ApiError::from(there);
            assert_eq!(
                (here.code(), here.status(), here.message()),
                (there.code(), there.status(), there.message()),
                "{json}"
            );
        }
    }
}
