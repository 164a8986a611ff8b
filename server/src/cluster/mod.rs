//! Games across the nodes of a cluster (issue 13; docs/architecture.md).
//!
//! A node started with `--nats URL` and a PostgreSQL `--database` is a
//! cluster member. Every live game is owned by one node, through a lease in
//! PostgreSQL ([`crate::store::leases`]) with a fencing epoch; the owner runs
//! the game's actor, exactly as a single node does. Any node serves any
//! game:
//!
//! 1. **command**: a node asked about a game it does not own runs a *proxy*
//!    in the registry's place of the actor ([`spawn_proxy`]). The proxy
//!    sends each command (a move, a join, a resign…) as a NATS request to
//!    `rookery.game.GAME.cmd`, to which only the owner subscribes
//!    ([`serve_commands`]).
//! 2. **owner**: the owner's actor validates and applies it, as on one node.
//! 3. **commit**: the write carries the owner's [`Fence`]; it is stored only
//!    while the lease still has that epoch (checked in the write's own
//!    transaction), and acknowledged only once committed.
//! 4. **publish**: the actor publishes every new state (and presence
//!    change) on `rookery.game.GAME.state`, numbered by epoch and sequence.
//! 5. **subscribers**: each proxy subscribes to that subject before it
//!    reads the current state, drops what it already has, and hands the
//!    rest to its own WebSocket and NDJSON subscribers, serialised once per
//!    node. Players and spectators on different nodes see the same states
//!    in the same order.
//!
//! Failures: a request that finds no owner ("no responders": the owner
//! died, or its game left memory) ends the proxy; the registry then takes
//! the lease itself once it has expired (at most `--lease-ms` after the
//! owner's last renewal) and loads the game from the database, where every
//! acknowledged move is. Games with a running clock or an AI to move are
//! taken over by a sweep on every node ([`Cluster::sweep_period`]), without
//! waiting for a command. A node whose NATS connection is down stops
//! renewing its leases, so its games move to nodes that can serve them; a
//! node that lost a lease cannot write the game (the fence), and its actor
//! leaves memory at its first refused write.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::time::Instant;
use uuid::Uuid;

use crate::live::actor::{Action, ActorGone, Command, GameHandle, SeatSecret};
use crate::live::error::{LiveError, Refusal};
use crate::live::game::{Answer, PlayerRef};
use crate::protocol::{Broadcast, GameState, Presence, SeatRating, SharedState, Side};
use crate::store::{Fence, Store};
use crate::token::TokenHash;

/// A node of a cluster: its NATS connection, its name in the lease table,
/// and the lease time.
#[derive(Clone)]
pub struct Cluster {
    inner: Arc<ClusterInner>,
}

struct ClusterInner {
    client: async_nats::Client,
    node: Arc<str>,
    store: Store,
    lease: Duration,
    /// Messages to publish, in order (actors publish from sync code).
    outbox: mpsc::UnboundedSender<(String, Bytes)>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("node", &self.inner.node)
            .finish_non_exhaustive()
    }
}

fn command_subject(game: Uuid) -> String {
    format!("rookery.game.{game}.cmd")
}

