//! An arena's pairing wave, as a pure function: among the players free now
//! (in the arena, not paused, not in a game), who plays whom.
//!
//! - **Close ranks first**: players are taken in standing order, and each
//!   is paired with the nearest-ranked free player that suits, looking at
//!   most [`LOOK_AHEAD`] places down.
//! - **No immediate rematch**: never the opponent of one's last game,
//!   unless the arena has only those two players active.
//! - **Colours balanced**: within the look-ahead, an opponent whose colour
//!   needs complement one's own is preferred; then the colours go by the
//!   two players' colours in this arena (`pools::pairing::first_is_white`).
//!
//! Whoever finds no suitable opponent waits for the next wave.

use crate::pools::pairing::{first_is_white, ColourHistory};

/// How far down the standings a player looks for an opponent.
pub const LOOK_AHEAD: usize = 4;

/// A free player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Free {
    pub id: String,
    /// Place in the standings, 0 first.
    pub rank: usize,
    /// The opponent of their last game in this arena.
    pub last_opponent: Option<String>,
    /// Their colours in this arena.
    pub colours: ColourHistory,
}

/// The pairs `(white, black)` of one wave, as indexes into `free`.
/// `allow_rematch`: only two players are active, so they may meet again.
pub fn pair_wave(
    free: &[Free],
    allow_rematch: bool,
    coin: &mut dyn FnMut() -> bool,
) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..free.len()).collect();
    order.sort_by_key(|&i| (free[i].rank, i));
    let mut taken = vec![false; free.len()];
    let mut pairs = Vec::new();
    for (position, &a) in order.iter().enumerate() {
        if taken[a] {
            continue;
        }
        let suitable: Vec<usize> = order[position + 1..]
            .iter()
            .copied()
            .filter(|&b| !taken[b] && (allow_rematch || !rematch(&free[a], &free[b])))
            .take(LOOK_AHEAD)
            .collect();
        let complements = |b: &usize| {
            let (x, y) = (free[a].colours.balance, free[*b].colours.balance);
            x == 0 || y == 0 || (x > 0) != (y > 0)
        };
        let Some(b) = suitable
            .iter()
            .copied()
            .find(complements)
            .or_else(|| suitable.first().copied())
        else {
            continue;
        };
        taken[a] = true;
        taken[b] = true;
        if first_is_white(&free[a].colours, &free[b].colours, coin) {
            pairs.push((a, b));
        } else {
            pairs.push((b, a));
        }
    }
    pairs
}

fn rematch(a: &Free, b: &Free) -> bool {
    a.last_opponent.as_deref() == Some(b.id.as_str())
        || b.last_opponent.as_deref() == Some(a.id.as_str())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::domain::Side;

    fn free(id: &str, rank: usize) -> Free {
        Free {
            id: id.to_string(),
            rank,
            last_opponent: None,
            colours: ColourHistory::default(),
        }
    }

    #[test]
    fn close_ranks_are_paired_together() {
        let players: Vec<_> = (0..6).map(|i| free(&format!("p{i}"), i)).collect();
        let pairs = pair_wave(&players, false, &mut || true);
        let mut sorted: Vec<_> = pairs.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![(0, 1), (2, 3), (4, 5)]);
    }

    #[test]
    fn no_immediate_rematch_unless_only_two_play() {
        let mut a = free("a", 0);
        let mut b = free("b", 1);
        a.last_opponent = Some("b".into());
        b.last_opponent = Some("a".into());
        assert!(pair_wave(&[a.clone(), b.clone()], false, &mut || true).is_empty());
        assert_eq!(
            pair_wave(&[a.clone(), b.clone()], true, &mut || true).len(),
            1
        );
        let c = free("c", 2);
        let pairs = pair_wave(&[a, b, c], false, &mut || true);
        assert_eq!(pairs.len(), 1);
        let (x, y) = pairs[0];
        assert!(x == 2 || y == 2, "a or b plays c, not each other");
    }

    /// A tiny deterministic generator for the simulations.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }
    }

    /// Simulated arenas of 10 to 200 players: players finish games at
    /// random moments and are paired by waves; across all of it no pair
    /// is an immediate rematch, nobody is in two games at once, and every
    /// player's colours stay within two of even.
    #[test]
    fn simulated_arenas_pair_well() {
        for (players, seed) in [(10, 1), (11, 2), (37, 3), (100, 4), (200, 5)] {
            let mut rng = Lcg(seed);
            let ids: Vec<String> = (0..players).map(|i| format!("p{i}")).collect();
            let mut score: HashMap<usize, u32> = HashMap::new();
            let mut last: HashMap<usize, usize> = HashMap::new();
            let mut colours = vec![ColourHistory::default(); players];
            let mut playing: Vec<(usize, usize, u64)> = Vec::new();
            let mut busy = vec![false; players];
            let mut games = 0;
            for wave in 0..300u64 {
                // Games end after 1 to 6 waves; the winner is random.
                let (over, going): (Vec<_>, Vec<_>) =
                    playing.into_iter().partition(|&(_, _, end)| end <= wave);
                playing = going;
                for (w, b, _) in over {
                    busy[w] = false;
                    busy[b] = false;
                    let winner = if rng.next() % 2 == 0 { w } else { b };
                    *score.entry(winner).or_default() += 2;
                }
                let mut standing: Vec<usize> = (0..players).collect();
                standing
                    .sort_by_key(|&p| (std::cmp::Reverse(score.get(&p).copied().unwrap_or(0)), p));
                let rank_of: HashMap<usize, usize> =
                    standing.iter().enumerate().map(|(r, &p)| (p, r)).collect();
                let free_players: Vec<usize> = (0..players).filter(|&p| !busy[p]).collect();
                let free: Vec<Free> = free_players
                    .iter()
                    .map(|&p| Free {
                        id: ids[p].clone(),
                        rank: rank_of[&p],
                        last_opponent: last.get(&p).map(|&o| ids[o].clone()),
                        colours: colours[p],
                    })
                    .collect();
                let mut coin = || rng.next() % 2 == 0;
                for (w, b) in pair_wave(&free, false, &mut coin) {
                    let (w, b) = (free_players[w], free_players[b]);
                    assert!(!busy[w] && !busy[b], "a player in two games");
                    assert_ne!(last.get(&w), Some(&b), "an immediate rematch");
                    assert_ne!(last.get(&b), Some(&w), "an immediate rematch");
                    busy[w] = true;
                    busy[b] = true;
                    last.insert(w, b);
                    last.insert(b, w);
                    colours[w] = colours[w].then(Side::White);
                    colours[b] = colours[b].then(Side::Black);
                    games += 1;
                    let length = 1 + rng.next() % 6;
                    playing.push((w, b, wave + length));
                }
            }
            assert!(
                games > players * 10,
                "{players} players: only {games} games"
            );
            for (p, history) in colours.iter().enumerate() {
                assert!(
                    history.balance.abs() <= 2,
                    "{players} players: p{p} has colour balance {}",
                    history.balance
                );
            }
        }
    }
}
