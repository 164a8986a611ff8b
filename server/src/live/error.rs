//! The live floor's error: why the registry, a game's actor or the cluster
//! could not do what was asked. The game's own refusals ([`GameError`])
//! and the store's failures ([`StoreError`]) pass through it; the HTTP
//! edge turns it into the contract's codes once (`http::error`), and the
//! cluster's wire carries it between nodes as a [`Refusal`] and a message.

use serde::{Deserialize, Serialize};

use super::game::GameError;
use crate::store::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiveError {
    /// The game's rules refused.
    #[error(transparent)]
    Game(#[from] GameError),
    /// The database could not do it (not `Fenced` or `Closed`, which
    /// become [`LiveError::Moved`] and [`LiveError::ShuttingDown`]).
    #[error(transparent)]
    Store(StoreError),
    /// In a cluster: the game is not (any more) this node's; nothing was
    /// done. The registry retries on the new owner.
    #[error("the game moved to another node of the cluster: try again")]
    Moved,
    #[error("no such game")]
    NoSuchGame,
    /// A token this game does not know.
    #[error("a valid token is required")]
    Unauthorized,
    /// A token that may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// The server is shutting down.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// The game did not answer within the request deadline.
    #[error("the game did not answer in time: reload it before trying again")]
    Timeout,
    /// Too busy to do it now, saying why.
    #[error("{0}")]
    Overloaded(String),
    /// A cap was reached, saying which.
    #[error("{0}")]
    Limited(String),
    /// Only finished games can be analysed.
    #[error("the game is not over yet: only finished games can be analysed")]
    NotFinished,
    /// Another node's answer, as it gave it.
    #[error("{message}")]
    Remote { refusal: Refusal, message: String },
    /// Anything that is our fault; the cause is logged, not sent.
    #[error("internal error: {0}")]
    Internal(String),
}

/// The kinds of answer a game can give, one per code of the contract: what
/// the cluster's wire carries (as the code's name) and what the HTTP edge
/// maps onto its error, both by exhaustive matches, so a new kind cannot be
/// forgotten on either side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    BadRequest,
    IllegalMove,
    Unauthorized,
    Forbidden,
    NotFound,
    NotYourTurn,
    GameOver,
    SeatTaken,
    NotFinished,
    SamePlayer,
    AbortTooLate,
    NothingToTakeBack,
    NoRematch,
    RateLimited,
    Unavailable,
    /// The game is not (any more) on the answering node.
    Moved,
    Internal,
}

impl GameError {
    /// The kind of answer this refusal is.
    pub fn refusal(&self) -> Refusal {
        match self {
            GameError::BadFen(_) | GameError::OverBeforeStart(_) | GameError::NoBerserk(_) => {
                Refusal::BadRequest
            }
            GameError::GameOver => Refusal::GameOver,
            GameError::SeatTaken => Refusal::SeatTaken,
            GameError::InviteRequired | GameError::WrongInvite => Refusal::Forbidden,
            GameError::SamePlayer => Refusal::SamePlayer,
            GameError::NotStarted | GameError::NotYourTurn => Refusal::NotYourTurn,
            GameError::NotUci(_) | GameError::Illegal(_) | GameError::Rejected(_) => {
                Refusal::IllegalMove
            }
            GameError::NothingToTakeBack(_) => Refusal::NothingToTakeBack,
            GameError::AbortTooLate => Refusal::AbortTooLate,
            GameError::NoRematch(_) => Refusal::NoRematch,
        }
    }
}

impl LiveError {
    pub fn internal(cause: impl std::fmt::Display) -> LiveError {
        LiveError::Internal(cause.to_string())
    }

    /// The kind of answer this is.
    pub fn refusal(&self) -> Refusal {
        match self {
            LiveError::Game(err) => err.refusal(),
            LiveError::Store(StoreError::NameTaken | StoreError::BadCursor(_)) => {
                Refusal::BadRequest
            }
            LiveError::Store(StoreError::Unavailable { .. }) => Refusal::Unavailable,
            LiveError::Moved
            | LiveError::ShuttingDown
            | LiveError::Store(StoreError::Fenced | StoreError::Closed) => Refusal::Moved,
            LiveError::Store(StoreError::Internal(_)) | LiveError::Internal(_) => Refusal::Internal,
            LiveError::NoSuchGame => Refusal::NotFound,
            LiveError::Unauthorized => Refusal::Unauthorized,
            LiveError::Forbidden(_) => Refusal::Forbidden,
            LiveError::Timeout | LiveError::Overloaded(_) => Refusal::Unavailable,
            LiveError::Limited(_) => Refusal::RateLimited,
            LiveError::NotFinished => Refusal::NotFinished,
            LiveError::Remote { refusal, .. } => *refusal,
        }
    }

    /// Another node's answer: "moved" is this floor's own retry signal,
    /// the rest stays as the owner gave it.
    pub fn remote(refusal: Refusal, message: String) -> LiveError {
        match refusal {
            Refusal::Moved => LiveError::Moved,
            refusal => LiveError::Remote { refusal, message },
        }
    }

    /// Logs a failure nobody answers for (a background task's), at the
    /// level the HTTP edge would give it.
    pub fn log(&self) {
        match self {
            LiveError::Store(err) => err.log(),
            LiveError::Internal(cause) => tracing::error!(%cause, "internal error"),
            LiveError::ShuttingDown => tracing::info!("refused: shutting down"),
            LiveError::Timeout => tracing::warn!(message = %self, "request failed"),
            other => tracing::debug!(message = %other, "refused"),
        }
    }
}

/// On the cluster's wire an error travels as its kind and message; the
/// receiving node reads it back as [`LiveError::remote`].
#[derive(Serialize, Deserialize)]
struct WireError {
    code: Refusal,
    message: String,
}

impl Serialize for LiveError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireError {
            code: self.refusal(),
            message: self.to_string(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for LiveError {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<LiveError, D::Error> {
        let wire = WireError::deserialize(deserializer)?;
        Ok(LiveError::remote(wire.code, wire.message))
    }
}

impl From<StoreError> for LiveError {
    fn from(err: StoreError) -> LiveError {
        match err {
            StoreError::Fenced => LiveError::Moved,
            StoreError::Closed => LiveError::ShuttingDown,
            other => LiveError::Store(other),
        }
    }
}
