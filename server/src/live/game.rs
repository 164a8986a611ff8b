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

use std::net::IpAddr;
use std::time::Duration;

use rookery_engine::game::{Game, Outcome, Termination};
use rookery_engine::{Move, Position, UciMoveError};
use tokio::time::Instant;
use uuid::Uuid;

use super::clock::{millis, Clock};
use crate::protocol::{
    ClockSettings, GameState, OfferAnswer, OfferKind, OfferOutcome, SeatKind, SeatRating, SeatView,
    Side, Status, Visibility,
};
use crate::token::TokenHash;

/// The waits of the first-move rule and of open seeks (issue 22), set by
/// the server's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// How long a side has for its first move in a game with a clock before
    /// the game is aborted (doubled for clocks of [`SLOW_GAME_INITIAL_MS`]
    /// or more).
    pub first_move: Duration,
    /// How long an open seek stays listed after its creator's last
    /// connection closed (a reload reconnects well within it).
    pub seek_grace: Duration,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            first_move: Duration::from_secs(30),
            seek_grace: Duration::from_secs(10),
        }
    }
}

/// Clocks from this initial time on get twice [`Timing::first_move`].
pub const SLOW_GAME_INITIAL_MS: u64 = 15 * 60 * 1000;

/// The shortest initial clock of a rated game. Below it a game is decided by
/// the network and the server's reaction time more than by chess (and a
/// first-move flag fall against the AI would be a free win), so it is
/// casual. Untimed games are rated.
pub const MIN_RATED_INITIAL_MS: u64 = 60_000;

/// Whether a game counts on the main scoreboard: it starts from the standard
/// position (a custom FEN can hand one side a mate in one) and has no clock
/// or one of at least [`MIN_RATED_INITIAL_MS`].
fn counts_as_rated(game: &Game, clock: Option<ClockSettings>) -> bool {
    let standard = game.initial_position().to_fen() == Position::startpos().to_fen();
    standard && clock.is_none_or(|clock| clock.initial_ms >= MIN_RATED_INITIAL_MS)
}

/// A rematch of a finished game, offered or agreed.
///
/// The new game's id is chosen when the rematch is first offered, so the
/// offerer's seat token in it can be fixed then: a seat token of a rematch
/// is derived from the player's seat token in this game and the new id
/// ([`crate::token::rematch_token`]), and the server keeps only its hash
/// until the new game is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rematch {
    pub game: Uuid,
    pub offered_by: Side,
    /// The hash of the offerer's seat token in the new game.
    pub offerer_token: TokenHash,
    /// Both players agreed: the new game exists.
    pub agreed: bool,
}

/// What [`LiveGame::offer_rematch`] did.
#[derive(Debug)]
pub enum RematchStep {
    /// Nothing new (the caller's own standing offer, or an agreed rematch
    /// asked for again): nothing to write.
    Unchanged,
    Offered,
    /// Agreed now: the new game, to store with this one.
    Agreed(Box<LiveGame>),
}

/// Why a [`LiveGame`] refused a change. The game is untouched. The HTTP
/// and WebSocket answers are built from it by `From<GameError> for
/// ApiError`, which decides each code; the messages here are the ones the
/// client reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error("bad FEN: {0}")]
    BadFen(String),
    #[error("the game would be over before it starts ({0})")]
    OverBeforeStart(Termination),
    #[error("the game is over")]
    GameOver,
    #[error("no free seat in this game")]
    SeatTaken,
    #[error("this game is private: joining needs the invite secret from the creator's link")]
    InviteRequired,
    #[error("this invite secret does not open this game")]
    WrongInvite,
    #[error("you already hold the other seat of this game: a player cannot play themselves")]
    SamePlayer,
    #[error("the game has not started: waiting for an opponent to join")]
    NotStarted,
    #[error("it is not your turn")]
    NotYourTurn,
    #[error("not a move in UCI notation: {0:?}")]
    NotUci(String),
    #[error("{0} is not legal in this position")]
    Illegal(String),
    /// The engine refused a move given as a `Move` (the AI's path).
    #[error("{0}")]
    Rejected(String),
    #[error("{0}")]
    NothingToTakeBack(String),
    #[error("each side has moved: the game can no longer be aborted (resign instead)")]
    AbortTooLate,
    #[error("{0}")]
    NoRematch(String),
}

/// A registered player holding a seat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerRef {
    pub id: String,
    pub name: String,
    /// The rating the seat shows (see [`SeatRating`]).
    pub rating: SeatRating,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveSeat {
    Human {
        /// `None` while the seat is free.
        token: Option<TokenHash>,
        player: Option<PlayerRef>,
        /// Open WebSocket connections authenticated for this seat.
        connections: u32,
    },
    Ai {
        level: u8,
    },
}

impl LiveSeat {
    pub fn new(kind: SeatKind) -> LiveSeat {
        match kind {
            SeatKind::Human => LiveSeat::Human {
                token: None,
                player: None,
                connections: 0,
            },
            SeatKind::Ai { level } => LiveSeat::Ai { level },
        }
    }

    pub fn is_free(&self) -> bool {
        matches!(self, LiveSeat::Human { token: None, .. })
    }

    pub fn ai_level(&self) -> Option<u8> {
        match self {
            LiveSeat::Ai { level } => Some(*level),
            LiveSeat::Human { .. } => None,
        }
    }

    pub fn player(&self) -> Option<&PlayerRef> {
        match self {
            LiveSeat::Human { player, .. } => player.as_ref(),
            LiveSeat::Ai { .. } => None,
        }
    }

    pub fn token(&self) -> Option<&TokenHash> {
        match self {
            LiveSeat::Human { token, .. } => token.as_ref(),
            LiveSeat::Ai { .. } => None,
        }
    }

    fn view(&self) -> SeatView {
        match self {
            LiveSeat::Human {
                token,
                player,
                connections,
            } => SeatView::Human {
                name: player.as_ref().map(|p| p.name.clone()),
                connected: *connections > 0,
                taken: token.is_some(),
                rating: player.as_ref().map(|p| p.rating),
            },
            LiveSeat::Ai { level } => SeatView::Ai { level: *level },
        }
    }
}

/// What a player does with a standing offer they do not accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The opponent's offer: refuse it.
    Decline,
    /// One's own offer: take it back.
    Withdraw,
}

impl Answer {
    fn outcome(self) -> OfferOutcome {
        match self {
            Answer::Decline => OfferOutcome::Declined,
            Answer::Withdraw => OfferOutcome::Withdrawn,
        }
    }
}

/// Clears `offer` if `side` may drop it with `answer`; whether it did.
fn drop_offer(offer: &mut Option<Side>, side: Side, answer: Answer) -> bool {
    let allowed = match answer {
        Answer::Decline => side.other(),
        Answer::Withdraw => side,
    };
    if *offer == Some(allowed) {
        *offer = None;
        true
    } else {
        false
    }
}

