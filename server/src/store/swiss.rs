//! Swiss tournaments (migrations/0015): the tournament, its players and
//! every round's pairings with their results.
//!
//! The director (`tournaments/swiss/`) keeps nothing of its own between
//! steps: it reads the tournament back from these tables before each
//! decision, so a restart (or another node's takeover) goes on from what
//! is stored. A round's pairings, its players' pairing numbers and its
//! games are stored in one transaction, and only if the tournament is still
//! at the round before (two directors, or a retry, pair a round once).
//!
//! In a cluster one node directs a tournament at a time: a lease in the
//! tournament's own row (`director`, `director_epoch`,
//! `director_expires_at`), taken and renewed like a game's
//! (store/leases.rs); every write of the director carries its
//! [`DirectorFence`], checked in the write's transaction.

use super::backend::{on_conn, on_pool, Conn};
use super::error::StoreError;
use super::rows::StoredGame;
use super::writer::{Write, WriteError};
use super::{now_ms, Store};
use crate::domain::{PlayerRef, SeatRating};

/// A new tournament's columns.
#[derive(Debug, Clone)]
pub struct NewSwiss {
    pub id: String,
    pub team_id: String,
    pub name: String,
    pub description: String,
    pub created_by: String,
    pub clock_initial_ms: i64,
    pub clock_increment_ms: i64,
    pub rounds_planned: i64,
    pub round_interval_ms: Option<i64>,
    pub rated: bool,
    pub min_rating: Option<i64>,
    pub min_rated_games: Option<i64>,
    pub bye_points: i64,
    pub starts_at: i64,
    pub created_at: i64,
}

/// A director's right to change a tournament, in a cluster: its node and
/// the epoch it took the lease with. `None` on a single node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectorFence {
    pub owner: String,
    pub epoch: i64,
}

/// One pairing of a round as written: a game (white, black, its game) or
/// a bye (`black_id` and `game_id` empty, `bye` its kind).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PairingRow {
    pub round: i64,
    pub board: i64,
    pub white_id: String,
    pub black_id: Option<String>,
    pub game_id: Option<String>,
    pub bye: Option<String>,
    pub result: Option<String>,
}

