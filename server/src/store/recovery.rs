//! Getting an account back (issue 36, migrations/0017): the account's
//! verified e-mail address and the single-use links that verify an address
//! or reset the password. Links are kept as the SHA-256 of their token,
//! like every other secret. Using a link is one write that first marks it
//! used (only if it is unused and unexpired, else the write is refused and
//! changes nothing), so two uses of one link cannot both succeed.

use super::backend::{on_conn, on_pool, Conn};
use super::error::StoreError;
use super::writer::{Write, WriteError};
use super::{now_ms, Store};
use crate::token::TokenHash;

/// What a link is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkPurpose {
    /// Verifies an address for the account.
    Verify,
    /// Sets a new password.
    Reset,
}

impl LinkPurpose {
    fn as_str(self) -> &'static str {
        match self {
            LinkPurpose::Verify => "verify",
            LinkPurpose::Reset => "reset",
        }
    }
}

/// A write of the recovery tables.
#[derive(Debug, Clone)]
pub enum RecoveryWrite {
    CreateLink {
        token_hash: String,
        player_id: String,
        purpose: LinkPurpose,
        email: Option<String>,
        at: i64,
        expires_at: i64,
    },
    /// Uses a verification link: its address becomes the account's.
    VerifyEmail { token_hash: String, at: i64 },
    /// Forgets the account's address (and its links not yet used).
    ClearEmail { player_id: String },
    /// Uses a reset link: the new password, every session ended, every
    /// other reset link of the account spent.
    ResetPassword {
        token_hash: String,
        password_hash: String,
        at: i64,
    },
}

/// Marks the link used if it is usable; `RowNotFound` (a refusal: the
/// write changes nothing) if it is unknown, used or expired. Returns its
/// account and address.
async fn spend(
    mut conn: Conn<'_>,
    token_hash: &str,
    purpose: LinkPurpose,
    at: i64,
) -> Result<(String, Option<String>), sqlx::Error> {
    let row: Option<(String, Option<String>)> = on_conn!(conn.reborrow(), c => sqlx::query_as(
        "SELECT player_id, email FROM account_links
         WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3",
    )
    .bind(token_hash)
    .bind(purpose.as_str())
    .bind(at)
    .fetch_optional(c)
    .await)?;
    let found = row.ok_or(sqlx::Error::RowNotFound)?;
    on_conn!(conn, c => sqlx::query("UPDATE account_links SET used_at = $1 WHERE token_hash = $2")
        .bind(at)
        .bind(token_hash)
        .execute(c)
        .await
        .map(|_| ()))?;
    Ok(found)
}

impl RecoveryWrite {
    pub async fn apply(&self, mut conn: Conn<'_>) -> Result<(), sqlx::Error> {
        match self {
            RecoveryWrite::CreateLink {
                token_hash,
                player_id,
                purpose,
                email,
                at,
                expires_at,
            } => on_conn!(conn, c => sqlx::query(
                "INSERT INTO account_links (token_hash, player_id, purpose, email, created_at, expires_at)
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(token_hash)
            .bind(player_id)
            .bind(purpose.as_str())
            .bind(email)
            .bind(at)
            .bind(expires_at)
            .execute(c)
            .await
            .map(|_| ())),
            RecoveryWrite::VerifyEmail { token_hash, at } => {
                let (player_id, email) =
                    spend(conn.reborrow(), token_hash, LinkPurpose::Verify, *at).await?;
                let email = email.ok_or(sqlx::Error::RowNotFound)?;
                // Another account's verified address: the unique index
                // refuses it (409 `email_taken`).
                on_conn!(conn, c => sqlx::query(
                    "UPDATE players SET email = $1, email_key = $2 WHERE id = $3",
                )
                .bind(&email)
                .bind(email.to_lowercase())
                .bind(&player_id)
                .execute(c)
                .await
                .map(|_| ()))
            }
            RecoveryWrite::ClearEmail { player_id } => {
                on_conn!(conn.reborrow(), c => sqlx::query(
                    "UPDATE players SET email = NULL, email_key = NULL WHERE id = $1",
                )
                .bind(player_id)
                .execute(c)
                .await
                .map(|_| ()))?;
                on_conn!(conn, c => sqlx::query(
                    "UPDATE account_links SET used_at = $1 WHERE player_id = $2 AND used_at IS NULL",
                )
                .bind(now_ms())
                .bind(player_id)
                .execute(c)
                .await
                .map(|_| ()))
            }
            RecoveryWrite::ResetPassword {
                token_hash,
                password_hash,
                at,
            } => {
                let (player_id, _) =
                    spend(conn.reborrow(), token_hash, LinkPurpose::Reset, *at).await?;
                on_conn!(conn.reborrow(), c => sqlx::query(
                    "UPDATE players SET password_hash = $1 WHERE id = $2",
                )
                .bind(password_hash)
                .bind(&player_id)
                .execute(c)
                .await
                .map(|_| ()))?;
                on_conn!(conn.reborrow(), c => sqlx::query("DELETE FROM sessions WHERE player_id = $1")
                    .bind(&player_id)
                    .execute(c)
                    .await
                    .map(|_| ()))?;
                on_conn!(conn, c => sqlx::query(
                    "UPDATE account_links SET used_at = $1
                     WHERE player_id = $2 AND purpose = 'reset' AND used_at IS NULL",
                )
                .bind(at)
                .bind(&player_id)
                .execute(c)
                .await
                .map(|_| ()))
            }
        }
    }
}

/// An account that can be sent a reset link.
#[derive(Debug, Clone)]
pub struct Recoverable {
    pub player_id: String,
    pub name: String,
    /// Its verified address.
    pub email: String,
}

/// Why a link could not be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkRefused {
    /// Unknown, used already, or expired.
    Unusable,
    /// A verification link for an address another account verified since.
    EmailTaken,
}

