//! A game's stand-in on the nodes that do not own it: it answers
//! subscriptions from the states the owner publishes, and forwards every
//! other question to the owner ([`Ask`] over NATS).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::time::Instant;
use uuid::Uuid;

use super::wire::{state_subject, Change, Forward, StateMessage};
use super::Cluster;
use crate::live::actor::{Command, GameHandle};
use crate::live::error::LiveError;
use crate::live::messages::{Ask, Reply, PRESENCE_REFRESH};
use crate::protocol::{Broadcast, GameState, SharedState};
use crate::store::Store;
use crate::util::sleep_until_opt;

/// What a proxy needs besides the cluster.
pub struct ProxyContext {
    pub store: Store,
    pub shutdown: watch::Receiver<bool>,
    pub max_lag: usize,
    /// Called with the proxy's handle when it ends.
    pub on_exit: Arc<dyn Fn(&GameHandle) + Send + Sync>,
}

/// How long a proxy with no subscribers and no commands stays.
const PROXY_IDLE: Duration = Duration::from_secs(60);

/// Starts the proxy of game `id`, owned by another node, once it has the
/// game's current state from the owner. `None` if no owner answers (the
/// caller may take the lease itself once it has expired).
pub async fn spawn_proxy(
    cluster: &Cluster,
    id: Uuid,
    context: ProxyContext,
) -> Result<Option<GameHandle>, LiveError> {
    // Subscribed before the state is read: no change can fall between.
    let states = cluster
        .inner
        .client
        .subscribe(state_subject(id))
        .await
        .map_err(|err| LiveError::internal(format!("NATS subscribe: {err}")))?;
    let (state, mark) = match cluster.request(id, &Ask::Synced).await {
        Ok(Reply::Synced(state, mark)) => (*state, mark),
        Ok(other) => return Err(other.unexpected()),
        Err(Forward::NoOwner) | Err(Forward::Refused(LiveError::Moved)) => return Ok(None),
        Err(Forward::Refused(err)) => return Err(err),
        Err(Forward::Failed(cause)) => {
            return Err(LiveError::Overloaded(format!(
                "the cluster could not reach this game's node: {cause}"
            )))
        }
    };
    let (commands, inbox) = mpsc::channel(64);
    let (updates, _) = broadcast::channel(context.max_lag.max(1));
    let handle = GameHandle::new(id, commands);
    // Lists on this node show the game's connections from the proxy's copy.
    handle.presence.record_state(&state);
    let proxy = Proxy {
        cluster: cluster.clone(),
        handle: handle.clone(),
        latest: state,
        shared: None,
        mark,
        updates,
        context,
        connections: [0; 3],
        announced_at: None,
    };
    tokio::spawn(proxy.run(inbox, states));
    Ok(Some(handle))
}

struct Proxy {
    cluster: Cluster,
    handle: GameHandle,
    /// The game as last published by its owner.
    latest: GameState,
    /// `latest`, serialised for the subscribers (made when first needed).
    shared: Option<Arc<SharedState>>,
    /// The `(epoch, seq)` of `latest`: older messages are dropped.
    mark: (i64, u64),
    updates: broadcast::Sender<Broadcast>,
    context: ProxyContext,
    /// This node's WebSockets on the game (spectators, white, black), as
    /// last told to the owner ([`Ask::NodePresence`]).
    connections: [u32; 3],
    /// When they were last told (`None`: none open, nothing to refresh).
    announced_at: Option<Instant>,
}

impl Proxy {
    async fn run(mut self, mut inbox: mpsc::Receiver<Command>, mut states: async_nats::Subscriber) {
        let mut shutdown = self.context.shutdown.clone();
        let mut idle_since = Instant::now();
        let (lost_tx, mut lost) = mpsc::channel::<()>(1);
        loop {
            let idle_deadline = idle_since + PROXY_IDLE;
            let refresh = self.announced_at.map(|at| at + PRESENCE_REFRESH);
            tokio::select! {
                biased;
                _ = shutdown.wait_for(|stop| *stop) => break,
                // A forwarded command found no owner: the game must move.
                _ = lost.recv() => break,
                message = states.next() => match message {
                    Some(message) => self.on_published(&message.payload),
                    None => break,
                },
                command = inbox.recv() => match command {
                    Some(command) => {
                        idle_since = Instant::now();
                        self.on_command(command, &lost_tx);
                    }
                    None => break,
                },
                // The owner forgets a node's connections it has not heard
                // of for a while (a dead node's): tell them again.
                _ = sleep_until_opt(refresh) => self.announce(),
                _ = tokio::time::sleep_until(idle_deadline) => {
                    if self.updates.receiver_count() == 0 {
                        break;
                    }
                    idle_since = Instant::now();
                }
            }
        }
        // Unregister first, so new callers start afresh (a new proxy, or
        // this node as the owner); queued commands get no answer, which
        // their callers take as "try again".
        (self.context.on_exit)(&self.handle);
        inbox.close();
        let _ = states.unsubscribe().await;
        // The sockets of a proxy that ended close (or already have).
        if self.connections != [0; 3] {
            self.connections = [0; 3];
            self.announce();
        }
    }

