//! The per-game actor and its handle.
//!
//! One task owns each live game's [`LiveGame`]. Everything else talks to it
//! through a [`GameHandle`]: a command enum carrying a reply channel. The
//! actor's loop waits, all at once, on commands, AI answers, the running
//! clock's deadline, the AI v AI pacing timer, shutdown, and (for finished
//! games) an idle timer after which it leaves memory.
//!
//! A change is made on a copy of the game, written to the database, and only
//! then becomes the actor's state, is acknowledged and is broadcast to the
//! WebSocket and NDJSON subscribers. A failed write changes nothing and
//! answers 503 `unavailable`; when the database cannot tell whether the
//! write was stored (a failed commit), the actor reloads the game from the
//! database, so memory and database agree. Work the actor starts by itself
//! (a flag fall, an AI move) is retried with a growing backoff while the
//! database fails, never in a tight loop.
//!
//! The files: this one (commands, the handle, the loop and the answers to
//! each [`Ask`]), `commit.rs` (changing, storing and broadcasting the
//! game) and `turns.rs` (the clock's deadline and the AI's turn).

mod commit;
mod turns;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rookery_engine::Move;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::time::Instant;
use uuid::Uuid;

use super::game::{LiveGame, RematchStep};
use crate::ai::{AiAnswer, AiScheduler, Thinking};
use crate::cluster::{Cluster, LeaseCheck};
use crate::live::error::LiveError;
use crate::live::messages::PRESENCE_EXPIRY;
pub use crate::live::messages::{Action, Ask, Reply, SeatSecret};
use crate::protocol::{self, Broadcast, GameState, SeatView, SharedState, Side, Status};
use crate::store::{Fence, Store};
use crate::token::TokenHash;
use crate::util::sleep_until_opt;

/// Subscribers get every state as it changes, and presence changes, each
/// serialised once for all of them.
pub type StateReceiver = broadcast::Receiver<Broadcast>;

/// Presence changes (connections opening and closing) are gathered for this
/// long and sent as one `presence` message: a crowd of spectators arriving
/// at once costs each subscriber a few small messages, not one per arrival.
const PRESENCE_COALESCE: Duration = Duration::from_millis(100);

/// What a game's actor (or, in a cluster, its proxy) is sent.
pub enum Command {
    /// A question or order ([`Ask`], the same on the cluster's wire);
    /// `reply` is `None` for those told, not asked (presence).
    Ask {
        ask: Ask,
        reply: Option<oneshot::Sender<Reply>>,
    },
    /// The game as a value (for PGN export).
    Snapshot { reply: oneshot::Sender<LiveGame> },
    /// The current state (serialised) and a receiver for every later
    /// change.
    Subscribe {
        reply: oneshot::Sender<(Arc<SharedState>, StateReceiver)>,
    },
}

/// The way to a live game. Cheap to clone.
#[derive(Debug, Clone)]
pub struct GameHandle {
    pub id: Uuid,
    commands: mpsc::Sender<Command>,
    /// The game's open connections, readable without asking the actor (a
    /// list shows them for games in memory).
    pub presence: Arc<Presence>,
}

/// Open WebSocket connections of a live game, kept by its actor.
#[derive(Debug, Default)]
pub struct Presence {
    spectators: AtomicU32,
    seats: [AtomicU32; 2],
}

impl Presence {
    fn record(&self, live: &LiveGame) {
        self.spectators.store(live.spectators(), Ordering::Relaxed);
        for side in Side::BOTH {
            let connections = match live.seat(side) {
                crate::domain::GameSeat::Human { connections, .. } => *connections,
                crate::domain::GameSeat::Ai { .. } => 0,
            };
            self.seats[side.index()].store(connections, Ordering::Relaxed);
        }
    }

    /// Takes the counts a state shows (a cluster proxy's copy of the
    /// owner's).
    pub fn record_state(&self, state: &GameState) {
        let counts = protocol::Presence::of(state);
        self.spectators.store(counts.spectators, Ordering::Relaxed);
        for (side, connected) in [(Side::White, counts.white), (Side::Black, counts.black)] {
            self.seats[side.index()].store(u32::from(connected), Ordering::Relaxed);
        }
    }

