//! Counting a result (issue 11, migrations/0005): Glicko-2 ratings and
//! their history rows, win streaks and records, and the one-time backfill
//! of results stored before ratings. Reading them back is
//! [`super::players`]'s (a player's page) and [`super::scoreboard`]'s (the
//! records).
//!
//! **When a result counts.** The writer calls [`game_finished`] in the
//! transaction whose update turns a game's stored status into `finished`
//! (see `Write::UpdateGame`). That moment happens once per game in the
//! database, so a result changes ratings, streaks and records exactly once:
//! writing the finished game again, or a restart that reloads it, finds it
//! already finished and counts nothing. Being in the same transaction, the
//! new ratings are durable exactly when the result is.
//!
//! **Which games.** Only rated games (0003's `rated`: standard start, no
//! clock or at least a minute) with a result count. Glicko-2 rates only
//! games between two registered players: the computer's levels carry a
//! measured Elo, but rating people against a fixed, exploitable opponent
//! mixes two pools (lichess does not rate games against its AI either), and
//! an anonymous seat has no rating to play against. Streaks and records
//! count every rated game of a registered player, against people or the
//! computer.
//!
//! **The maths** is the `skillratings` crate's Glicko-2 (tau 0.5, the
//! paper's suggested middle), each game its own rating period, as lichess
//! rates game by game.

use skillratings::glicko2::{glicko2, Glicko2Config, Glicko2Rating};
use skillratings::Outcomes;
use sqlx::SqlitePool;

use super::backend::{on_conn, Conn};

/// Glicko-2's starting rating and deviation (also migrations/0005's column
/// defaults).
pub const DEFAULT_RATING: f64 = 1500.0;
pub const DEFAULT_DEVIATION: f64 = 350.0;

/// Whether game `id` is stored as finished (before this write changes it).
pub async fn is_stored_finished(mut conn: Conn<'_>, id: &str) -> Result<bool, sqlx::Error> {
    let status: Option<String> = on_conn!(conn.reborrow(), c => sqlx::query_scalar("SELECT status FROM games WHERE id = $1")
        .bind(id)
        .fetch_optional(c)
        .await)?;
    Ok(status.as_deref() == Some("finished"))
}

/// A finished game's seats and result, as [`game_finished`] reads them.
#[derive(Debug, sqlx::FromRow)]
struct FinishedRow {
    white_kind: String,
    white_level: Option<i64>,
    white_player_id: Option<String>,
    black_kind: String,
    black_level: Option<i64>,
    black_player_id: Option<String>,
    result: Option<String>,
    termination: Option<String>,
    rated: bool,
    plies: i64,
}

/// One seat of a finished game.
struct FinishedSeat<'a> {
    ai_level: Option<i64>,
    player: Option<&'a str>,
}

