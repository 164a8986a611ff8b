//! Self-play data for the Texel tuner: the engine plays itself at a fixed
//! node budget from varied openings and writes the quiet positions of each
//! game with the game's result.
//!
//! Usage: `cargo run --release -p rookery-engine --example selfplay --
//! --games N [--nodes N] [--seed S] [--random-plies N] [--out FILE]`
//! (defaults: 5000 nodes a move, seed 1, up to 4 random plies, standard
//! output). Each output line is `FEN | RESULT`, the result from White's
//! point of view: `1.0`, `0.5` or `0.0`. Lines are appended, so several runs
//! (different seeds) can fill one file. The recipe is in `tools/README.md`.
//!
//! Why these choices:
//! - Openings: a random one of the 300 balanced book positions of
//!   `engine/tests/data/openings.epd`, then up to `--random-plies` random
//!   legal moves, so games do not repeat and the data covers more than the
//!   engine's favourite lines.
//! - A node budget, not a clock: the games are the same on a busy machine
//!   as on an idle one, and a seed replays a run exactly.
//! - Quiet positions only: not in check, and the search's best move is not a
//!   capture or promotion. The evaluation is only ever asked about quiet
//!   positions (quiescence search resolves the rest), so that is what it
//!   should be fitted to. Positions the search sees as mate are left out,
//!   and so are the opening's first 8 plies (book, not engine).
//! - Adjudication keeps games short without changing their result: a side
//!   ahead by 10 pawns for 8 plies in a row wins, and after move 60 a score
//!   within 0.1 pawns for 20 plies in a row is a draw; 400 plies is a draw.

use std::fs::OpenOptions;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use rookery_engine::rng::SplitMix64;
use rookery_engine::search::{Limits, Score, Searcher};
use rookery_engine::{Color, Game, Position};

const OPENINGS: &str = include_str!("../tests/data/openings.epd");

struct Options {
    games: usize,
    nodes: u64,
    seed: u64,
    random_plies: usize,
    out: Option<String>,
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(options) => options,
        Err(problem) => {
            eprintln!(
                "selfplay: {problem}\nusage: selfplay --games N [--nodes N] [--seed S] \
                 [--random-plies N] [--out FILE]"
            );
            return ExitCode::from(2);
        }
    };
    let openings: Vec<Position> = OPENINGS
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let fen: Vec<&str> = l.split_whitespace().take(4).collect();
            Position::from_fen(&format!("{} 0 1", fen.join(" "))).ok()
        })
        .collect();
    if openings.is_empty() {
        eprintln!("selfplay: no opening positions");
        return ExitCode::FAILURE;
    }
    let sink: Box<dyn Write> = match &options.out {
        Some(path) => match OpenOptions::new().create(true).append(true).open(path) {
            Ok(file) => Box::new(file),
            Err(e) => {
                eprintln!("selfplay: cannot open {path}: {e}");
                return ExitCode::FAILURE;
            }
        },
        None => Box::new(io::stdout()),
    };
    let mut sink = BufWriter::new(sink);

    let mut rng = SplitMix64::new(options.seed);
    let mut searchers = [Searcher::new(16), Searcher::new(16)];
    let (mut white_wins, mut draws, mut black_wins, mut kept) = (0, 0, 0, 0);
    for game_number in 0..options.games {
        let opening = &openings[rng.below(openings.len())];
        let Some(game) = random_start(opening, options.random_plies, &mut rng) else {
            continue;
        };
        for searcher in &mut searchers {
            searcher.clear();
        }
        let (result, positions) = play(game, options.nodes, &mut searchers);
        let text = match result {
            Some(Color::White) => {
                white_wins += 1;
                "1.0"
            }
            Some(Color::Black) => {
                black_wins += 1;
                "0.0"
            }
            None => {
                draws += 1;
                "0.5"
            }
        };
        for fen in &positions {
            if let Err(e) = writeln!(sink, "{fen} | {text}") {
                eprintln!("selfplay: write failed: {e}");
                return ExitCode::FAILURE;
            }
        }
        kept += positions.len();
        if (game_number + 1) % 10 == 0 {
            eprintln!(
                "{} games (+{white_wins} ={draws} -{black_wins} for White), {kept} positions",
                game_number + 1
            );
        }
    }
    if let Err(e) = sink.flush() {
        eprintln!("selfplay: write failed: {e}");
        return ExitCode::FAILURE;
    }
    eprintln!("done: +{white_wins} ={draws} -{black_wins} for White, {kept} positions");
    ExitCode::SUCCESS
}

