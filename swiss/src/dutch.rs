//! The FIDE Dutch system (C.04.3): pairing one round.
//!
//! The shape of the rules is kept: players are ranked by score then
//! pairing number, score groups are paired from the top down, each bracket
//! made of the moved-down players (MDPs) left over from above plus its
//! resident players, and whoever stays unpaired floats to the next bracket.
//!
//! Within a bracket the rules ask for the candidate pairing that is best by
//! the quality criteria, ties going to the first candidate in the order of
//! transpositions (and exchanges). This module searches the candidates in
//! that order, depth-first: the first unpaired player (MDPs first, then the
//! remainder's S1) tries its partners in S2 order, which enumerates the
//! transpositions lexicographically; after S2 come the lower S1 players
//! (a homogeneous exchange). A candidate's cost is the vector of the
//! quality criteria, compared lexicographically; since every component only
//! grows as pairs are added, a partial candidate no better than the best
//! complete one is cut (branch and bound), and the search stops as soon as a
//! candidate reaches the bracket's lower bound. A node budget bounds the
//! worst case; past it the best candidate found so far is taken.
//!
//! The completion criterion (C4) is checked exactly: a candidate is only
//! accepted if its downfloaters together with every lower player still have
//! a complete pairing, which is a perfect-matching question answered by
//! [`crate::matching`]. With an odd number of players the pairing-allocated
//! bye is a dummy vertex below the last score group, adjacent only to the
//! players who may take it, so the same check also guarantees a legal bye.

use std::collections::HashMap;

use crate::colour::{higher_ranked_colour, Side};
use crate::history::{histories, Float, PlayerHistory, Preference, Strength};
use crate::matching::perfect_matching;
use crate::model::{Colour, PlayerId, Score, Tournament};

/// The pairing of one round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// `(white, black)` in board order: the higher score of the pair first,
    /// then the higher sum of scores, then the better-ranked player.
    pub pairs: Vec<(PlayerId, PlayerId)>,
    /// The player receiving the pairing-allocated bye, if the number of
    /// present players is odd.
    pub bye: Option<PlayerId>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PairingError {
    #[error("player {0} is not in the tournament")]
    UnknownPlayer(PlayerId),
    #[error("player {0} is listed twice among the present players")]
    DuplicatePlayer(PlayerId),
    #[error("no pairing of these players satisfies the absolute criteria")]
    NoLegalPairing,
}

/// Nodes explored per bracket and number of downfloaters before the search
/// settles for the best candidate found (see the module comment).
const NODE_BUDGET: usize = 20_000;

/// The pairing score difference (C7) is a list of score differences
/// sorted from the highest, compared lexicographically. With the number of
/// pairs and floaters fixed, that is a histogram compared from the largest
/// difference down: `PSD_BINS` counters, the first for differences of
/// `PSD_BINS - 1` half points or more, the last for 0.
const PSD_BINS: usize = 64;
/// Number of quality-criterion components in a candidate's cost.
const COST_LEN: usize = PSD_BINS + 12;
type Cost = [u32; COST_LEN];

/// The PSD counter of a score difference in half points.
fn psd(diff: u32) -> usize {
    PSD_BINS - 1 - (diff as usize).min(PSD_BINS - 1)
}

// Indices into `Cost` after the PSD, in the order of the 2025/2026
// quality criteria.
const TOP_CD: usize = PSD_BINS; // C10: topscorers beyond colour difference ±2
const TOP_ROW: usize = PSD_BINS + 1; // C11: topscorers with three same colours in a row
const COLOUR: usize = PSD_BINS + 2; // C12: colour preferences not granted
const STRONG: usize = PSD_BINS + 3; // C13: strong colour preferences not granted
const DOWN1: usize = PSD_BINS + 4; // C14: downfloat repeated from last round
const UP1: usize = PSD_BINS + 5; // C15: upfloat repeated from last round
const DOWN2: usize = PSD_BINS + 6; // C16: downfloat repeated from two rounds before
const UP2: usize = PSD_BINS + 7; // C17: upfloat repeated from two rounds before
const DOWN1_SD: usize = PSD_BINS + 8; // C18-C21: the score differences of those
const UP1_SD: usize = PSD_BINS + 9;
const DOWN2_SD: usize = PSD_BINS + 10;
const UP2_SD: usize = PSD_BINS + 11;