/// Counts the result of game `id`, just stored as finished, in the same
/// transaction: streaks, Glicko-2 ratings and rating history, records.
/// `at` is when the result was stored (ms since the epoch).
pub async fn game_finished(mut conn: Conn<'_>, id: &str, at: i64) -> Result<(), sqlx::Error> {
    let row: FinishedRow = on_conn!(conn.reborrow(), c => sqlx::query_as(
        "SELECT white_kind, white_level, white_player_id, black_kind, black_level,
                black_player_id, result, termination, rated,
                (SELECT COUNT(*) FROM moves WHERE game_id = g.id) AS plies
         FROM games g WHERE id = $1",
    )
    .bind(id)
    .fetch_one(c)
    .await)?;
    let white_score = match row.result.as_deref() {
        Some("1-0") => 1.0,
        Some("0-1") => 0.0,
        Some("1/2-1/2") => 0.5,
        // Aborted: counts nowhere.
        _ => return Ok(()),
    };
    if !row.rated {
        return Ok(());
    }
    // A game with a player a moderator marked as a cheater counts for
    // nothing: no rating, streak or record moves (issue 37).
    let cheater: Option<String> = on_conn!(conn.reborrow(), c => sqlx::query_scalar(
        "SELECT id FROM players WHERE id IN ($1, $2) AND marked_cheater LIMIT 1",
    )
    .bind(&row.white_player_id)
    .bind(&row.black_player_id)
    .fetch_optional(c)
    .await)?;
    if cheater.is_some() {
        return Ok(());
    }
    let seats = [
        FinishedSeat {
            ai_level: (row.white_kind == "ai").then_some(row.white_level.unwrap_or(0)),
            player: row.white_player_id.as_deref(),
        },
        FinishedSeat {
            ai_level: (row.black_kind == "ai").then_some(row.black_level.unwrap_or(0)),
            player: row.black_player_id.as_deref(),
        },
    ];
    let scores = [white_score, 1.0 - white_score];
    // Moves as a chess player counts them: a mate on black's second move
    // (four plies) is a mate in 2.
    let moves = (row.plies + 1) / 2;

    // Win streaks.
    for (seat, score) in seats.iter().zip(scores) {
        let Some(player) = seat.player else { continue };
        if score == 1.0 {
            let streak: i64 = on_conn!(conn.reborrow(), c => sqlx::query_scalar(
                "UPDATE players SET win_streak = win_streak + 1,
                     best_win_streak = CASE WHEN win_streak + 1 > best_win_streak
                         THEN win_streak + 1 ELSE best_win_streak END
                 WHERE id = $1 RETURNING win_streak",
            )
            .bind(player)
            .fetch_one(c)
            .await)?;
            beat(
                conn.reborrow(),
                "longest_win_streak",
                0,
                streak as f64,
                player,
                id,
                at,
            )
            .await?;
        } else {
            on_conn!(conn.reborrow(), c => sqlx::query("UPDATE players SET win_streak = 0 WHERE id = $1")
                .bind(player)
                .execute(c)
                .await.map(|_| ()))?;
        }
    }

    // Glicko-2, registered v registered only.
    if let (Some(white), Some(black)) = (seats[0].player, seats[1].player) {
        if white != black {
            rate(conn.reborrow(), id, [white, black], white_score, at).await?;
        }
    }

    // Fastest checkmate: the winner is registered; against a registered
    // player, or per level against the computer (an anonymous loser sets
    // nothing: it could be the winner's own second tab).
    if row.termination.as_deref() == Some("checkmate") && white_score != 0.5 {
        let (winner, loser) = if white_score == 1.0 {
            (&seats[0], &seats[1])
        } else {
            (&seats[1], &seats[0])
        };
        if let Some(player) = winner.player {
            match (loser.ai_level, loser.player) {
                (Some(level), _) => {
                    beat(
                        conn.reborrow(),
                        "fastest_checkmate_vs_ai",
                        level,
                        moves as f64,
                        player,
                        id,
                        at,
                    )
                    .await?
                }
                (None, Some(_)) => {
                    beat(
                        conn.reborrow(),
                        "fastest_checkmate",
                        0,
                        moves as f64,
                        player,
                        id,
                        at,
                    )
                    .await?
                }
                (None, None) => {}
            }
        }
    }

    // Longest game, held by its (first) registered player.
    if let Some(player) = seats[0].player.or(seats[1].player) {
        beat(
            conn.reborrow(),
            "longest_game",
            0,
            moves as f64,
            player,
            id,
            at,
        )
        .await?;
    }
    Ok(())
}

/// The rating change a player of `me` (rating, deviation, volatility)
/// would see against `them` for a win, a draw and a loss, rounded as the
/// pages show ratings: the same Glicko-2 step [`rate`] takes.
pub fn stakes(me: (f64, f64, f64), them: (f64, f64, f64)) -> [i64; 3] {
    let (me, them) = (Glicko2Rating::from(me), Glicko2Rating::from(them));
    [Outcomes::WIN, Outcomes::DRAW, Outcomes::LOSS].map(|outcome| {
        let (after, _) = glicko2(&me, &them, &outcome, &Glicko2Config::new());
        (after.rating.round() - me.rating.round()) as i64
    })
}

