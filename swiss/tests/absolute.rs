//! Hand-made cases for each absolute criterion, the bye rules and the
//! colour allocation of round 1.

use rookery_swiss::{
    pair_next_round, trf, Bye, ByeKind, Colour, Game, GameResult, Pairing, PairingError, Player,
    PlayerId, Round, Score, Tournament,
};

fn players(n: u32) -> Vec<Player> {
    (1..=n)
        .map(|i| Player::new(i, format!("Player {i}"), 2500 - i as u16 * 10))
        .collect()
}

fn game(white: u32, black: u32, result: GameResult) -> Game {
    Game {
        white: PlayerId(white),
        black: PlayerId(black),
        result,
    }
}

fn pab(player: u32) -> Bye {
    Bye {
        player: PlayerId(player),
        kind: ByeKind::PairingAllocated,
    }
}

fn pair(t: &Tournament) -> Pairing {
    pair_next_round(t, &t.present_next()).expect("a legal pairing exists")
}

fn has_pair(p: &Pairing, a: u32, b: u32) -> bool {
    p.pairs
        .iter()
        .any(|&(w, bl)| (w.0, bl.0) == (a, b) || (w.0, bl.0) == (b, a))
}

#[test]
fn round_one_alternates_colours_from_the_initial_colour() {
    let mut t = Tournament::new("r1", 5, players(4));
    let p = pair(&t);
    let got: Vec<(u32, u32)> = p.pairs.iter().map(|&(w, b)| (w.0, b.0)).collect();
    assert_eq!(got, vec![(1, 3), (4, 2)]);
    t.initial_colour = Colour::Black;
    let got: Vec<(u32, u32)> = pair(&t).pairs.iter().map(|&(w, b)| (w.0, b.0)).collect();
    assert_eq!(got, vec![(3, 1), (2, 4)]);
}

#[test]
fn c1_no_repeat_pairing() {
    // After draws 1-3 and 4-2 everyone has ½: S1 {1, 2}, S2 {3, 4} would
    // repeat both games. Of the other two pairings, 1-2 and 3-4 grant all
    // four (mild) colour preferences, 1-4 and 2-3 none.
    let mut t = Tournament::new("c1", 5, players(4));
    t.push_round(Round {
        games: vec![game(1, 3, GameResult::Draw), game(4, 2, GameResult::Draw)],
        byes: vec![],
    });
    let p = pair(&t);
    let got: Vec<(u32, u32)> = p.pairs.iter().map(|&(w, b)| (w.0, b.0)).collect();
    assert_eq!(got, vec![(2, 1), (3, 4)]);
}

#[test]
fn c1_forfeited_games_may_be_replayed_but_played_ones_not() {
    let mut t = Tournament::new("c1f", 5, players(2));
    t.push_round(Round {
        games: vec![game(1, 2, GameResult::WhiteWinsByForfeit)],
        byes: vec![],
    });
    assert!(has_pair(&pair(&t), 1, 2));
    t.push_round(Round {
        games: vec![game(2, 1, GameResult::Draw)],
        byes: vec![],
    });
    assert_eq!(
        pair_next_round(&t, &t.present_next()),
        Err(PairingError::NoLegalPairing)
    );
}

#[test]
fn c2_no_second_pab_even_with_a_zero_point_bye_score() {
    // The PAB is worth nothing here, so player 3 stays lowest after it and
    // would be the natural bye again; C2 gives it to player 2 instead.
    let mut t = Tournament::new("c2", 5, players(3));
    t.pab_score = Score::ZERO;
    t.push_round(Round {
        games: vec![game(1, 2, GameResult::Draw)],
        byes: vec![pab(3)],
    });
    let p = pair(&t);
    assert_eq!(p.bye, Some(PlayerId(2)));
    assert!(has_pair(&p, 1, 3));
}

#[test]
fn c2_no_pab_after_a_forfeit_win() {
    // Round 1: 1 beats 2, 3 wins by forfeit against 4, 5 has the PAB.
    // Round 2: 1 beats 5, 2 beats 3, 4 has the PAB. In round 3 the whole
    // 1-point group but player 2 has scored a point without playing.
    let mut t = Tournament::new("c2f", 5, players(5));
    t.push_round(Round {
        games: vec![
            game(1, 2, GameResult::WhiteWins),
            game(3, 4, GameResult::WhiteWinsByForfeit),
        ],
        byes: vec![pab(5)],
    });
    t.push_round(Round {
        games: vec![
            game(5, 1, GameResult::BlackWins),
            game(2, 3, GameResult::WhiteWins),
        ],
        byes: vec![pab(4)],
    });
    assert_eq!(pair(&t).bye, Some(PlayerId(2)));
}

