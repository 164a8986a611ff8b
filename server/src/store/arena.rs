//! Arena tournaments (migrations/0016): the arenas, their players and their
//! pairings with the results copied in once each game ends ("settled"),
//! so standings read this file's tables alone and a restarted director
//! finds everything where it left it.
//!
//! The director's lease is two columns of the arena's row (`director`,
//! `director_until`): taken and renewed by one statement, and checked again
//! inside the transaction of every pairing it writes (its fence), as the
//! games' leases are (store/leases.rs).

use super::backend::{on_conn, on_pool, Conn};
use super::error::StoreError;
use super::rows::StoredGame;
use super::writer::{Write, WriteError};
use super::Store;

/// An arena as stored, with its creator's name and its number of players.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ArenaRow {
    pub id: String,
    pub name: String,
    pub created_by: String,
    pub creator_name: String,
    pub clock_initial_ms: i64,
    pub clock_increment_ms: i64,
    pub starts_at: i64,
    pub finishes_at: i64,
    pub rated: bool,
    pub berserkable: bool,
    pub streakable: bool,
    pub entry_code_hash: Option<String>,
    pub min_rating: Option<i64>,
    pub min_rated_games: Option<i64>,
    pub bots_allowed: bool,
    pub status: String,
    pub created_at: i64,
    pub nb_players: i64,
}

const ARENA_SELECT: &str = "SELECT a.id, a.name, a.created_by, p.name AS creator_name,
        a.clock_initial_ms, a.clock_increment_ms, a.starts_at, a.finishes_at, a.rated,
        a.berserkable, a.streakable, a.entry_code_hash, a.min_rating, a.min_rated_games,
        a.bots_allowed, a.status, a.created_at,
        (SELECT COUNT(*) FROM arena_players ap WHERE ap.arena_id = a.id) AS nb_players
    FROM arenas a JOIN players p ON p.id = a.created_by";

/// A player of an arena, with their name and current rating.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ArenaPlayerRow {
    pub player_id: String,
    pub name: String,
    pub rating: f64,
    pub rating_deviation: f64,
    pub active: bool,
    pub joined_at: i64,
}

/// A game of an arena.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PairingRow {
    pub game_id: String,
    pub white_id: String,
    pub black_id: String,
    pub white_rating: i64,
    pub black_rating: i64,
    pub created_at: i64,
    pub settled: bool,
    pub winner: Option<String>,
    pub aborted: bool,
    pub plies: i64,
    pub berserk: i64,
}

/// An unsettled pairing's game as it is now.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PairingGame {
    pub game_id: String,
    pub white_id: String,
    pub black_id: String,
    /// NULL: the game row is gone (an aborted game deleted by retention).
    pub status: Option<String>,
    pub result: Option<String>,
    pub termination: Option<String>,
    pub berserk: Option<i64>,
    pub plies: i64,
}

/// What joining an arena needs to know of a player.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct JoinFacts {
    pub rating: f64,
    pub rated_games: i64,
    pub bot: bool,
}

/// A new arena's columns.
#[derive(Debug, Clone)]
pub struct NewArena {
    pub id: String,
    pub name: String,
    pub created_by: String,
    pub clock_initial_ms: i64,
    pub clock_increment_ms: i64,
    pub starts_at: i64,
    pub finishes_at: i64,
    pub rated: bool,
    pub berserkable: bool,
    pub streakable: bool,
    pub entry_code_hash: Option<String>,
    pub min_rating: Option<i64>,
    pub min_rated_games: Option<i64>,
    pub bots_allowed: bool,
    pub created_at: i64,
}

/// A new pairing's columns.
#[derive(Debug, Clone)]
pub struct NewPairing {
    pub arena_id: String,
    pub white_id: String,
    pub black_id: String,
    pub white_rating: i64,
    pub black_rating: i64,
    pub created_at: i64,
}

/// A settled game's result.
#[derive(Debug, Clone)]
pub struct Settlement {
    pub game_id: String,
    pub winner: Option<&'static str>,
    pub aborted: bool,
    pub plies: i64,
    pub berserk: i64,
}

