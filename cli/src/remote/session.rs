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

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use rookery_engine::{Color, Game};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

use super::client::{GameState, Seat, Server, REQUEST_TIMEOUT};
use super::inbox::Inbox;
use super::{describe_seat, format_ms};
use crate::command::{self, Command, HELP};
use crate::console::{Lines, Screen};
use crate::table::Table;

/// Reconnection attempts after the WebSocket drops, a second apart.
const RECONNECT_ATTEMPTS: u32 = 10;

/// Who is at the keyboard in an online session.
pub enum Participant {
    /// A seat whose token this client holds: played over the WebSocket.
    Player(Seat),
    /// The logged-in account's seat, without a token of its own: watched
    /// as a spectator, played over HTTP with the account's token.
    Account(Color),
    Spectator,
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
}

/// What a state must differ in to answer an action: its moves, its status,
/// its offers or its rematch. (Other states, such as a spectator arriving,
/// are not answers.)
#[derive(Debug, Clone, PartialEq, Eq)]
struct Snapshot {
    moves: Vec<String>,
    status: String,
    offers: Offers,
    rematch: Option<String>,
}

impl Snapshot {
    fn of(state: &GameState) -> Snapshot {
        Snapshot {
            moves: state.moves.clone(),
            status: state.status.clone(),
            offers: Offers::of(state),
            rematch: state.rematch.clone(),
        }
    }
}

/// The standing offers of a game: the side making each, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Offers {
    draw: Option<String>,
    takeback: Option<String>,
    rematch: Option<String>,
}

impl Offers {
    fn of(state: &GameState) -> Offers {
        Offers {
            draw: state.draw_offer.clone(),
            takeback: state.takeback_offer.clone(),
            rematch: state.rematch_offer.clone(),
        }
    }
}

/// The kinds of offer, with what the player is told about each.
#[derive(Debug, Clone, Copy)]
enum Offer {
    Draw,
    Takeback,
    Rematch,
}

impl Offer {
    const ALL: [Offer; 3] = [Offer::Draw, Offer::Takeback, Offer::Rematch];

    fn side(self, offers: &Offers) -> Option<&str> {
        match self {
            Offer::Draw => offers.draw.as_deref(),
            Offer::Takeback => offers.takeback.as_deref(),
            Offer::Rematch => offers.rematch.as_deref(),
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Offer::Draw => "draw offer",
            Offer::Takeback => "takeback request",
            Offer::Rematch => "rematch offer",
        }
    }

    /// `white offers a draw`, as a sentence's start.
    fn made_by(self, side: &str) -> String {
        match self {
            Offer::Draw => format!("{side} offers a draw"),
            Offer::Takeback => format!("{side} asks to take back their last move"),
            Offer::Rematch => format!("{side} offers a rematch"),
        }
    }

    /// How the opponent accepts.
    fn accept_word(self) -> &'static str {
        match self {
            Offer::Draw => "draw",
            Offer::Takeback => "takeback",
            Offer::Rematch => "rematch",
        }
    }

    /// The WebSocket message that declines or withdraws this offer.
    fn answer_type(self, decline: bool) -> &'static str {
        match (self, decline) {
            (Offer::Draw, true) => "draw_decline",
            (Offer::Draw, false) => "draw_withdraw",
            (Offer::Takeback, true) => "takeback_decline",
            (Offer::Takeback, false) => "takeback_withdraw",
            (Offer::Rematch, true) => "rematch_decline",
            (Offer::Rematch, false) => "rematch_withdraw",
        }
    }
}

