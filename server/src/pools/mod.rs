//! Quick pairing by time control (lichess's pools, issue 38): people who
//! want "a 5+3 game with anyone" wait in that clock's pool, and a pairing
//! wave (one task per node, every `--pool-wave-ms`) pairs them, nearest
//! ratings first within a rating window that widens with the wait
//! (`pairing.rs`, a pure function). Each pair gets an ordinary game with
//! both seats taken (`game.rs`), stored, put live through the registry,
//! and told to both waiting people.
//!
//! Who waits where lives in this node's memory only: a waiting person is
//! an open connection (the lobby's WebSocket, or a held `POST
//! /api/board/seek`), so there is nothing to keep across a restart. A
//! connection that closes leaves its place: at once when it says so, or
//! `--pool-grace-ms` after it dropped (a reload reconnects within it and
//! resumes its ticket). In a cluster each node pairs the people connected
//! to it.
//!
//! Rated or casual: accounts wait for rated games, anonymous people for
//! casual ones, and only people who want the same are paired (a board
//! seek says which it wants).

pub mod game;
pub mod pairing;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use uuid::Uuid;

use self::pairing::{ColourHistory, Waiting};
use crate::domain::{ClockSettings, PlayerRef, Side};
use crate::live::error::LiveError;
use crate::live::Registry;

/// The lobby's one-click pools: (minutes, increment seconds).
pub const TIME_CONTROLS: [(u32, u32); 11] = [
    (1, 0),
    (2, 1),
    (3, 0),
    (3, 2),
    (5, 0),
    (5, 3),
    (10, 0),
    (10, 5),
    (15, 10),
    (30, 0),
    (30, 20),
];

/// How many recent games' colours balance the next one.
const RECENT_GAMES: i64 = 6;
/// How often the "playing" counts are read from the database.
const COUNT_EVERY: Duration = Duration::from_secs(2);

/// A pool: a clock, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PoolKey {
    pub initial_s: u32,
    pub increment_s: u32,
}

impl PoolKey {
    /// A lobby pool by its name, `5+3` (minutes + seconds).
    pub fn parse(name: &str) -> Option<PoolKey> {
        let (minutes, increment) = name.split_once('+')?;
        let key = (minutes.parse().ok()?, increment.parse().ok()?);
        TIME_CONTROLS.contains(&key).then_some(PoolKey {
            initial_s: key.0 * 60,
            increment_s: key.1,
        })
    }

    pub fn name(&self) -> String {
        if self.initial_s % 60 == 0 {
            format!("{}+{}", self.initial_s / 60, self.increment_s)
        } else {
            format!("{}s+{}", self.initial_s, self.increment_s)
        }
    }

    pub fn clock(&self) -> ClockSettings {
        ClockSettings {
            initial_ms: u64::from(self.initial_s).max(1) * 1000,
            increment_ms: u64::from(self.increment_s) * 1000,
        }
    }
}

/// The pools' settings (from the flags).
#[derive(Debug, Clone, Copy)]
pub struct PoolOptions {
    /// Time between pairing waves.
    pub wave: Duration,
    /// How long a dropped connection keeps its place.
    pub grace: Duration,
}

/// Who waits: an account, or an anonymous person.
#[derive(Debug, Clone)]
pub struct Entrant {
    pub player: Option<PlayerRef>,
    /// Wants a rated game (accounts from the lobby; a seek's `rated`).
    pub rated: bool,
    /// The colour asked for (a seek's `color`), if any.
    pub colour: Option<Side>,
    /// Acceptable opponent ratings (a seek's `ratingRange`), if limited.
    pub range: Option<(f64, f64)>,
}

/// What a waiting person is told when paired.
#[derive(Debug, Clone)]
pub struct Paired {
    pub game_id: Uuid,
    pub colour: Side,
    /// The seat's token (an anonymous player's only way to play it).
    pub token: String,
}

/// A place in a pool: its ticket (a secret: it resumes the place after a
/// reload) and where the pairing will be told.
pub struct Ticket {
    pub id: String,
    pub pool: PoolKey,
    pub paired: mpsc::Receiver<Paired>,
}

struct Entry {
    ticket: String,
    entrant: Entrant,
    rating: f64,
    since: Instant,
    colours: ColourHistory,
    /// The connection dropped at this instant (resumable until the grace
    /// has passed); never paired meanwhile.
    gone_since: Option<Instant>,
    tell: mpsc::Sender<Paired>,
}

#[derive(Default)]
struct State {
    pools: HashMap<PoolKey, Vec<Entry>>,
    /// People playing, by clock: games × 2, read every [`COUNT_EVERY`].
    playing: HashMap<PoolKey, i64>,
}

