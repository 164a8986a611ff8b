//! The transposition table: a fixed-size hash map from position hash to what
//! an earlier search learned about that position (best move, score and
//! whether the score is exact or only a bound, and how deep it looked).
//!
//! Layout: buckets of four 16-byte entries, one 64-byte cache line each. A
//! position may live in any slot of its bucket. Replacement keeps what is
//! most expensive to recompute: a new entry evicts the slot whose entry is
//! shallowest, counting entries from earlier searches (older generations)
//! as shallower still, so the table does not fill up with stale deep results.
//!
//! The threads of one search (Lazy SMP) share the table without locks: each
//! slot is two atomic words, the key stored XORed with the data, so a slot
//! torn by two simultaneous writes reads as a miss (see [`Slot`]).
//!
//! Mate scores are stored relative to the node, not the root ("mate in 3
//! from here"), and converted back on probing, because the same position can
//! be reached at different distances from the root.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::moves::Move;
use crate::search::{MATE_BOUND, MAX_PLY};

/// What kind of bound a stored score is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bound {
    /// The search failed low: the true score is at most this.
    Upper,
    /// The search failed high (a cut-off): the true score is at least this.
    Lower,
    /// The score is exact (a PV node).
    Exact,
}

impl Bound {
    fn bits(self) -> u8 {
        match self {
            Bound::Upper => 1,
            Bound::Lower => 2,
            Bound::Exact => 3,
        }
    }

    fn from_bits(bits: u8) -> Bound {
        match bits & 3 {
            1 => Bound::Upper,
            2 => Bound::Lower,
            _ => Bound::Exact,
        }
    }
}

/// One slot as the search sees it, unpacked.
#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    mv: u16,
    score: i16,
    eval: i16,
    depth: u8,
    /// Generation in the high six bits, bound in the low two; 0 = empty.
    gen_bound: u8,
}

impl Entry {
    fn data(self) -> u64 {
        self.mv as u64
            | (self.score as u16 as u64) << 16
            | (self.eval as u16 as u64) << 32
            | (self.depth as u64) << 48
            | (self.gen_bound as u64) << 56
    }

    fn from_data(key: u64, data: u64) -> Entry {
        Entry {
            key,
            mv: data as u16,
            score: (data >> 16) as u16 as i16,
            eval: (data >> 32) as u16 as i16,
            depth: (data >> 48) as u8,
            gen_bound: (data >> 56) as u8,
        }
    }
}

/// One slot as it is stored: the entry's data in one word and its key
/// XORed with that data in the other.
///
/// With several search threads (Lazy SMP) the table is shared without
/// locks, so two threads may write one slot at the same time and a reader
/// may see the key word of one write with the data word of another. Each
/// word is an atomic, read and written whole (no data race, hence no
/// undefined behaviour; relaxed order is plain loads and stores on x86-64
/// and AArch64), and a torn pair fails the key check: `key_xor_data ^
/// data` gives back the key only if both words come from the same write.
/// A torn slot then reads as a miss, never as another position's entry
/// (the "lockless hashing" of Hyatt and Mann, as in Crafty and Stockfish's
/// early SMP).
#[derive(Default)]
struct Slot {
    key_xor_data: AtomicU64,
    data: AtomicU64,
}

impl Slot {
    #[inline]
    fn load(&self) -> Entry {
        let data = self.data.load(Ordering::Relaxed);
        let key = self.key_xor_data.load(Ordering::Relaxed) ^ data;
        Entry::from_data(key, data)
    }

    #[inline]
    fn save(&self, entry: Entry) {
        let data = entry.data();
        self.key_xor_data.store(entry.key ^ data, Ordering::Relaxed);
        self.data.store(data, Ordering::Relaxed);
    }
}

#[derive(Default)]
#[repr(C, align(64))]
struct Bucket([Slot; 4]);

/// A probe hit, with its score already converted to root-relative.
#[derive(Clone, Copy, Debug)]
pub struct TtHit {
    pub mv: Move,
    pub score: i32,
    pub eval: i32,
    pub depth: i32,
    pub bound: Bound,
}

impl TtHit {
    /// Does this entry settle the node by itself, without a search, for the
    /// window `alpha..beta`? An exact score always does; a lower bound only
    /// if it already reaches beta (the node fails high whatever else is
    /// true), an upper bound only if it stays at or below alpha. The caller
    /// checks that the entry was searched deep enough.
    pub fn cuts_off(&self, alpha: i32, beta: i32) -> bool {
        match self.bound {
            Bound::Exact => true,
            Bound::Lower => self.score >= beta,
            Bound::Upper => self.score <= alpha,
        }
    }