/// The opening plus up to `max_plies` random legal moves; `None` if the
/// game ended on the way (rare: then the caller skips it).
fn random_start(opening: &Position, max_plies: usize, rng: &mut SplitMix64) -> Option<Game> {
    let mut game = Game::new(opening.clone());
    for _ in 0..rng.below(max_plies + 1) {
        let moves = game.position().legal_moves();
        if moves.is_empty() {
            return None;
        }
        game.play(moves[rng.below(moves.len())]).ok()?;
    }
    game.outcome().is_none().then_some(game)
}

/// Plays one game to its end; returns the winner (`None`: draw) and the
/// FENs of its quiet positions.
fn play(mut game: Game, nodes: u64, searchers: &mut [Searcher; 2]) -> (Option<Color>, Vec<String>) {
    let stop = AtomicBool::new(false);
    let limits = Limits {
        nodes: Some(nodes),
        ..Limits::default()
    };
    let mut positions = Vec::new();
    let mut winning_streak = 0i32; // > 0: White far ahead so long, < 0: Black
    let mut quiet_streak = 0;
    for ply in 0..400 {
        if let Some(outcome) = game.outcome() {
            return (outcome.winner, positions);
        }
        let pos = game.position().clone();
        let side = pos.turn();
        let searcher = &mut searchers[side.index()];
        let result = searcher.search(&pos, game.hashes(), &limits, &stop, |_| {});
        let Some(mv) = result.best_move else {
            break;
        };
        // The score from White's point of view; mates as ±10,000.
        let own = match result.score {
            Score::Cp(cp) => Some(cp),
            Score::Mate(_) => None,
        };
        let white_view = match result.score {
            Score::Cp(cp) => cp,
            Score::Mate(m) => 10_000 * m.signum(),
        } * side.fold(1, -1);

        let quiet_move =
            mv.promotion().is_none() && !mv.is_en_passant() && pos.role_at(mv.to()).is_none();
        if ply >= 8 && !pos.is_check() && quiet_move && own.is_some_and(|cp| cp.abs() < 2000) {
            positions.push(pos.to_fen());
        }

        winning_streak = match white_view {
            v if v >= 1000 => winning_streak.max(0) + 1,
            v if v <= -1000 => winning_streak.min(0) - 1,
            _ => 0,
        };
        if winning_streak.abs() >= 8 {
            let winner = if winning_streak > 0 {
                Color::White
            } else {
                Color::Black
            };
            return (Some(winner), positions);
        }
        quiet_streak = if white_view.abs() <= 10 {
            quiet_streak + 1
        } else {
            0
        };
        if ply >= 120 && quiet_streak >= 20 {
            return (None, positions);
        }
        if game.play(mv).is_err() {
            break;
        }
    }
    (None, positions)
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        games: 0,
        nodes: 5_000,
        seed: 1,
        random_plies: 4,
        out: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        let number = |text: String| -> Result<u64, String> {
            text.parse()
                .map_err(|_| format!("{flag}: not a number: {text:?}"))
        };
        match flag.as_str() {
            "--games" => options.games = number(value()?)? as usize,
            "--nodes" => options.nodes = number(value()?)?.max(1),
            "--seed" => options.seed = number(value()?)?,
            "--random-plies" => options.random_plies = number(value()?)? as usize,
            "--out" => options.out = Some(value()?),
            _ => return Err(format!("unknown argument {flag:?}")),
        }
    }
    if options.games == 0 {
        return Err("--games is required and must be at least 1".into());
    }
    Ok(options)
}
