//! A Swiss in lichess's shapes (`SwissTournament`, the results' lines) and
//! Rookery's additions: the standings with every tie-break and the rounds'
//! pairings, as the tournament page and its socket show them.

use rookery_swiss::{standings, trf, Entry};
use serde_json::{json, Value};

use super::record::{points, Loaded, Model};
use crate::protocol::pgn::iso_time;
use crate::store::now_ms;

/// lichess's `SwissTournament` of a stored tournament, with Rookery's
/// additions (`teamId`, `description`, `roundInterval`, `conditions`,
/// `byePoints`). `verdicts` are the viewer's, when known.
pub fn info(loaded: &Loaded, verdicts: Option<&[(String, bool)]>) -> Value {
    let row = &loaded.row;
    let mut info = json!({
        "id": row.id,
        "createdBy": row.creator_name.to_lowercase(),
        "startsAt": iso_time(row.starts_at),
        "name": row.name,
        "clock": {
            "limit": row.clock_initial_ms / 1000,
            "increment": row.clock_increment_ms / 1000,
        },
        "variant": "standard",
        "round": row.round,
        "nbRounds": row.rounds_planned,
        "nbPlayers": row.players,
        "nbOngoing": loaded.ongoing(),
        "status": row.status,
        "rated": row.rated,
        "teamId": row.team_id,
        "description": row.description,
        "roundInterval": row.round_interval_ms.map(|ms| ms / 1000),
        "byePoints": points(rookery_swiss::Score(u32::try_from(row.bye_points).unwrap_or(0))),
        "conditions": {
            "minRating": row.min_rating,
            "nbRatedGame": row.min_rated_games,
        },
        "verdicts": {
            "list": verdicts.unwrap_or_default().iter().map(|(condition, ok)| json!({
                "condition": condition,
                "verdict": if *ok { "ok" } else { "refused" },
            })).collect::<Vec<_>>(),
            "accepted": verdicts.is_none_or(|list| list.iter().all(|(_, ok)| *ok)),
        },
    });
    if let Some(at) = row.next_round_at.filter(|_| row.status != "finished") {
        info["nextRound"] = json!({
            "at": iso_time(at),
            "in": ((at - now_ms()).max(0) + 999) / 1000,
        });
    }
    info
}

/// The standings with the results so far (the current round's finished
/// games count at once; tie-breaks are final once the round is over), best
/// first: lichess's results lines plus every tie-break.
pub fn standings_lines(loaded: &Loaded) -> Vec<Value> {
    let model = loaded.model(loaded.complete_rounds(), true);
    let t = &model.tournament;
    standings(t)
        .into_iter()
        .filter_map(|s| {
            let player = t.player(s.player)?;
            let id = model.id_of(s.player)?;
            let row = loaded.players.iter().find(|p| p.player.id == id)?;
            Some(json!({
                "rank": s.rank,
                "points": points(s.points),
                // lichess's one tie-break is Sonneborn-Berger (in points).
                "tieBreak": f64::from(s.sonneborn_berger) / 4.0,
                "rating": row.rating,
                "username": player.name,
                "performance": performance(&model, s.player.index()),
                "absent": player.withdrawn,
                "buchholzCut1": f64::from(s.buchholz_cut1) / 2.0,
                "buchholz": f64::from(s.buchholz) / 2.0,
                "sonnebornBerger": f64::from(s.sonneborn_berger) / 4.0,
                "wins": s.wins,
                "pairingNumber": s.player.0,
            }))
        })
        .collect()
}

/// A performance rating over the games played: the opponents' average
/// rating plus 400 times (wins − losses) over games (the linear estimate
/// lichess shows); the player's own rating before any game.
fn performance(model: &Model, index: usize) -> i64 {
    let t = &model.tournament;
    let Some(me) = t.players.get(index) else {
        return 0;
    };
    let (mut sum, mut games, mut balance) = (0i64, 0i64, 0i64);
    for round in &t.rounds {
        if let Entry::Game {
            opponent, result, ..
        } = round.entry(me.id)
        {
            if !result.played() {
                continue;
            }
            let rating = t.player(opponent).map_or(0, |p| i64::from(p.rating));
            sum += rating;
            games += 1;
            balance += match t.points_in(round, me.id).0 {
                2 => 1,
                0 => -1,
                _ => 0,
            };
        }
    }
    if games == 0 {
        i64::from(me.rating)
    } else {
        (sum + 400 * balance) / games
    }
}

/// Each round's pairings: games by board (with their result once known)
/// and byes.
pub fn rounds(loaded: &Loaded) -> Vec<Value> {
    let name = |id: &str| {
        loaded
            .players
            .iter()
            .find(|p| p.player.id == id)
            .map(|p| p.player.name.clone())
            .unwrap_or_default()
    };
    (1..=loaded.row.round)
        .map(|round| {
            let pairings: Vec<Value> = loaded
                .round_pairings(round)
                .map(|p| match &p.black_id {
                    Some(black) => json!({
                        "board": p.board,
                        "white": name(&p.white_id),
                        "black": name(black),
                        "gameId": p.game_id,
                        "result": p.result,
                    }),
                    None => json!({
                        "board": p.board,
                        "player": name(&p.white_id),
                        "bye": p.bye,
                    }),
                })
                .collect();
            json!({"round": round, "pairings": pairings})
        })
        .collect()
}

/// What the tournament page shows, and its socket sends on each change:
/// the info, the standings and the rounds.
pub fn page_message(loaded: &Loaded) -> Value {
    json!({
        "type": "swiss",
        "swiss": info(loaded, None),
        "standings": standings_lines(loaded),
        "rounds": rounds(loaded),
    })
}

/// The tournament as a TRF-16 file: its players and every round whose
/// results are all in, with the requests for the next round's byes and
/// the withdrawals (`rookery_swiss::trf::write`). Entrants not yet
/// paired get the numbers the next round will give them, so the file pairs
/// the next round as the director will.
pub fn trf_text(loaded: &Loaded) -> String {
    let mut loaded = loaded.clone();
    let numbers = loaded.new_numbers();
    loaded.number(&numbers);
    trf::write(&loaded.model(loaded.complete_rounds(), false).tournament)
}
