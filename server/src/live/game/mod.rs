//! [`LiveGame`]: everything the server knows about one game, as a plain
//! state machine with no I/O. The chess rules stay in the engine's
//! [`Game`]; seats, clocks, the offers between players (draw, takeback,
//! rematch) and the endings players cause (resignation, agreement, abort,
//! timeout) live here.
//!
//! Every method either changes the game and returns `Ok`, or returns an
//! [`GameError`] and leaves it untouched. The actor runs a method on a copy,
//! writes the copy to the database, and only then replaces its state: so
//! nothing is acknowledged or broadcast before it is durable.
//!
//! The methods are grouped by concern, one file each (as lila's round splits
//! its Drawer, Takebacker, Rematcher and Finisher): this file holds the
//! game itself (creation, an imported history, restoring, moves);
//! `finish` the endings players cause and the expiry sweep's,
//! `seats` who sits where and who watches, `offers` draw offers and the
//! answers to every offer, `takebacks`, `rematch`, `timing` the
//! first-move rule, open seeks' grace and the flag, `view` the state sent
//! on the wire (for stored games too), and `error` why a change was refused.

mod berserk;
mod error;
mod finish;
mod offers;
mod rematch;
mod seats;
mod takebacks;
mod timing;
mod view;

use std::net::IpAddr;
use std::time::Duration;

use rookery_engine::game::Game;
use rookery_engine::{Move, Position, UciMoveError};
use tokio::time::Instant;
use uuid::Uuid;

use super::clock::Clock;
use crate::domain::{
    ClockRecord, Ending, GameRecord, GameSeat, PlayedMove, Rematch, SavedGame, Variant,
};
use crate::protocol::{
    ClockSettings, OfferAnswer, OfferKind, OfferOutcome, SeatKind, Side, Status, Visibility,
};
use crate::token::TokenHash;

pub use self::error::GameError;
pub use self::offers::Answer;
pub use self::rematch::RematchStep;
pub use self::timing::{Timing, SLOW_GAME_INITIAL_MS};

/// The shortest initial clock of a rated game. Below it a game is decided by
/// the network and the server's reaction time more than by chess (and a
/// first-move flag fall against the AI would be a free win), so it is
/// casual. Untimed games are rated.
pub const MIN_RATED_INITIAL_MS: u64 = 60_000;

/// Whether a game counts on the main scoreboard: it starts where every game
/// of its variant may start (the standard position, or one of Chess960's
/// 960: a custom FEN can hand one side a mate in one) and has no clock or
/// one of at least [`MIN_RATED_INITIAL_MS`].
fn counts_as_rated(game: &Game, clock: Option<ClockSettings>) -> bool {
    let fair = Variant::of(game).is_fair_start(game.initial_position());
    fair && clock.is_none_or(|clock| clock.initial_ms >= MIN_RATED_INITIAL_MS)
}

#[derive(Debug, Clone)]
pub struct LiveGame {
    pub id: Uuid,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// The last change written to the database, milliseconds since the Unix
    /// epoch (the expiry sweep's "idle since").
    pub updated_at: i64,
    game: Game,
    seats: [GameSeat; 2],
    clock_settings: Option<ClockSettings>,
    clock: Option<Clock>,
    ending: Option<Ending>,
    draw_offer: Option<Side>,
    /// The side asking to take its last move back, if any.
    takeback_offer: Option<Side>,
    /// Takebacks granted in this game.
    takebacks: u32,
    rematch: Option<Rematch>,
    spectators: u32,
    /// Whether the result counts on the main scoreboard (fixed at creation,
    /// except that a takeback granted by the computer makes a game casual).
    rated: bool,
    visibility: Visibility,
    /// The hash of a private game's invite secret.
    invite: Option<TokenHash>,
    /// The client (its rate-limit key) that created the game, when this
    /// run saw it do so: the AI scheduler serves the searches of different
    /// clients in turn. Not stored: a resumed game has none.
    pub client: Option<IpAddr>,
    /// Plies already played when the game was created (a game continued
    /// from an imported PGN); moves of this game are counted from here.
    start_ply: usize,
    /// The first-move rule's and the open seek's waits.
    timing: Timing,
    /// In a game with a clock, while the side to move has not yet made its
    /// first move: when its time for it began (its clock does not run).
    /// Not stored: after a restart the wait starts again.
    first_move_since: Option<Instant>,
    /// An open seek whose creator's last connection closed: since when.
    creator_gone_since: Option<Instant>,
    /// What became of an offer in the last change (sent with that change's
    /// state only, then cleared by the actor).
    offer_answer: Option<OfferAnswer>,
    /// The sides (white, black) that went berserk (an arena game's rule).
    berserk: [bool; 2],
}

