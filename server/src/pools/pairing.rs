//! The pairing of a pool's wave, as a pure function: who plays whom among
//! the people waiting in one pool, and with which colours. No I/O and no
//! clock: the caller says how long each has waited.
//!
//! **The rule** (docs/API.md, "Quick pairing"): two waiting people may be
//! paired when their ratings differ by at most the *window* of the one who
//! has waited longer; a window starts at [`BASE_WINDOW`] rating points and
//! widens by [`WIDENING_PER_SECOND`] each second of waiting, up to
//! [`MAX_WINDOW`] (so after 45 s anyone is paired with anyone). Among all the
//! pairs allowed, the closest ratings are paired first (ties: the longer
//! wait first); each person is in at most one pair of a wave. Whoever is
//! left waits for the next wave with a wider window.

use crate::domain::Side;

/// A new arrival accepts opponents this close in rating.
pub const BASE_WINDOW: u32 = 100;
/// Each second of waiting widens the window by this much.
pub const WIDENING_PER_SECOND: u32 = 20;
/// The widest window: past it, anyone plays anyone.
pub const MAX_WINDOW: u32 = 1_000;

/// One person waiting in a pool.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    pub rating: f64,
    /// How long they have waited, in milliseconds.
    pub waited_ms: u64,
    /// Their colours of late, to balance.
    pub colours: ColourHistory,
    /// Wants a rated game: only people who want the same are paired.
    pub rated: bool,
    /// The colour they asked for, if any (two askers of the same colour
    /// are not paired).
    pub colour: Option<Side>,
    /// The opponent ratings they accept, if they limited them.
    pub range: Option<(f64, f64)>,
}

/// Whether `a` and `b` may play each other now.
fn compatible(a: &Waiting, b: &Waiting) -> bool {
    let accepts = |who: &Waiting, other: &Waiting| {
        who.range
            .is_none_or(|(low, high)| (low..=high).contains(&other.rating))
    };
    let gap = (a.rating - b.rating).abs();
    let longer = a.waited_ms.max(b.waited_ms);
    a.rated == b.rated
        && (a.colour.is_none() || a.colour != b.colour)
        && accepts(a, b)
        && accepts(b, a)
        && gap <= f64::from(window(longer))
}

/// The window of someone who has waited `waited_ms`.
pub fn window(waited_ms: u64) -> u32 {
    let seconds = u32::try_from(waited_ms / 1000).unwrap_or(u32::MAX);
    BASE_WINDOW
        .saturating_add(WIDENING_PER_SECOND.saturating_mul(seconds))
        .min(MAX_WINDOW)
}

/// The pairs of one wave, as indexes into `waiting`: `(white, black)`.
/// `coin` decides colours when the two histories are alike.
pub fn pair_wave(waiting: &[Waiting], coin: &mut dyn FnMut() -> bool) -> Vec<(usize, usize)> {
    let mut candidates = Vec::new();
    for a in 0..waiting.len() {
        for b in a + 1..waiting.len() {
            let (pa, pb) = (&waiting[a], &waiting[b]);
            if compatible(pa, pb) {
                let gap = (pa.rating - pb.rating).abs();
                let longer = pa.waited_ms.max(pb.waited_ms);
                candidates.push((gap, u64::MAX - longer, a, b));
            }
        }
    }
    candidates.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let mut taken = vec![false; waiting.len()];
    let mut pairs = Vec::new();
    for (_, _, a, b) in candidates {
        if taken[a] || taken[b] {
            continue;
        }
        taken[a] = true;
        taken[b] = true;
        let a_white = match (waiting[a].colour, waiting[b].colour) {
            (Some(wish), _) => wish == Side::White,
            (None, Some(wish)) => wish == Side::Black,
            (None, None) => first_is_white(&waiting[a].colours, &waiting[b].colours, coin),
        };
        if a_white {
            pairs.push((a, b));
        } else {
            pairs.push((b, a));
        }
    }
    pairs
}

/// A player's colours of late: how many more whites than blacks, and the
/// last one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ColourHistory {
    /// Whites minus blacks.
    pub balance: i32,
    pub last: Option<Side>,
}

impl ColourHistory {
    /// The history of these colours, most recent first.
    pub fn of(recent_first: &[Side]) -> ColourHistory {
        ColourHistory {
            balance: recent_first
                .iter()
                .map(|side| match side {
                    Side::White => 1,
                    Side::Black => -1,
                })
                .sum(),
            last: recent_first.first().copied(),
        }
    }

    /// The history after one more game as `side`.
    pub fn then(self, side: Side) -> ColourHistory {
        ColourHistory {
            balance: self.balance + if side == Side::White { 1 } else { -1 },
            last: Some(side),
        }
    }
}

