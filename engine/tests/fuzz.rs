//! The parsers never panic, whatever they are given.
//!
//! A seeded generator feeds FEN, SAN, UCI, PGN and UCI-protocol readers with
//! random bytes and with mutations of valid inputs (the mutations get past
//! the first syntax checks and reach the deeper code). Inputs that are
//! accepted must then behave: a parsed FEN writes back to itself and
//! generates moves with a consistent hash, agreeing with shakmaty whenever
//! shakmaty also accepts the position; a parsed PGN game exports and
//! re-imports to the same game.

use std::collections::BTreeSet;

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position as _};

use rookery_engine::pgn::{read_pgn, write_pgn};
use rookery_engine::rng::SplitMix64;
use rookery_engine::uci::{Command, Output, UciShell};
use rookery_engine::{Game, Position};

fn pick<'a>(rng: &mut SplitMix64, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len())]
}

/// Characters that matter to the grammars, plus some that do not.
const ALPHABET: &[u8] = b"pnbrqkPNBRQK12345678abcdefghwO0-x=+#!?/ .;{}()[]$\"*\\\n\t%e";
/// A few multi-byte characters, to catch slicing inside a UTF-8 sequence.
const WIDE: [&str; 5] = ["é", "♔", "\u{feff}", "ß", "𝄞"];

fn random_string(rng: &mut SplitMix64, max_len: usize) -> String {
    let len = rng.below(max_len + 1);
    let mut s = String::with_capacity(len);
    for _ in 0..len {
        match rng.below(20) {
            0 => s.push_str(WIDE[rng.below(WIDE.len())]),
            1 => s.push(char::from(rng.below(128) as u8)),
            _ => s.push(char::from(ALPHABET[rng.below(ALPHABET.len())])),
        }
    }
    s
}

