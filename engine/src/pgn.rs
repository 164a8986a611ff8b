//! PGN (Portable Game Notation): writing a finished or running game for
//! export, and reading one game's main line for import.
//!
//! Writing follows the PGN standard's export format: the seven-tag roster
//! first (Event, Site, Date, Round, White, Black, Result), then the other
//! tags, `SetUp "1"` and `FEN` when the game did not start from the standard
//! position (and always for Chess960, with `Variant "Chess960"` first, as
//! lichess writes it; castling is `O-O`/`O-O-O` there too), a blank line, then SAN movetext with move numbers wrapped at 80
//! columns and the result as the last token.
//!
//! Reading accepts what real PGN files contain: comments (`{...}` and `;` to
//! the end of the line), NAGs (`$14`), suffix annotations (`!?`), nested
//! variations (skipped: only the main line is a game), move numbers with or
//! without spaces (`1.e4`, `12...Nf6`), `%` escape lines, and a byte-order
//! mark. A `Variant` tag naming Chess960 (`Chess960`, `Chess 960`,
//! `Fischerandom`) makes the game a Chess960 one (castling written
//! king-takes-rook in UCI, see [`Position::castling_mode`]); the `FEN`
//! tag's castling field may be X-FEN or Shredder-FEN. It reads the first game of the text and stops at its result;
//! [`read_pgn_games`] reads each game of a text of several.

use std::fmt::Write as _;

use thiserror::Error;

use crate::fen::{FenError, STARTPOS};
use crate::game::Game;
use crate::position::{CastlingMode, Position};
use crate::san::SanError;
use crate::text::excerpt;
use crate::types::Color;

/// The tags every PGN game has, in their required order (without Result,
/// which comes from the game's result).
const ROSTER: [(&str, &str); 6] = [
    ("Event", "?"),
    ("Site", "?"),
    ("Date", "????.??.??"),
    ("Round", "?"),
    ("White", "?"),
    ("Black", "?"),
];

/// Tags `write_pgn` writes itself, so copies passed in are ignored.
const GENERATED: [&str; 4] = ["Result", "Termination", "SetUp", "FEN"];

/// The longest line of exported movetext, as the standard asks.
const LINE_WIDTH: usize = 80;

/// Writes `game` as PGN. `tags` supplies the roster (missing ones get the
/// standard's placeholders `?` and `????.??.??`) and any further tags, in
/// the order given; `result` is `1-0`, `0-1`, `1/2-1/2` or `*` (anything
/// else is written as `*`, so the output is always readable PGN).
pub fn write_pgn(
    tags: &[(String, String)],
    game: &Game,
    result: &str,
    termination: Option<&str>,
) -> String {
    write_pgn_annotated(tags, game, result, termination, &[])
}

/// What an annotated export adds after one move: a suffix annotation
/// (`?!`, `?`, `??`, written onto the SAN) and a comment (written `{ ... }`;
/// braces inside it are dropped, as a comment cannot contain them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MoveNote {
    pub suffix: &'static str,
    pub comment: Option<String>,
}