/// The director's lease, checked in the transaction of its writes.
#[derive(Debug, Clone)]
pub struct DirectorFence {
    pub arena_id: String,
    pub node: String,
    pub now: i64,
}

/// A write of the arena tables.
#[derive(Debug, Clone)]
pub enum ArenaWrite {
    Create(NewArena),
    /// Joins (or comes back): the row is made, or made active again.
    Join {
        arena_id: String,
        player_id: String,
        at: i64,
    },
    /// Pauses (or withdraws) a player: not paired until they join again.
    Pause {
        arena_id: String,
        player_id: String,
    },
    /// Takes or renews the director's lease until `until`, if it is free,
    /// expired or already this node's; refused otherwise.
    Lease {
        arena_id: String,
        node: String,
        now: i64,
        until: i64,
    },
    /// Renews the director's lease until `until` only if it is still this
    /// node's: nobody else has held it since this node last took it (any
    /// other taker writes its own name), so nobody else has written the
    /// arena's pairings meanwhile. Refused otherwise.
    Renew {
        arena_id: String,
        node: String,
        until: i64,
    },
    /// Gives the lease back (a node stopping).
    Release {
        arena_id: String,
        node: String,
    },
    /// The arena's status moves on (`started`, `finished`), under the lease.
    Status {
        fence: DirectorFence,
        status: &'static str,
    },
    /// A wave's new games with their pairings, under the lease.
    Pair {
        fence: DirectorFence,
        games: Vec<(StoredGame, NewPairing)>,
    },
    /// Finished games' results, under the lease; each player in `pause`
    /// (who let a game be aborted) stops being paired.
    Settle {
        fence: DirectorFence,
        settled: Vec<Settlement>,
        pause: Vec<String>,
    },
}

/// A lease's statement changed its row, or is refused: the lease is not
/// this node's to take, renew or write under.
fn one_row(changed: u64) -> Result<(), sqlx::Error> {
    if changed == 0 {
        return Err(sqlx::Error::RowNotFound);
    }
    Ok(())
}

async fn check_fence(conn: Conn<'_>, fence: &DirectorFence) -> Result<(), sqlx::Error> {
    // An UPDATE rather than a SELECT: on PostgreSQL it also locks the row
    // until the commit, so a node taking the lease meanwhile waits for it.
    let held = on_conn!(conn, c => sqlx::query(
        "UPDATE arenas SET director_until = director_until
         WHERE id = $1 AND director = $2 AND director_until > $3",
    )
    .bind(&fence.arena_id)
    .bind(&fence.node)
    .bind(fence.now)
    .execute(c)
    .await?
    .rows_affected());
    one_row(held)
}

