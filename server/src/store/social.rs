//! What the community keeps (issue 37, migrations/0014): follows and
//! blocks, who may challenge a player, reports, the moderators' actions
//! (the audit log), notices told to a person, chat timeouts, closed
//! accounts. The rules about them (who may challenge whom, what a report
//! reason is) are the `social` room's; this file only stores and reads.
//!
//! Two questions other rooms ask are answered here, so pools and
//! tournaments need nothing else: [`Store::blocks_between`] (either of two
//! players blocks the other: never pair them) and
//! [`Store::is_marked_cheater`] (leave them out).

use uuid::Uuid;

use super::backend::{on_conn, on_pool, Conn};
use super::error::StoreError;
use super::writer::Write;
use super::{now_ms, Store};

/// A relation from one player to another.
pub const FOLLOW: &str = "follow";
pub const BLOCK: &str = "block";

/// What a moderator's action changes, besides its audit row.
#[derive(Debug, Clone)]
pub enum Effect {
    /// Nothing (a report dismissed).
    None,
    /// A notice the person sees on their next page load.
    Notice { id: String, text: String },
    /// Out of every chat until `until` (ms).
    Silence { until: i64 },
    /// Marked (or unmarked) as a cheater.
    Cheater(bool),
    /// The moderator role granted or revoked.
    Moderator(bool),
    /// The account closed: see [`SocialWrite::Close`].
    Close { token_hash: String },
}

#[derive(Debug, Clone)]
pub enum SocialWrite {
    /// `from` follows or blocks `to` (one relation per pair: the new one
    /// replaces the old).
    Relate {
        from_id: String,
        to_id: String,
        kind: &'static str,
        at: i64,
    },
    /// Ends `from`'s relation `kind` to `to`, if it is that kind.
    Unrelate {
        from_id: String,
        to_id: String,
        kind: &'static str,
    },
    SetChallengePolicy {
        player_id: String,
        policy: &'static str,
    },
    Report(NewReport),
    /// A moderator's action (or the operator's, `moderator_id` None): the
    /// audit row, its effect and the report it closes, in one transaction.
    ModAction {
        id: String,
        moderator_id: Option<String>,
        action: &'static str,
        target_id: String,
        details: String,
        report_id: Option<String>,
        effect: Effect,
        at: i64,
    },
    /// The owner closes their account: every session and API token ends,
    /// the password is removed, the player token replaced by one nobody
    /// knows; name and games stay.
    Close {
        player_id: String,
        token_hash: String,
        at: i64,
    },
    /// A notice dismissed by its person.
    NoticeSeen {
        player_id: String,
        id: String,
        at: i64,
    },
}

/// A report as it is filed.
#[derive(Debug, Clone)]
pub struct NewReport {
    pub id: String,
    pub reporter_id: String,
    pub suspect_id: String,
    pub reason: &'static str,
    pub text: String,
    pub game_id: Option<String>,
    pub at: i64,
}

/// Closes an account inside the caller's transaction.
async fn close_account(
    mut conn: Conn<'_>,
    player_id: &str,
    token_hash: &str,
    at: i64,
) -> Result<(), sqlx::Error> {
    for statement in [
        "DELETE FROM sessions WHERE player_id = $1",
        "DELETE FROM api_tokens WHERE player_id = $1",
    ] {
        on_conn!(conn.reborrow(), c => sqlx::query(statement)
            .bind(player_id)
            .execute(c)
            .await
            .map(|_| ()))?;
    }
    on_conn!(conn, c => sqlx::query(
        "UPDATE players SET password_hash = NULL, token_hash = $2,
             closed_at = COALESCE(closed_at, $3)
         WHERE id = $1",
    )
    .bind(player_id)
    .bind(token_hash)
    .bind(at)
    .execute(c)
    .await
    .map(|_| ()))
}

