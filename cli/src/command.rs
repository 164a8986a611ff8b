//! The commands a player types, one a line. Anything that is not a command
//! word is taken as a move (SAN or UCI) and checked against the position by
//! the session.

use std::path::PathBuf;

use rookery_engine::{Role, Square};

use crate::table::parse_square;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Move(String),
    Pick(Square),
    Place(Square, Option<Role>),
    Info(Square),
    Board,
    Flip,
    Undo,
    Save(PathBuf),
    Load(PathBuf),
    Resign,
    Draw,
    /// Online: decline the opponent's standing offer (draw, takeback, rematch).
    Decline,
    /// Online: withdraw one's own standing offer.
    Withdraw,
    /// Online: end a game that has barely started, without a result.
    Abort,
    /// Online: offer a rematch of the finished game, or accept the offer.
    Rematch,
    /// An arena game: halve one's clock (no increment) before one's first
    /// move, for a point more on a win.
    Berserk,
    Help,
    Quit,
}

pub const HELP: &str = "\
commands:
  e4, Nf3, O-O, g1f3, e7e8q   play a move (SAN or UCI)
  pick SQ                     pick up your piece on SQ: its moves are marked
  place SQ                    move the picked piece to SQ (place its own square to put it back;
                              promote with place e8=N, a queen by default)
  info SQ                     the piece on SQ and how many times it has moved
  board                       show the board
  flip                        turn the board around
  undo, takeback              take back your last move (online: ask the opponent,
                              or accept their request; the computer grants it)
  save FILE                   write the game as PGN
  load FILE                   continue the game in a PGN file (local games)
  resign                      give up the game
  draw                        offer a draw, or accept the offer standing
  decline                     refuse the opponent's draw, takeback or rematch offer (online)
  withdraw                    take back your own standing offer (online)
  abort                       end the game without a result before each side has moved (online)
  rematch                     offer a rematch once the game is over, or accept one (online)
  berserk                     arena games: halve your clock and lose your increment before
                              your first move, for a point more on a win
  help                        this list
  quit                        leave (Ctrl-C and Ctrl-D too)";

/// Parses one line; `Ok(None)` for a blank line or a `#` comment (handy in
/// scripts).
pub fn parse(line: &str) -> Result<Option<Command>, String> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let mut words = line.split_whitespace();
    let Some(first) = words.next() else {
        return Ok(None);
    };
    let rest: Vec<&str> = words.collect();
    let word = first.to_ascii_lowercase();
    let no_argument = |command: Command| {
        if rest.is_empty() {
            Ok(Some(command))
        } else {
            Err(format!("{word} takes no argument"))
        }
    };
    let one_argument = |usage: &str| match rest.as_slice() {
        [only] => Ok(*only),
        _ => Err(format!("usage: {usage}")),
    };
    match word.as_str() {
        "pick" => Ok(Some(Command::Pick(parse_square(one_argument(
            "pick SQUARE",
        )?)?))),
        "place" => {
            let (square, promotion) = parse_target(one_argument("place SQUARE")?)?;
            Ok(Some(Command::Place(square, promotion)))
        }
        "info" => Ok(Some(Command::Info(parse_square(one_argument(
            "info SQUARE",
        )?)?))),
        // A file name may contain spaces: take the rest of the line.
        "save" | "load" => {
            let path = line[first.len()..].trim();
            if path.is_empty() {
                return Err(format!("usage: {word} FILE"));
            }
            let path = PathBuf::from(path);
            Ok(Some(if word == "save" {
                Command::Save(path)
            } else {
                Command::Load(path)
            }))
        }
        "board" | "show" => no_argument(Command::Board),
        "flip" => no_argument(Command::Flip),
        "undo" | "takeback" => no_argument(Command::Undo),
        "resign" => no_argument(Command::Resign),
        "draw" => no_argument(Command::Draw),
        "decline" => no_argument(Command::Decline),
        "withdraw" => no_argument(Command::Withdraw),
        "abort" => no_argument(Command::Abort),
        "rematch" => no_argument(Command::Rematch),
        "berserk" => no_argument(Command::Berserk),
        "help" | "?" => no_argument(Command::Help),
        "quit" | "exit" => no_argument(Command::Quit),
        _ if rest.is_empty() => Ok(Some(Command::Move(first.to_string()))),
        _ => Err(format!(
            "unknown command {first:?} (type help for the commands)"
        )),
    }
}

/// `e8`, `e8q`, `e8=Q`: a target square and an optional promotion role.
fn parse_target(text: &str) -> Result<(Square, Option<Role>), String> {
    // Split after two characters, not two bytes: the text is the user's.
    let cut = text.char_indices().nth(2).map_or(text.len(), |(i, _)| i);
    let (square, promotion) = text.split_at(cut);
    let square = parse_square(square)?;
    if promotion.is_empty() {
        return Ok((square, None));
    }
    let promotion = promotion.strip_prefix('=').unwrap_or(promotion);
    let mut chars = promotion.chars();
    match (
        chars
            .next()
            .and_then(|c| Role::from_char(c.to_ascii_lowercase())),
        chars.next(),
    ) {
        (Some(role), None) if Role::PROMOTIONS.contains(&role) => Ok((square, Some(role))),
        _ => Err(format!("{text:?}: promote with q, r, b or n (place e8=N)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_of_lines() {
        let e4 = Square::from_name("e4").unwrap();
        let e8 = Square::from_name("e8").unwrap();
        let cases: [(&str, Result<Option<Command>, ()>); 18] = [
            ("", Ok(None)),
            ("  # a comment", Ok(None)),
            ("e4", Ok(Some(Command::Move("e4".into())))),
            ("pick E4", Ok(Some(Command::Pick(e4)))),
            ("place e4", Ok(Some(Command::Place(e4, None)))),
            (
                "place e8=N",
                Ok(Some(Command::Place(e8, Some(Role::Knight)))),
            ),
            ("place e8q", Ok(Some(Command::Place(e8, Some(Role::Queen))))),
            ("place e8=K", Err(())),
            ("pick", Err(())),
            ("pick z9", Err(())),
            ("info e4 e5", Err(())),
            (
                "save my game.pgn",
                Ok(Some(Command::Save("my game.pgn".into()))),
            ),
            ("QUIT", Ok(Some(Command::Quit))),
            ("takeback", Ok(Some(Command::Undo))),
            ("Decline", Ok(Some(Command::Decline))),
            ("rematch", Ok(Some(Command::Rematch))),
            ("abort now", Err(())),
            ("move e4 please", Err(())),
        ];
        for (line, expected) in cases {
            assert_eq!(parse(line).map_err(|_| ()), expected, "{line:?}");
        }
    }

    #[test]
    fn odd_input_is_refused_without_panicking() {
        for line in [
            "place aé",
            "place é",
            "pick ♔",
            "info \u{0}",
            "place e8=",
            "place e8==Q",
        ] {
            assert!(parse(line).is_err(), "{line:?}");
        }
        assert!(matches!(parse("♔♕"), Ok(Some(Command::Move(_)))));
    }
}