impl ArenaWrite {
    pub async fn apply(&self, mut conn: Conn<'_>) -> Result<(), sqlx::Error> {
        match self {
            ArenaWrite::Create(new) => on_conn!(conn, c => sqlx::query(
                "INSERT INTO arenas (id, name, created_by, clock_initial_ms, clock_increment_ms,
                     starts_at, finishes_at, rated, berserkable, streakable, entry_code_hash,
                     min_rating, min_rated_games, bots_allowed, status, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
                         'created', $15)",
            )
            .bind(&new.id)
            .bind(&new.name)
            .bind(&new.created_by)
            .bind(new.clock_initial_ms)
            .bind(new.clock_increment_ms)
            .bind(new.starts_at)
            .bind(new.finishes_at)
            .bind(new.rated)
            .bind(new.berserkable)
            .bind(new.streakable)
            .bind(&new.entry_code_hash)
            .bind(new.min_rating)
            .bind(new.min_rated_games)
            .bind(new.bots_allowed)
            .bind(new.created_at)
            .execute(c)
            .await
            .map(|_| ())),
            ArenaWrite::Join {
                arena_id,
                player_id,
                at,
            } => on_conn!(conn, c => sqlx::query(
                "INSERT INTO arena_players (arena_id, player_id, joined_at, active)
                 VALUES ($1, $2, $3, TRUE)
                 ON CONFLICT (arena_id, player_id) DO UPDATE SET active = TRUE",
            )
            .bind(arena_id)
            .bind(player_id)
            .bind(at)
            .execute(c)
            .await
            .map(|_| ())),
            ArenaWrite::Pause {
                arena_id,
                player_id,
            } => on_conn!(conn, c => sqlx::query(
                "UPDATE arena_players SET active = FALSE WHERE arena_id = $1 AND player_id = $2",
            )
            .bind(arena_id)
            .bind(player_id)
            .execute(c)
            .await
            .map(|_| ())),
            ArenaWrite::Lease {
                arena_id,
                node,
                now,
                until,
            } => {
                let taken = on_conn!(conn, c => sqlx::query(
                    "UPDATE arenas SET director = $1, director_until = $2
                     WHERE id = $3 AND (director IS NULL OR director = $1 OR director_until <= $4)",
                )
                .bind(node)
                .bind(until)
                .bind(arena_id)
                .bind(now)
                .execute(c)
                .await?
                .rows_affected());
                one_row(taken)
            }
            ArenaWrite::Renew {
                arena_id,
                node,
                until,
            } => {
                let renewed = on_conn!(conn, c => sqlx::query(
                    "UPDATE arenas SET director_until = $1 WHERE id = $2 AND director = $3",
                )
                .bind(until)
                .bind(arena_id)
                .bind(node)
                .execute(c)
                .await?
                .rows_affected());
                one_row(renewed)
            }
            ArenaWrite::Release { arena_id, node } => on_conn!(conn, c => sqlx::query(
                "UPDATE arenas SET director = NULL, director_until = 0
                 WHERE id = $1 AND director = $2",
            )
            .bind(arena_id)
            .bind(node)
            .execute(c)
            .await
            .map(|_| ())),
            ArenaWrite::Status { fence, status } => {
                check_fence(conn.reborrow(), fence).await?;
                on_conn!(conn, c => sqlx::query("UPDATE arenas SET status = $1 WHERE id = $2")
                    .bind(status)
                    .bind(&fence.arena_id)
                    .execute(c)
                    .await
                    .map(|_| ()))
            }
            ArenaWrite::Pair { fence, games } => {
                check_fence(conn.reborrow(), fence).await?;
                for (game, pairing) in games {
                    game.insert(conn.reborrow()).await?;
                    on_conn!(conn.reborrow(), c => sqlx::query(
                        "INSERT INTO arena_pairings (game_id, arena_id, white_id, black_id,
                             white_rating, black_rating, created_at)
                         VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    )
                    .bind(&game.id)
                    .bind(&pairing.arena_id)
                    .bind(&pairing.white_id)
                    .bind(&pairing.black_id)
                    .bind(pairing.white_rating)
                    .bind(pairing.black_rating)
                    .bind(pairing.created_at)
                    .execute(c)
                    .await
                    .map(|_| ()))?;
                }
                Ok(())
            }
            ArenaWrite::Settle {
                fence,
                settled,
                pause,
            } => {
                check_fence(conn.reborrow(), fence).await?;
                for result in settled {
                    on_conn!(conn.reborrow(), c => sqlx::query(
                        "UPDATE arena_pairings SET settled = TRUE, winner = $1, aborted = $2,
                             plies = $3, berserk = $4
                         WHERE game_id = $5 AND NOT settled",
                    )
                    .bind(result.winner)
                    .bind(result.aborted)
                    .bind(result.plies)
                    .bind(result.berserk)
                    .bind(&result.game_id)
                    .execute(c)
                    .await
                    .map(|_| ()))?;
                }
                for player_id in pause {
                    on_conn!(conn.reborrow(), c => sqlx::query(
                        "UPDATE arena_players SET active = FALSE
                         WHERE arena_id = $1 AND player_id = $2",
                    )
                    .bind(&fence.arena_id)
                    .bind(player_id)
                    .execute(c)
                    .await
                    .map(|_| ()))?;
                }
                Ok(())
            }
        }
    }
}

impl Store {
    /// Writes an arena change. `Ok(false)`: refused (the lease is not
    /// this node's); nothing changed.
    pub async fn write_arena(&self, write: ArenaWrite) -> Result<bool, StoreError> {
        match self.write(Write::Arena(write)).await {
            Ok(()) => Ok(true),
            Err(WriteError::Rejected(_)) => Ok(false),
            Err(err) => Err(err.into()),
        }
    }

