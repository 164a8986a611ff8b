//! Chess960 (Fischer Random) against shakmaty's Chess960 mode.
//!
//! Random playouts (seeded) from every one of the 960 start positions, and
//! random boards with kings and rooks on random back-rank files, castling
//! rights and enemy pieces placed to attack the squares castling needs. At
//! every position both libraries must agree on the legal moves (written
//! king-takes-rook, as UCI's Chess960 mode does), check, the FEN (X-FEN
//! on both sides), and the SAN of every move (castling `O-O` / `O-O-O`)
//! and whether it gives check. Checked without a second opinion: the
//! incremental hash equals the recomputed one; the FEN, the same position
//! in Shredder-FEN, SAN and UCI (in both castling modes) read back to what
//! was written; playing a castle moves exactly the king and the rook the
//! rights name.
//!
//! The playouts favour castling and moves that keep castling rights, so
//! that castles are met in every arrangement Chess960 allows: the king
//! already on its target square, the rook already on its target square,
//! the king landing where the rook stood and the rook where the king stood.
//! `ROOKERY_DIFF_PLAYOUTS=N` plays N games from each start (default 1).

use std::collections::BTreeSet;

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode as TheirMode, Chess, EnPassantMode, Position as _};

use rookery_engine::rng::SplitMix64;
use rookery_engine::{
    chess960_start, chess960_start_number, CastlingMode, Game, MoveKind, Position, Role,
};

fn starts() -> Vec<(u32, String)> {
    include_str!("data/chess960-starts.epd")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|line| {
            let mut fields = line.split(';').map(str::trim);
            let fen = fields.next().expect("a FEN").to_string();
            let id = fields
                .find_map(|f| f.strip_prefix("id 960-"))
                .and_then(|n| n.parse().ok())
                .expect("id 960-N");
            (id, fen)
        })
        .collect()
}

fn theirs_of(fen: &str) -> Result<Chess, String> {
    fen.parse::<Fen>()
        .map_err(|e| e.to_string())?
        .into_position(TheirMode::Chess960)
        .map_err(|e| e.to_string())
}

fn ours_of(fen: &str) -> Result<Position, rookery_engine::FenError> {
    Position::from_fen(fen).map(|p| p.with_castling_mode(CastlingMode::Chess960))
}

fn their_uci(m: &shakmaty::Move) -> String {
    m.to_uci(TheirMode::Chess960).to_string()
}

/// The castling field of `pos` in Shredder-FEN: the file of every rook
/// that may castle, White's in upper case.
fn shredder_fen(pos: &Position) -> String {
    let fen = pos.to_fen();
    let fields: Vec<&str> = fen.split(' ').collect();
    let rooks = pos.castling_rights().rooks();
    let mut castling: String = rooks
        .filter(|sq| sq.rank() == 0)
        .map(|sq| sq.file_char().to_ascii_uppercase())
        .collect();
    castling.extend(rooks.filter(|sq| sq.rank() == 7).map(|sq| sq.file_char()));
    if castling.is_empty() {
        castling.push('-');
    }
    format!(
        "{} {} {castling} {} {} {}",
        fields[0], fields[1], fields[3], fields[4], fields[5]
    )
}

/// How often each castling arrangement was met.
#[derive(Default, Debug)]
struct Seen {
    positions: usize,
    castles: usize,
    king_already_on_target: usize,
    rook_already_on_target: usize,
    king_onto_rook_square: usize,
    rook_onto_king_square: usize,
    queenside: usize,
    non_outermost_rook_fen: usize,
}