    /// Whether any connection (of any node, in a cluster) watches the game.
    fn any(&self) -> bool {
        self.spectators.load(Ordering::Relaxed) > 0
            || self
                .seats
                .iter()
                .any(|seat| seat.load(Ordering::Relaxed) > 0)
    }

    /// Puts these counts into `state`.
    pub fn show_in(&self, state: &mut GameState) {
        state.spectators = self.spectators.load(Ordering::Relaxed);
        for (side, seat) in [
            (Side::White, &mut state.white),
            (Side::Black, &mut state.black),
        ] {
            if let SeatView::Human { connected, .. } = seat {
                *connected = self.seats[side.index()].load(Ordering::Relaxed) > 0;
            }
        }
    }
}

/// The handle's call failed because the actor is gone (it left memory after
/// its game finished, or the server is shutting down).
#[derive(Debug)]
pub struct ActorGone;

impl GameHandle {
    /// A handle whose commands arrive on `commands`' receiver (an actor's,
    /// or a cluster proxy's).
    pub fn new(id: Uuid, commands: mpsc::Sender<Command>) -> GameHandle {
        GameHandle {
            id,
            commands,
            presence: Arc::default(),
        }
    }

    /// Completes when the actor behind this handle is gone.
    pub async fn closed(&self) {
        self.commands.closed().await
    }

    pub fn same_actor(&self, other: &GameHandle) -> bool {
        self.commands.same_channel(&other.commands)
    }

    pub async fn call<T>(
        &self,
        command: impl FnOnce(oneshot::Sender<T>) -> Command,
    ) -> Result<T, ActorGone> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(command(reply))
            .await
            .map_err(|_| ActorGone)?;
        answer.await.map_err(|_| ActorGone)
    }

    /// Asks the game `ask` and waits for its answer.
    pub async fn ask(&self, ask: Ask) -> Result<Reply, ActorGone> {
        self.call(|reply| Command::Ask {
            ask,
            reply: Some(reply),
        })
        .await
    }

    /// Queues `ask` with no reply (presence).
    pub async fn tell(&self, ask: Ask) -> Result<(), ActorGone> {
        self.commands
            .send(Command::Ask { ask, reply: None })
            .await
            .map_err(|_| ActorGone)
    }
}

/// Settings every actor shares.
#[derive(Clone)]
pub struct ActorContext {
    pub store: Store,
    pub ai: AiScheduler,
    pub shutdown: watch::Receiver<bool>,
    /// Broadcast capacity: how far a subscriber may fall behind.
    pub max_lag: usize,
    /// How long the game stays in memory once idle (no subscriber, no
    /// running clock, no AI to move): `--unload-after-ms`.
    pub unload_after: Duration,
    /// The first-move rule's and open seeks' waits.
    pub timing: super::game::Timing,
    /// The players' event streams (games started and finished).
    pub events: crate::events::Events,
    /// Called with the actor's handle when it leaves memory.
    pub on_exit: Arc<dyn Fn(&GameHandle) + Send + Sync>,
    /// Puts a new game (an agreed rematch, already stored) live, before
    /// anyone is told its id.
    pub start_game: Arc<dyn Fn(LiveGame) + Send + Sync>,
}

/// The first and the longest wait before retrying work that failed because
/// the database failed.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(5);

/// A cluster node's ownership of a game: its lease, and where its changes
/// are published for the other nodes.
#[derive(Clone)]
pub struct Ownership {
    pub fence: Fence,
    /// Until when the lease is surely this node's (this process's clock).
    pub until: Instant,
    pub cluster: Cluster,
}

