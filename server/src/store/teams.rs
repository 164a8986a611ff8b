//! Teams (clubs), their members and join requests (migrations/0015).
//!
//! Each change is one write of the group-commit writer; a change whose
//! condition no longer holds (a request already answered, a member already
//! gone) changes nothing and is reported as refused, so two leaders
//! answering the same request at once make one answer.

use super::backend::{on_conn, on_pool, Conn};
use super::error::StoreError;
use super::writer::{Write, WriteError};
use super::Store;
use crate::domain::{PlayerRef, SeatRating};

/// A new team's columns.
#[derive(Debug, Clone)]
pub struct NewTeam {
    pub id: String,
    pub name: String,
    pub description: String,
    pub open: bool,
    pub password_hash: Option<String>,
    pub created_by: String,
    pub created_at: i64,
}

/// A write of the team tables.
#[derive(Debug, Clone)]
pub enum TeamWrite {
    /// The team, with its founder as its first leader.
    Create(NewTeam),
    /// A person becomes a member (an open team, or a request accepted);
    /// their request, if any, is removed. Refused if already a member.
    Join {
        team_id: String,
        player_id: String,
        at: i64,
    },
    /// A request to join (again: a refused one is asked anew).
    Request {
        team_id: String,
        player_id: String,
        message: String,
        at: i64,
    },
    /// A leader accepts a pending or refused request: refused when there
    /// is none.
    Accept {
        team_id: String,
        player_id: String,
        at: i64,
    },
    /// A leader refuses a pending request: refused when there is none.
    Decline { team_id: String, player_id: String },
    /// A member leaves or is removed: refused when not a member.
    Remove { team_id: String, player_id: String },
    /// A member is made a leader, or no longer one: refused when not a
    /// member.
    SetLeader {
        team_id: String,
        player_id: String,
        leader: bool,
    },
}

/// A refused conditional write (see the module comment).
fn changed(rows: u64) -> Result<(), sqlx::Error> {
    if rows == 0 {
        Err(sqlx::Error::RowNotFound)
    } else {
        Ok(())
    }
}

