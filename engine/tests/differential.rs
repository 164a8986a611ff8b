//! Differential test against shakmaty, the rules library lichess runs on.
//!
//! Random playouts (a seeded generator, so every run checks the same games)
//! start from the standard position, the perft suite and the opening book.
//! At every position reached, both libraries must agree on the legal moves,
//! check, checkmate, stalemate, insufficient material (each side and both),
//! the FEN (shakmaty in its "legal en passant" mode, like ours), and the SAN
//! of every legal move and whether it gives check. Along the way the
//! invariants that need no second opinion are checked too: the incremental
//! hash equals the recomputed one, FEN, SAN and UCI read back what was
//! written, and each finished game survives a PGN round trip.
//!
//! `ROOKERY_DIFF_PLAYOUTS=N` runs more playouts per start position than the
//! quick default (e.g. in release mode for a long soak).

use std::collections::BTreeSet;

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position as _};

use rookery_engine::pgn::{read_pgn, write_pgn};
use rookery_engine::rng::SplitMix64;
use rookery_engine::{Color, Game, Position, Termination};

/// Start positions: the standard one, the perft suite, the opening book.
fn start_fens() -> Vec<String> {
    let mut fens = vec![rookery_engine::fen::STARTPOS.to_string()];
    for line in include_str!("data/perft.epd").lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        fens.push(line.split(';').next().unwrap_or("").trim().to_string());
    }
    // EPD lines: four FEN fields, then `hmvc N; fmvc N; ...` operations.
    for line in include_str!("data/openings.epd").lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let op = |name: &str| {
            let at = fields.iter().position(|f| *f == name)?;
            Some(fields.get(at + 1)?.trim_end_matches(';').to_string())
        };
        let (Some(hmvc), Some(fmvc)) = (op("hmvc"), op("fmvc")) else {
            panic!("opening line without counters: {line}");
        };
        fens.push(format!("{} {hmvc} {fmvc}", fields[..4].join(" ")));
    }
    fens
}

fn shakmaty_position(fen: &str) -> Chess {
    let fen: Fen = fen
        .parse()
        .unwrap_or_else(|e| panic!("shakmaty FEN {fen}: {e}"));
    fen.into_position(CastlingMode::Standard)
        .unwrap_or_else(|e| panic!("shakmaty position: {e}"))
}

fn uci_of(m: &shakmaty::Move) -> String {
    m.to_uci(CastlingMode::Standard).to_string()
}

/// Counts of what the playouts reached, so the test can show that the
/// interesting cases really were compared.
#[derive(Default, Debug)]
struct Seen {
    positions: usize,
    moves: usize,
    checkmates: usize,
    stalemates: usize,
    insufficient: usize,
    one_side_insufficient: usize,
    en_passant: usize,
    castles: usize,
    promotions: usize,
    checks: usize,
    repetitions: usize,
    fifty: usize,
}

