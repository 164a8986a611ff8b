//! Drives the real `rookery-engine` binary through stdin/stdout, as a GUI
//! would. Every wait for output has a timeout, so a silent engine fails the
//! test instead of hanging it.

use std::time::Duration;

use rookery_engine::Position;

mod uci_engine;
use uci_engine::Engine;

#[test]
fn handshake_and_options() {
    let mut engine = Engine::start();
    engine.send("uci");
    let lines = engine.read_until(|l| l == "uciok");
    assert!(lines.contains(&"id name Rookery".to_string()), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("id author ")));
    assert!(lines.contains(&"option name Level type spin default 8 min 1 max 8".to_string()));
    assert!(lines
        .iter()
        .any(|l| l.starts_with("option name Hash type spin")));
    for option in [
        "option name Threads type spin default 1 min 1 max 256",
        "option name MultiPV type spin default 1 min 1 max 64",
        "option name Ponder type check default false",
        "option name Move Overhead type spin default 50 min 0 max 5000",
        "option name UCI_LimitStrength type check default false",
        "option name UCI_Elo type spin default 2500 min 850 max 2500",
    ] {
        assert!(lines.contains(&option.to_string()), "{option}: {lines:?}");
    }
    engine.send("xyzzy unknown command");
    engine.send("setoption name Level value 3");
    engine.send("isready");
    assert_eq!(engine.next_line(), "readyok");
}

/// `Move Overhead` as lichess-bot sets it: values outside 0..5000 are
/// refused with an `info string`, and the largest overhead on a clock far
/// smaller than it still gets a legal move (the budget keeps a share of the
/// clock; it neither hangs nor gives up the move).
#[test]
fn move_overhead_is_an_option_and_a_tiny_clock_still_gets_a_move() {
    let mut engine = Engine::start();
    engine.send("setoption name Move Overhead value 5001");
    assert!(engine
        .next_line()
        .starts_with("info string Move Overhead must be"));
    engine.send("setoption name Move Overhead value 5000");
    engine.send("isready");
    assert_eq!(engine.next_line(), "readyok", "5000 is taken silently");
    let moves = ["e2e4", "c7c5", "g1f3"];
    for go in [
        "go wtime 20 btime 20",
        "go wtime 1 btime 1 winc 0 binc 0",
        "go wtime 5000 btime 30 movestogo 1",
        "go movetime 10",
    ] {
        engine.send(&format!("position startpos moves {}", moves.join(" ")));
        engine.send(go);
        let lines = engine.read_until(|l| l.starts_with("bestmove "));
        let best = uci_engine::bestmove(lines.last().expect("bestmove"));
        let mut position = Position::startpos();
        for uci in moves {
            position = position.play(position.parse_uci(uci).unwrap()).unwrap();
        }
        assert!(position.parse_uci(&best).is_ok(), "{go}: bestmove {best}");
    }
}

#[test]
fn go_perft_in_stockfish_format() {
    let mut engine = Engine::start();
    engine.send("position startpos");
    engine.send("go perft 3");
    let lines = engine.read_until(|l| l.starts_with("Nodes searched"));
    let (moves, tail) = lines.split_at(20);
    assert_eq!(tail, ["", "Nodes searched: 8902"]);
    let mut moves = moves.to_vec();
    moves.sort();
    let mut expected = [
        "a2a3: 380",
        "b2b3: 420",
        "c2c3: 420",
        "d2d3: 539",
        "e2e3: 599",
        "f2f3: 380",
        "g2g3: 420",
        "h2h3: 380",
        "a2a4: 420",
        "b2b4: 421",
        "c2c4: 441",
        "d2d4: 560",
        "e2e4: 600",
        "f2f4: 401",
        "g2g4: 421",
        "h2h4: 420",
        "b1a3: 400",
        "b1c3: 440",
        "g1f3: 440",
        "g1h3: 400",
    ];
    expected.sort();
    assert_eq!(moves, expected);

    // Kiwipete after a move, from a FEN with moves: the counts follow the
    // position, and the total is the sum of the lines.
    engine.send(
        "position fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1 \
         moves e1g1",
    );
    engine.send("go perft 2");
    let lines = engine.read_until(|l| l.starts_with("Nodes searched"));
    let sum: u64 = lines[..lines.len() - 2]
        .iter()
        .filter_map(|l| l.split_once(": ")?.1.parse::<u64>().ok())
        .sum();
    let total: u64 = lines.last().unwrap()["Nodes searched: ".len()..]
        .parse()
        .unwrap();
    assert_eq!(sum, total);
    let after_castle =
        Position::from_fen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R4RK1 b kq - 1 1")
            .unwrap();
    assert_eq!(total, rookery_engine::perft::perft(&after_castle, 2));
}