async fn add_member(
    mut conn: Conn<'_>,
    team_id: &str,
    player_id: &str,
    leader: bool,
    at: i64,
) -> Result<(), sqlx::Error> {
    on_conn!(conn.reborrow(), c => sqlx::query(
        "DELETE FROM team_requests WHERE team_id = $1 AND player_id = $2",
    )
    .bind(team_id)
    .bind(player_id)
    .execute(c)
    .await
    .map(|_| ()))?;
    on_conn!(conn, c => sqlx::query(
        "INSERT INTO team_members (team_id, player_id, leader, joined_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(team_id)
    .bind(player_id)
    .bind(leader)
    .bind(at)
    .execute(c)
    .await
    .map(|_| ()))?;
    Ok(())
}

impl TeamWrite {
    pub async fn apply(&self, mut conn: Conn<'_>) -> Result<(), sqlx::Error> {
        match self {
            TeamWrite::Create(team) => {
                on_conn!(conn.reborrow(), c => sqlx::query(
                    "INSERT INTO teams (id, name, description, open, password_hash, created_by, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(&team.id)
                .bind(&team.name)
                .bind(&team.description)
                .bind(team.open)
                .bind(&team.password_hash)
                .bind(&team.created_by)
                .bind(team.created_at)
                .execute(c)
                .await
                .map(|_| ()))?;
                add_member(conn, &team.id, &team.created_by, true, team.created_at).await
            }
            TeamWrite::Join {
                team_id,
                player_id,
                at,
            } => add_member(conn, team_id, player_id, false, *at).await,
            TeamWrite::Request {
                team_id,
                player_id,
                message,
                at,
            } => on_conn!(conn, c => sqlx::query(
                "INSERT INTO team_requests (team_id, player_id, message, declined, created_at)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (team_id, player_id) DO UPDATE
                     SET message = excluded.message, declined = excluded.declined,
                         created_at = excluded.created_at",
            )
            .bind(team_id)
            .bind(player_id)
            .bind(message)
            .bind(false)
            .bind(at)
            .execute(c)
            .await
            .map(|_| ())),
            TeamWrite::Accept {
                team_id,
                player_id,
                at,
            } => {
                let asked: i64 = on_conn!(conn.reborrow(), c => sqlx::query_scalar(
                    "SELECT COUNT(*) FROM team_requests WHERE team_id = $1 AND player_id = $2",
                )
                .bind(team_id)
                .bind(player_id)
                .fetch_one(c)
                .await)?;
                changed(asked as u64)?;
                add_member(conn, team_id, player_id, false, *at).await
            }
            TeamWrite::Decline { team_id, player_id } => {
                let rows = on_conn!(conn, c => sqlx::query(
                    "UPDATE team_requests SET declined = $1
                     WHERE team_id = $2 AND player_id = $3 AND declined = $4",
                )
                .bind(true)
                .bind(team_id)
                .bind(player_id)
                .bind(false)
                .execute(c)
                .await
                .map(|r| r.rows_affected()))?;
                changed(rows)
            }
            TeamWrite::Remove { team_id, player_id } => {
                let rows = on_conn!(conn, c => sqlx::query(
                    "DELETE FROM team_members WHERE team_id = $1 AND player_id = $2",
                )
                .bind(team_id)
                .bind(player_id)
                .execute(c)
                .await
                .map(|r| r.rows_affected()))?;
                changed(rows)
            }
            TeamWrite::SetLeader {
                team_id,
                player_id,
                leader,
            } => {
                let rows = on_conn!(conn, c => sqlx::query(
                    "UPDATE team_members SET leader = $1 WHERE team_id = $2 AND player_id = $3",
                )
                .bind(leader)
                .bind(team_id)
                .bind(player_id)
                .execute(c)
                .await
                .map(|r| r.rows_affected()))?;
                changed(rows)
            }
        }
    }
}

/// A team as read back.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TeamRow {
    pub id: String,
    pub name: String,
    pub description: String,
    pub open: bool,
    pub password_hash: Option<String>,
    pub created_by: String,
    pub created_at: i64,
    pub members: i64,
}

/// A member of a team.
#[derive(Debug, Clone)]
pub struct TeamMember {
    pub player: PlayerRef,
    pub leader: bool,
    pub joined_at: i64,
}

/// A request to join, with who asks.
#[derive(Debug, Clone)]
pub struct TeamRequest {
    pub team_id: String,
    pub player: PlayerRef,
    pub message: String,
    pub declined: bool,
    pub created_at: i64,
}

const TEAM_SELECT: &str = "SELECT t.id, t.name, t.description, t.open, t.password_hash,
        t.created_by, t.created_at,
        (SELECT COUNT(*) FROM team_members m WHERE m.team_id = t.id) AS members
    FROM teams t";

type MemberColumns = (String, String, f64, f64, bool, i64);

fn member((id, name, rating, deviation, leader, joined_at): MemberColumns) -> TeamMember {
    TeamMember {
        player: PlayerRef {
            id,
            name,
            rating: SeatRating::of(rating, deviation),
        },
        leader,
        joined_at,
    }
}

/// The most members one read returns (lichess streams up to 5,000).
pub const MAX_MEMBERS: i64 = 5000;

impl Store {
    /// Writes a team change. `Ok(false)`: its condition no longer held (see
    /// [`TeamWrite`]); nothing changed. A taken team id is `NameTaken`.
    pub async fn write_team(&self, write: TeamWrite) -> Result<bool, StoreError> {
        match self.write(Write::Team(write)).await {
            Ok(()) => Ok(true),
            Err(WriteError::Rejected(cause)) if cause.is_unique_violation() => {
                Err(StoreError::NameTaken)
            }
            Err(WriteError::Rejected(_)) => Ok(false),
            Err(err) => Err(err.into()),
        }
    }

    pub async fn team(&self, id: &str) -> Result<Option<TeamRow>, StoreError> {
        let sql = format!("{TEAM_SELECT} WHERE t.id = $1");
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await)?)
    }

    /// Teams by number of members, then age: one page.
    pub async fn teams_page(&self, offset: i64, limit: i64) -> Result<Vec<TeamRow>, StoreError> {
        let sql = format!("{TEAM_SELECT} ORDER BY members DESC, t.created_at LIMIT $1 OFFSET $2");
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(limit)
            .bind(offset)
            .fetch_all(pool)
            .await)?)
    }

    pub async fn team_count(&self) -> Result<i64, StoreError> {
        Ok(
            on_pool!(&self.inner.read, pool => sqlx::query_scalar("SELECT COUNT(*) FROM teams")
            .fetch_one(pool)
            .await)?,
        )
    }

    /// The teams `player_id` belongs to, oldest membership first.
    pub async fn teams_of(&self, player_id: &str) -> Result<Vec<TeamRow>, StoreError> {
        let sql = format!(
            "{TEAM_SELECT} JOIN team_members me ON me.team_id = t.id AND me.player_id = $1
             ORDER BY me.joined_at"
        );
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(player_id)
            .fetch_all(pool)
            .await)?)
    }

    /// The members of a team, newest first (leaders only with `leaders`).
    pub async fn team_members(
        &self,
        team_id: &str,
        leaders: bool,
    ) -> Result<Vec<TeamMember>, StoreError> {
        let rows: Vec<MemberColumns> = on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT p.id, p.name, p.rating, p.rating_deviation, m.leader, m.joined_at
             FROM team_members m JOIN players p ON p.id = m.player_id
             WHERE m.team_id = $1 AND (m.leader = $2 OR $3)
             ORDER BY m.joined_at DESC, p.name_key LIMIT $4",
        )
        .bind(team_id)
        .bind(true)
        .bind(!leaders)
        .bind(MAX_MEMBERS)
        .fetch_all(pool)
        .await)?;
        Ok(rows.into_iter().map(member).collect())
    }

    /// `Some(leader)` when `player_id` is a member of the team.
    pub async fn membership(
        &self,
        team_id: &str,
        player_id: &str,
    ) -> Result<Option<bool>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT leader FROM team_members WHERE team_id = $1 AND player_id = $2",
        )
        .bind(team_id)
        .bind(player_id)
        .fetch_optional(pool)
        .await)?)
    }

    /// The requests to join a team: pending ones, or the refused ones.
    pub async fn team_requests(
        &self,
        team_id: &str,
        declined: bool,
    ) -> Result<Vec<TeamRequest>, StoreError> {
        let rows: Vec<(String, String, f64, f64, String, bool, i64)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT p.id, p.name, p.rating, p.rating_deviation, r.message, r.declined, r.created_at
                 FROM team_requests r JOIN players p ON p.id = r.player_id
                 WHERE r.team_id = $1 AND r.declined = $2
                 ORDER BY r.created_at DESC LIMIT $3",
            )
            .bind(team_id)
            .bind(declined)
            .bind(MAX_MEMBERS)
            .fetch_all(pool)
            .await)?;
        Ok(rows
            .into_iter()
            .map(
                |(id, name, rating, deviation, message, declined, created_at)| TeamRequest {
                    team_id: team_id.to_string(),
                    player: PlayerRef {
                        id,
                        name,
                        rating: SeatRating::of(rating, deviation),
                    },
                    message,
                    declined,
                    created_at,
                },
            )
            .collect())
    }

    /// Whether `player_id` has a request to the team, and whether it was
    /// refused.
    pub async fn team_request_of(
        &self,
        team_id: &str,
        player_id: &str,
    ) -> Result<Option<bool>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT declined FROM team_requests WHERE team_id = $1 AND player_id = $2",
        )
        .bind(team_id)
        .bind(player_id)
        .fetch_optional(pool)
        .await)?)
    }
}
