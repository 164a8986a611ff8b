//! SplitMix64, the one small random number generator of the engine and its
//! tests: Zobrist keys at compile time, the level handicap's move choice,
//! the depth draw between two levels' caps (`UCI_Elo`), and the random
//! playouts and fuzz inputs of the tests.
//!
//! Why this generator: a 64-bit state, one addition and three mixing steps
//! per number, every output equally likely over a full period of 2^64, and
//! simple enough to be a `const fn` (the Zobrist keys are built by the
//! compiler). None of its users need cryptographic strength: they need
//! reproducible sequences from a seed.

/// A SplitMix64 stream. The same seed always gives the same sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub const fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `[0, 1)`, from the top 53 bits (a double's precision).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A number in `0..n` (`0` when `n` is 0). The modulo bias is below
    /// `n / 2^64`, far too small to matter for picking moves or bytes.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn matches_the_reference_sequence() {
        // First outputs for seed 0 of the reference implementation
        // (Vigna's splitmix64.c).
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(rng.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn ranges_hold() {
        let mut rng = SplitMix64::new(42);
        for _ in 0..1000 {
            let x = rng.next_f64();
            assert!((0.0..1.0).contains(&x));
            assert!(rng.below(7) < 7);
            assert_eq!(rng.below(0), 0);
        }
    }
}