/// Rates game `id` between registered `players` (white, black): new
/// ratings, two history rows, and the upset record.
async fn rate(
    mut conn: Conn<'_>,
    id: &str,
    players: [&str; 2],
    white_score: f64,
    at: i64,
) -> Result<(), sqlx::Error> {
    let mut before = [Glicko2Rating::new(); 2];
    for (rating, player) in before.iter_mut().zip(players) {
        let (r, d, v): (f64, f64, f64) = on_conn!(conn.reborrow(), c => sqlx::query_as(
            "SELECT rating, rating_deviation, rating_volatility FROM players WHERE id = $1",
        )
        .bind(player)
        .fetch_one(c)
        .await)?;
        *rating = Glicko2Rating::from((r, d, v));
    }
    let outcome = if white_score == 1.0 {
        Outcomes::WIN
    } else if white_score == 0.0 {
        Outcomes::LOSS
    } else {
        Outcomes::DRAW
    };
    let (white_after, black_after) =
        glicko2(&before[0], &before[1], &outcome, &Glicko2Config::new());
    let after = [white_after, black_after];
    let scores = [white_score, 1.0 - white_score];
    for side in 0..2 {
        let (old, new) = (before[side], after[side]);
        on_conn!(conn.reborrow(), c => sqlx::query(
            "UPDATE players SET rating = $1, rating_deviation = $2, rating_volatility = $3
             WHERE id = $4",
        )
        .bind(new.rating)
        .bind(new.deviation)
        .bind(new.volatility)
        .bind(players[side])
        .execute(c)
        .await.map(|_| ()))?;
        on_conn!(conn.reborrow(), c => sqlx::query(
            "INSERT INTO rating_history (game_id, player_id, opponent_id, score,
                 rating_before, deviation_before, volatility_before,
                 rating_after, deviation_after, volatility_after, rated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(id)
        .bind(players[side])
        .bind(players[1 - side])
        .bind(scores[side])
        .bind(old.rating)
        .bind(old.deviation)
        .bind(old.volatility)
        .bind(new.rating)
        .bind(new.deviation)
        .bind(new.volatility)
        .bind(at)
        .execute(c)
        .await.map(|_| ()))?;
    }
    // An upset: the lower rated player won.
    if white_score != 0.5 {
        let (winner, loser) = if white_score == 1.0 { (0, 1) } else { (1, 0) };
        let gap = (before[loser].rating - before[winner].rating).round();
        if gap > 0.0 {
            beat(
                conn.reborrow(),
                "biggest_upset",
                0,
                gap,
                players[winner],
                id,
                at,
            )
            .await?;
        }
    }
    Ok(())
}

/// Sets record (`record`, `level`) to `value` held by `player` in game `id`
/// if it beats the standing one (fewer moves for a checkmate, more for the
/// others). A tie keeps the older holder.
async fn beat(
    mut conn: Conn<'_>,
    record: &str,
    level: i64,
    value: f64,
    player: &str,
    id: &str,
    at: i64,
) -> Result<(), sqlx::Error> {
    let better = if record.starts_with("fastest") {
        "excluded.value < records.value"
    } else {
        "excluded.value > records.value"
    };
    on_conn!(conn.reborrow(), c => sqlx::query(&format!(
        "INSERT INTO records (record, level, value, player_id, game_id, set_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (record, level) DO UPDATE SET
             value = excluded.value, player_id = excluded.player_id,
             game_id = excluded.game_id, set_at = excluded.set_at
         WHERE {better}"
    ))
    .bind(record)
    .bind(level)
    .bind(value)
    .bind(player)
    .bind(id)
    .bind(at)
    .execute(c)
    .await.map(|_| ()))?;
    Ok(())
}

/// Whether migration 0005 is still to be applied to the database behind
/// `pool` (so its results must be counted once it is).
pub async fn needs_backfill(pool: &SqlitePool) -> Result<bool, sqlx::Error> {
    let exists: Option<i64> = sqlx::query_scalar(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rating_history'",
    )
    .fetch_optional(pool)
    .await?;
    Ok(exists.is_none())
}

/// Counts the results stored before migration 0005, oldest first, through
/// the same [`game_finished`] as new results, in one transaction. Runs once,
/// right after the migration (a scan of the finished games, never again).
pub async fn backfill(pool: &SqlitePool) -> Result<usize, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let games: Vec<(String, i64)> = sqlx::query_as(
        "SELECT id, COALESCE(finished_at, updated_at) FROM games
         WHERE status = 'finished' AND result IS NOT NULL AND rated
         ORDER BY COALESCE(finished_at, updated_at), rowid",
    )
    .fetch_all(&mut *tx)
    .await?;
    for (id, at) in &games {
        game_finished(Conn::from(&mut *tx), id, *at).await?;
    }
    tx.commit().await?;
    Ok(games.len())
}

