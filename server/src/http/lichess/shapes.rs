//! lichess's JSON shapes, built from Rookery's games, players and
//! challenges: the game objects of `gameStart`/`gameFinish` events, the
//! challenge object, statuses, speeds and the user light object. Field
//! names and values follow lichess's published API description
//! (lichess-org/api, doc/specs).

use serde_json::{json, Value};

use crate::live::game::{Ending, LiveGame, LiveSeat};
use crate::protocol::{ClockSettings, SeatRating, Side};
use crate::store::challenges::ChallengeRow;
use rookery_engine::game::Termination;

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

/// lichess's status name and id of a game.
pub fn status(live: &LiveGame) -> (&'static str, u16) {
    match live.ending() {
        None if live.game().moves().is_empty() && !live.is_ai_vs_ai() && is_waiting(live) => {
            ("created", 10)
        }
        None => ("started", 20),
        Some(ending) => ending_status(ending),
    }
}

fn is_waiting(live: &LiveGame) -> bool {
    live.status() == crate::protocol::Status::Waiting
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

pub fn variant() -> Value {
    json!({"key": "standard", "name": "Standard", "short": "Std"})
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

/// The opponent of `side` as lichess's events show it.
fn opponent(live: &LiveGame, side: Side) -> Value {
    match live.seat(side.other()) {
        LiveSeat::Ai { level } => json!({
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

/// The game object of a `gameStart` or `gameFinish` event for `side`'s
/// player.
pub fn event_game(live: &LiveGame, side: Side, source: &str) -> Value {
    let (status_name, status_id) = status(live);
    let moves = live.game().moves();
    let id = live.id.to_string();
    let seconds_left = live
        .clock()
        .map(|clock| clock.remaining(side, tokio::time::Instant::now()).as_secs());
    let mut game = json!({
        "id": id,
        "gameId": id,
        "fullId": id,
        "color": side.as_str(),
        "fen": live.game().position().to_fen(),
        "hasMoved": live.has_moved(side),
        "isMyTurn": live.ending().is_none() && live.turn() == side,
        "lastMove": moves.last().map(|mv| mv.to_uci()).unwrap_or_default(),
        "opponent": opponent(live, side),
        "perf": speed(live.clock_settings()),
        "rated": live.is_rated(),
        "source": source,
        "speed": speed(live.clock_settings()),
        "status": {"id": status_id, "name": status_name},
        "variant": variant(),
        "compat": {"bot": true, "board": true},
    });
    // lichess leaves it out without a clock (clients compare it with
    // numbers: a null breaks them).
    if let Some(seconds) = seconds_left {
        game["secondsLeft"] = json!(seconds);
    }
    if let Some(ending) = live.ending() {
        game["winner"] = json!(ending.winner.map(Side::as_str));
    }
    game
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
pub fn challenge(row: &ChallengeRow, viewer: Option<&str>, base_url: &str, now_ms: i64) -> Value {
    let clock = match (row.clock_initial_ms, row.clock_increment_ms) {
        (Some(initial), increment) => Some(ClockSettings {
            initial_ms: u64::try_from(initial).unwrap_or(0),
            increment_ms: u64::try_from(increment.unwrap_or(0)).unwrap_or(0),
        }),
        (None, _) => None,
    };
    let speed = speed(clock);
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
        "variant": variant(),
        "rated": row.rated,
        "speed": speed,
        "timeControl": time_control(clock),
        "color": row.color,
        "finalColor": row.final_color,
        "perf": {"name": speed},
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
