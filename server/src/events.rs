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

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::broadcast;

/// Events a slow stream may fall behind before it skips ahead.
const CAPACITY: usize = 64;

/// Where a node's events go besides its own streams: the player (or
/// channel) id and the NDJSON line.
pub type Relay = Box<dyn Fn(&str, &Arc<str>) + Send + Sync>;

/// How long another node's list of open streams counts after it was
/// received: three of its announcements (`cluster`'s presence period is 5
/// s), so a node that stopped announcing (dead, cut off) drops out.
pub const ELSEWHERE_TTL: Duration = Duration::from_secs(15);

/// Another node's open streams, as it last announced them, and the parts
/// of an announcement still arriving.
struct Elsewhere {
    at: Instant,
    players: HashSet<String>,
    /// `(round, parts still missing, players so far)`.
    building: Option<(u64, u32, HashSet<String>)>,
}

#[derive(Clone, Default)]
pub struct Events {
    players: Arc<Mutex<HashMap<String, broadcast::Sender<Arc<str>>>>>,
    /// The other nodes' open streams, by node (issue 42: who is online is
    /// the cluster's, not one node's).
    elsewhere: Arc<Mutex<HashMap<String, Elsewhere>>>,
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

    fn elsewhere(&self) -> std::sync::MutexGuard<'_, HashMap<String, Elsewhere>> {
        // As `players`: every operation leaves a valid map.
        self.elsewhere
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the player has an event stream open on any node (lichess's
    /// `online`).
    pub fn is_online(&self, player_id: &str) -> bool {
        let here = self
            .players()
            .get(player_id)
            .is_some_and(|sender| sender.receiver_count() > 0);
        here || self
            .elsewhere()
            .values()
            .any(|node| node.at.elapsed() < ELSEWHERE_TTL && node.players.contains(player_id))
    }

    /// The players with an event stream open on this node (the web client
    /// keeps one open on every page of a logged-in person).
    pub fn online_here(&self) -> Vec<String> {
        self.players()
            .iter()
            .filter(|(_, sender)| sender.receiver_count() > 0)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The players with an event stream open on any node, each once.
    pub fn online_players(&self) -> Vec<String> {
        let mut all: HashSet<String> = self.online_here().into_iter().collect();
        for node in self.elsewhere().values() {
            if node.at.elapsed() < ELSEWHERE_TTL {
                all.extend(node.players.iter().cloned());
            }
        }
        all.into_iter().collect()
    }

    /// Takes part `part` (0-based) of `parts` of node `node`'s announcement
    /// number `round` of its open streams; the last part replaces what the
    /// node announced before. A part of another round than the one being
    /// put together starts that round afresh (parts of one round arrive in
    /// order, from one publisher).
    pub fn online_elsewhere(
        &self,
        node: &str,
        round: u64,
        part: u32,
        parts: u32,
        players: Vec<String>,
    ) {
        if part >= parts {
            return;
        }
        let mut elsewhere = self.elsewhere();
        let entry = elsewhere
            .entry(node.to_string())
            .or_insert_with(|| Elsewhere {
                at: Instant::now(),
                players: HashSet::new(),
                building: None,
            });
        let building = match entry.building.take() {
            Some((r, missing, so_far)) if r == round && missing == parts - part => {
                Some((r, missing, so_far))
            }
            _ if part == 0 => Some((round, parts, HashSet::new())),
            // A part whose round began before we listened: wait for the next.
            _ => None,
        };
        let Some((round, missing, mut so_far)) = building else {
            return;
        };
        so_far.extend(players);
        if missing <= 1 {
            entry.players = so_far;
            entry.at = Instant::now();
        } else {
            entry.building = Some((round, missing - 1, so_far));
        }
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

#[cfg(test)]
mod tests {
    use super::Events;

    fn ids(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn online(events: &Events) -> Vec<String> {
        let mut all = events.online_players();
        all.sort();
        all
    }

    #[test]
    fn another_nodes_announcement_counts_once_all_its_parts_arrived() {
        let events = Events::default();
        events.online_elsewhere("b", 7, 0, 2, ids(&["ann"]));
        assert!(online(&events).is_empty(), "half an announcement counts");
        events.online_elsewhere("b", 7, 1, 2, ids(&["bob"]));
        assert_eq!(online(&events), ids(&["ann", "bob"]));
        assert!(events.is_online("bob") && !events.is_online("cid"));
        // The next announcement replaces it whole.
        events.online_elsewhere("b", 8, 0, 1, ids(&["cid"]));
        assert_eq!(online(&events), ids(&["cid"]));
        // A part of a round heard from its middle is ignored; a round cut
        // short by the next one is dropped.
        events.online_elsewhere("b", 9, 1, 2, ids(&["dee"]));
        events.online_elsewhere("b", 10, 0, 2, ids(&["eve"]));
        events.online_elsewhere("b", 11, 0, 1, ids(&[]));
        assert!(online(&events).is_empty());
        // Nonsense part numbers change nothing.
        events.online_elsewhere("c", 1, 3, 2, ids(&["fay"]));
        events.online_elsewhere("c", 1, 0, 0, ids(&["fay"]));
        assert!(online(&events).is_empty());
        // Each node's list is its own; a player on two nodes counts once.
        events.online_elsewhere("c", 2, 0, 1, ids(&["gus", "hal"]));
        events.online_elsewhere("d", 1, 0, 1, ids(&["hal"]));
        assert_eq!(online(&events), ids(&["gus", "hal"]));
    }
}
