//! One live game over its WebSocket: states in; moves, resignations,
//! offers (draw, takeback, rematch) and their answers out. An agreed rematch
//! moves the session to the new game with the seat the server sends.
//!
//! The session is one async loop that waits on two things at once: frames
//! from the server and lines from the player. Lines are read on their own
//! thread (rustyline blocks), one at a time: the loop asks for the next line
//! only after it has handled the last, so the terminal is never left in the
//! editor's raw mode by a line nobody waited for. On a terminal, text from
//! the server is printed above the prompt through rustyline's external
//! printer.
//!
//! Piped input is a script of the player's own moves: in `play`, each line is
//! carried out only when it is the player's turn (or the game is over) and
//! the server has answered the previous one, so `printf 'e4\nNf3\n'` plays
//! two moves whatever the opponent takes to answer. The end of the script
//! is noticed at once: a script that is done leaves the game to the clock.
//!
//! A seat held by the logged-in account (a challenge's game: issue 21) has
//! no seat token, and the server takes a WebSocket's seat only from a seat
//! token or a browser's session cookie, never from an API token. So such a
//! game is followed on a spectator's WebSocket, and its actions go over
//! HTTP with the account's token (`POST /api/games/{id}/move` and the
//! rest), which the server answers for the account's seat.
//!
//! By concern, as the server's live game is split:
//! - this file: who is at the keyboard, the session's state, and the loop
//!   that waits on the server and the player together;
//! - [`connection`]: the game's WebSocket: opening it, reconnecting after
//!   a drop, moving to an agreed rematch, reading the server's messages;
//! - [`report`]: taking in a state and telling the player what changed
//!   (moves, status, offers), and drawing the board with the clocks;
//! - [`commands`]: what each typed command does in an online game;
//! - [`offers`]: the standing offers and what an answer to an action is.

mod commands;
mod connection;
mod offers;
mod report;

use futures_util::{SinkExt, StreamExt};
use rookery_engine::{Color, Game};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

use super::client::{GameState, Seat, Server};
use super::inbox::Inbox;
use crate::console::{Lines, Screen};
use crate::table::Table;
use commands::Flow;
use connection::{open_socket, Reconnected, Socket};
use offers::{Offers, Snapshot};

/// Who is at the keyboard in an online session.
pub enum Participant {
    /// A seat whose token this client holds: played over the WebSocket.
    Player(Seat),
    /// The logged-in account's seat, without a token of its own: watched
    /// as a spectator, played over HTTP with the account's token.
    Account(Color),
    Spectator,
}

/// How a session ended.
pub enum Left {
    /// `quit`, Ctrl-D at a terminal, or the end of a script.
    Quit,
    /// The game is over and the session was told to leave then
    /// ([`RemoteSession::leaving_at_end`]); a script's line read for the
    /// next game, if any.
    GameOver(Option<String>),
}

/// A live game followed (and, with a seat, played) over the WebSocket.
pub struct RemoteSession {
    server: Server,
    id: String,
    participant: Participant,
    table: Table,
    state: Option<GameState>,
    screen: Screen,
    /// Moves already reported to the player.
    reported: usize,
    reported_status: String,
    /// The standing offers last reported: draw, takeback, rematch.
    reported_offers: Offers,
    reported_rematch: Option<String>,
    /// The seat in an agreed rematch, sent by the server, not yet taken.
    rematch_seat: Option<(String, Seat)>,
    /// A move or action was sent and the server has not answered yet: a
    /// script must not read on, or it would judge its next line by the
    /// position before its own move.
    awaiting_answer: Option<Snapshot>,
    /// The state was read before the connection dropped and the new
    /// connection has not brought its first state yet: a script must not
    /// judge its next line by it (its opponent may have moved meanwhile,
    /// or its own last move may have been taken without its answer).
    stale_state: bool,
    /// Leave as soon as the game is over (a tournament's game: the
    /// tournament goes on to the next).
    leave_at_end: bool,
}