/// [`write_pgn`] with `notes[i]` after move `i` (missing notes: none).
pub fn write_pgn_annotated(
    tags: &[(String, String)],
    game: &Game,
    result: &str,
    termination: Option<&str>,
    notes: &[MoveNote],
) -> String {
    let result = match result {
        "1-0" | "0-1" | "1/2-1/2" => result,
        _ => "*",
    };
    let mut pgn = String::new();
    let mut tag = |name: &str, value: &str| {
        // Writing to a String cannot fail.
        let _ = writeln!(pgn, "[{name} \"{}\"]", escape(value));
    };
    let lookup = |name: &str| {
        tags.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    for (name, default) in ROSTER {
        tag(name, lookup(name).unwrap_or(default));
    }
    tag("Result", result);
    if let Some(termination) = termination {
        tag("Termination", termination);
    }
    let initial = game.initial_position();
    let initial_fen = initial.to_fen();
    let chess960 = game.is_chess960();
    if chess960 {
        tag("Variant", "Chess960");
    }
    if initial_fen != STARTPOS || chess960 {
        tag("SetUp", "1");
        tag("FEN", &initial_fen);
    }
    for (name, value) in tags {
        let known = ROSTER.iter().any(|(n, _)| n == name)
            || GENERATED.contains(&name.as_str())
            || (chess960 && name == "Variant");
        if !known && is_tag_name(name) {
            tag(name, value);
        }
    }
    pgn.push('\n');

    let mut tokens = Vec::with_capacity(game.moves().len() * 3 / 2 + 1);
    let mut number = initial.fullmove_number();
    let mut turn = initial.turn();
    for (i, san) in game.san_moves().iter().enumerate() {
        match turn {
            Color::White => tokens.push(format!("{number}.")),
            Color::Black if i == 0 => tokens.push(format!("{number}...")),
            Color::Black => {}
        }
        let note = notes.get(i);
        tokens.push(format!("{san}{}", note.map_or("", |note| note.suffix)));
        if let Some(comment) = note.and_then(|note| note.comment.as_deref()) {
            // Word by word, so long comments wrap like the moves.
            tokens.push("{".to_string());
            tokens.extend(
                comment
                    .split_whitespace()
                    .map(|word| word.replace(['{', '}'], "")),
            );
            tokens.push("}".to_string());
        }
        if turn == Color::Black {
            number += 1;
        }
        turn = !turn;
    }
    tokens.push(result.to_string());

    let mut line_len = 0;
    for token in tokens {
        if line_len > 0 && line_len + 1 + token.len() > LINE_WIDTH {
            pgn.push('\n');
            line_len = 0;
        }
        if line_len > 0 {
            pgn.push(' ');
            line_len += 1;
        }
        pgn.push_str(&token);
        line_len += token.len();
    }
    pgn.push('\n');
    pgn
}

/// Tag values are PGN strings: backslash and quote are escaped, and line
/// breaks (not allowed in a tag) become spaces.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' | '"' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn is_tag_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// One game read from PGN: its tags in file order, and the main line played
/// out from the start position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgnGame {
    pub tags: Vec<(String, String)>,
    pub game: Game,
}

impl PgnGame {
    /// The value of the first tag called `name`.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The game-termination marker of the movetext (`1-0`, `0-1`,
    /// `1/2-1/2`, `*`), or the `Result` tag when the movetext had none.
    pub fn result(&self) -> Option<&str> {
        self.tag("Result")
    }
}

/// Why a PGN text could not be read. Offending text is included, cut short.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PgnError {
    #[error("no game found in the PGN text")]
    Empty,
    #[error("malformed tag pair: {0:?}")]
    Tag(String),
    #[error("bad FEN tag {fen:?}: {source}")]
    Fen {
        fen: String,
        #[source]
        source: FenError,
    },
    #[error("unterminated comment starting {0:?}")]
    UnterminatedComment(String),
    #[error("unbalanced parenthesis in variations near {0:?}")]
    Variation(String),
    #[error("unexpected text in movetext: {0:?}")]
    Token(String),
    #[error("move {number}{dots} {san}: {source}", dots = if *turn == Color::White { "." } else { "..." })]
    Move {
        number: u32,
        turn: Color,
        san: String,
        #[source]
        source: SanError,
    },
}

/// Reads the first game of `text`.
pub fn read_pgn(text: &str) -> Result<PgnGame, PgnError> {
    Reader::new(text).read()
}

/// The games of a PGN text of several (a database export, a tournament's
/// file): at most the `max` first, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgnGames {
    pub games: Vec<PgnGame>,
    /// More games followed the `max` first (they were not read).
    pub more: bool,
}

/// Why a text of several games could not be read on: the game (counted
/// from 0) and what is wrong with it, with the games read before it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("game {}: {error}", .index + 1)]
pub struct PgnGamesError {
    pub index: usize,
    #[source]
    pub error: PgnError,
    /// The games before the bad one (`index` of them).
    pub games: Vec<PgnGame>,
}

