//! The training record: one scored position in 32 bytes.
//!
//! Every record has the same size, so a file of records needs no index: the
//! n-th position is at byte 32 n, a reader can shuffle or split a file by
//! offsets, and a file whose length is not a multiple of 32 has a torn
//! record at its end (the only way a record can be damaged by an
//! interrupted append), which [`super::DataFile::open`] cuts off.
//!
//! The layout (multi-byte numbers little-endian; squares numbered a1 = 0,
//! b1 = 1, …, h8 = 63):
//!
//! | bytes  | field |
//! | ------ | ----- |
//! | 0..8   | occupancy, `u64`: bit `s` set when square `s` holds a piece |
//! | 8..24  | the pieces, one 4-bit code per occupied square in ascending square order, the first in the low half of byte 8; code = colour × 8 + role (colour 0 White, 1 Black; role 0 pawn, 1 knight, 2 bishop, 3 rook, 4 queen, 5 king); unused halves 0 |
//! | 24     | bit 0: side to move (1 = Black); bits 1–4: castling rights (White king side, White queen side, Black king side, Black queen side); bits 5–7: 0 |
//! | 25     | en-passant square (only when the capture is legal), 64 for none |
//! | 26     | half-move clock, saturated at 255 |
//! | 27..29 | full-move number, `u16`, saturated |
//! | 29..31 | score, `i16`: centipawns from White's point of view, by the generator's fixed-node search |
//! | 31     | result, `i8`: the game's result for White: 1 won, 0 drawn, −1 lost |
//!
//! Both the score and the result are kept, so the trainer chooses the blend
//! (`target = λ · sigmoid(score) + (1 − λ) · result`). The board is packed
//! the way compact chess formats do (occupancy plus piece codes: 24 bytes
//! instead of 64), which is what keeps a position in 32 bytes; a legal
//! position has at most 32 men, so 16 bytes of codes always suffice.
//! White's point of view for both labels: a record means the same whoever
//! reads it, and flipping to the side to move is one sign.

use thiserror::Error;

use crate::bitboard::Bitboard;
use crate::position::Position;
use crate::types::{Color, Piece, Role, Square};

/// The size of one record in bytes.
pub const RECORD_BYTES: usize = 32;

const EP_NONE: u8 = 64;

/// How a game ended, for White.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    WhiteWins,
    Draw,
    BlackWins,
}

impl GameResult {
    /// The winner, `None` for a draw.
    pub fn from_winner(winner: Option<Color>) -> GameResult {
        match winner {
            Some(Color::White) => GameResult::WhiteWins,
            Some(Color::Black) => GameResult::BlackWins,
            None => GameResult::Draw,
        }
    }

    /// 1, 0 or −1: the result for White.
    pub const fn signum(self) -> i8 {
        match self {
            GameResult::WhiteWins => 1,
            GameResult::Draw => 0,
            GameResult::BlackWins => -1,
        }
    }

    /// The score the result is worth to White: 1, ½ or 0.
    pub fn white_points(self) -> f32 {
        (self.signum() as f32 + 1.0) / 2.0
    }
}

/// Why 32 bytes are not a record, or a position cannot be one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RecordError {
    #[error("{0} men on the board: a record holds at most 32")]
    TooManyMen(u32),
    #[error("bad piece code {code} on square {square}")]
    PieceCode { code: u8, square: u8 },
    #[error("bad flags byte {0:#04x}")]
    Flags(u8),
    #[error("bad en-passant square {0}")]
    EnPassant(u8),
    #[error("bad result byte {0}")]
    Result(i8),
    #[error("not a legal position: {0}")]
    Position(#[from] crate::fen::FenError),
}

/// One scored position, in its on-disk form.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PackedRecord(pub [u8; RECORD_BYTES]);

impl std::fmt::Debug for PackedRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.position() {
            Ok(position) => write!(
                f,
                "PackedRecord({} score {} result {:?})",
                position.to_fen(),
                self.score(),
                self.result()
            ),
            Err(e) => write!(f, "PackedRecord(invalid: {e})"),
        }
    }
}

