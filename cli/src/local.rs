//! `rookery play` without a server: against the engine on this machine, or
//! two people passing the keyboard (`--human`).
//!
//! The engine thinks within its level's own limits on a thread of its own,
//! so that a failing search is reported rather than taking the session
//! down; the session waits for it, there being nothing else to do meanwhile.
//! Ctrl-C while it thinks ends the program (the terminal is not in raw mode
//! then, so it is left as it was found); Ctrl-C or Ctrl-D at the prompt
//! quits cleanly.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use rookery_engine::level::{self, Level};
use rookery_engine::{ai, read_pgn, write_pgn, Color, Game, Move, Outcome, Position, Termination};

use crate::command::{self, Command, HELP};
use crate::console::{Lines, Screen};
use crate::table::Table;

/// How a local game is set up.
pub struct LocalSetup {
    /// `None`: two humans at one keyboard.
    pub engine: Option<&'static Level>,
    /// The colour the human plays against the engine.
    pub human_color: Color,
    pub game: Game,
    /// An ending recorded in a loaded PGN file that the moves do not show.
    pub ending: Option<Ending>,
}

/// How a game ended, as far as this session knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    result: &'static str,
    reason: String,
}

impl Ending {
    fn from_outcome(outcome: Outcome) -> Ending {
        let reason = match (outcome.termination, outcome.winner) {
            (Termination::Checkmate, Some(winner)) => format!("checkmate, {winner} wins"),
            (Termination::Resignation, Some(winner)) => format!("{} resigns", !winner),
            (Termination::Agreement, _) => "draw agreed".to_string(),
            (termination, _) => termination.as_str().replace('_', " "),
        };
        Ending {
            result: outcome.result(),
            reason,
        }
    }
}

pub struct LocalSession {
    table: Table,
    engine: Option<&'static Level>,
    human_color: Color,
    ending: Option<Ending>,
    /// The side whose draw offer stands (two-human games).
    draw_offer: Option<Color>,
    screen: Screen,
}

impl LocalSession {
    pub fn new(setup: LocalSetup, screen: Screen) -> LocalSession {
        let mut table = Table::new(setup.game);
        table.flipped = setup.engine.is_some() && setup.human_color == Color::Black;
        let mut session = LocalSession {
            table,
            engine: setup.engine,
            human_color: setup.human_color,
            ending: None,
            draw_offer: None,
            screen,
        };
        session.ending = setup.ending.or_else(|| session.automatic_ending());
        session
    }

    fn is_engine_turn(&self) -> bool {
        self.engine.is_some() && self.table.position().turn() != self.human_color
    }

    /// The colour whose pieces the keyboard moves now.
    fn mover(&self) -> Color {
        match self.engine {
            Some(_) => self.human_color,
            None => self.table.position().turn(),
        }
    }

    fn automatic_ending(&self) -> Option<Ending> {
        self.table.game.outcome().map(Ending::from_outcome)
    }

    /// Runs the session until `quit` or the end of input.
    pub fn run(&mut self, lines: &mut Lines) {
        self.greet();
        loop {
            if self.ending.is_none() && self.is_engine_turn() {
                self.engine_move();
                continue;
            }
            let Some(line) = lines.next() else {
                break;
            };
            match command::parse(&line) {
                Ok(None) => {}
                Ok(Some(Command::Quit)) => break,
                Ok(Some(command)) => {
                    if let Err(why) = self.execute(command) {
                        self.screen.complain(&why);
                    }
                }
                Err(why) => self.screen.complain(&why),
            }
        }
    }

    fn greet(&mut self) {
        if !self.screen.interactive {
            return;
        }
        let who = match self.engine {
            Some(level) => format!(
                "You play {} against the engine at level {} ({}).",
                self.human_color, level.number, level.name
            ),
            None => "Two players at one keyboard: each side moves in turn.".to_string(),
        };
        self.screen.say(&format!(
            "{who} Type a move like e4, or help for the commands."
        ));
        self.show();
    }

    /// The board with whose turn it is, on a terminal.
    fn show(&mut self) {
        let status = match &self.ending {
            Some(ending) => format!("game over: {} ({})\n", ending.result, ending.reason),
            None => {
                let turn = self.table.position().turn();
                if self.engine.is_some() && turn == self.human_color {
                    format!("your move ({turn})\n")
                } else {
                    format!("{turn} to move\n")
                }
            }
        };
        let text = self.table.render(self.screen.look, "");
        self.screen.say(&text);
        self.screen.announce(status.trim_end());
    }

