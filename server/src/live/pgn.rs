//! PGN of a live or stored game: reading a pasted one, and the export: the seven-tag roster plus
//! `GameId` and `TimeControl`, the result and the PGN standard's
//! termination. The engine writes the movetext; this module knows the seats
//! and the clock.

use rookery_engine::game::Termination;
use rookery_engine::PgnGame;

use super::domain::Side;
use super::game::{LiveGame, LiveSeat};

/// Reads the first game of a PGN text, or says what is wrong with it (with
/// the move number of a bad move), for a 400 `bad_request`.
pub fn read(text: &str) -> Result<PgnGame, String> {
    rookery_engine::read_pgn(text).map_err(|err| format!("bad PGN: {err}"))
}

fn seat_name(seat: &LiveSeat) -> String {
    match seat {
        LiveSeat::Ai { level } => {
            let name = rookery_engine::level::level(*level).map_or("", |l| l.name);
            format!("Rookery level {level} ({name})")
        }
        LiveSeat::Human {
            player: Some(player),
            ..
        } => player.name.clone(),
        LiveSeat::Human { .. } => "Anonymous".into(),
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

/// The game as PGN text (ASCII: names, FEN and SAN are).
pub fn write_pgn(live: &LiveGame) -> String {
    write_pgn_with(live, &[])
}

/// [`write_pgn`] with a note after each move (the analysis as comments).
pub fn write_pgn_with(live: &LiveGame, notes: &[rookery_engine::MoveNote]) -> String {
    let ending = live.ending();
    let mut tags = vec![
        ("Event".to_string(), "Rookery game".to_string()),
        ("Site".to_string(), "Rookery".to_string()),
        ("Date".to_string(), pgn_date(live.created_at)),
        ("Round".to_string(), "-".to_string()),
        ("White".to_string(), seat_name(live.seat(Side::White))),
        ("Black".to_string(), seat_name(live.seat(Side::Black))),
        ("GameId".to_string(), live.id.to_string()),
    ];
    tags.push((
        "TimeControl".to_string(),
        live.clock_settings().map_or("-".to_string(), |clock| {
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
    if live.takebacks() > 0 {
        tags.push(("Takebacks".to_string(), live.takebacks().to_string()));
    }
    let result = ending.and_then(|e| e.result()).unwrap_or("*");
    let termination = match ending {
        Some(ending) => pgn_termination(ending.termination),
        None => "unterminated",
    };
    rookery_engine::pgn::write_pgn_annotated(&tags, live.game(), result, Some(termination), notes)
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
    }
}
