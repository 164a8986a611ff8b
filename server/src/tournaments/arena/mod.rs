//! Arena tournaments as lichess runs them (issue 38): for a set time,
//! players who are free are paired again and again, in waves; each game
//! scores by lichess's rules (`scoring.rs`: the fire, early draws,
//! berserk), and the standings (`standings.rs`) rank by score then
//! performance rating.
//!
//! **The director** is one task per node ([`Arenas::start`]). Each wave
//! (every `--arena-wave-ms`, and at once when a game ends or someone
//! joins) it goes through the arenas that are not over, and for each one
//! whose lease it holds or can take (two columns of the arena's row,
//! `store/arena.rs`): moves its status on with the time (created → started
//! → finished), settles the games that ended (copies each result into its
//! pairing, pausing a player who let a game be aborted), and pairs the
//! players who are free (`pairing.rs`): new ordinary games, stored with
//! their pairings in one transaction under the lease, then put live.
//!
//! The director keeps nothing in memory that matters: a wave reads the
//! arena from the database, so a restarted node, or another node taking
//! the lease after this one died, goes on where it stopped. Every write is
//! fenced by the lease (a node that lost it writes nothing).
//!
//! **Incremental waves.** Only the director writes an arena's pairings
//! (its new games, their results), under its lease. So while a node holds
//! the lease without a break, the pairings it wrote are all the pairings
//! there are: it keeps them in memory ([`Known`]) and a wave reads only
//! the arena's row, its players (who join and pause at any node) and its
//! unsettled games, not the whole history again. The lease is renewed
//! only if it still names this node ([`ArenaWrite::Renew`]): any other
//! node taking it writes its own name first, so a renewal that succeeds
//! proves nobody else held it since. A lease taken afresh, a failed or
//! refused write, or an arena this node stopped directing drops what it
//! knew, and the next wave reads every pairing from the database.

pub mod pairing;
pub mod scoring;
pub mod standings;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{broadcast, watch, Notify};
use uuid::Uuid;

use self::pairing::Free;
use self::standings::{Pairing, Player, Standing};
use crate::domain::{ClockSettings, PlayerRef, SeatRating, Side};
use crate::live::error::LiveError;
use crate::live::Registry;
use crate::pools::game::paired_game;
use crate::pools::pairing::ColourHistory;
use crate::store::arena::{
    ArenaPlayerRow, ArenaRow, ArenaWrite, DirectorFence, NewPairing, PairingRow, Settlement,
};
use crate::store::{now_ms, StoredGame};

/// The director's settings (from the flags).
#[derive(Debug, Clone, Copy)]
pub struct ArenaOptions {
    /// Time between waves when nothing wakes the director.
    pub wave: Duration,
    /// How long a director's lease runs without renewal.
    pub lease: Duration,
}

/// A pairing told to the arena's sockets: `player` plays `game` as
/// `colour`.
#[derive(Debug, Clone)]
pub struct PairedIn {
    pub arena: String,
    pub player: String,
    pub game: Uuid,
    pub colour: Side,
}

/// This node's arenas: the director and what the edge asks of it.
#[derive(Clone)]
pub struct Arenas {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry,
    options: ArenaOptions,
    /// This node's name in the directors' leases.
    node: String,
    /// Something happened (a join, a game's end): a wave now.
    wake: Notify,
    /// Each arena's change counter, for its sockets.
    versions: Mutex<HashMap<String, watch::Sender<u64>>>,
    paired: broadcast::Sender<PairedIn>,
    /// Each arena's pairings as this node wrote them while holding its
    /// lease without a break (see the module's header).
    known: Mutex<HashMap<String, Known>>,
}

/// An arena's pairings in the order they were made, as this director
/// wrote them, with each game's place.
struct Known {
    pairings: Vec<PairingRow>,
    by_game: HashMap<String, usize>,
}

impl Known {
    fn new(pairings: Vec<PairingRow>) -> Known {
        let by_game = pairings
            .iter()
            .enumerate()
            .map(|(at, pairing)| (pairing.game_id.clone(), at))
            .collect();
        Known { pairings, by_game }
    }