    /// Is the stored score a better guess of the true score than `value`
    /// (a static evaluation)? It is when exact, and when its bound says
    /// the true score lies beyond `value` on the score's side.
    pub fn refines(&self, value: i32) -> bool {
        match self.bound {
            Bound::Exact => true,
            Bound::Lower => self.score > value,
            Bound::Upper => self.score < value,
        }
    }
}

/// The table. Probes and stores take `&self`, so the threads of one search
/// share it (see [`Slot`]); resizing, clearing and aging take `&mut self`,
/// between searches.
pub struct TranspositionTable {
    buckets: Vec<Bucket>,
    generation: u8,
}

impl TranspositionTable {
    /// A table of about `megabytes` MiB (at least one bucket).
    pub fn new(megabytes: usize) -> TranspositionTable {
        let count = (megabytes.max(1) * 1024 * 1024 / std::mem::size_of::<Bucket>()).max(1);
        TranspositionTable {
            buckets: (0..count).map(|_| Bucket::default()).collect(),
            generation: 0,
        }
    }

    /// Forgets everything (UCI `ucinewgame`).
    pub fn clear(&mut self) {
        self.buckets.fill_with(Bucket::default);
        self.generation = 0;
    }

    /// Marks the start of a new search, so that older entries age.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) & 63;
    }

    #[inline]
    fn bucket(&self, key: u64) -> &Bucket {
        // Multiply-shift maps the hash onto the table without a division
        // and uses the high bits, which are as random as the low ones.
        &self.buckets[((key as u128 * self.buckets.len() as u128) >> 64) as usize]
    }

    /// Asks the processor to bring `key`'s bucket into the cache, so that
    /// the probe a little later does not wait for it: a probe usually
    /// misses the core's own caches (a 16 MB table is eight times the L2 of
    /// the machines measured), and the search calls this as soon as it
    /// knows a child's hash. Only a hint: it reads nothing and changes
    /// nothing.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let bucket: *const Bucket = self.bucket(key);
            // SAFETY: a prefetch never faults and has no effect on memory;
            // SSE, which it needs, is in every x86-64 processor.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(bucket.cast::<i8>()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    pub fn probe(&self, key: u64, ply: usize) -> Option<TtHit> {
        self.bucket(key)
            .0
            .iter()
            .map(Slot::load)
            .find(|e| e.key == key && e.gen_bound != 0)
            .map(|e| TtHit {
                mv: Move::from_bits(e.mv),
                score: score_from_tt(e.score as i32, ply),
                eval: e.eval as i32,
                depth: e.depth as i32,
                bound: Bound::from_bits(e.gen_bound),
            })
    }

    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &self,
        key: u64,
        ply: usize,
        mv: Move,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
    ) {
        let generation = self.generation;
        let bucket = self.bucket(key);
        let entries: [Entry; 4] = std::array::from_fn(|i| bucket.0[i].load());
        let age = |e: &Entry| ((generation as i32 - (e.gen_bound >> 2) as i32) & 63) * 8;
        let slot = match entries.iter().position(|e| e.key == key) {
            Some(i) => i,
            None => (0..4)
                .min_by_key(|&i| {
                    let e = &entries[i];
                    if e.gen_bound == 0 {
                        i32::MIN
                    } else {
                        e.depth as i32 - age(e)
                    }
                })
                .unwrap_or(0),
        };
        let entry = entries[slot];
        // Keep an older, deeper result for the same position unless the new
        // one is exact or nearly as deep; but never lose a known best move.
        if entry.key == key
            && entry.gen_bound != 0
            && bound != Bound::Exact
            && depth + 2 < entry.depth as i32
            && (entry.gen_bound >> 2) == generation
        {
            return;
        }
        let keep_move = entry.key == key && mv.is_none();
        bucket.0[slot].save(Entry {
            key,
            mv: if keep_move { entry.mv } else { mv.to_bits() },
            score: score_to_tt(score, ply) as i16,
            eval: eval.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
            depth: depth.clamp(0, 255) as u8,
            gen_bound: generation << 2 | bound.bits(),
        });
    }

    /// Permille of sampled slots used by the current search (UCI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let sample = self.buckets.len().min(250);
        let used: usize = self.buckets[..sample]
            .iter()
            .map(|b| {
                b.0.iter()
                    .map(Slot::load)
                    .filter(|e| e.gen_bound != 0 && e.gen_bound >> 2 == self.generation)
                    .count()
            })
            .sum();
        (used * 1000 / (sample * 4).max(1)) as u32
    }
}

