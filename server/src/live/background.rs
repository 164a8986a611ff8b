//! The registry's own work while serving: resuming the games that need
//! their actor after a start (running clocks, AI seats), in a cluster
//! taking over the games whose owner is gone, the expiry sweep (and the
//! retention rules' deletions), and the shutdown that stops every game.

use std::sync::PoisonError;
use std::time::Duration;

use futures_util::future::join_all;
use uuid::Uuid;

use super::messages::{Ask, Reply};
use super::{millis, Registry, SWEEP_BATCH};
use crate::cluster::Cluster;
use crate::live::error::LiveError;
use crate::store::RetentionCutoffs;

/// The longest one sweep round keeps deleting expired games (the rest wait
/// for the next round).
const DELETION_ROUND: Duration = Duration::from_secs(5);

impl Registry {
    /// Starts the background work of a serving registry: resuming the games
    /// that need their actor (running clocks, AI seats) and the expiry
    /// sweep. Both stop at shutdown.
    pub fn start_background(&self) {
        let mut background = self
            .inner
            .background
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let registry = self.clone();
        background.spawn(async move {
            match registry.resume().await {
                Ok(resumed) => tracing::info!(resumed, "unfinished games resumed"),
                Err(err) => {
                    tracing::error!("could not list the games to resume");
                    err.log();
                }
            }
        });
        let registry = self.clone();
        background.spawn(async move { registry.sweep_forever().await });
        if let Some(cluster) = self.inner.cluster.clone() {
            let shutdown = self.inner.shutdown_tx.subscribe();
            let renewer = cluster.clone();
            background.spawn(async move { renewer.renew_forever(shutdown).await });
            let registry = self.clone();
            background.spawn(async move { registry.take_over_forever(&cluster).await });
        }
    }

