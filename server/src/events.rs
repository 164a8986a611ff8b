//! Each person's event stream (`GET /api/stream/event`, issue 21 and
//! lichess's API, issue 24): challenges received, cancelled and declined,
//! games started and finished, as NDJSON lines.
//!
//! A hub of one broadcast channel per connected player (by player id).
//! Events for a player with no open stream are dropped: a stream starts
//! with what is open now (challenges, unfinished games), so nothing is
//! missed by a client that connects later. In a cluster every event is also
//! handed to [`Events::forward_to`]'s relay (the cluster publishes it over
//! NATS, and the other nodes [`Events::deliver`] it to their streams), so
//! a stream hears a person's events whichever node handles the game or
//! challenge.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::broadcast;

/// Events a slow stream may fall behind before it skips ahead.
const CAPACITY: usize = 64;

/// Where a node's events go besides its own streams: the player (or
/// channel) id and the NDJSON line.
pub type Relay = Box<dyn Fn(&str, &Arc<str>) + Send + Sync>;

#[derive(Clone, Default)]
pub struct Events {
    players: Arc<Mutex<HashMap<String, broadcast::Sender<Arc<str>>>>>,
    /// Set once, by a cluster member (see the module's header).
    relay: Arc<OnceLock<Relay>>,
    /// Woken when a game with a registered player finishes (the arena
    /// director's cue to settle and pair at once).
    finished: Arc<tokio::sync::Notify>,
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

    /// The players with an event stream open on this node (the web client
    /// keeps one open on every page of a logged-in person).
    pub fn online_players(&self) -> Vec<String> {
        self.players()
            .iter()
            .filter(|(_, sender)| sender.receiver_count() > 0)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Sends `event` (one NDJSON line) to the player's open streams, on
    /// this node and, in a cluster, on the others.
    pub fn send(&self, player_id: &str, event: &impl Serialize) {
        let line: Arc<str> = match serde_json::to_string(event) {
            Ok(line) => Arc::from(line),
            Err(err) => {
                tracing::error!(%err, "event not serialisable");
                return;
            }
        };
        if let Some(relay) = self.relay.get() {
            relay(player_id, &line);
        }
        self.deliver(player_id, line);
    }

    /// Hands `line` to the player's streams on this node only (an event
    /// another node relayed).
    pub fn deliver(&self, player_id: &str, line: Arc<str>) {
        let Some(sender) = self.players().get(player_id).cloned() else {
            return;
        };
        // No receiver left: nobody to tell.
        drop(sender.send(line));
    }

    /// Sends every event also to `relay` from now on (set once: a second
    /// relay is ignored).
    pub fn forward_to(&self, relay: Relay) {
        if self.relay.set(relay).is_err() {
            tracing::warn!("the events already have a relay");
        }
    }
}

impl Events {
    /// Tells each registered player of a game that it started: `games` holds
    /// each one's id and lichess's game object for their side
    /// (`LiveGame::event_games`).
    pub fn game_started(&self, games: &[(String, Value)]) {
        self.tell_players("gameStart", games);
    }

    /// Tells each registered player of a game that it finished.
    pub fn game_finished(&self, games: &[(String, Value)]) {
        self.tell_players("gameFinish", games);
        if !games.is_empty() {
            self.finished.notify_one();
        }
    }

    /// Notified (one waiter, or the next to wait) when a game with a
    /// registered player finishes on this node.
    pub fn finish_signal(&self) -> Arc<tokio::sync::Notify> {
        self.finished.clone()
    }

    fn tell_players(&self, kind: &str, games: &[(String, Value)]) {
        for (player, game) in games {
            // Not only when online here: their stream may be on another
            // node of a cluster.
            if self.is_online(player) || self.relay.get().is_some() {
                self.send(player, &json!({"type": kind, "game": game}));
            }
        }
    }
}