    pub async fn arena(&self, id: &str) -> Result<Option<ArenaRow>, StoreError> {
        let sql = format!("{ARENA_SELECT} WHERE a.id = $1");
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await)?)
    }

    /// Arenas that are not finished, soonest first, and the `finished`
    /// latest finished ones.
    pub async fn arenas_listed(&self, finished: i64) -> Result<Vec<ArenaRow>, StoreError> {
        let open = format!(
            "{ARENA_SELECT} WHERE a.status <> 'finished' ORDER BY a.starts_at, a.id LIMIT 200"
        );
        let done = format!(
            "{ARENA_SELECT} WHERE a.status = 'finished' ORDER BY a.finishes_at DESC, a.id LIMIT $1"
        );
        let mut rows: Vec<ArenaRow> = on_pool!(&self.inner.read, pool => sqlx::query_as(&open)
            .fetch_all(pool)
            .await)?;
        let finished: Vec<ArenaRow> = on_pool!(&self.inner.read, pool => sqlx::query_as(&done)
            .bind(finished)
            .fetch_all(pool)
            .await)?;
        rows.extend(finished);
        Ok(rows)
    }

    /// The ids of arenas a director has work in: not finished, or with
    /// games still to settle.
    pub async fn arenas_to_direct(&self) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(String,)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT id FROM arenas a
                 WHERE a.status <> 'finished'
                    OR EXISTS (SELECT 1 FROM arena_pairings p WHERE p.arena_id = a.id AND NOT p.settled)
                 ORDER BY a.starts_at LIMIT 1000",
            )
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    pub async fn arena_players(&self, arena_id: &str) -> Result<Vec<ArenaPlayerRow>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT ap.player_id, p.name, p.rating, p.rating_deviation, ap.active, ap.joined_at
                 FROM arena_players ap JOIN players p ON p.id = ap.player_id
                 WHERE ap.arena_id = $1 ORDER BY ap.joined_at, ap.player_id",
            )
            .bind(arena_id)
            .fetch_all(pool)
            .await)?)
    }

    /// Every pairing of an arena, in the order they were made.
    pub async fn arena_pairings(&self, arena_id: &str) -> Result<Vec<PairingRow>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT game_id, white_id, black_id, white_rating, black_rating, created_at,
                        settled, winner, aborted, plies, berserk
                 FROM arena_pairings WHERE arena_id = $1 ORDER BY created_at, game_id",
            )
            .bind(arena_id)
            .fetch_all(pool)
            .await)?)
    }

    /// The games of an arena's unsettled pairings, as they are now.
    pub async fn arena_unsettled(&self, arena_id: &str) -> Result<Vec<PairingGame>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT p.game_id, p.white_id, p.black_id, g.status, g.result, g.termination,
                        g.berserk,
                        (SELECT COUNT(*) FROM moves m WHERE m.game_id = p.game_id) AS plies
                 FROM arena_pairings p LEFT JOIN games g ON g.id = p.game_id
                 WHERE p.arena_id = $1 AND NOT p.settled",
            )
            .bind(arena_id)
            .fetch_all(pool)
            .await)?)
    }

    /// The arena a game belongs to, if any: its id and name.
    pub async fn arena_of_game(
        &self,
        game_id: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT a.id, a.name FROM arena_pairings p JOIN arenas a ON a.id = p.arena_id
                 WHERE p.game_id = $1",
            )
            .bind(game_id)
            .fetch_optional(pool)
            .await)?)
    }

    /// A player's rating, rated games and bot mark, for an arena's
    /// conditions.
    pub async fn join_facts(&self, player_id: &str) -> Result<Option<JoinFacts>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT p.rating, p.bot,
                        (SELECT COUNT(*) FROM rating_history h WHERE h.player_id = p.id) AS rated_games
                 FROM players p WHERE p.id = $1",
            )
            .bind(player_id)
            .fetch_optional(pool)
            .await)?)
    }
}
