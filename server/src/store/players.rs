//! Registered players: created, found by token or by name, their page
//! (rating, tally, rating history) and their games, a page at a time behind
//! a [`Cursor`]. How a result changes a rating is [`super::ratings`]'s.

use uuid::Uuid;

use super::backend::{on_pool, Dialect};
use super::error::StoreError;
use super::rows::ListRow;
use super::writer::{Write, WriteError};
use super::{now_ms, Store};
use crate::domain::PlayerRef;
use crate::protocol::{
    GameState, PlayerProfile, RatingPoint, SeatRating, HISTORY_POINTS, PROVISIONAL_DEVIATION,
};
use crate::token::TokenHash;

/// A page cursor: the last listed game's `created_at` and id, as
/// `CREATED_AT.ID` (opaque to clients).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: i64,
    pub id: String,
}

impl Cursor {
    pub fn parse(text: &str) -> Result<Cursor, StoreError> {
        let bad = || StoreError::BadCursor("before must be a cursor from a previous page".into());
        let (at, id) = text.trim().split_once('.').ok_or_else(bad)?;
        let created_at = at.parse::<i64>().map_err(|_| bad())?;
        let id = uuid::Uuid::parse_str(id).map_err(|_| bad())?;
        Ok(Cursor {
            created_at,
            id: id.to_string(),
        })
    }

    pub fn text(&self) -> String {
        format!("{}.{}", self.created_at, self.id)
    }
}

/// Which of a player's games a page lists (a filter on the games row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayerGamesFilter {
    All,
    /// Waiting or active.
    Unfinished,
    Waiting,
    Active,
    Finished,
    /// Open seeks.
    Joinable,
}

impl PlayerGamesFilter {
    fn sql(self) -> &'static str {
        match self {
            PlayerGamesFilter::All => "",
            PlayerGamesFilter::Unfinished => "AND status != 'finished'",
            PlayerGamesFilter::Waiting => "AND status = 'waiting'",
            PlayerGamesFilter::Active => "AND status = 'active'",
            PlayerGamesFilter::Finished => "AND status = 'finished'",
            PlayerGamesFilter::Joinable => "AND status = 'waiting' AND visibility = 'open'",
        }
    }
}

/// A registered player's row.
#[derive(Debug, sqlx::FromRow)]
struct PlayerRow {
    id: String,
    name: String,
    created_at: i64,
    rating: f64,
    rating_deviation: f64,
    win_streak: i64,
    best_win_streak: i64,
}

#[derive(Debug, sqlx::FromRow)]
struct TallyRow {
    games: i64,
    wins: i64,
    losses: i64,
    draws: i64,
}

#[derive(Debug, sqlx::FromRow)]
struct HistoryRow {
    game_id: String,
    rated_at: i64,
    opponent: String,
    score: f64,
    rating_before: f64,
    rating_after: f64,
    deviation_after: f64,
}

/// The query of one page of a player's games (`$1` player id, `$2`/`$3`
/// the cursor, `$4` how many): each seat's index read backwards from the
/// cursor and merged; only the page itself (at most `$4` rows) is sorted.
pub(super) fn player_games_sql(dialect: Dialect, filter: PlayerGamesFilter) -> String {
    let extra = filter.sql();
    // SQLite: CROSS JOIN keeps the page first in the plan; PostgreSQL has
    // no CROSS JOIN … ON (and plans the join itself).
    let join = match dialect {
        Dialect::Sqlite => "CROSS JOIN",
        Dialect::Postgres => "JOIN",
    };
    let page = format!(
        "(SELECT created_at, id FROM games
              WHERE white_player_id = $1 AND (created_at, id) < ($2, $3) {extra}
          UNION ALL
          SELECT created_at, id FROM games
              WHERE black_player_id = $1 AND (created_at, id) < ($2, $3) {extra}
          ORDER BY 1 DESC, 2 DESC LIMIT $4) AS page
         {join} games g ON g.id = page.id"
    );
    ListRow::select_from(
        dialect,
        &page,
        "",
        "ORDER BY page.created_at DESC, page.id DESC",
    )
}

