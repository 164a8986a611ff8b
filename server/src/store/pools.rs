//! What quick pairing (`pools/`) reads: a player's colours of late, and how
//! many play at each clock now. Pools keep their waiting players in memory:
//! nothing of them is written.

use super::backend::on_pool;
use super::error::StoreError;
use super::Store;
use crate::domain::Side;

impl Store {
    /// The colours of the player's last `n` games that started, most
    /// recent first.
    pub async fn recent_colours(&self, player_id: &str, n: i64) -> Result<Vec<Side>, StoreError> {
        let rows: Vec<(String,)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT CASE WHEN white_player_id = $1 THEN 'white' ELSE 'black' END
                 FROM games
                 WHERE (white_player_id = $1 OR black_player_id = $1) AND status <> 'waiting'
                 ORDER BY created_at DESC LIMIT $2",
            )
            .bind(player_id)
            .bind(n)
            .fetch_all(pool)
            .await)?;
        Ok(rows
            .into_iter()
            .filter_map(|(side,)| Side::parse(&side))
            .collect())
    }

    /// Games between two people being played now, by clock: `(initial ms,
    /// increment ms, games)`.
    pub async fn active_games_by_clock(&self) -> Result<Vec<(i64, i64, i64)>, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(
                "SELECT clock_initial_ms, clock_increment_ms, COUNT(*)
                 FROM games
                 WHERE status = 'active' AND clock_initial_ms IS NOT NULL
                   AND clock_increment_ms IS NOT NULL
                   AND white_kind = 'human' AND black_kind = 'human'
                 GROUP BY clock_initial_ms, clock_increment_ms",
            )
            .fetch_all(pool)
            .await)?)
    }
}
