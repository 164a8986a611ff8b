//! lichess's JSON shapes (the wire of `http/lichess/` and of the event
//! streams), built from Rookery's games, players and challenges as data: the game objects of `gameStart`/`gameFinish` events, the
//! challenge object, statuses, speeds and the user light object. Field
//! names and values follow lichess's published API description
//! (lichess-org/api, doc/specs).

use serde_json::{json, Value};

use rookery_engine::game::Termination;

use crate::domain::{Challenge, ClockSettings, Ending, GameSeat, SeatRating, Side, Variant};

/// lichess's game speed from a clock: by the estimated duration, initial
/// time plus 40 increments (lichess's rule); untimed is `correspondence`.
pub fn speed(clock: Option<ClockSettings>) -> &'static str {
    let Some(clock) = clock else {
        return "correspondence";
    };
    let estimate = clock.initial_ms / 1000 + 40 * clock.increment_ms / 1000;
    match estimate {
        0..=29 => "ultraBullet",
        30..=179 => "bullet",
        180..=479 => "blitz",
        480..=1499 => "rapid",
        _ => "classical",
    }
}

/// lichess's status name and id of a game: `created` for a game nobody
/// has played yet that still waits for a player (`unplayed_seek`),
/// `started`, or how it ended.
pub fn status(ending: Option<Ending>, unplayed_seek: bool) -> (&'static str, u16) {
    match ending {
        None if unplayed_seek => ("created", 10),
        None => ("started", 20),
        Some(ending) => ending_status(ending),
    }
}

/// lichess's status of a finished game.
pub fn ending_status(ending: Ending) -> (&'static str, u16) {
    match ending.termination {
        Termination::Aborted => ("aborted", 25),
        Termination::Checkmate => ("mate", 30),
        Termination::Resignation => ("resign", 31),
        Termination::Stalemate => ("stalemate", 32),
        // A fallen flag is lichess's `outoftime` (its `timeout` is a
        // claimed victory over a player who left).
        Termination::Timeout => ("outoftime", 35),
        Termination::Agreement
        | Termination::ThreefoldRepetition
        | Termination::FiftyMoves
        | Termination::InsufficientMaterial => ("draw", 34),
    }
}

/// lichess's variant object: `{"key": "chess960", "name": "Chess960",
/// "short": "960"}`.
pub fn variant(variant: Variant) -> Value {
    json!({"key": variant.key(), "name": variant.name(), "short": variant.short()})
}

/// lichess's perf key of a game: its speed in standard chess, the
/// variant's key otherwise (lichess rates each variant apart and names the
/// perf after it; Rookery keeps one rating, see docs/API.md).
pub fn perf(variant: Variant, clock: Option<ClockSettings>) -> &'static str {
    match variant {
        Variant::Standard => speed(clock),
        Variant::Chess960 => variant.key(),
    }
}

/// lichess's `initialFen`: `startpos` for the standard start of a standard
/// game, the FEN otherwise (every Chess960 game, start 518 included).
pub fn initial_fen(variant: Variant, fen: &str) -> String {
    if variant == Variant::Standard && fen == rookery_engine::Position::startpos().to_fen() {
        "startpos".into()
    } else {
        fen.into()
    }
}

/// lichess's light user: `{id, name, rating, provisional, title}`
/// (`title: "BOT"` for a bot account).
pub fn user(name: &str, rating: SeatRating, bot: bool) -> Value {
    json!({
        "id": name.to_lowercase(),
        "name": name,
        "rating": rating.rating,
        "provisional": rating.provisional,
        "title": if bot { json!("BOT") } else { Value::Null },
    })
}

/// One game as a `gameStart` or `gameFinish` event shows it to one side's
/// player: what lichess's event game object is made of.
#[derive(Debug)]
pub struct EventGame<'a> {
    pub id: String,
    /// The player's side.
    pub side: Side,
    pub fen: String,
    pub has_moved: bool,
    pub my_turn: bool,
    /// The last move in UCI, empty before the first.
    pub last_move: String,
    /// The opponent's seat.
    pub opponent: &'a GameSeat,
    pub clock: Option<ClockSettings>,
    /// The player's time left in whole seconds (`None` without a clock).
    pub seconds_left: Option<u64>,
    pub rated: bool,
    pub variant: Variant,
    /// From [`status`].
    pub status: (&'static str, u16),
    pub ending: Option<Ending>,
    /// lichess's `friend`, `ai`, `lobby`.
    pub source: &'a str,
}

/// The opponent as lichess's events show it.
fn opponent(seat: &GameSeat) -> Value {
    match seat {
        GameSeat::Ai { level } => json!({
            "id": Value::Null,
            "username": format!("A.I. level {level}"),
            "ai": level,
        }),
        seat => match seat.player() {
            Some(player) => json!({
                "id": player.name.to_lowercase(),
                "username": player.name,
                "rating": player.rating.rating,
            }),
            None => json!({"id": Value::Null, "username": "Anonymous"}),
        },
    }
}

