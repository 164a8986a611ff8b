//! Accounts, sessions and personal API tokens (migrations/0009). Writes go
//! through the one writer like every other write; reads use the read pool.

use uuid::Uuid;

use super::backend::{on_conn, on_pool, Conn};
use super::error::StoreError;
use super::writer::{Write, WriteError};
use super::{now_ms, Store};
use crate::domain::PlayerRef;
use crate::protocol::SeatRating;
use crate::token::TokenHash;

/// A session idle this long is over: its cookie no longer works.
pub const SESSION_IDLE_MS: i64 = 30 * 24 * 3600 * 1000;
/// `last_seen_at` is written at most this often per session or token.
const TOUCH_EVERY_MS: i64 = 60 * 1000;

/// A write of the account tables.
#[derive(Debug, Clone)]
pub enum AccountWrite {
    /// A new player with a password (`token_hash`: a player token nobody
    /// is shown, for the column every player has).
    CreateAccount {
        id: String,
        name: String,
        token_hash: String,
        password_hash: String,
        created_at: i64,
    },
    SetPassword {
        player_id: String,
        password_hash: String,
    },
    CreateSession {
        id: String,
        player_id: String,
        token_hash: String,
        device: String,
        at: i64,
    },
    TouchSession {
        id: String,
        at: i64,
    },
    /// Ends one session of the player (`id`), or all of them but `keep`.
    EndSessions {
        player_id: String,
        id: Option<String>,
        keep: Option<String>,
    },
    CreateApiToken {
        id: String,
        player_id: String,
        token_hash: String,
        description: String,
        scopes: String,
        at: i64,
    },
    TouchApiToken {
        id: String,
        at: i64,
    },
    RevokeApiToken {
        player_id: String,
        id: String,
    },
    /// E-mail addresses and recovery links (issue 36).
    Recovery(super::recovery::RecoveryWrite),
}

impl AccountWrite {
    pub async fn apply(&self, conn: Conn<'_>) -> Result<(), sqlx::Error> {
        match self {
            AccountWrite::CreateAccount {
                id,
                name,
                token_hash,
                password_hash,
                created_at,
            } => on_conn!(conn, c => sqlx::query(
                "INSERT INTO players (id, name, name_key, token_hash, created_at, password_hash)
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(id)
            .bind(name)
            .bind(name.to_lowercase())
            .bind(token_hash)
            .bind(created_at)
            .bind(password_hash)
            .execute(c)
            .await
            .map(|_| ())),
            AccountWrite::SetPassword {
                player_id,
                password_hash,
            } => on_conn!(conn, c => sqlx::query(
                "UPDATE players SET password_hash = $1 WHERE id = $2",
            )
            .bind(password_hash)
            .bind(player_id)
            .execute(c)
            .await
            .map(|_| ())),
            AccountWrite::CreateSession {
                id,
                player_id,
                token_hash,
                device,
                at,
            } => on_conn!(conn, c => sqlx::query(
                "INSERT INTO sessions (id, player_id, token_hash, device, created_at, last_seen_at)
                 VALUES ($1, $2, $3, $4, $5, $5)",
            )
            .bind(id)
            .bind(player_id)
            .bind(token_hash)
            .bind(device)
            .bind(at)
            .execute(c)
            .await
            .map(|_| ())),
            AccountWrite::TouchSession { id, at } => on_conn!(conn, c => sqlx::query(
                "UPDATE sessions SET last_seen_at = $1 WHERE id = $2",
            )
            .bind(at)
            .bind(id)
            .execute(c)
            .await
            .map(|_| ())),
            AccountWrite::EndSessions {
                player_id,
                id,
                keep,
            } => on_conn!(conn, c => sqlx::query(
                "DELETE FROM sessions WHERE player_id = $1
                   AND ($2 IS NULL OR id = $2) AND ($3 IS NULL OR id != $3)",
            )
            .bind(player_id)
            .bind(id)
            .bind(keep)
            .execute(c)
            .await
            .map(|_| ())),
            AccountWrite::CreateApiToken {
                id,
                player_id,
                token_hash,
                description,
                scopes,
                at,
            } => on_conn!(conn, c => sqlx::query(
                "INSERT INTO api_tokens (id, player_id, token_hash, description, scopes, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(id)
            .bind(player_id)
            .bind(token_hash)
            .bind(description)
            .bind(scopes)
            .bind(at)
            .execute(c)
            .await
            .map(|_| ())),
            AccountWrite::TouchApiToken { id, at } => on_conn!(conn, c => sqlx::query(
                "UPDATE api_tokens SET last_used_at = $1 WHERE id = $2",
            )
            .bind(at)
            .bind(id)
            .execute(c)
            .await
            .map(|_| ())),
            AccountWrite::RevokeApiToken { player_id, id } => on_conn!(conn, c => sqlx::query(
                "DELETE FROM api_tokens WHERE player_id = $1 AND id = $2",
            )
            .bind(player_id)
            .bind(id)
            .execute(c)
            .await
            .map(|_| ())),
            AccountWrite::Recovery(write) => write.apply(conn).await,
        }
    }
}

/// What a login checks: the player and their password hash, if any.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub player: PlayerRef,
    pub password_hash: Option<String>,
}

/// A session or an API token found by its hash.
#[derive(Debug, Clone)]
pub struct Grant {
    /// The session's or token's id.
    pub id: String,
    pub player: PlayerRef,
    /// The token's scopes (space-separated); sessions have all.
    pub scopes: Option<String>,
    pub last_seen_at: Option<i64>,
}

/// A session as its account lists it.
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow)]
pub struct SessionRow {
    pub id: String,
    pub device: String,
    pub created_at: i64,
    pub last_seen_at: i64,
}