fn state_subject(game: Uuid) -> String {
    format!("rookery.game.{game}.state")
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl Cluster {
    /// Connects to NATS at `url` as a new node of the cluster.
    pub async fn connect(url: &str, store: Store, lease: Duration) -> anyhow::Result<Cluster> {
        let client = crate::ai::remote::connect_nats(url, "rookery-cluster").await?;
        let node: Arc<str> = Arc::from(Uuid::new_v4().simple().to_string());
        let (outbox, mut queued) = mpsc::unbounded_channel::<(String, Bytes)>();
        let publisher = client.clone();
        tokio::spawn(async move {
            while let Some((subject, payload)) = queued.recv().await {
                // A failed publish (NATS down) loses a state for the other
                // nodes' subscribers; they resync on their next command or
                // reconnect. The owner's own game is unaffected.
                if let Err(err) = publisher.publish(subject, payload).await {
                    tracing::debug!(%err, "state not published");
                }
            }
        });
        tracing::info!(%node, "cluster member: games shared over NATS and PostgreSQL");
        Ok(Cluster {
            inner: Arc::new(ClusterInner {
                client,
                node,
                store,
                lease,
                outbox,
            }),
        })
    }

    /// This node's name in the lease table.
    pub fn node(&self) -> &Arc<str> {
        &self.inner.node
    }

    fn lease_ms(&self) -> i64 {
        millis(self.inner.lease)
    }

    /// How often leases are renewed and unowned games looked for: a fifth
    /// of the lease time.
    pub fn sweep_period(&self) -> Duration {
        self.inner.lease / 5
    }

    /// Whether this node's NATS connection is up (a node cut off from it
    /// takes no game).
    pub fn connected(&self) -> bool {
        self.inner.client.connection_state() == async_nats::connection::State::Connected
    }

    /// Takes the lease of `game` if nobody else holds a live one.
    pub async fn acquire(&self, game: Uuid) -> Result<Option<Fence>, LiveError> {
        if !self.connected() {
            // A node cut off from NATS could not serve the game to anyone
            // else: leave it to a node that can.
            return Ok(None);
        }
        let epoch = self
            .inner
            .store
            .acquire_lease(game, &self.inner.node, self.lease_ms())
            .await?;
        Ok(epoch.map(|epoch| Fence {
            owner: self.inner.node.clone(),
            epoch,
        }))
    }

    /// Gives up a lease (an actor leaving memory, a node stopping).
    pub async fn release(&self, game: Uuid, fence: &Fence) {
        if let Err(err) = self.inner.store.release_lease(game, fence).await {
            err.log();
        }
    }

    /// Renews this node's leases every [`Cluster::sweep_period`] while its
    /// NATS connection is up, until `shutdown`. Cut off from NATS, it lets
    /// them expire: other nodes take the games over.
    pub async fn renew_forever(&self, mut shutdown: watch::Receiver<bool>) {
        let period = self.sweep_period();
        // A lease is taken with a whole lease time: the first renewal is
        // due a period later (by then the connection is up).
        let mut ticks = tokio::time::interval_at(Instant::now() + period, period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut cut_off = false;
        loop {
            tokio::select! {
                _ = shutdown.wait_for(|stop| *stop) => return,
                _ = ticks.tick() => {}
            }
            if !self.connected() {
                if !cut_off {
                    tracing::warn!(
                        "NATS is unreachable: this node's game leases are left to expire"
                    );
                }
                cut_off = true;
                continue;
            }
            if cut_off {
                tracing::info!("NATS is reachable again: this node takes games again");
                cut_off = false;
            }
            if let Err(err) = self
                .inner
                .store
                .renew_leases(&self.inner.node, self.lease_ms())
                .await
            {
                err.log();
            }
        }
    }

    /// Publishes a change of game `game` (owner epoch `epoch`, `seq`-th
    /// message of that epoch) for the other nodes' subscribers.
    pub fn publish(&self, game: Uuid, epoch: i64, seq: u64, change: Change) {
        let message = StateMessage { epoch, seq, change };
        match serde_json::to_vec(&message) {
            Ok(payload) => {
                let _ = self
                    .inner
                    .outbox
                    .send((state_subject(game), Bytes::from(payload)));
            }
            Err(err) => tracing::error!(%err, "state not serialised"),
        }
    }

    /// Sends `command` to the owner of `game` and waits for its answer.
    async fn request<T: DeserializeOwned>(
        &self,
        game: Uuid,
        command: &RemoteCommand,
    ) -> Result<T, Forward> {
        let payload =
            serde_json::to_vec(command).map_err(|err| Forward::Failed(err.to_string()))?;
        let reply = self
            .inner
            .client
            .request(command_subject(game), payload.into())
            .await
            .map_err(|err| match err.kind() {
                async_nats::client::RequestErrorKind::NoResponders => Forward::NoOwner,
                _ => Forward::Failed(err.to_string()),
            })?;
        let answer: RemoteReply<T> = serde_json::from_slice(&reply.payload)
            .map_err(|err| Forward::Failed(format!("unreadable answer: {err}")))?;
        match answer {
            RemoteReply::Ok(value) => Ok(value),
            RemoteReply::Err { code, message } => {
                Err(Forward::Refused(LiveError::remote(code, message)))
            }
        }
    }

    /// Sends `command` to the owner without waiting (presence).
    fn tell(&self, game: Uuid, command: &RemoteCommand) {
        if let Ok(payload) = serde_json::to_vec(command) {
            let _ = self
                .inner
                .outbox
                .send((command_subject(game), Bytes::from(payload)));
        }
    }
}

/// A change an owner publishes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    State { game: Box<GameState> },
    Presence { presence: Presence },
}

/// One published change, numbered: `(epoch, seq)` grows with every message
/// of a game, across owners too (a new owner has a higher epoch).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StateMessage {
    epoch: i64,
    seq: u64,
    change: Change,
}

