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

/// Search nodes per bracket and number of downfloaters (each of the two
/// passes) before the search settles (see the module comment). Generous:
/// brackets of random tournaments up to 500 players stay far below it.
const NODE_BUDGET: usize = 400_000;
/// The largest bracket whose C8/C9 floor with one floater is computed
/// exactly (one look at the next bracket per member).
const EXACT_FLOOR_SIZE: usize = 24;
/// The budget of the first attempt, a candidate as good as the lower bound.
const QUICK_BUDGET: usize = 20_000;
/// The most S1/S2 splits (exchanges, MDP choices) of one size generated
/// for the rules' order.
const SPLIT_LIMIT: usize = 20_000;

/// The pairing score difference (C7) is a list of score differences
/// sorted from the highest, compared lexicographically. With the number of
/// pairs and floaters fixed, that is a histogram compared from the largest
/// difference down: `PSD_BINS` counters, the first for differences of
/// `PSD_BINS` half points or more, the last for half a point (a difference
/// of 0 is the rest of the list, fixed by the others).
const PSD_BINS: usize = 64;

/// The PSD counter of a score difference in half points (none for 0).
fn psd(diff: u32) -> Option<usize> {
    (diff > 0).then(|| PSD_BINS - (diff as usize).min(PSD_BINS))
}