/// Compares one position in every way listed in the module docs.
fn compare(ours: &Position, theirs: &Chess, seen: &mut Seen) {
    let fen = ours.to_fen();
    let their_fen = Fen::from_position(theirs.clone(), EnPassantMode::Legal).to_string();
    assert_eq!(fen, their_fen, "FEN");
    assert_eq!(
        Position::from_fen(&fen).as_ref(),
        Ok(ours),
        "FEN round trip"
    );
    assert_eq!(
        ours.hash(),
        ours.compute_hash(),
        "incremental hash at {fen}"
    );

    let our_moves = ours.legal_moves();
    let their_moves = theirs.legal_moves();
    let our_set: BTreeSet<String> = our_moves.iter().map(|m| m.to_uci()).collect();
    let their_set: BTreeSet<String> = their_moves.iter().map(uci_of).collect();
    assert_eq!(our_set, their_set, "legal moves at {fen}");
    assert_eq!(our_moves.len(), our_set.len(), "duplicate moves at {fen}");
    assert_eq!(ours.count_legal_moves() as usize, our_moves.len());
    // The capture generator (quiescence search) yields exactly the captures,
    // en-passant captures and promotions among the legal moves.
    let captures: BTreeSet<String> = ours.legal_captures().iter().map(|m| m.to_uci()).collect();
    let expected: BTreeSet<String> = our_moves
        .iter()
        .filter(|m| {
            m.is_en_passant() || m.promotion().is_some() || ours.occupied().contains(m.to())
        })
        .map(|m| m.to_uci())
        .collect();
    assert_eq!(captures, expected, "captures at {fen}");

    assert_eq!(ours.is_check(), theirs.is_check(), "check at {fen}");
    let mate = ours.is_check() && our_moves.is_empty();
    let stalemate = !ours.is_check() && our_moves.is_empty();
    assert_eq!(mate, theirs.is_checkmate(), "checkmate at {fen}");
    assert_eq!(stalemate, theirs.is_stalemate(), "stalemate at {fen}");
    for (color, their_color) in [
        (Color::White, shakmaty::Color::White),
        (Color::Black, shakmaty::Color::Black),
    ] {
        let insufficient = ours.has_insufficient_material(color);
        assert_eq!(
            insufficient,
            theirs.has_insufficient_material(their_color),
            "{color} insufficient material at {fen}"
        );
        seen.one_side_insufficient += insufficient as usize;
    }
    assert_eq!(
        ours.is_insufficient_material(),
        theirs.is_insufficient_material(),
        "insufficient material at {fen}"
    );

    for their_move in &their_moves {
        let uci = uci_of(their_move);
        let mv = ours.parse_uci(&uci).expect("UCI of a legal move parses");
        assert_eq!(mv.to_uci(), uci, "UCI round trip");
        let san = ours.san(mv);
        let their_san = SanPlus::from_move(theirs.clone(), their_move).to_string();
        assert_eq!(san, their_san, "SAN of {uci} at {fen}");
        assert_eq!(ours.parse_san(&san), Ok(mv), "SAN {san} read back at {fen}");
        let mut after = theirs.clone();
        after.play_unchecked(their_move);
        let check = after.is_check();
        assert_eq!(ours.gives_check(mv), check, "{uci} gives check at {fen}");
        seen.checks += check as usize;
        seen.en_passant += mv.is_en_passant() as usize;
        seen.castles += mv.is_castle() as usize;
        seen.promotions += mv.promotion().is_some() as usize;
    }
    seen.positions += 1;
    seen.moves += our_moves.len();
    seen.checkmates += mate as usize;
    seen.stalemates += stalemate as usize;
    seen.insufficient += ours.is_insufficient_material() as usize;
}

/// One random game from `fen`, compared at every ply.
fn playout(fen: &str, rng: &mut SplitMix64, max_plies: usize, seen: &mut Seen) {
    let mut game = Game::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
    let mut theirs = shakmaty_position(fen);
    loop {
        let ours = game.position().clone();
        compare(&ours, &theirs, seen);
        if let Some(outcome) = game.outcome() {
            match outcome.termination {
                Termination::Checkmate | Termination::Stalemate => {
                    assert!(theirs.is_game_over())
                }
                Termination::InsufficientMaterial => assert!(theirs.is_insufficient_material()),
                Termination::ThreefoldRepetition => seen.repetitions += 1,
                Termination::FiftyMoves => seen.fifty += 1,
                other => panic!("Game::outcome gave a host's termination {other}"),
            }
            break;
        }
        if game.moves().len() >= max_plies {
            break;
        }
        // Half the time prefer captures and promotions, so that games
        // reach endgames (insufficient material, promotions, stalemates).
        let moves = ours.legal_moves();
        let captures = ours.legal_captures();
        let mv = if !captures.is_empty() && rng.below(2) == 0 {
            captures[rng.below(captures.len())]
        } else {
            moves[rng.below(moves.len())]
        };
        let their_move = theirs
            .legal_moves()
            .into_iter()
            .find(|m| uci_of(m) == mv.to_uci())
            .expect("shakmaty has the same move");
        theirs.play_unchecked(&their_move);
        game.play(mv).expect("a generated move is legal");
    }

    // The whole game survives PGN export and import.
    let result = game.outcome().map_or("*", |o| o.result());
    let pgn = write_pgn(&[], &game, result, None);
    let read = read_pgn(&pgn).unwrap_or_else(|e| panic!("{e}\n{pgn}"));
    assert_eq!(read.game, game, "PGN round trip\n{pgn}");
}

