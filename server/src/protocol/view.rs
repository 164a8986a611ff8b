//! The game as the wire shows it: [`view`] is the one builder of the
//! [`GameState`] sent to clients, from a [`GameSnapshot`]. Both kinds of
//! game make a snapshot: a live one (`LiveGame::snapshot`) and a stored
//! one read for a list without replaying its moves
//! (`store::rows::ListRow::state`). What only one of them knows is spelled
//! out in the snapshot, so the two states differ only there.

use rookery_engine::Position;

use super::{ClockView, GameState, OfferAnswer, SeatView};
use crate::domain::{Ending, GameSeat, Rematch, Side, Status, Variant, Visibility};

/// What a game's [`GameState`] is made of, from a live game or a stored row.
#[derive(Debug)]
pub struct GameSnapshot<'a> {
    pub id: String,
    /// A live game's is derived from its ending and seats; a stored game's
    /// is its `status` column.
    pub status: Status,
    /// White's seat, then black's. A stored game's seats count no
    /// connection (presence lives only in a live game's actor), so they
    /// show as not connected.
    pub seats: [&'a GameSeat; 2],
    /// A live game's is written from its start position; a stored game's is
    /// the FEN as stored.
    pub initial_fen: String,
    /// The current position: the side to move, the check and the legal
    /// moves (spelled in its castling mode, which is the variant's).
    pub position: &'a Position,
    /// The current position's FEN: a live game's is written from
    /// `position`; a stored game's is the `fen` column as stored (which
    /// `position` was read from).
    pub fen: String,
    /// All moves in UCI, imported history included.
    pub moves: Vec<String>,
    /// The same moves in SAN.
    pub san: Vec<String>,
    pub ending: Option<Ending>,
    /// Both clocks now: a live game's from its running clock, a stored
    /// game's from the times stored at its turn's start less the thinking
    /// done since.
    pub clock: Option<ClockView>,
    pub draw_offer: Option<Side>,
    pub takeback_offer: Option<Side>,
    pub takebacks: u32,
    pub rematch: Option<&'a Rematch>,
    pub created_at: i64,
    pub rated: bool,
    pub visibility: Visibility,
    pub variant: Variant,
    /// The sides (white, black) that went berserk (arena games).
    pub berserk: [bool; 2],
    /// What only a live game knows.
    pub live: LiveOnly,
}

/// The parts of a [`GameState`] that only a live game's actor knows; a
/// stored game shows [`LiveOnly::STORED`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveOnly {
    /// Read-only WebSocket connections watching now.
    pub spectators: u32,
    /// The time left for the side to move's first move, while its wait runs.
    pub first_move_ms: Option<u64>,
    /// What became of an offer in the last change.
    pub offer_answer: Option<OfferAnswer>,
}

impl LiveOnly {
    /// A stored game read without its actor: nobody counted as watching, no
    /// first-move wait shown (it is not stored: it starts again when the
    /// game is loaded), no offer answer (sent once, with its change).
    pub const STORED: LiveOnly = LiveOnly {
        spectators: 0,
        first_move_ms: None,
        offer_answer: None,
    };
}

/// The wire state of the game `snapshot` shows.
pub fn view(snapshot: GameSnapshot<'_>) -> GameState {
    let GameSnapshot {
        id,
        status,
        seats: [white, black],
        initial_fen,
        position,
        fen,
        moves,
        san,
        ending,
        clock,
        draw_offer,
        takeback_offer,
        takebacks,
        rematch,
        created_at,
        rated,
        visibility,
        variant,
        berserk,
        live,
    } = snapshot;
    GameState {
        id,
        status,
        white: white.view(),
        black: black.view(),
        initial_fen,
        fen,
        turn: Side::from(position.turn()),
        moves,
        san,
        legal_moves: if status == Status::Finished {
            Vec::new()
        } else {
            legal_uci(position)
        },
        check: position.is_check(),
        result: ending.and_then(|e| e.result()).map(str::to_string),
        termination: ending.map(|e| e.termination.as_str().to_string()),
        clock,
        draw_offer,
        takeback_offer,
        takebacks,
        rematch_offer: rematch.filter(|r| !r.agreed).map(|r| r.offered_by),
        rematch: rematch.filter(|r| r.agreed).map(|r| r.game.to_string()),
        spectators: live.spectators,
        created_at,
        rated,
        visibility,
        joinable: status == Status::Waiting && visibility == Visibility::Open,
        first_move_ms: live.first_move_ms,
        offer_answer: live.offer_answer,
        variant,
        berserk: Side::BOTH
            .into_iter()
            .filter(|side| berserk[side.index()])
            .collect(),
    }
}

impl GameSeat {
    fn view(&self) -> SeatView {
        match self {
            GameSeat::Human {
                token,
                player,
                connections,
            } => SeatView::Human {
                name: player.as_ref().map(|p| p.name.clone()),
                connected: *connections > 0,
                taken: token.is_some(),
                rating: player.as_ref().map(|p| p.rating),
            },
            GameSeat::Ai { level } => SeatView::Ai { level: *level },
        }
    }
}

/// Every legal move of `position`, in UCI as the position spells it
/// (Chess960 castling as king takes rook).
pub fn legal_uci(position: &rookery_engine::Position) -> Vec<String> {
    position
        .legal_moves()
        .iter()
        .map(|&mv| position.uci(mv))
        .collect()
}