    /// Results this director has written.
    fn settle(&mut self, settled: &[Settlement]) {
        for result in settled {
            if let Some(pairing) = self
                .by_game
                .get(&result.game_id)
                .and_then(|&at| self.pairings.get_mut(at))
            {
                pairing.settled = true;
                pairing.winner = result.winner.map(str::to_string);
                pairing.aborted = result.aborted;
                pairing.plies = result.plies;
                pairing.berserk = result.berserk;
            }
        }
    }

    /// A wave's new games this director has written.
    fn pair(&mut self, games: &[(StoredGame, NewPairing)]) {
        for (game, pairing) in games {
            self.by_game.insert(game.id.clone(), self.pairings.len());
            self.pairings.push(PairingRow {
                game_id: game.id.clone(),
                white_id: pairing.white_id.clone(),
                black_id: pairing.black_id.clone(),
                white_rating: pairing.white_rating,
                black_rating: pairing.black_rating,
                created_at: pairing.created_at,
                settled: false,
                winner: None,
                aborted: false,
                plies: 0,
                berserk: 0,
            });
        }
    }
}

impl Arenas {
    pub fn new(registry: Registry, options: ArenaOptions) -> Arenas {
        let node = registry
            .cluster_node()
            .map_or_else(|| "local".to_string(), |node| node.to_string());
        Arenas {
            inner: Arc::new(Inner {
                registry,
                options,
                node,
                wake: Notify::new(),
                versions: Mutex::default(),
                paired: broadcast::channel(1024).0,
                known: Mutex::default(),
            }),
        }
    }

    fn versions(&self) -> MutexGuard<'_, HashMap<String, watch::Sender<u64>>> {
        // One map operation per lock: a poisoned lock holds a valid map.
        self.inner
            .versions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn known(&self) -> MutexGuard<'_, HashMap<String, Known>> {
        // One map operation per lock, never held across an await.
        self.inner
            .known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A watch of arena `id`'s changes (a counter).
    pub fn watch(&self, id: &str) -> watch::Receiver<u64> {
        let mut versions = self.versions();
        versions.retain(|_, sender| sender.receiver_count() > 0);
        versions
            .entry(id.to_string())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }

    /// Pairings as they are made, for the arenas' sockets.
    pub fn pairings(&self) -> broadcast::Receiver<PairedIn> {
        self.inner.paired.subscribe()
    }

    /// Arena `id` changed (someone joined or left): its sockets read it
    /// again, and the director runs a wave.
    pub fn changed(&self, id: &str) {
        if let Some(sender) = self.versions().get(id) {
            sender.send_modify(|version| *version += 1);
        }
        self.inner.wake.notify_one();
    }

