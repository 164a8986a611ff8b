//! How the actor changes its game: a change is made on a copy, written to
//! the database with the owner's fence, and only then becomes the actor's
//! state and is broadcast (and, in a cluster, published); a failed write
//! changes nothing and backs off. The states and presence sent to
//! subscribers are built here too.

use tokio::time::Instant;

use super::super::game::{GameError, LiveGame};
use super::{GameActor, RETRY_FIRST, RETRY_MAX};
use crate::cluster::Change;
use crate::domain::PlayedMove;
use crate::live::error::LiveError;
use crate::protocol::{self, Broadcast, GameState, SharedState, Status};

impl GameActor {
    /// Like [`Self::change`] for an action that may change nothing (an
    /// offer made twice, a decline with no offer standing): then nothing
    /// is written or broadcast.
    pub(super) async fn change_if(
        &mut self,
        apply: impl FnOnce(&mut LiveGame, Instant) -> Result<bool, GameError>,
    ) -> Result<(), LiveError> {
        let now = Instant::now();
        let mut next = self.live.clone();
        if apply(&mut next, now)? {
            self.commit(next, None, None, now).await?;
        }
        Ok(())
    }

    /// Runs `apply` on a copy of the game; if it succeeds, records the copy
    /// (and its move), then adopts it and broadcasts.
    pub(super) async fn change<T>(
        &mut self,
        now: Option<Instant>,
        apply: impl FnOnce(&mut LiveGame, Instant) -> Result<(T, Option<PlayedMove>), GameError>,
    ) -> Result<T, LiveError> {
        let now = now.unwrap_or_else(Instant::now);
        let mut next = self.live.clone();
        let (value, played) = apply(&mut next, now)?;
        self.commit(next, played, None, now).await?;
        Ok(value)
    }

    /// Records `next` (with its move, the plies a takeback removed, and an
    /// agreed rematch's new game, all in one transaction), then adopts it
    /// and broadcasts.
    pub(super) async fn commit(
        &mut self,
        mut next: LiveGame,
        played: Option<PlayedMove>,
        rematch: Option<LiveGame>,
        now: Instant,
    ) -> Result<(), LiveError> {
        next.updated_at = crate::store::now_ms();
        let plies = next.game().moves().len();
        let taken_back = plies < self.live.game().moves().len();
        let recorded = self
            .context
            .store
            .record_change(
                &next.record(),
                played.as_ref(),
                taken_back.then_some(plies),
                rematch.as_ref().map(LiveGame::record).as_ref(),
                self.ownership.as_ref().map(|o| &o.fence),
            )
            .await
            .map_err(LiveError::from);
        if let Err(LiveError::Moved) = recorded {
            // Nothing was written; the new owner has the game. This actor
            // leaves memory after this command.
            self.lease_lost = true;
            return Err(LiveError::Moved);
        }
        if let Err(err) = recorded {
            self.on_write_failed(&err).await;
            return Err(err);
        }
        self.failures = 0;
        self.retry_at = None;
        let before = self.live.status();
        self.live = next;
        match (before, self.live.ending()) {
            (Status::Finished, _) => {}
            (_, Some(ending)) => tracing::info!(
                game = %self.live.id,
                result = ending.result().unwrap_or("none"),
                termination = ending.termination.as_str(),
                "game over"
            ),
            (Status::Waiting, None) if self.live.status() == Status::Active => {
                tracing::info!(game = %self.live.id, "game started")
            }
            _ => {}
        }
        match (before, self.live.status()) {
            (Status::Finished, _) => {}
            (_, Status::Finished) => self
                .context
                .events
                .game_finished(&self.live.event_games(self.live.event_source())),
            (Status::Waiting, Status::Active) => self
                .context
                .events
                .game_started(&self.live.event_games("lobby")),
            _ => {}
        }
        if played.is_some() {
            self.last_move_at = now;
            self.held_ai_move = None;
        }
        if self.live.is_finished() || taken_back {
            // A takeback while the computer thinks: its search is for a
            // position that is gone (dropping it stops it).
            self.thinking = None;
            self.held_ai_move = None;
        }
        if let Some(rematch) = rematch {
            // Live before anyone learns its id from the broadcast.
            (self.context.start_game)(rematch);
        }
        self.broadcast();
        metrics::histogram!("rookery_move_broadcast_seconds").record(now.elapsed().as_secs_f64());
        // The offer's answer went out with this change's state only.
        self.live.clear_offer_answer();
        self.start_ai_if_needed();
        Ok(())
    }

