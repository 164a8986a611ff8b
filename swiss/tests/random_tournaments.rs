//! Property test: thousands of random tournaments (random results,
//! forfeits, withdrawals, requested byes, odd counts, 5 to 60 players, up
//! to 11 rounds), checking after every pairing that
//! - every present player is paired exactly once or has the one bye, and
//!   nobody absent is paired;
//! - nobody meets an opponent already played;
//! - nobody gets a second pairing-allocated bye, nor one after a point
//!   without playing;
//! - colour differences stay within ±2 and nobody has the same colour three
//!   games running, except topscorers (and their opponents) in the last
//!   round, which the rules allow;
//! - pairing is deterministic;
//! - TRF export, import and export again gives the same text, and the
//!   imported tournament pairs the same way.
//!
//! The number of tournaments is `SWISS_TOURNAMENTS`, by default 2000 in a
//! release build (`cargo test --release`, about a minute on two cores) and
//! 60 in a debug one (the search is ten times slower unoptimised).

use rookery_swiss::history::histories;
use rookery_swiss::{
    pair_next_round, trf, Bye, ByeKind, Colour, GameResult, Pairing, Player, PlayerId, Tournament,
};

/// SplitMix64: small, seedable, good enough to draw tournaments.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn random_result(rng: &mut Rng) -> GameResult {
    match rng.below(100) {
        0..=34 => GameResult::WhiteWins,
        35..=64 => GameResult::Draw,
        65..=95 => GameResult::BlackWins,
        96..=97 => GameResult::WhiteWinsByForfeit,
        98 => GameResult::BlackWinsByForfeit,
        _ => GameResult::DoubleForfeit,
    }
}

fn check_round(t: &Tournament, present: &[PlayerId], seed: u64) -> Option<Pairing> {
    let before = histories(t);
    let pairing = match pair_next_round(t, present) {
        Ok(p) => p,
        // Small fields run out of opponents: legal, and the end of this one.
        Err(_) => return None,
    };
    let again = pair_next_round(t, present).expect("deterministic");
    assert_eq!(pairing, again, "seed {seed}: not deterministic");

    let mut seen = vec![0u32; t.players.len()];
    for &(w, b) in &pairing.pairs {
        seen[w.index()] += 1;
        seen[b.index()] += 1;
        assert!(
            !before[w.index()].met.contains(&b),
            "seed {seed} round {}: {w} and {b} meet again",
            t.rounds.len() + 1
        );
    }
    if let Some(bye) = pairing.bye {
        seen[bye.index()] += 1;
        assert!(
            !before[bye.index()].bye_barred,
            "seed {seed}: {bye} gets a second bye or one after a point without playing"
        );
    }
    assert_eq!(pairing.bye.is_some(), present.len() % 2 == 1);
    for p in &t.players {
        let expected = u32::from(present.contains(&p.id));
        assert_eq!(
            seen[p.id.index()],
            expected,
            "seed {seed}: {} paired {} times",
            p.id,
            seen[p.id.index()]
        );
    }

    // Colours after this round.
    let last_round = t.rounds.len() as u32 + 1 >= t.rounds_planned;
    let topscorer = |id: PlayerId| last_round && before[id.index()].score.0 > t.rounds.len() as u32;
    for &(w, b) in &pairing.pairs {
        if topscorer(w) || topscorer(b) {
            continue;
        }
        for (id, colour) in [(w, Colour::White), (b, Colour::Black)] {
            let mut colours = before[id.index()].colours.clone();
            colours.push(colour);
            let cd: i32 = colours
                .iter()
                .map(|c| if *c == Colour::White { 1 } else { -1 })
                .sum();
            assert!(cd.abs() <= 2, "seed {seed}: {id} colour difference {cd}");
            let n = colours.len();
            assert!(
                n < 3 || !(colours[n - 1] == colours[n - 2] && colours[n - 2] == colours[n - 3]),
                "seed {seed}: {id} has the same colour three times"
            );
        }
    }

    // Export, import, export.
    let text = trf::write(t);
    let back = trf::parse(&text).expect("our own TRF parses");
    assert_eq!(trf::write(&back), text, "seed {seed}: TRF round trip");
    assert_eq!(
        pair_next_round(&back, present),
        Ok(pairing.clone()),
        "seed {seed}: the imported tournament pairs differently"
    );
    Some(pairing)
}

fn run(seed: u64) {
    let mut rng = Rng(seed);
    let n = 5 + rng.below(56) as u32;
    let rounds = 1 + rng.below(11) as u32;
    let players = (1..=n)
        .map(|i| Player::new(i, format!("P{i}"), 2800 - i as u16 * 7))
        .collect();
    let mut t = Tournament::new(format!("random {seed}"), rounds, players);
    if rng.chance(50) {
        t.initial_colour = Colour::Black;
    }
    for _ in 0..rounds {
        for i in 0..n as usize {
            if !t.players[i].withdrawn && rng.chance(3) {
                t.players[i].withdrawn = true;
            }
        }
        let id_list: Vec<PlayerId> = t
            .players
            .iter()
            .filter(|p| !p.withdrawn)
            .map(|p| p.id)
            .collect();
        for id in id_list {
            if rng.chance(6) {
                let kind = if rng.chance(50) {
                    ByeKind::Half
                } else {
                    ByeKind::Zero
                };
                t.next_round_byes.push(Bye { player: id, kind });
            }
        }
        let present = t.present_next();
        if present.len() < 2 {
            break;
        }
        let Some(pairing) = check_round(&t, &present, seed) else {
            break;
        };
        let results: Vec<GameResult> = pairing
            .pairs
            .iter()
            .map(|_| random_result(&mut rng))
            .collect();
        t.push_round(pairing.into_round(&results));
    }
}

#[test]
fn random_tournaments_keep_the_absolute_criteria() {
    let count: u64 = std::env::var("SWISS_TOURNAMENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) { 60 } else { 2000 });
    for seed in 0..count {
        run(seed);
    }
}