fn compare(ours: &Position, theirs: &Chess, seen: &mut Seen) {
    let fen = ours.to_fen();
    let their_fen = Fen::from_position(theirs.clone(), EnPassantMode::Legal).to_string();
    assert_eq!(fen, their_fen, "FEN");
    assert_eq!(ours_of(&fen).as_ref(), Ok(ours), "FEN round trip");
    let shredder = shredder_fen(ours);
    assert_eq!(
        ours_of(&shredder).as_ref(),
        Ok(ours),
        "{shredder} read back"
    );
    assert_eq!(
        ours.hash(),
        ours.compute_hash(),
        "incremental hash at {fen}"
    );
    let castling_field = fen.split(' ').nth(2).unwrap_or("");
    seen.non_outermost_rook_fen += castling_field
        .chars()
        .any(|c| c.is_ascii_alphabetic() && !"KQkq".contains(c))
        as usize;

    let our_moves = ours.legal_moves();
    let their_moves = theirs.legal_moves();
    let our_set: BTreeSet<String> = our_moves.iter().map(|&m| ours.uci(m)).collect();
    let their_set: BTreeSet<String> = their_moves.iter().map(their_uci).collect();
    assert_eq!(our_set, their_set, "legal moves at {fen}");
    assert_eq!(our_moves.len(), our_set.len(), "duplicate moves at {fen}");
    assert_eq!(ours.count_legal_moves() as usize, our_moves.len());
    assert_eq!(ours.is_check(), theirs.is_check(), "check at {fen}");

    let standard = ours.clone().with_castling_mode(CastlingMode::Standard);
    for their_move in &their_moves {
        let uci = their_uci(their_move);
        let mv = ours.parse_uci(&uci).expect("UCI of a legal move parses");
        assert_eq!(ours.uci(mv), uci, "UCI round trip at {fen}");
        // The standard mode's spelling reads back too.
        assert_eq!(
            standard.parse_uci(&standard.uci(mv)),
            Ok(mv),
            "{uci} at {fen}"
        );
        let san = ours.san(mv);
        let their_san = SanPlus::from_move(theirs.clone(), their_move).to_string();
        assert_eq!(san, their_san, "SAN of {uci} at {fen}");
        assert_eq!(ours.parse_san(&san), Ok(mv), "SAN {san} read back at {fen}");
        let mut after = theirs.clone();
        after.play_unchecked(their_move);
        assert_eq!(
            ours.gives_check(mv),
            after.is_check(),
            "{uci} check at {fen}"
        );
        if mv.is_castle() {
            check_castle(ours, mv, seen);
        }
    }
    seen.positions += 1;
}

/// Playing the castle `mv` moves the king to `mv.to()` and the rights'
/// rook beside it, nothing else, and drops the mover's rights.
fn check_castle(pos: &Position, mv: rookery_engine::Move, seen: &mut Seen) {
    let us = pos.turn();
    let (rook_from, rook_to) = pos.castling_rook_squares(mv).expect("a castle has a rook");
    let (king_from, king_to) = (mv.from(), mv.to());
    assert_eq!(mv.kind(), MoveKind::Castle);
    let after = pos.play(mv).expect("legal");
    assert_eq!(
        after.piece_at(king_to).map(|p| (p.color, p.role)),
        Some((us, Role::King))
    );
    assert_eq!(
        after.piece_at(rook_to).map(|p| (p.color, p.role)),
        Some((us, Role::Rook))
    );
    for sq in [king_from, rook_from] {
        if sq != king_to && sq != rook_to {
            assert_eq!(after.piece_at(sq), None, "{} left {sq}", pos.uci(mv));
        }
    }
    assert_eq!(after.occupied().count(), pos.occupied().count());
    assert!(!after.has_castling_right(us, true) && !after.has_castling_right(us, false));
    seen.castles += 1;
    seen.king_already_on_target += (king_from == king_to) as usize;
    seen.rook_already_on_target += (rook_from == rook_to) as usize;
    seen.king_onto_rook_square += (king_to == rook_from && king_from != king_to) as usize;
    seen.rook_onto_king_square += (rook_to == king_from && rook_from != rook_to) as usize;
    seen.queenside += (king_to.file() == 2) as usize;
}