/// A bracket's outcome: its pairs (vertex indices) and its downfloaters.
struct BracketPairing {
    pairs: Vec<(usize, usize)>,
    floaters: Vec<usize>,
}

/// Pair the next round of `tournament` among the `present` players.
pub fn pair_next_round(
    tournament: &Tournament,
    present: &[PlayerId],
) -> Result<Pairing, PairingError> {
    let all = histories(tournament);
    let mut seen = vec![false; all.len()];
    let mut players: Vec<&PlayerHistory> = Vec::with_capacity(present.len());
    for &id in present {
        if tournament.player(id).is_none() {
            return Err(PairingError::UnknownPlayer(id));
        }
        if std::mem::replace(&mut seen[id.index()], true) {
            return Err(PairingError::DuplicatePlayer(id));
        }
        players.push(&all[id.index()]);
    }
    // Pairing order (C.04.3 1.2): score, then pairing number.
    players.sort_by(|a, b| b.score.cmp(&a.score).then(a.id.cmp(&b.id)));
    let ctx = Context::new(tournament, players);
    ctx.pair()
}

/// One vertex of the round: a present player, or the bye.
struct Context<'a> {
    players: Vec<&'a PlayerHistory>,
    /// Number of real players; index `n` is the bye when `has_bye`.
    n: usize,
    has_bye: bool,
    prefs: Vec<Option<Preference>>,
    topscorer: Vec<bool>,
    /// `compat[a * size + b]`: a and b may meet (C1, C3), or, with the bye
    /// vertex, a may take the bye (C2 and the bye's chosen score).
    compat: Vec<bool>,
    size: usize,
    initial: Colour,
}