/// 1 and 2 have had white twice (absolute black), 5 and 6 black twice
/// (absolute white); see `c3_*`.
fn colour_clash(rounds_planned: u32) -> Tournament {
    let mut t = Tournament::new("c3", rounds_planned, players(6));
    t.push_round(Round {
        games: vec![
            game(1, 4, GameResult::WhiteWins),
            game(2, 5, GameResult::WhiteWins),
            game(3, 6, GameResult::WhiteWins),
        ],
        byes: vec![],
    });
    t.push_round(Round {
        games: vec![
            game(1, 5, GameResult::WhiteWins),
            game(2, 6, GameResult::WhiteWins),
            game(4, 3, GameResult::WhiteWins),
        ],
        byes: vec![],
    });
    t
}

#[test]
fn c3_same_absolute_preferences_never_meet() {
    let p = pair(&colour_clash(5));
    assert!(!has_pair(&p, 1, 2), "{p:?}");
    assert!(!has_pair(&p, 5, 6), "{p:?}");
    for &(w, b) in &p.pairs {
        // Every absolute preference is granted.
        assert!(!matches!(w.0, 1 | 2), "{w} would have white three times");
        assert!(!matches!(b.0, 5 | 6), "{b} would have black three times");
    }
}

#[test]
fn c3_topscorers_may_meet_in_the_last_round() {
    // Round 3 of 3: 1 and 2 (2 points of 2) are topscorers, so their game
    // is allowed, though one of them gets a third white; 5 and 6 are not.
    let p = pair(&colour_clash(3));
    assert!(has_pair(&p, 1, 2), "{p:?}");
    assert!(!has_pair(&p, 5, 6), "{p:?}");
}

#[test]
fn no_legal_pairing_is_an_error() {
    // Everyone has met everyone.
    let mut t = Tournament::new("done", 5, players(2));
    t.push_round(Round {
        games: vec![game(1, 2, GameResult::Draw)],
        byes: vec![],
    });
    assert_eq!(
        pair_next_round(&t, &t.present_next()),
        Err(PairingError::NoLegalPairing)
    );
    assert_eq!(
        pair_next_round(&t, &[PlayerId(9)]),
        Err(PairingError::UnknownPlayer(PlayerId(9)))
    );
    assert_eq!(
        pair_next_round(&t, &[PlayerId(1), PlayerId(1)]),
        Err(PairingError::DuplicatePlayer(PlayerId(1)))
    );
}

/// TRF-16 text of a small tournament, written here by hand (names and
/// ratings made up; the games are the point).
fn trf_of(lines: &[(u32, u16, &str)], rounds: u32) -> String {
    let mut s = String::from("012 hand-made\n");
    for (id, rating, games) in lines {
        let name = format!("Player {id}");
        s.push_str(&format!(
            "001 {id:>4}      {name:<33} {rating:>4}                             0.0 {id:>4}  {games}\n"
        ));
    }
    s.push_str(&format!("XXR {rounds}\nXXC white1\n"));
    s
}

#[test]
fn pab_goes_to_the_lowest_score_first() {
    // 2025/2026 rules: minimising the PAB receiver's score comes before
    // the top bracket's wishes. Player 4 is absent (zero-point bye) in the
    // round being paired; 1 and 3 (2 points) could meet, but then 5 (1
    // point) would take the bye instead of 6 (0 points).
    let text = trf_of(
        &[
            (1, 2720, "   4 w 1     2 b 1"),
            (2, 2701, "   5 b 1     1 w 0"),
            (3, 2697, "   6 w 1     4 b 1"),
            (4, 2689, "   1 b 0     3 w 0  0000 - Z"),
            (5, 2673, "   2 w 0     6 b 1"),
            (6, 2664, "   3 b 0     5 w 0"),
        ],
        3,
    );
    let t = trf::parse(&text).expect("valid TRF");
    assert_eq!(t.next_round_byes.len(), 1);
    let p = pair(&t);
    assert_eq!(p.bye, Some(PlayerId(6)));
    assert!(has_pair(&p, 1, 5) && has_pair(&p, 2, 3), "{p:?}");
}

#[test]
fn pab_avoids_players_with_unplayed_rounds() {
    // Player 5 had a zero-point bye: among the 0-point players the PAB goes
    // to one who has played every round (2025/2026 C9).
    let text = trf_of(
        &[
            (1, 2720, "   3 w 1"),
            (2, 2701, "   4 b 1"),
            (3, 2697, "   1 b 0"),
            (4, 2689, "   2 w 0"),
            (5, 2673, "0000 - Z"),
        ],
        3,
    );
    let t = trf::parse(&text).expect("valid TRF");
    let p = pair(&t);
    assert_eq!(p.bye, Some(PlayerId(4)));
    assert!(has_pair(&p, 1, 2) && has_pair(&p, 3, 5), "{p:?}");
}