/// A write of the Swiss tables.
#[derive(Debug, Clone)]
pub enum SwissWrite {
    Create(NewSwiss),
    /// A player enters (or enters again after withdrawing): refused once
    /// the tournament is finished.
    Join {
        swiss_id: String,
        player_id: String,
        rating: i64,
        at: i64,
    },
    /// An entrant withdraws: never paired again unless they join again.
    Withdraw {
        swiss_id: String,
        player_id: String,
    },
    /// An entrant asks for a bye in the next round, or takes it back.
    Absent {
        swiss_id: String,
        player_id: String,
        absent: bool,
    },
    /// A leader moves the next round's start (or round 1's).
    Schedule {
        swiss_id: String,
        at: i64,
    },
    /// Round `round` is paired: the tournament moves from `round - 1` to
    /// it, players first paired get their numbers, the pairings and their
    /// games are stored, and requests for a bye are used up.
    StartRound {
        swiss_id: String,
        round: i64,
        numbers: Vec<(String, i64)>,
        pairings: Vec<PairingRow>,
        games: Vec<StoredGame>,
        fence: Option<DirectorFence>,
    },
    /// Results of games of the current round: `(board, result)`.
    Results {
        swiss_id: String,
        round: i64,
        results: Vec<(i64, &'static str)>,
        fence: Option<DirectorFence>,
    },
    /// The current round is over: the next starts at `next_round_at` (or
    /// by hand), or the tournament is finished. A start a leader has set
    /// meanwhile is kept (unless the tournament finishes).
    EndRound {
        swiss_id: String,
        round: i64,
        next_round_at: Option<i64>,
        finished: bool,
        fence: Option<DirectorFence>,
    },
}

fn changed(rows: u64) -> Result<(), sqlx::Error> {
    if rows == 0 {
        Err(sqlx::Error::RowNotFound)
    } else {
        Ok(())
    }
}

/// The fence as SQL parameters: with no fence every director may write.
fn fence_params(fence: &Option<DirectorFence>) -> (bool, String, i64) {
    match fence {
        None => (true, String::new(), 0),
        Some(f) => (false, f.owner.clone(), f.epoch),
    }
}

/// The condition a fenced write adds, with its parameters from `$n`.
fn fence_sql(n: usize) -> String {
    format!(
        "(${} OR (director = ${} AND director_epoch = ${} AND director_expires_at > ${}))",
        n,
        n + 1,
        n + 2,
        n + 3
    )
}

impl SwissWrite {
    pub async fn apply(&self, mut conn: Conn<'_>) -> Result<(), sqlx::Error> {
        match self {
            SwissWrite::Create(s) => on_conn!(conn, c => sqlx::query(
                "INSERT INTO swiss (id, team_id, name, description, created_by,
                     clock_initial_ms, clock_increment_ms, rounds_planned, round_interval_ms,
                     rated, min_rating, min_rated_games, bye_points, starts_at, status, round,
                     next_round_at, director, director_epoch, director_expires_at, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
                     'created', 0, $14, NULL, 0, 0, $15)",
            )
            .bind(&s.id)
            .bind(&s.team_id)
            .bind(&s.name)
            .bind(&s.description)
            .bind(&s.created_by)
            .bind(s.clock_initial_ms)
            .bind(s.clock_increment_ms)
            .bind(s.rounds_planned)
            .bind(s.round_interval_ms)
            .bind(s.rated)
            .bind(s.min_rating)
            .bind(s.min_rated_games)
            .bind(s.bye_points)
            .bind(s.starts_at)
            .bind(s.created_at)
            .execute(c)
            .await
            .map(|_| ())),
            SwissWrite::Join {
                swiss_id,
                player_id,
                rating,
                at,
            } => {
                let open: i64 = on_conn!(conn.reborrow(), c => sqlx::query_scalar(
                    "SELECT COUNT(*) FROM swiss WHERE id = $1 AND status <> 'finished'",
                )
                .bind(swiss_id)
                .fetch_one(c)
                .await)?;
                changed(open as u64)?;
                on_conn!(conn, c => sqlx::query(
                    "INSERT INTO swiss_players (swiss_id, player_id, rating, pairing_number,
                         withdrawn, absent_next, joined_at)
                     VALUES ($1, $2, $3, NULL, $4, $4, $5)
                     ON CONFLICT (swiss_id, player_id) DO UPDATE SET withdrawn = excluded.withdrawn",
                )
                .bind(swiss_id)
                .bind(player_id)
                .bind(rating)
                .bind(false)
                .bind(at)
                .execute(c)
                .await
                .map(|_| ()))
            }
            SwissWrite::Withdraw {
                swiss_id,
                player_id,
            } => {
                let rows = on_conn!(conn, c => sqlx::query(
                    "UPDATE swiss_players SET withdrawn = $1, absent_next = $2
                     WHERE swiss_id = $3 AND player_id = $4",
                )
                .bind(true)
                .bind(false)
                .bind(swiss_id)
                .bind(player_id)
                .execute(c)
                .await
                .map(|r| r.rows_affected()))?;
                changed(rows)
            }
            SwissWrite::Absent {
                swiss_id,
                player_id,
                absent,
            } => {
                let rows = on_conn!(conn, c => sqlx::query(
                    "UPDATE swiss_players SET absent_next = $1
                     WHERE swiss_id = $2 AND player_id = $3 AND withdrawn = $4",
                )
                .bind(absent)
                .bind(swiss_id)
                .bind(player_id)
                .bind(false)
                .execute(c)
                .await
                .map(|r| r.rows_affected()))?;
                changed(rows)
            }
            SwissWrite::Schedule { swiss_id, at } => {
                let rows = on_conn!(conn, c => sqlx::query(
                    "UPDATE swiss SET next_round_at = $1,
                         starts_at = CASE WHEN round = 0 THEN $1 ELSE starts_at END
                     WHERE id = $2 AND status <> 'finished'
                       AND NOT EXISTS (SELECT 1 FROM swiss_pairings p
                           WHERE p.swiss_id = swiss.id AND p.round = swiss.round
                             AND p.bye IS NULL AND p.result IS NULL)",
                )
                .bind(at)
                .bind(swiss_id)
                .execute(c)
                .await
                .map(|r| r.rows_affected()))?;
                changed(rows)
            }
            SwissWrite::StartRound {
                swiss_id,
                round,
                numbers,
                pairings,
                games,
                fence,
            } => {
                let (unfenced, owner, epoch) = fence_params(fence);
                let sql = format!(
                    "UPDATE swiss SET round = $1, status = 'started', next_round_at = NULL
                     WHERE id = $2 AND round = $3 AND status <> 'finished' AND {}",
                    fence_sql(4)
                );
                let rows = on_conn!(conn.reborrow(), c => sqlx::query(&sql)
                    .bind(round)
                    .bind(swiss_id)
                    .bind(round - 1)
                    .bind(unfenced)
                    .bind(&owner)
                    .bind(epoch)
                    .bind(now_ms())
                    .execute(c)
                    .await
                    .map(|r| r.rows_affected()))?;
                changed(rows)?;
                for (player_id, number) in numbers {
                    on_conn!(conn.reborrow(), c => sqlx::query(
                        "UPDATE swiss_players SET pairing_number = $1
                         WHERE swiss_id = $2 AND player_id = $3 AND pairing_number IS NULL",
                    )
                    .bind(number)
                    .bind(swiss_id)
                    .bind(player_id)
                    .execute(c)
                    .await
                    .map(|_| ()))?;
                }
                on_conn!(conn.reborrow(), c => sqlx::query(
                    "UPDATE swiss_players SET absent_next = $1 WHERE swiss_id = $2",
                )
                .bind(false)
                .bind(swiss_id)
                .execute(c)
                .await
                .map(|_| ()))?;
                for game in games {
                    game.insert(conn.reborrow()).await?;
                }
                for p in pairings {
                    on_conn!(conn.reborrow(), c => sqlx::query(
                        "INSERT INTO swiss_pairings (swiss_id, round, board, white_id, black_id,
                             game_id, bye, result)
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    )
                    .bind(swiss_id)
                    .bind(p.round)
                    .bind(p.board)
                    .bind(&p.white_id)
                    .bind(&p.black_id)
                    .bind(&p.game_id)
                    .bind(&p.bye)
                    .bind(&p.result)
                    .execute(c)
                    .await
                    .map(|_| ()))?;
                }
                Ok(())
            }
            SwissWrite::Results {
                swiss_id,
                round,
                results,
                fence,
            } => {
                let (unfenced, owner, epoch) = fence_params(fence);
                let sql = format!(
                    "UPDATE swiss_pairings SET result = $1
                     WHERE swiss_id = $2 AND round = $3 AND board = $4 AND result IS NULL
                       AND EXISTS (SELECT 1 FROM swiss WHERE id = $2 AND {})",
                    fence_sql(5)
                );
                for (board, result) in results {
                    on_conn!(conn.reborrow(), c => sqlx::query(&sql)
                        .bind(*result)
                        .bind(swiss_id)
                        .bind(round)
                        .bind(board)
                        .bind(unfenced)
                        .bind(&owner)
                        .bind(epoch)
                        .bind(now_ms())
                        .execute(c)
                        .await
                        .map(|_| ()))?;
                }
                Ok(())
            }
            SwissWrite::EndRound {
                swiss_id,
                round,
                next_round_at,
                finished,
                fence,
            } => {
                let (unfenced, owner, epoch) = fence_params(fence);
                let sql = format!(
                    "UPDATE swiss SET next_round_at = $1,
                         status = CASE WHEN $2 THEN 'finished' ELSE status END
                     WHERE id = $3 AND round = $4 AND status <> 'finished'
                       AND (next_round_at IS NULL OR $2) AND {}",
                    fence_sql(5)
                );
                let rows = on_conn!(conn, c => sqlx::query(&sql)
                    .bind(next_round_at)
                    .bind(finished)
                    .bind(swiss_id)
                    .bind(round)
                    .bind(unfenced)
                    .bind(&owner)
                    .bind(epoch)
                    .bind(now_ms())
                    .execute(c)
                    .await
                    .map(|r| r.rows_affected()))?;
                changed(rows)
            }
        }
    }
}