/// A command sent to a game's owner.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum RemoteCommand {
    /// The state and the `(epoch, seq)` of the last change published.
    Synced,
    State,
    Authorize {
        token: String,
    },
    SeatOf {
        player_id: String,
    },
    Join {
        token: String,
        player: Option<RemotePlayer>,
        invite: Option<String>,
    },
    Act {
        token: String,
        action: RemoteAction,
    },
    Persist,
    Expire {
        waiting_ms: i64,
        idle_ms: i64,
    },
    Abort,
    Presence {
        side: Option<Side>,
        delta: i32,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct RemotePlayer {
    id: String,
    name: String,
    rating: SeatRating,
}

/// [`Action`] on the wire. A rematch carries the seat's secret (the new
/// game's seat token is derived from it on the owner): NATS must be a
/// trusted network (docs/architecture.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "snake_case")]
enum RemoteAction {
    Move { uci: String },
    Resign,
    Draw,
    DropDraw { withdraw: bool },
    Takeback,
    DropTakeback { withdraw: bool },
    Rematch { secret: String },
    DropRematch { withdraw: bool },
    Abort,
}

fn answer_of(withdraw: bool) -> Answer {
    if withdraw {
        Answer::Withdraw
    } else {
        Answer::Decline
    }
}

impl From<&Action> for RemoteAction {
    fn from(action: &Action) -> RemoteAction {
        let withdraw = |answer: &Answer| *answer == Answer::Withdraw;
        match action {
            Action::Move(uci) => RemoteAction::Move { uci: uci.clone() },
            Action::Resign => RemoteAction::Resign,
            Action::Draw => RemoteAction::Draw,
            Action::DropDrawOffer(answer) => RemoteAction::DropDraw {
                withdraw: withdraw(answer),
            },
            Action::Takeback => RemoteAction::Takeback,
            Action::DropTakeback(answer) => RemoteAction::DropTakeback {
                withdraw: withdraw(answer),
            },
            Action::Rematch(secret) => RemoteAction::Rematch {
                secret: secret.0.clone(),
            },
            Action::DropRematch(answer) => RemoteAction::DropRematch {
                withdraw: withdraw(answer),
            },
            Action::Abort => RemoteAction::Abort,
        }
    }
}

impl From<RemoteAction> for Action {
    fn from(action: RemoteAction) -> Action {
        match action {
            RemoteAction::Move { uci } => Action::Move(uci),
            RemoteAction::Resign => Action::Resign,
            RemoteAction::Draw => Action::Draw,
            RemoteAction::DropDraw { withdraw } => Action::DropDrawOffer(answer_of(withdraw)),
            RemoteAction::Takeback => Action::Takeback,
            RemoteAction::DropTakeback { withdraw } => Action::DropTakeback(answer_of(withdraw)),
            RemoteAction::Rematch { secret } => Action::Rematch(SeatSecret(secret)),
            RemoteAction::DropRematch { withdraw } => Action::DropRematch(answer_of(withdraw)),
            RemoteAction::Abort => Action::Abort,
        }
    }
}

/// An owner's answer: the command's value, or its error as its kind (the
/// contract's code, typed) and message.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RemoteReply<T> {
    Ok(T),
    Err { code: Refusal, message: String },
}

/// An owner's error for the wire. "Moved" (the game is not, or no more,
/// here, the node shutting down included) makes the sender retry on
/// whichever node owns it next.
fn reply_error<T>(err: &LiveError) -> RemoteReply<T> {
    RemoteReply::Err {
        code: err.refusal(),
        message: err.to_string(),
    }
}

/// Why a forwarded command has no answer.
#[derive(Debug)]
enum Forward {
    /// Nobody owns the game right now (its owner died or let it go).
    NoOwner,
    /// The owner answered with an error.
    Refused(LiveError),
    /// NATS failed, or the answer was unreadable.
    Failed(String),
}

// ------------------------------------------------------------------ owner