/// How a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ending {
    pub winner: Option<Side>,
    pub termination: Termination,
}

impl Ending {
    /// The result string; an aborted game has none.
    pub fn result(&self) -> Option<&'static str> {
        if self.termination == Termination::Aborted {
            return None;
        }
        Some(match self.winner {
            Some(Side::White) => "1-0",
            Some(Side::Black) => "0-1",
            None => "1/2-1/2",
        })
    }

    fn from_outcome(outcome: Outcome) -> Ending {
        Ending {
            winner: outcome.winner.map(Side::from),
            termination: outcome.termination,
        }
    }
}

/// The move a successful [`LiveGame::play`] made, for the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayedMove {
    pub ply: usize,
    pub mv: Move,
    pub uci: String,
    pub san: String,
    /// Both clocks after the move, increment included (`None` without clock).
    pub clock_ms: Option<(u64, u64)>,
}

/// A game as the database holds it, to [`LiveGame::restore`] it.
#[derive(Debug)]
pub struct SavedGame<'a> {
    pub id: Uuid,
    pub created_at: i64,
    pub updated_at: i64,
    pub seats: [LiveSeat; 2],
    pub clock_settings: Option<ClockSettings>,
    pub initial_fen: &'a str,
    /// The moves in UCI, replayed from `initial_fen`.
    pub moves: &'a [String],
    /// `None`: no clock stored (a clock then starts full).
    pub clock: Option<SavedClock>,
    pub ending: Option<Ending>,
    pub draw_offer: Option<Side>,
    pub takeback_offer: Option<Side>,
    pub takebacks: u32,
    pub rematch: Option<Rematch>,
    /// The terms fixed at creation (`rated` also turns false when a
    /// computer grants a takeback).
    pub rated: bool,
    pub visibility: Visibility,
    pub invite: Option<TokenHash>,
    /// Plies already played when the game was created (an imported history).
    pub start_ply: usize,
}

/// A stored clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SavedClock {
    /// Remaining times when the current turn began.
    pub white_ms: u64,
    pub black_ms: u64,
    /// How long the side to move had already thought when the server stopped.
    pub spent: Duration,
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
    seats: [LiveSeat; 2],
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
}