/// How a reconnection ended.
enum Reconnected {
    Socket(Box<Socket>),
    /// The player quit while waiting.
    Quit,
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
        }
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
        mut held: Option<String>,
    ) -> Result<(), String> {
        if let Some(state) = first {
            self.apply_state(state);
        }
        let interactive = self.screen.interactive;
        let spectator = matches!(self.participant, Participant::Spectator);
        let mut socket = open_socket(&self.socket_url(), self.server.ws_connector()).await?;
        // A script's line read before its time waits in `held`.
        let scripted = !interactive && !spectator;
        loop {
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
                        return Ok(());
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
                return Ok(());
            }
            // A script that ended before the game began (while a challenge
            // waited for its answer) leaves as one that ends now would.
            if !spectator && inbox.done && held.is_none() && self.awaiting_answer.is_none() {
                return Ok(());
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
                            return Ok(());
                        }
                        match self.reconnect(&mut inbox).await? {
                            Reconnected::Socket(fresh) => socket = *fresh,
                            Reconnected::Quit => return Ok(()),
                        }
                    }
                },
                line = inbox.recv(), if inbox.waiting => match line {
                    Some(line) if scripted => held = Some(line),
                    Some(line) => {
                        if self.act(&line, &mut socket).await {
                            return Ok(());
                        }
                    }
                    // A piped spectator watches on to the end; Ctrl-D at
                    // a terminal, or a player's script ending, leaves.
                    None if spectator && !interactive => {}
                    None => return Ok(()),
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

    /// Leaves the finished game for the agreed rematch, seated as the server
    /// said, and opens the new game's WebSocket (its first frame brings the
    /// state).
    async fn move_to_rematch(&mut self, game: String, seat: Seat) -> Result<Socket, String> {
        self.screen
            .announce(&format!("rematch: game {game}, you play {}", seat.color));
        let mut table = Table::new(Game::default());
        table.flipped = seat.color == "black";
        self.table = table;
        self.id = game;
        self.participant = Participant::Player(seat);
        self.state = None;
        self.reported = 0;
        self.reported_status.clear();
        self.reported_offers = Offers::default();
        self.reported_rematch = None;
        self.awaiting_answer = None;
        open_socket(&self.socket_url(), self.server.ws_connector()).await
    }

    /// The game's WebSocket URL, with the seat token for a player.
    fn socket_url(&self) -> String {
        let token = match &self.participant {
            Participant::Player(seat) => Some(seat.token.as_str()),
            Participant::Account(_) | Participant::Spectator => None,
        };
        self.server.ws_url(&self.id, token)
    }

    /// The server went away (a restart, a network blip): the seat token
    /// still holds, so connect again, and the first frame brings the state.
    /// At a terminal the player can quit meanwhile; a script's lines wait.
    async fn reconnect(&mut self, inbox: &mut Inbox) -> Result<Reconnected, String> {
        self.screen
            .complain("connection to the server lost; reconnecting (type quit to leave)");
        let interactive = self.screen.interactive;
        let url = self.socket_url();
        let mut last = String::new();
        for _ in 0..RECONNECT_ATTEMPTS {
            let connector = self.server.ws_connector();
            let attempt = async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                open_socket(&url, connector).await
            };
            tokio::pin!(attempt);
            let connected = loop {
                if interactive {
                    inbox.request();
                }
                tokio::select! {
                    connected = &mut attempt => break connected,
                    line = inbox.recv(), if interactive && inbox.waiting => match line {
                        None => return Ok(Reconnected::Quit),
                        Some(line) if matches!(command::parse(&line), Ok(Some(Command::Quit))) => {
                            return Ok(Reconnected::Quit)
                        }
                        Some(_) => self.screen.complain("not connected to the server yet"),
                    },
                }
            };
            match connected {
                Ok(socket) => {
                    self.screen.say("reconnected");
                    // Its first frame brings the state as it is now.
                    self.stale_state = true;
                    // The state that arrives now is the truth; an action
                    // whose answer was lost with the connection may or may
                    // not have been taken, so don't wait for that answer.
                    if self.awaiting_answer.take().is_some() {
                        self.screen.complain(
                            "your last action was not confirmed before the connection dropped: check the board",
                        );
                    }
                    return Ok(Reconnected::Socket(Box::new(socket)));
                }
                Err(why) => last = why,
            }
        }
        Err(format!("gave up reconnecting: {last}"))
    }

    fn on_server_text(&mut self, text: &str) {
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            return;
        };
        match message.get("type").and_then(Value::as_str) {
            Some("state") => {
                self.stale_state = false;
                if let Some(game) = message.get("game") {
                    match serde_json::from_value::<GameState>(game.clone()) {
                        Ok(state) => self.apply_state(state),
                        Err(e) => self.screen.complain(&format!("unreadable game state: {e}")),
                    }
                }
            }
            // Our seat in the agreed rematch (sent to seats only).
            Some("rematch") if self.my_color().is_some() => {
                let text = |key: &str| message.get(key).and_then(Value::as_str).map(str::to_string);
                match (text("game"), text("color"), text("token")) {
                    (Some(game), Some(color), Some(token)) => {
                        self.rematch_seat = Some((game, Seat { color, token }));
                    }
                    _ => self
                        .screen
                        .complain("unreadable rematch seat from the server"),
                }
            }
            Some("error") => {
                self.awaiting_answer = None;
                let code = message
                    .get("code")
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                let text = message.get("message").and_then(Value::as_str).unwrap_or("");
                self.screen
                    .complain(&format!("server says: {text} ({code})"));
            }
            // Message types this client does not know are for newer clients.
            _ => {}
        }
    }

    /// Takes in a state from the server: rebuilds the game and reports what
    /// changed.
    fn apply_state(&mut self, state: GameState) {
        let mut game = match Game::from_fen(&state.initial_fen) {
            Ok(game) => game,
            Err(e) => {
                self.screen
                    .complain(&format!("the server's start position is unreadable: {e}"));
                return;
            }
        };
        for uci in &state.moves {
            if game.play_uci(uci).is_err() {
                self.screen.complain(&format!(
                    "the server's move {uci} is not legal here; ignoring the state"
                ));
                return;
            }
        }
        if game.moves().len() < self.reported {
            if self.state.is_some() && game.moves().len() + 2 >= self.reported {
                self.screen.say("moves taken back");
            }
            self.reported = 0;
        }
        self.table.game = game;
        self.table.forget_stale_pick();
        let first = self.state.is_none();
        let status_changed = self.reported_status != state.status;
        let offers = Offers::of(&state);
        let new_moves = self.table.game.moves().len() > self.reported;
        if self
            .awaiting_answer
            .as_ref()
            .is_some_and(|before| *before != Snapshot::of(&state))
        {
            self.awaiting_answer = None;
        }
        self.state = Some(state.clone());

        if first {
            self.screen.say(&format!(
                "game {}: {} (white) v {} (black)",
                state.id,
                describe_seat(&state.white),
                describe_seat(&state.black)
            ));
            match self.my_color() {
                Some(color) => self.screen.say(&format!("you play {color}")),
                None => self.screen.say("watching"),
            }
        }
        for index in self.reported..self.table.game.moves().len() {
            if let Some(line) = self.table.numbered_san(index) {
                self.screen.say(&line);
            }
        }
        self.reported = self.table.game.moves().len();
        if status_changed {
            match state.status.as_str() {
                "waiting" => self.screen.say("waiting for an opponent to join"),
                "active" if !first => self.screen.say("both players are here: the game is on"),
                "finished" => {
                    let result = state.result.clone().unwrap_or_else(|| "*".into());
                    let why = state
                        .termination
                        .clone()
                        .unwrap_or_default()
                        .replace('_', " ");
                    self.screen
                        .announce(&format!("game over: {result} ({why})"));
                }
                _ => {}
            }
            self.reported_status = state.status.clone();
        }
        for offer in Offer::ALL {
            let before = offer.side(&self.reported_offers).map(str::to_string);
            self.report_offer(offer, before.as_deref(), offer.side(&offers), &state);
        }
        self.reported_offers = offers;
        if state.rematch != self.reported_rematch {
            if let Some(id) = &state.rematch {
                self.screen.say(&format!("rematch agreed: game {id}"));
            }
            self.reported_rematch = state.rematch.clone();
        }
        if self.screen.interactive && (first || new_moves || status_changed) {
            self.show();
        }
    }

    /// Tells the player how one standing offer changed.
    fn report_offer(
        &mut self,
        offer: Offer,
        before: Option<&str>,
        now: Option<&str>,
        state: &GameState,
    ) {
        if before == now {
            return;
        }
        let mine = self.my_color().map(|c| c.name());
        match now {
            Some(side) if Some(side) == mine => {
                self.screen.say(&format!("your {} stands", offer.noun()))
            }
            Some(side) => {
                let account = matches!(self.participant, Participant::Account(_));
                let how = match offer {
                    _ if mine.is_none() => String::new(),
                    Offer::Rematch if account => {
                        ": type decline, or challenge them again (rookery challenge NAME)".into()
                    }
                    _ => format!(": type {} to accept, or decline", offer.accept_word()),
                };
                self.screen.say(&format!("{}{how}", offer.made_by(side)));
            }
            // An offer that ends with the game, or a rematch that was
            // agreed, needs no word of its own.
            None if state.rematch.is_some() => {}
            None if state.status == "finished" && !matches!(offer, Offer::Rematch) => {}
            None => self.screen.say(&format!("the {} is gone", offer.noun())),
        }
    }

    fn status_lines(&self) -> String {
        let Some(state) = &self.state else {
            return String::new();
        };
        let mut out = String::new();
        if let Some(clock) = &state.clock {
            let mark = |color: &str| {
                if clock.running.as_deref() == Some(color) {
                    " (running)"
                } else {
                    ""
                }
            };
            out.push_str(&format!(
                "clock: white {}{}, black {}{}\n",
                format_ms(clock.white_ms),
                mark("white"),
                format_ms(clock.black_ms),
                mark("black")
            ));
        }
        if let Some(mut spectators) = state.spectators {
            // An account's seat is played from a spectator's connection:
            // this one is not a spectator to its player. (An opponent who
            // plays the same way is counted: nothing tells them apart.)
            if matches!(self.participant, Participant::Account(_)) {
                spectators = spectators.saturating_sub(1);
            }
            if spectators > 0 {
                out.push_str(&format!("spectators: {spectators}\n"));
            }
        }
        out
    }

    fn show(&mut self) {
        let extra = self.status_lines();
        let text = self.table.render(self.screen.look, &extra);
        self.screen.say(&text);
        let status = match &self.state {
            Some(state) if state.status == "finished" => None,
            Some(state) if state.status == "waiting" => Some("waiting for an opponent".to_string()),
            Some(_) if self.my_turn() => Some("your move".to_string()),
            Some(state) => Some(format!("{} to move", state.turn)),
            None => None,
        };
        if let Some(status) = status {
            self.screen.announce(&status);
        }
    }

    fn check_can_move(&self) -> Result<Color, String> {
        let Some(color) = self.my_color() else {
            return Err("spectators cannot move".into());
        };
        match &self.state {
            Some(state) if state.status == "finished" => Err("the game is over".into()),
            Some(state) if state.status == "waiting" => {
                Err("waiting for an opponent to join".into())
            }
            Some(_) if !self.my_turn() => Err("it is not your turn".into()),
            Some(_) => Ok(color),
            None => Err("the game has not arrived yet".into()),
        }
    }

    async fn handle_line(&mut self, line: &str) -> Result<Flow, String> {
        let Some(command) = command::parse(line)? else {
            return Ok(Flow::Continue);
        };
        match command {
            Command::Move(text) => {
                self.check_can_move()?;
                let mv = self.table.parse_move(&text)?;
                self.table.picked = None;
                Ok(Flow::Send(json!({"type": "move", "uci": mv.to_uci()})))
            }
            Command::Pick(sq) => {
                let color = self.check_can_move()?;
                let said = self.table.pick(sq, color)?;
                self.screen.say(&said);
                let extra = self.status_lines();
                let text = self.table.render(self.screen.look, &extra);
                self.screen.say(&text);
                Ok(Flow::Continue)
            }
            Command::Place(sq, promotion) => {
                self.check_can_move()?;
                match self.table.place(sq, promotion)? {
                    Some(mv) => Ok(Flow::Send(json!({"type": "move", "uci": mv.to_uci()}))),
                    None => {
                        self.screen.say(&format!("put back on {sq}"));
                        Ok(Flow::Continue)
                    }
                }
            }
            Command::Info(sq) => {
                let text = self.table.info(sq);
                self.screen.say(&text);
                Ok(Flow::Continue)
            }
            Command::Board => {
                self.show();
                Ok(Flow::Continue)
            }
            Command::Flip => {
                self.table.flipped = !self.table.flipped;
                self.show();
                Ok(Flow::Continue)
            }
            // A seat's actions on the game in play: one message each.
            Command::Undo | Command::Abort | Command::Resign | Command::Draw => {
                self.check_seat()?;
                let kind = match command {
                    Command::Undo => "takeback",
                    Command::Abort => "abort",
                    Command::Resign => "resign",
                    _ => "draw",
                };
                Ok(Flow::Send(json!({ "type": kind })))
            }
            Command::Rematch => {
                if self.my_color().is_none() {
                    return Err("spectators cannot do that".into());
                }
                if !self.finished() {
                    return Err("a rematch is offered once the game is over".into());
                }
                if matches!(self.participant, Participant::Account(_)) {
                    // The server gives a rematch's seat to a seat token
                    // (over HTTP) or to the seat's own WebSocket: neither
                    // is this client's in an account's game.
                    return Err("a game played through your account gets no rematch from \
                         the terminal: challenge them again (rookery challenge NAME)"
                        .into());
                }
                Ok(Flow::Send(json!({"type": "rematch"})))
            }
            Command::Decline | Command::Withdraw => {
                let decline = matches!(command, Command::Decline);
                let Some(mine) = self.my_color().map(|c| c.name()) else {
                    return Err("spectators cannot do that".into());
                };
                let offers = self.state.as_ref().map(Offers::of).unwrap_or_default();
                let standing = Offer::ALL.into_iter().find(|offer| {
                    offer
                        .side(&offers)
                        .is_some_and(|side| (side != mine) == decline)
                });
                match standing {
                    Some(offer) => Ok(Flow::Send(json!({"type": offer.answer_type(decline)}))),
                    None if decline => Err("there is no offer to decline".into()),
                    None => Err("you have no offer to withdraw".into()),
                }
            }
            Command::Load(_) => Err("load is for local games (rookery play --pgn FILE)".into()),
            Command::Save(path) => {
                let pgn = self.server.pgn(&self.id).await.map_err(|e| e.to_string())?;
                std::fs::write(&path, pgn)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                self.screen.say(&format!("saved {}", path.display()));
                Ok(Flow::Continue)
            }
            Command::Help => {
                self.screen.say(HELP);
                Ok(Flow::Continue)
            }
            Command::Quit => Ok(Flow::Quit),
        }
    }

    fn check_seat(&self) -> Result<(), String> {
        if self.my_color().is_none() {
            return Err("spectators cannot do that".into());
        }
        if self.finished() {
            return Err("the game is over".into());
        }
        Ok(())
    }
}

/// Opens a game's WebSocket (`ws://`, or `wss://` through `connector`'s
/// TLS), within the request time limit.
async fn open_socket(url: &str, connector: tokio_tungstenite::Connector) -> Result<Socket, String> {
    let connect =
        tokio_tungstenite::connect_async_tls_with_config(url, None, false, Some(connector));
    match tokio::time::timeout(REQUEST_TIMEOUT, connect).await {
        Ok(Ok((socket, _))) => Ok(socket),
        Ok(Err(e)) => Err(format!(
            "cannot open the game's WebSocket: {}",
            super::client::describe(&e)
        )),
        Err(_) => Err("timed out opening the game's WebSocket".into()),
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// What the loop does after a line.
enum Flow {
    Continue,
    Send(Value),
    Quit,
}
