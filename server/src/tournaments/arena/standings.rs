//! An arena's standings, as a pure function of its players and settled
//! pairings: each player's sheet (`scoring.rs`), their performance rating,
//! and the order: score, then performance rating (lichess's tie-break),
//! then rating, then name.

use std::collections::HashMap;

use super::scoring::{Game, Outcome, Sheet};
use crate::domain::Side;

/// A player as the standings see them.
#[derive(Debug, Clone)]
pub struct Player {
    pub id: String,
    pub name: String,
    pub rating: i64,
    pub active: bool,
}

/// A pairing as the standings see it.
#[derive(Debug, Clone)]
pub struct Pairing {
    pub white: String,
    pub black: String,
    pub white_rating: i64,
    pub black_rating: i64,
    pub settled: bool,
    pub winner: Option<Side>,
    pub aborted: bool,
    pub plies: u32,
    /// White's and black's berserk.
    pub berserk: [bool; 2],
}

/// One line of the standings.
#[derive(Debug, Clone)]
pub struct Standing {
    /// 1 for the leader.
    pub rank: usize,
    pub player: Player,
    pub sheet: Sheet,
    pub score: u32,
    pub fire: bool,
    /// lichess's performance rating: the opponents' average rating plus
    /// 500 × (wins − losses) / games; `None` before a counted game.
    pub performance: Option<i64>,
    pub games: usize,
    pub berserks: usize,
    /// In a game of the arena now.
    pub playing: bool,
}

/// The standings, leader first.
pub fn standings(players: &[Player], pairings: &[Pairing], streakable: bool) -> Vec<Standing> {
    let mut games: HashMap<&str, Vec<Game>> = HashMap::new();
    let mut opponents: HashMap<&str, (i64, i64)> = HashMap::new();
    let mut playing: HashMap<&str, bool> = HashMap::new();
    for pairing in pairings {
        if !pairing.settled {
            playing.insert(&pairing.white, true);
            playing.insert(&pairing.black, true);
            continue;
        }
        if pairing.aborted {
            continue;
        }
        for side in Side::BOTH {
            let (me, rating_of_opponent) = match side {
                Side::White => (&pairing.white, pairing.black_rating),
                Side::Black => (&pairing.black, pairing.white_rating),
            };
            let outcome = match pairing.winner {
                None => Outcome::Draw,
                Some(winner) if winner == side => Outcome::Win,
                Some(_) => Outcome::Loss,
            };
            games.entry(me).or_default().push(Game {
                outcome,
                plies: pairing.plies,
                berserk: pairing.berserk[side.index()],
            });
            let sum = opponents.entry(me).or_insert((0, 0));
            sum.0 += rating_of_opponent
                + match outcome {
                    Outcome::Win => 500,
                    Outcome::Draw => 0,
                    Outcome::Loss => -500,
                };
            sum.1 += 1;
        }
    }
    let mut lines: Vec<Standing> = players
        .iter()
        .map(|player| {
            let played = games.get(player.id.as_str()).map_or(&[][..], Vec::as_slice);
            let sheet = Sheet::of(played, streakable);
            let performance = opponents
                .get(player.id.as_str())
                .filter(|(_, n)| *n > 0)
                .map(|(sum, n)| (*sum as f64 / *n as f64).round() as i64);
            Standing {
                rank: 0,
                score: sheet.total,
                fire: streakable && sheet.on_fire(),
                performance,
                games: played.len(),
                berserks: played.iter().filter(|g| g.berserk).count(),
                playing: playing.contains_key(player.id.as_str()),
                sheet,
                player: player.clone(),
            }
        })
        .collect();
    lines.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then(
                b.performance
                    .unwrap_or(i64::MIN)
                    .cmp(&a.performance.unwrap_or(i64::MIN)),
            )
            .then(b.player.rating.cmp(&a.player.rating))
            .then(a.player.name.cmp(&b.player.name))
    });
    for (index, line) in lines.iter_mut().enumerate() {
        line.rank = index + 1;
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn player(id: &str, rating: i64) -> Player {
        Player {
            id: id.into(),
            name: id.into(),
            rating,
            active: true,
        }
    }

    fn game(white: &str, black: &str, winner: Option<Side>) -> Pairing {
        Pairing {
            white: white.into(),
            black: black.into(),
            white_rating: 1500,
            black_rating: 1500,
            settled: true,
            winner,
            aborted: false,
            plies: 40,
            berserk: [false, false],
        }
    }

    #[test]
    fn ties_are_broken_by_performance() {
        let players = [
            player("a", 1500),
            player("b", 1500),
            player("c", 1500),
            player("d", 1500),
        ];
        let mut strong = game("c", "d", Some(Side::White));
        strong.black_rating = 2000;
        let pairings = [game("a", "b", Some(Side::White)), strong];
        let lines = standings(&players, &pairings, true);
        assert_eq!(lines[0].player.id, "c");
        assert_eq!(lines[0].performance, Some(2500));
        assert_eq!(lines[1].player.id, "a");
        assert_eq!(lines[1].performance, Some(2000));
        assert_eq!((lines[0].score, lines[1].score), (2, 2));
    }

    #[test]
    fn aborted_games_do_not_count_and_unsettled_ones_mean_playing() {
        let players = [player("a", 1500), player("b", 1500)];
        let mut aborted = game("a", "b", None);
        aborted.aborted = true;
        let mut going = game("b", "a", None);
        going.settled = false;
        let lines = standings(&players, &[aborted, going], true);
        assert!(lines
            .iter()
            .all(|l| l.games == 0 && l.score == 0 && l.playing));
    }
}
