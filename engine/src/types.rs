//! The small value types of chess: colours, roles, pieces and squares.

use std::fmt;
use std::ops::Not;

/// A side. `White` moves first.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Color {
    White = 0,
    Black = 1,
}

impl Color {
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// `"white"` or `"black"`, as the HTTP API spells colours.
    pub const fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }

    /// Picks the value for this colour.
    #[inline]
    pub fn fold<T>(self, white: T, black: T) -> T {
        match self {
            Color::White => white,
            Color::Black => black,
        }
    }

    /// The FEN letter for the side to move: `w` or `b`.
    pub const fn fen_char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }
}

impl Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a piece is, regardless of colour.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Role {
    Pawn = 0,
    Knight = 1,
    Bishop = 2,
    Rook = 3,
    Queen = 4,
    King = 5,
}

impl Role {
    pub const ALL: [Role; 6] = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ];

    /// The roles a pawn may promote to, strongest first.
    pub const PROMOTIONS: [Role; 4] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Lower-case letter (`p n b r q k`), as in UCI promotions and black FEN pieces.
    pub const fn char(self) -> char {
        match self {
            Role::Pawn => 'p',
            Role::Knight => 'n',
            Role::Bishop => 'b',
            Role::Rook => 'r',
            Role::Queen => 'q',
            Role::King => 'k',
        }
    }

    /// Upper-case letter (`P N B R Q K`), as in SAN and the web client's `data-piece`.
    pub const fn upper_char(self) -> char {
        self.char().to_ascii_uppercase()
    }

    /// Parses a role letter in either case.
    pub const fn from_char(c: char) -> Option<Role> {
        match c.to_ascii_lowercase() {
            'p' => Some(Role::Pawn),
            'n' => Some(Role::Knight),
            'b' => Some(Role::Bishop),
            'r' => Some(Role::Rook),
            'q' => Some(Role::Queen),
            'k' => Some(Role::King),
            _ => None,
        }
    }
}

/// A coloured piece.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Piece {
    pub color: Color,
    pub role: Role,
}

impl Piece {
    pub const fn new(color: Color, role: Role) -> Piece {
        Piece { color, role }
    }

    /// FEN letter: upper case for white, lower case for black.
    pub const fn fen_char(self) -> char {
        match self.color {
            Color::White => self.role.upper_char(),
            Color::Black => self.role.char(),
        }
    }

    pub const fn from_fen_char(c: char) -> Option<Piece> {
        match Role::from_char(c) {
            Some(role) if c.is_ascii_uppercase() => Some(Piece::new(Color::White, role)),
            Some(role) => Some(Piece::new(Color::Black, role)),
            None => None,
        }
    }
}

/// One of the 64 squares, numbered a1 = 0, b1 = 1, …, h8 = 63.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

macro_rules! square_consts {
    ($($name:ident = $index:expr),* $(,)?) => {
        impl Square {
            $(pub const $name: Square = Square($index);)*
        }
    };
}

square_consts! {
    A1 = 0, B1 = 1, C1 = 2, D1 = 3, E1 = 4, F1 = 5, G1 = 6, H1 = 7,
    A2 = 8, B2 = 9, C2 = 10, D2 = 11, E2 = 12, F2 = 13, G2 = 14, H2 = 15,
    A3 = 16, B3 = 17, C3 = 18, D3 = 19, E3 = 20, F3 = 21, G3 = 22, H3 = 23,
    A4 = 24, B4 = 25, C4 = 26, D4 = 27, E4 = 28, F4 = 29, G4 = 30, H4 = 31,
    A5 = 32, B5 = 33, C5 = 34, D5 = 35, E5 = 36, F5 = 37, G5 = 38, H5 = 39,
    A6 = 40, B6 = 41, C6 = 42, D6 = 43, E6 = 44, F6 = 45, G6 = 46, H6 = 47,
    A7 = 48, B7 = 49, C7 = 50, D7 = 51, E7 = 52, F7 = 53, G7 = 54, H7 = 55,
    A8 = 56, B8 = 57, C8 = 58, D8 = 59, E8 = 60, F8 = 61, G8 = 62, H8 = 63,
}

impl Square {
    /// The square with this index (0..64).
    ///
    /// # Panics
    /// If `index >= 64`; this is a programming error, never user input.
    #[inline]
    pub const fn new(index: u8) -> Square {
        assert!(index < 64);
        Square(index)
    }

    /// `file` and `rank` are 0-based (a = 0, rank 1 = 0).
    #[inline]
    pub const fn from_coords(file: u8, rank: u8) -> Option<Square> {
        if file < 8 && rank < 8 {
            Some(Square(rank * 8 + file))
        } else {
            None
        }
    }

    /// Every square from a1 to h8.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..64).map(Square)
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    #[inline]
    pub const fn file(self) -> u8 {
        self.0 & 7
    }

    #[inline]
    pub const fn rank(self) -> u8 {
        self.0 >> 3
    }

    /// The rank as seen from `color`'s side: 0 is its back rank.
    #[inline]
    pub const fn relative_rank(self, color: Color) -> u8 {
        match color {
            Color::White => self.rank(),
            Color::Black => 7 - self.rank(),
        }
    }

    /// The same square seen from the other side of the board (a1 ↔ a8).
    #[inline]
    pub const fn flip_vertical(self) -> Square {
        Square(self.0 ^ 56)
    }

    /// The square `(file + df, rank + dr)`, if it is on the board.
    #[inline]
    pub const fn offset(self, df: i8, dr: i8) -> Option<Square> {
        match crate::geometry::offset(self.0, df, dr) {
            Some(index) => Some(Square(index)),
            None => None,
        }
    }

    /// Parses a square name like `e4`.
    pub fn from_name(name: &str) -> Option<Square> {
        match name.as_bytes() {
            [file @ b'a'..=b'h', rank @ b'1'..=b'8'] => {
                Square::from_coords(file - b'a', rank - b'1')
            }
            _ => None,
        }
    }

    pub const fn file_char(self) -> char {
        (b'a' + self.file()) as char
    }

    pub const fn rank_char(self) -> char {
        (b'1' + self.rank()) as char
    }

    /// True for dark squares (a1 is dark).
    #[inline]
    pub const fn is_dark(self) -> bool {
        (self.file() + self.rank()) % 2 == 0
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file_char(), self.rank_char())
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_names_round_trip() {
        for sq in Square::all() {
            assert_eq!(Square::from_name(&sq.to_string()), Some(sq));
        }
        assert_eq!(Square::from_name("e4"), Some(Square::E4));
        assert_eq!(Square::from_name("i1"), None);
        assert_eq!(Square::from_name("a9"), None);
        assert_eq!(Square::from_name("e"), None);
    }

    #[test]
    fn piece_letters_round_trip() {
        for color in Color::ALL {
            for role in Role::ALL {
                let piece = Piece::new(color, role);
                assert_eq!(Piece::from_fen_char(piece.fen_char()), Some(piece));
            }
        }
        assert_eq!(Piece::from_fen_char('x'), None);
    }
}