/// The game object of a `gameStart` or `gameFinish` event.
pub fn event_game(game: &EventGame<'_>) -> Value {
    let (status_name, status_id) = game.status;
    let mut value = json!({
        "id": game.id,
        "gameId": game.id,
        "fullId": game.id,
        "color": game.side.as_str(),
        "fen": game.fen,
        "hasMoved": game.has_moved,
        "isMyTurn": game.my_turn,
        "lastMove": game.last_move,
        "opponent": opponent(game.opponent),
        "perf": perf(game.variant, game.clock),
        "rated": game.rated,
        "source": game.source,
        "speed": speed(game.clock),
        "status": {"id": status_id, "name": status_name},
        "variant": variant(game.variant),
        "compat": {"bot": true, "board": true},
    });
    // lichess leaves it out without a clock (clients compare it with
    // numbers: a null breaks them).
    if let Some(seconds) = game.seconds_left {
        value["secondsLeft"] = json!(seconds);
    }
    if let Some(ending) = game.ending {
        value["winner"] = json!(ending.winner.map(Side::as_str));
    }
    value
}

/// lichess's `timeControl` of a clock.
pub fn time_control(clock: Option<ClockSettings>) -> Value {
    match clock {
        None => json!({"type": "unlimited"}),
        Some(clock) => {
            let limit = clock.initial_ms / 1000;
            let increment = clock.increment_ms / 1000;
            let minutes = if limit % 60 == 0 {
                (limit / 60).to_string()
            } else {
                format!("{}", limit as f64 / 60.0)
            };
            json!({
                "type": "clock",
                "limit": limit,
                "increment": increment,
                "show": format!("{minutes}+{increment}"),
            })
        }
    }
}

/// The challenge object, as seen by `viewer` (`direction`: `in` for the
/// one challenged, `out` for the challenger).
pub fn challenge(row: &Challenge, viewer: Option<&str>, base_url: &str, now_ms: i64) -> Value {
    let clock = match (row.clock_initial_ms, row.clock_increment_ms) {
        (Some(initial), increment) => Some(ClockSettings {
            initial_ms: u64::try_from(initial).unwrap_or(0),
            increment_ms: u64::try_from(increment.unwrap_or(0)).unwrap_or(0),
        }),
        (None, _) => None,
    };
    let speed = speed(clock);
    let variant_of = row.variant();
    let mut value = json!({
        "id": row.id,
        "url": format!("{base_url}/challenges/{}", row.id),
        "status": row.status_at(now_ms),
        "challenger": user(
            &row.challenger_name,
            SeatRating::of(row.challenger_rating, row.challenger_deviation),
            row.challenger_bot,
        ),
        "destUser": user(
            &row.dest_name,
            SeatRating::of(row.dest_rating, row.dest_deviation),
            row.dest_bot,
        ),
        "variant": variant(variant_of),
        "rated": row.rated,
        "speed": speed,
        "timeControl": time_control(clock),
        "color": row.color,
        "finalColor": row.final_color,
        "perf": {"name": perf(variant_of, clock)},
        "createdAt": row.created_at,
        "expiresAt": row.expires_at,
    });
    if let Some(viewer) = viewer {
        value["direction"] = json!(if viewer == row.dest_id { "in" } else { "out" });
    }
    if let Some(reason) = &row.decline_reason {
        value["declineReasonKey"] = json!(reason);
        value["declineReason"] = json!(decline_text(reason));
    }
    if let Some(fen) = &row.initial_fen {
        value["initialFen"] = json!(fen);
    }
    if let Some(game) = &row.game_id {
        value["gameId"] = json!(game);
    }
    value
}

/// lichess's decline reasons (keys) and what they say.
pub const DECLINE_REASONS: [(&str, &str); 11] = [
    ("generic", "I'm not accepting challenges at the moment."),
    (
        "later",
        "This is not the right time for me, please ask again later.",
    ),
    (
        "tooFast",
        "This time control is too fast for me, please challenge again with a slower game.",
    ),
    (
        "tooSlow",
        "This time control is too slow for me, please challenge again with a faster game.",
    ),
    (
        "timeControl",
        "I'm not accepting challenges with this time control.",
    ),
    ("rated", "Please send me a rated challenge instead."),
    ("casual", "Please send me a casual challenge instead."),
    (
        "standard",
        "I'm not accepting variant challenges right now.",
    ),
    ("variant", "This variant is not supported."),
    ("noBot", "I'm not accepting challenges from bots."),
    ("onlyBot", "I'm only accepting challenges from bots."),
];

pub fn decline_text(key: &str) -> &'static str {
    DECLINE_REASONS
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map_or(DECLINE_REASONS[0].1, |(_, text)| text)
}

/// A decline reason key as lichess accepts it (case-insensitive), or
/// `generic`.
pub fn decline_key(reason: Option<&str>) -> &'static str {
    reason
        .and_then(|reason| {
            DECLINE_REASONS
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(reason.trim()))
        })
        .map_or("generic", |(k, _)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_follow_lichess() {
        let clock = |initial_ms, increment_ms| {
            Some(ClockSettings {
                initial_ms,
                increment_ms,
            })
        };
        assert_eq!(speed(None), "correspondence");
        assert_eq!(speed(clock(15_000, 0)), "ultraBullet");
        assert_eq!(speed(clock(60_000, 0)), "bullet");
        assert_eq!(speed(clock(180_000, 2_000)), "blitz");
        assert_eq!(speed(clock(600_000, 0)), "rapid");
        assert_eq!(speed(clock(1_800_000, 0)), "classical");
        assert_eq!(time_control(clock(300_000, 3_000))["show"], "5+3");
        assert_eq!(decline_key(Some("TOOFAST")), "tooFast");
        assert_eq!(decline_key(Some("whatever")), "generic");
    }
}