/// The pools of this node.
#[derive(Clone)]
pub struct Pools {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry,
    options: PoolOptions,
    state: Mutex<State>,
    /// The lobby's counts, as the JSON message its sockets send.
    counts: watch::Sender<Arc<str>>,
}

impl Pools {
    pub fn new(registry: Registry, options: PoolOptions) -> Pools {
        let pools = Pools {
            inner: Arc::new(Inner {
                registry,
                options,
                state: Mutex::default(),
                counts: watch::channel(Arc::from("")).0,
            }),
        };
        pools.publish_counts();
        pools
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Every critical section is a few map and vector operations: a
        // poisoned lock still holds consistent data.
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The lobby's counts: a watch of `{"type": "pools", "pools": [...]}`.
    pub fn counts(&self) -> watch::Receiver<Arc<str>> {
        self.inner.counts.subscribe()
    }

    /// Enters `pool`. An account waits in one pool at a time: entering
    /// another leaves the first (its connection hears nothing more).
    pub async fn enter(&self, pool: PoolKey, entrant: Entrant) -> Result<Ticket, LiveError> {
        let store = self.inner.registry.store();
        let (rating, colours) = match &entrant.player {
            Some(player) => (
                player.rating.rating as f64,
                ColourHistory::of(&store.recent_colours(&player.id, RECENT_GAMES).await?),
            ),
            None => (1500.0, ColourHistory::default()),
        };
        let ticket = crate::token::mint().map_err(LiveError::internal)?.secret;
        let (tell, paired) = mpsc::channel(1);
        {
            let mut state = self.state();
            if let Some(player) = &entrant.player {
                for entries in state.pools.values_mut() {
                    entries.retain(|entry| {
                        entry.entrant.player.as_ref().map(|p| &p.id) != Some(&player.id)
                    });
                }
            }
            state.pools.entry(pool).or_default().push(Entry {
                ticket: ticket.clone(),
                entrant,
                rating,
                since: Instant::now(),
                colours,
                gone_since: None,
                tell,
            });
        }
        self.publish_counts();
        Ok(Ticket {
            id: ticket,
            pool,
            paired,
        })
    }

    /// Leaves the pool now (the person said so, or a seek's request closed).
    pub fn leave(&self, ticket: &str) {
        self.state().pools.values_mut().for_each(|entries| {
            entries.retain(|entry| entry.ticket != ticket);
        });
        self.publish_counts();
    }

    /// The connection holding `ticket` dropped: the place is kept for the
    /// grace, unpaired, then dropped by a wave.
    pub fn dropped(&self, ticket: &str) {
        let now = Instant::now();
        for entries in self.state().pools.values_mut() {
            for entry in entries.iter_mut().filter(|e| e.ticket == ticket) {
                entry.gone_since = Some(now);
            }
        }
    }

    /// A new connection resumes `ticket`'s place (within the grace), to be
    /// told of its pairing instead of the old one.
    pub fn resume(&self, ticket: &str) -> Option<Ticket> {
        let (tell, paired) = mpsc::channel(1);
        let mut state = self.state();
        for (pool, entries) in state.pools.iter_mut() {
            if let Some(entry) = entries.iter_mut().find(|e| e.ticket == ticket) {
                entry.gone_since = None;
                entry.tell = tell;
                return Some(Ticket {
                    id: ticket.to_string(),
                    pool: *pool,
                    paired,
                });
            }
        }
        None
    }

    /// The pairing task: a wave every `--pool-wave-ms` until shutdown.
    pub fn start(&self) {
        let pools = self.clone();
        let mut shutdown = self.inner.registry.shutdown_signal();
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(pools.inner.options.wave);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut counted = Instant::now();
            loop {
                tokio::select! {
                    _ = ticker.tick() => {}
                    _ = shutdown.changed() => return,
                }
                if *shutdown.borrow() {
                    return;
                }
                pools.wave().await;
                if counted.elapsed() >= COUNT_EVERY {
                    counted = Instant::now();
                    pools.count_playing().await;
                }
            }
        });
    }

    /// One wave: every pool's pairs, then their games.
    pub async fn wave(&self) {
        let now = Instant::now();
        let grace = self.inner.options.grace;
        let mut matches = Vec::new();
        {
            let mut state = self.state();
            for (pool, entries) in state.pools.iter_mut() {
                entries.retain(|e| e.gone_since.is_none_or(|gone| now - gone < grace));
                let present: Vec<usize> = (0..entries.len())
                    .filter(|&i| entries[i].gone_since.is_none() && !entries[i].tell.is_closed())
                    .collect();
                if present.len() < 2 {
                    continue;
                }
                let waiting: Vec<Waiting> = present
                    .iter()
                    .map(|&i| {
                        let entry = &entries[i];
                        Waiting {
                            rating: entry.rating,
                            waited_ms: u64::try_from((now - entry.since).as_millis())
                                .unwrap_or(u64::MAX),
                            colours: entry.colours,
                            rated: entry.entrant.rated,
                            colour: entry.entrant.colour,
                            range: entry.entrant.range,
                        }
                    })
                    .collect();
                let pairs = pairing::pair_wave(&waiting, &mut coin);
                let mut chosen: Vec<(usize, usize)> = pairs
                    .into_iter()
                    .map(|(w, b)| (present[w], present[b]))
                    .collect();
                // Take the paired entries out, highest index first.
                let mut taken: Vec<usize> = chosen.iter().flat_map(|&(w, b)| [w, b]).collect();
                taken.sort_unstable_by(|a, b| b.cmp(a));
                let mut out: HashMap<usize, Entry> = HashMap::new();
                for index in taken {
                    out.insert(index, entries.swap_remove(index));
                }
                for (w, b) in chosen.drain(..) {
                    if let (Some(white), Some(black)) = (out.remove(&w), out.remove(&b)) {
                        matches.push((*pool, white, black));
                    }
                }
            }
            state.pools.retain(|_, entries| !entries.is_empty());
        }
        if matches.is_empty() {
            self.publish_counts();
            return;
        }
        for (pool, white, black) in matches {
            if let Err(err) = self.start_game(pool, &white, &black).await {
                tracing::warn!(%err, pool = %pool.name(), "a pool's game could not start: both wait again");
                let mut state = self.state();
                let entries = state.pools.entry(pool).or_default();
                entries.push(white);
                entries.push(black);
            }
        }
        self.publish_counts();
    }

    async fn start_game(
        &self,
        pool: PoolKey,
        white: &Entry,
        black: &Entry,
    ) -> Result<(), LiveError> {
        let rated = white.entrant.rated && black.entrant.rated;
        let paired = game::paired_game(
            white.entrant.player.clone(),
            black.entrant.player.clone(),
            pool.clock(),
            rated,
        )?;
        let live = paired.live;
        let registry = &self.inner.registry;
        registry
            .store()
            .insert_game(&live.record(), &live.history())
            .await?;
        registry.insert(live.clone()).await?;
        registry.events().game_started(&live.event_games("pool"));
        tracing::info!(game = %live.id, pool = %pool.name(), rated, "pool pairing");
        for (entry, side) in [(white, Side::White), (black, Side::Black)] {
            let message = Paired {
                game_id: live.id,
                colour: side,
                token: paired.tokens[side.index()].clone(),
            };
            // A connection that closed just now misses it: the game is
            // listed among its person's games, and the first-move rule
            // aborts it if nobody comes.
            drop(entry.tell.try_send(message));
        }
        Ok(())
    }

    async fn count_playing(&self) {
        let Ok(rows) = self.inner.registry.store().active_games_by_clock().await else {
            return;
        };
        let mut playing = HashMap::new();
        for (initial_ms, increment_ms, games) in rows {
            let key = PoolKey {
                initial_s: u32::try_from(initial_ms / 1000).unwrap_or(0),
                increment_s: u32::try_from(increment_ms / 1000).unwrap_or(0),
            };
            if initial_ms % 1000 == 0 && increment_ms % 1000 == 0 {
                *playing.entry(key).or_insert(0) += games * 2;
            }
        }
        self.state().playing = playing;
        self.publish_counts();
    }

    /// Sends the lobby's counts to its sockets, if they changed.
    fn publish_counts(&self) {
        let message = {
            let state = self.state();
            let pools: Vec<serde_json::Value> = TIME_CONTROLS
                .iter()
                .map(|&(minutes, increment)| {
                    let key = PoolKey {
                        initial_s: minutes * 60,
                        increment_s: increment,
                    };
                    let waiting = state.pools.get(&key).map_or(0, |entries| {
                        entries.iter().filter(|e| e.gone_since.is_none()).count()
                    });
                    serde_json::json!({
                        "id": key.name(),
                        "minutes": minutes,
                        "increment": increment,
                        "waiting": waiting,
                        "playing": state.playing.get(&key).copied().unwrap_or(0),
                    })
                })
                .collect();
            serde_json::json!({"type": "pools", "pools": pools}).to_string()
        };
        self.inner.counts.send_if_modified(|current| {
            if **current == *message {
                false
            } else {
                *current = Arc::from(message);
                true
            }
        });
    }
}

/// A fair coin for colours when nothing else decides.
fn coin() -> bool {
    let mut byte = [0u8; 1];
    // The OS's random source never fails in practice; if it did, white
    // for the first of the two is as good a default as any.
    getrandom::fill(&mut byte).is_ok() && byte[0] & 1 == 0
}