impl SocialWrite {
    pub async fn apply(&self, mut conn: Conn<'_>) -> Result<(), sqlx::Error> {
        match self {
            SocialWrite::Relate {
                from_id,
                to_id,
                kind,
                at,
            } => on_conn!(conn, c => sqlx::query(
                "INSERT INTO relations (from_id, to_id, kind, created_at) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (from_id, to_id) DO UPDATE SET kind = excluded.kind,
                     created_at = excluded.created_at",
            )
            .bind(from_id)
            .bind(to_id)
            .bind(*kind)
            .bind(at)
            .execute(c)
            .await
            .map(|_| ())),
            SocialWrite::Unrelate {
                from_id,
                to_id,
                kind,
            } => on_conn!(conn, c => sqlx::query(
                "DELETE FROM relations WHERE from_id = $1 AND to_id = $2 AND kind = $3",
            )
            .bind(from_id)
            .bind(to_id)
            .bind(*kind)
            .execute(c)
            .await
            .map(|_| ())),
            SocialWrite::SetChallengePolicy { player_id, policy } => {
                on_conn!(conn, c => sqlx::query(
                    "UPDATE players SET challenge_policy = $2 WHERE id = $1",
                )
                .bind(player_id)
                .bind(*policy)
                .execute(c)
                .await
                .map(|_| ()))
            }
            SocialWrite::Report(report) => on_conn!(conn, c => sqlx::query(
                "INSERT INTO reports (id, reporter_id, suspect_id, reason, text, game_id, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(&report.id)
            .bind(&report.reporter_id)
            .bind(&report.suspect_id)
            .bind(report.reason)
            .bind(&report.text)
            .bind(&report.game_id)
            .bind(report.at)
            .execute(c)
            .await
            .map(|_| ())),
            SocialWrite::ModAction {
                id,
                moderator_id,
                action,
                target_id,
                details,
                report_id,
                effect,
                at,
            } => {
                on_conn!(conn.reborrow(), c => sqlx::query(
                    "INSERT INTO mod_actions
                         (id, moderator_id, action, target_id, details, report_id, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(id)
                .bind(moderator_id)
                .bind(*action)
                .bind(target_id)
                .bind(details)
                .bind(report_id)
                .bind(at)
                .execute(c)
                .await
                .map(|_| ()))?;
                if let Some(report) = report_id {
                    on_conn!(conn.reborrow(), c => sqlx::query(
                        "UPDATE reports SET closed_at = $2, action_id = $3
                         WHERE id = $1 AND closed_at IS NULL",
                    )
                    .bind(report)
                    .bind(at)
                    .bind(id)
                    .execute(c)
                    .await
                    .map(|_| ()))?;
                }
                let flag = |column: &'static str, value: bool| {
                    format!("UPDATE players SET {column} = {value} WHERE id = $1")
                };
                match effect {
                    Effect::None => Ok(()),
                    Effect::Notice { id, text } => on_conn!(conn, c => sqlx::query(
                        "INSERT INTO notices (id, player_id, text, created_at) VALUES ($1, $2, $3, $4)",
                    )
                    .bind(id)
                    .bind(target_id)
                    .bind(text)
                    .bind(at)
                    .execute(c)
                    .await
                    .map(|_| ())),
                    Effect::Silence { until } => on_conn!(conn, c => sqlx::query(
                        "UPDATE players SET chat_silenced_until = $2 WHERE id = $1",
                    )
                    .bind(target_id)
                    .bind(until)
                    .execute(c)
                    .await
                    .map(|_| ())),
                    Effect::Cheater(marked) => {
                        let statement = flag("marked_cheater", *marked);
                        on_conn!(conn, c => sqlx::query(&statement)
                            .bind(target_id)
                            .execute(c)
                            .await
                            .map(|_| ()))
                    }
                    Effect::Moderator(granted) => {
                        let statement = flag("moderator", *granted);
                        on_conn!(conn, c => sqlx::query(&statement)
                            .bind(target_id)
                            .execute(c)
                            .await
                            .map(|_| ()))
                    }
                    Effect::Close { token_hash } => {
                        close_account(conn, target_id, token_hash, *at).await
                    }
                }
            }
            SocialWrite::Close {
                player_id,
                token_hash,
                at,
            } => close_account(conn, player_id, token_hash, *at).await,
            SocialWrite::NoticeSeen { player_id, id, at } => on_conn!(conn, c => sqlx::query(
                "UPDATE notices SET seen_at = $3 WHERE player_id = $1 AND id = $2 AND seen_at IS NULL",
            )
            .bind(player_id)
            .bind(id)
            .bind(at)
            .execute(c)
            .await
            .map(|_| ())),
        }
    }
}

/// A player's standing in the community.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub id: String,
    pub name: String,
    /// `everyone`, `following` or `nobody`.
    pub challenge_policy: String,
    pub moderator: bool,
    pub marked_cheater: bool,
    pub chat_silenced_until: Option<i64>,
    pub closed_at: Option<i64>,
}

type StandingColumns = (String, String, String, bool, bool, Option<i64>, Option<i64>);

fn standing(
    (id, name, challenge_policy, moderator, marked_cheater, chat_silenced_until, closed_at): StandingColumns,
) -> Standing {
    Standing {
        id,
        name,
        challenge_policy,
        moderator,
        marked_cheater,
        chat_silenced_until,
        closed_at,
    }
}

const STANDING: &str = "SELECT id, name, challenge_policy, moderator, marked_cheater,
        chat_silenced_until, closed_at FROM players";

/// A player named in a list: id and name.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Named {
    pub id: String,
    pub name: String,
}