/// Reads every game of `text`, at most `max` of them (the rest is only
/// noticed, as [`PgnGames::more`]). A text of one game gives one; reading
/// stops at a game that cannot be read, and the error names it and keeps
/// the games before it.
pub fn read_pgn_games(text: &str, max: usize) -> Result<PgnGames, PgnGamesError> {
    let mut reader = Reader::new(text);
    let mut games = Vec::new();
    loop {
        reader.skip_space();
        if reader.peek().is_none() {
            break;
        }
        if games.len() >= max {
            return Ok(PgnGames { games, more: true });
        }
        let from = reader.at;
        match reader.read() {
            Ok(game) => games.push(game),
            // Only comments after the last game.
            Err(PgnError::Empty) if !games.is_empty() => break,
            Err(error) => {
                return Err(PgnGamesError {
                    index: games.len(),
                    error,
                    games,
                })
            }
        }
        if reader.at == from {
            break; // never loop without reading on
        }
    }
    if games.is_empty() {
        return Err(PgnGamesError {
            index: 0,
            error: PgnError::Empty,
            games,
        });
    }
    Ok(PgnGames { games, more: false })
}

/// Characters that end a movetext symbol.
fn is_delimiter(b: u8) -> bool {
    b.is_ascii_whitespace() || b"{}()[];$\"".contains(&b)
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        Reader {
            text,
            bytes: text.as_bytes(),
            at: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// The rest of the text from `from`, for error messages. Slicing is safe:
    /// `from` always sits on an ASCII delimiter or the start of a token.
    fn rest(&self, from: usize) -> String {
        excerpt(self.text.get(from..).unwrap_or(""))
    }

    /// Skips whitespace, `;` comments and `%` escape lines. `{}` comments
    /// are left to the caller (they are errors inside tags).
    fn skip_space(&mut self) {
        while let Some(b) = self.peek() {
            if b.is_ascii_whitespace() {
                self.at += 1;
            } else if b == b';' || (b == b'%' && (self.at == 0 || self.bytes[self.at - 1] == b'\n'))
            {
                while let Some(b) = self.peek() {
                    self.at += 1;
                    if b == b'\n' {
                        break;
                    }
                }
            } else {
                break;
            }
        }
    }

    fn skip_brace_comment(&mut self) -> Result<(), PgnError> {
        let start = self.at;
        match self.bytes[self.at..].iter().position(|&b| b == b'}') {
            Some(len) => {
                self.at += len + 1;
                Ok(())
            }
            None => Err(PgnError::UnterminatedComment(self.rest(start))),
        }
    }

    /// `[Name "value"]`, with `\"` and `\\` escapes in the value.
    fn read_tag(&mut self) -> Result<(String, String), PgnError> {
        let start = self.at;
        let bad = |r: &Reader<'_>| PgnError::Tag(r.rest(start));
        self.at += 1; // '['
        self.skip_space();
        let name_start = self.at;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            self.at += 1;
        }
        let name = self.text[name_start..self.at].to_string();
        if name.is_empty() {
            return Err(bad(self));
        }
        self.skip_space();
        if self.peek() != Some(b'"') {
            return Err(bad(self));
        }
        self.at += 1;
        let mut value = Vec::new();
        loop {
            match self.peek() {
                None | Some(b'\n') => return Err(bad(self)),
                Some(b'"') => {
                    self.at += 1;
                    break;
                }
                Some(b'\\') => match self.bytes.get(self.at + 1) {
                    Some(&c @ (b'"' | b'\\')) => {
                        value.push(c);
                        self.at += 2;
                    }
                    // Not an escape: some writers leave lone backslashes
                    // (file paths); keep them as they are.
                    _ => {
                        value.push(b'\\');
                        self.at += 1;
                    }
                },
                Some(b) => {
                    value.push(b);
                    self.at += 1;
                }
            }
        }
        self.skip_space();
        if self.peek() != Some(b']') {
            return Err(bad(self));
        }
        self.at += 1;
        // Bytes between two ASCII quotes of valid UTF-8 are valid UTF-8.
        let value = String::from_utf8_lossy(&value).into_owned();
        Ok((name, value))
    }

    fn read(&mut self) -> Result<PgnGame, PgnError> {
        let mut tags = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                Some(b'[') => tags.push(self.read_tag()?),
                Some(b'{') => self.skip_brace_comment()?,
                _ => break,
            }
        }

        let fen = tags
            .iter()
            .find(|(name, _)| name == "FEN")
            .map(|(_, fen)| fen.clone());
        let mut game = match fen {
            Some(fen) => Game::new(Position::from_fen(&fen).map_err(|source| PgnError::Fen {
                fen: excerpt(&fen),
                source,
            })?),
            None => Game::default(),
        };
        let chess960 = tags.iter().any(|(name, value)| {
            name == "Variant"
                && matches!(
                    value.to_ascii_lowercase().as_str(),
                    "chess960" | "chess 960" | "fischerandom" | "fischer random" | "960"
                )
        });
        if chess960 {
            game.set_castling_mode(CastlingMode::Chess960);
        }

        let mut depth = 0usize;
        let mut movetext_result = None;
        let mut found_anything = !tags.is_empty();
        loop {
            self.skip_space();
            let start = self.at;
            let Some(b) = self.peek() else { break };
            match b {
                b'{' => self.skip_brace_comment()?,
                b'(' => {
                    depth += 1;
                    self.at += 1;
                }
                b')' => {
                    depth = depth
                        .checked_sub(1)
                        .ok_or_else(|| PgnError::Variation(self.rest(start)))?;
                    self.at += 1;
                }
                b'$' => {
                    self.at += 1;
                    let digits = self.bytes[self.at..]
                        .iter()
                        .take_while(|b| b.is_ascii_digit())
                        .count();
                    if digits == 0 {
                        return Err(PgnError::Token(self.rest(start)));
                    }
                    self.at += digits;
                }
                // The next game's tags: this game's movetext had no result.
                b'[' if depth == 0 => break,
                b'[' | b']' | b'}' | b'"' => return Err(PgnError::Token(self.rest(start))),
                _ => {
                    // A move number is digits followed by dots; anything
                    // else starting with a digit is a symbol (`0-0`, `1-0`).
                    let digits = self.bytes[self.at..]
                        .iter()
                        .take_while(|b| b.is_ascii_digit())
                        .count();
                    if digits > 0 && self.bytes.get(self.at + digits) == Some(&b'.') {
                        self.at += digits;
                        while self.peek() == Some(b'.') {
                            self.at += 1;
                        }
                        found_anything = true;
                        continue;
                    }
                    while self.peek().is_some_and(|b| !is_delimiter(b)) {
                        self.at += 1;
                    }
                    let token = &self.text[start..self.at];
                    found_anything = true;
                    if depth > 0 {
                        continue; // inside a variation: not the main line
                    }
                    match token {
                        "1-0" | "0-1" | "1/2-1/2" | "*" => {
                            movetext_result = Some(token.to_string());
                            break;
                        }
                        // Lone annotation glyphs, written apart from the move.
                        _ if token.bytes().all(|b| b == b'!' || b == b'?') => {}
                        // A move number without its dot, as some writers emit.
                        _ if token.bytes().all(|b| b.is_ascii_digit()) => {}
                        _ => {
                            let pos = game.position();
                            let (number, turn) = (pos.fullmove_number(), pos.turn());
                            game.play_san(token).map_err(|source| PgnError::Move {
                                number,
                                turn,
                                san: excerpt(token),
                                source,
                            })?;
                        }
                    }
                }
            }
        }
        if depth > 0 && movetext_result.is_none() {
            return Err(PgnError::Variation(self.rest(self.at)));
        }
        if !found_anything {
            return Err(PgnError::Empty);
        }
        if let Some(result) = movetext_result {
            match tags.iter_mut().find(|(name, _)| name == "Result") {
                Some((_, value)) if value == "?" || value.is_empty() => *value = result,
                Some(_) => {}
                None => tags.push(("Result".to_string(), result)),
            }
        }
        Ok(PgnGame { tags, game })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    fn game_from(fen: Option<&str>, moves: &str) -> Game {
        let mut game = match fen {
            Some(fen) => Game::from_fen(fen).unwrap(),
            None => Game::default(),
        };
        for uci in moves.split_whitespace() {
            game.play_uci(uci).unwrap();
        }
        game
    }

    #[test]
    fn writes_the_export_format() {
        let game = game_from(None, "f2f3 e7e5 g2g4 d8h4");
        let pgn = write_pgn(
            &tags(&[
                ("White", "alice"),
                ("Black", "bob \"the\" \\"),
                ("Opening", "x"),
            ]),
            &game,
            "0-1",
            Some("checkmate"),
        );
        let expected = "[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n\
             [White \"alice\"]\n[Black \"bob \\\"the\\\" \\\\\"]\n[Result \"0-1\"]\n\
             [Termination \"checkmate\"]\n[Opening \"x\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n";
        assert_eq!(pgn, expected);
        let read = read_pgn(&pgn).unwrap();
        assert_eq!(read.tag("Black"), Some("bob \"the\" \\"));
        assert_eq!(read.game, game);
    }

    #[test]
    fn custom_start_with_black_to_move() {
        let fen = "4k3/8/8/8/8/8/4P3/4K3 b - - 3 40";
        let game = game_from(Some(fen), "e8d7 e2e4 d7c6");
        let pgn = write_pgn(&[], &game, "*", None);
        assert!(pgn.contains("[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 3 40\"]\n"));
        assert!(pgn.ends_with("\n\n40... Kd7 41. e4 Kc6 *\n"), "{pgn}");
        let read = read_pgn(&pgn).unwrap();
        assert_eq!(read.game, game);
        assert_eq!(read.game.initial_position().to_fen(), fen);
    }

    #[test]
    fn chess960_games_carry_their_variant() {
        // Start 960-0 (king g1, rooks f1 and h1), both sides castling
        // queen side after clearing the way: O-O-O in SAN, king takes rook
        // in the game's UCI.
        let mut game = Game::new(crate::chess960::chess960_start(0).unwrap());
        for uci in [
            "d2d3", "d7d6", "c1d2", "c8d7", "d1c3", "d8c6", "e1f3", "e8f6", "g1f1", "g8f8",
        ] {
            game.play_uci(uci).unwrap_or_else(|e| panic!("{uci}: {e}"));
        }
        assert_eq!(game.san_moves()[8..], ["O-O-O", "O-O-O"]);
        let pgn = write_pgn(&tags(&[("Variant", "Standard")]), &game, "*", None);
        assert!(pgn.contains(
            "[Variant \"Chess960\"]\n[SetUp \"1\"]\n\
             [FEN \"bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1\"]\n\n"
        ));
        assert!(!pgn.contains("Standard"), "{pgn}");
        let read = read_pgn(&pgn).unwrap();
        assert!(read.game.is_chess960());
        assert_eq!(read.game, game);
        assert_eq!(read.game.uci_moves()[8..], ["g1f1", "g8f8"]);
        // The standard start as Chess960 518 still says so.
        let game = Game::new(crate::chess960::chess960_start(518).unwrap());
        let pgn = write_pgn(&[], &game, "*", None);
        assert!(pgn.contains("[Variant \"Chess960\"]"), "{pgn}");
        assert!(read_pgn(&pgn).unwrap().game.is_chess960());
        assert!(!read_pgn("1. e4 *").unwrap().game.is_chess960());
    }

    #[test]
    fn annotations_are_written_and_read_back() {
        let game = game_from(None, "f2f3 e7e5 g2g4 d8h4");
        let notes = [
            MoveNote {
                suffix: "?!",
                comment: Some("[%eval -0.5] Inaccuracy. {Best} move was e4.".into()),
            },
            MoveNote::default(),
            MoveNote {
                suffix: "??",
                comment: Some("[%eval #-1]".into()),
            },
        ];
        let pgn = write_pgn_annotated(&[], &game, "0-1", None, &notes);
        assert!(
            pgn.ends_with(
                "1. f3?! { [%eval -0.5] Inaccuracy. Best move was e4. } e5 2. g4?? { [%eval #-1]\n} Qh4# 0-1\n"
            ),
            "{pgn}"
        );
        assert_eq!(read_pgn(&pgn).unwrap().game, game);
    }

    #[test]
    fn wraps_lines_at_80_columns() {
        let mut game = Game::default();
        for _ in 0..10 {
            for uci in ["g1f3", "g8f6", "f3g1", "f6g8"] {
                game.play_uci(uci).unwrap();
            }
        }
        let pgn = write_pgn(&[], &game, "1/2-1/2", None);
        let movetext = pgn.split("\n\n").nth(1).unwrap();
        assert!(movetext.lines().count() > 2);
        assert!(movetext.lines().all(|l| l.len() <= 80 && !l.ends_with(' ')));
        assert_eq!(read_pgn(&pgn).unwrap().game, game);
    }

    #[test]
    fn reads_comments_nags_and_variations() {
        let text = "\u{feff}[Event \"Test\"]\n[Result \"1-0\"]\n\n\
            {A comment} 1. e4 $1 e5 (1... c5 2. Nf3 (2. c3) d6) 2.Nf3 ; to the end\n\
            Nc6 3. Bb5!? {Ruy} a6 4. Ba4 ! Nf6 5. O-O 1-0\n[Event \"next\"]\n1. d4 *";
        let read = read_pgn(text).unwrap();
        assert_eq!(read.tag("Event"), Some("Test"));
        assert_eq!(
            read.game.san_moves(),
            ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O"]
        );
        assert_eq!(read.result(), Some("1-0"));
    }

    #[test]
    fn reads_several_games() {
        let text = "[Event \"one\"]\n[White \"a\"]\n\n1. e4 e5 1-0\n\n\
            [Event \"two\"]\n\n1. d4 {x} d5 2. c4\n\n[Event \"three\"]\n1. Nf3 *\n{trailing}\n";
        let read = read_pgn_games(text, 200).unwrap();
        assert!(!read.more);
        assert_eq!(read.games.len(), 3);
        assert_eq!(read.games[0].tag("White"), Some("a"));
        assert_eq!(read.games[0].result(), Some("1-0"));
        assert_eq!(read.games[1].tag("Event"), Some("two"));
        assert_eq!(read.games[1].game.san_moves(), ["d4", "d5", "c4"]);
        assert_eq!(read.games[1].result(), None);
        assert_eq!(read.games[2].game.san_moves(), ["Nf3"]);
        assert_eq!(read.games[0], read_pgn(text).unwrap());

        let first_two = read_pgn_games(text, 2).unwrap();
        assert!(first_two.more);
        assert_eq!(first_two.games, read.games[..2]);
        assert_eq!(read_pgn_games("1. e4 *", 1).unwrap().games.len(), 1);
        assert!(!read_pgn_games("1. e4 *\n", 1).unwrap().more);

        let err = read_pgn_games("1. e4 *\n[Event \"x\"]\n1. e4 e5 2. Ke3 *", 10).unwrap_err();
        assert_eq!(err.index, 1);
        assert_eq!(err.games.len(), 1);
        assert_eq!(
            err.to_string(),
            "game 2: move 2. Ke3: illegal move here: Ke3"
        );
        assert_eq!(
            read_pgn_games(" \n", 10).unwrap_err().error,
            PgnError::Empty
        );
    }

    #[test]
    fn result_from_movetext_when_tag_missing() {
        let read = read_pgn("1. f3 e5 2. g4 Qh4# 0-1").unwrap();
        assert_eq!(read.result(), Some("0-1"));
        assert_eq!(read.game.moves().len(), 4);
    }

    #[test]
    fn errors_carry_the_offending_text() {
        let err = read_pgn("1. e4 e5 2. Nf3 Nf6 3. Ke3 *").unwrap_err();
        assert!(
            matches!(&err, PgnError::Move { number: 3, turn: Color::White, san, source: SanError::Illegal(_) } if san == "Ke3"),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "move 3. Ke3: illegal move here: Ke3");
        let err = read_pgn("1. e4 Qq5").unwrap_err();
        assert!(matches!(
            err,
            PgnError::Move {
                number: 1,
                turn: Color::Black,
                source: SanError::Syntax(_),
                ..
            }
        ));
        assert!(matches!(read_pgn("[Event \"x]"), Err(PgnError::Tag(_))));
        assert!(matches!(read_pgn("[Event x]"), Err(PgnError::Tag(_))));
        let read = read_pgn("[Site \"C:\\games\\x\"]\n*").unwrap();
        assert_eq!(read.tag("Site"), Some("C:\\games\\x"));
        assert!(matches!(
            read_pgn("[FEN \"8/8/8 w - - 0 1\"]\n*"),
            Err(PgnError::Fen { .. })
        ));
        assert!(matches!(
            read_pgn("1. e4 {oops"),
            Err(PgnError::UnterminatedComment(_))
        ));
        assert!(matches!(
            read_pgn("1. e4 ) e5"),
            Err(PgnError::Variation(_))
        ));
        assert!(matches!(
            read_pgn("1. e4 (1. d4"),
            Err(PgnError::Variation(_))
        ));
        assert!(matches!(read_pgn("  \n"), Err(PgnError::Empty)));
        assert!(matches!(read_pgn("1. e4 \"x\""), Err(PgnError::Token(_))));
    }
}
