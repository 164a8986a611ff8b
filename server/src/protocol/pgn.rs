//! PGN of a live or stored game: reading a pasted one (or each game of a
//! pasted file of several), and the export: the seven-tag roster (`Site` the
//! game's address under `--public-url`) plus `GameId`, `UTCDate`/`UTCTime`,
//! `WhiteElo`/`BlackElo`, `TimeControl`, the result and the PGN standard's
//! termination, and each move's clock as a `[%clk h:mm:ss]` comment. The
//! engine writes the movetext; this module knows the seats and the clock.

use rookery_engine::game::Termination;
use rookery_engine::{Game, MoveNote, PgnGame};

use crate::domain::{GameRecord, GameSeat, Side};

/// Reads the first game of a PGN text, or says what is wrong with it (with
/// the move number of a bad move), for a 400 `bad_request`.
pub fn read(text: &str) -> Result<PgnGame, String> {
    rookery_engine::read_pgn(text).map_err(|err| format!("bad PGN: {err}"))
}

/// At most this many games of a pasted PGN file are read (the body limit
/// bounds the text too); more are reported, not read.
pub const MAX_PGN_GAMES: usize = 200;

/// The games of a pasted PGN text: at most [`MAX_PGN_GAMES`], and what
/// stopped the reading early, if anything did after at least one game.
#[derive(Debug)]
pub struct ReadGames {
    pub games: Vec<PgnGame>,
    /// More than [`MAX_PGN_GAMES`] games: the rest was not read.
    pub more: bool,
    /// A later game could not be read (`game 3: move 2. Ke3: ...`): the
    /// games before it are kept, as reading the first game always did.
    pub unreadable: Option<String>,
}

/// Reads the games of a PGN text, or says what is wrong with its first
/// game (a 400 `bad_request`).
pub fn read_games(text: &str) -> Result<ReadGames, String> {
    match rookery_engine::pgn::read_pgn_games(text, MAX_PGN_GAMES) {
        Ok(read) => Ok(ReadGames {
            games: read.games,
            more: read.more,
            unreadable: None,
        }),
        Err(err) if err.index == 0 => Err(format!("bad PGN: {}", err.error)),
        Err(err) => Ok(ReadGames {
            unreadable: Some(err.to_string()),
            games: err.games,
            more: false,
        }),
    }
}

fn seat_name(seat: &GameSeat) -> String {
    match seat {
        GameSeat::Ai { level } => {
            let name = rookery_engine::level::level(*level).map_or("", |l| l.name);
            format!("Rookery level {level} ({name})")
        }
        GameSeat::Human {
            player: Some(player),
            ..
        } => player.name.clone(),
        GameSeat::Human { .. } => "Anonymous".into(),
    }
}

/// The PGN standard's `Termination` values (section 9.8.1).
fn pgn_termination(termination: Termination) -> &'static str {
    match termination {
        Termination::Timeout => "time forfeit",
        Termination::Aborted => "abandoned",
        _ => "normal",
    }
}

/// What an export writes beyond the game itself. `Default` is the plain
/// export of a server without `--public-url` and without the stored clocks.
#[derive(Debug, Default, Clone, Copy)]
pub struct PgnExport<'a> {
    /// `--public-url` without its trailing slash (see
    /// `Config::public_base`): `Site` is the game's address under it, or
    /// `Rookery` when empty.
    pub public_base: &'a str,
    /// Both clocks after each move (white, black; ms), by ply, as stored:
    /// the mover's becomes the move's `[%clk]`. `None` (or missing): no
    /// clock for that move.
    pub clocks: &'a [Option<(i64, i64)>],
    /// A note after each move (the analysis as comments).
    pub notes: &'a [MoveNote],
    /// A tournament's game: the `[Event]` tag (the tournament's name)
    /// instead of `Rookery game`.
    pub event: Option<&'a str>,
    /// A Swiss game's `[Round]`, instead of `-`.
    pub round: Option<i64>,
}

/// The game as PGN text (ASCII: names, FEN and SAN are), with what
/// `export` adds.
pub fn write(live: &GameRecord, game: &Game, export: &PgnExport<'_>) -> String {
    let ending = live.ending;
    let site = if export.public_base.is_empty() {
        "Rookery".to_string()
    } else {
        format!("{}/games/{}", export.public_base, live.id)
    };
    let mut tags = vec![
        (
            "Event".to_string(),
            export.event.unwrap_or("Rookery game").to_string(),
        ),
        ("Site".to_string(), site),
        ("Date".to_string(), pgn_date(live.created_at)),
        (
            "Round".to_string(),
            export
                .round
                .map_or("-".to_string(), |round| round.to_string()),
        ),
        ("White".to_string(), seat_name(live.seat(Side::White))),
        ("Black".to_string(), seat_name(live.seat(Side::Black))),
        ("GameId".to_string(), live.id.to_string()),
        ("UTCDate".to_string(), pgn_date(live.created_at)),
        ("UTCTime".to_string(), pgn_time(live.created_at)),
    ];
    // The ratings the seats show (lichess writes them for every registered
    // player, rated game or casual); none for an anonymous or computer seat.
    for (side, tag) in [(Side::White, "WhiteElo"), (Side::Black, "BlackElo")] {
        if let Some(player) = live.seat(side).player() {
            tags.push((tag.to_string(), player.rating.rating.to_string()));
        }
    }
    tags.push((
        "TimeControl".to_string(),
        live.clock_settings.map_or("-".to_string(), |clock| {
            format!(
                "{}+{}",
                clock.initial_ms as f64 / 1000.0,
                clock.increment_ms as f64 / 1000.0
            )
        }),
    ));
    // Takebacks granted (a tag of our own; PGN readers keep unknown tags):
    // the moves are the game as it stands, the count says it was not
    // played straight through.
    if live.takebacks > 0 {
        tags.push(("Takebacks".to_string(), live.takebacks.to_string()));
    }
    let result = ending.and_then(|e| e.result()).unwrap_or("*");
    let termination = match ending {
        Some(ending) => pgn_termination(ending.termination),
        None => "unterminated",
    };
    let white_first = game.initial_position().turn() == rookery_engine::Color::White;
    let notes = with_clocks(white_first, game.moves().len(), export);
    rookery_engine::pgn::write_pgn_annotated(&tags, game, result, Some(termination), &notes)
}

