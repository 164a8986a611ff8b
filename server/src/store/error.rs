//! The store's own error: what can go wrong below the game's floor, in
//! words the floors above decide about (retry, reload, refuse). The HTTP
//! edge turns it into the contract's codes once (`http::error`); nothing
//! here knows about status codes.

use super::writer::WriteError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The database could not store a change (disk full, read-only file,
    /// locked): nothing changed, or, when `ambiguous`, the change may have
    /// been stored (the commit's answer was lost) and the game must be
    /// reloaded from the database.
    #[error("{}", if *ambiguous {
        "the database could not confirm this change: reload the game to see whether it was saved"
    } else {
        "the database could not save this change, so nothing changed: try again shortly"
    })]
    Unavailable { ambiguous: bool },
    /// In a cluster: this node's lease on the game was taken over by
    /// another node, so the write was refused by the fence and nothing of
    /// it was stored.
    #[error("the game moved to another node of the cluster: try again")]
    Fenced,
    /// The store is closed: the server is shutting down.
    #[error("the server is shutting down")]
    Closed,
    /// A unique name that another player or account already holds.
    #[error("this name is taken")]
    NameTaken,
    /// A page cursor that no earlier page handed out.
    #[error("{0}")]
    BadCursor(String),
    /// Anything else: a query failed, a stored row does not decode. Our
    /// fault, logged where it is turned into an answer, never sent.
    #[error("database: {0}")]
    Internal(String),
}

impl StoreError {
    pub fn internal(cause: impl std::fmt::Display) -> StoreError {
        StoreError::Internal(cause.to_string())
    }

    /// Logs a failure nobody answers for (a background renewal, a
    /// release), at the level the HTTP edge would give it.
    pub fn log(&self) {
        match self {
            StoreError::Internal(cause) => tracing::error!(%cause, "internal error"),
            StoreError::Closed => tracing::info!("store closed: shutting down"),
            StoreError::Unavailable { .. } => {
                tracing::warn!(message = %self, "database write failed")
            }
            other => tracing::debug!(message = %other, "store refused"),
        }
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> StoreError {
        StoreError::Internal(err.to_string())
    }
}

impl From<crate::token::RandomUnavailable> for StoreError {
    fn from(err: crate::token::RandomUnavailable) -> StoreError {
        StoreError::internal(err)
    }
}

impl From<WriteError> for StoreError {
    fn from(err: WriteError) -> StoreError {
        match err {
            WriteError::Rejected(cause) => {
                tracing::error!(%cause, "database refused a write");
                StoreError::Unavailable { ambiguous: false }
            }
            WriteError::Failed(cause) => {
                tracing::error!(%cause, "database write failed");
                StoreError::Unavailable { ambiguous: false }
            }
            WriteError::Ambiguous(cause) => {
                tracing::error!(%cause, "database commit failed");
                StoreError::Unavailable { ambiguous: true }
            }
            WriteError::Fenced => StoreError::Fenced,
            WriteError::Closed => StoreError::Closed,
        }
    }
}
