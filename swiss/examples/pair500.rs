//! Benchmark: a 500-player, 11-round Swiss with random results; prints
//! the time to pair each round and the slowest.
//!
//! `cargo run --release -p rookery-swiss --example pair500 [PLAYERS] [ROUNDS]`

use std::time::Instant;

use rookery_swiss::{pair_next_round, GameResult, Player, Tournament};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(500);
    let rounds: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(11);
    let players = (1..=n)
        .map(|i| Player::new(i, format!("P{i}"), 2800u16.saturating_sub(i as u16 * 2)))
        .collect();
    let mut t = Tournament::new("bench", rounds, players);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut slowest = 0.0f64;
    let mut total = 0.0f64;
    for r in 1..=rounds {
        let present = t.present_next();
        let start = Instant::now();
        let pairing = match pair_next_round(&t, &present) {
            Ok(p) => p,
            Err(e) => {
                println!("round {r}: {e}");
                break;
            }
        };
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        slowest = slowest.max(ms);
        total += ms;
        println!("round {r:>2}: {} pairs, {ms:.1} ms", pairing.pairs.len());
        let results: Vec<GameResult> = pairing
            .pairs
            .iter()
            .map(|_| match next() % 10 {
                0..=3 => GameResult::WhiteWins,
                4..=6 => GameResult::Draw,
                _ => GameResult::BlackWins,
            })
            .collect();
        t.push_round(pairing.into_round(&results));
    }
    println!("{n} players: slowest round {slowest:.1} ms, all rounds {total:.1} ms");
}
