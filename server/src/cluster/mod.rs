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
//! waiting for a command. An owner that hangs without dying (paused) keeps
//! its NATS subscription, so a request to it only waits: a request with
//! no answer looks at the lease every [`Cluster::sweep_period`] and gives
//! up as if nobody answered once it has expired (the sweep's requests
//! too), and the asking node takes the game. A resumed owner never
//! answers from its stale copy: past the lease time it last knew of, an
//! actor asks the database first, and it leaves memory at the first
//! renewal that does not include its game. A node whose NATS connection
//! is down, or does not answer a round trip within a sweep period (its
//! packets dropped: the client still believes it is connected), stops
//! renewing its leases, so its games move to nodes that can serve them; a node that lost a lease cannot write the game (the fence),
//! and its actor leaves memory at its first refused write.

//!
//! The files: this one, the membership (connection, leases, renewal,
//! publishing); [`wire`], what crosses NATS (subjects, published changes,
//! requests and their answers); [`owner`], the owner's side, which answers
//! other nodes' requests; [`proxy`], a game's stand-in on the other nodes.

mod owner;
mod proxy;
mod wire;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use uuid::Uuid;

pub use self::owner::serve_commands;
pub use self::proxy::{spawn_proxy, ProxyContext};
pub use self::wire::Change;
use self::wire::{state_subject, StateMessage};
use crate::live::error::LiveError;
use crate::store::{Fence, Store};

/// How often a node announces its open event streams
/// ([`Cluster::share_presence`]); [`crate::events::ELSEWHERE_TTL`] is three
/// of these.
const PRESENCE_PERIOD: Duration = Duration::from_secs(5);

/// Player ids in one presence message: about 40 KB of JSON.
const PRESENCE_PART: usize = 1000;

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
    /// This node's last successful lease renewal (its actors check that
    /// their game is among those renewed).
    renewals: watch::Sender<Arc<Renewal>>,
    /// Whether the last round trip through NATS was answered in time
    /// (see [`Cluster::connected`]).
    bus_answers: AtomicBool,
}

/// A lease renewal of this node: the games whose leases it renewed, each
/// with its lease's epoch, and when it started (they run at least until
/// then plus the lease time).
#[derive(Debug)]
pub struct Renewal {
    pub started: Instant,
    pub games: HashMap<Uuid, i64>,
}

/// What the database says of a lease this node took ([`Cluster::held_until`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseCheck {
    /// Still this node's, until then at least (by this process's clock).
    Held(Instant),
    /// Expired, or another node's: this node's copy may be stale.
    Lost,
    /// The database could not be read: ask again later.
    Unknown,
}