impl<'a> Context<'a> {
    fn new(t: &Tournament, players: Vec<&'a PlayerHistory>) -> Context<'a> {
        let n = players.len();
        let has_bye = n % 2 == 1;
        let size = n + usize::from(has_bye);
        let played = t.rounds.len() as u32;
        // Topscorers only exist when pairing the final round: a score above
        // half of the maximum possible so far (C.04.3 1.7).
        let last_round = played + 1 >= t.rounds_planned;
        let topscorer = players
            .iter()
            .map(|p| last_round && p.score.0 > played * Score::ONE.0 / 2)
            .collect::<Vec<_>>();
        let prefs = players.iter().map(|p| p.preference()).collect::<Vec<_>>();
        let mut compat = vec![false; size * size];
        for a in 0..n {
            for b in (a + 1)..n {
                let repeat = players[a].met.contains(&players[b].id);
                let colour_clash = match (prefs[a], prefs[b]) {
                    (Some(p), Some(q)) => {
                        p.strength == Strength::Absolute
                            && q.strength == Strength::Absolute
                            && p.colour == q.colour
                            && !topscorer[a]
                            && !topscorer[b]
                    }
                    _ => false,
                };
                let ok = !repeat && !colour_clash;
                compat[a * size + b] = ok;
                compat[b * size + a] = ok;
            }
        }
        Context {
            players,
            n,
            has_bye,
            prefs,
            topscorer,
            compat,
            size,
            initial: t.initial_colour,
        }
    }

    fn compatible(&self, a: usize, b: usize) -> bool {
        self.compat[a * self.size + b]
    }

    fn set_bye_candidates(&mut self, allowed: impl Fn(&PlayerHistory) -> bool) {
        let bye = self.n;
        for a in 0..self.n {
            let ok = !self.players[a].bye_barred && allowed(self.players[a]);
            self.compat[a * self.size + bye] = ok;
            self.compat[bye * self.size + a] = ok;
        }
    }

    /// Can the vertices in `set` all be paired?
    fn completable(&self, set: &[usize]) -> bool {
        perfect_matching(set.len(), |a, b| self.compatible(set[a], set[b])).is_some()
    }

    fn pair(mut self) -> Result<Pairing, PairingError> {
        let everyone: Vec<usize> = (0..self.size).collect();
        if self.has_bye {
            // The bye goes to the lowest score that still lets everyone else
            // be paired (2025 C5), then to a player with the fewest unplayed
            // rounds (2025 C9, here ranked above the colour and float
            // criteria, which it precedes in the rules, and below the
            // bracket criteria C6-C8, which it does not see: see README).
            let mut scores: Vec<Score> = self
                .players
                .iter()
                .filter(|p| !p.bye_barred)
                .map(|p| p.score)
                .collect();
            scores.sort();
            scores.dedup();
            let mut chosen = None;
            for s in scores {
                self.set_bye_candidates(|p| p.score == s);
                if self.completable(&everyone) {
                    chosen = Some(s);
                    break;
                }
            }
            let s = chosen.ok_or(PairingError::NoLegalPairing)?;
            let mut unplayed: Vec<u32> = self
                .players
                .iter()
                .filter(|p| !p.bye_barred && p.score == s)
                .map(|p| p.unplayed)
                .collect();
            unplayed.sort();
            unplayed.dedup();
            for u in unplayed {
                self.set_bye_candidates(|p| p.score == s && p.unplayed == u);
                if self.completable(&everyone) {
                    break;
                }
            }
        } else if !self.completable(&everyone) {
            return Err(PairingError::NoLegalPairing);
        }

        // Score groups, top down; the bye vertex is a group of its own.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for i in 0..self.n {
            match groups.last_mut() {
                Some(g) if self.players[g[0]].score == self.players[i].score => g.push(i),
                _ => groups.push(vec![i]),
            }
        }
        if self.has_bye {
            groups.push(vec![self.n]);
        }

        let mut pairs: Vec<(usize, usize)> = Vec::new();
        let mut mdps: Vec<usize> = Vec::new();
        for (g, residents) in groups.iter().enumerate() {
            let rest: Vec<usize> = groups[g + 1..].iter().flatten().copied().collect();
            let mut bracket = std::mem::take(&mut mdps);
            let n_mdp = bracket.len();
            bracket.extend(residents.iter().copied());
            let found = self.pair_bracket(&bracket, n_mdp, &rest)?;
            pairs.extend(found.pairs);
            mdps = found.floaters;
        }
        debug_assert!(mdps.is_empty());
        Ok(self.finish(pairs))
    }

    /// Pair one bracket: its pairs and its downfloaters.
    fn pair_bracket(
        &self,
        bracket: &[usize],
        n_mdp: usize,
        rest: &[usize],
    ) -> Result<BracketPairing, PairingError> {
        let len = bracket.len();
        let min_floats = if rest.is_empty() { 0 } else { len % 2 };
        let max_floats = if rest.is_empty() { 0 } else { len };
        let mut cache: HashMap<Vec<usize>, bool> = HashMap::new();
        let low = bracket
            .iter()
            .rev()
            .find(|&&v| v < self.n)
            .map_or(0, |&v| self.players[v].score.0);
        for floats in (min_floats..=max_floats).step_by(2) {
            let mut search = BracketSearch {
                ctx: self,
                bracket,
                n_mdp,
                low,
                rest,
                assigned: vec![false; len],
                floats_left: floats,
                nodes: 0,
                lower_bound: self.lower_bound(bracket, n_mdp, floats),
                best: None,
                cache: &mut cache,
                pairs: Vec::new(),
                floaters: Vec::new(),
            };
            search.run([0; COST_LEN]);
            if let Some((_, found)) = search.best {
                return Ok(found);
            }
        }
        // Only the last bracket gets here, and only if the budget ran out:
        // the bracket is known to be completable, so take any complete
        // pairing of it.
        let mate = perfect_matching(len, |a, b| self.compatible(bracket[a], bracket[b]))
            .ok_or(PairingError::NoLegalPairing)?;
        let pairs = (0..mate.len())
            .filter(|&a| a < mate[a])
            .map(|a| (bracket[a], bracket[mate[a]]))
            .collect();
        Ok(BracketPairing {
            pairs,
            floaters: Vec::new(),
        })
    }