impl RemoteSession {
    pub fn new(
        server: Server,
        id: String,
        participant: Participant,
        screen: Screen,
    ) -> RemoteSession {
        let mut table = Table::new(Game::default());
        table.flipped = match &participant {
            Participant::Player(seat) => seat.color == "black",
            Participant::Account(color) => *color == Color::Black,
            Participant::Spectator => false,
        };
        RemoteSession {
            server,
            id,
            participant,
            table,
            state: None,
            screen,
            reported: 0,
            reported_status: String::new(),
            reported_offers: Offers::default(),
            reported_rematch: None,
            rematch_seat: None,
            awaiting_answer: None,
            stale_state: false,
            leave_at_end: false,
        }
    }

    /// The screen back, once the session is over (for the next game).
    pub fn into_screen(self) -> Screen {
        self.screen
    }

    /// Leaves as soon as the game is over, rather than at `quit` or the
    /// end of input.
    pub fn leaving_at_end(mut self) -> RemoteSession {
        self.leave_at_end = true;
        self
    }

    fn my_color(&self) -> Option<Color> {
        match &self.participant {
            Participant::Player(seat) if seat.color == "black" => Some(Color::Black),
            Participant::Player(_) => Some(Color::White),
            Participant::Account(color) => Some(*color),
            Participant::Spectator => None,
        }
    }

    fn finished(&self) -> bool {
        self.state.as_ref().is_some_and(|s| s.status == "finished")
    }

    /// A rematch is agreed and this player's seat in it has not arrived
    /// yet: a script's next line is for the new game, so it waits.
    fn awaiting_rematch_seat(&self) -> bool {
        self.my_color().is_some()
            && self
                .state
                .as_ref()
                .is_some_and(|state| state.rematch.is_some())
    }

    fn my_turn(&self) -> bool {
        match (&self.state, self.my_color()) {
            (Some(state), Some(color)) => state.status == "active" && state.turn == color.name(),
            _ => false,
        }
    }

    /// Runs until `quit`, the end of input, or (for a piped spectator) the
    /// end of the game. Returns an error when the server is lost for good.
    pub async fn run(&mut self, lines: Lines, first: Option<GameState>) -> Result<(), String> {
        self.run_with(Inbox::start(lines), first, None).await
    }

    /// [`run`](Self::run) with lines already being read, and perhaps one
    /// line of a script read before the game began (`held`).
    pub async fn run_with(
        &mut self,
        mut inbox: Inbox,
        first: Option<GameState>,
        held: Option<String>,
    ) -> Result<(), String> {
        self.run_on(&mut inbox, first, held).await.map(|_| ())
    }