/// Answers the commands other nodes send to game `handle` (owned here with
/// `fence`), until its actor leaves memory. Subscribed before this returns,
/// so a proxy that learns of the lease finds the owner listening.
pub async fn serve_commands(cluster: &Cluster, handle: GameHandle) -> Result<(), LiveError> {
    let mut requests = cluster
        .inner
        .client
        .subscribe(command_subject(handle.id))
        .await
        .map_err(|err| LiveError::internal(format!("NATS subscribe: {err}")))?;
    let client = cluster.inner.client.clone();
    tokio::spawn(async move {
        loop {
            let message = tokio::select! {
                message = requests.next() => match message {
                    Some(message) => message,
                    None => break,
                },
                () = handle.closed() => break,
            };
            let command: RemoteCommand = match serde_json::from_slice(&message.payload) {
                Ok(command) => command,
                Err(err) => {
                    tracing::warn!(game = %handle.id, %err, "unreadable cluster command dropped");
                    continue;
                }
            };
            if let RemoteCommand::Presence { side, delta } = command {
                // In order, and without a reply.
                if handle
                    .send(Command::Presence { side, delta })
                    .await
                    .is_err()
                {
                    break;
                }
                continue;
            }
            let Some(reply_to) = message.reply else {
                continue;
            };
            let handle = handle.clone();
            let client = client.clone();
            tokio::spawn(async move {
                let payload = run_remote(&handle, command).await;
                if let Err(err) = client.publish(reply_to, payload.into()).await {
                    tracing::debug!(%err, "cluster reply not sent");
                }
            });
        }
        // Dropping the subscription unsubscribes: later requests find no
        // responder and their senders look for the new owner.
        let _ = requests.unsubscribe().await;
    });
    Ok(())
}

/// Runs one remote command on the local actor; the serialised answer.
async fn run_remote(handle: &GameHandle, command: RemoteCommand) -> Vec<u8> {
    fn encode<T: Serialize>(result: Result<T, LiveError>) -> Vec<u8> {
        let reply = match result {
            Ok(value) => RemoteReply::Ok(value),
            Err(err) => reply_error(&err),
        };
        serde_json::to_vec(&reply).unwrap_or_default()
    }
    let gone = |_: ActorGone| LiveError::Moved;
    match command {
        RemoteCommand::Synced => encode(
            handle
                .call(|reply| Command::Synced { reply })
                .await
                .map_err(gone),
        ),
        RemoteCommand::State => encode(
            handle
                .call(|reply| Command::State { reply })
                .await
                .map_err(gone),
        ),
        RemoteCommand::Authorize { token } => encode(
            handle
                .call(|reply| Command::Authorize {
                    token: TokenHash(token),
                    reply,
                })
                .await
                .map_err(gone),
        ),
        RemoteCommand::SeatOf { player_id } => encode(
            handle
                .call(|reply| Command::SeatOf { player_id, reply })
                .await
                .map(|seat| seat.map(|(side, token)| (side, token.0)))
                .map_err(gone),
        ),
        RemoteCommand::Join {
            token,
            player,
            invite,
        } => encode(
            handle
                .call(|reply| Command::Join {
                    token: TokenHash(token),
                    player: player.map(|p| PlayerRef {
                        id: p.id,
                        name: p.name,
                        rating: p.rating,
                    }),
                    invite: invite.map(TokenHash),
                    reply,
                })
                .await
                .map_err(gone)
                .and_then(|result| result),
        ),
        RemoteCommand::Act { token, action } => encode(
            handle
                .call(|reply| Command::Act {
                    token: TokenHash(token),
                    action: action.into(),
                    reply,
                })
                .await
                .map_err(gone)
                .and_then(|result| result),
        ),
        RemoteCommand::Persist => encode(
            handle
                .call(|reply| Command::Persist { reply })
                .await
                .map_err(gone)
                .and_then(|result| result),
        ),
        RemoteCommand::Expire {
            waiting_ms,
            idle_ms,
        } => encode(
            handle
                .call(|reply| Command::Expire {
                    waiting_ms,
                    idle_ms,
                    reply,
                })
                .await
                .map_err(gone),
        ),
        RemoteCommand::Abort => encode(
            handle
                .call(|reply| Command::Abort { reply })
                .await
                .map_err(gone)
                .and_then(|result| result),
        ),
        // Handled in order by the subscription loop.
        RemoteCommand::Presence { .. } => encode(Ok(())),
    }
}

// ------------------------------------------------------------------ proxy

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
    let (state, mark): (GameState, (i64, u64)) =
        match cluster.request(id, &RemoteCommand::Synced).await {
            Ok(synced) => synced,
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
}