/// The export's notes with each move's `[%clk]` added to its comment
/// (after a leading `[%eval]`, as lichess writes them).
fn with_clocks(white_first: bool, plies: usize, export: &PgnExport<'_>) -> Vec<MoveNote> {
    (0..plies)
        .map(|ply| {
            let mut note = export.notes.get(ply).cloned().unwrap_or_default();
            let mover_is_white = (ply % 2 == 0) == white_first;
            let clock = export.clocks.get(ply).copied().flatten();
            if let Some((white, black)) = clock {
                let clk = format!(
                    "[%clk {}]",
                    pgn_clock(if mover_is_white { white } else { black })
                );
                note.comment = Some(match note.comment.take() {
                    Some(comment) if comment.starts_with("[%eval") => match comment.find(']') {
                        Some(end) => format!("{} {clk}{}", &comment[..=end], &comment[end + 1..]),
                        None => format!("{clk} {comment}"),
                    },
                    Some(comment) => format!("{clk} {comment}"),
                    None => clk,
                });
            }
            note
        })
        .collect()
}

/// `h:mm:ss` of a clock's milliseconds, whole seconds left (rounded down,
/// as a clock shows them; never negative).
fn pgn_clock(ms: i64) -> String {
    let seconds = ms.max(0) / 1000;
    format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// `HH:MM:SS` (UTC) of a Unix time in milliseconds.
fn pgn_time(unix_ms: i64) -> String {
    let seconds = unix_ms.div_euclid(1000).rem_euclid(86_400);
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// ISO 8601 (`2026-07-10T23:30:00Z`, UTC, whole seconds) of a Unix time
/// in milliseconds, as lichess writes its dates.
pub fn iso_time(unix_ms: i64) -> String {
    format!(
        "{}T{}Z",
        pgn_date(unix_ms).replace('.', "-"),
        pgn_time(unix_ms)
    )
}

/// `YYYY.MM.DD` (UTC) of a Unix time in milliseconds.
fn pgn_date(unix_ms: i64) -> String {
    // Days to a civil date, after Howard Hinnant's well-known algorithm.
    let days = unix_ms.div_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}.{month:02}.{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgn_dates() {
        assert_eq!(pgn_date(0), "1970.01.01");
        assert_eq!(pgn_date(951_782_400_000), "2000.02.29");
        assert_eq!(pgn_date(1_795_000_000_000), "2026.11.18");
        assert_eq!(iso_time(951_825_661_000), "2000-02-29T12:01:01Z");
    }

    #[test]
    fn clocks_join_the_notes() {
        let note = |comment: &str| MoveNote {
            suffix: "",
            comment: Some(comment.to_string()),
        };
        let notes = [
            note("[%eval 0.35]"),
            note("[%eval -1.20] Mistake. Best move was Nf3."),
            note("Book."),
        ];
        let clocks = [
            Some((298_500, 300_000)),
            Some((298_500, 297_000)),
            Some((290_000, 297_000)),
            None,
        ];
        let export = PgnExport {
            public_base: "",
            clocks: &clocks,
            notes: &notes,
            event: None,
            round: None,
        };
        let comments: Vec<Option<String>> = with_clocks(true, 5, &export)
            .into_iter()
            .map(|note| note.comment)
            .collect();
        assert_eq!(
            comments,
            [
                Some("[%eval 0.35] [%clk 0:04:58]".to_string()),
                Some("[%eval -1.20] [%clk 0:04:57] Mistake. Best move was Nf3.".to_string()),
                Some("[%clk 0:04:50] Book.".to_string()),
                None,
                None,
            ]
        );
        // Black moved first: the first clock is Black's.
        let black_first = with_clocks(false, 1, &export);
        assert_eq!(
            black_first[0].comment.as_deref(),
            Some("[%eval 0.35] [%clk 0:05:00]")
        );
    }

    #[test]
    fn pgn_times_and_clocks() {
        assert_eq!(pgn_time(0), "00:00:00");
        assert_eq!(pgn_time(1_795_000_000_000), "11:06:40");
        assert_eq!(pgn_time(86_399_999), "23:59:59");
        assert_eq!(pgn_clock(298_999), "0:04:58");
        assert_eq!(pgn_clock(10_800_000), "3:00:00");
        assert_eq!(pgn_clock(-5), "0:00:00");
    }
}
