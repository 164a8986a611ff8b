//! What a player sees at the table, for local and online games alike: the
//! game so far, which way the board faces, the picked piece, and the answers
//! to `pick`, `place`, `info` and typed moves. Nothing here changes the game:
//! the session that owns the table decides whether and where a move is
//! played (locally, or sent to the server).

use std::fmt::Write as _;

use rookery_engine::{Bitboard, Color, Game, Move, MoveKind, Position, Role, SanError, Square};

use crate::board::{self, Look, Marks};

pub struct Table {
    pub game: Game,
    pub flipped: bool,
    pub picked: Option<Square>,
}

/// A square name from user input (`e4`, case-insensitive).
pub fn parse_square(text: &str) -> Result<Square, String> {
    Square::from_name(&text.to_ascii_lowercase())
        .ok_or_else(|| format!("{text:?} is not a square (use a file a-h and a rank 1-8, like e4)"))
}

/// Looks like UCI (`e2e4`, `e7e8q`) rather than SAN.
fn looks_like_uci(text: &str) -> bool {
    let b = text.as_bytes();
    (b.len() == 4 || b.len() == 5)
        && (b'a'..=b'h').contains(&b[0])
        && (b'1'..=b'8').contains(&b[1])
        && (b'a'..=b'h').contains(&b[2])
        && (b'1'..=b'8').contains(&b[3])
}

impl Table {
    pub fn new(game: Game) -> Table {
        Table {
            game,
            flipped: false,
            picked: None,
        }
    }

    pub fn position(&self) -> &Position {
        self.game.position()
    }

    /// `mv` in UCI as the server reads it in this game: castling king
    /// takes rook in Chess960 (where the king's two squares may be a king
    /// step), the king's two squares in standard chess.
    pub fn uci(&self, mv: Move) -> String {
        self.position().uci(mv)
    }

    /// The legal move that `text` (SAN or UCI) names here, or why there is
    /// none.
    pub fn parse_move(&self, text: &str) -> Result<Move, String> {
        let pos = self.position();
        if looks_like_uci(text) {
            return pos
                .parse_uci(text)
                .map_err(|_| format!("illegal move here: {text}"));
        }
        pos.parse_san(text).map_err(|e| match e {
            SanError::Syntax(_) => {
                format!("{text:?} is neither a command nor a move (type help for the commands)")
            }
            SanError::Illegal(_) => format!("illegal move here: {text}"),
            SanError::Ambiguous(_) => {
                format!("ambiguous move: {text} fits more than one piece (add the file or rank it starts from, like Nbd2)")
            }
        })
    }

    /// Picks the piece on `sq`, which must belong to `side`.
    pub fn pick(&mut self, sq: Square, side: Color) -> Result<String, String> {
        let pos = self.position();
        let Some(piece) = pos.piece_at(sq) else {
            return Err(format!("{sq} is empty: pick one of your pieces"));
        };
        if piece.color != side {
            return Err(format!(
                "{sq} holds a {} piece: pick one of your own",
                piece.color
            ));
        }
        if pos.turn() != side {
            return Err("it is not your turn".to_string());
        }
        let count = pos.legal_moves().iter().filter(|m| m.from() == sq).count();
        self.picked = Some(sq);
        Ok(match count {
            0 => format!(
                "picked {} on {sq}: it has no legal move (place {sq} to put it back)",
                role_name(piece.role)
            ),
            n => format!(
                "picked {} on {sq}: {n} legal move{}",
                role_name(piece.role),
                if n == 1 { "" } else { "s" }
            ),
        })
    }