    /// The director: a wave every `--arena-wave-ms`, or when woken, until
    /// shutdown; then it gives its leases back.
    pub fn start(&self) {
        let arenas = self.clone();
        let mut shutdown = self.inner.registry.shutdown_signal();
        let finishes = self.inner.registry.events().finish_signal();
        tokio::spawn(async move {
            let mut directed: HashSet<String> = HashSet::new();
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(arenas.inner.options.wave) => {}
                    _ = arenas.inner.wake.notified() => {}
                    _ = finishes.notified() => {}
                    _ = shutdown.changed() => {}
                }
                if *shutdown.borrow() {
                    break;
                }
                match arenas.wave().await {
                    Ok(held) => directed = held,
                    Err(err) => tracing::warn!(%err, "arena wave failed: the next one retries"),
                }
            }
            for arena_id in directed {
                let release = ArenaWrite::Release {
                    arena_id,
                    node: arenas.inner.node.clone(),
                };
                // Stopping: a release that fails leaves a lease that
                // expires by itself.
                drop(arenas.inner.registry.store().write_arena(release).await);
            }
        });
    }

    /// One wave over every arena not over; returns those this node directs.
    pub async fn wave(&self) -> Result<HashSet<String>, LiveError> {
        let store = self.inner.registry.store();
        let mut held = HashSet::new();
        for id in store.arenas_to_direct().await? {
            match self.direct(&id).await {
                Ok(true) => {
                    held.insert(id);
                }
                Ok(false) => {}
                Err(err) => tracing::warn!(%err, arena = %id, "arena not directed this wave"),
            }
        }
        self.known().retain(|id, _| held.contains(id));
        Ok(held)
    }

    /// Directs arena `id` for one wave, if its lease is (or becomes) this
    /// node's. What this node knew of its pairings is taken out for the
    /// wave and put back only when every step of it went through (a lease
    /// renewed, every write done): anything else drops it.
    async fn direct(&self, id: &str) -> Result<bool, LiveError> {
        let known = self.known().remove(id);
        let renewed = self.renew(id).await?;
        if !renewed && !self.take(id).await? {
            return Ok(false);
        }
        let mut known = if renewed { known } else { None };
        let directed = self.direct_held(id, &mut known).await;
        if let (Ok(true), Some(known)) = (&directed, known) {
            self.known().insert(id.to_string(), known);
        }
        directed
    }

    fn lease_ms(&self) -> i64 {
        i64::try_from(self.inner.options.lease.as_millis()).unwrap_or(i64::MAX)
    }

    /// Renews the lease of arena `id` if it still names this node.
    async fn renew(&self, id: &str) -> Result<bool, LiveError> {
        let until = now_ms().saturating_add(self.lease_ms());
        Ok(self
            .inner
            .registry
            .store()
            .write_arena(ArenaWrite::Renew {
                arena_id: id.to_string(),
                node: self.inner.node.clone(),
                until,
            })
            .await?)
    }

    /// Takes the lease of arena `id` if it is free or has expired.
    async fn take(&self, id: &str) -> Result<bool, LiveError> {
        let now = now_ms();
        Ok(self
            .inner
            .registry
            .store()
            .write_arena(ArenaWrite::Lease {
                arena_id: id.to_string(),
                node: self.inner.node.clone(),
                now,
                until: now.saturating_add(self.lease_ms()),
            })
            .await?)
    }

    /// One wave of arena `id`, whose lease this node holds.
    async fn direct_held(&self, id: &str, known: &mut Option<Known>) -> Result<bool, LiveError> {
        let store = self.inner.registry.store();
        let now = now_ms();
        let fence = DirectorFence {
            arena_id: id.to_string(),
            node: self.inner.node.clone(),
            now,
        };
        let Some(arena) = store.arena(id).await? else {
            return Ok(false);
        };
        let mut changed = self.settle(&fence, known).await?;
        let status = match arena.status.as_str() {
            "created" if now >= arena.finishes_at => Some("finished"),
            "created" if now >= arena.starts_at => Some("started"),
            "started" if now >= arena.finishes_at => Some("finished"),
            _ => None,
        };
        let status = match status {
            Some(status) => {
                store
                    .write_arena(ArenaWrite::Status {
                        fence: fence.clone(),
                        status,
                    })
                    .await?;
                tracing::info!(arena = %id, status, "arena");
                changed = true;
                status
            }
            None => arena.status.as_str(),
        };
        if status == "started" {
            changed |= self.pair(&arena, &fence, known).await?;
        }
        if changed {
            self.changed_quietly(id);
        }
        Ok(true)
    }

    fn changed_quietly(&self, id: &str) {
        if let Some(sender) = self.versions().get(id) {
            sender.send_modify(|version| *version += 1);
        }
    }

    /// Copies the results of the arena's games that ended into their
    /// pairings. A game aborted because a side never moved pauses that
    /// player (lichess's rule for absent players).
    async fn settle(
        &self,
        fence: &DirectorFence,
        known: &mut Option<Known>,
    ) -> Result<bool, LiveError> {
        let store = self.inner.registry.store();
        let mut settled = Vec::new();
        let mut pause = Vec::new();
        for game in store.arena_unsettled(&fence.arena_id).await? {
            let over = game
                .status
                .as_deref()
                .is_none_or(|status| status == "finished");
            if !over {
                continue;
            }
            let aborted = game.status.is_none()
                || game.termination.as_deref() == Some("aborted")
                || game.result.is_none();
            if aborted {
                // The side to move never moved: white with no move, black
                // after white's first.
                let absent = if game.plies == 0 {
                    &game.white_id
                } else {
                    &game.black_id
                };
                if game.plies < 2 {
                    pause.push(absent.clone());
                }
            }
            let winner = match game.result.as_deref() {
                Some("1-0") => Some("white"),
                Some("0-1") => Some("black"),
                _ => None,
            };
            settled.push(Settlement {
                game_id: game.game_id,
                winner,
                aborted,
                plies: game.plies,
                berserk: game.berserk.unwrap_or(0),
            });
        }
        if settled.is_empty() {
            return Ok(false);
        }
        let written = store
            .write_arena(ArenaWrite::Settle {
                fence: fence.clone(),
                settled: settled.clone(),
                pause,
            })
            .await?;
        match known {
            Some(known) if written => known.settle(&settled),
            _ => *known = None,
        }
        Ok(written)
    }

    /// Pairs the arena's free players; returns whether any game started.
    async fn pair(
        &self,
        arena: &ArenaRow,
        fence: &DirectorFence,
        known: &mut Option<Known>,
    ) -> Result<bool, LiveError> {
        let store = self.inner.registry.store();
        let players = store.arena_players(&arena.id).await?;
        if known.is_none() {
            *known = Some(Known::new(store.arena_pairings(&arena.id).await?));
        }
        let Some(cached) = known.as_ref() else {
            return Ok(false);
        };
        let pairings = &cached.pairings;
        let active: Vec<&ArenaPlayerRow> = players.iter().filter(|p| p.active).collect();
        let lines = standings_of(&players, pairings, arena.streakable);
        let rank: HashMap<&str, usize> = lines
            .iter()
            .map(|line| (line.player.id.as_str(), line.rank))
            .collect();
        let mut last_opponent: HashMap<&str, &str> = HashMap::new();
        let mut colours: HashMap<&str, ColourHistory> = HashMap::new();
        let mut busy: HashSet<&str> = HashSet::new();
        for pairing in pairings {
            if !pairing.settled {
                busy.insert(&pairing.white_id);
                busy.insert(&pairing.black_id);
            }
            if pairing.aborted {
                continue;
            }
            last_opponent.insert(&pairing.white_id, &pairing.black_id);
            last_opponent.insert(&pairing.black_id, &pairing.white_id);
            let white = colours.entry(&pairing.white_id).or_default();
            *white = white.then(Side::White);
            let black = colours.entry(&pairing.black_id).or_default();
            *black = black.then(Side::Black);
        }
        let free_rows: Vec<&ArenaPlayerRow> = active
            .iter()
            .copied()
            .filter(|p| !busy.contains(p.player_id.as_str()))
            .collect();
        if free_rows.len() < 2 {
            return Ok(false);
        }
        let free: Vec<Free> = free_rows
            .iter()
            .map(|p| Free {
                id: p.player_id.clone(),
                rank: rank
                    .get(p.player_id.as_str())
                    .copied()
                    .unwrap_or(usize::MAX),
                last_opponent: last_opponent
                    .get(p.player_id.as_str())
                    .map(|o| o.to_string()),
                colours: colours
                    .get(p.player_id.as_str())
                    .copied()
                    .unwrap_or_default(),
            })
            .collect();
        let allow_rematch = active.len() <= 2;
        let pairs = pairing::pair_wave(&free, allow_rematch, &mut coin);
        if pairs.is_empty() {
            return Ok(false);
        }
        let clock = ClockSettings {
            initial_ms: u64::try_from(arena.clock_initial_ms)
                .unwrap_or(60_000)
                .max(1),
            increment_ms: u64::try_from(arena.clock_increment_ms).unwrap_or(0),
        };
        let instant = tokio::time::Instant::now();
        let mut games = Vec::new();
        let mut lives = Vec::new();
        for (w, b) in pairs {
            let (white, black) = (free_rows[w], free_rows[b]);
            let paired = paired_game(
                Some(player_ref(white)),
                Some(player_ref(black)),
                clock,
                arena.rated,
            )?;
            let live = paired.live;
            games.push((
                StoredGame::of(&live.record(), instant, now_ms()),
                NewPairing {
                    arena_id: arena.id.clone(),
                    white_id: white.player_id.clone(),
                    black_id: black.player_id.clone(),
                    white_rating: white.rating.round() as i64,
                    black_rating: black.rating.round() as i64,
                    created_at: now_ms(),
                },
            ));
            lives.push((live, white.player_id.clone(), black.player_id.clone()));
        }
        let written = store
            .write_arena(ArenaWrite::Pair {
                fence: fence.clone(),
                games: games.clone(),
            })
            .await?;
        if !written {
            *known = None;
            return Ok(false);
        }
        if let Some(known) = known.as_mut() {
            known.pair(&games);
        }
        for (live, white, black) in lives {
            let id = live.id;
            let mut events = live.event_games("arena");
            // lichess names the arena in its games' events: a client that
            // plays its pairings (the terminal's `arena join`) knows its own.
            for (_, game) in &mut events {
                game["tournamentId"] = serde_json::Value::String(arena.id.clone());
            }
            // Stored already: if it cannot go live here, the registry loads
            // it on its first request (the players are told anyway).
            if let Err(err) = self.inner.registry.insert(live).await {
                tracing::warn!(%err, game = %id, "arena game stored but not put live");
            }
            self.inner.registry.events().game_started(&events);
            for (player, colour) in [(white, Side::White), (black, Side::Black)] {
                // Nobody listening (no arena page open): the event stream
                // and the person's games list still have it.
                drop(self.inner.paired.send(PairedIn {
                    arena: arena.id.clone(),
                    player,
                    game: id,
                    colour,
                }));
            }
        }
        Ok(true)
    }
}

