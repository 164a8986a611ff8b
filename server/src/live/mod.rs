//! Live games: the [`Registry`] that finds a game's actor (this file), asks
//! it (`calls.rs`) and runs the background work (`background.rs`:
//! resuming, taking over, the expiry sweep, shutdown); the actor itself
//! ([`actor`]) and what it can be asked ([`messages`], the same in process
//! and on the cluster's wire); the game's state machine ([`game`]) with its
//! error ([`game::GameError`]); this floor's error ([`error`]) and the
//! clock ([`clock`]). What a game is as data (seats, moves, endings, the
//! record the store writes) is the floor below, `crate::domain`.
//!
//! Games are in memory only while they need to be: at start-up the server
//! listens first and then, in the background, starts the actors of games
//! whose clock runs or whose AI must move; every other game is loaded on
//! its first request. An actor with nothing to wait for (no running clock,
//! no search, no subscriber) leaves memory after a minute idle. A sweep
//! ends games nobody plays any more ([`RegistryOptions`]).
//!
//! The registry is a lookup map only. Its lock is a plain `std` mutex held
//! for a map operation and never across an `.await`; a game that is not in
//! memory is loaded through a per-entry `OnceCell`, so two requests for the
//! same stored game start one actor, and loading one game blocks no other.

pub mod actor;
mod background;
mod calls;
pub mod clock;
pub mod error;
pub mod game;
pub mod messages;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{watch, OnceCell};
use tokio::task::JoinSet;
use tokio::time::Instant;
use uuid::Uuid;

use self::actor::{ActorContext, Command, GameHandle, Ownership};
use self::game::LiveGame;
use crate::ai::AiScheduler;
use crate::cluster::{serve_commands, spawn_proxy, Cluster, ProxyContext};
use crate::live::error::LiveError;
use crate::store::{Store, StoreError};

type Slot = Arc<OnceCell<GameHandle>>;

/// The default of `--ws-max-lag`.
pub const DEFAULT_MAX_LAG: usize = 64;

#[derive(Clone)]
pub struct Registry {
    inner: Arc<RegistryInner>,
}

struct RegistryInner {
    games: Mutex<HashMap<Uuid, Slot>>,
    actors: Mutex<JoinSet<()>>,
    /// The start-up resume and the expiry sweep.
    background: Mutex<JoinSet<()>>,
    store: Store,
    ai: AiScheduler,
    options: RegistryOptions,
    shutdown_tx: watch::Sender<bool>,
    /// Broadcast capacity of each game (see [`Registry::set_max_lag`]).
    max_lag: AtomicUsize,
    /// In a cluster: games are owned through leases, and games owned by
    /// other nodes are reached through proxies ([`crate::cluster`]).
    cluster: Option<Cluster>,
    /// The players' event streams (games started and finished).
    events: crate::events::Events,
}

/// Deadlines and expiry of live games.
#[derive(Debug, Clone, Copy)]
pub struct RegistryOptions {
    /// The longest a request waits for a game's answer (then 503).
    pub deadline: Duration,
    /// A waiting game nobody joined for this long is aborted.
    pub waiting_expiry: Duration,
    /// An untimed active game with no change for this long is adjudicated
    /// ([`game::LiveGame::expire`]).
    pub idle_expiry: Duration,
    /// A game with no subscriber and nothing to wait for (no running clock,
    /// no AI to move) leaves memory after this long idle.
    pub unload_after: Duration,
    /// Aborted games in which at most one move was played are deleted
    /// this long after they ended (`None`: kept).
    pub aborted_retention: Option<Duration>,
    /// Finished games with no registered player are deleted this long
    /// after they ended (`None`: kept).
    pub anonymous_retention: Option<Duration>,
    /// The first-move rule's and open seeks' waits.
    pub timing: game::Timing,
}

impl Default for RegistryOptions {
    fn default() -> RegistryOptions {
        RegistryOptions {
            deadline: Duration::from_secs(10),
            waiting_expiry: Duration::from_secs(24 * 3600),
            idle_expiry: Duration::from_secs(7 * 24 * 3600),
            unload_after: Duration::from_secs(60),
            aborted_retention: Some(Duration::from_secs(24 * 3600)),
            anonymous_retention: None,
            timing: game::Timing::default(),
        }
    }
}