/// Starts the actor of `live` (owned through `ownership` in a cluster).
pub fn spawn(
    mut live: LiveGame,
    context: ActorContext,
    ownership: Option<Ownership>,
) -> (GameHandle, tokio::task::JoinHandle<()>) {
    live.set_timing(context.timing);
    let (commands, inbox) = mpsc::channel(64);
    let (answers_tx, answers) = mpsc::channel(4);
    // A subscriber that falls this many messages behind has lagged: a
    // WebSocket is then closed (the slow-reader policy), a stream skips ahead.
    let (states, _) = broadcast::channel(context.max_lag.max(1));
    let handle = GameHandle::new(live.id, commands);
    let lease_until = ownership.as_ref().map(|ownership| ownership.until);
    let actor = GameActor {
        ownership,
        lease_until,
        published: 0,
        lease_lost: false,
        live,
        handle: handle.clone(),
        context,
        states,
        answers_tx,
        thinking: None,
        held_ai_move: None,
        last_move_at: Instant::now(),
        idle_since: Instant::now(),
        closing: false,
        presence_due: None,
        presence_sent: None,
        remote_presence: HashMap::new(),
        failures: 0,
        retry_at: None,
    };
    let kind = actor.live.kind();
    let task = tokio::spawn(async move {
        let live = metrics::gauge!("rookery_live_games", "kind" => kind);
        live.increment(1.0);
        actor.run(inbox, answers).await;
        live.decrement(1.0);
    });
    (handle, task)
}

struct GameActor {
    /// In a cluster: the lease this actor writes under.
    ownership: Option<Ownership>,
    /// Changes published to the cluster so far (their sequence numbers).
    published: u64,
    /// A write was fenced, or the lease was found expired or taken:
    /// another node owns the game now (or may at any moment).
    lease_lost: bool,
    /// In a cluster: until when the lease is surely this node's. Past it
    /// (this node was paused, or its renewals failed), the actor asks the
    /// database before it answers anything, so a node resumed after
    /// another took the game never serves its stale copy.
    lease_until: Option<Instant>,
    live: LiveGame,
    handle: GameHandle,
    context: ActorContext,
    states: broadcast::Sender<Broadcast>,
    answers_tx: mpsc::Sender<AiAnswer>,
    thinking: Option<Thinking>,
    /// An AI v AI move computed early, held until the pacing delay passes.
    held_ai_move: Option<(Move, Instant)>,
    last_move_at: Instant,
    idle_since: Instant,
    /// Leaving memory: answer queued commands, start no search.
    closing: bool,
    /// When the gathered presence changes are sent.
    presence_due: Option<Instant>,
    /// The presence subscribers last learnt (from a state or a `presence`).
    presence_sent: Option<protocol::Presence>,
    /// In a cluster: the connections other nodes have open on this game,
    /// as each last announced them ([`Ask::NodePresence`]), and when.
    remote_presence: HashMap<String, ([u32; 3], Instant)>,
    /// Database failures in a row (for the backoff).
    failures: u32,
    /// No flag check before this (the last write failed).
    retry_at: Option<Instant>,
}

impl GameActor {
    async fn run(
        mut self,
        mut inbox: mpsc::Receiver<Command>,
        mut answers: mpsc::Receiver<AiAnswer>,
    ) {
        let mut shutdown = self.context.shutdown.clone();
        // In a cluster: this node's lease renewals.
        let mut renewals = self
            .ownership
            .as_ref()
            .map(|ownership| ownership.cluster.renewals());
        self.start_ai_if_needed();
        loop {
            let deadline = match (self.live.deadline(), self.retry_at) {
                (Some(deadline), Some(retry)) => Some(deadline.max(retry)),
                (deadline, _) => deadline,
            };
            let held_until = self.held_ai_move.map(|(_, at)| at);
            let presence_expiry = self.node_presence_expiry();
            let idle_deadline = self
                .is_idle()
                .then(|| self.idle_since + self.context.unload_after);
            tokio::select! {
                // Shutdown first: once it is asked, take no new work.
                biased;
                _ = stopping(&mut shutdown) => break,
                // Then the rare events (a flag, an AI move), so that a busy
                // inbox cannot starve them.
                _ = sleep_until_opt(deadline) => self.on_clock_deadline().await,
                _ = sleep_until_opt(held_until) => {
                    if let Some((mv, _)) = self.held_ai_move.take() {
                        self.apply_ai_move(mv).await;
                    }
                }
                Some(answer) = answers.recv() => self.on_ai_answer(answer).await,
                command = inbox.recv() => match command {
                    Some(command) => {
                        self.idle_since = Instant::now();
                        self.handle(command).await;
                    }
                    None => break,
                },
                renewal = renewed(&mut renewals) => self.on_renewal(&renewal).await,
                _ = sleep_until_opt(self.presence_due) => self.send_presence(),
                _ = sleep_until_opt(presence_expiry) => self.expire_node_presence(),
                _ = sleep_until_opt(idle_deadline) => {
                    // Connections count too: in a cluster, other nodes'
                    // subscribers are not this actor's receivers.
                    if self.states.receiver_count() == 0 && !self.handle.presence.any() {
                        break;
                    }
                    self.idle_since = Instant::now();
                }
            }
            if self.lease_lost {
                tracing::info!(game = %self.live.id, "game lease lost: another node owns it now");
                break;
            }
        }
        self.closing = true;
        if let Some(thinking) = self.thinking.take() {
            thinking.stop();
        }
        // Unregister first, so new callers load a fresh actor (or, at
        // shutdown, are refused); then answer what is already queued, so no
        // caller is left without a reply.
        (self.context.on_exit)(&self.handle);
        inbox.close();
        while let Some(command) = inbox.recv().await {
            self.handle(command).await;
        }
        if let Some(ownership) = &self.ownership {
            if !self.lease_lost {
                // Another node may take the game at once.
                ownership
                    .cluster
                    .release(self.live.id, &ownership.fence)
                    .await;
            }
        }
    }