    /// Tells the owner this node's connections on the game.
    fn announce(&mut self) {
        let [spectators, white, black] = self.connections;
        let ask = Ask::NodePresence {
            node: self.cluster.node().to_string(),
            spectators,
            white,
            black,
        };
        self.cluster.tell(self.handle.id, &ask);
        self.announced_at = (self.connections != [0; 3]).then(Instant::now);
    }

    /// A change the owner published.
    fn on_published(&mut self, payload: &[u8]) {
        let message: StateMessage = match serde_json::from_slice(payload) {
            Ok(message) => message,
            Err(err) => {
                tracing::warn!(game = %self.handle.id, %err, "unreadable published state dropped");
                return;
            }
        };
        let mark = (message.epoch, message.seq);
        if mark <= self.mark {
            return;
        }
        self.mark = mark;
        match message.change {
            Change::State { game } => {
                self.latest = *game;
                self.handle.presence.record_state(&self.latest);
                let shared = SharedState::of(&self.latest);
                self.shared = Some(shared.clone());
                let _ = self.updates.send(Broadcast::State(shared));
            }
            Change::Presence { presence } => {
                presence.show_in(&mut self.latest);
                self.handle.presence.record_state(&self.latest);
                self.shared = None;
                let _ = self.updates.send(Broadcast::presence(presence));
            }
        }
    }

    fn on_command(&mut self, command: Command, lost: &mpsc::Sender<()>) {
        let id = self.handle.id;
        match command {
            Command::Subscribe { reply } => {
                let shared = self
                    .shared
                    .get_or_insert_with(|| SharedState::of(&self.latest))
                    .clone();
                let _ = reply.send((shared, self.updates.subscribe()));
            }
            Command::Snapshot { reply } => {
                // Every acknowledged move is in the database.
                let store = self.context.store.clone();
                tokio::spawn(async move {
                    if let Ok(Some(live)) = crate::live::load_game(&store, id, Instant::now()).await
                    {
                        let _ = reply.send(live);
                    }
                });
            }
            Command::Ask {
                ask: Ask::Synced,
                reply: Some(reply),
            } => {
                let _ = reply.send(Reply::Synced(Box::new(self.latest.clone()), self.mark));
            }
            Command::Ask {
                ask: Ask::Presence { side, delta },
                reply: None,
            } => {
                let count = &mut self.connections[side.map_or(0, |side| 1 + side.index())];
                *count = count.saturating_add_signed(delta);
                self.announce();
            }
            Command::Ask { ask, reply: None } => self.cluster.tell(id, &ask),
            Command::Ask {
                ask,
                reply: Some(reply),
            } => self.forward(ask, reply, lost),
        }
    }

    /// Sends `ask` to the owner and hands its answer to `reply`, without
    /// holding up the proxy. When no owner answers (or the owner lost the
    /// game), `reply` is dropped, which the caller reads as "the game
    /// moved: try again", and the proxy ends; an error the question's
    /// answer cannot carry drops it too (the caller asks again until its
    /// deadline).
    fn forward(&self, ask: Ask, reply: oneshot::Sender<Reply>, lost: &mpsc::Sender<()>) {
        let cluster = self.cluster.clone();
        let id = self.handle.id;
        let lost = lost.clone();
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            let answer = cluster.request(id, &ask).await;
            metrics::histogram!("rookery_nats_forward_seconds")
                .record(started.elapsed().as_secs_f64());
            let failed = match answer {
                Ok(answer) if matches!(answer.error(), Some(LiveError::Moved)) => {
                    let _ = lost.try_send(());
                    return;
                }
                Ok(answer) => {
                    let _ = reply.send(answer);
                    return;
                }
                Err(Forward::Refused(LiveError::Moved) | Forward::NoOwner) => {
                    let _ = lost.try_send(());
                    return;
                }
                Err(Forward::Refused(err)) => err,
                Err(Forward::Failed(cause)) => {
                    tracing::warn!(game = %id, %cause, "cluster command failed");
                    LiveError::Overloaded(
                        "the cluster could not reach this game's node: try again".into(),
                    )
                }
            };
            if let Some(answer) = ask.failed(failed) {
                let _ = reply.send(answer);
            }
        });
    }
}