/// One random game from `fen`, compared at every ply. Castles are played
/// whenever offered half the time, and two moves in three keep every
/// castling right, so rights live long enough to be used.
fn playout(fen: &str, rng: &mut SplitMix64, max_plies: usize, seen: &mut Seen) {
    let mut game = Game::new(ours_of(fen).unwrap_or_else(|e| panic!("{fen}: {e}")));
    let mut theirs = theirs_of(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
    while game.moves().len() < max_plies && game.outcome().is_none() {
        let ours = game.position().clone();
        compare(&ours, &theirs, seen);
        let moves = ours.legal_moves();
        let castles: Vec<_> = moves.iter().copied().filter(|m| m.is_castle()).collect();
        let keeping: Vec<_> = moves
            .iter()
            .copied()
            .filter(|&m| {
                let after = ours.play(m).expect("legal");
                after.castling_rights() == ours.castling_rights()
            })
            .collect();
        let mv = if !castles.is_empty() && rng.below(2) == 0 {
            castles[rng.below(castles.len())]
        } else if !keeping.is_empty() && rng.below(3) != 0 {
            keeping[rng.below(keeping.len())]
        } else {
            moves[rng.below(moves.len())]
        };
        let uci = ours.uci(mv);
        let their_move = theirs
            .legal_moves()
            .into_iter()
            .find(|m| their_uci(m) == uci)
            .expect("shakmaty has the same move");
        theirs.play_unchecked(&their_move);
        assert_eq!(game.play_uci(&uci), Ok(mv));
    }
}

#[test]
fn random_chess960_playouts_agree_with_shakmaty() {
    let per_start: usize = std::env::var("ROOKERY_DIFF_PLAYOUTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let mut rng = SplitMix64::new(0x960_960);
    let mut seen = Seen::default();
    let starts = starts();
    assert_eq!(starts.len(), 960);
    for (_, fen) in &starts {
        for _ in 0..per_start {
            playout(fen, &mut rng, 60, &mut seen);
        }
    }
    eprintln!("{seen:?}");
    assert!(seen.positions > 20_000, "{seen:?}");
    assert!(seen.castles > 1_000, "{seen:?}");
    assert!(seen.queenside > 100, "{seen:?}");
    assert!(seen.king_already_on_target > 10, "{seen:?}");
    assert!(seen.rook_already_on_target > 10, "{seen:?}");
    assert!(seen.king_onto_rook_square > 10, "{seen:?}");
    assert!(seen.rook_onto_king_square > 10, "{seen:?}");
}

/// Random boards: each side's king and two rooks on random files of its
/// back rank (the king between them), random rights among them written in
/// X-FEN or Shredder-FEN, an extra rook beyond one of them now and then
/// (so X-FEN must name a file), and random men of both sides elsewhere,
/// often on the back ranks, where they block or attack castling squares.
#[test]
fn random_chess960_boards_agree_with_shakmaty() {
    let mut rng = SplitMix64::new(0xf15c4e7);
    let mut seen = Seen::default();
    let mut accepted = 0;
    for _ in 0..30_000 {
        let mut board: [Option<u8>; 64] = [None; 64];
        for _ in 0..rng.below(10) {
            let piece = b"PNBRQpnbrq"[rng.below(10)];
            let square = if piece.eq_ignore_ascii_case(&b'p') {
                8 + rng.below(48)
            } else if rng.below(2) == 0 {
                [rng.below(8), 56 + rng.below(8)][rng.below(2)]
            } else {
                rng.below(64)
            };
            board[square] = Some(piece);
        }
        let mut castling = String::new();
        for (back, upper) in [(0usize, true), (56, false)] {
            let king = 1 + rng.below(6);
            let left = rng.below(king);
            let right = king + 1 + rng.below(7 - king);
            let (k, r) = if upper { (b'K', b'R') } else { (b'k', b'r') };
            board[back + king] = Some(k);
            board[back + left] = Some(r);
            board[back + right] = Some(r);
            if rng.below(5) == 0 && right < 7 {
                board[back + 7] = Some(r);
            }
            for (file, side) in [(right, 'k'), (left, 'q')] {
                if rng.below(3) != 0 {
                    let letter = if rng.below(2) == 0 {
                        (b'a' + file as u8) as char
                    } else {
                        side
                    };
                    castling.push(if upper {
                        letter.to_ascii_uppercase()
                    } else {
                        letter
                    });
                }
            }
        }
        if castling.is_empty() {
            castling.push('-');
        }
        let turn = ["w", "b"][rng.below(2)];
        let mut placement = String::new();
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match board[rank * 8 + file] {
                    None => empty += 1,
                    Some(piece) => {
                        if empty > 0 {
                            placement.push_str(&empty.to_string());
                            empty = 0;
                        }
                        placement.push(char::from(piece));
                    }
                }
            }
            if empty > 0 {
                placement.push_str(&empty.to_string());
            }
            if rank > 0 {
                placement.push('/');
            }
        }
        let fen = format!("{placement} {turn} {castling} - 0 1");
        match (ours_of(&fen), theirs_of(&fen)) {
            (Ok(ours), Ok(theirs)) => {
                compare(&ours, &theirs, &mut seen);
                accepted += 1;
            }
            (Err(_), Err(_)) => {}
            // Shakmaty accepts some double checks no move can give.
            (Err(rookery_engine::FenError::ImpossibleCheck), Ok(theirs)) => {
                assert!(theirs.checkers().count() >= 2, "{fen}")
            }
            (ours, theirs) => panic!("{fen}: rookery {ours:?}, shakmaty {theirs:?}"),
        }
    }
    eprintln!("{accepted} accepted, {seen:?}");
    assert!(accepted > 5_000, "{accepted}");
    assert!(seen.castles > 1_000, "{seen:?}");
    assert!(seen.non_outermost_rook_fen > 100, "{seen:?}");
}