impl Proxy {
    async fn run(mut self, mut inbox: mpsc::Receiver<Command>, mut states: async_nats::Subscriber) {
        let mut shutdown = self.context.shutdown.clone();
        let mut idle_since = Instant::now();
        let (lost_tx, mut lost) = mpsc::channel::<()>(1);
        loop {
            let idle_deadline = idle_since + PROXY_IDLE;
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
            Command::Presence { side, delta } => {
                self.cluster
                    .tell(id, &RemoteCommand::Presence { side, delta });
            }
            Command::Snapshot { reply } => {
                // Every acknowledged move is in the database.
                let store = self.context.store.clone();
                tokio::spawn(async move {
                    if let Ok(Some(live)) = store.load_game(id, Instant::now()).await {
                        let _ = reply.send(live);
                    }
                });
            }
            Command::Synced { reply } => {
                let _ = reply.send((self.latest.clone(), self.mark));
            }
            Command::State { reply } => self.forward(RemoteCommand::State, lost, plain(reply)),
            Command::Authorize { token, reply } => self.forward(
                RemoteCommand::Authorize { token: token.0 },
                lost,
                plain(reply),
            ),
            Command::SeatOf { player_id, reply } => self.forward(
                RemoteCommand::SeatOf { player_id },
                lost,
                move |result: Result<Option<(Side, String)>, LiveError>| {
                    if let Ok(seat) = result {
                        let _ = reply.send(seat.map(|(side, token)| (side, TokenHash(token))));
                    }
                },
            ),
            Command::Join {
                token,
                player,
                invite,
                reply,
            } => self.forward(
                RemoteCommand::Join {
                    token: token.0,
                    player: player.map(|p| RemotePlayer {
                        id: p.id,
                        name: p.name,
                        rating: p.rating,
                    }),
                    invite: invite.map(|hash| hash.0),
                },
                lost,
                fallible(reply),
            ),
            Command::Act {
                token,
                action,
                reply,
            } => self.forward(
                RemoteCommand::Act {
                    token: token.0,
                    action: RemoteAction::from(&action),
                },
                lost,
                fallible(reply),
            ),
            Command::Persist { reply } => {
                self.forward(RemoteCommand::Persist, lost, fallible(reply))
            }
            Command::Expire {
                waiting_ms,
                idle_ms,
                reply,
            } => self.forward(
                RemoteCommand::Expire {
                    waiting_ms,
                    idle_ms,
                },
                lost,
                plain(reply),
            ),
            Command::Abort { reply } => self.forward(RemoteCommand::Abort, lost, fallible(reply)),
        }
    }

    /// Sends `command` to the owner and hands its answer to `deliver`,
    /// without holding up the proxy. When no owner answers (or the owner
    /// lost the game), `deliver` is dropped with its reply, which the
    /// caller reads as "the game moved: try again", and the proxy ends.
    fn forward<V>(
        &self,
        command: RemoteCommand,
        lost: &mpsc::Sender<()>,
        deliver: impl FnOnce(Result<V, LiveError>) + Send + 'static,
    ) where
        V: DeserializeOwned + Send + 'static,
    {
        let cluster = self.cluster.clone();
        let id = self.handle.id;
        let lost = lost.clone();
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            let answer = cluster.request::<V>(id, &command).await;
            metrics::histogram!("rookery_nats_forward_seconds")
                .record(started.elapsed().as_secs_f64());
            match answer {
                Ok(value) => deliver(Ok(value)),
                Err(Forward::Refused(LiveError::Moved) | Forward::NoOwner) => {
                    let _ = lost.try_send(());
                }
                Err(Forward::Refused(err)) => deliver(Err(err)),
                Err(Forward::Failed(cause)) => {
                    tracing::warn!(game = %id, %cause, "cluster command failed");
                    deliver(Err(LiveError::Overloaded(
                        "the cluster could not reach this game's node: try again".into(),
                    )));
                }
            }
        });
    }
}

/// Delivers the value of a command whose reply has no error (an error
/// drops the reply: the caller tries again until its deadline).
fn plain<V: Send + 'static>(
    reply: oneshot::Sender<V>,
) -> impl FnOnce(Result<V, LiveError>) + Send + 'static {
    move |result| {
        if let Ok(value) = result {
            let _ = reply.send(value);
        }
    }
}

/// Delivers the answer of a command whose reply is a `Result`.
fn fallible<V: Send + 'static>(
    reply: oneshot::Sender<Result<V, LiveError>>,
) -> impl FnOnce(Result<V, LiveError>) + Send + 'static {
    move |result| {
        let _ = reply.send(result);
    }
}
