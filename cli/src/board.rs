//! Drawing the board as text: Unicode or ASCII pieces, in colour or plain.
//!
//! The seed console game marked a picked piece in blue, the squares it can
//! move to in yellow and the enemies it can take in red. With colour those
//! are square backgrounds; without colour (`NO_COLOR`, a pipe, `--no-color`)
//! the same facts must still be visible, so each square is three characters
//! wide and the plain form brackets them instead: `[N]` picked, ` * ` free
//! target, `(p)` capturable. Last move and check are shown by colour and, in
//! every mode, spelled out under the board.
//!
//! Styles come from `anstyle` (no hand-written escape codes); whether to
//! use them at all is decided once by the caller (see `Look`).

use std::fmt::Write as _;

use anstyle::{AnsiColor, Color as TermColor, Effects, RgbColor, Style};
use rookery_engine::{Bitboard, Color, Piece, Position, Role, Square};

/// How the terminal wants things drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// Escape codes for colour are allowed.
    pub color: bool,
    /// Letters instead of Unicode chess symbols.
    pub ascii: bool,
}

impl Look {
    /// `text` in `style` when colour is on, plain otherwise.
    pub fn paint(&self, style: Style, text: &str) -> String {
        if self.color {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    }
}

/// What to mark on the board besides the pieces.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    pub picked: Option<Square>,
    /// Empty squares the picked piece can move to.
    pub targets: Bitboard,
    /// Squares the picked piece can capture on.
    pub captures: Bitboard,
    /// From and to squares of the last move.
    pub last_move: Option<(Square, Square)>,
    /// The king in check, if any.
    pub check: Option<Square>,
}

// Square backgrounds. Muted board colours so the highlights stand out; the
// highlight colours are the seed game's (blue, yellow, red).
const LIGHT: RgbColor = RgbColor(0xb8, 0x9a, 0x74);
const DARK: RgbColor = RgbColor(0x7d, 0x5a, 0x3c);
const LAST_LIGHT: RgbColor = RgbColor(0xc8, 0xc0, 0x6a);
const LAST_DARK: RgbColor = RgbColor(0xa0, 0x94, 0x44);

fn square_style(sq: Square, marks: &Marks) -> Style {
    let background = if marks.picked == Some(sq) {
        TermColor::Ansi(AnsiColor::Blue)
    } else if marks.captures.contains(sq) || marks.check == Some(sq) {
        TermColor::Ansi(AnsiColor::Red)
    } else if marks.targets.contains(sq) {
        TermColor::Ansi(AnsiColor::Yellow)
    } else if marks
        .last_move
        .is_some_and(|(from, to)| from == sq || to == sq)
    {
        TermColor::Rgb(if sq.is_dark() { LAST_DARK } else { LAST_LIGHT })
    } else {
        TermColor::Rgb(if sq.is_dark() { DARK } else { LIGHT })
    };
    Style::new().bg_color(Some(background))
}

/// The symbol of a piece: Unicode (outlined for white, solid for black, as
/// chess fonts draw them) or its FEN letter.
pub fn piece_symbol(piece: Piece, ascii: bool) -> char {
    if ascii {
        return piece.fen_char();
    }
    match (piece.color, piece.role) {
        (Color::White, Role::King) => '♔',
        (Color::White, Role::Queen) => '♕',
        (Color::White, Role::Rook) => '♖',
        (Color::White, Role::Bishop) => '♗',
        (Color::White, Role::Knight) => '♘',
        (Color::White, Role::Pawn) => '♙',
        (Color::Black, Role::King) => '♚',
        (Color::Black, Role::Queen) => '♛',
        (Color::Black, Role::Rook) => '♜',
        (Color::Black, Role::Bishop) => '♝',
        (Color::Black, Role::Knight) => '♞',
        (Color::Black, Role::Pawn) => '♟',
    }
}

/// The board, white at the bottom unless `flipped`, with file letters and
/// rank numbers around it. Ends with a newline.
pub fn render(position: &Position, marks: &Marks, flipped: bool, look: Look) -> String {
    let files: Vec<u8> = if flipped {
        (0..8).rev().collect()
    } else {
        (0..8).collect()
    };
    let ranks: Vec<u8> = if flipped {
        (0..8).collect()
    } else {
        (0..8).rev().collect()
    };
    let mut header = String::from("   ");
    for &file in &files {
        let _ = write!(header, " {} ", (b'a' + file) as char);
    }
    let mut out = String::new();
    // Writing to a String cannot fail, here and below.
    let _ = writeln!(out, "{header}");
    for &rank in &ranks {
        let _ = write!(out, " {} ", rank + 1);
        for &file in &files {
            let Some(sq) = Square::from_coords(file, rank) else {
                continue;
            };
            out.push_str(&cell(position, sq, marks, look));
        }
        let _ = writeln!(out, " {}", rank + 1);
    }
    let _ = writeln!(out, "{header}");
    out
}

fn cell(position: &Position, sq: Square, marks: &Marks, look: Look) -> String {
    let piece = position.piece_at(sq);
    let symbol = match piece {
        Some(piece) => piece_symbol(piece, look.ascii),
        None if look.color => ' ',
        None if look.ascii => '.',
        None => '·',
    };
    if look.color {
        let mut style = square_style(sq, marks);
        if let Some(piece) = piece {
            let fg = match piece.color {
                Color::White => AnsiColor::BrightWhite,
                Color::Black => AnsiColor::Black,
            };
            style = style
                .fg_color(Some(TermColor::Ansi(fg)))
                .effects(Effects::BOLD);
        } else if marks.targets.contains(sq) {
            // A dot on free targets too, for terminals with odd palettes.
            return look.paint(
                style.fg_color(Some(TermColor::Ansi(AnsiColor::Black))),
                " • ",
            );
        }
        return look.paint(style, &format!(" {symbol} "));
    }
    let (open, close) = if marks.picked == Some(sq) {
        ('[', ']')
    } else if marks.captures.contains(sq) {
        ('(', ')')
    } else {
        (' ', ' ')
    };
    let symbol = if piece.is_none() && marks.targets.contains(sq) {
        '*'
    } else {
        symbol
    };
    format!("{open}{symbol}{close}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_ascii_start_position() {
        let look = Look {
            color: false,
            ascii: true,
        };
        let text = render(&Position::startpos(), &Marks::default(), false, look);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "    a  b  c  d  e  f  g  h ");
        assert_eq!(lines[1], " 8  r  n  b  q  k  b  n  r  8");
        assert_eq!(lines[8], " 1  R  N  B  Q  K  B  N  R  1");
        assert!(!text.contains('\u{1b}'));
    }

    #[test]
    fn flipped_puts_black_at_the_bottom() {
        let look = Look {
            color: false,
            ascii: true,
        };
        let text = render(&Position::startpos(), &Marks::default(), true, look);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "    h  g  f  e  d  c  b  a ");
        assert_eq!(lines[8], " 8  r  n  b  k  q  b  n  r  8");
    }

    #[test]
    fn plain_marks_are_visible_without_colour() {
        let look = Look {
            color: false,
            ascii: false,
        };
        let marks = Marks {
            picked: Some(Square::from_coords(4, 1).unwrap()),
            targets: Bitboard::from_square(Square::from_coords(4, 3).unwrap()),
            captures: Bitboard::from_square(Square::from_coords(3, 6).unwrap()),
            ..Marks::default()
        };
        let text = render(&Position::startpos(), &marks, false, look);
        assert!(text.contains("[♙]"), "{text}");
        assert!(text.contains(" * "), "{text}");
        assert!(text.contains("(♟)"), "{text}");
    }
}