/// An API token as its account lists it (never the token itself).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ApiTokenRow {
    pub id: String,
    pub description: String,
    pub scopes: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
}

type PlayerColumns = (String, String, f64, f64);

fn player((id, name, rating, deviation): PlayerColumns) -> PlayerRef {
    PlayerRef {
        id,
        name,
        rating: SeatRating::of(rating, deviation),
    }
}

impl Store {
    async fn account_write(&self, write: AccountWrite) -> Result<(), WriteError> {
        self.write(Write::Account(write)).await
    }

    /// Creates an account: 409 `name_taken` when the name is.
    pub async fn create_account(
        &self,
        id: Uuid,
        name: &str,
        password_hash: String,
    ) -> Result<(), StoreError> {
        let token = crate::token::mint()?;
        let write = AccountWrite::CreateAccount {
            id: id.to_string(),
            name: name.to_string(),
            token_hash: token.hash.0,
            password_hash,
            created_at: now_ms(),
        };
        match self.account_write(write).await {
            Ok(()) => Ok(()),
            Err(WriteError::Rejected(cause)) if cause.is_unique_violation() => {
                Err(StoreError::NameTaken)
            }
            Err(err) => Err(err.into()),
        }
    }

    pub async fn set_password(
        &self,
        player_id: &str,
        password_hash: String,
    ) -> Result<(), StoreError> {
        Ok(self
            .account_write(AccountWrite::SetPassword {
                player_id: player_id.to_string(),
                password_hash,
            })
            .await?)
    }