    fn execute(&mut self, command: Command) -> Result<(), String> {
        match command {
            Command::Move(text) => {
                self.check_can_move()?;
                let mv = self.table.parse_move(&text)?;
                self.play(mv);
            }
            Command::Pick(sq) => {
                self.check_can_move()?;
                let said = self.table.pick(sq, self.mover())?;
                self.screen.say(&said);
                let text = self.table.render(self.screen.look, "");
                self.screen.say(&text);
            }
            Command::Place(sq, promotion) => {
                self.check_can_move()?;
                match self.table.place(sq, promotion)? {
                    Some(mv) => self.play(mv),
                    None => {
                        self.screen.say(&format!("put back on {sq}"));
                        if self.screen.interactive {
                            self.show();
                        }
                    }
                }
            }
            Command::Info(sq) => {
                let text = self.table.info(sq);
                self.screen.say(&text);
            }
            Command::Board => self.show(),
            Command::Flip => {
                self.table.flipped = !self.table.flipped;
                self.show();
            }
            Command::Undo => self.undo()?,
            Command::Save(path) => {
                let pgn = self.pgn();
                std::fs::write(&path, pgn)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                self.screen.say(&format!("saved {}", path.display()));
            }
            Command::Load(path) => {
                let (game, ending) = load_pgn(&path)?;
                self.table = Table {
                    game,
                    flipped: self.table.flipped,
                    picked: None,
                };
                self.draw_offer = None;
                self.ending = ending.or_else(|| self.automatic_ending());
                self.screen.say(&format!(
                    "loaded {} ({} moves)",
                    path.display(),
                    self.table.game.moves().len()
                ));
                self.after_change(false);
            }
            Command::Resign => {
                self.check_not_over()?;
                let loser = self.mover();
                self.end(Ending::from_outcome(Outcome::win(
                    !loser,
                    Termination::Resignation,
                )));
            }
            Command::Draw => {
                self.check_not_over()?;
                let me = self.mover();
                match (self.engine, self.draw_offer) {
                    (Some(_), _) => {
                        return Err("the engine declines draw offers: play on, or resign".into())
                    }
                    (None, Some(offerer)) if offerer != me => {
                        self.end(Ending::from_outcome(Outcome::draw(Termination::Agreement)));
                    }
                    (None, Some(_)) => self.screen.say("your draw offer stands"),
                    (None, None) => {
                        self.draw_offer = Some(me);
                        self.screen.say(&format!(
                            "{me} offers a draw: {} accepts by typing draw, or declines by moving",
                            !me
                        ));
                    }
                }
            }
            Command::Decline | Command::Withdraw => {
                self.check_not_over()?;
                let me = self.mover();
                let decline = command == Command::Decline;
                match self.draw_offer {
                    Some(offerer) if (offerer != me) == decline => {
                        self.draw_offer = None;
                        self.screen.say(if decline {
                            "draw offer declined"
                        } else {
                            "draw offer withdrawn"
                        });
                    }
                    _ if decline => return Err("there is no offer to decline".into()),
                    _ => return Err("you have no offer to withdraw".into()),
                }
            }
            Command::Abort | Command::Rematch => {
                return Err(
                    "abort and rematch are for online games (here: resign, or start a new game)"
                        .into(),
                )
            }
            Command::Berserk => {
                return Err("berserk is for arena games (rookery arena join)".into())
            }
            Command::Help => self.screen.say(HELP),
            Command::Quit => {}
        }
        Ok(())
    }

    fn check_not_over(&self) -> Result<(), String> {
        match &self.ending {
            Some(ending) => Err(format!(
                "the game is over ({} {}): undo or load to go on, quit to leave",
                ending.result, ending.reason
            )),
            None => Ok(()),
        }
    }

    fn check_can_move(&self) -> Result<(), String> {
        self.check_not_over()?;
        if self.is_engine_turn() {
            return Err("it is the engine's turn".into());
        }
        Ok(())
    }

    /// Plays a legal move for the side to move and reports it.
    fn play(&mut self, mv: Move) {
        let mover = self.table.position().turn();
        if self.table.game.play(mv).is_err() {
            // The table only hands out legal moves; refusing is still safe.
            self.screen.complain(&format!("illegal move here: {mv}"));
            return;
        }
        if self.draw_offer.is_some_and(|offerer| offerer != mover) {
            self.draw_offer = None;
            self.screen.say("draw offer declined");
        }
        self.after_change(true);
    }

    /// Reports the game after it changed: the board on a terminal; in a
    /// pipe the move just played (`moved`) and the end, if it came.
    fn after_change(&mut self, moved: bool) {
        self.table.forget_stale_pick();
        if self.ending.is_none() {
            self.ending = self.automatic_ending();
        }
        let count = self.table.game.moves().len();
        if self.screen.interactive {
            self.show();
        } else {
            if let Some(line) = count
                .checked_sub(1)
                .filter(|_| moved)
                .and_then(|i| self.table.numbered_san(i))
            {
                self.screen.say(&line);
            }
            if let Some(ending) = self.ending.clone() {
                self.screen
                    .say(&format!("game over: {} ({})", ending.result, ending.reason));
            }
        }
    }