impl LiveGame {
    /// A new game. Fails on a bad FEN, or a start position where the game
    /// would already be over.
    pub fn new(
        id: Uuid,
        created_at: i64,
        seats: [SeatKind; 2],
        clock_settings: Option<ClockSettings>,
        fen: Option<&str>,
    ) -> Result<LiveGame, GameError> {
        let game = match fen {
            None => Game::new(Position::startpos()),
            Some(fen) => Game::from_fen(fen).map_err(|err| GameError::BadFen(err.to_string()))?,
        };
        if let Some(outcome) = game.outcome() {
            return Err(GameError::OverBeforeStart(outcome.termination));
        }
        Ok(LiveGame {
            id,
            created_at,
            updated_at: created_at,
            rated: counts_as_rated(&game, clock_settings),
            game,
            seats: seats.map(LiveSeat::new),
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
            if replay.play(*mv).is_err() {
                break;
            }
            played.push(PlayedMove {
                ply,
                mv: *mv,
                uci: mv.to_uci(),
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

    /// Whether the side to move has yet to make its first move in this game.
    fn first_move_pending(&self) -> bool {
        self.plies_in_game() < 2
    }

    /// Sets the waits of the first-move rule and of open seeks.
    pub fn set_timing(&mut self, timing: Timing) {
        self.timing = timing;
    }

    /// How long the side to move has for its first move.
    fn first_move_limit(&self) -> Duration {
        match self.clock_settings {
            Some(clock) if clock.initial_ms >= SLOW_GAME_INITIAL_MS => {
                self.timing.first_move.saturating_mul(2)
            }
            _ => self.timing.first_move,
        }
    }

    /// When the side to move must have made its first move (a person's
    /// seat in a game with a clock), if its wait runs.
    fn first_move_deadline(&self) -> Option<Instant> {
        let since = self.first_move_since?;
        if self.seat(self.turn()).ai_level().is_some() {
            return None;
        }
        Some(since + self.first_move_limit())
    }

    /// When an open seek whose creator left is withdrawn.
    fn seek_deadline(&self) -> Option<Instant> {
        let since = self.creator_gone_since?;
        self.is_joinable().then(|| since + self.timing.seek_grace)
    }

    /// What became of an offer in the last change, if anything.
    pub fn offer_answer(&self) -> Option<OfferAnswer> {
        self.offer_answer
    }

    /// Forgets the last change's offer answer (once its state is sent).
    pub fn clear_offer_answer(&mut self) {
        self.offer_answer = None;
    }

    fn answer_offer(&mut self, offer: OfferKind, by: Side, answer: OfferOutcome) {
        self.offer_answer = Some(OfferAnswer { offer, by, answer });
    }

    /// Rebuilds a stored game: its seats, moves, clock and ending. A running
    /// clock restarts at `now`, already charged the time its side had spent
    /// thinking before the server stopped (`SavedClock::spent`); the time
    /// the server was down is charged to nobody.
    pub fn restore(saved: SavedGame<'_>, now: Instant) -> Result<LiveGame, String> {
        let mut game =
            Game::from_fen(saved.initial_fen).map_err(|err| format!("stored FEN: {err}"))?;
        for (ply, uci) in saved.moves.iter().enumerate() {
            game.play_uci(uci)
                .map_err(|err| format!("stored move {ply} ({uci}): {err}"))?;
        }
        let clock = saved.clock_settings.map(|settings| match saved.clock {
            Some(stored) => Clock::with_remaining(settings, stored.white_ms, stored.black_ms),
            None => Clock::new(settings),
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
            start_ply: saved.start_ply.min(saved.moves.len()),
            timing: Timing::default(),
            first_move_since: None,
            creator_gone_since: None,
            offer_answer: None,
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

    /// Ends a game nobody is playing any more (the expiry sweep): a waiting
    /// game is aborted; an untimed active game is adjudicated as a loss on
    /// time for the side to move (the one who stopped answering; a draw if
    /// the opponent cannot mate), or aborted when each side has not moved
    /// yet. A game with a clock is left to its clock: `Ok(false)`.
    pub fn expire(&mut self, now: Instant) -> Result<bool, GameError> {
        match self.status() {
            Status::Finished => Err(GameError::GameOver),
            Status::Waiting => {
                self.finish(
                    Ending {
                        winner: None,
                        termination: Termination::Aborted,
                    },
                    now,
                );
                Ok(true)
            }
            Status::Active if self.clock.is_some() => Ok(false),
            Status::Active => {
                let ending = if self.first_move_pending() {
                    Ending {
                        winner: None,
                        termination: Termination::Aborted,
                    }
                } else {
                    let opponent = self.turn().other();
                    let can_mate = !self
                        .game
                        .position()
                        .has_insufficient_material(opponent.into());
                    Ending {
                        winner: can_mate.then_some(opponent),
                        termination: Termination::Timeout,
                    }
                };
                self.finish(ending, now);
                Ok(true)
            }
        }
    }

    /// Takes over `other`'s open connections and spectators (counted only in
    /// memory), after reloading this game from the database.
    pub fn keep_presence_of(&mut self, other: &LiveGame) {
        self.spectators = other.spectators;
        for side in Side::BOTH {
            if let (
                LiveSeat::Human { connections, .. },
                LiveSeat::Human {
                    connections: before,
                    ..
                },
            ) = (&mut self.seats[side.index()], other.seat(side))
            {
                *connections = *before;
            }
        }
    }

    /// Makes a new game private: its free seat goes only to the holder of
    /// the invite secret hashing to `invite` (`None`: to nobody, for a game
    /// created without a free seat).
    pub fn make_private(&mut self, invite: Option<TokenHash>) {
        self.visibility = Visibility::Private;
        self.invite = invite;
    }

    /// Sets the terms fixed at creation, as stored, on a restored game.
    pub fn restore_terms(
        &mut self,
        rated: bool,
        visibility: Visibility,
        invite: Option<TokenHash>,
    ) {
        self.rated = rated;
        self.visibility = visibility;
        self.invite = invite;
    }

    pub fn is_rated(&self) -> bool {
        self.rated
    }

    pub fn visibility(&self) -> Visibility {
        self.visibility
    }

    pub fn invite(&self) -> Option<&TokenHash> {
        self.invite.as_ref()
    }

    /// Waiting for an opponent, and open to anyone: an open seek.
    pub fn is_joinable(&self) -> bool {
        self.status() == Status::Waiting && self.visibility == Visibility::Open
    }

    pub fn status(&self) -> Status {
        if self.ending.is_some() {
            Status::Finished
        } else if self.seats.iter().any(LiveSeat::is_free) {
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

    pub fn seat(&self, side: Side) -> &LiveSeat {
        &self.seats[side.index()]
    }

    pub fn clock_settings(&self) -> Option<ClockSettings> {
        self.clock_settings
    }

    pub fn draw_offer(&self) -> Option<Side> {
        self.draw_offer
    }

    pub fn takeback_offer(&self) -> Option<Side> {
        self.takeback_offer
    }

    pub fn takebacks(&self) -> u32 {
        self.takebacks
    }

    pub fn rematch(&self) -> Option<&Rematch> {
        self.rematch.as_ref()
    }

    pub fn turn(&self) -> Side {
        self.game.position().turn().into()
    }

    /// The seat whose token hashes to `token`.
    pub fn side_of(&self, token: &TokenHash) -> Option<Side> {
        Side::BOTH
            .into_iter()
            .find(|side| self.seat(*side).token() == Some(token))
    }

    /// The seat the registered player `player_id` holds, with its token's
    /// hash. A player holds at most one seat of a game (see [`Self::join`]).
    pub fn seat_of_player(&self, player_id: &str) -> Option<(Side, TokenHash)> {
        Side::BOTH.into_iter().find_map(|side| {
            let seat = self.seat(side);
            let token = seat.token()?;
            (seat.player()?.id == player_id).then(|| (side, token.clone()))
        })
    }

    /// The AI level to move now, if the side to move is a computer seat and
    /// the game is on.
    pub fn ai_to_move(&self) -> Option<u8> {
        if self.status() != Status::Active {
            return None;
        }
        self.seat(self.turn()).ai_level()
    }

    /// The game's kind, for metrics: `ai_v_ai`, `human_v_ai` or
    /// `human_v_human`.
    pub fn kind(&self) -> &'static str {
        match self
            .seats
            .iter()
            .filter(|seat| seat.ai_level().is_some())
            .count()
        {
            2 => "ai_v_ai",
            1 => "human_v_ai",
            _ => "human_v_human",
        }
    }

    pub fn is_ai_vs_ai(&self) -> bool {
        self.seats.iter().all(|seat| seat.ai_level().is_some())
    }

    pub fn clock(&self) -> Option<&Clock> {
        self.clock.as_ref()
    }

    /// When the game must next be looked at by [`Self::check_flag`]: the
    /// running side's flag falls, the side to move's time for its first
    /// move ends, or an abandoned open seek is withdrawn.
    pub fn deadline(&self) -> Option<Instant> {
        if self.is_finished() {
            return None;
        }
        [
            self.clock.as_ref().and_then(Clock::deadline),
            self.first_move_deadline(),
            self.seek_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The side to move's turn begins: its clock runs, unless it has yet to
    /// make its first move in this game (then only its first-move wait
    /// runs, and it is charged nothing).
    fn start_clock(&mut self, now: Instant) {
        let turn = self.turn();
        let pending = self.first_move_pending();
        if let Some(clock) = &mut self.clock {
            if pending {
                clock.stop(now);
                self.first_move_since = Some(now);
            } else {
                self.first_move_since = None;
                clock.start(turn, now);
            }
        }
    }

    /// Takes the free human seat for the holder of `token`. A private game
    /// needs its invite secret (`invite` is the hash of the one sent), and a
    /// registered player cannot take the seat opposite their own.
    pub fn join(
        &mut self,
        token: TokenHash,
        player: Option<PlayerRef>,
        invite: Option<&TokenHash>,
        now: Instant,
    ) -> Result<Side, GameError> {
        let free = Side::BOTH
            .into_iter()
            .find(|side| self.seat(*side).is_free());
        let Some(side) = free else {
            return Err(GameError::SeatTaken);
        };
        if self.is_finished() {
            return Err(GameError::GameOver);
        }
        if self.visibility == Visibility::Private {
            // Hashes are compared, not secrets: the comparison's timing
            // tells nothing about the secret.
            match (self.invite.as_ref(), invite) {
                (Some(expected), Some(given)) if expected == given => {}
                (_, None) => return Err(GameError::InviteRequired),
                _ => return Err(GameError::WrongInvite),
            }
        }
        let other = self.seat(side.other()).player();
        if let (Some(joining), Some(holding)) = (player.as_ref(), other) {
            if joining.id == holding.id {
                return Err(GameError::SamePlayer);
            }
        }
        self.take_seat(side, token, player, now)?;
        Ok(side)
    }

    /// Gives the free human seat `side` to the holder of `token`.
    pub fn take_seat(
        &mut self,
        side: Side,
        token: TokenHash,
        player: Option<PlayerRef>,
        now: Instant,
    ) -> Result<(), GameError> {
        if self.is_finished() {
            return Err(GameError::GameOver);
        }
        if !self.seat(side).is_free() {
            return Err(GameError::SeatTaken);
        }
        self.seats[side.index()] = LiveSeat::Human {
            token: Some(token),
            player,
            connections: 0,
        };
        self.creator_gone_since = None;
        if self.status() == Status::Active {
            self.start_clock(now);
        }
        Ok(())
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
            uci: mv.to_uci(),
            san,
            clock_ms,
        })
    }

    /// Resigns for `side`. Before the game has started there is nothing to
    /// lose: the game is aborted instead (it counts nowhere).
    pub fn resign(&mut self, side: Side, now: Instant) -> Result<(), GameError> {
        if self.is_finished() {
            return Err(GameError::GameOver);
        }
        let ending = if self.status() == Status::Waiting {
            Ending {
                winner: None,
                termination: Termination::Aborted,
            }
        } else {
            Ending {
                winner: Some(side.other()),
                termination: Termination::Resignation,
            }
        };
        self.finish(ending, now);
        Ok(())
    }

    /// Ends the game without a result (`aborted`, it counts nowhere): an
    /// operator stopped it, or its AI could not move.
    pub fn abort(&mut self, now: Instant) -> Result<(), GameError> {
        if self.is_finished() {
            return Err(GameError::GameOver);
        }
        self.finish(
            Ending {
                winner: None,
                termination: Termination::Aborted,
            },
            now,
        );
        Ok(())
    }

    /// Offers a draw, or accepts the opponent's standing offer. Offering
    /// again changes nothing (`Ok(false)`).
    pub fn draw(&mut self, side: Side, now: Instant) -> Result<bool, GameError> {
        self.ensure_playing()?;
        match self.draw_offer {
            Some(offerer) if offerer == side.other() => {
                self.finish(
                    Ending {
                        winner: None,
                        termination: Termination::Agreement,
                    },
                    now,
                );
                self.answer_offer(OfferKind::Draw, offerer, OfferOutcome::Accepted);
            }
            Some(_) => return Ok(false),
            None => self.draw_offer = Some(side),
        }
        Ok(true)
    }

    /// Declines the opponent's draw offer (`answer: Decline`) or withdraws
    /// one's own (`Withdraw`). `Ok(false)`: there was no such offer, nothing
    /// changed.
    pub fn drop_draw_offer(&mut self, side: Side, answer: Answer) -> Result<bool, GameError> {
        self.ensure_playing()?;
        let offerer = self.draw_offer;
        let dropped = drop_offer(&mut self.draw_offer, side, answer);
        if let (true, Some(offerer)) = (dropped, offerer) {
            self.answer_offer(OfferKind::Draw, offerer, answer.outcome());
        }
        Ok(dropped)
    }

    /// Asks to take back one's last move, or accepts the opponent's
    /// request. Against the computer the request is granted at once (and
    /// the game becomes casual: a player who may retract moves against the
    /// engine is not playing the game the scoreboard counts). Asking again
    /// changes nothing (`Ok(false)`).
    pub fn takeback(&mut self, side: Side, now: Instant) -> Result<bool, GameError> {
        self.ensure_playing()?;
        match self.takeback_offer {
            Some(asker) if asker == side.other() => {
                self.take_back(asker, now);
                self.answer_offer(OfferKind::Takeback, asker, OfferOutcome::Accepted);
                return Ok(true);
            }
            Some(_) => return Ok(false),
            None => {}
        }
        if self.plies_to_take_back(side).is_none() {
            return Err(GameError::NothingToTakeBack(
                "you have no move to take back".into(),
            ));
        }
        if self.seat(side.other()).ai_level().is_some() {
            self.take_back(side, now);
            self.rated = false;
            self.answer_offer(OfferKind::Takeback, side, OfferOutcome::Accepted);
        } else {
            self.takeback_offer = Some(side);
        }
        Ok(true)
    }

    /// Declines or withdraws a takeback request (see [`Self::drop_draw_offer`]).
    pub fn drop_takeback_offer(&mut self, side: Side, answer: Answer) -> Result<bool, GameError> {
        self.ensure_playing()?;
        let asker = self.takeback_offer;
        let dropped = drop_offer(&mut self.takeback_offer, side, answer);
        if let (true, Some(asker)) = (dropped, asker) {
            self.answer_offer(OfferKind::Takeback, asker, answer.outcome());
        }
        Ok(dropped)
    }

    /// How many plies a takeback for `side` undoes: its own last move, and
    /// the opponent's reply if there is one. `None` if `side` has not moved
    /// in this game.
    fn plies_to_take_back(&self, side: Side) -> Option<usize> {
        let plies = self.plies_in_game();
        let undo = if self.turn() == side { 2 } else { 1 };
        (plies >= undo).then_some(undo)
    }

    /// Undoes `asker`'s last move (and the reply to it): the position is
    /// rebuilt from the start without them. The clocks keep the times they
    /// show (no time is given back), and the asker's time runs.
    fn take_back(&mut self, asker: Side, now: Instant) {
        let Some(undo) = self.plies_to_take_back(asker) else {
            return;
        };
        let keep = self.game.moves().len() - undo;
        let mut game = Game::new(self.game.initial_position().clone());
        for mv in &self.game.moves()[..keep] {
            // Each of these moves was legal when it was played from the
            // same start: replaying them cannot fail.
            if game.play(*mv).is_err() {
                return;
            }
        }
        self.game = game;
        self.takeback_offer = None;
        self.takebacks = self.takebacks.saturating_add(1);
        self.start_clock(now);
    }

    /// A player aborts the game: allowed until each side has made its first
    /// move (no result, it counts nowhere), refused with `abort_too_late`
    /// after that (resign instead).
    pub fn abort_by_player(&mut self, now: Instant) -> Result<(), GameError> {
        if self.is_finished() {
            return Err(GameError::GameOver);
        }
        if self.status() == Status::Active && !self.first_move_pending() {
            return Err(GameError::AbortTooLate);
        }
        self.abort(now)
    }

    /// Offers a rematch of a finished game, or accepts the opponent's
    /// offer; against the computer the rematch starts at once. `game` is
    /// the new game's id ([`Rematch::game`] once one is offered) and
    /// `token` the hash of `side`'s seat token in it. The new game swaps
    /// the colours and keeps the start position, clock and visibility.
    pub fn offer_rematch(
        &mut self,
        side: Side,
        game: Uuid,
        token: TokenHash,
        created_at: i64,
        now: Instant,
    ) -> Result<RematchStep, GameError> {
        if !self.is_finished() {
            return Err(GameError::NoRematch("the game is not over yet".into()));
        }
        if let Some(rematch) = &self.rematch {
            if rematch.agreed || rematch.offered_by == side {
                return Ok(RematchStep::Unchanged);
            }
            let mut tokens = [None, None];
            tokens[rematch.offered_by.index()] = Some(rematch.offerer_token.clone());
            tokens[side.index()] = Some(token);
            let offerer = rematch.offered_by;
            let new = self.new_game_for_rematch(rematch.game, tokens, created_at, now)?;
            if let Some(rematch) = &mut self.rematch {
                rematch.agreed = true;
            }
            self.answer_offer(OfferKind::Rematch, offerer, OfferOutcome::Accepted);
            return Ok(RematchStep::Agreed(Box::new(new)));
        }
        let opponent = self.seat(side.other());
        if opponent.ai_level().is_none() && opponent.token().is_none() {
            return Err(GameError::NoRematch(
                "nobody took the other seat of this game".into(),
            ));
        }
        let against_ai = opponent.ai_level().is_some();
        let mut tokens = [None, None];
        tokens[side.index()] = Some(token.clone());
        let new = if against_ai {
            Some(self.new_game_for_rematch(game, tokens, created_at, now)?)
        } else {
            None
        };
        self.rematch = Some(Rematch {
            game,
            offered_by: side,
            offerer_token: token,
            agreed: against_ai,
        });
        Ok(match new {
            Some(new) => RematchStep::Agreed(Box::new(new)),
            None => RematchStep::Offered,
        })
    }

    /// Declines or withdraws a rematch offer (see [`Self::drop_draw_offer`]).
    /// An agreed rematch cannot be undone: `Ok(false)`.
    pub fn drop_rematch_offer(&mut self, side: Side, answer: Answer) -> Result<bool, GameError> {
        let Some(rematch) = &self.rematch else {
            return Ok(false);
        };
        let offerer = rematch.offered_by;
        let mut offer = (!rematch.agreed).then_some(offerer);
        if !drop_offer(&mut offer, side, answer) {
            return Ok(false);
        }
        self.rematch = None;
        self.answer_offer(OfferKind::Rematch, offerer, answer.outcome());
        Ok(true)
    }

    /// The new game of a rematch: the seats swap colours (`tokens` are the
    /// human players' new seat token hashes, by their colour in this game).
    fn new_game_for_rematch(
        &self,
        id: Uuid,
        tokens: [Option<TokenHash>; 2],
        created_at: i64,
        now: Instant,
    ) -> Result<LiveGame, GameError> {
        let kind = |seat: &LiveSeat| match seat.ai_level() {
            Some(level) => SeatKind::Ai { level },
            None => SeatKind::Human,
        };
        let old = |side: Side| self.seat(side.other());
        let fen = self.game.initial_position().to_fen();
        let mut new = LiveGame::new(
            id,
            created_at,
            [kind(old(Side::White)), kind(old(Side::Black))],
            self.clock_settings,
            Some(&fen),
        )?;
        for side in Side::BOTH {
            if let (Some(token), LiveSeat::Human { player, .. }) =
                (&tokens[side.other().index()], old(side))
            {
                new.take_seat(side, token.clone(), player.clone(), now)?;
            }
        }
        if self.visibility == Visibility::Private {
            new.make_private(None);
        }
        Ok(new)
    }

    /// Ends the game on time if the running side's flag has fallen. Losing
    /// on time against a side that cannot possibly mate is a draw (FIDE
    /// 6.9).
    ///
    /// Also ends the games nobody started: a side that has not made its
    /// first move in time aborts the game, and so does an open seek whose
    /// creator has been gone for [`Timing::seek_grace`] (both count
    /// nowhere).
    pub fn check_flag(&mut self, now: Instant) -> bool {
        if self.is_finished() {
            return false;
        }
        let lapsed = |deadline: Option<Instant>| deadline.is_some_and(|d| d <= now);
        if lapsed(self.first_move_deadline()) || lapsed(self.seek_deadline()) {
            self.finish(
                Ending {
                    winner: None,
                    termination: Termination::Aborted,
                },
                now,
            );
            return true;
        }
        let Some(flagged) = self.clock.as_ref().and_then(|clock| clock.flagged(now)) else {
            return false;
        };
        let opponent = flagged.other();
        let winner = if self
            .game
            .position()
            .has_insufficient_material(opponent.into())
        {
            None
        } else {
            Some(opponent)
        };
        self.finish(
            Ending {
                winner,
                termination: Termination::Timeout,
            },
            now,
        );
        true
    }

    /// Stops the running clock (the AI v AI pacing pause: the computed move
    /// waits without costing its side time).
    pub fn pause_clock(&mut self, now: Instant) {
        if let Some(clock) = &mut self.clock {
            clock.stop(now);
        }
    }

    fn finish(&mut self, ending: Ending, now: Instant) {
        self.ending = Some(ending);
        // Offers standing at the end lapse (an accepted draw is answered by
        // its caller after this).
        if let Some(offerer) = self.draw_offer.take() {
            self.answer_offer(OfferKind::Draw, offerer, OfferOutcome::Expired);
        }
        if let Some(asker) = self.takeback_offer.take() {
            self.answer_offer(OfferKind::Takeback, asker, OfferOutcome::Expired);
        }
        self.first_move_since = None;
        self.creator_gone_since = None;
        if let Some(clock) = &mut self.clock {
            clock.stop(now);
        }
    }

    /// Read-only WebSocket connections watching now.
    pub fn spectators(&self) -> u32 {
        self.spectators
    }

    /// Counts a WebSocket connection for a seat, or a spectator. When the
    /// last connection of an open seek's creator closes, the seek's grace
    /// starts (see [`Self::check_flag`]); a new one stops it.
    pub fn connect(&mut self, side: Option<Side>, delta: i32, now: Instant) {
        let apply = |count: &mut u32| {
            *count = if delta >= 0 {
                count.saturating_add(delta.unsigned_abs())
            } else {
                count.saturating_sub(delta.unsigned_abs())
            };
        };
        match side {
            None => apply(&mut self.spectators),
            Some(side) => {
                if let LiveSeat::Human { connections, .. } = &mut self.seats[side.index()] {
                    apply(connections);
                    let gone = *connections == 0;
                    if !gone {
                        self.creator_gone_since = None;
                    } else if delta < 0 && self.is_joinable() {
                        self.creator_gone_since = Some(now);
                    }
                }
            }
        }
    }

    pub fn state(&self, now: Instant) -> GameState {
        let position = self.game.position();
        let finished = self.is_finished();
        GameState {
            id: self.id.to_string(),
            status: self.status(),
            white: self.seat(Side::White).view(),
            black: self.seat(Side::Black).view(),
            initial_fen: self.game.initial_position().to_fen(),
            fen: position.to_fen(),
            turn: self.turn(),
            moves: self.game.moves().iter().map(|mv| mv.to_uci()).collect(),
            san: self.game.san_moves().to_vec(),
            legal_moves: if finished {
                Vec::new()
            } else {
                position
                    .legal_moves()
                    .iter()
                    .map(|mv| mv.to_uci())
                    .collect()
            },
            check: position.is_check(),
            result: self.ending.and_then(|e| e.result()).map(str::to_string),
            termination: self.ending.map(|e| e.termination.as_str().to_string()),
            clock: self.clock.as_ref().map(|clock| clock.view(now)),
            draw_offer: self.draw_offer,
            takeback_offer: self.takeback_offer,
            takebacks: self.takebacks,
            rematch_offer: self
                .rematch
                .as_ref()
                .filter(|r| !r.agreed)
                .map(|r| r.offered_by),
            rematch: self
                .rematch
                .as_ref()
                .filter(|r| r.agreed)
                .map(|r| r.game.to_string()),
            spectators: self.spectators,
            created_at: self.created_at,
            rated: self.rated,
            visibility: self.visibility,
            joinable: self.is_joinable(),
            first_move_ms: self
                .first_move_deadline()
                .map(|deadline| millis(deadline.saturating_duration_since(now))),
            offer_answer: self.offer_answer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::mint;

    fn human_game(clock: Option<ClockSettings>, fen: Option<&str>) -> LiveGame {
        LiveGame::new(
            Uuid::new_v4(),
            0,
            [SeatKind::Human, SeatKind::Human],
            clock,
            fen,
        )
        .unwrap()
    }

    fn seated(mut live: LiveGame) -> LiveGame {
        let now = Instant::now();
        live.join(mint().unwrap().hash, None, None, now).unwrap();
        live.join(mint().unwrap().hash, None, None, now).unwrap();
        live
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_until_both_seats_are_taken() {
        let mut live = human_game(None, None);
        let now = Instant::now();
        assert_eq!(live.status(), Status::Waiting);
        assert_eq!(
            live.join(mint().unwrap().hash, None, None, now).unwrap(),
            Side::White
        );
        assert!(matches!(
            live.play(Side::White, "e2e4", now),
            Err(GameError::NotStarted)
        ));
        assert_eq!(
            live.join(mint().unwrap().hash, None, None, now).unwrap(),
            Side::Black
        );
        assert_eq!(live.status(), Status::Active);
        assert!(matches!(
            live.join(mint().unwrap().hash, None, None, now),
            Err(GameError::SeatTaken)
        ));
    }

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
    async fn draw_offer_accept_and_decline_by_moving() {
        let mut live = seated(human_game(None, None));
        let now = Instant::now();
        live.draw(Side::White, now).unwrap();
        assert_eq!(live.draw_offer(), Some(Side::White));
        live.play(Side::White, "e2e4", now).unwrap();
        // White's own offer stands while black thinks...
        assert_eq!(live.draw_offer(), Some(Side::White));
        // ...and black declines it by moving.
        live.play(Side::Black, "e7e5", now).unwrap();
        assert_eq!(live.draw_offer(), None);
        live.draw(Side::Black, now).unwrap();
        live.draw(Side::Black, now).unwrap();
        assert!(!live.is_finished());
        live.draw(Side::White, now).unwrap();
        let state = live.state(now);
        assert_eq!(state.result.as_deref(), Some("1/2-1/2"));
        assert_eq!(state.termination.as_deref(), Some("agreement"));
        assert_eq!(state.draw_offer, None);
    }

    #[tokio::test(start_paused = true)]
    async fn resign_before_the_start_aborts() {
        let mut live = human_game(None, None);
        let now = Instant::now();
        live.join(mint().unwrap().hash, None, None, now).unwrap();
        live.resign(Side::White, now).unwrap();
        let state = live.state(now);
        assert_eq!(state.termination.as_deref(), Some("aborted"));
        assert_eq!(state.result, None);
        let mut live = seated(human_game(None, None));
        live.resign(Side::Black, now).unwrap();
        assert_eq!(live.state(now).result.as_deref(), Some("1-0"));
    }

    #[tokio::test(start_paused = true)]
    async fn flag_fall_loses_unless_the_opponent_cannot_mate() {
        let clock = Some(ClockSettings {
            initial_ms: 1_000,
            increment_ms: 0,
        });
        let mut live = seated(human_game(clock, None));
        // The clocks run once each side has made its first move.
        live.play(Side::White, "e2e4", Instant::now()).unwrap();
        live.play(Side::Black, "e7e5", Instant::now()).unwrap();
        let deadline = live.deadline().unwrap();
        assert!(!live.check_flag(Instant::now()));
        tokio::time::sleep_until(deadline).await;
        assert!(live.check_flag(Instant::now()));
        let state = live.state(Instant::now());
        assert_eq!(state.result.as_deref(), Some("0-1"));
        assert_eq!(state.termination.as_deref(), Some("timeout"));
        assert_eq!(state.clock.unwrap().white_ms, 0);
        assert_eq!(state.clock.unwrap().running, None);

        // White flags, but black has only king and bishop: it cannot mate, a draw.
        let fen = "4k3/8/8/8/8/8/3Q4/4K1b1 w - - 0 1";
        let mut live = seated(human_game(clock, Some(fen)));
        live.play(Side::White, "d2d3", Instant::now()).unwrap();
        live.play(Side::Black, "g1h2", Instant::now()).unwrap();
        tokio::time::advance(Duration::from_millis(1_000)).await;
        assert!(live.check_flag(Instant::now()));
        let state = live.state(Instant::now());
        assert_eq!(state.result.as_deref(), Some("1/2-1/2"));
        assert_eq!(state.termination.as_deref(), Some("timeout"));
    }

    #[tokio::test(start_paused = true)]
    async fn moves_press_the_clock() {
        let clock = Some(ClockSettings {
            initial_ms: 10_000,
            increment_ms: 1_000,
        });
        let mut live = seated(human_game(clock, None));
        // Each side's first move is free: no time charged, no increment.
        tokio::time::advance(Duration::from_millis(2_500)).await;
        let played = live.play(Side::White, "e2e4", Instant::now()).unwrap();
        assert_eq!(played.clock_ms, Some((10_000, 10_000)));
        assert_eq!(live.clock().unwrap().running(), None);
        tokio::time::advance(Duration::from_millis(2_500)).await;
        let played = live.play(Side::Black, "e7e5", Instant::now()).unwrap();
        assert_eq!(played.clock_ms, Some((10_000, 10_000)));
        assert_eq!(live.clock().unwrap().running(), Some(Side::White));
        tokio::time::advance(Duration::from_millis(2_500)).await;
        let played = live.play(Side::White, "g1f3", Instant::now()).unwrap();
        assert_eq!(played.clock_ms, Some((8_500, 10_000)));
        assert_eq!(live.clock().unwrap().running(), Some(Side::Black));
    }

    #[tokio::test(start_paused = true)]
    async fn a_side_that_never_makes_its_first_move_aborts_the_game() {
        let clock = Some(ClockSettings {
            initial_ms: 60_000,
            increment_ms: 0,
        });
        let first = Timing::default().first_move;
        // White never moves: aborted, counting nowhere, clocks untouched.
        let mut live = seated(human_game(clock, None));
        let state = live.state(Instant::now());
        assert_eq!(state.clock.unwrap().running, None);
        assert_eq!(state.first_move_ms, Some(millis(first)));
        tokio::time::advance(first - Duration::from_millis(1)).await;
        assert!(!live.check_flag(Instant::now()));
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(live.check_flag(Instant::now()));
        let state = live.state(Instant::now());
        assert_eq!(state.termination.as_deref(), Some("aborted"));
        assert_eq!(state.result, None);
        assert_eq!(state.clock.unwrap().white_ms, 60_000);

        // White moves; Black's own wait starts then, and its lapse aborts too.
        let mut live = seated(human_game(clock, None));
        tokio::time::advance(Duration::from_secs(20)).await;
        live.play(Side::White, "e2e4", Instant::now()).unwrap();
        assert_eq!(live.deadline(), Some(Instant::now() + first));
        tokio::time::advance(first).await;
        assert!(live.check_flag(Instant::now()));
        assert_eq!(live.ending().unwrap().termination, Termination::Aborted);

        // Slow games get twice as long.
        let slow = Some(ClockSettings {
            initial_ms: SLOW_GAME_INITIAL_MS,
            increment_ms: 0,
        });
        let live = seated(human_game(slow, None));
        assert_eq!(live.deadline(), Some(Instant::now() + first * 2));

        // The computer's first move has no such wait.
        let mut live = LiveGame::new(
            Uuid::new_v4(),
            0,
            [SeatKind::Ai { level: 1 }, SeatKind::Human],
            clock,
            None,
        )
        .unwrap();
        live.take_seat(Side::Black, mint().unwrap().hash, None, Instant::now())
            .unwrap();
        assert_eq!(live.deadline(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn an_open_seek_is_withdrawn_when_its_creator_is_gone() {
        let grace = Timing::default().seek_grace;
        let mut live = human_game(None, None);
        live.take_seat(Side::White, mint().unwrap().hash, None, Instant::now())
            .unwrap();
        assert!(live.is_joinable());
        live.connect(Some(Side::White), 1, Instant::now());
        assert_eq!(live.deadline(), None);
        // A reload: the connection closes and a new one opens in time.
        live.connect(Some(Side::White), -1, Instant::now());
        assert_eq!(live.deadline(), Some(Instant::now() + grace));
        tokio::time::advance(grace / 2).await;
        live.connect(Some(Side::White), 1, Instant::now());
        assert_eq!(live.deadline(), None);
        // Gone for good: withdrawn after the grace.
        live.connect(Some(Side::White), -1, Instant::now());
        tokio::time::advance(grace).await;
        assert!(live.check_flag(Instant::now()));
        assert_eq!(live.ending().unwrap().termination, Termination::Aborted);
        assert!(!live.is_joinable());
    }

    #[tokio::test(start_paused = true)]
    async fn every_offer_tells_its_maker_what_became_of_it() {
        let answer = |live: &LiveGame| live.offer_answer().map(|a| (a.offer, a.by, a.answer));
        let now = Instant::now();
        let mut live = seated(human_game(None, None));
        live.draw(Side::White, now).unwrap();
        assert_eq!(answer(&live), None);
        live.drop_draw_offer(Side::Black, Answer::Decline).unwrap();
        assert_eq!(
            answer(&live),
            Some((OfferKind::Draw, Side::White, OfferOutcome::Declined))
        );
        live.clear_offer_answer();
        live.draw(Side::White, now).unwrap();
        live.drop_draw_offer(Side::White, Answer::Withdraw).unwrap();
        assert_eq!(
            answer(&live),
            Some((OfferKind::Draw, Side::White, OfferOutcome::Withdrawn))
        );
        live.draw(Side::White, now).unwrap();
        live.play(Side::White, "e2e4", now).unwrap();
        live.play(Side::Black, "e7e5", now).unwrap();
        assert_eq!(
            answer(&live),
            Some((OfferKind::Draw, Side::White, OfferOutcome::Declined)),
            "a move declines the opponent's offer"
        );
        live.takeback(Side::White, now).unwrap();
        live.clear_offer_answer();
        live.drop_takeback_offer(Side::Black, Answer::Decline)
            .unwrap();
        assert_eq!(
            answer(&live),
            Some((OfferKind::Takeback, Side::White, OfferOutcome::Declined))
        );
        live.takeback(Side::White, now).unwrap();
        live.play(Side::White, "g1f3", now).unwrap();
        assert_eq!(
            answer(&live),
            Some((OfferKind::Takeback, Side::White, OfferOutcome::Expired))
        );
        live.draw(Side::White, now).unwrap();
        live.draw(Side::Black, now).unwrap();
        assert_eq!(
            answer(&live),
            Some((OfferKind::Draw, Side::White, OfferOutcome::Accepted))
        );
        let state = live.state(now);
        assert_eq!(
            state.offer_answer.map(|a| a.answer),
            Some(OfferOutcome::Accepted)
        );
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

    #[tokio::test(start_paused = true)]
    async fn offers_are_declined_and_withdrawn_only_when_standing() {
        let mut live = seated(human_game(None, None));
        let now = Instant::now();
        for answer in [Answer::Decline, Answer::Withdraw] {
            assert!(!live.drop_draw_offer(Side::White, answer).unwrap());
            assert!(!live.drop_takeback_offer(Side::White, answer).unwrap());
        }
        assert!(live.draw(Side::White, now).unwrap());
        assert!(!live.draw(Side::White, now).unwrap(), "offering twice");
        // White cannot decline its own offer, black cannot withdraw it.
        assert!(!live.drop_draw_offer(Side::White, Answer::Decline).unwrap());
        assert!(!live.drop_draw_offer(Side::Black, Answer::Withdraw).unwrap());
        assert!(live.drop_draw_offer(Side::Black, Answer::Decline).unwrap());
        assert_eq!(live.draw_offer(), None);
        live.draw(Side::Black, now).unwrap();
        assert!(live.drop_draw_offer(Side::Black, Answer::Withdraw).unwrap());
        assert_eq!(live.draw_offer(), None);
        assert!(!live.is_finished());
    }

    #[tokio::test(start_paused = true)]
    async fn takebacks_undo_the_askers_move_and_the_reply() {
        let mut live = seated(human_game(None, None));
        let now = Instant::now();
        assert!(matches!(
            live.takeback(Side::White, now),
            Err(GameError::NothingToTakeBack(_))
        ));
        live.play(Side::White, "e2e4", now).unwrap();
        assert!(matches!(
            live.takeback(Side::Black, now),
            Err(GameError::NothingToTakeBack(_))
        ));
        // White asks right after its move: one ply.
        assert!(live.takeback(Side::White, now).unwrap());
        assert!(!live.takeback(Side::White, now).unwrap(), "asking twice");
        assert_eq!(live.takeback_offer(), Some(Side::White));
        assert!(live.takeback(Side::Black, now).unwrap());
        assert_eq!(live.game().moves().len(), 0);
        assert_eq!((live.takebacks(), live.takeback_offer()), (1, None));
        assert!(live.is_rated(), "agreed between people: still rated");
        // After the reply: two plies, back to white's turn.
        live.play(Side::White, "d2d4", now).unwrap();
        live.play(Side::Black, "d7d5", now).unwrap();
        live.takeback(Side::White, now).unwrap();
        // A move answers the request: it is dropped.
        live.play(Side::White, "c2c4", now).unwrap();
        assert_eq!(live.takeback_offer(), None);
        live.takeback(Side::Black, now).unwrap();
        live.takeback(Side::White, now).unwrap();
        assert_eq!(live.state(now).moves, vec!["d2d4"]);
        assert_eq!(live.turn(), Side::Black);
        assert_eq!(live.takebacks(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn the_computer_grants_takebacks_and_the_game_turns_casual() {
        let mut live = LiveGame::new(
            Uuid::new_v4(),
            0,
            [SeatKind::Human, SeatKind::Ai { level: 1 }],
            Some(ClockSettings {
                initial_ms: 60_000,
                increment_ms: 0,
            }),
            None,
        )
        .unwrap();
        live.take_seat(Side::White, mint().unwrap().hash, None, Instant::now())
            .unwrap();
        live.play(Side::White, "e2e4", Instant::now()).unwrap();
        live.play_move(
            live.game().position().parse_uci("e7e5").unwrap(),
            Instant::now(),
        )
        .unwrap();
        tokio::time::advance(Duration::from_secs(5)).await;
        assert!(live.takeback(Side::White, Instant::now()).unwrap());
        assert!(live.game().moves().is_empty());
        assert!(!live.is_rated());
        let clock = live.clock().unwrap();
        // Back before White's first move: its clock waits for it again.
        assert_eq!(clock.running(), None);
        assert_eq!(
            clock.remaining(Side::White, Instant::now()),
            Duration::from_secs(55),
            "no time is given back"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn abort_until_each_side_has_moved() {
        let mut live = seated(human_game(None, None));
        let now = Instant::now();
        live.play(Side::White, "e2e4", now).unwrap();
        let mut early = live.clone();
        early.abort_by_player(now).unwrap();
        assert_eq!(early.state(now).termination.as_deref(), Some("aborted"));
        assert_eq!(early.state(now).result, None);
        live.play(Side::Black, "e7e5", now).unwrap();
        assert!(matches!(
            live.abort_by_player(now),
            Err(GameError::AbortTooLate)
        ));
        assert!(!live.is_finished());
    }

    #[tokio::test(start_paused = true)]
    async fn rematch_offer_accept_swaps_the_seats() {
        let now = Instant::now();
        let clock = Some(ClockSettings {
            initial_ms: 120_000,
            increment_ms: 1_000,
        });
        let mut live = seated(human_game(clock, None));
        live.make_private(None);
        assert!(matches!(
            live.offer_rematch(Side::White, Uuid::new_v4(), mint().unwrap().hash, 0, now),
            Err(GameError::NoRematch(_))
        ));
        live.resign(Side::White, now).unwrap();
        let id = Uuid::new_v4();
        let white_next = mint().unwrap().hash;
        let black_next = mint().unwrap().hash;
        assert!(matches!(
            live.offer_rematch(Side::White, id, white_next.clone(), 0, now),
            Ok(RematchStep::Offered)
        ));
        assert_eq!(live.state(now).rematch_offer, Some(Side::White));
        assert!(matches!(
            live.offer_rematch(Side::White, id, white_next.clone(), 0, now),
            Ok(RematchStep::Unchanged)
        ));
        let mut declined = live.clone();
        assert!(declined
            .drop_rematch_offer(Side::Black, Answer::Decline)
            .unwrap());
        assert_eq!(declined.rematch(), None);
        let Ok(RematchStep::Agreed(new)) =
            live.offer_rematch(Side::Black, id, black_next.clone(), 1, now)
        else {
            panic!("the rematch is agreed");
        };
        let state = live.state(now);
        assert_eq!(state.rematch.as_deref(), Some(id.to_string().as_str()));
        assert_eq!(state.rematch_offer, None);
        assert!(!live
            .drop_rematch_offer(Side::White, Answer::Withdraw)
            .unwrap());
        assert_eq!(new.id, id);
        assert_eq!(new.side_of(&white_next), Some(Side::Black));
        assert_eq!(new.side_of(&black_next), Some(Side::White));
        assert_eq!(new.status(), Status::Active);
        assert_eq!(new.clock_settings(), clock);
        assert_eq!(new.visibility(), Visibility::Private);
    }

    #[test]
    fn custom_starts_are_checked() {
        let seats = [SeatKind::Human, SeatKind::Human];
        assert!(matches!(
            LiveGame::new(Uuid::new_v4(), 0, seats, None, Some("not a fen")),
            Err(GameError::BadFen(_))
        ));
        // Already checkmated: refused.
        let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
        assert!(LiveGame::new(Uuid::new_v4(), 0, seats, None, Some(mated)).is_err());
        let live = LiveGame::new(
            Uuid::new_v4(),
            0,
            seats,
            None,
            Some("4k3/8/8/8/8/8/4P3/4K3 b - - 0 1"),
        )
        .unwrap();
        assert_eq!(live.turn(), Side::Black);
    }

    #[tokio::test(start_paused = true)]
    async fn private_seats_and_one_player_per_game() {
        let now = Instant::now();
        let alice = PlayerRef {
            id: "a".into(),
            name: "alice".into(),
            rating: SeatRating::of(1500.0, 350.0),
        };
        let invite = mint().unwrap();
        let mut live = human_game(None, None);
        live.take_seat(Side::White, mint().unwrap().hash, Some(alice.clone()), now)
            .unwrap();
        live.make_private(Some(invite.hash.clone()));
        assert!(!live.is_joinable());
        let wrong = mint().unwrap().hash;
        for given in [None, Some(&wrong)] {
            assert!(matches!(
                live.join(mint().unwrap().hash, None, given, now),
                Err(GameError::InviteRequired | GameError::WrongInvite)
            ));
        }
        assert!(matches!(
            live.join(mint().unwrap().hash, Some(alice), Some(&invite.hash), now),
            Err(GameError::SamePlayer)
        ));
        assert_eq!(live.status(), Status::Waiting, "refusals change nothing");
        let side = live
            .join(mint().unwrap().hash, None, Some(&invite.hash), now)
            .unwrap();
        assert_eq!(side, Side::Black);
        assert_eq!(live.status(), Status::Active);
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

    #[tokio::test(start_paused = true)]
    async fn connections_are_counted() {
        let mut live = seated(human_game(None, None));
        live.connect(Some(Side::White), 1, Instant::now());
        live.connect(None, 1, Instant::now());
        live.connect(None, 1, Instant::now());
        let state = live.state(Instant::now());
        assert!(matches!(
            state.white,
            SeatView::Human {
                connected: true,
                ..
            }
        ));
        assert!(matches!(
            state.black,
            SeatView::Human {
                connected: false,
                ..
            }
        ));
        assert_eq!(state.spectators, 2);
        live.connect(Some(Side::White), -1, Instant::now());
        live.connect(None, -5, Instant::now());
        let state = live.state(Instant::now());
        assert!(matches!(
            state.white,
            SeatView::Human {
                connected: false,
                ..
            }
        ));
        assert_eq!(state.spectators, 0);
    }
}
