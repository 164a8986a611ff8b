//! Game leases of a cluster (migrations/0007): which node owns each live
//! game, with a fencing epoch. See docs/architecture.md for the design and
//! [`crate::cluster`] for their use.
//!
//! Lease statements run on the write pool directly, not through the group
//! commit: they are small, and a node must learn at once whether it got a
//! game. The fence itself is checked inside the game's write transaction
//! (see [`Fence`] and the writer).

use std::sync::Arc;

use uuid::Uuid;

use super::backend::{on_conn, on_pool, Conn};
use super::error::StoreError;
use super::{now_ms, parse_ids, Store};

/// A node's right to write one game: its name and the epoch it took the
/// lease with. A write carrying a fence is stored only while the lease row
/// still names this owner and epoch (another node's takeover increments the
/// epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    pub owner: Arc<str>,
    pub epoch: i64,
}

impl Fence {
    /// Whether the lease of `game` is still this fence's and has not
    /// expired, checked inside the write's transaction. On PostgreSQL the
    /// `UPDATE` locks the lease row until the transaction ends, so a
    /// takeover waits for this write and then sees its own epoch win; it
    /// cannot slip in between. An expired lease writes nothing even before
    /// another node takes it: a node that stopped renewing (cut off from
    /// NATS) stops changing its games.
    pub(super) async fn holds(&self, game: &str, conn: Conn<'_>) -> Result<bool, sqlx::Error> {
        on_conn!(conn, conn => sqlx::query(
            "UPDATE game_leases SET epoch = epoch
             WHERE game_id = $1 AND owner = $2 AND epoch = $3 AND expires_at > $4",
        )
        .bind(game)
        .bind(&*self.owner)
        .bind(self.epoch)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|done| done.rows_affected() == 1))
    }
}

/// The environment variable that switches fencing off, for the partition
/// tests only (tests/partitions.rs shows their checker catching what
/// follows): `1` there makes a node write its games without checking its
/// lease, its actors never doubt their lease, and a move overwrite one
/// stored at its ply. Never set it on a real service: two nodes would
/// then write one game.
pub const UNFENCED_ENV: &str = "ROOKERY_TEST_UNFENCED";

/// Whether [`UNFENCED_ENV`] is `1` (read once).
pub fn fencing_disabled() -> bool {
    static DISABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DISABLED.get_or_init(|| {
        let disabled = std::env::var(UNFENCED_ENV).is_ok_and(|value| value == "1");
        if disabled {
            tracing::warn!(
                "{UNFENCED_ENV}=1: fencing is OFF (a test of the tests); never in service"
            );
        }
        disabled
    })
}

/// A game's lease as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Lease {
    pub owner: String,
    pub epoch: i64,
    /// Ms since the Unix epoch.
    pub expires_at: i64,
}

impl Lease {
    pub fn is_live(&self, now_ms: i64) -> bool {
        self.expires_at > now_ms
    }
}

impl Store {
    /// Takes the lease of `game` for `owner` until `ttl_ms` from now, if
    /// nobody else holds a live one: the new epoch, or `None` when another
    /// node owns the game.
    pub async fn acquire_lease(
        &self,
        game: Uuid,
        owner: &str,
        ttl_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        let now = now_ms();
        let epoch: Option<i64> = on_pool!(&self.inner.write_pool, pool => sqlx::query_scalar(
            "INSERT INTO game_leases (game_id, owner, epoch, expires_at)
             VALUES ($1, $2, 1, $3)
             ON CONFLICT (game_id) DO UPDATE
                 SET owner = excluded.owner, epoch = game_leases.epoch + 1,
                     expires_at = excluded.expires_at
                 WHERE game_leases.expires_at <= $4 OR game_leases.owner = excluded.owner
             RETURNING epoch",
        )
        .bind(game.to_string())
        .bind(owner)
        .bind(now + ttl_ms)
        .bind(now)
        .fetch_optional(pool)
        .await)?;
        Ok(epoch)
    }

    /// The stored lease of `game`, if any (live or expired).
    /// Leases of games that are live now, held by cluster nodes: a node
    /// started without `--nats` must not write this database (it would be
    /// an unfenced second writer).
    pub async fn live_leases(&self) -> Result<i64, StoreError> {
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT COUNT(*) FROM game_leases WHERE expires_at > $1",
        )
        .bind(super::now_ms())
        .fetch_one(pool)
        .await)?)
    }

    pub async fn lease_of(&self, game: Uuid) -> Result<Option<Lease>, StoreError> {
        let lease: Option<Lease> = on_pool!(&self.inner.write_pool, pool => sqlx::query_as(
            "SELECT owner, epoch, expires_at FROM game_leases WHERE game_id = $1",
        )
        .bind(game.to_string())
        .fetch_optional(pool)
        .await)?;
        Ok(lease)
    }

    /// Extends every live lease `owner` holds to `ttl_ms` from now: the
    /// games renewed, each with its lease's epoch (an actor of this node
    /// holding an older epoch of the same game, which the node took again,
    /// must not read the renewal as its own). An expired lease is not
    /// renewed (another node may have taken the game, or may take it now).
    pub async fn renew_leases(
        &self,
        owner: &str,
        ttl_ms: i64,
    ) -> Result<Vec<(Uuid, i64)>, StoreError> {
        let now = now_ms();
        let renewed: Vec<(String, i64)> = on_pool!(&self.inner.write_pool, pool => sqlx::query_as(
            "UPDATE game_leases SET expires_at = $1 WHERE owner = $2 AND expires_at > $3
             RETURNING game_id, epoch",
        )
        .bind(now + ttl_ms)
        .bind(owner)
        .bind(now)
        .fetch_all(pool)
        .await)?;
        Ok(renewed
            .into_iter()
            .filter_map(|(id, epoch)| Uuid::parse_str(&id).ok().map(|id| (id, epoch)))
            .collect())
    }

    /// Gives up the lease `fence` holds on `game` (an actor leaving memory,
    /// a node stopping): another node may take the game at once.
    pub async fn release_lease(&self, game: Uuid, fence: &Fence) -> Result<(), StoreError> {
        on_pool!(&self.inner.write_pool, pool => sqlx::query(
            "DELETE FROM game_leases WHERE game_id = $1 AND owner = $2 AND epoch = $3",
        )
        .bind(game.to_string())
        .bind(&*fence.owner)
        .bind(fence.epoch)
        .execute(pool)
        .await
        .map(|_| ()))?;
        Ok(())
    }

    /// [`Store::games_to_resume`] in a cluster: those whose lease is missing
    /// or expired (their owner stopped or died), so that some node takes
    /// them over.
    pub async fn unowned_games_to_resume(&self) -> Result<Vec<Uuid>, StoreError> {
        let ids: Vec<String> = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT g.id FROM games g LEFT JOIN game_leases l ON l.game_id = g.id
             WHERE g.status = 'active'
               AND (g.clock_initial_ms IS NOT NULL OR g.white_kind = 'ai' OR g.black_kind = 'ai')
               AND (l.game_id IS NULL OR l.expires_at <= $1)
             ORDER BY g.created_at DESC",
        )
        .bind(now_ms())
        .fetch_all(pool)
        .await)?;
        Ok(parse_ids(&ids))
    }
}