/// Root-relative mate scores become node-relative for storing.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

const _: () = assert!(MAX_PLY < 256);
const _: () = assert!(std::mem::size_of::<Bucket>() == 64);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::MATE;
    use crate::types::Square;

    #[test]
    fn stores_and_finds_entries() {
        let tt = TranspositionTable::new(1);
        let mv = Move::normal(Square::E2, Square::E4);
        tt.store(0xdead_beef, 3, mv, 42, 17, 5, Bound::Exact);
        let hit = tt.probe(0xdead_beef, 3).expect("stored entry");
        assert_eq!((hit.mv, hit.score, hit.eval, hit.depth), (mv, 42, 17, 5));
        assert_eq!(hit.bound, Bound::Exact);
        assert!(tt.probe(0xdead_bef0, 3).is_none());
    }

    #[test]
    fn a_bound_refines_an_evaluation_only_on_its_side() {
        let hit = |score, bound| TtHit {
            mv: Move::NONE,
            score,
            eval: 0,
            depth: 5,
            bound,
        };
        assert!(hit(50, Bound::Exact).refines(80));
        assert!(hit(50, Bound::Lower).refines(20));
        assert!(!hit(50, Bound::Lower).refines(80));
        assert!(!hit(50, Bound::Lower).refines(50));
        assert!(hit(50, Bound::Upper).refines(80));
        assert!(!hit(50, Bound::Upper).refines(20));
    }

    #[test]
    fn mate_scores_are_relative_to_the_node() {
        let tt = TranspositionTable::new(1);
        // Mate in 5 plies from the root, seen at ply 2: 3 plies from the node.
        tt.store(7, 2, Move::NONE, MATE - 5, 0, 4, Bound::Exact);
        // Reached again at ply 4, the same mate is 7 plies from the root.
        assert_eq!(tt.probe(7, 4).map(|h| h.score), Some(MATE - 7));
        tt.store(9, 2, Move::NONE, -(MATE - 5), 0, 4, Bound::Exact);
        assert_eq!(tt.probe(9, 0).map(|h| h.score), Some(-(MATE - 3)));
    }

    #[test]
    fn torn_writes_read_as_misses_never_as_wrong_entries() {
        // Two threads hammer the same bucket with entries whose fields all
        // derive from the key; a reader must only ever see whole entries.
        let tt = TranspositionTable::new(1);
        let buckets = tt.buckets.len() as u64;
        let keys: Vec<u64> = (1..=6).map(|i| i * 7).collect();
        assert!(keys
            .iter()
            .all(|&k| (k as u128 * buckets as u128) >> 64 == 0));
        std::thread::scope(|s| {
            for t in 0..2u64 {
                let (tt, keys) = (&tt, &keys);
                s.spawn(move || {
                    for round in 0..20_000u64 {
                        let key = keys[((round + t * 3) % 6) as usize];
                        let depth = (round % 50) as i32;
                        tt.store(
                            key,
                            0,
                            Move::NONE,
                            key as i32,
                            key as i32 * 2,
                            depth,
                            Bound::Lower,
                        );
                        for &other in keys {
                            if let Some(hit) = tt.probe(other, 0) {
                                assert_eq!((hit.score, hit.eval), (other as i32, other as i32 * 2));
                            }
                        }
                    }
                });
            }
        });
    }

    #[test]
    fn a_full_bucket_replaces_the_shallowest_entry() {
        let tt = TranspositionTable::new(1);
        let buckets = tt.buckets.len() as u128;
        // Keys that land in bucket 0: the top bits select the bucket.
        let key = |i: u64| i + 1;
        assert!((key(10) as u128 * buckets) >> 64 == 0);
        for (i, depth) in [(1, 9), (2, 3), (3, 7), (4, 8)] {
            tt.store(key(i), 0, Move::NONE, 0, 0, depth, Bound::Lower);
        }
        tt.store(key(5), 0, Move::NONE, 0, 0, 4, Bound::Lower);
        assert!(tt.probe(key(2), 0).is_none(), "depth 3 entry evicted");
        for i in [1, 3, 4, 5] {
            assert!(tt.probe(key(i), 0).is_some());
        }
    }
}