    /// Whether this node still owns the game (always, on one node). Once
    /// the lease time last known has passed, the database says.
    async fn lease_held(&mut self) -> bool {
        let Some(ownership) = &self.ownership else {
            return true;
        };
        if crate::store::fencing_disabled() {
            return true;
        }
        if self.lease_lost {
            return false;
        }
        if self.lease_until.is_some_and(|until| Instant::now() < until) {
            return true;
        }
        match ownership
            .cluster
            .held_until(self.live.id, &ownership.fence)
            .await
        {
            LeaseCheck::Held(until) => {
                self.lease_until = Some(until);
                true
            }
            LeaseCheck::Lost => {
                self.lease_lost = true;
                false
            }
            // Past the lease time, with no database to say: another node
            // may have taken the game and played on. No answer from this
            // copy, and the actor leaves memory (keeping the lease: it
            // cannot be released now); the game loads again from the
            // database where it is asked next. An actor staying on would
            // still answer its node's NATS subscription, and a new actor
            // of the same node would sit beside it.
            LeaseCheck::Unknown => {
                tracing::warn!(
                    game = %self.live.id,
                    "the database cannot confirm this node's lease: the game leaves memory"
                );
                self.lease_lost = true;
                false
            }
        }
    }

    /// This node renewed its leases: if this game's was not among them
    /// (it had expired: the node was paused or cut off; or this node took
    /// the game again under a newer epoch), the actor checks
    /// it and leaves memory when it is lost, so its subscribers reconnect
    /// to the game's new owner.
    async fn on_renewal(&mut self, renewal: &crate::cluster::Renewal) {
        let Some(ownership) = &self.ownership else {
            return;
        };
        if renewal.games.get(&self.live.id) == Some(&ownership.fence.epoch) {
            let until = renewal.started + ownership.cluster.lease();
            self.lease_until = self.lease_until.max(Some(until));
            return;
        }
        // Perhaps taken after the renewal's statement: the database says.
        self.lease_until = None;
        self.lease_held().await;
    }

    /// Nothing to wait for: no running clock, no AI move coming. Such an
    /// actor may leave memory; the game loads again on its next request.
    fn is_idle(&self) -> bool {
        self.live.is_finished()
            || (self.live.deadline().is_none()
                && self.live.ai_to_move().is_none()
                && self.held_ai_move.is_none()
                && self.thinking.is_none())
    }

    async fn handle(&mut self, command: Command) {
        if !self.lease_held().await {
            // Another node may own the game: this copy may be stale. No
            // answer, which the caller takes as "the game moved": it asks
            // again and finds the game where it is now.
            return;
        }
        // Replies go to a requester who may have given up (a closed
        // connection); losing such a reply is fine.
        match command {
            Command::Snapshot { reply } => {
                let _ = reply.send(self.live.clone());
            }
            Command::Subscribe { reply } => {
                let state = self.state();
                if self.states.receiver_count() == 0 {
                    // The first subscriber knows exactly this state: no
                    // need to send it again when its own arrival is told.
                    self.presence_sent = Some(protocol::Presence::of(&state));
                }
                let _ = reply.send((SharedState::of(&state), self.states.subscribe()));
            }
            Command::Ask { ask, reply } => {
                let answer = self.answer(ask).await;
                if let (Some(reply), Some(answer)) = (reply, answer) {
                    let _ = reply.send(answer);
                }
            }
        }
    }

