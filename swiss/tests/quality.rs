//! Hand-made cases for the quality criteria and the candidate order of
//! the Dutch rules (C.04.3, 2025/2026): each tournament is written out as
//! TRF, small enough to follow by hand; the expected pairings were worked
//! out from the rules and are also what bbpPairings 6 pairs.

use rookery_swiss::{pair_next_round, trf, Pairing};

fn pair(text: &str) -> Pairing {
    let t = trf::parse(text).expect("valid TRF");
    pair_next_round(&t, &t.present_next()).expect("a legal pairing exists")
}

fn boards(p: &Pairing) -> Vec<(u32, u32)> {
    p.pairs.iter().map(|&(w, b)| (w.0, b.0)).collect()
}

/// Scores after two rounds: 1, 2, 3 on 2 points; 4, 5 on 1; 6, 7, 8 on 0.
/// Player 3 has met both 4 and 5.
const NEXT_BRACKET: &str = "\
012 C8 next bracket
001    1      Player 1                          2490                             2.0    1     6 w 1     8 b 1
001    2      Player 2                          2480                             2.0    2     7 b 1     6 w 1
001    3      Player 3                          2470                             2.0    3     4 w 1     5 b 1
001    4      Player 4                          2460                             1.0    4     3 b 0     7 w 1
001    5      Player 5                          2450                             1.0    5     8 w 1     3 w 0
001    6      Player 6                          2440                             0.0    6     1 b 0     2 b 0
001    7      Player 7                          2430                             0.0    7     2 w 0     4 b 0
001    8      Player 8                          2420                             0.0    8     5 b 0     1 w 0
XXR 5
XXC white1
";

#[test]
fn c8_the_downfloater_is_chosen_for_the_next_bracket() {
    // The top bracket {1, 2, 3} pairs once and floats one player. 1-2
    // comes first and grants both colours, but floats 3 into {4, 5}, both
    // of whom 3 has met: the next bracket would pair 4-5 and float 3 on
    // (PSD: a two-point floater). Floating 1 or 2 lets the next bracket
    // pair it (PSD: a one-point pair and a one-point floater), so C8 rules
    // 1-2 out; of 1-3 and 2-3 only 2-3 grants both colours (C12): 1, the
    // top seed, floats.
    let p = pair(NEXT_BRACKET);
    assert_eq!(boards(&p), vec![(3, 2), (1, 4), (7, 5), (6, 8)]);
}

/// Scores after two rounds: 1-5 on 1½ (5 by a win over 0-point 6: a
/// downfloat), 10 on 1, 7-9 on ½, 6 on 0. Colour preferences of the top
/// five: 1 black, 2 white, 3 black, 4 white, 5 white.
const TRANSPOSITIONS_FIRST: &str = "\
012 Transpositions before exchanges
001    1      Player 1                          2490                             1.5    1     6 b 1     2 w =
001    2      Player 2                          2480                             1.5    2     7 w 1     1 b =
001    3      Player 3                          2470                             1.5    3     8 b 1     4 w =
001    4      Player 4                          2460                             1.5    4     9 w 1     3 b =
001    5      Player 5                          2450                             1.5    5    10 w =     6 b 1
001    6      Player 6                          2440                             0.0    6     1 w 0     5 w 0
001    7      Player 7                          2430                             0.5    7     2 b 0    10 w =
001    8      Player 8                          2420                             0.5    8     3 w 0     9 b =
001    9      Player 9                          2410                             0.5    9     4 b 0     8 w =
001   10      Player 10                         2400                             1.0   10     5 b =     7 b =
XXR 5
XXC white1
";

#[test]
fn every_transposition_is_tried_before_an_exchange() {
    // Top bracket: S1 = {1, 2}, S2 = {3, 4, 5}, one floater. In S2's
    // lexicographic order: 1-3 clashes in colour; 1-4 2-3 floats 5 a
    // second time running (C14); 1-4 2-5 clashes; 1-5 2-3 (4 floats) is
    // perfect. The exchange 1-4 3-5 (2 floats) is perfect too, but an
    // exchange comes only after every transposition.
    let p = pair(TRANSPOSITIONS_FIRST);
    assert_eq!(boards(&p), vec![(5, 1), (2, 3), (10, 4), (8, 7), (9, 6)]);
}