impl LiveGame {
    /// A new game of `variant` from `fen` (`None`: the standard position).
    /// Fails on a bad FEN, or a start position where the game would already
    /// be over.
    pub fn new(
        id: Uuid,
        created_at: i64,
        seats: [SeatKind; 2],
        clock_settings: Option<ClockSettings>,
        variant: Variant,
        fen: Option<&str>,
    ) -> Result<LiveGame, GameError> {
        let mut game = match fen {
            None => Game::new(Position::startpos()),
            Some(fen) => Game::from_fen(fen).map_err(|err| GameError::BadFen(err.to_string()))?,
        };
        // The FEN reads the same in both variants (X-FEN or Shredder-FEN);
        // the variant decides how castling is spelled in UCI.
        game.set_castling_mode(variant.castling_mode());
        if let Some(outcome) = game.outcome() {
            return Err(GameError::OverBeforeStart(outcome.termination));
        }
        Ok(LiveGame {
            id,
            created_at,
            updated_at: created_at,
            rated: counts_as_rated(&game, clock_settings),
            game,
            seats: seats.map(GameSeat::new),
            clock: clock_settings.map(Clock::new),
            clock_settings,
            ending: None,
            draw_offer: None,
            takeback_offer: None,
            takebacks: 0,
            rematch: None,
            spectators: 0,
            visibility: Visibility::Open,
            invite: None,
            client: None,
            start_ply: 0,
            timing: Timing::default(),
            first_move_since: None,
            creator_gone_since: None,
            offer_answer: None,
            berserk: [false, false],
        })
    }

    /// Plays `moves` (UCI) on a new game before anyone has a seat: the game
    /// starts with them in its move list (an imported game continued). Such
    /// a game is casual, like every custom start.
    pub fn play_history(&mut self, moves: &[String]) -> Result<(), GameError> {
        if moves.is_empty() {
            return Ok(());
        }
        if !self.game.moves().is_empty() || self.status() != Status::Waiting && !self.is_ai_vs_ai()
        {
            return Err(GameError::Rejected(
                "a game's history is set before anyone plays it".into(),
            ));
        }
        for (ply, uci) in moves.iter().enumerate() {
            let mv = self
                .game
                .position()
                .parse_uci(uci)
                .map_err(|err| match err {
                    UciMoveError::Syntax(text) => {
                        GameError::NotUci(format!("moves[{ply}]: {text}"))
                    }
                    UciMoveError::Illegal(text) => {
                        GameError::Illegal(format!("moves[{ply}]: {text}"))
                    }
                })?;
            self.game
                .play(mv)
                .map_err(|err| GameError::Rejected(err.to_string()))?;
        }
        if let Some(outcome) = self.game.outcome() {
            return Err(GameError::OverBeforeStart(outcome.termination));
        }
        self.start_ply = self.game.moves().len();
        self.rated = false;
        Ok(())
    }

    /// The moves the game started with (see [`Self::play_history`]), for
    /// the database.
    pub fn history(&self) -> Vec<PlayedMove> {
        let mut replay = Game::new(self.game.initial_position().clone());
        let mut played = Vec::with_capacity(self.start_ply);
        for (ply, mv) in self.game.moves()[..self.start_ply].iter().enumerate() {
            let uci = replay.position().uci(*mv);
            if replay.play(*mv).is_err() {
                break;
            }
            played.push(PlayedMove {
                ply,
                mv: *mv,
                uci,
                san: replay.san_moves()[ply].clone(),
                clock_ms: None,
            });
        }
        played
    }