/// Games the expiry sweep ends per round at most (the rest wait a round).
const SWEEP_BATCH: u32 = 100;

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl Registry {
    pub fn new(store: Store, ai: AiScheduler, options: RegistryOptions) -> Registry {
        Registry::with_cluster(store, ai, options, None)
    }

    /// A registry of a cluster member (with `Some(cluster)`): each game it
    /// runs is leased, the others are reached on their owners.
    pub fn with_cluster(
        store: Store,
        ai: AiScheduler,
        options: RegistryOptions,
        cluster: Option<Cluster>,
    ) -> Registry {
        let (shutdown_tx, _) = watch::channel(false);
        Registry {
            inner: Arc::new(RegistryInner {
                games: Mutex::new(HashMap::new()),
                actors: Mutex::new(JoinSet::new()),
                background: Mutex::new(JoinSet::new()),
                store,
                ai,
                options,
                shutdown_tx,
                max_lag: AtomicUsize::new(DEFAULT_MAX_LAG),
                cluster,
                events: crate::events::Events::default(),
            }),
        }
    }

    /// How many messages a game's subscriber may fall behind before it has
    /// lagged (for games started from now on).
    pub fn set_max_lag(&self, messages: usize) {
        self.inner.max_lag.store(messages.max(1), Ordering::Relaxed);
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The players' event streams.
    pub fn events(&self) -> &crate::events::Events {
        &self.inner.events
    }

    /// Why this node cannot serve cluster games now, if it is a cluster
    /// member that lost its NATS connection.
    pub fn cluster_problem(&self) -> Option<String> {
        let cluster = self.inner.cluster.as_ref()?;
        (!cluster.connected()).then(|| "cluster: NATS is not connected".to_string())
    }

    /// Turns `true` when the service starts shutting down (long streams
    /// end then).
    /// This node's name in a cluster's leases (`None` on a single node).
    pub fn cluster_node(&self) -> Option<Arc<str>> {
        self.inner
            .cluster
            .as_ref()
            .map(|cluster| cluster.node().clone())
    }

    pub fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.inner.shutdown_tx.subscribe()
    }

    /// Game `id` as a value: from its actor when it is live, else as
    /// stored (no actor is started).
    pub async fn snapshot(&self, id: Uuid) -> Result<LiveGame, LiveError> {
        if let Some(live) = self
            .call_live(id, |reply| Command::Snapshot { reply })
            .await?
        {
            return Ok(live);
        }
        load_game(&self.inner.store, id, Instant::now())
            .await?
            .ok_or(LiveError::NoSuchGame)
    }

    pub fn ai(&self) -> &AiScheduler {
        &self.inner.ai
    }

    /// Games in memory now: an actor (or, in a cluster, a proxy to the
    /// owner) each.
    pub fn in_memory(&self) -> usize {
        self.games()
            .values()
            .filter(|slot| slot.get().is_some())
            .count()
    }

    fn games(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Slot>> {
        // A panic while holding this lock cannot leave the map half-updated
        // (every operation is a single insert/remove), so a poisoned lock is
        // still a valid map.
        self.inner
            .games
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn is_shutting_down(&self) -> bool {
        *self.inner.shutdown_tx.borrow()
    }

    /// What an actor or a proxy calls when it leaves memory: its entry goes
    /// (if the registry is still there).
    fn on_exit(&self) -> Arc<dyn Fn(&GameHandle) + Send + Sync> {
        let weak = Arc::downgrade(&self.inner);
        Arc::new(move |handle: &GameHandle| {
            if let Some(inner) = weak.upgrade() {
                Registry { inner }.forget(handle);
            }
        })
    }

    fn context(&self) -> ActorContext {
        let starter = Arc::downgrade(&self.inner);
        ActorContext {
            store: self.inner.store.clone(),
            ai: self.inner.ai.clone(),
            shutdown: self.inner.shutdown_tx.subscribe(),
            max_lag: self.inner.max_lag.load(Ordering::Relaxed),
            unload_after: self.inner.options.unload_after,
            timing: self.inner.options.timing,
            events: self.inner.events.clone(),
            on_exit: self.on_exit(),
            start_game: Arc::new(move |live: LiveGame| {
                if let Some(inner) = starter.upgrade() {
                    Registry { inner }.adopt(live);
                }
            }),
        }
    }

    /// Puts a stored game live that nobody can have loaded yet (a rematch,
    /// before its id is told to anyone). An entry already there wins; at
    /// shutdown the game stays stored and loads when asked for.
    fn adopt(&self, live: LiveGame) {
        // In a cluster the rematch loads on its first request, or is taken
        // by the sweep if its clock runs, with a lease like any game.
        if self.is_shutting_down() || self.inner.cluster.is_some() {
            return;
        }
        let mut games = self.games();
        if let std::collections::hash_map::Entry::Vacant(entry) = games.entry(live.id) {
            // Spawning only takes the actor set's lock, never this map's.
            let handle = self.spawn_actor(live, None);
            entry.insert(Arc::new(OnceCell::new_with(Some(handle))));
        }
    }

    fn spawn_actor(&self, live: LiveGame, ownership: Option<Ownership>) -> GameHandle {
        let (handle, task) = actor::spawn(live, self.context(), ownership);
        let mut actors = self
            .inner
            .actors
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Reap finished actors so the set does not grow with every game.
        while actors.try_join_next().is_some() {}
        actors.spawn(async move {
            if let Err(err) = task.await {
                tracing::error!(%err, "game actor panicked");
            }
        });
        handle
    }

    /// Removes `handle`'s entry, if the map still holds that very actor.
    fn forget(&self, handle: &GameHandle) {
        let mut games = self.games();
        let ours = games
            .get(&handle.id)
            .and_then(|slot| slot.get())
            .is_some_and(|current| current.same_actor(handle));
        if ours {
            games.remove(&handle.id);
        }
    }

    /// Puts a new game live (already stored). In a cluster this node takes
    /// its lease.
    pub async fn insert(&self, live: LiveGame) -> Result<GameHandle, LiveError> {
        if self.is_shutting_down() {
            return Err(LiveError::ShuttingDown);
        }
        let id = live.id;
        let handle = match &self.inner.cluster {
            None => self.spawn_actor(live, None),
            Some(cluster) => {
                let held = cluster.acquire(id).await?.ok_or_else(|| {
                    LiveError::Overloaded("this node cannot reach the cluster's messaging".into())
                })?;
                self.start_owned(cluster, live, held).await
            }
        };
        let slot = Arc::new(OnceCell::new_with(Some(handle.clone())));
        self.games().insert(id, slot);
        Ok(handle)
    }

    /// The actor of game `id`, loading the game from the database if it is
    /// not in memory.
    pub async fn get(&self, id: Uuid) -> Result<GameHandle, LiveError> {
        if self.is_shutting_down() {
            return Err(LiveError::ShuttingDown);
        }
        let slot = self.games().entry(id).or_default().clone();
        let loaded = slot
            .get_or_try_init(|| async {
                if let Some(cluster) = &self.inner.cluster {
                    return self.load_clustered(cluster, id).await;
                }
                let live = load_game(&self.inner.store, id, Instant::now())
                    .await?
                    .ok_or(LiveError::NoSuchGame)?;
                if self.is_shutting_down() {
                    return Err(LiveError::ShuttingDown);
                }
                Ok(self.spawn_actor(live, None))
            })
            .await;
        match loaded {
            Ok(handle) => Ok(handle.clone()),
            Err(err) => {
                // Do not keep empty slots for ids that do not exist.
                let mut games = self.games();
                if games
                    .get(&id)
                    .is_some_and(|current| Arc::ptr_eq(current, &slot) && current.get().is_none())
                {
                    games.remove(&id);
                }
                Err(err)
            }
        }
    }

    /// Starts the actor of `live`, owned here under `fence`, and answers
    /// the other nodes' commands for it.
    async fn start_owned(
        &self,
        cluster: &Cluster,
        live: LiveGame,
        held: crate::cluster::Held,
    ) -> GameHandle {
        let handle = self.spawn_actor(
            live,
            Some(Ownership {
                fence: held.fence,
                until: held.until,
                cluster: cluster.clone(),
            }),
        );
        if let Err(err) = serve_commands(cluster, handle.clone()).await {
            // The game is played on this node meanwhile; other nodes find
            // no owner and retry.
            err.log();
        }
        handle
    }

    /// A game in a cluster: owned here if its lease is free (loaded from
    /// the database, which has every acknowledged move), else reached
    /// through a proxy to its owner. [`LiveError::Moved`] when another
    /// node holds the lease but does not answer (it died: the lease
    /// expires within `--lease-ms`, and the caller tries again).
    async fn load_clustered(&self, cluster: &Cluster, id: Uuid) -> Result<GameHandle, LiveError> {
        if let Some(held) = cluster.acquire(id).await? {
            let fence = &held.fence;
            let live = match load_game(&self.inner.store, id, Instant::now()).await {
                Ok(Some(live)) => live,
                Ok(None) => {
                    cluster.release(id, fence).await;
                    return Err(LiveError::NoSuchGame);
                }
                Err(err) => {
                    cluster.release(id, fence).await;
                    return Err(err.into());
                }
            };
            if self.is_shutting_down() {
                cluster.release(id, fence).await;
                return Err(LiveError::ShuttingDown);
            }
            return Ok(self.start_owned(cluster, live, held).await);
        }
        let context = ProxyContext {
            store: self.inner.store.clone(),
            shutdown: self.inner.shutdown_tx.subscribe(),
            max_lag: self.inner.max_lag.load(Ordering::Relaxed),
            on_exit: self.on_exit(),
        };
        if !cluster.connected() {
            return Err(LiveError::Overloaded(
                "this node is cut off from the cluster's messaging: try another node".into(),
            ));
        }
        spawn_proxy(cluster, id, context)
            .await?
            .ok_or(LiveError::Moved)
    }

    /// The actor of `id` if it is in memory right now.
    pub fn peek(&self, id: Uuid) -> Option<GameHandle> {
        self.games().get(&id).and_then(|slot| slot.get().cloned())
    }
}

/// Game `id` as stored, restored as a live game (its moves replayed on a
/// blocking thread: a long game's replay is real work). `None` if there is
/// no such game.
pub async fn load_game(
    store: &Store,
    id: Uuid,
    now: Instant,
) -> Result<Option<LiveGame>, StoreError> {
    let Some(saved) = store.saved_game(id).await? else {
        return Ok(None);
    };
    tokio::task::spawn_blocking(move || LiveGame::restore(saved, now))
        .await
        .map_err(StoreError::internal)?
        .map(Some)
        .map_err(|err| StoreError::internal(format!("game {id}: {err}")))
}
