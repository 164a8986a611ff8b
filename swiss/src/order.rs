//! The order in which the Dutch rules generate candidates (C.04.3,
//! "Rules for the sequential generation of the pairings"): which players
//! of a (sub)bracket form S1 and which S2, tried one after the other.
//!
//! Within one S1/S2 split the transpositions of S2 come in lexicographic
//! order of their first |S1| bracket sequence numbers (BSNs); that order is
//! a depth-first walk (S1's first player takes S2's players from the top,
//! then the second player, ...) and lives with the search in
//! [`crate::dutch`]. This module gives the order of the splits:
//!
//! - [`exchanges`]: a homogeneous bracket or remainder swaps groups of
//!   players between the original S1 and S2, fewest swapped first, then the
//!   smallest difference between the BSN sums moved up and moved down, then
//!   the highest differing BSN moved from S1 to S2, then the lowest
//!   differing BSN moved from S2 to S1;
//! - [`mdp_choices`]: a heterogeneous bracket chooses which moved-down
//!   players (MDPs) form S1 (the others wait in "limbo" and float on):
//!   the fewest swapped with limbo first, then lexicographically.

/// Every `k`-subset of `0..n` in lexicographic order, or `None` when there
/// are more than `limit` of them.
pub(crate) fn combinations(n: usize, k: usize, limit: usize) -> Option<Vec<Vec<usize>>> {
    if k > n {
        return Some(Vec::new());
    }
    let mut count: u128 = 1;
    for i in 0..k {
        count = count * (n - i) as u128 / (i + 1) as u128;
        if count > limit as u128 {
            return None;
        }
    }
    let mut out = Vec::with_capacity(count as usize);
    let mut c: Vec<usize> = (0..k).collect();
    loop {
        out.push(c.clone());
        // The rightmost position that can still move right.
        let Some(i) = (0..k).rev().find(|&i| c[i] < n - k + i) else {
            return Some(out);
        };
        c[i] += 1;
        for j in i + 1..k {
            c[j] = c[j - 1] + 1;
        }
    }
}

/// One S1/S2 split of a homogeneous (sub)bracket: the players (indices
/// into the bracket's list, which is in BSN order) of S1 and of S2, each in
/// BSN order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Split {
    pub s1: Vec<usize>,
    pub s2: Vec<usize>,
}

/// The splits of a homogeneous (sub)bracket of `len` players whose original
/// S1 is its first `p` that exchange `k` players each way, in the rules'
/// order (`k == 0`: the original split). `None` when there are more than
/// `limit` of them (the caller then settles for the best candidate found
/// without the order).
pub(crate) fn exchanges(len: usize, p: usize, k: usize, limit: usize) -> Option<Vec<Split>> {
    let q = len - p;
    if k == 0 {
        return Some(vec![Split {
            s1: (0..p).collect(),
            s2: (p..len).collect(),
        }]);
    }
    let ups = combinations(p, k, limit)?; // leave S1 (BSNs 0..p)
    let downs = combinations(q, k, limit)?; // leave S2 (BSNs p..len)
    if ups.len().saturating_mul(downs.len()) > limit {
        return None;
    }
    struct Swap {
        diff: usize,
        /// Moved from S1 to S2, highest first.
        down: Vec<usize>,
        /// Moved from S2 to S1, lowest first.
        up: Vec<usize>,
    }
    let mut swaps = Vec::with_capacity(ups.len() * downs.len());
    for a in &ups {
        for b in &downs {
            let up: Vec<usize> = b.iter().map(|&j| p + j).collect();
            let mut down = a.clone();
            down.reverse();
            let diff = up.iter().sum::<usize>() - a.iter().sum::<usize>();
            swaps.push(Swap { diff, down, up });
        }
    }
    swaps.sort_by(|x, y| {
        x.diff
            .cmp(&y.diff)
            .then_with(|| y.down.cmp(&x.down))
            .then_with(|| x.up.cmp(&y.up))
    });
    Some(
        swaps
            .into_iter()
            .map(|s| {
                let mut s1: Vec<usize> = (0..p).filter(|i| !s.down.contains(i)).collect();
                s1.extend_from_slice(&s.up);
                s1.sort_unstable();
                let mut s2: Vec<usize> = (p..len).filter(|i| !s.up.contains(i)).collect();
                s2.extend_from_slice(&s.down);
                s2.sort_unstable();
                Split { s1, s2 }
            })
            .collect(),
    )
}

/// The choices of `m1` MDPs out of `m0` (indices `0..m0`, in BSN order) to
/// form S1 of a heterogeneous bracket, in order: the `m1` highest first,
/// then by the number of them swapped with limbo, then lexicographically.
pub(crate) fn mdp_choices(m0: usize, m1: usize, limit: usize) -> Option<Vec<Vec<usize>>> {
    let mut all = combinations(m0, m1, limit)?;
    all.sort_by_key(|c| (c.iter().filter(|&&i| i >= m1).count(), c.clone()));
    Some(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_in_lexicographic_order() {
        let c = combinations(4, 2, 100).unwrap();
        assert_eq!(
            c,
            vec![
                vec![0, 1],
                vec![0, 2],
                vec![0, 3],
                vec![1, 2],
                vec![1, 3],
                vec![2, 3]
            ]
        );
        assert!(combinations(40, 20, 1000).is_none());
    }

    #[test]
    fn single_exchanges_by_bsn_sum_difference_then_highest_s1_player() {
        // Eight players, S1 = 1-4, S2 = 5-8 (BSNs 0-7 here).
        let splits: Vec<Split> = (0..=4)
            .flat_map(|k| exchanges(8, 4, k, 10_000).unwrap())
            .collect();
        assert_eq!(splits[0].s1, vec![0, 1, 2, 3]);
        // 4<->5 (difference 1), then 4<->6 (2: the higher S1 player moves
        // down) before 3<->5 (2), ...
        assert_eq!(splits[1].s1, vec![0, 1, 2, 4]);
        assert_eq!(splits[2].s1, vec![0, 1, 2, 5]);
        assert_eq!(splits[2].s2, vec![3, 4, 6, 7]);
        assert_eq!(splits[3].s1, vec![0, 1, 3, 4]);
        // 16 single exchanges, 36 double, 16 triple, 1 quadruple.
        assert_eq!(splits.len(), 1 + 16 + 36 + 16 + 1);
        // The first double exchange: 3,4 <-> 5,6.
        assert_eq!(splits[17].s1, vec![0, 1, 4, 5]);
    }

    #[test]
    fn mdp_choices_keep_the_highest_first() {
        let c = mdp_choices(4, 2, 100).unwrap();
        assert_eq!(c[0], vec![0, 1]);
        assert_eq!(c.last().unwrap(), &vec![2, 3]);
    }
}