    /// A lower bound on the cost of any candidate with `floats`
    /// downfloaters: it lets the search stop at a candidate that cannot be
    /// beaten.
    fn lower_bound(&self, bracket: &[usize], n_mdp: usize, floats: usize) -> Cost {
        let mut lb = [0; COST_LEN];
        let real: Vec<usize> = bracket.iter().copied().filter(|&v| v < self.n).collect();
        let pairs = (bracket.len() - floats) / 2;
        // Each downfloater costs at least the 1 point below the lowest
        // score; each MDP paired at least its drop to the residents.
        if let Some(&lowest) = bracket.last() {
            if lowest < self.n {
                let low = self.players[lowest].score.0;
                lb[psd(2)] = floats as u32;
                if n_mdp + floats <= bracket.len() - n_mdp {
                    for &m in &bracket[..n_mdp] {
                        lb[psd(self.players[m].score.0 - low)] += 1;
                    }
                }
            }
        }
        // Two players wanting the same colour in one pair: at least one of
        // them is disappointed.
        let count = |colour: Colour, strong: bool| {
            real.iter()
                .filter(|&&v| {
                    self.prefs[v].is_some_and(|p| {
                        p.colour == colour && (!strong || p.strength >= Strength::Strong)
                    })
                })
                .count()
        };
        let excess = |k: usize| k.saturating_sub(pairs + floats) as u32;
        lb[COLOUR] = excess(count(Colour::White, false)).max(excess(count(Colour::Black, false)));
        lb[STRONG] = excess(count(Colour::White, true)).max(excess(count(Colour::Black, true)));
        lb
    }