/// A tournament as read back.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SwissRow {
    pub id: String,
    pub team_id: String,
    pub name: String,
    pub description: String,
    pub created_by: String,
    pub creator_name: String,
    pub clock_initial_ms: i64,
    pub clock_increment_ms: i64,
    pub rounds_planned: i64,
    pub round_interval_ms: Option<i64>,
    pub rated: bool,
    pub min_rating: Option<i64>,
    pub min_rated_games: Option<i64>,
    pub bye_points: i64,
    pub starts_at: i64,
    pub status: String,
    pub round: i64,
    pub next_round_at: Option<i64>,
    pub created_at: i64,
    pub players: i64,
}

/// An entrant as read back.
#[derive(Debug, Clone)]
pub struct SwissPlayerRow {
    pub player: PlayerRef,
    /// The rating at joining (the initial ranking's).
    pub rating: i64,
    pub pairing_number: Option<i64>,
    pub withdrawn: bool,
    pub absent_next: bool,
    pub joined_at: i64,
}

/// A game of the current round, as the games table has it now.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RoundGame {
    pub board: i64,
    pub game_id: String,
    pub status: String,
    pub result: Option<String>,
    pub plies: i64,
}

const SWISS_SELECT: &str = "SELECT s.id, s.team_id, s.name, s.description, s.created_by,
        p.name AS creator_name, s.clock_initial_ms, s.clock_increment_ms, s.rounds_planned,
        s.round_interval_ms, s.rated, s.min_rating, s.min_rated_games, s.bye_points,
        s.starts_at, s.status, s.round, s.next_round_at, s.created_at,
        (SELECT COUNT(*) FROM swiss_players sp WHERE sp.swiss_id = s.id) AS players
    FROM swiss s JOIN players p ON p.id = s.created_by";