/// A report as the moderators' queue shows it.
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow)]
pub struct ReportRow {
    pub id: String,
    pub reporter: String,
    pub suspect: String,
    pub reason: String,
    pub text: String,
    pub game_id: Option<String>,
    pub created_at: i64,
    pub closed_at: Option<i64>,
    pub action_id: Option<String>,
}

/// An entry of the audit log.
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow)]
pub struct ModActionRow {
    pub id: String,
    /// The moderator's name; None: the operator (command line).
    pub moderator: Option<String>,
    pub action: String,
    pub target: String,
    pub details: String,
    pub report_id: Option<String>,
    pub created_at: i64,
}

/// A notice told to a person.
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow)]
pub struct NoticeRow {
    pub id: String,
    pub text: String,
    pub created_at: i64,
}

const REPORT_COLUMNS: &str = "SELECT r.id, a.name AS reporter, s.name AS suspect, r.reason,
        r.text, r.game_id, r.created_at, r.closed_at, r.action_id
     FROM reports r JOIN players a ON a.id = r.reporter_id JOIN players s ON s.id = r.suspect_id";

impl Store {
    /// One of the community's writes.
    pub async fn social_write(&self, write: SocialWrite) -> Result<(), StoreError> {
        Ok(self.write(Write::Social(write)).await?)
    }