    fn side(&self, v: usize) -> Side<'_> {
        Side {
            history: self.players[v],
            preference: self.prefs[v],
        }
    }

    /// The colour of `a` (ranked above `b`) in their game.
    fn colour_of_higher(&self, a: usize, b: usize) -> Colour {
        higher_ranked_colour(&self.side(a), &self.side(b), self.initial)
    }

    /// The cost of pairing `a` (ranked above `b`) with `b`.
    fn pair_cost(&self, a: usize, b: usize) -> Cost {
        let mut c = [0; COST_LEN];
        if b >= self.n {
            // The bye: its floats were counted when the player floated.
            return c;
        }
        let (sa, sb) = (self.players[a].score.0, self.players[b].score.0);
        c[psd(sa.abs_diff(sb))] += 1;
        let ca = self.colour_of_higher(a, b);
        for (v, colour) in [(a, ca), (b, ca.opposite())] {
            if let Some(p) = self.prefs[v] {
                if p.colour != colour {
                    c[COLOUR] += 1;
                    if p.strength >= Strength::Strong {
                        c[STRONG] += 1;
                    }
                }
            }
            if self.topscorer[a] || self.topscorer[b] {
                let h = self.players[v];
                let cd = h.colour_difference() + if colour == Colour::White { 1 } else { -1 };
                if cd.abs() > 2 {
                    c[TOP_CD] += 1;
                }
                let k = h.colours.len();
                if k >= 2 && h.colours[k - 1] == colour && h.colours[k - 2] == colour {
                    c[TOP_ROW] += 1;
                }
            }
        }
        if sa != sb {
            let (hi, lo) = if sa > sb { (a, b) } else { (b, a) };
            let diff = sa.abs_diff(sb);
            let (h, l) = (self.players[hi], self.players[lo]);
            if h.float_last == Float::Down {
                c[DOWN1] += 1;
                c[DOWN1_SD] += diff;
            }
            if l.float_last == Float::Up {
                c[UP1] += 1;
                c[UP1_SD] += diff;
            }
            if h.float_before_last == Float::Down {
                c[DOWN2] += 1;
                c[DOWN2_SD] += diff;
            }
            if l.float_before_last == Float::Up {
                c[UP2] += 1;
                c[UP2_SD] += diff;
            }
        }
        c
    }

    /// The cost of `v` floating down out of a bracket whose lowest score is
    /// `low` (half points).
    fn float_cost(&self, v: usize, low: u32) -> Cost {
        let mut c = [0; COST_LEN];
        let h = self.players[v];
        c[psd(h.score.0 + 2 - low.min(h.score.0))] += 1;
        if h.float_last == Float::Down {
            c[DOWN1] += 1;
        }
        if h.float_before_last == Float::Down {
            c[DOWN2] += 1;
        }
        c
    }

    fn finish(&self, pairs: Vec<(usize, usize)>) -> Pairing {
        let mut bye = None;
        let mut games: Vec<(usize, usize)> = Vec::new();
        for (a, b) in pairs {
            let (hi, lo) = (a.min(b), a.max(b));
            if lo >= self.n {
                bye = Some(self.players[hi].id);
                continue;
            }
            if self.colour_of_higher(hi, lo) == Colour::White {
                games.push((hi, lo));
            } else {
                games.push((lo, hi));
            }
        }
        // Board order: the pair's higher score, the sum of scores, the
        // better ranking (index in score/TPN order) of the two.
        games.sort_by_key(|&(w, b)| {
            let (sw, sb) = (self.players[w].score.0, self.players[b].score.0);
            (
                std::cmp::Reverse(sw.max(sb)),
                std::cmp::Reverse(sw + sb),
                w.min(b),
            )
        });
        Pairing {
            pairs: games
                .into_iter()
                .map(|(w, b)| (self.players[w].id, self.players[b].id))
                .collect(),
            bye,
        }
    }
}

fn add(a: &Cost, b: &Cost) -> Cost {
    let mut c = *a;
    for (x, y) in c.iter_mut().zip(b) {
        *x += y;
    }
    c
}

/// The depth-first candidate search of one bracket with a fixed number of
/// downfloaters.
struct BracketSearch<'s, 'a> {
    ctx: &'s Context<'a>,
    /// Bracket vertices in rank order: MDPs, then residents.
    bracket: &'s [usize],
    n_mdp: usize,
    /// The lowest score of the bracket (half points).
    low: u32,
    rest: &'s [usize],
    assigned: Vec<bool>,
    floats_left: usize,
    nodes: usize,
    lower_bound: Cost,
    best: Option<(Cost, BracketPairing)>,
    /// Completion results by set of downfloaters (the rest is fixed).
    cache: &'s mut HashMap<Vec<usize>, bool>,
    pairs: Vec<(usize, usize)>,
    floaters: Vec<usize>,
}