    /// The move that `place` on `target` means, or `None` to put the picked
    /// piece back. `promotion` picks the new role (a queen by default).
    pub fn place(
        &mut self,
        target: Square,
        promotion: Option<Role>,
    ) -> Result<Option<Move>, String> {
        let Some(from) = self.picked else {
            return Err("nothing is picked: pick a piece first (pick e2)".to_string());
        };
        if target == from {
            self.picked = None;
            return Ok(None);
        }
        // A castle is placed on its rook (Chess960's way of naming it) or
        // on the king's landing square, unless a plain move goes there (a
        // king step onto that square wins).
        let pos = self.position();
        let from_here: Vec<Move> = pos
            .legal_moves()
            .iter()
            .copied()
            .filter(|m| m.from() == from)
            .collect();
        let plain: Vec<Move> = from_here
            .iter()
            .copied()
            .filter(|m| !m.is_castle() && m.to() == target)
            .collect();
        let candidates = if plain.is_empty() {
            from_here
                .into_iter()
                .filter(|m| {
                    pos.castling_rook_squares(*m)
                        .is_some_and(|(rook, _)| rook == target || m.to() == target)
                })
                .collect()
        } else {
            plain
        };
        let chosen = match candidates.as_slice() {
            [] => return Err(format!("the piece on {from} cannot move to {target}")),
            [only] => *only,
            several => {
                let want = promotion.unwrap_or(Role::Queen);
                match several.iter().find(|m| m.promotion() == Some(want)) {
                    Some(m) => *m,
                    None => return Err(format!("a pawn cannot promote to a {}", role_name(want))),
                }
            }
        };
        self.picked = None;
        Ok(Some(chosen))
    }

    /// Drops the pick when it no longer fits the position (after a move or
    /// an undo).
    pub fn forget_stale_pick(&mut self) {
        if let Some(sq) = self.picked {
            let pos = self.position();
            if pos.color_at(sq) != Some(pos.turn()) {
                self.picked = None;
            }
        }
    }

    /// The marks for the board: pick and its targets, last move, check.
    pub fn marks(&self) -> Marks {
        let pos = self.position();
        let mut marks = Marks {
            last_move: self.game.moves().last().map(|m| (m.from(), m.to())),
            check: pos.is_check().then(|| pos.king(pos.turn())),
            ..Marks::default()
        };
        if let Some(from) = self.picked {
            marks.picked = Some(from);
            for mv in pos.legal_moves().iter().filter(|m| m.from() == from) {
                let captured = pos.color_at(mv.to()) == Some(!pos.turn()) || mv.is_en_passant();
                // Castling is the king's two-square move onto an empty square.
                if captured {
                    marks.captures = marks.captures.with(mv.to());
                } else {
                    marks.targets = marks.targets.with(mv.to());
                }
            }
        }
        marks
    }

    /// The board with its marks and, below it, the last move, check and the
    /// move list.
    pub fn render(&self, look: Look, extra: &str) -> String {
        let mut out = board::render(self.position(), &self.marks(), self.flipped, look);
        out.push_str(extra);
        if let Some(last) = self.game.san_moves().last() {
            let _ = writeln!(out, "last move: {last}");
        }
        let pos = self.position();
        if pos.is_check() {
            let _ = writeln!(out, "{} is in check", pos.turn());
        }
        let moves = self.movetext();
        if !moves.is_empty() {
            let _ = writeln!(out, "moves: {moves}");
        }
        out
    }

    /// The moves so far as numbered SAN (`1. e4 e5 2. Nf3`).
    pub fn movetext(&self) -> String {
        let initial = self.game.initial_position();
        let mut number = initial.fullmove_number();
        let mut turn = initial.turn();
        let mut out = String::new();
        for (i, san) in self.game.san_moves().iter().enumerate() {
            if !out.is_empty() {
                out.push(' ');
            }
            match turn {
                Color::White => {
                    let _ = write!(out, "{number}. ");
                }
                Color::Black if i == 0 => {
                    let _ = write!(out, "{number}... ");
                }
                Color::Black => {}
            }
            out.push_str(san);
            if turn == Color::Black {
                number += 1;
            }
            turn = !turn;
        }
        out
    }

    /// The numbered SAN of the move at `index` in the game (`3. Nf3`,
    /// `3... Nc6`), for announcing moves one at a time.
    pub fn numbered_san(&self, index: usize) -> Option<String> {
        let san = self.game.san_moves().get(index)?;
        let initial = self.game.initial_position();
        let plies_before = index as u32 + u32::from(initial.turn() == Color::Black);
        let number = initial.fullmove_number() + plies_before / 2;
        Some(if plies_before % 2 == 0 {
            format!("{number}. {san}")
        } else {
            format!("{number}... {san}")
        })
    }