    fn end(&mut self, ending: Ending) {
        self.screen
            .announce(&format!("game over: {} ({})", ending.result, ending.reason));
        self.ending = Some(ending);
    }

    /// The engine's reply, searched on its own thread with the level's own
    /// limits.
    fn engine_move(&mut self) {
        let Some(level) = self.engine else {
            return;
        };
        if self.screen.interactive {
            self.screen.say("engine is thinking...");
        }
        let position: Position = self.table.position().clone();
        let history = self.table.game.hashes().to_vec();
        let search = std::thread::spawn(move || {
            // Nothing stops a search early here: the level's limits end it.
            let never = AtomicBool::new(false);
            ai::choose_move(&position, &history, level, None, &never)
        });
        match search.join() {
            Ok(Some(mv)) => self.play(mv),
            // No legal move means the game was over; the automatic ending
            // catches that, so this is only reached on a search panic.
            Ok(None) | Err(_) => {
                self.screen.complain("the engine could not move");
                self.ending = Some(Ending {
                    result: "*",
                    reason: "engine failure".into(),
                });
            }
        }
    }

    /// Takes back the last move, and against the engine its reply too, so
    /// it is the human's turn again.
    fn undo(&mut self) -> Result<(), String> {
        let moves = self.table.game.moves().to_vec();
        if moves.is_empty() {
            return Err("nothing to undo".into());
        }
        let mut keep = moves.len() - 1;
        if self.engine.is_some() {
            let initial_turn = self.table.game.initial_position().turn();
            let turn_after = |plies: usize| {
                if plies % 2 == 0 {
                    initial_turn
                } else {
                    !initial_turn
                }
            };
            while keep > 0 && turn_after(keep) != self.human_color {
                keep -= 1;
            }
            if turn_after(keep) != self.human_color {
                return Err("nothing of yours to undo".into());
            }
        }
        let mut game = Game::new(self.table.game.initial_position().clone());
        for mv in &moves[..keep] {
            if game.play(*mv).is_err() {
                return Err("the game's history is inconsistent; nothing undone".into());
            }
        }
        self.table.game = game;
        self.table.picked = None;
        self.draw_offer = None;
        self.ending = self.automatic_ending();
        self.screen.say(&format!(
            "took back {} move{}",
            moves.len() - keep,
            if moves.len() - keep == 1 { "" } else { "s" }
        ));
        if self.screen.interactive {
            self.show();
        }
        Ok(())
    }

    fn player_name(&self, color: Color) -> String {
        match self.engine {
            Some(level) if color != self.human_color => {
                format!("Rookery level {} ({})", level.number, level.name)
            }
            Some(_) => "You".into(),
            None => format!("Player {}", if color == Color::White { 1 } else { 2 }),
        }
    }

    fn pgn(&self) -> String {
        let tags = vec![
            ("Event".to_string(), "Rookery terminal game".to_string()),
            ("Site".to_string(), "rookery".to_string()),
            ("Date".to_string(), pgn_date()),
            ("White".to_string(), self.player_name(Color::White)),
            ("Black".to_string(), self.player_name(Color::Black)),
        ];
        let (result, termination) = match &self.ending {
            Some(ending) => (ending.result, Some("normal")),
            None => ("*", None),
        };
        write_pgn(&tags, &self.table.game, result, termination)
    }
}

/// Reads a PGN file: its game and, when the file records a result the moves
/// do not explain (a resignation, a time forfeit), that ending.
pub fn load_pgn(path: &Path) -> Result<(Game, Option<Ending>), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let pgn =
        read_pgn(&text).map_err(|e| format!("{} is not readable PGN: {e}", path.display()))?;
    let recorded = match pgn.result() {
        Some("1-0") => Some("1-0"),
        Some("0-1") => Some("0-1"),
        Some("1/2-1/2") => Some("1/2-1/2"),
        _ => None,
    };
    let ending = match (recorded, pgn.game.outcome()) {
        (Some(result), None) => Some(Ending {
            result,
            reason: "as recorded in the file".into(),
        }),
        _ => None,
    };
    Ok((pgn.game, ending))
}

/// Today's date in PGN's `YYYY.MM.DD`, from the system clock (UTC).
fn pgn_date() -> String {
    let Ok(since_epoch) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) else {
        return "????.??.??".into();
    };
    let days = (since_epoch.as_secs() / 86_400) as i64;
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}.{m:02}.{d:02}")
}

/// Days since 1970-01-01 to a proleptic Gregorian date: eras of 400 years
/// (146,097 days) repeat exactly, so the date is found within one era.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The level numbered `number`, or why not.
pub fn engine_level(number: u8) -> Result<&'static Level, String> {
    level::level(number).ok_or_else(|| format!("level {number} does not exist (1 to 8)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_415), (2025, 11, 23));
    }
}