    pub fn start_ply(&self) -> usize {
        self.start_ply
    }

    /// Moves (plies) made in this game, not counting an imported history.
    fn plies_in_game(&self) -> usize {
        self.game.moves().len().saturating_sub(self.start_ply)
    }

    /// Whether `side` has made a move in this game (imported moves aside).
    pub fn has_moved(&self, side: Side) -> bool {
        match self.plies_in_game() {
            0 => false,
            1 => self.turn() != side,
            _ => true,
        }
    }

    /// Rebuilds a stored game: its seats, moves, clock and ending. A running
    /// clock restarts at `now`, already charged the time its side had spent
    /// thinking before the server stopped (`SavedClock::spent`); the time
    /// the server was down is charged to nobody.
    pub fn restore(saved: SavedGame, now: Instant) -> Result<LiveGame, String> {
        let mut game =
            Game::from_fen(&saved.initial_fen).map_err(|err| format!("stored FEN: {err}"))?;
        game.set_castling_mode(saved.variant.castling_mode());
        for (ply, uci) in saved.moves.iter().enumerate() {
            game.play_uci(uci)
                .map_err(|err| format!("stored move {ply} ({uci}): {err}"))?;
        }
        let moves_played = saved.moves.len();
        let clock = saved.clock_settings.map(|settings| {
            let mut clock = match saved.clock {
                Some(stored) => Clock::with_remaining(settings, stored.white_ms, stored.black_ms),
                None => Clock::new(settings),
            };
            clock.restore_berserk(saved.berserk);
            clock
        });
        let mut live = LiveGame {
            id: saved.id,
            created_at: saved.created_at,
            updated_at: saved.updated_at,
            rated: saved.rated,
            game,
            seats: saved.seats,
            clock_settings: saved.clock_settings,
            clock,
            ending: saved.ending,
            draw_offer: saved.draw_offer,
            takeback_offer: saved.takeback_offer,
            takebacks: saved.takebacks,
            rematch: saved.rematch,
            spectators: 0,
            visibility: saved.visibility,
            invite: saved.invite,
            client: None,
            start_ply: saved.start_ply.min(moves_played),
            timing: Timing::default(),
            first_move_since: None,
            creator_gone_since: None,
            offer_answer: None,
            berserk: saved.berserk,
        };
        if live.status() == Status::Active {
            let spent = saved.clock.map_or(Duration::ZERO, |c| c.spent);
            // `now - spent` may precede the process's first instant on some
            // platforms; then the turn starts now (nothing charged) rather
            // than panicking.
            live.start_clock(now.checked_sub(spent).unwrap_or(now));
        }
        Ok(live)
    }

    /// The game as it is written now: its record for the store.
    pub fn record(&self) -> GameRecord {
        GameRecord {
            id: self.id,
            created_at: self.created_at,
            seats: self.seats.clone(),
            variant: self.variant(),
            initial_fen: self.game.initial_position().to_fen(),
            fen: self.game.position().to_fen(),
            clock_settings: self.clock_settings,
            clock: self.clock.as_ref().map(|clock| {
                let (remaining, running) = clock.turn_start();
                ClockRecord {
                    remaining,
                    running_since: running.map(|(_, since)| since),
                }
            }),
            status: self.status(),
            ending: self.ending,
            draw_offer: self.draw_offer,
            takeback_offer: self.takeback_offer,
            takebacks: self.takebacks,
            rematch: self.rematch.clone(),
            rated: self.rated,
            visibility: self.visibility,
            invite: self.invite.clone(),
            start_ply: self.start_ply,
            berserk: self.berserk,
        }
    }

    pub fn status(&self) -> Status {
        if self.ending.is_some() {
            Status::Finished
        } else if self.seats.iter().any(GameSeat::is_free) {
            Status::Waiting
        } else {
            Status::Active
        }
    }

    pub fn is_finished(&self) -> bool {
        self.ending.is_some()
    }