impl PackedRecord {
    /// Packs `position` with its search score (centipawns for White) and
    /// the game's result.
    pub fn pack(
        position: &Position,
        white_score: i16,
        result: GameResult,
    ) -> Result<PackedRecord, RecordError> {
        let occupied = position.occupied();
        if occupied.count() > 32 {
            return Err(RecordError::TooManyMen(occupied.count()));
        }
        let mut bytes = [0u8; RECORD_BYTES];
        bytes[0..8].copy_from_slice(&occupied.0.to_le_bytes());
        for (i, square) in occupied.enumerate() {
            let piece = position
                .piece_at(square)
                .expect("an occupied square holds a piece");
            let code = (piece.color.index() as u8) << 3 | piece.role.index() as u8;
            bytes[8 + i / 2] |= code << (4 * (i % 2));
        }
        bytes[24] = position.turn().index() as u8 | position.castling_sides() << 1;
        bytes[25] = position.ep_square().map_or(EP_NONE, |sq| sq.index() as u8);
        bytes[26] = position.halfmove_clock().min(255) as u8;
        let fullmove = position.fullmove_number().min(u16::MAX as u32) as u16;
        bytes[27..29].copy_from_slice(&fullmove.to_le_bytes());
        bytes[29..31].copy_from_slice(&white_score.to_le_bytes());
        bytes[31] = result.signum() as u8;
        Ok(PackedRecord(bytes))
    }

    /// The search score in centipawns, from White's point of view.
    pub fn score(&self) -> i16 {
        i16::from_le_bytes([self.0[29], self.0[30]])
    }

    /// The game's result; an error for a byte that is not −1, 0 or 1.
    pub fn result(&self) -> Result<GameResult, RecordError> {
        match self.0[31] as i8 {
            1 => Ok(GameResult::WhiteWins),
            0 => Ok(GameResult::Draw),
            -1 => Ok(GameResult::BlackWins),
            other => Err(RecordError::Result(other)),
        }
    }

    /// Whether either side may still castle: such a position is not the
    /// same game mirrored left to right, one without castling rights is.
    pub fn may_castle(&self) -> bool {
        self.0[24] >> 1 & 0xf != 0
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        if self.0[24] & 1 == 0 {
            Color::White
        } else {
            Color::Black
        }
    }