fn tally_sql() -> &'static str {
    "SELECT COUNT(*) AS games,
            COUNT(*) FILTER (WHERE score = 1) AS wins,
            COUNT(*) FILTER (WHERE score = -1) AS losses,
            COUNT(*) FILTER (WHERE score = 0) AS draws
     FROM (SELECT CASE result WHEN '1-0' THEN 1 WHEN '0-1' THEN -1 ELSE 0 END AS score
           FROM games WHERE white_player_id = $1
               AND status = 'finished' AND result IS NOT NULL AND rated
           UNION ALL
           SELECT CASE result WHEN '0-1' THEN 1 WHEN '1-0' THEN -1 ELSE 0 END
           FROM games WHERE black_player_id = $1
               AND status = 'finished' AND result IS NOT NULL AND rated) AS scores"
}

impl Store {
    pub async fn create_player(
        &self,
        id: Uuid,
        name: &str,
        token: &TokenHash,
    ) -> Result<(), StoreError> {
        let write = Write::CreatePlayer {
            id: id.to_string(),
            name: name.to_string(),
            token_hash: token.0.clone(),
            created_at: now_ms(),
        };
        match self.write(write).await {
            Ok(()) => Ok(()),
            Err(WriteError::Rejected(cause)) if cause.is_unique_violation() => {
                Err(StoreError::NameTaken)
            }
            Err(err) => Err(err.into()),
        }
    }

    pub async fn player_by_token(
        &self,
        token: &TokenHash,
    ) -> Result<Option<PlayerRef>, StoreError> {
        let row: Option<(String, String, f64, f64)> = on_pool!(&self.inner.read, pool =>
            sqlx::query_as(
                "SELECT id, name, rating, rating_deviation FROM players WHERE token_hash = $1",
            )
            .bind(&token.0)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(|(id, name, rating, deviation)| PlayerRef {
            id,
            name,
            rating: SeatRating::of(rating, deviation),
        }))
    }