/// Raw random bytes, made into a string the way a server would read an
/// untrusted body (invalid UTF-8 becomes U+FFFD).
fn random_bytes(rng: &mut SplitMix64, max_len: usize) -> String {
    let bytes: Vec<u8> = (0..rng.below(max_len + 1))
        .map(|_| rng.next_u64() as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Random edits: replace a character by one of its kind (a piece letter by
/// another, a digit by a digit: these keep the text close to valid),
/// replace, insert, delete, duplicate or swap.
fn mutate(rng: &mut SplitMix64, input: &str) -> String {
    const PIECES: &[u8] = b"pnbrqkPNBRQK";
    let mut chars: Vec<char> = input.chars().collect();
    for _ in 0..1 + rng.below(2) {
        let at = rng.below(chars.len() + 1);
        match rng.below(8) {
            6 | 7 if at < chars.len() => {
                if chars[at].is_ascii_digit() {
                    chars[at] = char::from(b'0' + rng.below(10) as u8);
                } else if PIECES.contains(&(chars[at] as u8)) {
                    chars[at] = char::from(PIECES[rng.below(PIECES.len())]);
                } else if chars[at].is_ascii_lowercase() {
                    chars[at] = char::from(b'a' + rng.below(8) as u8);
                }
            }
            0 if at < chars.len() => {
                chars[at] = random_string(rng, 1).chars().next().unwrap_or('x')
            }
            1 => chars
                .splice(at..at, random_string(rng, 3).chars())
                .for_each(drop),
            2 if at < chars.len() => {
                let end = (at + 1 + rng.below(6)).min(chars.len());
                chars.drain(at..end);
            }
            3 if at < chars.len() => {
                let end = (at + 1 + rng.below(8)).min(chars.len());
                let span: Vec<char> = chars[at..end].to_vec();
                chars.splice(at..at, span).for_each(drop);
            }
            4 if at < chars.len() => {
                let other = rng.below(chars.len());
                chars.swap(at, other);
            }
            _ => chars.insert(at.min(chars.len()), ' '),
        }
    }
    chars.into_iter().collect()
}

const FENS: [&str; 8] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",
    "8/8/8/K2pP2r/8/8/8/7k w - d6 0 1",
    "7k/8/8/8/8/8/8/K7 b - - 99 120",
];

const SANS: [&str; 16] = [
    "e4", "Nf3", "exd5", "O-O", "O-O-O", "0-0", "e8=Q", "exd8=N+", "Qa1b2", "R1a3", "Nbd7",
    "Kxe2#", "e8Q", "Bb5!?", "a1=R", "--",
];

const PGN: &str = "[Event \"Fuzz\"]\n[Site \"?\"]\n[Date \"2026.11.22\"]\n[Round \"1\"]\n\
[White \"a\"]\n[Black \"b\"]\n[Result \"1-0\"]\n\n\
1. e4 e5 2. Nf3 {comment} Nc6 (2... d6 3. d4 (3. Bc4)) 3. Bb5 $1 a6 4. Ba4 Nf6 5. O-O Be7 \
6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 ; rest of line\nNb8 10. d4 Nbd7 1-0\n";

/// Returns whether the FEN was accepted.
fn check_fen(fen: &str) -> bool {
    let Ok(pos) = Position::from_fen(fen) else {
        return false;
    };
    let written = pos.to_fen();
    assert_eq!(Position::from_fen(&written).as_ref(), Ok(&pos), "{fen}");
    assert_eq!(pos.hash(), pos.compute_hash(), "{fen}");
    let moves = pos.legal_moves();
    for &mv in &moves {
        let san = pos.san(mv);
        assert_eq!(pos.parse_san(&san), Ok(mv), "{fen} {san}");
        let next = pos.play(mv).expect("legal");
        assert_eq!(next.hash(), next.compute_hash(), "{fen} {mv}");
    }
    // Where shakmaty also accepts the position, the moves agree.
    let theirs: Option<Chess> = written
        .parse::<Fen>()
        .ok()
        .and_then(|f| f.into_position(CastlingMode::Standard).ok());
    if let Some(theirs) = theirs {
        let ours: BTreeSet<String> = moves.iter().map(|m| m.to_uci()).collect();
        let theirs: BTreeSet<String> = theirs
            .legal_moves()
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect();
        assert_eq!(ours, theirs, "{fen}");
    }
    true
}

/// Returns whether the PGN was accepted.
fn check_pgn(text: &str) -> bool {
    let Ok(read) = read_pgn(text) else {
        return false;
    };
    let result = read.result().unwrap_or("*").to_string();
    let pgn = write_pgn(&read.tags, &read.game, &result, None);
    let again = read_pgn(&pgn).unwrap_or_else(|e| panic!("{e}\n{pgn}"));
    assert_eq!(again.game, read.game, "{pgn}");
    true
}

#[test]
fn fen_reader_never_panics() {
    let mut rng = SplitMix64::new(1);
    let mut accepted = 0;
    for i in 0..20_000 {
        let text = if i % 8 == 0 {
            random_bytes(&mut rng, 90)
        } else if i % 4 == 0 {
            random_string(&mut rng, 90)
        } else {
            {
                let fen = pick(&mut rng, &FENS);
                mutate(&mut rng, fen)
            }
        };
        accepted += check_fen(&text) as usize;
    }
    // The mutations must reach the code behind the syntax checks.
    assert!(accepted > 1_000, "only {accepted} FENs accepted");
}

#[test]
fn san_and_uci_readers_never_panic() {
    let mut rng = SplitMix64::new(2);
    let mut accepted = 0;
    let positions: Vec<Position> = FENS
        .iter()
        .map(|f| Position::from_fen(f).expect("valid"))
        .collect();
    for i in 0..50_000 {
        let pos = &positions[rng.below(positions.len())];
        let text = match i % 3 {
            0 if i % 2 == 0 => random_bytes(&mut rng, 8),
            0 => random_string(&mut rng, 10),
            1 => {
                let san = pick(&mut rng, &SANS);
                mutate(&mut rng, san)
            }
            _ => {
                let moves = pos.legal_moves();
                let uci = moves[rng.below(moves.len())].to_uci();
                mutate(&mut rng, &uci)
            }
        };
        // Whatever parses must be a legal move that prints back sensibly.
        if let Ok(mv) = pos.parse_san(&text) {
            assert!(pos.is_legal(mv), "{text}");
            accepted += 1;
        }
        if let Ok(mv) = pos.parse_uci(&text) {
            // Castling reads in either spelling (`e1g1` or `e1h1`).
            let chess960 = pos
                .clone()
                .with_castling_mode(rookery_engine::CastlingMode::Chess960);
            assert!(
                text == mv.to_uci() || text == chess960.uci(mv),
                "{text} read as {mv}"
            );
            accepted += 1;
        }
    }
    assert!(accepted > 1_000, "only {accepted} moves accepted");
}

#[test]
fn pgn_reader_never_panics() {
    let mut rng = SplitMix64::new(3);
    assert!(check_pgn(PGN));
    let mut accepted = 0;
    for i in 0..5_000 {
        let text = if i % 10 == 0 {
            random_bytes(&mut rng, 300)
        } else if i % 5 == 0 {
            random_string(&mut rng, 300)
        } else {
            mutate(&mut rng, PGN)
        };
        accepted += check_pgn(&text) as usize;
    }
    assert!(accepted > 500, "only {accepted} PGNs accepted");
}

#[test]
fn uci_command_parser_never_panics() {
    let mut rng = SplitMix64::new(4);
    let lines = [
        "position startpos moves e2e4 e7e5",
        "position fen 4k3/8/8/8/8/8/8/4K3 w - - 0 1 moves e1e2",
        "go wtime 1000 btime 1000 winc 10 binc 10 movestogo 20",
        "go depth 5 nodes 1000 movetime 100 searchmoves e2e4",
        "setoption name Level value 3",
        "go perft 2",
    ];
    for _ in 0..20_000 {
        let line = pick(&mut rng, &lines);
        let line = if rng.below(4) == 0 {
            random_bytes(&mut rng, 40)
        } else {
            mutate(&mut rng, line)
        };
        let _ = Command::parse(&line);
    }
    // The shell itself survives mutated commands (deep perft aside: that
    // is a long computation, not a failure).
    let mut shell = UciShell::new(Output::new(std::io::sink()));
    for _ in 0..2_000 {
        let line = pick(&mut rng, &lines);
        let line = mutate(&mut rng, line);
        let command = Command::parse(&line);
        if matches!(&command, Command::Go(limits) if limits.perft.is_some_and(|d| d > 3)) {
            continue;
        }
        shell.handle(command);
    }
    shell.handle(Command::Quit);

    // A game fed arbitrary UCI move strings changes only on legal moves.
    let mut game = Game::default();
    for _ in 0..5_000 {
        let before = game.clone();
        let text = random_string(&mut rng, 5);
        if game.play_uci(&text).is_err() {
            assert_eq!(game, before);
        }
        if game.outcome().is_some() {
            game = Game::default();
        }
    }
}
