//! Live games: the [`Registry`] that finds a game's actor, the actor itself
//! ([`actor`]), the game's state machine ([`game`]) and its clock
//! ([`clock`]).
//!
//! The registry is a lookup map only. Its lock is a plain `std` mutex held
//! for a map operation and never across an `.await`; a game that is not in
//! memory is loaded through a per-entry `OnceCell`, so two requests for the
//! same stored game start one actor, and loading one game blocks no other.

pub mod actor;
pub mod clock;
pub mod game;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{watch, OnceCell};
use tokio::task::JoinSet;
use tokio::time::Instant;
use uuid::Uuid;

use self::actor::{ActorContext, ActorGone, Command, GameHandle};
use self::game::LiveGame;
use crate::ai::AiScheduler;
use crate::error::ApiError;
use crate::protocol::GameState;
use crate::store::Store;

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
    store: Store,
    ai: AiScheduler,
    shutdown_tx: watch::Sender<bool>,
    /// Broadcast capacity of each game (see [`Registry::set_max_lag`]).
    max_lag: AtomicUsize,
}

impl Registry {
    pub fn new(store: Store, ai: AiScheduler) -> Registry {
        let (shutdown_tx, _) = watch::channel(false);
        Registry {
            inner: Arc::new(RegistryInner {
                games: Mutex::new(HashMap::new()),
                actors: Mutex::new(JoinSet::new()),
                store,
                ai,
                shutdown_tx,
                max_lag: AtomicUsize::new(DEFAULT_MAX_LAG),
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

    fn context(&self) -> ActorContext {
        let weak = Arc::downgrade(&self.inner);
        ActorContext {
            store: self.inner.store.clone(),
            ai: self.inner.ai.clone(),
            shutdown: self.inner.shutdown_tx.subscribe(),
            max_lag: self.inner.max_lag.load(Ordering::Relaxed),
            on_exit: Arc::new(move |handle: &GameHandle| {
                if let Some(inner) = weak.upgrade() {
                    Registry { inner }.forget(handle);
                }
            }),
        }
    }

    fn spawn_actor(&self, live: LiveGame) -> GameHandle {
        let (handle, task) = actor::spawn(live, self.context());
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

    /// Puts a new game live (already stored).
    pub fn insert(&self, live: LiveGame) -> Result<GameHandle, ApiError> {
        if self.is_shutting_down() {
            return Err(ApiError::Unavailable);
        }
        let id = live.id;
        let handle = self.spawn_actor(live);
        let slot = Arc::new(OnceCell::new_with(Some(handle.clone())));
        self.games().insert(id, slot);
        Ok(handle)
    }

    /// The actor of game `id`, loading the game from the database if it is
    /// not in memory.
    pub async fn get(&self, id: Uuid) -> Result<GameHandle, ApiError> {
        if self.is_shutting_down() {
            return Err(ApiError::Unavailable);
        }
        let slot = self.games().entry(id).or_default().clone();
        let loaded = slot
            .get_or_try_init(|| async {
                match self.inner.store.load_game(id, Instant::now()).await? {
                    Some(live) => Ok(self.spawn_actor(live)),
                    None => Err(ApiError::game_not_found()),
                }
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

    /// The actor of `id` if it is in memory right now.
    pub fn peek(&self, id: Uuid) -> Option<GameHandle> {
        self.games().get(&id).and_then(|slot| slot.get().cloned())
    }

    /// Sends a command to game `id`'s actor and waits for the reply. If the
    /// actor left memory between lookup and call, it is loaded again once.
    pub async fn call<T>(
        &self,
        id: Uuid,
        command: impl Fn(tokio::sync::oneshot::Sender<T>) -> Command,
    ) -> Result<T, ApiError> {
        for _ in 0..2 {
            let handle = self.get(id).await?;
            match handle.call(&command).await {
                Ok(value) => return Ok(value),
                Err(ActorGone) => self.forget(&handle),
            }
        }
        Err(if self.is_shutting_down() {
            ApiError::Unavailable
        } else {
            ApiError::internal(format!("game {id}: actor unreachable"))
        })
    }

    /// A game's state: from its actor when it is live, otherwise straight
    /// from the database without starting an actor (for lists).
    pub async fn state(&self, id: Uuid) -> Result<GameState, ApiError> {
        if let Some(handle) = self.peek(id) {
            if let Ok(state) = handle.call(|reply| Command::State { reply }).await {
                return Ok(state);
            }
        }
        let now = Instant::now();
        match self.inner.store.load_game(id, now).await? {
            Some(live) => Ok(live.state(now)),
            None => Err(ApiError::game_not_found()),
        }
    }

    /// Loads every unfinished game and starts its actor: AI seats think
    /// again, clocks run again (from the times stored with the last move).
    pub async fn resume_unfinished(&self) -> Result<usize, ApiError> {
        let ids = self.inner.store.unfinished_games().await?;
        let mut resumed = 0;
        for id in ids {
            match self.get(id).await {
                Ok(_) => resumed += 1,
                Err(err) => {
                    tracing::error!(game = %id, "could not resume game");
                    err.log();
                }
            }
        }
        Ok(resumed)
    }

    /// Stops every actor (their searches are told to stop) and waits for
    /// them to answer what they had queued.
    pub async fn shutdown(&self) {
        self.inner.shutdown_tx.send_replace(true);
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