    /// Answers one [`Ask`] (`None` for those told, not asked).
    async fn answer(&mut self, ask: Ask) -> Option<Reply> {
        let reply = match ask {
            Ask::State => Reply::State(Box::new(self.state())),
            Ask::Synced => {
                let epoch = self.ownership.as_ref().map_or(0, |o| o.fence.epoch);
                Reply::Synced(Box::new(self.state()), (epoch, self.published))
            }
            Ask::Authorize { token } => Reply::Seat(self.live.side_of(&token)),
            Ask::SeatOf { player_id } => Reply::SeatOf(self.live.seat_of_player(&player_id)),
            Ask::Join {
                token,
                player,
                invite,
            } => Reply::Joined(
                self.change(None, |live, now| {
                    live.join(token, player, invite.as_ref(), now)
                        .map(|side| (side, None))
                })
                .await
                .map(|side| (Box::new(self.state()), side)),
            ),
            Ask::Act { token, action } => Reply::Done(self.act(token, action).await.map(Box::new)),
            Ask::Persist => {
                // Only a running clock has anything new to store.
                let running = self.live.clock().and_then(|c| c.running()).is_some();
                Reply::Persisted(if running && !self.live.is_finished() {
                    self.change(None, |_, _| Ok(((), None))).await
                } else {
                    Ok(())
                })
            }
            Ask::Expire {
                waiting_ms,
                idle_ms,
            } => {
                let idle = crate::store::now_ms() - self.live.updated_at;
                let stale = match self.live.status() {
                    Status::Waiting => idle >= waiting_ms,
                    Status::Active => idle >= idle_ms,
                    Status::Finished => false,
                };
                Reply::Expired(
                    stale
                        && matches!(
                            self.change(None, |live, now| live.expire(now).map(|e| (e, None)))
                                .await,
                            Ok(true)
                        ),
                )
            }
            Ask::Abort => Reply::Done(
                self.change(None, |live, now| live.abort(now).map(|()| ((), None)))
                    .await
                    .map(|()| Box::new(self.state())),
            ),
            Ask::Presence { side, delta } => {
                self.live.connect(side, delta, Instant::now());
                self.presence_changed();
                return None;
            }
            Ask::NodePresence {
                node,
                spectators,
                white,
                black,
            } => {
                self.node_presence(node, [spectators, white, black]);
                return None;
            }
        };
        Some(reply)
    }

    /// The connection counts changed: they are shown at once, and told to
    /// the subscribers once the changes of the next moment are gathered.
    fn presence_changed(&mut self) {
        self.handle.presence.record(&self.live);
        if self.presence_due.is_none() {
            self.presence_due = Some(Instant::now() + PRESENCE_COALESCE);
        }
    }

    /// Another node's whole counts (spectators, white, black) replace what
    /// it announced before; all zero, it is forgotten.
    fn node_presence(&mut self, node: String, counts: [u32; 3]) {
        let before = self
            .remote_presence
            .get(&node)
            .map_or([0; 3], |(counts, _)| *counts);
        self.apply_presence(before, counts);
        if counts == [0; 3] {
            self.remote_presence.remove(&node);
        } else {
            self.remote_presence.insert(node, (counts, Instant::now()));
        }
    }

    /// Drops the counts of the nodes not heard of for [`PRESENCE_EXPIRY`].
    fn expire_node_presence(&mut self) {
        let now = Instant::now();
        let expired: Vec<String> = self
            .remote_presence
            .iter()
            .filter(|(_, (_, heard))| *heard + PRESENCE_EXPIRY <= now)
            .map(|(node, _)| node.clone())
            .collect();
        for node in expired {
            if let Some((counts, _)) = self.remote_presence.remove(&node) {
                tracing::info!(game = %self.live.id, %node, "a node's connections expired");
                self.apply_presence(counts, [0; 3]);
            }
        }
    }