    /// A cluster's takeover sweep: every [`Cluster::sweep_period`], the
    /// games whose clock runs or whose AI is to move and whose lease has
    /// expired (their node died or stopped) are loaded here, without
    /// waiting for anyone's command.
    pub(super) async fn take_over_forever(&self, cluster: &Cluster) {
        let mut shutdown = self.inner.shutdown_tx.subscribe();
        let mut ticks = tokio::time::interval(cluster.sweep_period());
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.wait_for(|stop| *stop) => return,
                _ = ticks.tick() => {}
            }
            if !cluster.connected() {
                continue;
            }
            match self.resume().await {
                Ok(0) => {}
                Ok(taken) => {
                    metrics::counter!("rookery_leases_taken_over_total").increment(taken as u64);
                    tracing::info!(taken, "games taken over")
                }
                Err(err) => err.log(),
            }
        }
    }

    /// Loads every game whose clock runs or whose AI may be to move, newest
    /// first, one at a time (each load replays on a blocking thread).
    ///
    /// In a cluster: only the games no live node owns (the others are
    /// being played), each taken here, or by whichever node is first.
    pub(super) async fn resume(&self) -> Result<usize, LiveError> {
        let ids = match self.inner.cluster {
            None => self.inner.store.games_to_resume().await?,
            Some(_) => self.inner.store.unowned_games_to_resume().await?,
        };
        let mut resumed = 0;
        for id in ids {
            if self.is_shutting_down() {
                break;
            }
            let persisted = match self.ask(id, Ask::Persist).await {
                Ok(Reply::Persisted(persisted)) => persisted,
                Ok(other) => Err(other.unexpected()),
                Err(err) => Err(err),
            };
            match persisted {
                // The clock restarted charged only the thinking done before
                // the stop: the actor stored that, so reads of the row
                // (lists) agree with it.
                Ok(()) => resumed += 1,
                Err(LiveError::ShuttingDown) => break,
                Err(err) => {
                    tracing::error!(game = %id, "could not resume game");
                    err.log();
                }
            }
        }
        Ok(resumed)
    }

    /// How often the sweep looks for stale and expired games: a quarter of
    /// the shortest expiry or retention, between 100 ms and a minute.
    pub(super) fn sweep_period(&self) -> Duration {
        let options = &self.inner.options;
        [options.aborted_retention, options.anonymous_retention]
            .into_iter()
            .flatten()
            .fold(
                options.waiting_expiry.min(options.idle_expiry),
                Duration::min,
            )
            .div_f64(4.0)
            .clamp(Duration::from_millis(100), Duration::from_secs(60))
    }

    pub(super) async fn sweep_forever(&self) {
        let mut shutdown = self.inner.shutdown_tx.subscribe();
        let mut ticks = tokio::time::interval(self.sweep_period());
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.wait_for(|stop| *stop) => return,
                _ = ticks.tick() => {}
            }
            if let Err(err) = self.sweep().await {
                err.log();
            }
            if let Err(err) = self.delete_expired().await {
                err.log();
            }
        }
    }

    /// Deletes the finished games the retention rules no longer keep (see
    /// store/retention.rs), a batch at a time, until none is left or the
    /// round has taken [`DELETION_ROUND`]; games loaded here are skipped: a
    /// page or a spectator still looking at one keeps it until it unloads.
    /// A batch's deletions are sent together, so the writer commits them
    /// in one transaction.
    pub async fn delete_expired(&self) -> Result<usize, LiveError> {
        let options = self.inner.options;
        let started = std::time::Instant::now();
        let mut deleted = 0;
        loop {
            let now = crate::store::now_ms();
            let before = |keep: Option<Duration>| keep.map(|keep| now.saturating_sub(millis(keep)));
            let cutoffs = RetentionCutoffs {
                aborted_before: before(options.aborted_retention),
                anonymous_before: before(options.anonymous_retention),
            };
            if cutoffs.aborted_before.is_none() && cutoffs.anonymous_before.is_none() {
                return Ok(0);
            }
            let expired = self.inner.store.expired_games(cutoffs, SWEEP_BATCH).await?;
            let full = expired.len() == SWEEP_BATCH as usize;
            let unloaded: Vec<Uuid> = {
                let loaded = self.games();
                expired
                    .into_iter()
                    .filter(|id| !loaded.contains_key(id))
                    .collect()
            };
            let store = &self.inner.store;
            let results = join_all(unloaded.iter().map(|&id| store.delete_finished_game(id))).await;
            let mut round = 0;
            for (id, result) in unloaded.iter().zip(results) {
                if result? {
                    round += 1;
                    tracing::debug!(game = %id, "finished game deleted (retention)");
                }
            }
            deleted += round;
            metrics::counter!("rookery_games_deleted_total").increment(round as u64);
            // A batch of only loaded games would be found again: stop.
            if !full || round == 0 || started.elapsed() > DELETION_ROUND || self.is_shutting_down()
            {
                break;
            }
        }
        if deleted > 0 {
            tracing::info!(deleted, "finished games deleted (retention)");
        }
        Ok(deleted)
    }

    /// Ends the stale games of one round, each through its actor (which
    /// checks again that the game is still stale), so a game is never
    /// changed behind a live actor's back.
    pub async fn sweep(&self) -> Result<usize, LiveError> {
        let options = self.inner.options;
        let now = crate::store::now_ms();
        let waiting_ms = millis(options.waiting_expiry);
        let idle_ms = millis(options.idle_expiry);
        let stale = self
            .inner
            .store
            .stale_games(
                now.saturating_sub(waiting_ms),
                now.saturating_sub(idle_ms),
                SWEEP_BATCH,
            )
            .await?;
        let mut ended = 0;
        for id in stale {
            if self.is_shutting_down() {
                break;
            }
            let ask = Ask::Expire {
                waiting_ms,
                idle_ms,
            };
            let expired = match self.ask(id, ask).await {
                Ok(Reply::Expired(ended)) => Ok(ended),
                Ok(other) => Err(other.unexpected()),
                Err(err) => Err(err),
            };
            match expired {
                Ok(true) => {
                    ended += 1;
                    tracing::info!(game = %id, "stale game ended");
                }
                Ok(false) => {}
                Err(err) => err.log(),
            }
        }
        Ok(ended)
    }

    /// Stops every actor (their searches are told to stop) and waits for
    /// them to answer what they had queued.
    pub async fn shutdown(&self) {
        self.inner.shutdown_tx.send_replace(true);
        // The resume and the sweep only load and call games: cut them short.
        let mut background = std::mem::take(
            &mut *self
                .inner
                .background
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        background.abort_all();
        while background.join_next().await.is_some() {}
        let mut actors = std::mem::take(
            &mut *self
                .inner
                .actors
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        while actors.join_next().await.is_some() {}
        self.games().clear();
    }
}