/// A lease this node just took: the fence its writes carry, and until
/// when (by this process's clock) nobody else can take it.
#[derive(Debug, Clone)]
pub struct Held {
    pub fence: Fence,
    pub until: Instant,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("node", &self.inner.node)
            .finish_non_exhaustive()
    }
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
        let (renewals, _) = watch::channel(Arc::new(Renewal {
            started: Instant::now(),
            games: HashMap::new(),
        }));
        Ok(Cluster {
            inner: Arc::new(ClusterInner {
                client,
                node,
                store,
                lease,
                outbox,
                renewals,
                bus_answers: AtomicBool::new(true),
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

    /// Whether this node's NATS connection is up and answered the last
    /// round trip (a node cut off from it takes no game and renews no
    /// lease).
    pub fn connected(&self) -> bool {
        self.inner.client.connection_state() == async_nats::connection::State::Connected
            && self.inner.bus_answers.load(Ordering::Acquire)
    }

    /// A round trip through NATS: a request nobody serves, which the
    /// server answers at once with "no responders". A connection whose
    /// packets are dropped still reads as connected to the client until
    /// its pings time out (a minute); this notices within `timeout`.
    async fn probe_bus(&self, timeout: Duration) -> bool {
        let subject = format!("rookery.probe.{}", self.inner.node);
        let asked = self.inner.client.request(subject, Bytes::new());
        match tokio::time::timeout(timeout, asked).await {
            Ok(Ok(_)) => true,
            Ok(Err(err)) => err.kind() == async_nats::RequestErrorKind::NoResponders,
            Err(_) => false,
        }
    }

    /// The lease time (`--lease-ms`).
    pub fn lease(&self) -> Duration {
        self.inner.lease
    }

    /// Takes the lease of `game` if nobody else holds a live one.
    pub async fn acquire(&self, game: Uuid) -> Result<Option<Held>, LiveError> {
        if !self.connected() {
            // A node cut off from NATS could not serve the game to anyone
            // else: leave it to a node that can.
            return Ok(None);
        }
        // Measured before the statement: the lease runs at least this long.
        let until = Instant::now() + self.inner.lease;
        let epoch = self
            .inner
            .store
            .acquire_lease(game, &self.inner.node, self.lease_ms())
            .await?;
        Ok(epoch.map(|epoch| Held {
            fence: Fence {
                owner: self.inner.node.clone(),
                epoch,
            },
            until,
        }))
    }

    /// Whether this node holds `game`'s lease under `fence`, as the
    /// database says now.
    ///
    /// When the database cannot be read, [`LeaseCheck::Unknown`]: the
    /// lease is not known lost, but not known held either. A node cut off
    /// from PostgreSQL alone (NATS kept) sees its leases expire while
    /// another node takes its games and plays on; its copy is then stale,
    /// and answering from it (a read through NATS reaches both) showed
    /// clients a game without moves they had been told were played (the
    /// partition tests found it, issue 42).
    pub async fn held_until(&self, game: Uuid, fence: &Fence) -> LeaseCheck {
        match self.inner.store.lease_of(game).await {
            Ok(Some(lease)) if lease.owner == *fence.owner && lease.epoch == fence.epoch => {
                let left = lease.expires_at - crate::store::now_ms();
                if left > 0 {
                    LeaseCheck::Held(Instant::now() + Duration::from_millis(left.unsigned_abs()))
                } else {
                    LeaseCheck::Lost
                }
            }
            Ok(_) => LeaseCheck::Lost,
            Err(err) => {
                err.log();
                LeaseCheck::Unknown
            }
        }
    }

    /// Each of this node's lease renewals, as it succeeds.
    pub fn renewals(&self) -> watch::Receiver<Arc<Renewal>> {
        self.inner.renewals.subscribe()
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
            // Checked before every renewal: a node the bus cannot reach
            // must not keep games the other nodes' clients cannot play.
            let answers = self.inner.client.connection_state()
                == async_nats::connection::State::Connected
                && self.probe_bus(period).await;
            self.inner.bus_answers.store(answers, Ordering::Release);
            if !answers {
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
            let started = Instant::now();
            match self
                .inner
                .store
                .renew_leases(&self.inner.node, self.lease_ms())
                .await
            {
                // The actors of games not renewed (their lease expired: this
                // node was paused or cut off) check theirs and leave.
                Ok(games) => {
                    self.inner.renewals.send_replace(Arc::new(Renewal {
                        started,
                        games: games.into_iter().collect(),
                    }));
                }
                Err(err) => err.log(),
            }
        }
    }

    /// Shares `events` with the other nodes: every event sent on this node
    /// is published on NATS, and every event another node publishes is
    /// delivered to this node's streams (issue 42: a person's event stream
    /// hears their challenges and games whichever node handles them).
    pub async fn relay_events(&self, events: crate::events::Events) -> anyhow::Result<()> {
        let mut incoming = self
            .inner
            .client
            .subscribe(wire::EVENTS_SUBJECT)
            .await
            .map_err(|err| anyhow::anyhow!("subscribing to the cluster's events: {err}"))?;
        let node = self.inner.node.clone();
        let outbox = self.inner.outbox.clone();
        let origin = node.to_string();
        events.forward_to(Box::new(move |player, line| {
            let message = wire::EventMessage {
                origin: origin.clone(),
                player: player.to_string(),
                line: line.to_string(),
            };
            match serde_json::to_vec(&message) {
                // A failed send means the publisher is gone (shutdown):
                // nobody elsewhere to tell.
                Ok(payload) => {
                    drop(outbox.send((wire::EVENTS_SUBJECT.to_string(), Bytes::from(payload))))
                }
                Err(err) => tracing::error!(%err, "event not serialised"),
            }
        }));
        tokio::spawn(async move {
            use futures_util::StreamExt;
            while let Some(message) = incoming.next().await {
                let Ok(event) = serde_json::from_slice::<wire::EventMessage>(&message.payload)
                else {
                    tracing::debug!("an unreadable cluster event dropped");
                    continue;
                };
                if *event.origin != *node {
                    events.deliver(&event.player, Arc::from(event.line));
                }
            }
        });
        Ok(())
    }

    /// Tells the other nodes, every [`PRESENCE_PERIOD`], who has an event
    /// stream open on this node, and hands theirs to `events`: who is
    /// online (`GET /api/online`, lichess's `online`) is the cluster's.
    pub async fn share_presence(&self, events: crate::events::Events) -> anyhow::Result<()> {
        let mut incoming = self
            .inner
            .client
            .subscribe(wire::PRESENCE_SUBJECT)
            .await
            .map_err(|err| anyhow::anyhow!("subscribing to the cluster's presence: {err}"))?;
        let node = self.inner.node.to_string();
        let heard = events.clone();
        let own = node.clone();
        tokio::spawn(async move {
            use futures_util::StreamExt;
            while let Some(message) = incoming.next().await {
                let Ok(told) = serde_json::from_slice::<wire::PresenceMessage>(&message.payload)
                else {
                    tracing::debug!("an unreadable presence message dropped");
                    continue;
                };
                if told.origin != own {
                    heard.online_elsewhere(
                        &told.origin,
                        told.round,
                        told.part,
                        told.parts,
                        told.players,
                    );
                }
            }
        });
        let outbox = self.inner.outbox.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(PRESENCE_PERIOD);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            for round in 0u64.. {
                tick.tick().await;
                let here = events.online_here();
                let chunks: Vec<&[String]> = if here.is_empty() {
                    vec![&[]]
                } else {
                    here.chunks(PRESENCE_PART).collect()
                };
                let parts = chunks.len() as u32;
                for (part, players) in chunks.into_iter().enumerate() {
                    let message = wire::PresenceMessage {
                        origin: node.clone(),
                        round,
                        part: part as u32,
                        parts,
                        players: players.to_vec(),
                    };
                    let Ok(payload) = serde_json::to_vec(&message) else {
                        continue;
                    };
                    // A failed send means the publisher is gone (shutdown).
                    if outbox
                        .send((wire::PRESENCE_SUBJECT.to_string(), Bytes::from(payload)))
                        .is_err()
                    {
                        return;
                    }
                }
            }
        });
        Ok(())
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
}
