//! [`IdentityError`]: why the identity floor refused or failed, converted
//! once at the edge (`http/error.rs`) into the contract's codes.

use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// No credential where one is needed, or one that names nobody.
    #[error("a valid token is required")]
    Unauthorized,
    /// The credential may not do this: it lacks the scope.
    #[error("this token lacks the {0} scope")]
    MissingScope(&'static str),
    /// A new password the rules refuse, saying why.
    #[error("{0}")]
    WeakPassword(String),
    /// Too many failed logins: try again in `retry_after` seconds.
    #[error("too many failed logins: try again in {retry_after} s")]
    LoginThrottled { retry_after: u64 },
    /// The server is shutting down (no hashing thread any more).
    #[error("the server is shutting down")]
    ShuttingDown,
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A failure that is ours, not the client's (logged, never sent).
    #[error("{0}")]
    Internal(String),
}

impl IdentityError {
    pub fn internal(cause: impl std::fmt::Display) -> IdentityError {
        IdentityError::Internal(cause.to_string())
    }
}