    /// When the next node's counts expire, if any are kept.
    fn node_presence_expiry(&self) -> Option<Instant> {
        self.remote_presence
            .values()
            .map(|(_, heard)| *heard + PRESENCE_EXPIRY)
            .min()
    }

    fn apply_presence(&mut self, before: [u32; 3], after: [u32; 3]) {
        let sides = [None, Some(Side::White), Some(Side::Black)];
        let mut changed = false;
        for ((side, before), after) in sides.into_iter().zip(before).zip(after) {
            let delta = i64::from(after) - i64::from(before);
            if delta != 0 {
                let delta =
                    i32::try_from(delta).unwrap_or(if delta > 0 { i32::MAX } else { i32::MIN });
                self.live.connect(side, delta, Instant::now());
                changed = true;
            }
        }
        if changed {
            self.presence_changed();
        }
    }

    async fn act(&mut self, token: TokenHash, action: Action) -> Result<GameState, LiveError> {
        let side = self.live.side_of(&token).ok_or(LiveError::Unauthorized)?;
        // A move that arrives after the flag fell loses on time, even if the
        // timer has not fired yet.
        self.on_clock_deadline().await;
        match action {
            Action::Move(uci) => {
                self.change(None, |live, now| {
                    live.play(side, &uci, now).map(|played| ((), Some(played)))
                })
                .await?;
            }
            Action::Resign => {
                self.change(None, |live, now| {
                    live.resign(side, now).map(|()| ((), None))
                })
                .await?;
            }
            Action::Draw => self.change_if(|live, now| live.draw(side, now)).await?,
            Action::DropDrawOffer(answer) => {
                self.change_if(|live, _| live.drop_draw_offer(side, answer))
                    .await?
            }
            Action::Takeback => self.change_if(|live, now| live.takeback(side, now)).await?,
            Action::DropTakeback(answer) => {
                self.change_if(|live, _| live.drop_takeback_offer(side, answer))
                    .await?
            }
            Action::Rematch(secret) => self.rematch(side, &secret).await?,
            Action::DropRematch(answer) => {
                self.change_if(|live, _| live.drop_rematch_offer(side, answer))
                    .await?
            }
            Action::Abort => {
                self.change(None, |live, now| {
                    live.abort_by_player(now).map(|()| ((), None))
                })
                .await?;
            }
            Action::Berserk => {
                self.change(None, |live, now| {
                    live.berserk(side, now).map(|()| ((), None))
                })
                .await?;
            }
        }
        Ok(self.state())
    }

    /// Offers or accepts a rematch. The new game's id is the one already
    /// offered, or a fresh one; the player's seat token in it is derived
    /// from the token they hold here.
    async fn rematch(&mut self, side: Side, secret: &SeatSecret) -> Result<(), LiveError> {
        let game = self
            .live
            .rematch()
            .map_or_else(Uuid::new_v4, |rematch| rematch.game);
        let token = TokenHash::of(&crate::token::rematch_token(&secret.0, game));
        let now = Instant::now();
        let mut next = self.live.clone();
        match next.offer_rematch(side, game, token, crate::store::now_ms(), now)? {
            RematchStep::Unchanged => Ok(()),
            RematchStep::Offered => self.commit(next, None, None, now).await,
            RematchStep::Agreed(new) => {
                self.commit(next, None, Some(*new), now).await?;
                tracing::info!(game = %self.live.id, rematch = %game, "rematch agreed");
                Ok(())
            }
        }
    }
}

/// This node's next lease renewal (never, on one node).
async fn renewed(
    renewals: &mut Option<watch::Receiver<Arc<crate::cluster::Renewal>>>,
) -> Arc<crate::cluster::Renewal> {
    if let Some(receiver) = renewals {
        if receiver.changed().await.is_ok() {
            return receiver.borrow_and_update().clone();
        }
    }
    std::future::pending().await
}

/// Completes once shutdown is asked (or its sender is gone).
async fn stopping(shutdown: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is not `Send`: drop it here.
    let _ = shutdown.wait_for(|stop| *stop).await.map(|_| ());
}
