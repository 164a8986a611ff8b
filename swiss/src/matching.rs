//! Maximum-cardinality matching in a general graph (Edmonds' blossom
//! algorithm): the oracle behind the completion criterion.
//!
//! "Can these players all still be paired without breaking an absolute
//! criterion?" is exactly "does their compatibility graph have a perfect
//! matching?". Players are not bipartite (anyone may meet anyone), so odd
//! cycles (blossoms) must be shrunk while searching for augmenting paths.
//! A greedy first pass matches nearly everyone in practice, leaving only a
//! few augmenting searches of O(V + E) each.

use std::collections::VecDeque;

const NONE: usize = usize::MAX;

/// A perfect matching of `n` vertices whose edges are given by `adjacent`,
/// or `None` if there is none. `mate[v]` is v's partner.
pub fn perfect_matching(n: usize, adjacent: impl Fn(usize, usize) -> bool) -> Option<Vec<usize>> {
    if n % 2 == 1 {
        return None;
    }
    let adj: Vec<Vec<usize>> = (0..n)
        .map(|v| (0..n).filter(|&w| w != v && adjacent(v, w)).collect())
        .collect();
    let mut mate = vec![NONE; n];
    // Greedy start: the vertex with fewest options first tends to leave
    // fewer vertices for the augmenting phase.
    let mut by_degree: Vec<usize> = (0..n).collect();
    by_degree.sort_by_key(|&v| (adj[v].len(), v));
    for &v in &by_degree {
        if mate[v] != NONE {
            continue;
        }
        if let Some(&w) = adj[v].iter().find(|&&w| mate[w] == NONE) {
            mate[v] = w;
            mate[w] = v;
        }
    }
    let mut search = Search::new(n);
    for root in 0..n {
        if mate[root] != NONE || short_augment(root, &adj, &mut mate) {
            continue;
        }
        if !search.augment(root, &adj, &mut mate) {
            // A vertex left exposed by one failed search stays exposed in
            // every maximum matching: no perfect matching exists.
            return None;
        }
    }
    Some(mate)
}

/// An augmenting path of one or three edges from the exposed `root`, if
/// any: in the dense graphs of a Swiss round nearly every exposed vertex
/// after the greedy pass has one, found without growing a tree.
fn short_augment(root: usize, adj: &[Vec<usize>], mate: &mut [usize]) -> bool {
    if let Some(&w) = adj[root].iter().find(|&&w| mate[w] == NONE) {
        mate[root] = w;
        mate[w] = root;
        return true;
    }
    for &x in &adj[root] {
        let y = mate[x];
        if let Some(&w) = adj[y].iter().find(|&&w| w != root && mate[w] == NONE) {
            mate[root] = x;
            mate[x] = root;
            mate[y] = w;
            mate[w] = y;
            return true;
        }
    }
    false
}

struct Search {
    parent: Vec<usize>,
    base: Vec<usize>,
    used: Vec<bool>,
    in_blossom: Vec<bool>,
    seen: Vec<bool>,
    queue: VecDeque<usize>,
}

impl Search {
    fn new(n: usize) -> Search {
        Search {
            parent: vec![NONE; n],
            base: (0..n).collect(),
            used: vec![false; n],
            in_blossom: vec![false; n],
            seen: vec![false; n],
            queue: VecDeque::new(),
        }
    }

    /// Grow an alternating tree from `root`; on reaching an exposed vertex,
    /// flip the path and return true.
    fn augment(&mut self, root: usize, adj: &[Vec<usize>], mate: &mut [usize]) -> bool {
        let n = adj.len();
        self.parent.fill(NONE);
        self.used.fill(false);
        for (v, b) in self.base.iter_mut().enumerate() {
            *b = v;
        }
        self.queue.clear();
        self.used[root] = true;
        self.queue.push_back(root);
        while let Some(v) = self.queue.pop_front() {
            for &to in &adj[v] {
                if self.base[v] == self.base[to] || mate[v] == to {
                    continue;
                }
                if to == root || (mate[to] != NONE && self.parent[mate[to]] != NONE) {
                    // An odd cycle: shrink it into its base.
                    let cur_base = self.lca(v, to, mate);
                    self.in_blossom.fill(false);
                    self.mark_path(v, cur_base, to, mate);
                    self.mark_path(to, cur_base, v, mate);
                    for i in 0..n {
                        if self.in_blossom[self.base[i]] {
                            self.base[i] = cur_base;
                            if !self.used[i] {
                                self.used[i] = true;
                                self.queue.push_back(i);
                            }
                        }
                    }
                } else if self.parent[to] == NONE {
                    self.parent[to] = v;
                    if mate[to] == NONE {
                        // Flip the augmenting path ending at `to`.
                        let mut u = to;
                        while u != NONE {
                            let pv = self.parent[u];
                            let next = mate[pv];
                            mate[u] = pv;
                            mate[pv] = u;
                            u = next;
                        }
                        return true;
                    }
                    let m = mate[to];
                    self.used[m] = true;
                    self.queue.push_back(m);
                }
            }
        }
        false
    }

    fn lca(&mut self, mut a: usize, mut b: usize, mate: &[usize]) -> usize {
        let seen = &mut self.seen;
        seen.fill(false);
        loop {
            a = self.base[a];
            seen[a] = true;
            if mate[a] == NONE {
                break;
            }
            a = self.parent[mate[a]];
        }
        loop {
            b = self.base[b];
            if seen[b] {
                return b;
            }
            b = self.parent[mate[b]];
        }
    }

    fn mark_path(&mut self, mut v: usize, b: usize, mut child: usize, mate: &[usize]) {
        while self.base[v] != b {
            self.in_blossom[self.base[v]] = true;
            self.in_blossom[self.base[mate[v]]] = true;
            self.parent[v] = child;
            child = mate[v];
            v = self.parent[mate[v]];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_cycle_plus_tail_is_matched() {
        // Triangle 0-1-2 with 2-3 hanging off: perfect matching 0-1, 2-3.
        let edges = [(0, 1), (1, 2), (0, 2), (2, 3)];
        let adj = |a: usize, b: usize| {
            edges
                .iter()
                .any(|&(x, y)| (x, y) == (a, b) || (y, x) == (a, b))
        };
        let mate = perfect_matching(4, adj).expect("matchable");
        assert_eq!(mate[2], 3);
        assert_eq!(mate[0], 1);
    }

    #[test]
    fn two_triangles_cannot_be_perfectly_matched() {
        let edges = [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)];
        let adj = |a: usize, b: usize| {
            edges
                .iter()
                .any(|&(x, y)| (x, y) == (a, b) || (y, x) == (a, b))
        };
        assert!(perfect_matching(6, adj).is_none());
    }

    #[test]
    fn blossom_needed_for_augmenting_path() {
        // A 5-cycle 0..4 with pendant 5 on 0 and pendant 6... use the
        // classic: path needing to pass through a blossom.
        let edges = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 4),
            (4, 0),
            (0, 5),
            (2, 6),
            (6, 7),
        ];
        let adj = |a: usize, b: usize| {
            edges
                .iter()
                .any(|&(x, y)| (x, y) == (a, b) || (y, x) == (a, b))
        };
        let mate = perfect_matching(8, adj).expect("matchable");
        for (v, &m) in mate.iter().enumerate() {
            assert_eq!(mate[m], v);
            assert!(adj(v, m));
        }
    }
}