    /// After a failed write: back off, and if the write may have been stored
    /// after all, take the game as the database has it.
    pub(super) async fn on_write_failed(&mut self, err: &LiveError) {
        self.failures = self.failures.saturating_add(1);
        let backoff = RETRY_FIRST
            .saturating_mul(1 << self.failures.min(10).saturating_sub(1))
            .min(RETRY_MAX);
        self.retry_at = Some(Instant::now() + backoff);
        if !matches!(
            err,
            LiveError::Store(crate::store::StoreError::Unavailable { ambiguous: true })
        ) {
            return;
        }
        match crate::live::load_game(&self.context.store, self.live.id, Instant::now()).await {
            Ok(Some(mut stored)) => {
                stored.set_timing(self.context.timing);
                stored.keep_presence_of(&self.live);
                let moved = stored.game().moves().len() != self.live.game().moves().len();
                self.live = stored;
                if moved {
                    self.held_ai_move = None;
                    self.thinking = None;
                }
                self.broadcast();
                self.start_ai_if_needed();
            }
            // The game cannot be read either: keep the state from before
            // the change, which is what the database held before it.
            Ok(None) => {}
            Err(err) => err.log(),
        }
    }

    pub(super) fn state(&self) -> GameState {
        self.live.state(Instant::now())
    }

    /// Publishes a change for the other nodes of a cluster.
    pub(super) fn publish(&mut self, change: Change) {
        if let Some(ownership) = &self.ownership {
            self.published += 1;
            ownership
                .cluster
                .publish(self.live.id, ownership.fence.epoch, self.published, change);
        }
    }

    /// Sends the new state to every subscriber, serialised once.
    pub(super) fn broadcast(&mut self) {
        self.presence_due = None;
        if self.ownership.is_some() {
            let game = Box::new(self.state());
            self.publish(Change::State { game });
        }
        if self.states.receiver_count() == 0 {
            // Nobody to tell (a game played over HTTP only): skip the
            // serialising. A later subscriber starts from a fresh state.
            self.presence_sent = None;
            return;
        }
        let state = self.state();
        // The state carries the connection counts too.
        self.presence_sent = Some(protocol::Presence::of(&state));
        // Sending fails only when the last subscriber just left: fine.
        let _ = self.states.send(Broadcast::State(SharedState::of(&state)));
    }

    /// Sends the gathered presence changes, if they changed anything the
    /// subscribers know.
    ///
    /// A seat's `connected` flag is part of the GameState, and the contract
    /// promises a full `state` after every change of it: when either seat's
    /// flag differs from what subscribers last saw (or we do not know what
    /// they saw), a whole state goes out. The small `presence` message is
    /// kept for spectator counts only, so a crowd of watchers arriving costs
    /// no state serialising per arrival.
    pub(super) fn send_presence(&mut self) {
        self.presence_due = None;
        let presence = protocol::Presence::of(&self.state());
        let seats = |p: &protocol::Presence| (p.white, p.black);
        match self.presence_sent {
            Some(sent) if sent == presence => {}
            Some(sent) if seats(&sent) == seats(&presence) => {
                self.presence_sent = Some(presence);
                self.publish(Change::Presence { presence });
                // Nobody subscribed: nothing to tell.
                let _ = self.states.send(Broadcast::presence(presence));
            }
            _ => self.broadcast(),
        }
    }
}