#[test]
fn go_returns_a_legal_bestmove() {
    let mut engine = Engine::start();
    engine.send("ucinewgame");
    engine.send("position startpos moves e2e4 e7e5 g1f3");
    engine.send("go depth 1");
    let lines = engine.read_until(|l| l.starts_with("bestmove "));
    let best = lines.last().unwrap()["bestmove ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let mut position = Position::startpos();
    for uci in ["e2e4", "e7e5", "g1f3"] {
        position = position.play(position.parse_uci(uci).unwrap()).unwrap();
    }
    assert!(position.parse_uci(&best).is_ok(), "illegal bestmove {best}");

    // Clock parameters, from a position with black to move and one reply.
    engine.send("position fen 7k/8/8/8/8/8/8/R5K1 b - - 0 1");
    engine.send("go wtime 1000 btime 1000 winc 10 binc 10");
    let lines = engine.read_until(|l| l.starts_with("bestmove "));
    assert!(lines.last().unwrap().starts_with("bestmove h8"));
}

#[test]
fn infinite_search_waits_for_stop_and_mate_has_no_move() {
    let mut engine = Engine::start();
    engine.send("position startpos");
    engine.send("go infinite");
    // The engine must still answer while it thinks, and not give a
    // bestmove until told to stop (`info` lines may come first).
    engine.send("isready");
    let before_ready = engine.read_until(|l| l == "readyok");
    assert!(before_ready
        .iter()
        .all(|l| l.starts_with("info ") || l == "readyok"));
    engine.send("stop");
    let lines = engine.read_until(|l| l.starts_with("bestmove "));
    let best = lines.last().unwrap().split_whitespace().nth(1).unwrap();
    assert!(Position::startpos().parse_uci(best).is_ok());

    engine.send("position startpos moves f2f3 e7e5 g2g4 d8h4");
    engine.send("go depth 3");
    assert_eq!(
        engine
            .read_until(|l| l.starts_with("bestmove "))
            .last()
            .unwrap(),
        "bestmove 0000"
    );
}

#[test]
fn bad_input_is_reported_and_ignored() {
    let mut engine = Engine::start();
    engine.send("position fen not a fen");
    assert!(engine.next_line().starts_with("info string"));
    engine.send("position startpos moves e2e5");
    assert!(engine.next_line().starts_with("info string"));
    engine.send("go perft 1");
    let lines = engine.read_until(|l| l.starts_with("Nodes searched"));
    assert_eq!(lines.last().unwrap(), "Nodes searched: 20");
}

#[test]
fn quit_ends_the_process() {
    let mut engine = Engine::start();
    engine.send("quit");
    for _ in 0..500 {
        if let Some(status) = engine.child.try_wait().expect("wait") {
            assert!(status.success());
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("engine did not exit after quit");
}

/// `UCI_Chess960`: off by default; on, castling is written king takes
/// rook in `go perft` and `bestmove`, read that way in `position ...
/// moves`, and `position fen` takes X-FEN or Shredder-FEN castling.
#[test]
fn chess960_castling_through_the_binary() {
    use std::collections::BTreeSet;

    use rookery_engine::CastlingMode;

    let mut engine = Engine::start();
    engine.send("uci");
    let lines = engine.read_until(|l| l == "uciok");
    let option = "option name UCI_Chess960 type check default false";
    assert!(lines.contains(&option.to_string()), "{lines:?}");
    engine.send("setoption name UCI_Chess960 value true");

    // King e1 between rooks b1 and g1 (Black the same): O-O puts the king
    // on the g1 rook's square, so only king-takes-rook tells it apart.
    let shredder = "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1";
    let xfen = "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w KQkq - 0 1";
    let perft = |engine: &mut Engine, position: &str| -> BTreeSet<String> {
        engine.send(position);
        engine.send("go perft 2");
        let lines = engine.read_until(|l| l.starts_with("Nodes searched"));
        lines[..lines.len() - 2].iter().cloned().collect()
    };
    let expected = |fen: &str, moves: &[&str]| -> BTreeSet<String> {
        let mut pos = Position::from_fen(fen)
            .unwrap()
            .with_castling_mode(CastlingMode::Chess960);
        for uci in moves {
            pos = pos.play(pos.parse_uci(uci).unwrap()).unwrap();
        }
        rookery_engine::perft::divide(&pos, 2)
            .into_iter()
            .map(|(mv, nodes)| format!("{}: {nodes}", pos.uci(mv)))
            .collect()
    };
    let start = perft(&mut engine, &format!("position fen {shredder}"));
    assert!(start.iter().any(|l| l.starts_with("e1g1: ")), "{start:?}");
    assert!(start.iter().any(|l| l.starts_with("e1b1: ")), "{start:?}");
    assert_eq!(start, expected(shredder, &[]));
    assert_eq!(perft(&mut engine, &format!("position fen {xfen}")), start);

    // Both castle, king takes rook; the position follows.
    let moves = ["e1g1", "e8b8"];
    let after = perft(
        &mut engine,
        &format!("position fen {xfen} moves {}", moves.join(" ")),
    );
    assert_eq!(after, expected(xfen, &moves));
    // The king on g1 steps to h1, the rook on f1 goes along the rank.
    assert!(
        after.contains("g1h1: 22") && after.contains("f1e1: 22"),
        "{after:?}"
    );

    // A search's best move and pv are spelled so too: every move of the
    // pv reads back in the Chess960 position it is played from.
    engine.send("setoption name UCI_Chess960 value true");
    engine.send(&format!("position fen {shredder}"));
    engine.send("go depth 4");
    let lines = engine.read_until(|l| l.starts_with("bestmove "));
    let best = uci_engine::bestmove(lines.last().expect("bestmove"));
    let start = Position::from_fen(shredder)
        .unwrap()
        .with_castling_mode(CastlingMode::Chess960);
    assert!(start.parse_uci(&best).is_ok(), "{best}");
    for line in lines.iter().filter(|l| l.contains(" pv ")) {
        let mut pos = start.clone();
        for uci in line.split(" pv ").nth(1).unwrap().split_whitespace() {
            let mv = pos.parse_uci(uci).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(pos.uci(mv), uci);
            pos = pos.play(mv).unwrap();
        }
    }

    // Off again: the standard spelling.
    engine.send("setoption name UCI_Chess960 value false");
    engine.send("position fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
    engine.send("go perft 1");
    let lines = engine.read_until(|l| l.starts_with("Nodes searched"));
    assert!(lines.contains(&"e1g1: 1".to_string()), "{lines:?}");
    assert!(!lines.contains(&"e1h1: 1".to_string()), "{lines:?}");
}