    pub fn ending(&self) -> Option<Ending> {
        self.ending
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The rules this game is played by (kept by its engine game as the
    /// castling mode).
    pub fn variant(&self) -> Variant {
        Variant::of(&self.game)
    }

    pub fn clock_settings(&self) -> Option<ClockSettings> {
        self.clock_settings
    }

    pub fn turn(&self) -> Side {
        self.game.position().turn().into()
    }

    pub fn clock(&self) -> Option<&Clock> {
        self.clock.as_ref()
    }

    fn ensure_playing(&self) -> Result<(), GameError> {
        if self.is_finished() {
            return Err(GameError::GameOver);
        }
        if self.status() == Status::Waiting {
            return Err(GameError::NotStarted);
        }
        Ok(())
    }

    /// Plays `uci` for `side`. Ends the game when the move does (checkmate,
    /// stalemate, repetition, fifty moves, insufficient material).
    pub fn play(&mut self, side: Side, uci: &str, now: Instant) -> Result<PlayedMove, GameError> {
        self.ensure_playing()?;
        if side != self.turn() {
            return Err(GameError::NotYourTurn);
        }
        let mv = self
            .game
            .position()
            .parse_uci(uci)
            .map_err(|err| match err {
                UciMoveError::Syntax(text) => GameError::NotUci(text),
                UciMoveError::Illegal(text) => GameError::Illegal(text),
            })?;
        self.play_move(mv, now)
    }

    /// Plays a legal move for the side to move (the AI's path).
    pub fn play_move(&mut self, mv: Move, now: Instant) -> Result<PlayedMove, GameError> {
        let mover = self.turn();
        let ply = self.game.moves().len();
        let first_move = self.first_move_pending();
        // Spelled in the position it is played from, in the game's variant
        // (a Chess960 castle is king takes rook).
        let uci = self.game.position().uci(mv);
        self.game
            .play(mv)
            .map_err(|err| GameError::Rejected(err.to_string()))?;
        let san = self.game.san_moves()[ply].clone();
        if first_move {
            // A side's first move is free: no time charged, no increment;
            // the next turn starts (the opponent's first-move wait, or the
            // clocks once both sides have moved).
            self.start_clock(now);
        } else if let Some(clock) = &mut self.clock {
            clock.press(mover, now);
        }
        // A move declines the opponent's standing offer; the mover's own
        // offer stands until the opponent has moved in turn.
        if self.draw_offer == Some(mover.other()) {
            self.draw_offer = None;
            self.answer_offer(OfferKind::Draw, mover.other(), OfferOutcome::Declined);
        }
        // A takeback request is about the position it was made in.
        if let Some(asker) = self.takeback_offer.take() {
            self.answer_offer(OfferKind::Takeback, asker, OfferOutcome::Expired);
        }
        if let Some(outcome) = self.game.outcome() {
            self.finish(Ending::from_outcome(outcome), now);
        }
        let clock_ms = self.clock.as_ref().map(|clock| {
            let view = clock.view(now);
            (view.white_ms, view.black_ms)
        });
        Ok(PlayedMove {
            ply,
            mv,
            uci,
            san,
            clock_ms,
        })
    }
}

/// Helpers for the tests of every file of this module.
#[cfg(test)]
mod testing {
    use tokio::time::Instant;
    use uuid::Uuid;

    use super::LiveGame;
    use crate::protocol::{ClockSettings, SeatKind, Variant};
    use crate::token::mint;

    pub(super) fn human_game(clock: Option<ClockSettings>, fen: Option<&str>) -> LiveGame {
        LiveGame::new(
            Uuid::new_v4(),
            0,
            [SeatKind::Human, SeatKind::Human],
            clock,
            Variant::Standard,
            fen,
        )
        .unwrap()
    }

    pub(super) fn seated(mut live: LiveGame) -> LiveGame {
        let now = Instant::now();
        live.join(mint().unwrap().hash, None, None, now).unwrap();
        live.join(mint().unwrap().hash, None, None, now).unwrap();
        live
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{human_game, seated};
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn fools_mate_ends_the_game() {
        let mut live = seated(human_game(None, None));
        let now = Instant::now();
        for (side, uci) in [
            (Side::White, "f2f3"),
            (Side::Black, "e7e5"),
            (Side::White, "g2g4"),
        ] {
            live.play(side, uci, now).unwrap();
        }
        assert!(matches!(
            live.play(Side::White, "a2a3", now),
            Err(GameError::NotYourTurn)
        ));
        assert!(matches!(
            live.play(Side::Black, "e1e2", now),
            Err(GameError::Illegal(_))
        ));
        assert!(matches!(
            live.play(Side::Black, "zz", now),
            Err(GameError::NotUci(_))
        ));
        let played = live.play(Side::Black, "d8h4", now).unwrap();
        assert_eq!(played.san, "Qh4#");
        assert_eq!(played.ply, 3);
        let state = live.state(now);
        assert_eq!(state.status, Status::Finished);
        assert_eq!(state.result.as_deref(), Some("0-1"));
        assert_eq!(state.termination.as_deref(), Some("checkmate"));
        assert!(state.legal_moves.is_empty());
        assert!(state.check);
        assert!(matches!(
            live.play(Side::White, "a2a3", now),
            Err(GameError::GameOver)
        ));
        assert!(matches!(
            live.resign(Side::White, now),
            Err(GameError::GameOver)
        ));
        assert!(matches!(
            live.draw(Side::White, now),
            Err(GameError::GameOver)
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn a_game_may_start_with_an_imported_history() {
        let clock = Some(ClockSettings {
            initial_ms: 60_000,
            increment_ms: 0,
        });
        let mut live = human_game(clock, None);
        let moves: Vec<String> = ["e2e4", "c7c5", "g1f3"].map(String::from).into();
        live.play_history(&moves).unwrap();
        assert_eq!(live.start_ply(), 3);
        assert!(!live.is_rated());
        assert_eq!(live.history().len(), 3);
        assert_eq!(live.history()[1].san, "c5");
        let mut live = seated(live);
        let state = live.state(Instant::now());
        assert_eq!(state.moves, moves);
        assert_eq!(state.san, ["e4", "c5", "Nf3"]);
        // Black's first move in this game is still to come: free, and
        // the imported moves cannot be taken back.
        assert_eq!(state.clock.unwrap().running, None);
        assert!(state.first_move_ms.is_some());
        assert!(matches!(
            live.takeback(Side::White, Instant::now()),
            Err(GameError::NothingToTakeBack(_))
        ));
        live.abort_by_player(Instant::now()).unwrap();

        let mut bad = human_game(None, None);
        assert!(matches!(
            bad.play_history(&["e2e4".into(), "e2e4".into()]),
            Err(GameError::Illegal(_))
        ));
    }

    #[test]
    fn custom_starts_are_checked() {
        let seats = [SeatKind::Human, SeatKind::Human];
        assert!(matches!(
            LiveGame::new(
                Uuid::new_v4(),
                0,
                seats,
                None,
                Variant::Standard,
                Some("not a fen")
            ),
            Err(GameError::BadFen(_))
        ));
        // Already checkmated: refused.
        let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
        assert!(LiveGame::new(
            Uuid::new_v4(),
            0,
            seats,
            None,
            Variant::Standard,
            Some(mated)
        )
        .is_err());
        let live = LiveGame::new(
            Uuid::new_v4(),
            0,
            seats,
            None,
            Variant::Standard,
            Some("4k3/8/8/8/8/8/4P3/4K3 b - - 0 1"),
        )
        .unwrap();
        assert_eq!(live.turn(), Side::Black);
    }

    #[test]
    fn rated_needs_the_standard_start_and_a_minute() {
        let clock = |initial_ms| {
            Some(ClockSettings {
                initial_ms,
                increment_ms: 0,
            })
        };
        assert!(human_game(None, None).is_rated());
        assert!(human_game(clock(MIN_RATED_INITIAL_MS), None).is_rated());
        assert!(!human_game(clock(MIN_RATED_INITIAL_MS - 1), None).is_rated());
        assert!(!human_game(None, Some("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")).is_rated());
    }
}