/// Castling rules where Chess960 differs from what a standard-only
/// generator would do, each checked by hand (and against shakmaty).
#[test]
fn chess960_castling_by_hand() {
    let legal = |fen: &str| -> BTreeSet<String> {
        let ours = ours_of(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        let theirs = theirs_of(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        compare(&ours, &theirs, &mut Seen::default());
        ours.legal_moves()
            .iter()
            .filter(|m| m.is_castle())
            .map(|&m| ours.uci(m))
            .collect()
    };
    let set = |moves: &[&str]| moves.iter().map(|m| m.to_string()).collect::<BTreeSet<_>>();
    // The rook on b1 shields c1 from the rook on a1 only until it moves to
    // d1: castling would put the king in check.
    assert_eq!(legal("4k3/8/8/8/8/8/8/rR4K1 w B - 0 1"), set(&[]));
    // Without the enemy rook it castles; the king passes over f1..c1.
    assert_eq!(legal("4k3/8/8/8/8/8/8/1R4K1 w B - 0 1"), set(&["g1b1"]));
    // An attack on a square the king crosses forbids it...
    assert_eq!(legal("4k3/8/8/8/8/8/4r3/1R4K1 w B - 0 1"), set(&[]));
    // ...but one on a square only the rook crosses does not.
    assert_eq!(legal("4k3/8/8/8/8/8/1r6/1R4K1 w B - 0 1"), set(&["g1b1"]));
    // King already on g1, rook on h1: castling moves only the rook.
    assert_eq!(legal("4k3/8/8/8/8/8/8/6KR w H - 0 1"), set(&["g1h1"]));
    // King f1 and rook g1 swap places.
    assert_eq!(legal("4k3/8/8/8/8/8/8/5KR1 w G - 0 1"), set(&["f1g1"]));
    // The square the rook lands on must be empty (a knight on f1).
    assert_eq!(legal("4k3/8/8/8/8/8/8/4KNR1 w G - 0 1"), set(&[]));
    // Rook already on d1 for the queen side: only the king moves.
    assert_eq!(legal("4k3/8/8/8/8/8/8/3RK3 w D - 0 1"), set(&["e1d1"]));
    // King b1, rook a1: the king steps right to c1, the rook jumps to d1.
    assert_eq!(legal("4k3/8/8/8/8/8/8/RK6 w A - 0 1"), set(&["b1a1"]));
    // Black too, both sides.
    assert_eq!(
        legal("1r2k1r1/8/8/8/8/8/8/4K3 b gb - 0 1"),
        set(&["e8b8", "e8g8"])
    );
}

/// X-FEN and Shredder-FEN are both read; X-FEN is written, `KQkq` for
/// every start position.
#[test]
fn fen_castling_notations() {
    let shredder = "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1";
    let xfen = "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1";
    let pos = Position::from_fen(shredder).expect("Shredder-FEN");
    assert_eq!(pos.to_fen(), xfen);
    assert_eq!(Position::from_fen(xfen), Ok(pos));
    // A rook that is not the outermost is named by its file.
    let inner = Position::from_fen("4k3/8/8/8/8/8/8/R1R1K1RR w GC - 0 1").expect("FEN");
    assert_eq!(inner.to_fen(), "4k3/8/8/8/8/8/8/R1R1K1RR w GC - 0 1");
    let outer = Position::from_fen("4k3/8/8/8/8/8/8/R1R1K1RR w HA - 0 1").expect("FEN");
    assert_eq!(outer.to_fen(), "4k3/8/8/8/8/8/8/R1R1K1RR w KQ - 0 1");
    // Two rights on one side of the king, a file without a rook, a king
    // off its back rank: refused.
    for fen in [
        "4k3/8/8/8/8/8/8/R3K1RR w HG - 0 1",
        "4k3/8/8/8/8/8/8/R3K2R w F - 0 1",
        "4k3/8/8/8/8/8/4K3/R6R w HA - 0 1",
        "4k3/8/8/8/8/8/8/R3K2R w KH - 0 1",
    ] {
        assert!(Position::from_fen(fen).is_err(), "{fen}");
    }
    // The standard position reads the same in all three notations.
    let start = Position::startpos();
    assert_eq!(
        Position::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1"),
        Ok(start.clone())
    );
    assert_eq!(start.to_fen(), rookery_engine::fen::STARTPOS);
}

/// UCI spellings: king takes rook in the Chess960 mode, the two-square
/// king move in the standard one (where king and rook stand on standard
/// squares), and both read in either mode.
#[test]
fn uci_castling_spellings() {
    let fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
    let standard = Position::from_fen(fen).expect("FEN");
    let chess960 = standard.clone().with_castling_mode(CastlingMode::Chess960);
    for pos in [&standard, &chess960] {
        assert_eq!(pos.parse_uci("e1g1"), pos.parse_uci("e1h1"));
        assert_eq!(pos.parse_uci("e1c1"), pos.parse_uci("e1a1"));
        assert!(pos.parse_uci("e1g1").expect("castle").is_castle());
    }
    let kingside = standard.parse_uci("e1g1").expect("castle");
    assert_eq!(standard.uci(kingside), "e1g1");
    assert_eq!(kingside.to_uci(), "e1g1");
    assert_eq!(chess960.uci(kingside), "e1h1");
    // King f1, rook h1: `f1g1` is the king's step, `f1h1` the castle; the
    // standard mode writes the castle king-takes-rook too, off the
    // standard squares.
    let pos = Position::from_fen("4k3/8/8/8/8/8/8/5K1R w H - 0 1").expect("FEN");
    let step = pos.parse_uci("f1g1").expect("step");
    let castle = pos.parse_uci("f1h1").expect("castle");
    assert!(!step.is_castle() && castle.is_castle());
    assert_eq!(pos.uci(castle), "f1h1");
    assert_eq!(pos.san(castle), "O-O");
    assert_eq!(pos.parse_san("O-O"), Ok(castle));
    assert_eq!(pos.parse_san("Kg1"), Ok(step));
}

/// Scharnagl numbering: 518 is the standard position, every number's
/// position is the one in the data file, and the number is read back.
#[test]
fn scharnagl_numbers() {
    let standard = chess960_start(518).expect("518");
    assert_eq!(standard.to_fen(), rookery_engine::fen::STARTPOS);
    assert!(standard.is_chess960());
    for (n, fen) in starts() {
        let pos = chess960_start(n).expect("0..960");
        assert_eq!(pos, ours_of(&fen).expect("FEN"), "960-{n}");
        assert_eq!(chess960_start_number(&pos), Some(n));
    }
    assert_eq!(chess960_start(960), None);
    let moved = chess960_start(0)
        .and_then(|p| p.play(p.parse_uci("b2b3").ok()?).ok())
        .expect("b3");
    assert_eq!(chess960_start_number(&moved), None);
}