    /// The standing of the player with id `id`.
    pub async fn standing(&self, id: &str) -> Result<Option<Standing>, StoreError> {
        let sql = format!("{STANDING} WHERE id = $1");
        let row: Option<StandingColumns> = on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(standing))
    }

    /// The standing of the player called `name` (ignoring case).
    pub async fn standing_by_name(&self, name: &str) -> Result<Option<Standing>, StoreError> {
        let sql = format!("{STANDING} WHERE name_key = $1");
        let row: Option<StandingColumns> = on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(name.to_lowercase())
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(standing))
    }

    /// `from`'s relation to `to`: `follow`, `block` or none.
    pub async fn relation(&self, from_id: &str, to_id: &str) -> Result<Option<String>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT kind FROM relations WHERE from_id = $1 AND to_id = $2",
        )
        .bind(from_id)
        .bind(to_id)
        .fetch_optional(pool)
        .await)?)
    }

    /// Whether either of two players blocks the other: pools and
    /// tournaments never pair them, and neither may challenge the other.
    pub async fn blocks_between(&self, a: &str, b: &str) -> Result<bool, StoreError> {
        let found: Option<String> = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT from_id FROM relations WHERE kind = 'block'
                 AND ((from_id = $1 AND to_id = $2) OR (from_id = $2 AND to_id = $1))
             LIMIT 1",
        )
        .bind(a)
        .bind(b)
        .fetch_optional(pool)
        .await)?;
        Ok(found.is_some())
    }

    /// Whether a moderator marked the player as a cheater: their games
    /// count for no rating, and pools and tournaments leave them out.
    pub async fn is_marked_cheater(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self
            .standing(id)
            .await?
            .is_some_and(|standing| standing.marked_cheater))
    }

    /// The players `player_id` follows (`FOLLOW`) or blocks (`BLOCK`), by
    /// name.
    pub async fn relations_of(
        &self,
        player_id: &str,
        kind: &'static str,
    ) -> Result<Vec<Named>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT p.id, p.name FROM relations r JOIN players p ON p.id = r.to_id
             WHERE r.from_id = $1 AND r.kind = $2 ORDER BY p.name_key LIMIT 1000",
        )
        .bind(player_id)
        .bind(kind)
        .fetch_all(pool)
        .await)?)
    }

    /// The open reports, oldest first.
    pub async fn open_reports(&self, limit: i64) -> Result<Vec<ReportRow>, StoreError> {
        let sql = format!(
            "{REPORT_COLUMNS} WHERE r.closed_at IS NULL ORDER BY r.created_at, r.id LIMIT $1"
        );
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(limit)
            .fetch_all(pool)
            .await)?)
    }

    /// One report, open or closed.
    pub async fn report(&self, id: &str) -> Result<Option<ReportRow>, StoreError> {
        let sql = format!("{REPORT_COLUMNS} WHERE r.id = $1");
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await)?)
    }

    /// The suspect of report `id`, if there is such a report.
    pub async fn report_suspect(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT suspect_id FROM reports WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(pool)
        .await)?)
    }

    /// Reports `reporter_id` filed since `since` (ms), for their cap.
    pub async fn reports_filed_since(
        &self,
        reporter_id: &str,
        since: i64,
    ) -> Result<i64, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT COUNT(*) FROM reports WHERE reporter_id = $1 AND created_at >= $2",
        )
        .bind(reporter_id)
        .bind(since)
        .fetch_one(pool)
        .await)?)
    }

    /// The audit log, newest first.
    pub async fn mod_log(&self, limit: i64) -> Result<Vec<ModActionRow>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT m.id, mp.name AS moderator, m.action, t.name AS target, m.details,
                    m.report_id, m.created_at
             FROM mod_actions m JOIN players t ON t.id = m.target_id
                 LEFT JOIN players mp ON mp.id = m.moderator_id
             ORDER BY m.created_at DESC, m.id DESC LIMIT $1",
        )
        .bind(limit)
        .fetch_all(pool)
        .await)?)
    }

    /// The notices `player_id` has not dismissed, oldest first.
    pub async fn unseen_notices(&self, player_id: &str) -> Result<Vec<NoticeRow>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT id, text, created_at FROM notices WHERE player_id = $1 AND seen_at IS NULL
             ORDER BY created_at, id LIMIT 50",
        )
        .bind(player_id)
        .fetch_all(pool)
        .await)?)
    }

    /// A moderator action (`moderator_id` None: the operator), its effect
    /// and the report it closes; returns the action's id.
    pub async fn record_mod_action(
        &self,
        moderator_id: Option<&str>,
        action: &'static str,
        target_id: &str,
        details: &str,
        report_id: Option<&str>,
        effect: Effect,
    ) -> Result<String, StoreError> {
        let id = Uuid::new_v4().to_string();
        self.social_write(SocialWrite::ModAction {
            id: id.clone(),
            moderator_id: moderator_id.map(str::to_string),
            action,
            target_id: target_id.to_string(),
            details: details.to_string(),
            report_id: report_id.map(str::to_string),
            effect,
            at: now_ms(),
        })
        .await?;
        Ok(id)
    }

    /// A fresh player-token hash nobody holds, for a closed account's row.
    pub fn unusable_token_hash() -> Result<String, StoreError> {
        Ok(crate::token::mint()?.hash.0)
    }
}