    /// Whether `token` is a seat token of some game (to tell a token for
    /// another game, 403, from an unknown one, 401).
    pub async fn is_seat_token(&self, token: &TokenHash) -> Result<bool, StoreError> {
        let row: Option<String> = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT id FROM games WHERE white_token_hash = $1 OR black_token_hash = $1 LIMIT 1",
        )
        .bind(&token.0)
        .fetch_optional(pool)
        .await)?;
        Ok(row.is_some())
    }

    /// The id of the registered player called `name` (ignoring case).
    pub async fn player_id(&self, name: &str) -> Result<Option<String>, StoreError> {
        Ok(
            on_pool!(&self.inner.read, pool => sqlx::query_scalar("SELECT id FROM players WHERE name_key = $1")
                .bind(name.to_lowercase())
                .fetch_optional(pool)
                .await)?,
        )
    }

    /// Players whose name starts with `prefix` (ignoring case), by name:
    /// every named player, a new account with no game yet too, but not a
    /// closed account. `prefix` holds only name characters (the edge
    /// checks), and `_`, a name character, is escaped for `LIKE`.
    pub async fn search_players(
        &self,
        prefix: &str,
        limit: u32,
    ) -> Result<Vec<PlayerHit>, StoreError> {
        let pattern = format!("{}%", prefix.to_lowercase().replace('_', "\\_"));
        let rows: Vec<(String, String, f64, f64)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT id, name, rating, rating_deviation FROM players
             WHERE name_key LIKE $1 ESCAPE '\\' AND closed_at IS NULL
             ORDER BY name_key LIMIT $2",
        )
        .bind(pattern)
        .bind(i64::from(limit))
        .fetch_all(pool)
        .await)?;
        Ok(rows
            .into_iter()
            .map(|(id, name, rating, deviation)| PlayerHit {
                id,
                name,
                rating: rating.round() as i64,
                provisional: deviation > PROVISIONAL_DEVIATION,
            })
            .collect())
    }

    /// The players of `ids` (those of them that exist and are not closed),
    /// in no particular order: one query per [`IDS_PER_QUERY`] ids.
    pub async fn players_by_ids(&self, ids: &[String]) -> Result<Vec<PlayerHit>, StoreError> {
        let mut hits = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(IDS_PER_QUERY) {
            let sql = format!(
                "SELECT id, name, rating, rating_deviation FROM players
                 WHERE closed_at IS NULL AND id IN ({})",
                placeholders(chunk.len())
            );
            let rows: Vec<(String, String, f64, f64)> = on_pool!(&self.inner.read, pool => {
                let mut query = sqlx::query_as(&sql);
                for id in chunk {
                    query = query.bind(id);
                }
                query.fetch_all(pool).await
            })?;
            hits.extend(
                rows.into_iter()
                    .map(|(id, name, rating, deviation)| PlayerHit {
                        id,
                        name,
                        rating: rating.round() as i64,
                        provisional: deviation > PROVISIONAL_DEVIATION,
                    }),
            );
        }
        Ok(hits)
    }

    /// The most recent active game of each player of `ids` who has one
    /// (player id → game id).
    pub async fn active_games_of(
        &self,
        ids: &[String],
    ) -> Result<std::collections::HashMap<String, String>, StoreError> {
        let mut playing = std::collections::HashMap::new();
        for chunk in ids.chunks(IDS_PER_QUERY) {
            let list = placeholders(chunk.len());
            let sql = format!(
                "SELECT id, white_player_id, black_player_id FROM games
                 WHERE status = 'active'
                   AND (white_player_id IN ({list}) OR black_player_id IN ({list}))
                 ORDER BY created_at DESC, id DESC"
            );
            let rows: Vec<(String, Option<String>, Option<String>)> = on_pool!(&self.inner.read, pool => {
                let mut query = sqlx::query_as(&sql);
                for id in chunk {
                    query = query.bind(id);
                }
                query.fetch_all(pool).await
            })?;
            let wanted: std::collections::HashSet<&String> = chunk.iter().collect();
            for (game, white, black) in rows {
                for player in [white, black].into_iter().flatten() {
                    if wanted.contains(&player) {
                        // Newest first: the first game seen is the one.
                        playing.entry(player).or_insert_with(|| game.clone());
                    }
                }
            }
        }
        Ok(playing)
    }

    /// What `player_id` stands to win or lose against `opponent_id` in a
    /// rated game: the rating change for a win, a draw and a loss
    /// (`None` if either is unknown).
    pub async fn rating_stakes(
        &self,
        player_id: &str,
        opponent_id: &str,
    ) -> Result<Option<[i64; 3]>, StoreError> {
        let mut ratings = Vec::with_capacity(2);
        for id in [player_id, opponent_id] {
            let row: Option<(f64, f64, f64)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT rating, rating_deviation, rating_volatility FROM players WHERE id = $1",
            )
            .bind(id)
            .fetch_optional(pool)
            .await)?;
            let Some(row) = row else { return Ok(None) };
            ratings.push(row);
        }
        Ok(Some(super::ratings::stakes(ratings[0], ratings[1])))
    }

    /// A player's page: rating, results that count on the scoreboard,
    /// streaks, and the rating history of the last [`HISTORY_POINTS`] rated
    /// games. `None` for an unknown name.
    pub async fn player_profile(&self, name: &str) -> Result<Option<PlayerProfile>, StoreError> {
        let Some(player) = on_pool!(&self.inner.read, pool => sqlx::query_as::<_, PlayerRow>(
            "SELECT id, name, created_at, rating, rating_deviation, win_streak, best_win_streak
             FROM players WHERE name_key = $1",
        )
        .bind(name.to_lowercase())
        .fetch_optional(pool)
        .await)?
        else {
            return Ok(None);
        };
        let tally: TallyRow = on_pool!(&self.inner.read, pool => sqlx::query_as(tally_sql())
            .bind(&player.id)
            .fetch_one(pool)
            .await)?;
        let mut history: Vec<HistoryRow> = on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT h.game_id, h.rated_at, p.name AS opponent, h.score,
                    h.rating_before, h.rating_after, h.deviation_after
             FROM rating_history h JOIN players p ON p.id = h.opponent_id
             WHERE h.player_id = $1
             ORDER BY h.rated_at DESC LIMIT $2",
        )
        .bind(&player.id)
        .bind(i64::from(HISTORY_POINTS))
        .fetch_all(pool)
        .await)?;
        history.reverse();
        Ok(Some(PlayerProfile {
            name: player.name,
            created_at: player.created_at,
            rating: player.rating.round() as i64,
            rating_deviation: player.rating_deviation.round() as i64,
            provisional: player.rating_deviation > PROVISIONAL_DEVIATION,
            games: tally.games,
            wins: tally.wins,
            losses: tally.losses,
            draws: tally.draws,
            win_streak: player.win_streak,
            best_win_streak: player.best_win_streak,
            history: history
                .into_iter()
                .map(|row| RatingPoint {
                    game: row.game_id,
                    at: row.rated_at,
                    opponent: row.opponent,
                    result: if row.score == 1.0 {
                        "win"
                    } else if row.score == 0.0 {
                        "loss"
                    } else {
                        "draw"
                    },
                    before: row.rating_before.round() as i64,
                    after: row.rating_after.round() as i64,
                    deviation: row.deviation_after.round() as i64,
                })
                .collect(),
        }))
    }

    /// One page of player `player_id`'s games, newest first, after
    /// `before`: the games and the cursor of the next page (`None` on the
    /// last one).
    pub async fn player_games(
        &self,
        player_id: &str,
        filter: PlayerGamesFilter,
        before: Option<&Cursor>,
        limit: u32,
    ) -> Result<(Vec<GameState>, Option<String>), StoreError> {
        let (at, id) = match before {
            Some(cursor) => (cursor.created_at, cursor.id.as_str()),
            // Above every stored game: ids are lower-case hex and hyphens.
            None => (i64::MAX, "~"),
        };
        // One more than asked: whether there is a next page.
        let rows = on_pool!(&self.inner.read, pool => sqlx::query_as::<_, ListRow>(&player_games_sql(self.dialect(), filter))
            .bind(player_id)
            .bind(at)
            .bind(id)
            .bind(i64::from(limit) + 1)
            .fetch_all(pool)
            .await)?;
        let mut games = self.states_of(rows).await?;
        let next = if games.len() > limit as usize {
            games.truncate(limit as usize);
            games.last().map(|game| {
                Cursor {
                    created_at: game.created_at,
                    id: game.id.clone(),
                }
                .text()
            })
        } else {
            None
        };
        Ok((games, next))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{file_store, query_plan as plan};
    use super::*;

    /// A page of a player's games reads each seat's index from the cursor
    /// and merges them: the games table is never scanned, and the only sort
    /// is of the page itself (after the merge, at most `limit` rows).
    #[tokio::test]
    async fn a_players_games_are_read_through_the_seat_indexes() {
        let (_dir, store) = file_store().await;
        let filters = [
            PlayerGamesFilter::All,
            PlayerGamesFilter::Unfinished,
            PlayerGamesFilter::Waiting,
            PlayerGamesFilter::Active,
            PlayerGamesFilter::Finished,
            PlayerGamesFilter::Joinable,
        ];
        for filter in filters {
            let plan = plan(&store, &player_games_sql(Dialect::Sqlite, filter)).await;
            assert!(plan.contains("MERGE (UNION ALL)"), "{filter:?}:\n{plan}");
            for index in ["games_white_player", "games_black_player"] {
                assert!(
                    plan.contains(&format!("INDEX {index} (")),
                    "{filter:?}: {index}\n{plan}"
                );
            }
            assert!(
                plan.contains("(created_at,id)<(?,?)"),
                "{filter:?}: the cursor is an index range\n{plan}"
            );
            assert!(!plan.contains("SCAN games"), "{filter:?}:\n{plan}");
            assert!(!plan.contains("SCAN g"), "{filter:?}:\n{plan}");
        }
        let plan = plan(&store, tally_sql()).await;
        assert!(
            plan.contains("games_white_player") && plan.contains("games_black_player"),
            "{plan}"
        );
        assert!(!plan.contains("SCAN games"), "{plan}");
        store.close().await;
    }

    #[test]
    fn cursors_round_trip_and_bad_ones_are_refused() {
        let cursor = Cursor {
            created_at: 1_700_000_000_123,
            id: "6f1c2a3e-0000-4000-8000-000000000001".into(),
        };
        assert_eq!(Cursor::parse(&cursor.text()).unwrap(), cursor);
        for bad in [
            "",
            "12",
            "x.6f1c2a3e-0000-4000-8000-000000000001",
            "12.nope",
            ".",
            "12.",
        ] {
            assert!(
                matches!(Cursor::parse(bad), Err(StoreError::BadCursor(_))),
                "{bad:?}"
            );
        }
    }
}

/// How many ids one `IN (...)` list of [`Store::players_by_ids`] and
/// [`Store::active_games_of`] binds (SQLite allows 32,766 parameters;
/// PostgreSQL 65,535).
const IDS_PER_QUERY: usize = 500;

/// `$1, $2, ... $n`: the placeholders of an `IN` list (both dialects read
/// numbered parameters; a repeated one binds the same value).
fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A player found by [`Store::search_players`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct PlayerHit {
    #[serde(skip)]
    pub id: String,
    pub name: String,
    pub rating: i64,
    pub provisional: bool,
}
