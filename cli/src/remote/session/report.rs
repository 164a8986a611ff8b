//! What the player sees of the game: a state from the server taken in
//! (the game rebuilt from its moves), the new moves, the status and the
//! offers reported as they change, and the board drawn with the clocks
//! and the spectators under it.

use rookery_engine::{CastlingMode, Game};

use super::offers::{Offer, Offers, Snapshot};
use super::{Participant, RemoteSession};
use crate::remote::client::GameState;
use crate::remote::{describe_seat, format_ms};

impl RemoteSession {
    /// Takes in a state from the server: rebuilds the game and reports what
    /// changed.
    pub(super) fn apply_state(&mut self, state: GameState) {
        let mut game = match Game::from_fen(&state.initial_fen) {
            Ok(game) => game,
            Err(e) => {
                self.screen
                    .complain(&format!("the server's start position is unreadable: {e}"));
                return;
            }
        };
        if state.is_chess960() {
            game.set_castling_mode(CastlingMode::Chess960);
        }
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

    pub(super) fn status_lines(&self) -> String {
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

    pub(super) fn show(&mut self) {
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
}