impl BracketSearch<'_, '_> {
    /// Returns true when the search must stop (optimal or out of budget).
    fn run(&mut self, cost: Cost) -> bool {
        self.nodes += 1;
        if self.nodes > NODE_BUDGET {
            return true;
        }
        let Some(first) = self.assigned.iter().position(|a| !a) else {
            if let Some((best, _)) = &self.best {
                if cost >= *best {
                    return false;
                }
            }
            return self.leaf(cost);
        };
        if let Some((best, _)) = &self.best {
            if add(&cost, &self.cost_to_go()) >= *best {
                return false;
            }
        }
        let unassigned = self.assigned.iter().filter(|a| !**a).count();
        let p = self.bracket[first];
        let low = self.low;

        let candidates: Vec<usize> = if first < self.n_mdp {
            // An MDP meets the residents from the top (S2), then other MDPs.
            let residents = (self.n_mdp..self.bracket.len()).filter(|&j| !self.assigned[j]);
            let mdps = (first + 1..self.n_mdp).filter(|&j| !self.assigned[j]);
            residents.chain(mdps).collect()
        } else {
            // The remainder: S1 is its top half (less the floaters), S2 the
            // rest; `first` heads S1. Transpositions try S2 in order, then
            // the lower S1 players from the bottom up (exchanges).
            let r: Vec<usize> = (first..self.bracket.len())
                .filter(|&j| !self.assigned[j])
                .collect();
            let half = (r.len() - self.floats_left.min(r.len())) / 2;
            let half = half.max(1).min(r.len());
            let mut order: Vec<usize> = r[half..].to_vec();
            order.extend(r[1..half].iter().rev());
            order
        };

        if unassigned >= 2 + self.floats_left {
            self.assigned[first] = true;
            for j in candidates {
                let q = self.bracket[j];
                if !self.ctx.compatible(p, q) {
                    continue;
                }
                self.assigned[j] = true;
                self.pairs.push((p, q));
                let stop = self.run(add(&cost, &self.ctx.pair_cost(p, q)));
                self.pairs.pop();
                self.assigned[j] = false;
                if stop {
                    self.assigned[first] = false;
                    return true;
                }
            }
            self.assigned[first] = false;
        }
        if self.floats_left > 0 && p < self.ctx.n {
            self.assigned[first] = true;
            self.floats_left -= 1;
            self.floaters.push(p);
            let stop = self.run(add(&cost, &self.ctx.float_cost(p, low)));
            self.floaters.pop();
            self.floats_left += 1;
            self.assigned[first] = false;
            if stop {
                return true;
            }
        }
        false
    }

    /// A lower bound on what the unassigned players will still add: each
    /// floater costs at least 1 point of PSD, and players wanting the same
    /// colour beyond the pairs left must disappoint some of them.
    fn cost_to_go(&self) -> Cost {
        let mut c = [0; COST_LEN];
        let (mut white, mut black, mut white_strong, mut black_strong, mut left) = (0, 0, 0, 0, 0);
        for (j, &v) in self.bracket.iter().enumerate() {
            if self.assigned[j] {
                continue;
            }
            left += 1;
            if let Some(p) = self.ctx.prefs.get(v).copied().flatten() {
                let strong = p.strength >= Strength::Strong;
                match p.colour {
                    Colour::White => {
                        white += 1;
                        white_strong += usize::from(strong);
                    }
                    Colour::Black => {
                        black += 1;
                        black_strong += usize::from(strong);
                    }
                }
            }
        }
        let free = (left - self.floats_left.min(left)) / 2 + self.floats_left;
        let excess = |k: usize| k.saturating_sub(free) as u32;
        c[psd(2)] = self.floats_left as u32;
        c[COLOUR] = excess(white).max(excess(black));
        c[STRONG] = excess(white_strong).max(excess(black_strong));
        c
    }

    fn leaf(&mut self, cost: Cost) -> bool {
        if self.floats_left != 0 {
            return false;
        }
        let mut key = self.floaters.clone();
        key.sort_unstable();
        let ctx = self.ctx;
        let rest = self.rest;
        let ok = *self.cache.entry(key).or_insert_with_key(|floaters| {
            let mut set = floaters.clone();
            set.extend_from_slice(rest);
            ctx.completable(&set)
        });
        if !ok {
            return false;
        }
        self.best = Some((
            cost,
            BracketPairing {
                pairs: self.pairs.clone(),
                floaters: self.floaters.clone(),
            },
        ));
        cost <= self.lower_bound
    }
}