/// Whether `a` plays white against `b`: the one who had more whites lately
/// plays black; alike, the one whose last game was white plays black;
/// still alike, the coin.
pub fn first_is_white(
    a: &ColourHistory,
    b: &ColourHistory,
    coin: &mut dyn FnMut() -> bool,
) -> bool {
    if a.balance != b.balance {
        return a.balance < b.balance;
    }
    match (a.last, b.last) {
        (Some(Side::White), Some(Side::Black)) | (Some(Side::White), None) => false,
        (Some(Side::Black), Some(Side::White)) | (None, Some(Side::White)) => true,
        (Some(Side::Black), None) => true,
        (None, Some(Side::Black)) => false,
        _ => coin(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(rating: f64, waited_ms: u64) -> Waiting {
        Waiting {
            rating,
            waited_ms,
            colours: ColourHistory::default(),
            rated: true,
            colour: None,
            range: None,
        }
    }

    fn heads() -> impl FnMut() -> bool {
        || true
    }

    fn paired(pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let mut sorted: Vec<_> = pairs.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
        sorted.sort_unstable();
        sorted
    }

    #[test]
    fn the_window_widens_with_the_wait_up_to_its_cap() {
        assert_eq!(window(0), 100);
        assert_eq!(window(999), 100);
        assert_eq!(window(5_000), 200);
        assert_eq!(window(30_000), 700);
        assert_eq!(window(45_000), 1_000);
        assert_eq!(window(3_600_000), 1_000);
    }

    #[test]
    fn nearest_ratings_are_paired_first() {
        // 1500 is nearer to 1520 than to 1440: the pairs are 1500-1520
        // and 1440-1400, not 1500-1440.
        let people = [
            waiting(1500.0, 0),
            waiting(1440.0, 0),
            waiting(1520.0, 0),
            waiting(1400.0, 0),
        ];
        let pairs = pair_wave(&people, &mut heads());
        assert_eq!(paired(&pairs), vec![(0, 2), (1, 3)]);
    }

    #[test]
    fn far_ratings_wait_until_the_window_is_wide_enough() {
        let fresh = [waiting(1500.0, 0), waiting(1800.0, 0)];
        assert!(pair_wave(&fresh, &mut heads()).is_empty());
        // 300 points apart: 100 + 20 × 10 s = 300 is enough.
        let later = [waiting(1500.0, 10_000), waiting(1800.0, 2_000)];
        assert_eq!(paired(&pair_wave(&later, &mut heads())), vec![(0, 1)]);
        let not_yet = [waiting(1500.0, 9_000), waiting(1800.0, 9_000)];
        assert!(pair_wave(&not_yet, &mut heads()).is_empty());
    }

    #[test]
    fn nobody_is_paired_twice_and_an_odd_one_waits() {
        let people: Vec<_> = (0..7).map(|i| waiting(1500.0 + f64::from(i), 0)).collect();
        let pairs = pair_wave(&people, &mut heads());
        assert_eq!(pairs.len(), 3);
        let mut seen: Vec<usize> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 6);
    }

    #[test]
    fn rated_and_casual_colour_wishes_and_ranges_are_respected() {
        let mut casual = waiting(1500.0, 60_000);
        casual.rated = false;
        assert!(pair_wave(&[casual, waiting(1500.0, 60_000)], &mut heads()).is_empty());
        let mut white = waiting(1500.0, 0);
        white.colour = Some(Side::White);
        assert!(pair_wave(&[white.clone(), white.clone()], &mut heads()).is_empty());
        let mut black = waiting(1500.0, 0);
        black.colour = Some(Side::Black);
        assert_eq!(pair_wave(&[black, white], &mut heads()), vec![(1, 0)]);
        let mut narrow = waiting(1500.0, 60_000);
        narrow.range = Some((1400.0, 1600.0));
        assert!(pair_wave(&[narrow.clone(), waiting(1700.0, 60_000)], &mut heads()).is_empty());
        assert_eq!(
            pair_wave(&[narrow, waiting(1550.0, 0)], &mut heads()).len(),
            1
        );
    }

    #[test]
    fn colours_balance_recent_games() {
        let mut white_lately = waiting(1500.0, 0);
        white_lately.colours = ColourHistory::of(&[Side::White, Side::White, Side::Black]);
        let mut black_lately = waiting(1500.0, 0);
        black_lately.colours = ColourHistory::of(&[Side::Black]);
        let pairs = pair_wave(&[white_lately, black_lately], &mut heads());
        assert_eq!(pairs, vec![(1, 0)]);
        // Equal balance: the last colour decides.
        let a = ColourHistory::of(&[Side::White, Side::Black]);
        let b = ColourHistory::of(&[Side::Black, Side::White]);
        assert!(!first_is_white(&a, &b, &mut heads()));
        assert!(first_is_white(&b, &a, &mut heads()));
        // Nothing to go by: the coin.
        let none = ColourHistory::default();
        assert!(first_is_white(&none, &none, &mut || true));
        assert!(!first_is_white(&none, &none, &mut || false));
    }
}
