//! The player's typed commands in an online game: each becomes a message
//! for the server (a move, resign, an offer or its answer), something shown
//! here (pick, info, board, flip, help), a saved PGN, or the end of the
//! session; or is refused with the reason.

use rookery_engine::Color;
use serde_json::{json, Value};

use super::offers::{Offer, Offers};
use super::{Participant, RemoteSession};
use crate::command::{self, Command, HELP};

/// What the loop does after a line.
pub(super) enum Flow {
    Continue,
    Send(Value),
    Quit,
}

impl RemoteSession {
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

    pub(super) async fn handle_line(&mut self, line: &str) -> Result<Flow, String> {
        let Some(command) = command::parse(line)? else {
            return Ok(Flow::Continue);
        };
        match command {
            Command::Move(text) => {
                self.check_can_move()?;
                let mv = self.table.parse_move(&text)?;
                self.table.picked = None;
                Ok(Flow::Send(
                    json!({"type": "move", "uci": self.table.uci(mv)}),
                ))
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
                    Some(mv) => Ok(Flow::Send(
                        json!({"type": "move", "uci": self.table.uci(mv)}),
                    )),
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
            Command::Berserk => {
                self.check_seat()?;
                if !matches!(self.participant, Participant::Account(_)) {
                    return Err(
                        "berserk is for arena games, played through your account (rookery arena join)"
                            .into(),
                    );
                }
                Ok(Flow::Send(json!({"type": "berserk"})))
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