#[test]
fn random_playouts_agree_with_shakmaty() {
    let per_start: usize = std::env::var("ROOKERY_DIFF_PLAYOUTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(7);
    let mut rng = SplitMix64::new(0x5eed_2026);
    let mut seen = Seen::default();
    let fens = start_fens();
    assert!(fens.len() > 300, "start positions loaded");
    for fen in &fens {
        for _ in 0..per_start {
            playout(fen, &mut rng, 200, &mut seen);
        }
    }
    eprintln!("{seen:?}");
    // Every kind of special position was actually met.
    assert!(seen.positions > 50_000, "{seen:?}");
    assert!(seen.checkmates > 10, "{seen:?}");
    assert!(seen.stalemates > 10, "{seen:?}");
    assert!(seen.insufficient > 10, "{seen:?}");
    assert!(seen.en_passant > 10, "{seen:?}");
    assert!(seen.castles > 100, "{seen:?}");
    assert!(seen.promotions > 100, "{seen:?}");
    assert!(seen.checks > 1000, "{seen:?}");
    assert!(seen.repetitions > 0 && seen.fifty > 0, "{seen:?}");
}

/// Random sparse boards (kings plus up to a dozen random pieces, random
/// side, castling and en-passant fields) reach checks, pins and en-passant
/// cases that games rarely do. Both libraries must accept the same FENs
/// (except double checks no move can give, which shakmaty lets through and
/// we refuse), and agree on everything in [`compare`] where both accept.
#[test]
fn random_boards_agree_with_shakmaty() {
    let mut rng = SplitMix64::new(0xb0a2d);
    let mut seen = Seen::default();
    let mut accepted = 0;
    for _ in 0..100_000 {
        let mut board: [Option<u8>; 64] = [None; 64];
        for _ in 0..rng.below(13) {
            let piece = b"PNBRQpnbrq"[rng.below(10)];
            // Pawns never stand on the back ranks.
            let square = if piece.eq_ignore_ascii_case(&b'p') {
                8 + rng.below(48)
            } else {
                rng.below(64)
            };
            board[square] = Some(piece);
        }
        // A third of the boards get kings and rooks at home, with rights.
        let castling = if rng.below(3) == 0 {
            for (square, piece) in [
                (0, b'R'),
                (4, b'K'),
                (7, b'R'),
                (56, b'r'),
                (60, b'k'),
                (63, b'r'),
            ] {
                board[square] = Some(piece);
            }
            ["KQkq", "K", "Qk", "q"][rng.below(4)]
        } else {
            board[rng.below(64)] = Some(b'K');
            board[rng.below(64)] = Some(b'k');
            "-"
        };
        let turn = ["w", "b"][rng.below(2)];
        // A third get a pawn that has just made a double step, with an
        // enemy pawn beside it.
        let mut ep = "-".to_string();
        if rng.below(3) == 0 {
            let file = rng.below(8);
            let side = if file == 0 || (file < 7 && rng.below(2) == 0) {
                file + 1
            } else {
                file - 1
            };
            let (rank, pushed, capturer, dir) = if turn == "w" {
                (4, b'p', b'P', 1isize)
            } else {
                (3, b'P', b'p', -1)
            };
            board[rank * 8 + file] = Some(pushed);
            board[rank * 8 + side] = Some(capturer);
            board[((rank as isize + dir) * 8) as usize + file] = None;
            board[((rank as isize + 2 * dir) * 8) as usize + file] = None;
            ep = format!(
                "{}{}",
                (b'a' + file as u8) as char,
                if turn == "w" { 6 } else { 3 }
            );
        }
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
        let fen = format!("{placement} {turn} {castling} {ep} 0 1");

        let ours = Position::from_fen(&fen);
        let theirs = fen.parse::<Fen>().map_err(|e| e.to_string()).and_then(|f| {
            f.into_position::<Chess>(CastlingMode::Standard)
                .map_err(|e| e.to_string())
        });
        match (ours, theirs) {
            (Ok(ours), Ok(theirs)) => {
                compare(&ours, &theirs, &mut seen);
                accepted += 1;
            }
            (Err(_), Err(_)) => {}
            // Shakmaty accepts some double checks no move can give (two
            // knights, pawn and knight); we refuse them.
            (Err(rookery_engine::FenError::ImpossibleCheck), Ok(theirs)) => {
                assert!(theirs.checkers().count() >= 2, "{fen}")
            }
            (ours, theirs) => panic!("{fen}: rookery {ours:?}, shakmaty {theirs:?}"),
        }
    }
    eprintln!("{accepted} accepted, {seen:?}");
    assert!(accepted > 20_000, "{accepted}");
    assert!(seen.en_passant > 1_000 && seen.castles > 1_000, "{seen:?}");
}
