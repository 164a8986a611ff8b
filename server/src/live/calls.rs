//! Asking a game through the registry: finding its actor (or proxy),
//! waiting at most the request deadline, asking again when the game moved
//! to another node, and the typed questions the edge asks (join, act,
//! abort, seats, state).

use std::time::Duration;

use uuid::Uuid;

use super::actor::{Action, ActorGone, Command};
use super::messages::{Ask, Reply};
use super::Registry;
use crate::domain::PlayerRef;
use crate::live::error::LiveError;
use crate::protocol::GameState;
use crate::token::TokenHash;

impl Registry {
    /// Sends a command to game `id`'s actor and waits for the reply, at most
    /// the request deadline (then 503: the command may still take effect).
    /// If the actor left memory between lookup and call, it is loaded again
    /// once.
    pub async fn call<T>(
        &self,
        id: Uuid,
        command: impl Fn(tokio::sync::oneshot::Sender<T>) -> Command,
    ) -> Result<T, LiveError> {
        let clustered = self.inner.cluster.is_some();
        let attempts = async {
            // One node: the actor left memory at most once in between. A
            // cluster: the game may be moving to another node, which takes
            // up to the lease time; try until the deadline.
            let mut pause = Duration::from_millis(50);
            for attempt in 0.. {
                if attempt >= 2 && !clustered || self.is_shutting_down() {
                    break;
                }
                if attempt > 0 && clustered {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(500));
                }
                let handle = match self.get(id).await {
                    Ok(handle) => handle,
                    Err(LiveError::Moved) if clustered => continue,
                    Err(err) => return Err(err),
                };
                match handle.call(&command).await {
                    Ok(value) => return Ok(value),
                    Err(ActorGone) => self.forget(&handle),
                }
            }
            Err(if self.is_shutting_down() {
                LiveError::ShuttingDown
            } else {
                LiveError::internal(format!("game {id}: actor unreachable"))
            })
        };
        tokio::time::timeout(self.inner.options.deadline, attempts)
            .await
            .unwrap_or(Err(LiveError::Timeout))
    }

    /// Asks game `id` `ask` and waits for the answer, at most the request
    /// deadline. When the game's owner lost its lease meanwhile (a
    /// cluster), the question is asked again of the new owner, within the
    /// same deadline.
    pub async fn ask(&self, id: Uuid, ask: Ask) -> Result<Reply, LiveError> {
        let attempts = async {
            loop {
                let reply = self
                    .call(id, |reply| Command::Ask {
                        ask: ask.clone(),
                        reply: Some(reply),
                    })
                    .await?;
                match reply.error() {
                    Some(LiveError::Moved) => tokio::time::sleep(Duration::from_millis(50)).await,
                    _ => return Ok(reply),
                }
            }
        };
        tokio::time::timeout(self.inner.options.deadline, attempts)
            .await
            .unwrap_or(Err(LiveError::Timeout))
    }

    /// Joins game `id` with seat token `token` (as `player`, with the hash
    /// of the invite secret sent, if any): the state and the seat taken.
    pub async fn join(
        &self,
        id: Uuid,
        token: TokenHash,
        player: Option<PlayerRef>,
        invite: Option<TokenHash>,
    ) -> Result<(GameState, crate::protocol::Side), LiveError> {
        let ask = Ask::Join {
            token,
            player,
            invite,
        };
        match self.ask(id, ask).await? {
            Reply::Joined(joined) => joined.map(|(state, side)| (*state, side)),
            other => Err(other.unexpected()),
        }
    }

    /// An operator ends game `id` (`aborted`).
    pub async fn abort(&self, id: Uuid) -> Result<GameState, LiveError> {
        match self.ask(id, Ask::Abort).await? {
            Reply::Done(done) => done.map(|state| *state),
            other => Err(other.unexpected()),
        }
    }

    /// The seat of game `id` that `token` holds, if any.
    pub async fn seat_of(
        &self,
        id: Uuid,
        token: &crate::token::TokenHash,
    ) -> Result<Option<crate::protocol::Side>, LiveError> {
        let token = token.clone();
        match self.ask(id, Ask::Authorize { token }).await? {
            Reply::Seat(side) => Ok(side),
            other => Err(other.unexpected()),
        }
    }

    /// The seat the registered player `player_id` holds in game `id`, with
    /// its token's hash.
    pub async fn seat_of_player(
        &self,
        id: Uuid,
        player_id: &str,
    ) -> Result<Option<(crate::protocol::Side, crate::token::TokenHash)>, LiveError> {
        let player_id = player_id.to_string();
        match self.ask(id, Ask::SeatOf { player_id }).await? {
            Reply::SeatOf(seat) => Ok(seat),
            other => Err(other.unexpected()),
        }
    }

    /// Runs a seat holder's action on game `id`. The token must be a seat
    /// of this game: one of another game is `forbidden`, an unknown one
    /// `unauthorized`.
    pub async fn act(
        &self,
        id: Uuid,
        token: &TokenHash,
        action: Action,
    ) -> Result<GameState, LiveError> {
        let ask = Ask::Act {
            token: token.clone(),
            action,
        };
        let result = match self.ask(id, ask).await? {
            Reply::Done(done) => done.map(|state| *state),
            other => Err(other.unexpected()),
        };
        match result {
            Err(LiveError::Unauthorized) if self.inner.store.is_seat_token(token).await? => Err(
                LiveError::Forbidden("this token holds a seat in another game".into()),
            ),
            other => other,
        }
    }

    /// A game's state: from its actor when it is live, otherwise from its
    /// database row, without starting an actor or replaying its moves.
    pub async fn state(&self, id: Uuid) -> Result<GameState, LiveError> {
        let state = self
            .call_live(id, |reply| Command::Ask {
                ask: Ask::State,
                reply: Some(reply),
            })
            .await?;
        match state {
            Some(Reply::State(state)) => return Ok(*state),
            Some(other) => return Err(other.unexpected()),
            None => {}
        }
        self.inner
            .store
            .game_state(id)
            .await?
            .ok_or(LiveError::NoSuchGame)
    }

    /// Sends a command to game `id`'s actor if it is in memory (`None` if
    /// not, or if it left meanwhile), within the request deadline.
    pub async fn call_live<T>(
        &self,
        id: Uuid,
        command: impl FnOnce(tokio::sync::oneshot::Sender<T>) -> Command,
    ) -> Result<Option<T>, LiveError> {
        let Some(handle) = self.peek(id) else {
            return Ok(None);
        };
        match tokio::time::timeout(self.inner.options.deadline, handle.call(command)).await {
            Ok(Ok(value)) => Ok(Some(value)),
            // It left memory meanwhile: the database has its last state.
            Ok(Err(ActorGone)) => Ok(None),
            Err(_) => Err(LiveError::Timeout),
        }
    }

    /// Shows the open connections of the games in memory in `states` (read
    /// from the database, which does not know them), without asking any
    /// actor.
    pub fn show_presence(&self, states: &mut [GameState]) {
        for state in states {
            let live = Uuid::parse_str(&state.id).ok().and_then(|id| self.peek(id));
            if let Some(handle) = live {
                handle.presence.show_in(state);
            }
        }
    }
}