    /// The player called `name` (ignoring case) and their password hash.
    pub async fn credentials(&self, name: &str) -> Result<Option<Credentials>, StoreError> {
        let row: Option<(String, String, f64, f64, Option<String>)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT id, name, rating, rating_deviation, password_hash
                 FROM players WHERE name_key = $1",
            )
            .bind(name.to_lowercase())
            .fetch_optional(pool)
            .await)?;
        Ok(
            row.map(|(id, name, rating, deviation, password_hash)| Credentials {
                player: player((id, name, rating, deviation)),
                password_hash,
            }),
        )
    }

    /// The player with id `id`, and whether they have a password.
    pub async fn player_by_id(&self, id: &str) -> Result<Option<(PlayerRef, bool)>, StoreError> {
        let row: Option<(String, String, f64, f64, Option<String>)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT id, name, rating, rating_deviation, password_hash FROM players WHERE id = $1",
            )
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(|(id, name, rating, deviation, password)| {
            (player((id, name, rating, deviation)), password.is_some())
        }))
    }

    pub async fn create_session(
        &self,
        player_id: &str,
        token: &TokenHash,
        device: &str,
    ) -> Result<String, StoreError> {
        let id = Uuid::new_v4().to_string();
        self.account_write(AccountWrite::CreateSession {
            id: id.clone(),
            player_id: player_id.to_string(),
            token_hash: token.0.clone(),
            device: device.to_string(),
            at: now_ms(),
        })
        .await?;
        Ok(id)
    }

    /// The live session whose token hashes to `token` (an idle one is
    /// over); its last-seen time is brought up to date.
    pub async fn session(&self, token: &TokenHash) -> Result<Option<Grant>, StoreError> {
        let now = now_ms();
        let row: Option<(String, i64, String, String, f64, f64)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT s.id, s.last_seen_at, p.id, p.name, p.rating, p.rating_deviation
                 FROM sessions s JOIN players p ON p.id = s.player_id
                 WHERE s.token_hash = $1 AND s.last_seen_at > $2",
            )
            .bind(&token.0)
            .bind(now - SESSION_IDLE_MS)
            .fetch_optional(pool)
            .await)?;
        let Some((id, seen, player_id, name, rating, deviation)) = row else {
            return Ok(None);
        };
        if now - seen >= TOUCH_EVERY_MS {
            self.account_write(AccountWrite::TouchSession {
                id: id.clone(),
                at: now,
            })
            .await?;
        }
        Ok(Some(Grant {
            id,
            player: player((player_id, name, rating, deviation)),
            scopes: None,
            last_seen_at: Some(seen),
        }))
    }

    pub async fn sessions_of(&self, player_id: &str) -> Result<Vec<SessionRow>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT id, device, created_at, last_seen_at FROM sessions
             WHERE player_id = $1 AND last_seen_at > $2 ORDER BY last_seen_at DESC",
        )
        .bind(player_id)
        .bind(now_ms() - SESSION_IDLE_MS)
        .fetch_all(pool)
        .await)?)
    }

    /// Ends one session of the player (`Some(id)`) or all but `keep`.
    pub async fn end_sessions(
        &self,
        player_id: &str,
        id: Option<&str>,
        keep: Option<&str>,
    ) -> Result<(), StoreError> {
        Ok(self
            .account_write(AccountWrite::EndSessions {
                player_id: player_id.to_string(),
                id: id.map(str::to_string),
                keep: keep.map(str::to_string),
            })
            .await?)
    }

    pub async fn create_api_token(
        &self,
        player_id: &str,
        token: &TokenHash,
        description: &str,
        scopes: &str,
    ) -> Result<(String, i64), StoreError> {
        let id = Uuid::new_v4().to_string();
        let at = now_ms();
        self.account_write(AccountWrite::CreateApiToken {
            id: id.clone(),
            player_id: player_id.to_string(),
            token_hash: token.0.clone(),
            description: description.to_string(),
            scopes: scopes.to_string(),
            at,
        })
        .await?;
        Ok((id, at))
    }

    /// The API token whose hash is `token`, with its player and scopes.
    pub async fn api_token(&self, token: &TokenHash) -> Result<Option<Grant>, StoreError> {
        /// The token's id, scopes and last use, then its player's columns.
        type TokenColumns = (String, String, Option<i64>, String, String, f64, f64);
        let row: Option<TokenColumns> = on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT t.id, t.scopes, t.last_used_at, p.id, p.name, p.rating, p.rating_deviation
                 FROM api_tokens t JOIN players p ON p.id = t.player_id
                 WHERE t.token_hash = $1",
            )
            .bind(&token.0)
            .fetch_optional(pool)
            .await)?;
        let Some((id, scopes, used, player_id, name, rating, deviation)) = row else {
            return Ok(None);
        };
        let now = now_ms();
        if used.is_none_or(|used| now - used >= TOUCH_EVERY_MS) {
            self.account_write(AccountWrite::TouchApiToken {
                id: id.clone(),
                at: now,
            })
            .await?;
        }
        Ok(Some(Grant {
            id,
            player: player((player_id, name, rating, deviation)),
            scopes: Some(scopes),
            last_seen_at: used,
        }))
    }

    pub async fn api_tokens_of(&self, player_id: &str) -> Result<Vec<ApiTokenRow>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT id, description, scopes, created_at, last_used_at FROM api_tokens
             WHERE player_id = $1 ORDER BY created_at DESC",
        )
        .bind(player_id)
        .fetch_all(pool)
        .await)?)
    }

    /// Revokes the player's token `id`; whether there was one.
    pub async fn revoke_api_token(&self, player_id: &str, id: &str) -> Result<bool, StoreError> {
        let exists = self
            .api_tokens_of(player_id)
            .await?
            .iter()
            .any(|token| token.id == id);
        if exists {
            self.account_write(AccountWrite::RevokeApiToken {
                player_id: player_id.to_string(),
                id: id.to_string(),
            })
            .await?;
        }
        Ok(exists)
    }
}