// Indices into `Cost`, in the order of the 2025/2026 quality criteria
// (C5, the PAB's score, is settled before the brackets; C6, the number of
// pairs, by the number of downfloaters tried).
const PSD: usize = 0; // C7: the bracket's PSD (PSD_BINS counters)
const NEXT_FLOATS: usize = PSD_BINS; // C8: downfloaters of the next bracket
const NEXT_PSD: usize = PSD_BINS + 1; // C8: the next bracket's PSD (PSD_BINS counters)
const BYE_UNPLAYED: usize = 2 * PSD_BINS + 1; // C9: the PAB receiver's unplayed rounds
const TOP_CD: usize = 2 * PSD_BINS + 2; // C10: topscorers beyond colour difference ±2
const TOP_ROW: usize = TOP_CD + 1; // C11: topscorers with three same colours in a row
const COLOUR: usize = TOP_CD + 2; // C12: colour preferences not granted
const STRONG: usize = TOP_CD + 3; // C13: strong colour preferences not granted
const DOWN1: usize = TOP_CD + 4; // C14: downfloat repeated from last round
const UP1: usize = TOP_CD + 5; // C15: upfloat repeated from last round
const DOWN2: usize = TOP_CD + 6; // C16: downfloat repeated from two rounds before
const UP2: usize = TOP_CD + 7; // C17: upfloat repeated from two rounds before
const DOWN1_SD: usize = TOP_CD + 8; // C18-C21: the score differences of those
const UP1_SD: usize = TOP_CD + 9;
const DOWN2_SD: usize = TOP_CD + 10;
const UP2_SD: usize = TOP_CD + 11;
/// Number of quality-criterion components in a candidate's cost.
const COST_LEN: usize = UP2_SD + 1;
type Cost = [u32; COST_LEN];

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
            // C5: the PAB goes to the lowest score that still lets everyone
            // else be paired; C9 (fewest unplayed rounds among those) is a
            // quality criterion of the bracket that hands the bye out.
            let mut scores: Vec<Score> = self
                .players
                .iter()
                .filter(|p| !p.bye_barred)
                .map(|p| p.score)
                .collect();
            scores.sort();
            scores.dedup();
            let mut chosen = false;
            for s in scores {
                self.set_bye_candidates(|p| p.score == s);
                if self.completable(&everyone) {
                    chosen = true;
                    break;
                }
            }
            if !chosen {
                return Err(PairingError::NoLegalPairing);
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
        let real_groups = groups.len();
        if self.has_bye {
            groups.push(vec![self.n]);
        }

        let mut pairs: Vec<(usize, usize)> = Vec::new();
        let mut mdps: Vec<usize> = Vec::new();
        for (g, residents) in groups.iter().enumerate() {
            let mut members = std::mem::take(&mut mdps);
            let n_mdp = members.len();
            members.extend(residents.iter().copied());
            let low = members
                .iter()
                .rev()
                .find(|&&v| v < self.n)
                .map_or(0, |&v| self.players[v].score.0);
            // C8 looks at the next bracket when it is a real score group.
            let next = (g + 1 < real_groups).then(|| {
                (
                    groups[g + 1].clone(),
                    groups[g + 2..].iter().flatten().copied().collect(),
                )
            });
            let bracket = Bracket {
                members,
                n_mdp,
                low,
                rest: groups[g + 1..].iter().flatten().copied().collect(),
                next,
                gives_bye: self.has_bye && g + 1 == real_groups,
                psd_only: false,
            };
            let (_, found) = self.pair_bracket(&bracket)?;
            pairs.extend(found.pairs);
            mdps = found.floaters;
        }
        debug_assert!(mdps.is_empty());
        Ok(self.finish(pairs))
    }

    /// Pair one bracket: its cost, pairs and downfloaters.
    fn pair_bracket(&self, br: &Bracket) -> Result<(Cost, BracketPairing), PairingError> {
        let len = br.members.len();
        let (min_floats, max_floats) = if br.rest.is_empty() {
            (0, 0)
        } else {
            (len % 2, len)
        };
        let mut leaves = LeafCache::default();
        let to_vertices = |pairs: &[(usize, usize)], floaters: &[usize]| BracketPairing {
            pairs: pairs
                .iter()
                .map(|&(a, b)| (br.members[a], br.members[b]))
                .collect(),
            floaters: floaters.iter().map(|&a| br.members[a]).collect(),
        };
        for floats in (min_floats..=max_floats).step_by(2) {
            // Most brackets have a candidate as good as the lower bound: the
            // first such in the rules' order is the answer.
            let floor = self.leaf_floor(br, floats, &mut leaves);
            let lower_bound = self.lower_bound(br, floats, &floor);
            let pairs = (len - floats) / 2;
            let m1 = br.n_mdp.min(len - br.n_mdp).min(pairs);
            let mut ordered = Ordered {
                ctx: self,
                br,
                target: lower_bound,
                floor,
                floats,
                nodes: 0,
                budget: QUICK_BUDGET,
                leaves: &mut leaves,
                used: vec![false; len],
                pairs: Vec::new(),
                floaters: Vec::new(),
            };
            if ordered.find(m1).is_some() {
                return Ok((lower_bound, to_vertices(&ordered.pairs, &ordered.floaters)));
            }
            let mut opt = Optimizer {
                ctx: self,
                br,
                assigned: vec![false; len],
                floats_left: floats,
                nodes: 0,
                lower_bound,
                floor,
                best: None,
                leaves: &mut leaves,
                pairs: Vec::new(),
                floaters: Vec::new(),
            };
            opt.run([0; COST_LEN]);
            let Some((cost, pairs, floaters)) = opt.best else {
                continue;
            };
            if br.psd_only {
                return Ok((cost, to_vertices(&pairs, &floaters)));
            }
            // The best cost is known; the rules want the first candidate
            // of their order that reaches it.
            let m1 = pairs.iter().filter(|&&(a, _)| a < br.n_mdp).count();
            let mut ordered = Ordered {
                ctx: self,
                br,
                target: cost,
                floor,
                floats,
                nodes: 0,
                budget: NODE_BUDGET,
                leaves: &mut leaves,
                used: vec![false; len],
                pairs: Vec::new(),
                floaters: Vec::new(),
            };
            let found = match ordered.find(m1) {
                Some(()) => to_vertices(&ordered.pairs, &ordered.floaters),
                None => to_vertices(&pairs, &floaters),
            };
            return Ok((cost, found));
        }
        // Only reached when the search budget ran out before any candidate
        // was complete: take a legal pairing of the bracket and everyone
        // below, keeping the pairs inside the bracket.
        let mut all = br.members.clone();
        all.extend_from_slice(&br.rest);
        let mate = perfect_matching(all.len(), |a, b| self.compatible(all[a], all[b]))
            .ok_or(PairingError::NoLegalPairing)?;
        let mut pairs = Vec::new();
        let mut floaters = Vec::new();
        for a in 0..len {
            if mate[a] >= len {
                floaters.push(all[a]);
            } else if a < mate[a] {
                pairs.push((all[a], all[mate[a]]));
            }
        }
        Ok(([u32::MAX; COST_LEN], BracketPairing { pairs, floaters }))
    }

    /// What a complete candidate's downfloaters add to its cost (C8, C9),
    /// or `None` if they and everyone below cannot be paired (C4).
    fn leaf_extra(&self, br: &Bracket, floaters: &[usize]) -> Option<Cost> {
        let mut set = floaters.to_vec();
        set.extend_from_slice(&br.rest);
        if !self.completable(&set) {
            return None;
        }
        let mut c = [0; COST_LEN];
        if br.psd_only {
            return Some(c);
        }
        if let Some((next, after)) = &br.next {
            let mut members = floaters.to_vec();
            members.sort_unstable();
            members.extend_from_slice(next);
            let nested = Bracket {
                members,
                n_mdp: floaters.len(),
                low: self.players[next[0]].score.0,
                rest: after.clone(),
                next: None,
                gives_bye: false,
                psd_only: true,
            };
            let (cost, found) = self.pair_bracket(&nested).ok()?;
            c[NEXT_FLOATS] = found.floaters.len() as u32;
            c[NEXT_PSD..NEXT_PSD + PSD_BINS].copy_from_slice(&cost[PSD..PSD + PSD_BINS]);
        }
        if br.gives_bye {
            if let [v] = floaters {
                c[BYE_UNPLAYED] = self.players[*v].unplayed;
            }
        }
        Some(c)
    }

    /// A lower bound on the cost of any candidate with `floats`
    /// downfloaters: the search stops at a candidate that reaches it.
    fn lower_bound(&self, br: &Bracket, floats: usize, floor: &Cost) -> Cost {
        add(&self.cost_to_go(br, 0..br.members.len(), floats), floor)
    }

    /// A lower bound on what any set of `floats` downfloaters adds at the
    /// leaf (C8, C9): added to every partial candidate's bound, since the
    /// partial cost does not hold these components yet.
    fn leaf_floor(&self, br: &Bracket, floats: usize, leaves: &mut LeafCache) -> Cost {
        if br.psd_only {
            return [0; COST_LEN];
        }
        // With no floater, or one in a small bracket, the floor is exact:
        // the least over the possible sets (each computed once, and kept
        // for the search).
        if floats == 0 {
            return leaves.get(self, br, &[]).unwrap_or([0; COST_LEN]);
        }
        if floats == 1 && br.members.len() <= EXACT_FLOOR_SIZE {
            return (0..br.members.len())
                .filter(|&j| br.members[j] < self.n)
                .filter_map(|j| leaves.get(self, br, &[j]))
                .min()
                .unwrap_or([0; COST_LEN]);
        }
        let mut lb = [0; COST_LEN];
        if let Some((next, after)) = &br.next {
            let next_score = self.players[next[0]].score.0;
            if !after.is_empty() {
                let parity = (floats + next.len()) % 2;
                lb[NEXT_FLOATS] = parity as u32;
                if let Some(i) = psd(2) {
                    lb[NEXT_PSD + i] += parity as u32;
                }
            }
            if let Some(i) = psd(br.low.saturating_sub(next_score)) {
                lb[NEXT_PSD + i] += floats as u32;
            }
        }
        if br.gives_bye {
            lb[BYE_UNPLAYED] = br
                .members
                .iter()
                .filter(|&&v| v < self.n && self.compatible(v, self.n))
                .map(|&v| self.players[v].unplayed)
                .min()
                .unwrap_or(0);
        }
        lb
    }

    /// A lower bound on what the bracket positions `left` add to a
    /// candidate when `floats_left` of them float: each MDP at least its
    /// drop to the residents, each floater at least one point of PSD, and
    /// players wanting the same colour beyond the pairs left must
    /// disappoint some of them.
    fn cost_to_go(
        &self,
        br: &Bracket,
        left: impl Iterator<Item = usize>,
        floats_left: usize,
    ) -> Cost {
        let mut c = [0; COST_LEN];
        let (mut white, mut black, mut white_strong, mut black_strong) = (0, 0, 0, 0);
        let mut count = 0;
        for j in left {
            count += 1;
            let v = br.members[j];
            if j < br.n_mdp {
                if let Some(i) = psd(self.players[v].score.0 - br.low) {
                    c[PSD + i] += 1;
                }
            }
            if let Some(p) = self.prefs.get(v).copied().flatten() {
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
        // Every floater at least a point (with the MDPs' drops above still
        // a bound: a floating MDP's difference exceeds them all).
        if let Some(i) = psd(2) {
            c[PSD + i] += floats_left as u32;
        }
        if br.psd_only {
            return c;
        }
        let free = (count - floats_left.min(count)) / 2 + floats_left;
        let excess = |k: usize| k.saturating_sub(free) as u32;
        c[COLOUR] = excess(white).max(excess(black));
        c[STRONG] = excess(white_strong).max(excess(black_strong));
        c
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
        if let Some(i) = psd(sa.abs_diff(sb)) {
            c[PSD + i] += 1;
        }
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
        // A floater's score difference, as in the PSD: to one point below
        // the bracket's lowest score.
        let diff = h.score.0 + 2 - low.min(h.score.0);
        if let Some(i) = psd(diff) {
            c[PSD + i] += 1;
        }
        if h.float_last == Float::Down {
            c[DOWN1] += 1;
            c[DOWN1_SD] += diff;
        }
        if h.float_before_last == Float::Down {
            c[DOWN2] += 1;
            c[DOWN2_SD] += diff;
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

/// A bracket to pair: its members in rank order (MDPs first), and what
/// its candidates are judged against.
struct Bracket {
    members: Vec<usize>,
    n_mdp: usize,
    /// The lowest score among the members (half points).
    low: u32,
    /// Every vertex below the bracket (C4 completion).
    rest: Vec<usize>,
    /// The next score group and everything below it, when C8 applies.
    next: Option<(Vec<usize>, Vec<usize>)>,
    /// The bracket's downfloater takes the PAB (C9).
    gives_bye: bool,
    /// Only C6 and C7 count (the next bracket as C8 sees it).
    psd_only: bool,
}

impl Context<'_> {
    fn pair_cost_in(&self, br: &Bracket, a: usize, b: usize) -> Cost {
        let c = self.pair_cost(br.members[a], br.members[b]);
        mask(br, c)
    }

    fn float_cost_in(&self, br: &Bracket, a: usize) -> Cost {
        let c = self.float_cost(br.members[a], br.low);
        mask(br, c)
    }
}

fn mask(br: &Bracket, mut c: Cost) -> Cost {
    if br.psd_only {
        c[PSD_BINS..].fill(0);
    }
    c
}

/// What a set of downfloaters (sorted vertices) adds to a candidate: C4's
/// verdict and C8/C9's cost, computed once per set.
#[derive(Default)]
struct LeafCache {
    extra: HashMap<Vec<usize>, Option<Cost>>,
}

impl LeafCache {
    fn get(&mut self, ctx: &Context<'_>, br: &Bracket, floaters: &[usize]) -> Option<Cost> {
        let mut key: Vec<usize> = floaters.iter().map(|&j| br.members[j]).collect();
        key.sort_unstable();
        if let Some(c) = self.extra.get(&key) {
            return *c;
        }
        let c = ctx.leaf_extra(br, &key);
        self.extra.insert(key, c);
        c
    }
}

/// A complete candidate: its cost, pairs and floaters (positions).
type Best = (Cost, Pairs, Vec<usize>);
type Pairs = Vec<(usize, usize)>;

/// The first pass: the best cost of any candidate with a fixed number of
/// downfloaters, by depth-first branch and bound (positions in the
/// bracket throughout).
struct Optimizer<'s, 'a> {
    ctx: &'s Context<'a>,
    br: &'s Bracket,
    assigned: Vec<bool>,
    floats_left: usize,
    nodes: usize,
    lower_bound: Cost,
    /// The leaf's least C8/C9 cost.
    floor: Cost,
    /// The best complete candidate so far: cost, pairs, floaters.
    best: Option<Best>,
    leaves: &'s mut LeafCache,
    pairs: Vec<(usize, usize)>,
    floaters: Vec<usize>,
}

impl Optimizer<'_, '_> {
    /// Returns true when the search must stop (optimal or out of budget).
    fn run(&mut self, cost: Cost) -> bool {
        self.nodes += 1;
        if self.nodes > NODE_BUDGET {
            return true;
        }
        let Some(first) = self.assigned.iter().position(|a| !a) else {
            return self.leaf(cost);
        };
        if let Some((best, _, _)) = &self.best {
            let left = (0..self.assigned.len()).filter(|&j| !self.assigned[j]);
            let bound = add(&cost, &self.ctx.cost_to_go(self.br, left, self.floats_left));
            if add(&bound, &self.floor) >= *best {
                return false;
            }
        }
        let len = self.assigned.len();
        let unassigned = self.assigned.iter().filter(|a| !**a).count();
        let n_mdp = self.br.n_mdp;
        let candidates: Vec<usize> = if first < n_mdp {
            // An MDP (S1 of a heterogeneous bracket) meets a resident.
            (n_mdp..len).filter(|&j| !self.assigned[j]).collect()
        } else {
            // The remainder: S2 from the top, then the lower S1 players.
            let r: Vec<usize> = (first..len).filter(|&j| !self.assigned[j]).collect();
            let half = ((r.len() - self.floats_left.min(r.len())) / 2).clamp(1, r.len());
            let mut order: Vec<usize> = r[half..].to_vec();
            order.extend(r[1..half].iter().rev());
            order
        };
        let p = self.br.members[first];
        if unassigned >= 2 + self.floats_left {
            self.assigned[first] = true;
            for j in candidates {
                if !self.ctx.compatible(p, self.br.members[j]) {
                    continue;
                }
                self.assigned[j] = true;
                self.pairs.push((first, j));
                let c = add(&cost, &self.ctx.pair_cost_in(self.br, first, j));
                let stop = self.run(c);
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
            self.floaters.push(first);
            let c = add(&cost, &self.ctx.float_cost_in(self.br, first));
            let stop = self.run(c);
            self.floaters.pop();
            self.floats_left += 1;
            self.assigned[first] = false;
            if stop {
                return true;
            }
        }
        false
    }

    fn leaf(&mut self, cost: Cost) -> bool {
        if self.floats_left != 0 {
            return false;
        }
        let Some(extra) = self.leaves.get(self.ctx, self.br, &self.floaters) else {
            return false;
        };
        let cost = add(&cost, &extra);
        if self.best.as_ref().is_some_and(|(best, _, _)| cost >= *best) {
            return false;
        }
        self.best = Some((cost, self.pairs.clone(), self.floaters.clone()));
        cost <= self.lower_bound
    }
}

/// The second pass: the first candidate in the rules' order whose cost is
/// the best one (positions in the bracket throughout).
struct Ordered<'s, 'a> {
    ctx: &'s Context<'a>,
    br: &'s Bracket,
    target: Cost,
    /// The leaf's least C8/C9 cost.
    floor: Cost,
    floats: usize,
    nodes: usize,
    budget: usize,
    leaves: &'s mut LeafCache,
    used: Vec<bool>,
    pairs: Vec<(usize, usize)>,
    floaters: Vec<usize>,
}

/// The walk's verdict on a branch.
#[derive(PartialEq, Eq)]
enum Walk {
    Found,
    Next,
    /// Out of budget or splits: give up the order.
    Abandon,
}

impl Ordered<'_, '_> {
    /// Heterogeneous brackets: each choice of `m1` MDPs for S1 (the others
    /// float), each transposition of the residents against them, then the
    /// remainder as a homogeneous bracket. `None` when the order had to be
    /// abandoned (the caller keeps the first pass's candidate).
    fn find(&mut self, m1: usize) -> Option<()> {
        let len = self.br.members.len();
        let n_mdp = self.br.n_mdp;
        let remainder_pairs = ((len - self.floats) / 2).checked_sub(m1)?;
        // The MDPs left out float, the residents left over pair or float:
        // the counts must fit (the first attempt guesses `m1`).
        let residents_left = (len - n_mdp).checked_sub(m1)?;
        if n_mdp - m1.min(n_mdp) > self.floats || 2 * remainder_pairs > residents_left {
            return None;
        }
        for s1 in crate::order::mdp_choices(n_mdp, m1, SPLIT_LIMIT)? {
            let mut cost = [0; COST_LEN];
            for j in (0..n_mdp).filter(|j| !s1.contains(j)) {
                self.used[j] = true;
                self.floaters.push(j);
                cost = add(&cost, &self.ctx.float_cost_in(self.br, j));
            }
            match self.mdp_step(&s1, 0, cost, remainder_pairs) {
                Walk::Found => return Some(()),
                Walk::Abandon => return None,
                Walk::Next => {}
            }
            for j in self.floaters.drain(..) {
                self.used[j] = false;
            }
        }
        None
    }

    fn pruned(&self, cost: &Cost) -> bool {
        let left = (0..self.used.len()).filter(|&j| !self.used[j]);
        let floats_left = self.floats - self.floaters.len();
        let bound = add(cost, &self.ctx.cost_to_go(self.br, left, floats_left));
        add(&bound, &self.floor) > self.target
    }

    /// MDP `s1[i]` takes the residents from the top (the transpositions of
    /// S2 against the MDPs).
    fn mdp_step(&mut self, s1: &[usize], i: usize, cost: Cost, remainder_pairs: usize) -> Walk {
        self.nodes += 1;
        if self.nodes > self.budget {
            return Walk::Abandon;
        }
        if self.pruned(&cost) {
            return Walk::Next;
        }
        let Some(&m) = s1.get(i) else {
            let rest: Vec<usize> = (self.br.n_mdp..self.used.len())
                .filter(|&j| !self.used[j])
                .collect();
            return self.homogeneous(&rest, remainder_pairs, cost);
        };
        let residents: Vec<usize> = (self.br.n_mdp..self.used.len()).collect();
        self.each_partner(m, &residents, cost, &mut |w, c| {
            w.mdp_step(s1, i + 1, c, remainder_pairs)
        })
    }

    /// `a` meets each unused, compatible player of `partners` in turn,
    /// the walk going on with `next` after each.
    fn each_partner(
        &mut self,
        a: usize,
        partners: &[usize],
        cost: Cost,
        next: &mut dyn FnMut(&mut Self, Cost) -> Walk,
    ) -> Walk {
        self.used[a] = true;
        for &b in partners {
            if self.used[b] || !self.ctx.compatible(self.br.members[a], self.br.members[b]) {
                continue;
            }
            let (hi, lo) = (a.min(b), a.max(b));
            self.used[b] = true;
            self.pairs.push((hi, lo));
            let walk = next(self, add(&cost, &self.ctx.pair_cost_in(self.br, hi, lo)));
            if walk == Walk::Found {
                return walk;
            }
            self.pairs.pop();
            self.used[b] = false;
            if walk == Walk::Abandon {
                self.used[a] = false;
                return walk;
            }
        }
        self.used[a] = false;
        Walk::Next
    }

    /// A homogeneous bracket or remainder (positions `rest`, in BSN
    /// order) with `p` pairs: each split in the rules' order, each
    /// transposition of its S2.
    fn homogeneous(&mut self, rest: &[usize], p: usize, cost: Cost) -> Walk {
        for k in 0..=p.min(rest.len() - p) {
            let Some(splits) = crate::order::exchanges(rest.len(), p, k, SPLIT_LIMIT) else {
                return Walk::Abandon;
            };
            for split in splits {
                let s1: Vec<usize> = split.s1.iter().map(|&k| rest[k]).collect();
                let s2: Vec<usize> = split.s2.iter().map(|&k| rest[k]).collect();
                match self.transpose(&s1, &s2, 0, cost) {
                    Walk::Next => {}
                    walk => return walk,
                }
            }
        }
        Walk::Next
    }

    fn transpose(&mut self, s1: &[usize], s2: &[usize], i: usize, cost: Cost) -> Walk {
        self.nodes += 1;
        if self.nodes > self.budget {
            return Walk::Abandon;
        }
        let Some(&a) = s1.get(i) else {
            return self.leaf(s2, cost);
        };
        if self.pruned(&cost) {
            return Walk::Next;
        }
        self.each_partner(a, s2, cost, &mut |w, c| w.transpose(s1, s2, i + 1, c))
    }

    /// Every S1 player paired: S2's unpaired players float.
    fn leaf(&mut self, s2: &[usize], mut cost: Cost) -> Walk {
        let before = self.floaters.len();
        for &b in s2 {
            if !self.used[b] {
                self.floaters.push(b);
                cost = add(&cost, &self.ctx.float_cost_in(self.br, b));
            }
        }
        if cost <= self.target {
            if let Some(extra) = self.leaves.get(self.ctx, self.br, &self.floaters) {
                if add(&cost, &extra) == self.target {
                    return Walk::Found;
                }
            }
        }
        self.floaters.truncate(before);
        Walk::Next
    }
}