fn player_ref(row: &ArenaPlayerRow) -> PlayerRef {
    PlayerRef {
        id: row.player_id.clone(),
        name: row.name.clone(),
        rating: SeatRating::of(row.rating, row.rating_deviation),
    }
}

/// The standings of an arena's rows.
pub fn standings_of(
    players: &[ArenaPlayerRow],
    pairings: &[PairingRow],
    streakable: bool,
) -> Vec<Standing> {
    let players: Vec<Player> = players
        .iter()
        .map(|p| Player {
            id: p.player_id.clone(),
            name: p.name.clone(),
            rating: p.rating.round() as i64,
            active: p.active,
        })
        .collect();
    let pairings: Vec<Pairing> = pairings
        .iter()
        .map(|p| Pairing {
            white: p.white_id.clone(),
            black: p.black_id.clone(),
            white_rating: p.white_rating,
            black_rating: p.black_rating,
            settled: p.settled,
            winner: p.winner.as_deref().and_then(Side::parse),
            aborted: p.aborted,
            plies: u32::try_from(p.plies).unwrap_or(0),
            berserk: [p.berserk & 1 != 0, p.berserk & 2 != 0],
        })
        .collect();
    standings::standings(&players, &pairings, streakable)
}

fn coin() -> bool {
    let mut byte = [0u8; 1];
    // The OS's random source never fails in practice; white for the
    // better-ranked player is a fine fallback.
    getrandom::fill(&mut byte).is_ok() && byte[0] & 1 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_game(white: &str, black: &str) -> (StoredGame, NewPairing) {
        let clock = ClockSettings {
            initial_ms: 60_000,
            increment_ms: 0,
        };
        let live = paired_game(None, None, clock, false)
            .expect("a paired game")
            .live;
        let stored = StoredGame::of(&live.record(), tokio::time::Instant::now(), 1);
        let pairing = NewPairing {
            arena_id: "a".into(),
            white_id: white.into(),
            black_id: black.into(),
            white_rating: 1500,
            black_rating: 1600,
            created_at: 1,
        };
        (stored, pairing)
    }

    #[tokio::test]
    async fn what_a_director_knows_follows_its_own_writes_in_order() {
        let first = vec![new_game("ann", "bob")];
        let mut known = Known::new(Vec::new());
        known.pair(&first);
        let second = vec![new_game("bob", "ann"), new_game("cat", "dan")];
        known.pair(&second);
        let order: Vec<(&str, &str)> = known
            .pairings
            .iter()
            .map(|p| (p.white_id.as_str(), p.black_id.as_str()))
            .collect();
        assert_eq!(order, [("ann", "bob"), ("bob", "ann"), ("cat", "dan")]);
        assert!(known.pairings.iter().all(|p| !p.settled));
        let settled = [Settlement {
            game_id: second[1].0.id.clone(),
            winner: Some("black"),
            aborted: false,
            plies: 31,
            berserk: 2,
        }];
        known.settle(&settled);
        let done = &known.pairings[2];
        assert!(done.settled);
        assert_eq!(done.winner.as_deref(), Some("black"));
        assert_eq!((done.plies, done.berserk), (31, 2));
        assert!(!known.pairings[0].settled && !known.pairings[1].settled);
        // A game it never wrote changes nothing.
        known.settle(&[Settlement {
            game_id: "elsewhere".into(),
            winner: None,
            aborted: true,
            plies: 0,
            berserk: 0,
        }]);
        assert_eq!(known.pairings.iter().filter(|p| p.settled).count(), 1);
    }
}