    /// `info SQ`: the piece there, how many times it has moved in this game,
    /// and where it started.
    pub fn info(&self, sq: Square) -> String {
        let pos = self.position();
        let Some(piece) = pos.piece_at(sq) else {
            return format!("{sq}: empty");
        };
        let history = PieceHistory::of(&self.game);
        let moved = history.moves[sq.index()];
        let origin = history.origin[sq.index()];
        let mut text = format!(
            "{sq}: {} {}, moved {moved} time{}",
            piece.color,
            role_name(piece.role),
            if moved == 1 { "" } else { "s" }
        );
        if moved > 0 {
            let _ = write!(text, " (started on {origin})");
        }
        if history.promoted.contains(sq) {
            text.push_str(", promoted from a pawn");
        }
        text
    }
}

/// Where each piece on the board came from and how often it moved, found by
/// replaying the game: the position alone cannot tell two knights apart.
struct PieceHistory {
    moves: [u32; 64],
    origin: [Square; 64],
    promoted: Bitboard,
}

impl PieceHistory {
    fn of(game: &Game) -> PieceHistory {
        let mut history = PieceHistory {
            moves: [0; 64],
            origin: std::array::from_fn(|i| Square::new(i as u8)),
            promoted: Bitboard::EMPTY,
        };
        let mut position = game.initial_position().clone();
        for &mv in game.moves() {
            let castle = position.castling_rook_squares(mv);
            if let Ok(next) = position.play(mv) {
                position = next;
            }
            if mv.kind() != MoveKind::Castle {
                history.shift(mv.from(), mv.to());
            }
            match mv.kind() {
                MoveKind::Castle => {
                    // King and rook move together, from wherever they
                    // stood (Chess960): one may land where the other was.
                    if let Some((rook_from, rook_to)) = castle {
                        history.swap_in(&[(mv.from(), mv.to()), (rook_from, rook_to)]);
                    }
                }
                MoveKind::EnPassant => {
                    // The captured pawn stood beside the target square.
                    if let Some(taken) = Square::from_coords(mv.to().file(), mv.from().rank()) {
                        history.moves[taken.index()] = 0;
                        history.promoted = history.promoted.without(taken);
                    }
                }
                MoveKind::Promotion(_) => history.promoted = history.promoted.with(mv.to()),
                MoveKind::Normal => {}
            }
        }
        history
    }

    /// Several pieces moving at once (a castle): each takes its history to
    /// its new square, read before any of them is written.
    fn swap_in(&mut self, moves: &[(Square, Square)]) {
        let taken: Vec<(u32, Square)> = moves
            .iter()
            .map(|(from, _)| (self.moves[from.index()], self.origin[from.index()]))
            .collect();
        for (from, _) in moves {
            self.moves[from.index()] = 0;
            self.origin[from.index()] = *from;
        }
        for ((_, to), (moved, origin)) in moves.iter().zip(taken) {
            self.moves[to.index()] = moved + 1;
            self.origin[to.index()] = origin;
        }
    }

    fn shift(&mut self, from: Square, to: Square) {
        self.moves[to.index()] = self.moves[from.index()] + 1;
        self.origin[to.index()] = self.origin[from.index()];
        self.moves[from.index()] = 0;
        self.origin[from.index()] = from;
        let was_promoted = self.promoted.contains(from);
        self.promoted = self.promoted.without(from).without(to);
        if was_promoted {
            self.promoted = self.promoted.with(to);
        }
    }
}

pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Pawn => "pawn",
        Role::Knight => "knight",
        Role::Bishop => "bishop",
        Role::Rook => "rook",
        Role::Queen => "queen",
        Role::King => "king",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(moves: &str) -> Table {
        let mut game = Game::default();
        for uci in moves.split_whitespace() {
            game.play_uci(uci).unwrap();
        }
        Table::new(game)
    }

    fn sq(name: &str) -> Square {
        Square::from_name(name).unwrap()
    }

    #[test]
    fn info_follows_a_piece_through_the_game() {
        let t = table("g1f3 b8c6 f3g5 c6e5 g5e4");
        assert_eq!(
            t.info(sq("e4")),
            "e4: white knight, moved 3 times (started on g1)"
        );
        assert_eq!(
            t.info(sq("e5")),
            "e5: black knight, moved 2 times (started on b8)"
        );
        assert_eq!(t.info(sq("a1")), "a1: white rook, moved 0 times");
        assert_eq!(t.info(sq("d4")), "d4: empty");
    }

    /// Start 759 (`RKBNNRQB`) after White's long castle (king b1 to c1,
    /// the rook a1 over it to d1) and Black's short one (king b8 to g8, the
    /// rook already on f8): each piece is followed from its own square, the
    /// castles are placed on the rook or the king's square, and sent king
    /// takes rook.
    #[test]
    fn chess960_castles_follow_their_rooks() {
        let mut game = Game::new(rookery_engine::chess960_start(759).unwrap());
        for uci in "d2d3 d7d6 c1d2 c8d7 d1e3 d8e6".split_whitespace() {
            game.play_uci(uci).unwrap();
        }
        let mut t = Table::new(game);
        t.pick(sq("b1"), Color::White).unwrap();
        // c1 is also a plain king step: placing there is the step.
        let step = t.place(sq("c1"), None).unwrap().unwrap();
        assert_eq!(t.uci(step), "b1c1");
        t.pick(sq("b1"), Color::White).unwrap();
        let castle = t.place(sq("a1"), None).unwrap().unwrap();
        assert_eq!(t.uci(castle), "b1a1");
        t.game.play(castle).unwrap();
        for uci in "e8f6 e1f3 g7g6 h2h3 g8g7 a2a3".split_whitespace() {
            t.game.play_uci(uci).unwrap();
        }
        let short = t.parse_move("O-O").unwrap();
        assert_eq!(t.uci(short), "b8f8");
        t.pick(sq("b8"), Color::Black).unwrap();
        assert_eq!(t.place(sq("g8"), None).unwrap(), Some(short));
        t.game.play(short).unwrap();
        assert_eq!(
            t.info(sq("c1")),
            "c1: white king, moved 1 time (started on b1)"
        );
        assert_eq!(
            t.info(sq("d1")),
            "d1: white rook, moved 1 time (started on a1)"
        );
        assert_eq!(
            t.info(sq("g8")),
            "g8: black king, moved 1 time (started on b8)"
        );
        assert_eq!(
            t.info(sq("f8")),
            "f8: black rook, moved 1 time (started on f8)"
        );
    }

    #[test]
    fn info_after_castling_counts_the_rook() {
        let t = table("e2e4 e7e5 g1f3 b8c6 f1c4 f8c5 e1g1");
        assert_eq!(
            t.info(sq("g1")),
            "g1: white king, moved 1 time (started on e1)"
        );
        assert_eq!(
            t.info(sq("f1")),
            "f1: white rook, moved 1 time (started on h1)"
        );
    }

    #[test]
    fn place_on_own_square_puts_back() {
        let mut t = table("");
        t.pick(sq("e2"), Color::White).unwrap();
        assert_eq!(t.place(sq("e2"), None), Ok(None));
        assert_eq!(t.picked, None);
        t.pick(sq("e2"), Color::White).unwrap();
        assert!(t.place(sq("e5"), None).is_err());
        assert_eq!(t.picked, Some(sq("e2")), "a refused place keeps the pick");
        let mv = t.place(sq("e4"), None).unwrap().unwrap();
        assert_eq!(mv.to_uci(), "e2e4");
    }

    #[test]
    fn pick_marks_targets_and_captures() {
        let mut t = table("e2e4 d7d5");
        t.pick(sq("e4"), Color::White).unwrap();
        let marks = t.marks();
        assert!(marks.targets.contains(sq("e5")));
        assert!(marks.captures.contains(sq("d5")));
        assert!(t.pick(sq("d5"), Color::White).is_err());
    }

    #[test]
    fn numbered_san_counts_from_the_start() {
        let t = table("e2e4 e7e5 g1f3");
        assert_eq!(t.numbered_san(0).unwrap(), "1. e4");
        assert_eq!(t.numbered_san(1).unwrap(), "1... e5");
        assert_eq!(t.numbered_san(2).unwrap(), "2. Nf3");
        assert_eq!(t.movetext(), "1. e4 e5 2. Nf3");
    }
}
