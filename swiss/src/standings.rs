//! Standings with the usual Swiss tie-breaks: points, Buchholz, Buchholz
//! cut 1, Sonneborn-Berger, number of wins.
//!
//! Unplayed rounds follow FIDE's 2009 tie-break rule for Swiss events
//! (the "virtual opponent"):
//! - for a player's own unplayed round (bye, forfeit, absence) the opponent
//!   is a virtual one who starts the round on the player's score, gets the
//!   opposite result, and draws every later round;
//! - an opponent's score is counted with that opponent's own unplayed
//!   rounds as draws, so a rival's forfeit does not change your Buchholz.
//!
//! Scores here are in half points, so Buchholz and Sonneborn-Berger are in
//! half points too (SB in quarter points: see [`Standing::sonneborn_berger`]).

use crate::model::{Colour, Entry, PlayerId, Score, Tournament};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standing {
    /// 1-based place; players tied on every criterion share the place.
    pub rank: u32,
    pub player: PlayerId,
    pub points: Score,
    /// Sum of the opponents' (adjusted) scores, half points.
    pub buchholz: u32,
    /// Buchholz without the lowest opponent score, half points.
    pub buchholz_cut1: u32,
    /// Sum of beaten opponents' scores plus half the drawn ones', in
    /// quarter points (to stay exact).
    pub sonneborn_berger: u32,
    /// Games won, over the board or by forfeit (not byes).
    pub wins: u32,
}

/// The standings after every recorded round, best first; ties on all
/// criteria are broken by pairing number for the order only.
pub fn standings(t: &Tournament) -> Vec<Standing> {
    let n_rounds = t.rounds.len();
    let ids: Vec<PlayerId> = t.players.iter().map(|p| p.id).collect();
    // Scores with the player's own unplayed rounds as draws.
    let adjusted: Vec<u32> = ids
        .iter()
        .map(|&id| {
            t.rounds
                .iter()
                .map(|round| match round.entry(id) {
                    Entry::Game { result, colour, .. } if result.played() => {
                        let (w, b) = result.scores();
                        if colour == Colour::White {
                            w.0
                        } else {
                            b.0
                        }
                    }
                    _ => Score::HALF.0,
                })
                .sum()
        })
        .collect();

    let mut rows: Vec<Standing> = ids
        .iter()
        .map(|&id| {
            let mut opponent_scores: Vec<u32> = Vec::with_capacity(n_rounds);
            let mut sb = 0u32;
            let mut wins = 0u32;
            let mut running = Score::ZERO;
            for (r, round) in t.rounds.iter().enumerate() {
                let mine = t.points_in(round, id);
                let opp_score = match round.entry(id) {
                    Entry::Game {
                        opponent, result, ..
                    } if result.played() => adjusted.get(opponent.index()).copied().unwrap_or(0),
                    _ => {
                        // Virtual opponent: our score before the round, the
                        // opposite of our result, then draws.
                        let later = (n_rounds - r - 1) as u32 * Score::HALF.0;
                        running.0 + (Score::ONE.0 - mine.0.min(Score::ONE.0)) + later
                    }
                };
                if let Entry::Game { .. } = round.entry(id) {
                    if mine == Score::ONE {
                        wins += 1;
                    }
                }
                opponent_scores.push(opp_score);
                // Quarter points: a win counts the opponent's score twice
                // (as halves), a draw once.
                sb += opp_score * mine.0;
                running += mine;
            }
            let buchholz: u32 = opponent_scores.iter().sum();
            let cut = opponent_scores.iter().min().copied().unwrap_or(0);
            Standing {
                rank: 0,
                player: id,
                points: running,
                buchholz,
                buchholz_cut1: buchholz - cut,
                sonneborn_berger: sb,
                wins,
            }
        })
        .collect();

    let key = |s: &Standing| {
        (
            std::cmp::Reverse(s.points),
            std::cmp::Reverse(s.buchholz_cut1),
            std::cmp::Reverse(s.buchholz),
            std::cmp::Reverse(s.sonneborn_berger),
            std::cmp::Reverse(s.wins),
        )
    };
    rows.sort_by(|a, b| key(a).cmp(&key(b)).then(a.player.cmp(&b.player)));
    for i in 0..rows.len() {
        rows[i].rank = if i > 0 && key(&rows[i]) == key(&rows[i - 1]) {
            rows[i - 1].rank
        } else {
            i as u32 + 1
        };
    }
    rows
}