impl Store {
    async fn recovery_write(&self, write: RecoveryWrite) -> Result<(), WriteError> {
        self.write(Write::Account(super::accounts::AccountWrite::Recovery(
            write,
        )))
        .await
    }

    /// Keeps a new link's hash; it works until `expires_at`.
    pub async fn create_link(
        &self,
        token: &TokenHash,
        player_id: &str,
        purpose: LinkPurpose,
        email: Option<&str>,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        Ok(self
            .recovery_write(RecoveryWrite::CreateLink {
                token_hash: token.0.clone(),
                player_id: player_id.to_string(),
                purpose,
                email: email.map(str::to_string),
                at: now_ms(),
                expires_at,
            })
            .await?)
    }

    /// When the account was last sent a link for `purpose`, if ever.
    pub async fn last_link_at(
        &self,
        player_id: &str,
        purpose: LinkPurpose,
    ) -> Result<Option<i64>, StoreError> {
        let row: Option<(Option<i64>,)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT MAX(created_at) FROM account_links WHERE player_id = $1 AND purpose = $2",
        )
        .bind(player_id)
        .bind(purpose.as_str())
        .fetch_optional(pool)
        .await)?;
        Ok(row.and_then(|(at,)| at))
    }

    /// The open account whose name or verified address is `login`
    /// (ignoring case), if it has an address to send a link to.
    pub async fn recoverable(&self, login: &str) -> Result<Option<Recoverable>, StoreError> {
        let key = login.trim().to_lowercase();
        let row: Option<(String, String, String)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT id, name, email FROM players
             WHERE (name_key = $1 OR email_key = $1) AND email IS NOT NULL
               AND password_hash IS NOT NULL AND closed_at IS NULL",
        )
        .bind(&key)
        .fetch_optional(pool)
        .await)?;
        Ok(row.map(|(player_id, name, email)| Recoverable {
            player_id,
            name,
            email,
        }))
    }

    /// The account's verified address, if any.
    pub async fn email_of(&self, player_id: &str) -> Result<Option<String>, StoreError> {
        let row: Option<(Option<String>,)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT email FROM players WHERE id = $1",
        )
        .bind(player_id)
        .fetch_optional(pool)
        .await)?;
        Ok(row.and_then(|(email,)| email))
    }

    /// The address waiting for its verification link, if one was sent and
    /// still works.
    pub async fn pending_email_of(&self, player_id: &str) -> Result<Option<String>, StoreError> {
        let row: Option<(Option<String>,)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT email FROM account_links
             WHERE player_id = $1 AND purpose = 'verify' AND used_at IS NULL AND expires_at > $2
             ORDER BY created_at DESC LIMIT 1",
        )
        .bind(player_id)
        .bind(now_ms())
        .fetch_optional(pool)
        .await)?;
        Ok(row.and_then(|(email,)| email))
    }

    pub async fn clear_email(&self, player_id: &str) -> Result<(), StoreError> {
        Ok(self
            .recovery_write(RecoveryWrite::ClearEmail {
                player_id: player_id.to_string(),
            })
            .await?)
    }

    /// Uses a verification link.
    pub async fn verify_email(
        &self,
        token: &TokenHash,
    ) -> Result<Result<(), LinkRefused>, StoreError> {
        let write = RecoveryWrite::VerifyEmail {
            token_hash: token.0.clone(),
            at: now_ms(),
        };
        refusal(self.recovery_write(write).await)
    }

    /// Uses a reset link: the password becomes `password_hash` and every
    /// session of the account ends.
    pub async fn reset_password(
        &self,
        token: &TokenHash,
        password_hash: String,
    ) -> Result<Result<(), LinkRefused>, StoreError> {
        let write = RecoveryWrite::ResetPassword {
            token_hash: token.0.clone(),
            password_hash,
            at: now_ms(),
        };
        refusal(self.recovery_write(write).await)
    }

    /// The account a reset link would reset, if the link is usable now
    /// (the page asks before showing the form).
    pub async fn reset_link_account(
        &self,
        token: &TokenHash,
    ) -> Result<Option<String>, StoreError> {
        let row: Option<(String,)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT p.name FROM account_links l JOIN players p ON p.id = l.player_id
             WHERE l.token_hash = $1 AND l.purpose = 'reset' AND l.used_at IS NULL
               AND l.expires_at > $2",
        )
        .bind(&token.0)
        .bind(now_ms())
        .fetch_optional(pool)
        .await)?;
        Ok(row.map(|(name,)| name))
    }
}

/// A refused link write as the reason it was refused.
fn refusal(result: Result<(), WriteError>) -> Result<Result<(), LinkRefused>, StoreError> {
    match result {
        Ok(()) => Ok(Ok(())),
        Err(WriteError::Rejected(cause)) if cause.is_unique_violation() => {
            Ok(Err(LinkRefused::EmailTaken))
        }
        Err(WriteError::Rejected(_)) => Ok(Err(LinkRefused::Unusable)),
        Err(err) => Err(err.into()),
    }
}
