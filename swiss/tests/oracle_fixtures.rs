//! Pairings agreed with bbpPairings (the FIDE-endorsed pairing engine,
//! implementing the 2025/2026 Dutch rules), kept as data: each
//! `tests/data/bbp-agreed/NAME.trf` is a random tournament generated and
//! played out by bbpPairings, truncated before a round, and `NAME.pairs` is
//! bbpPairings' `-p` output for that round, which this library matched
//! (pairs and colours) when the fixture was recorded. `s*` were recorded
//! first; `x*` are rounds this library used to pair differently (before
//! the rules' candidate order and criteria C8, C9 were exact), all of 10
//! to 36 players.

use std::fs;
use std::path::Path;

use rookery_swiss::{pair_next_round, trf};

fn expected(text: &str) -> Vec<(u32, u32)> {
    let mut numbers = text
        .split_whitespace()
        .map(|w| w.parse::<u32>().expect("a number"));
    let n = numbers.next().expect("the count") as usize;
    let mut pairs: Vec<(u32, u32)> = (0..n)
        .map(|_| {
            (
                numbers.next().expect("white"),
                numbers.next().expect("black"),
            )
        })
        .collect();
    pairs.sort();
    pairs
}

#[test]
fn pairings_agreed_with_bbppairings_still_hold() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bbp-agreed");
    let mut names: Vec<_> = fs::read_dir(&dir)
        .expect("fixture directory")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "trf"))
        .collect();
    names.sort();
    assert!(!names.is_empty());
    let mut failures = Vec::new();
    for path in &names {
        let text = fs::read_to_string(path).expect("readable");
        let t = trf::parse(&text).expect("valid TRF");
        let pairing = pair_next_round(&t, &t.present_next()).expect("pairable");
        let mut got: Vec<(u32, u32)> = pairing.pairs.iter().map(|&(w, b)| (w.0, b.0)).collect();
        if let Some(bye) = pairing.bye {
            got.push((bye.0, 0));
        }
        got.sort();
        let want = expected(&fs::read_to_string(path.with_extension("pairs")).expect("pairs file"));
        if got != want {
            failures.push(path.file_name().map(|n| n.to_string_lossy().into_owned()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ: {failures:?}",
        failures.len(),
        names.len()
    );
}