#[cfg(test)]
mod tests {
    use super::super::tests::file_store;
    use super::*;

    /// Stores a finished rated game of registered `player` (white) against
    /// the computer at `level` (black), `plies` long, ended by mate with
    /// `result` (`1-0`/`0-1`), finished at `at`.
    async fn finished_vs_ai(
        pool: &SqlitePool,
        player: &str,
        level: i64,
        plies: i64,
        result: &str,
        at: i64,
    ) -> String {
        let id = uuid::Uuid::new_v4().to_string();
        sqlx::query(
            "INSERT INTO games (id, white_kind, white_player_id, black_kind, black_level,
                 initial_fen, status, result, termination, created_at, updated_at, finished_at)
             VALUES ($1, 'human', $2, 'ai', $3, 'startpos', 'finished', $4, 'checkmate', $5, $6, $7)",
        )
        .bind(&id)
        .bind(player)
        .bind(level)
        .bind(result)
        .bind(at)
        .bind(at)
        .bind(at)
        .execute(pool)
        .await
        .unwrap();
        for ply in 0..plies {
            sqlx::query(
                "INSERT INTO moves (game_id, ply, uci, san, played_at) VALUES ($1, $2, 'a2a3', 'a3', 0)",
            )
            .bind(&id)
            .bind(ply)
            .execute(pool)
            .await
            .unwrap();
        }
        id
    }

    /// Results stored before ratings existed are counted by the backfill,
    /// oldest first, once: the computer's levels each keep their own
    /// fastest mate (a tie keeps the older holder), streaks run in order,
    /// and no rating changes (no registered opponent).
    #[tokio::test]
    async fn the_backfill_counts_stored_results_once_in_order() {
        let (_dir, store) = file_store().await;
        let pool = store.inner.write_pool.sqlite();
        for (id, name) in [("p1", "ann"), ("p2", "ben")] {
            sqlx::query(
                "INSERT INTO players (id, name, name_key, token_hash, created_at)
                 VALUES ($1, $2, $3, $4, 0)",
            )
            .bind(id)
            .bind(name)
            .bind(name)
            .bind(format!("hash-{id}"))
            .execute(pool)
            .await
            .unwrap();
        }
        let ann_l1 = finished_vs_ai(pool, "p1", 1, 9, "1-0", 10).await;
        let _ben_l1_tie = finished_vs_ai(pool, "p2", 1, 10, "1-0", 20).await;
        let ben_l3 = finished_vs_ai(pool, "p2", 3, 21, "1-0", 30).await;
        let _ann_lost = finished_vs_ai(pool, "p1", 2, 3, "0-1", 40).await;
        let ben_l2 = finished_vs_ai(pool, "p2", 2, 7, "1-0", 50).await;
        assert_eq!(backfill(pool).await.unwrap(), 5);

        let records = store.records().await.unwrap();
        let summary: Vec<(&str, Option<u8>, i64, &str, &str)> = records
            .iter()
            .map(|r| {
                (
                    r.record,
                    r.level,
                    r.value,
                    r.player.as_str(),
                    r.game.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    "fastest_checkmate_vs_ai",
                    Some(1),
                    5,
                    "ann",
                    ann_l1.as_str()
                ),
                (
                    "fastest_checkmate_vs_ai",
                    Some(2),
                    4,
                    "ben",
                    ben_l2.as_str()
                ),
                (
                    "fastest_checkmate_vs_ai",
                    Some(3),
                    11,
                    "ben",
                    ben_l3.as_str()
                ),
                ("longest_game", None, 11, "ben", ben_l3.as_str()),
                ("longest_win_streak", None, 3, "ben", ben_l2.as_str()),
            ]
        );
        let ann = store.player_profile("ann").await.unwrap().unwrap();
        assert_eq!((ann.win_streak, ann.best_win_streak), (0, 1));
        assert_eq!((ann.games, ann.wins, ann.losses), (2, 1, 1));
        assert_eq!((ann.rating, ann.rating_deviation), (1500, 350));
        assert!(ann.history.is_empty());

        // The write path finds these games finished: nothing counts again.
        let mut conn = pool.acquire().await.unwrap();
        assert!(is_stored_finished(Conn::from(&mut *conn), &ben_l2)
            .await
            .unwrap());
        drop(conn);
        store.close().await;
    }

    /// The finished game written again (as a reloaded game or a retried
    /// write would) changes no rating, streak or history a second time.
    #[tokio::test]
    async fn a_finished_game_written_again_counts_once() {
        use crate::domain::PlayerRef;
        use crate::live::game::LiveGame;
        use crate::protocol::{SeatKind, SeatRating, Side};
        use crate::token::{mint, TokenHash};
        use tokio::time::Instant;

        let (_dir, store) = file_store().await;
        let mut seats = Vec::new();
        for name in ["ann", "ben"] {
            let id = uuid::Uuid::new_v4();
            store
                .create_player(id, name, &TokenHash::of(name))
                .await
                .unwrap();
            seats.push(PlayerRef {
                id: id.to_string(),
                name: name.into(),
                rating: SeatRating::of(DEFAULT_RATING, DEFAULT_DEVIATION),
            });
        }
        let now = Instant::now();
        let mut live = LiveGame::new(
            uuid::Uuid::new_v4(),
            super::super::now_ms(),
            [SeatKind::Human, SeatKind::Human],
            None,
            crate::domain::Variant::Standard,
            None,
        )
        .unwrap();
        for (side, player) in Side::BOTH.into_iter().zip(seats) {
            live.take_seat(side, mint().unwrap().hash, Some(player), now)
                .unwrap();
        }
        store
            .insert_game(&live.record(), &live.history())
            .await
            .unwrap();
        for uci in ["f2f3", "e7e5", "g2g4", "d8h4"] {
            let played = live.play(live.turn(), uci, now).unwrap();
            store.record(&live.record(), Some(&played)).await.unwrap();
        }
        assert!(live.is_finished());
        let once = store.player_profile("ben").await.unwrap().unwrap();
        assert_eq!(
            (once.rating, once.win_streak, once.history.len()),
            (1662, 1, 1)
        );
        for _ in 0..2 {
            store.record(&live.record(), None).await.unwrap();
        }
        let again = store.player_profile("ben").await.unwrap().unwrap();
        assert_eq!(
            (
                again.rating,
                again.rating_deviation,
                again.win_streak,
                again.history.len()
            ),
            (1662, 290, 1, 1)
        );
        assert_eq!(
            store.player_profile("ann").await.unwrap().unwrap().rating,
            1338
        );
        store.close().await;
    }
}