    /// The session's loop on an inbox that outlives it (a tournament's
    /// games, one after the other, read the same lines).
    pub async fn run_on(
        &mut self,
        inbox: &mut Inbox,
        first: Option<GameState>,
        mut held: Option<String>,
    ) -> Result<Left, String> {
        if let Some(state) = first {
            self.apply_state(state);
        }
        let interactive = self.screen.interactive;
        let spectator = matches!(self.participant, Participant::Spectator);
        let mut socket = open_socket(&self.socket_url(), self.server.ws_connector()).await?;
        // A script's line read before its time waits in `held`.
        let scripted = !interactive && !spectator;
        loop {
            // A tournament's game over: the next line is the next game's.
            if self.leave_at_end && self.finished() && self.awaiting_answer.is_none() {
                return Ok(Left::GameOver(held));
            }
            // A script's line waits for the player's turn (or the game's
            // end) and for the answer to the previous action; a person at a
            // terminal, or a spectator, may type at any time.
            if let Some(line) = held.take() {
                if self.awaiting_answer.is_none()
                    && !self.stale_state
                    && !self.awaiting_rematch_seat()
                    && (self.my_turn() || self.finished())
                {
                    if self.act(&line, &mut socket).await {
                        return Ok(Left::Quit);
                    }
                    continue;
                }
                held = Some(line);
            }
            // Reading on lets a script's end be noticed at once: a script
            // that is done leaves without waiting for the opponent.
            if held.is_none()
                && (!scripted || (self.awaiting_answer.is_none() && !self.stale_state))
            {
                inbox.request();
            }
            if spectator && inbox.done && self.finished() {
                return Ok(Left::Quit);
            }
            // A script that ended before the game began (while a challenge
            // waited for its answer) leaves as one that ends now would.
            if !spectator && inbox.done && held.is_none() && self.awaiting_answer.is_none() {
                return Ok(Left::Quit);
            }
            tokio::select! {
                frame = socket.next() => match frame {
                    Some(Ok(Message::Text(text))) => {
                        self.on_server_text(text.as_str());
                        if let Some((game, seat)) = self.rematch_seat.take() {
                            socket = self.move_to_rematch(game, seat).await?;
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => {
                        // Nothing more will happen in a finished game that
                        // nobody is looking at.
                        if self.finished() && !interactive && spectator {
                            return Ok(Left::Quit);
                        }
                        match self.reconnect(inbox).await? {
                            Reconnected::Socket(fresh) => socket = *fresh,
                            Reconnected::Quit => return Ok(Left::Quit),
                        }
                    }
                },
                line = inbox.recv(), if inbox.waiting => match line {
                    Some(line) if scripted => held = Some(line),
                    Some(line) => {
                        if self.act(&line, &mut socket).await {
                            return Ok(Left::Quit);
                        }
                    }
                    // A piped spectator watches on to the end; Ctrl-D at
                    // a terminal, or a player's script ending, leaves.
                    None if spectator && !interactive => {}
                    None => return Ok(Left::Quit),
                },
            }
        }
    }

    /// Carries out one line; true when it was `quit`.
    async fn act(&mut self, line: &str, socket: &mut Socket) -> bool {
        match self.handle_line(line).await {
            Ok(Flow::Continue) => false,
            Ok(Flow::Send(message)) if matches!(self.participant, Participant::Account(_)) => {
                self.act_over_http(&message).await;
                false
            }
            Ok(Flow::Send(message)) => {
                match socket.send(Message::text(message.to_string())).await {
                    Ok(()) => self.awaiting_answer = self.state.as_ref().map(Snapshot::of),
                    Err(e) => self
                        .screen
                        .complain(&format!("could not send to the server: {e}")),
                }
                false
            }
            Ok(Flow::Quit) => true,
            Err(why) => {
                self.screen.complain(&why);
                false
            }
        }
    }

    /// Sends the account seat's action (a WebSocket message, `message`)
    /// as its HTTP request. The answer's state is not taken in: the
    /// spectator's socket brings the same state in order with the others,
    /// while one taken from here could be older than a state the socket
    /// has queued. The answer only tells whether anything changed: an
    /// action that changed nothing is broadcast to nobody, so a script
    /// waiting for the change would wait for ever.
    async fn act_over_http(&mut self, message: &Value) {
        let Some(kind) = message.get("type").and_then(Value::as_str) else {
            return;
        };
        if kind == "berserk" {
            // lichess's board route (Rookery's own API has none); the
            // state it changes (the clock, `berserk`) comes on the socket.
            match self.server.board_action(&self.id, "berserk").await {
                Ok(()) => self
                    .screen
                    .say("berserk: half your time, no increment, a point more on a win"),
                Err(why) => self.screen.complain(&why.to_string()),
            }
            return;
        }
        let (path, body) = match kind {
            "move" => ("move".to_string(), Some(json!({"uci": message["uci"]}))),
            // `draw_decline` is `draw/decline`, and so on.
            other => (other.replacen('_', "/", 1), None),
        };
        let before = self.state.as_ref().map(Snapshot::of);
        match self.server.seat_action(&self.id, &path, body).await {
            Ok(answer) if before.as_ref() == Some(&Snapshot::of(&answer)) => {}
            Ok(_) => self.awaiting_answer = before,
            Err(why) => self.screen.complain(&why.to_string()),
        }
    }
}
