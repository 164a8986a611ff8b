//! Each person's event stream (`GET /api/stream/event`, issue 21 and
//! lichess's API, issue 24): challenges received, cancelled and declined,
//! games started and finished, as NDJSON lines.
//!
//! A hub of one broadcast channel per connected player (by player id).
//! Events for a player with no open stream are dropped: a stream starts
//! with what is open now (challenges, unfinished games), so nothing is
//! missed by a client that connects later. Kept per node: in a cluster, a
//! stream hears the events of games and challenges handled by its node.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde_json::json;
use tokio::sync::broadcast;

use crate::http::lichess::shapes;
use crate::live::game::LiveGame;
use crate::protocol::Side;

/// Events a slow stream may fall behind before it skips ahead.
const CAPACITY: usize = 64;

#[derive(Clone, Default)]
pub struct Events {
    players: Arc<Mutex<HashMap<String, broadcast::Sender<Arc<str>>>>>,
}

impl Events {
    fn players(&self) -> std::sync::MutexGuard<'_, HashMap<String, broadcast::Sender<Arc<str>>>> {
        // Every operation is one map insert, lookup or remove: a poisoned
        // lock still holds a valid map.
        self.players.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A receiver of the player's events from now on.
    pub fn subscribe(&self, player_id: &str) -> broadcast::Receiver<Arc<str>> {
        let mut players = self.players();
        players.retain(|_, sender| sender.receiver_count() > 0);
        players
            .entry(player_id.to_string())
            .or_insert_with(|| broadcast::channel(CAPACITY).0)
            .subscribe()
    }

    /// Whether the player has an event stream open (lichess's `online`).
    pub fn is_online(&self, player_id: &str) -> bool {
        self.players()
            .get(player_id)
            .is_some_and(|sender| sender.receiver_count() > 0)
    }

    /// Sends `event` (one NDJSON line) to the player's open streams.
    pub fn send(&self, player_id: &str, event: &impl Serialize) {
        let Some(sender) = self.players().get(player_id).cloned() else {
            return;
        };
        match serde_json::to_string(event) {
            // No receiver left: nobody to tell.
            Ok(line) => drop(sender.send(Arc::from(line))),
            Err(err) => tracing::error!(%err, "event not serialisable"),
        }
    }
}

impl Events {
    /// Tells each registered player of `live` that it started (`source`:
    /// lichess's `friend`, `ai`, `lobby`).
    pub fn game_started(&self, live: &LiveGame, source: &str) {
        self.tell_players(
            live,
            |side| json!({"type": "gameStart", "game": shapes::event_game(live, side, source)}),
        );
    }

    /// Tells each registered player of `live` that it finished.
    pub fn game_finished(&self, live: &LiveGame) {
        let source = if live.is_ai_vs_ai()
            || Side::BOTH
                .iter()
                .any(|s| live.seat(*s).ai_level().is_some())
        {
            "ai"
        } else {
            "friend"
        };
        self.tell_players(
            live,
            |side| json!({"type": "gameFinish", "game": shapes::event_game(live, side, source)}),
        );
    }

    fn tell_players(&self, live: &LiveGame, event: impl Fn(Side) -> serde_json::Value) {
        for side in Side::BOTH {
            if let Some(player) = live.seat(side).player() {
                if self.is_online(&player.id) {
                    self.send(&player.id, &event(side));
                }
            }
        }
    }
}