/// The most tournaments of a team one read lists.
pub const MAX_TEAM_SWISS: i64 = 100;

impl Store {
    /// Writes a tournament change. `Ok(false)`: its condition no longer
    /// held (see [`SwissWrite`]), or the director's lease is gone; nothing
    /// changed.
    pub async fn write_swiss(&self, write: SwissWrite) -> Result<bool, StoreError> {
        match self.write(Write::Swiss(Box::new(write))).await {
            Ok(()) => Ok(true),
            Err(WriteError::Rejected(cause)) if cause.is_unique_violation() => {
                Err(StoreError::NameTaken)
            }
            Err(WriteError::Rejected(_)) => Ok(false),
            Err(err) => Err(err.into()),
        }
    }

    pub async fn swiss(&self, id: &str) -> Result<Option<SwissRow>, StoreError> {
        let sql = format!("{SWISS_SELECT} WHERE s.id = $1");
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await)?)
    }

    /// A team's tournaments, newest first.
    pub async fn team_swiss(&self, team_id: &str, max: i64) -> Result<Vec<SwissRow>, StoreError> {
        let sql =
            format!("{SWISS_SELECT} WHERE s.team_id = $1 ORDER BY s.created_at DESC LIMIT $2");
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(team_id)
            .bind(max.clamp(1, MAX_TEAM_SWISS))
            .fetch_all(pool)
            .await)?)
    }

    /// The tournaments not finished yet (a node directs them on start).
    pub async fn unfinished_swiss(&self) -> Result<Vec<String>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT id FROM swiss WHERE status <> 'finished' ORDER BY created_at",
        )
        .fetch_all(pool)
        .await)?)
    }

    /// The entrants, by pairing number (those without one last, by rating).
    pub async fn swiss_players(&self, swiss_id: &str) -> Result<Vec<SwissPlayerRow>, StoreError> {
        type Columns = (String, String, f64, f64, i64, Option<i64>, bool, bool, i64);
        let rows: Vec<Columns> = on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT p.id, p.name, p.rating, p.rating_deviation, sp.rating, sp.pairing_number,
                 sp.withdrawn, sp.absent_next, sp.joined_at
             FROM swiss_players sp JOIN players p ON p.id = sp.player_id
             WHERE sp.swiss_id = $1
             ORDER BY sp.pairing_number IS NULL, sp.pairing_number, sp.rating DESC, p.name_key",
        )
        .bind(swiss_id)
        .fetch_all(pool)
        .await)?;
        Ok(rows
            .into_iter()
            .map(
                |(
                    id,
                    name,
                    now,
                    deviation,
                    rating,
                    pairing_number,
                    withdrawn,
                    absent_next,
                    joined_at,
                )| {
                    SwissPlayerRow {
                        player: PlayerRef {
                            id,
                            name,
                            rating: SeatRating::of(now, deviation),
                        },
                        rating,
                        pairing_number,
                        withdrawn,
                        absent_next,
                        joined_at,
                    }
                },
            )
            .collect())
    }

    /// Every pairing of the tournament, by round and board.
    pub async fn swiss_pairings(&self, swiss_id: &str) -> Result<Vec<PairingRow>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT round, board, white_id, black_id, game_id, bye, result
             FROM swiss_pairings WHERE swiss_id = $1 ORDER BY round, board",
        )
        .bind(swiss_id)
        .fetch_all(pool)
        .await)?)
    }

    /// The games of `round` still without a result, with their state in
    /// the games table.
    pub async fn swiss_open_games(
        &self,
        swiss_id: &str,
        round: i64,
    ) -> Result<Vec<RoundGame>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT sp.board, g.id AS game_id, g.status, g.result,
                 (SELECT COUNT(*) FROM moves m WHERE m.game_id = g.id) AS plies
             FROM swiss_pairings sp JOIN games g ON g.id = sp.game_id
             WHERE sp.swiss_id = $1 AND sp.round = $2 AND sp.result IS NULL
             ORDER BY sp.board",
        )
        .bind(swiss_id)
        .bind(round)
        .fetch_all(pool)
        .await)?)
    }

    /// The tournament and round a game was paired in: its id, name and
    /// round.
    pub async fn swiss_of_game(
        &self,
        game_id: &str,
    ) -> Result<Option<(String, String, i64)>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT s.id, s.name, sp.round FROM swiss_pairings sp JOIN swiss s ON s.id = sp.swiss_id
             WHERE sp.game_id = $1",
        )
        .bind(game_id)
        .fetch_optional(pool)
        .await)?)
    }

    /// How many rated games a player has finished (an entry condition).
    pub async fn rated_games_of(&self, player_id: &str) -> Result<i64, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT COUNT(*) FROM rating_history WHERE player_id = $1",
        )
        .bind(player_id)
        .fetch_one(pool)
        .await)?)
    }

    /// Takes the lease of directing tournament `id` for `owner` until
    /// `ttl_ms` from now, unless another node holds a live one: the new
    /// epoch, or `None`. Runs at once on the write pool, as game leases do.
    pub async fn acquire_swiss_lease(
        &self,
        id: &str,
        owner: &str,
        ttl_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        let now = now_ms();
        Ok(on_pool!(&self.inner.write_pool, pool => sqlx::query_scalar(
            "UPDATE swiss SET director = $1, director_epoch = director_epoch + 1,
                 director_expires_at = $2
             WHERE id = $3 AND status <> 'finished'
               AND (director_expires_at <= $4 OR director IS NULL OR director = $1)
             RETURNING director_epoch",
        )
        .bind(owner)
        .bind(now + ttl_ms)
        .bind(id)
        .bind(now)
        .fetch_optional(pool)
        .await)?)
    }

    /// Extends a live lease this fence holds: `false` when it is gone.
    pub async fn renew_swiss_lease(
        &self,
        id: &str,
        fence: &DirectorFence,
        ttl_ms: i64,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let rows = on_pool!(&self.inner.write_pool, pool => sqlx::query(
            "UPDATE swiss SET director_expires_at = $1
             WHERE id = $2 AND director = $3 AND director_epoch = $4 AND director_expires_at > $5",
        )
        .bind(now + ttl_ms)
        .bind(id)
        .bind(&fence.owner)
        .bind(fence.epoch)
        .bind(now)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        Ok(rows == 1)
    }

    /// Gives up a lease (a director stopping): another node may take it at
    /// once.
    pub async fn release_swiss_lease(
        &self,
        id: &str,
        fence: &DirectorFence,
    ) -> Result<(), StoreError> {
        on_pool!(&self.inner.write_pool, pool => sqlx::query(
            "UPDATE swiss SET director = NULL, director_expires_at = 0
             WHERE id = $1 AND director = $2 AND director_epoch = $3",
        )
        .bind(id)
        .bind(&fence.owner)
        .bind(fence.epoch)
        .execute(pool)
        .await
        .map(|_| ()))?;
        Ok(())
    }
}
