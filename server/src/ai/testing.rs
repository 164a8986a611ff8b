//! What the scheduler's unit tests share: a request and a move.

use rookery_engine::{Move, Position};

use crate::ai::{Priority, SearchRequest};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

pub(super) fn request(ply: usize, priority: Priority) -> SearchRequest {
    SearchRequest {
        ply,
        position: Position::from_fen(START).unwrap(),
        history: Vec::new(),
        level: 1,
        clock: None,
        priority,
        client: None,
    }
}

pub(super) fn first_legal_move() -> Move {
    Position::startpos().parse_uci("e2e4").unwrap()
}