    /// The men on the board, in ascending square order, read straight from
    /// the bytes (what a trainer needs, without building a position). The
    /// codes are checked first, so the iterator itself cannot fail.
    pub fn pieces(&self) -> Result<impl Iterator<Item = (Square, Piece)> + '_, RecordError> {
        let occupied = self.occupied();
        if occupied.count() > 32 {
            return Err(RecordError::TooManyMen(occupied.count()));
        }
        for (i, square) in occupied.enumerate() {
            let code = self.code(i);
            if code & 7 >= Role::ALL.len() as u8 {
                return Err(RecordError::PieceCode {
                    code,
                    square: square.index() as u8,
                });
            }
        }
        Ok(occupied.enumerate().map(|(i, square)| {
            let code = self.code(i);
            let color = if code & 8 == 0 {
                Color::White
            } else {
                Color::Black
            };
            (square, Piece::new(color, Role::ALL[(code & 7) as usize]))
        }))
    }

    /// The code of the `i`-th man (in square order).
    fn code(&self, i: usize) -> u8 {
        self.0[8 + i / 2] >> (4 * (i % 2)) & 0xf
    }

    fn occupied(&self) -> Bitboard {
        let mut word = [0u8; 8];
        word.copy_from_slice(&self.0[0..8]);
        Bitboard(u64::from_le_bytes(word))
    }

    /// The position, checked as thoroughly as a FEN (kings, pawns on the
    /// back ranks, the side not to move in check, …): a damaged record is
    /// an error, never a panic or a nonsense position.
    pub fn position(&self) -> Result<Position, RecordError> {
        let mut board = [None; 64];
        for (square, piece) in self.pieces()? {
            board[square.index()] = Some(piece);
        }
        let flags = self.0[24];
        if flags & 0xe0 != 0 {
            return Err(RecordError::Flags(flags));
        }
        let ep = self.0[25];
        if ep > EP_NONE {
            return Err(RecordError::EnPassant(ep));
        }
        self.result()?;

        let mut fen = String::with_capacity(90);
        crate::fen::push_placement(&mut fen, |square| board[square.index()]);
        fen.push_str(if flags & 1 == 0 { " w " } else { " b " });
        let castling = flags >> 1 & 0xf;
        if castling == 0 {
            fen.push('-');
        }
        for (bit, letter) in [(1, 'K'), (2, 'Q'), (4, 'k'), (8, 'q')] {
            if castling & bit != 0 {
                fen.push(letter);
            }
        }
        match ep {
            EP_NONE => fen.push_str(" -"),
            ep => {
                let square = Square::new(ep);
                fen.push(' ');
                fen.push(square.file_char());
                fen.push(square.rank_char());
            }
        }
        let fullmove = u16::from_le_bytes([self.0[27], self.0[28]]);
        fen.push_str(&format!(" {} {}", self.0[26], fullmove));
        let position = Position::from_fen(&fen)?;
        Ok(position)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// Positions with every feature a record keeps: castling rights, a
    /// legal en-passant capture, promoted men, large clocks.
    const FENS: [&str; 6] = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 b - - 37 60",
        "4k3/8/8/8/8/8/8/4K2R w K - 300 70000",
        "4k3/8/8/8/8/8/8/QQQ1K3 b - - 0 1",
    ];

    #[test]
    fn positions_and_labels_survive_packing() {
        for (i, fen) in FENS.iter().enumerate() {
            let position = Position::from_fen(fen).unwrap();
            for (score, result) in [
                (0, GameResult::Draw),
                (i16::MAX, GameResult::WhiteWins),
                (-1234, GameResult::BlackWins),
            ] {
                let record = PackedRecord::pack(&position, score, result).unwrap();
                let back = record.position().unwrap();
                // Clocks saturate; everything else is exact.
                let expected = match i {
                    4 => "4k3/8/8/8/8/8/8/4K2R w K - 255 65535".to_string(),
                    _ => position.to_fen(),
                };
                assert_eq!(back.to_fen(), expected);
                assert_eq!(record.score(), score);
                assert_eq!(record.result(), Ok(result));
                assert_eq!(record.turn(), position.turn());
                let pieces: Vec<_> = record.pieces().unwrap().collect();
                let expected: Vec<_> = position
                    .occupied()
                    .map(|sq| (sq, position.piece_at(sq).unwrap()))
                    .collect();
                assert_eq!(pieces, expected);
            }
        }
    }

    #[test]
    fn the_layout_is_the_documented_one() {
        let position = Position::from_fen(FENS[2]).unwrap();
        let bytes = PackedRecord::pack(&position, -300, GameResult::BlackWins)
            .unwrap()
            .0;
        assert_eq!(
            u64::from_le_bytes(bytes[0..8].try_into().unwrap()),
            position.occupied().0
        );
        // a1 holds a white rook (code 3), b1 a white knight (1).
        assert_eq!(bytes[8], 0x13);
        // The last man is the black rook on h8 (8 + 3), the 32nd: high half.
        assert_eq!(bytes[23] >> 4, 0xb);
        assert_eq!(bytes[24], 15 << 1, "White to move, all castling rights");
        assert_eq!(bytes[25], Square::F6.index() as u8);
        assert_eq!((bytes[26], bytes[27], bytes[28]), (0, 3, 0));
        assert_eq!(i16::from_le_bytes([bytes[29], bytes[30]]), -300);
        assert_eq!(bytes[31] as i8, -1);
    }

    #[test]
    fn damaged_records_are_errors_not_panics() {
        let mut rng = SplitMix64::new(7);
        let good = PackedRecord::pack(&Position::startpos(), 10, GameResult::Draw).unwrap();
        let mut errors = 0;
        for _ in 0..20_000 {
            let mut bytes = good.0;
            // One to four random bytes overwritten.
            for _ in 0..=rng.below(4) {
                bytes[rng.below(RECORD_BYTES)] = rng.next_u64() as u8;
            }
            let record = PackedRecord(bytes);
            if record.position().is_err() {
                errors += 1;
            }
            let _ = record.result();
            let _ = record.pieces().map(|p| p.count());
        }
        assert!(errors > 1000, "{errors} damaged records refused");
        let mut bytes = good.0;
        bytes[31] = 2;
        assert_eq!(PackedRecord(bytes).result(), Err(RecordError::Result(2)));
        bytes = good.0;
        bytes[24] |= 0x80;
        assert!(matches!(
            PackedRecord(bytes).position(),
            Err(RecordError::Flags(_))
        ));
        // A full-random record, occupancy of every square.
        bytes = [0xff; RECORD_BYTES];
        assert!(matches!(
            PackedRecord(bytes).position(),
            Err(RecordError::TooManyMen(64))
        ));
    }
}
