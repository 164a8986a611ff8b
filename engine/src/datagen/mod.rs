//! Training data for an evaluation network: positions from the engine's
//! games against itself, each scored by its own fixed-node search and
//! labelled with the game's result (`rookery-engine datagen`).
//!
//! - [`record`]: the 32-byte record and its layout.
//! - [`provenance`]: the sidecar beside each data file naming the engine,
//!   network and settings that made its records, and each run's seed.
//! - [`DataFile`]: a file of records that only ever grows by whole records,
//!   so a generator can be stopped at any moment (killed, even) and started
//!   again on the same file.
//! - [`SelfPlay`]: one game at a time, and the rules for which of its
//!   positions are kept.
//! - [`generate`]: games on worker threads, written by one writer, until a
//!   target or a stop.
//!
//! Why the positions are chosen as they are (the filters strong engines'
//! generators use):
//! - **Varied openings**: a random position of an opening book (by default
//!   the 300 balanced openings in `engine/tests/data/openings.epd`), then a
//!   few random legal moves (as many for each side), so no two games are
//!   alike; a start the search
//!   already rates as lost for one side is thrown away, as it would only
//!   teach the net about one-sided games.
//! - **A node budget, not a clock**: the same work for every move on a busy
//!   machine as on an idle one, and a seed replays a run.
//! - **Either evaluation** ([`Settings::network`]): the first data was
//!   played and scored by the hand-written evaluation; the next generation
//!   can be played and scored by the engine with its network, so each net
//!   learns from a stronger teacher than the last.
//! - **Quiet positions only**: not in check, and the search's best move is
//!   not a capture, en passant or a promotion. The network is asked only
//!   about positions that quiescence search found quiet; a position whose
//!   best move wins material has a score the static picture cannot show.
//! - **No mate scores** (a distance to mate is not an evaluation), and not
//!   the first plies after the opening (the random moves' aftermath).
//! - **Adjudication** shortens games whose result is already clear, the
//!   way match tools do: a side 10 pawns ahead by both sides' searches for
//!   8 plies in a row wins; past the 80th ply, a score within 0.1 pawns for
//!   20 plies in a row is a draw; so is the 400th ply.

pub mod provenance;
pub mod record;

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::game::Game;
use crate::nnue::Network;
use crate::position::Position;
use crate::rng::SplitMix64;
use crate::search::{Limits, Score, Searcher};
use crate::types::Color;
pub use record::{GameResult, PackedRecord, RecordError, RECORD_BYTES};

/// Scores at least this large (centipawns) for [`WIN_PLIES`] plies in a row
/// win the game.
const WIN_SCORE: i32 = 1000;
const WIN_PLIES: u32 = 8;
/// Scores at most this large for [`DRAW_PLIES`] plies in a row, after
/// [`DRAW_FROM_PLY`], draw it.
const DRAW_SCORE: i32 = 10;
const DRAW_PLIES: u32 = 20;
const DRAW_FROM_PLY: usize = 80;

/// How a generator plays and what it keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Nodes each move's search may visit.
    pub nodes: u64,
    /// Transposition table of each worker, MiB; cleared before each game.
    pub hash_mb: usize,
    /// Random legal moves played by each side from the book position, at
    /// least …
    pub random_moves_min: usize,
    /// … and at most (uniformly chosen per game). Each side plays as many:
    /// a random move is usually a weakening one, and a side that played one
    /// more of them starts the game behind.
    pub random_moves_max: usize,
    /// Positions of the first plies of each game (counted from the book
    /// position, random moves included) are not kept.
    pub skip_plies: usize,
    /// A game whose start the search scores beyond this (centipawns, for
    /// either side) is not played.
    pub max_opening_score: i32,
    /// A game still going after this many plies is a draw.
    pub max_plies: usize,
    /// The random stream (with the file's length: see [`generate`]).
    pub seed: u64,
    /// The evaluation the search plays and scores with: `None` the
    /// hand-written one, else a network (the next generation of data
    /// scored by the engine that plays with the last net).
    pub network: Option<Arc<Network>>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            nodes: 5_000,
            // A 5,000-node search fills a few percent of even 1 MB, and a
            // table that stays in cache plays about a fifth more positions
            // a CPU second than 16 MB did (`tools/nnue.md`, fifteenth
            // session).
            hash_mb: 1,
            random_moves_min: 1,
            random_moves_max: 3,
            skip_plies: 8,
            max_opening_score: 300,
            max_plies: 400,
            seed: 1,
            network: None,
        }
    }
}

/// A file of records, opened to be appended to.
///
/// Records are written whole (one `write_all` of a game's records), and a
/// file that does not end on a record boundary (a writer killed in the
/// middle of a write) is cut back to the last whole record when opened. So
/// a restart continues the file and never leaves a damaged record in it.
/// One generator per file: two at once could cut each other's records.
pub struct DataFile {
    file: File,
    records: u64,
}

impl DataFile {
    /// Opens or creates `path`; returns the file and how many bytes of a
    /// torn last record were cut off (0 for a clean file).
    pub fn open(path: &Path) -> io::Result<(DataFile, u64)> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let len = file.metadata()?.len();
        let torn = len % RECORD_BYTES as u64;
        if torn != 0 {
            file.set_len(len - torn)?;
            file.sync_all()?;
        }
        let records = (len - torn) / RECORD_BYTES as u64;
        Ok((DataFile { file, records }, torn))
    }

    /// Records in the file.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Appends `records` in one write.
    pub fn append(&mut self, records: &[PackedRecord]) -> io::Result<()> {
        let bytes: Vec<u8> = records.iter().flat_map(|r| r.0).collect();
        self.file.write_all(&bytes)?;
        self.records += records.len() as u64;
        Ok(())
    }
}

/// Reads every whole record of `reader` (a trailing partial record, which
/// only a writer that is still running or was killed leaves, is ignored).
pub fn read_records(mut reader: impl Read) -> io::Result<Vec<PackedRecord>> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes)?;
    Ok(bytes
        .chunks_exact(RECORD_BYTES)
        .map(|chunk| {
            let mut record = [0u8; RECORD_BYTES];
            record.copy_from_slice(chunk);
            PackedRecord(record)
        })
        .collect())
}

/// One finished game's kept positions.
#[derive(Clone, Debug)]
pub struct GameRecords {
    pub records: Vec<PackedRecord>,
    pub result: GameResult,
    /// Plies played from the book position.
    pub plies: usize,
}

/// Plays games against itself, one at a time.
pub struct SelfPlay<'a> {
    settings: Settings,
    book: &'a [Position],
    searcher: Searcher,
    rng: SplitMix64,
}

impl<'a> SelfPlay<'a> {
    /// Games from `book` (the start position when it is empty), drawn from
    /// the random stream `seed`.
    pub fn new(settings: Settings, book: &'a [Position], seed: u64) -> SelfPlay<'a> {
        let mut searcher = Searcher::new(settings.hash_mb);
        searcher.set_network(settings.network.clone());
        SelfPlay {
            searcher,
            settings,
            book,
            rng: SplitMix64::new(seed),
        }
    }

    /// One game. `None` when no game was played: the random opening ended
    /// the game or left it unbalanced, or `stop` was raised.
    pub fn play_game(&mut self, stop: &AtomicBool) -> Option<GameRecords> {
        let mut game = self.opening()?;
        self.searcher.clear();
        let limits = Limits {
            nodes: Some(self.settings.nodes),
            ..Limits::default()
        };
        // Kept positions with their scores; the result comes at the end.
        let mut kept: Vec<(Position, i16)> = Vec::new();
        let mut winning_streak = 0i32; // > 0: White far ahead so long, < 0: Black
        let mut level_streak = 0;
        let mut winner = None;
        let start_ply = game.moves().len();
        loop {
            let ply = game.moves().len();
            if let Some(outcome) = game.outcome() {
                winner = outcome.winner;
                break;
            }
            if ply >= self.settings.max_plies {
                break;
            }
            let position = game.position().clone();
            let result = self
                .searcher
                .search(&position, game.hashes(), &limits, stop, |_| {});
            if stop.load(Ordering::Acquire) {
                return None;
            }
            let mv = result.best_move?;
            let own = match result.score {
                Score::Cp(cp) => Some(cp),
                Score::Mate(_) => None,
            };
            let white_view = match result.score {
                Score::Cp(cp) => cp,
                Score::Mate(m) => 10_000 * m.signum(),
            } * position.turn().fold(1, -1);
            if ply == start_ply && white_view.abs() > self.settings.max_opening_score {
                return None;
            }

            let quiet_move = mv.promotion().is_none()
                && !mv.is_en_passant()
                && position.role_at(mv.to()).is_none();
            if ply >= self.settings.skip_plies && !position.is_check() && quiet_move {
                if let Some(cp) = own {
                    let white_cp = cp * position.turn().fold(1, -1);
                    let clamped = white_cp.clamp(i16::MIN as i32, i16::MAX as i32) as i16;
                    kept.push((position, clamped));
                }
            }

            winning_streak = match white_view {
                v if v >= WIN_SCORE => winning_streak.max(0) + 1,
                v if v <= -WIN_SCORE => winning_streak.min(0) - 1,
                _ => 0,
            };
            if winning_streak.unsigned_abs() >= WIN_PLIES {
                winner = Some(if winning_streak > 0 {
                    Color::White
                } else {
                    Color::Black
                });
                break;
            }
            level_streak = if white_view.abs() <= DRAW_SCORE {
                level_streak + 1
            } else {
                0
            };
            if ply >= DRAW_FROM_PLY && level_streak >= DRAW_PLIES {
                break;
            }
            game.play(mv).ok()?;
        }
        let result = GameResult::from_winner(winner);
        let records = kept
            .iter()
            // A legal position always fits; a book position that does not
            // (more than 32 men) is left out rather than stopping the run.
            .filter_map(|(position, score)| PackedRecord::pack(position, *score, result).ok())
            .collect();
        Some(GameRecords {
            records,
            result,
            plies: game.moves().len(),
        })
    }

    /// A book position and the random moves after it; `None` if the game
    /// ended on the way.
    fn opening(&mut self) -> Option<Game> {
        let start = match self.book.len() {
            0 => Position::startpos(),
            n => self.book[self.rng.below(n)].clone(),
        };
        let mut game = Game::new(start);
        let (min, max) = (
            self.settings.random_moves_min,
            self.settings
                .random_moves_max
                .max(self.settings.random_moves_min),
        );
        for _ in 0..2 * (min + self.rng.below(max - min + 1)) {
            let moves = game.position().legal_moves();
            if moves.is_empty() {
                return None;
            }
            game.play(moves[self.rng.below(moves.len())]).ok()?;
        }
        game.outcome().is_none().then_some(game)
    }
}

/// Reads an opening book: one position per line, the FEN's first four
/// fields at the start of the line (EPD or FEN); `#` lines and blank lines
/// are skipped. Returns the positions and the lines that could not be read.
pub fn read_book(text: &str) -> (Vec<Position>, Vec<String>) {
    let mut positions = Vec::new();
    let mut bad = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().take(4).collect();
        match Position::from_fen(&format!("{} 0 1", fields.join(" "))) {
            Ok(position) => positions.push(position),
            Err(_) => bad.push(line.to_string()),
        }
    }
    (positions, bad)
}

/// How a run is going.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    /// Games finished and written in this run.
    pub games: u64,
    /// Their results, for White.
    pub white_wins: u64,
    pub draws: u64,
    pub black_wins: u64,
    /// Records written in this run.
    pub written: u64,
    /// Records in the file, from before this run too.
    pub in_file: u64,
    pub elapsed: Duration,
}

impl Progress {
    /// Records written per second in this run.
    pub fn rate(&self) -> f64 {
        self.written as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// What [`generate`] does besides playing.
pub struct RunOptions<'a> {
    /// Worker threads, one game each at a time.
    pub threads: usize,
    /// Stop once the file holds this many records (`None`: until `stop`).
    pub target: Option<u64>,
    /// Raised: finish the current write and return.
    pub stop: &'a AtomicBool,
    /// How often `report` hears about progress.
    pub report_every: Duration,
}

/// Plays games on `options.threads` workers and appends their records to
/// `file` until it holds `options.target` records or `options.stop` is
/// raised; `report` hears about progress every `options.report_every` and
/// once at the end, which it also returns.
///
/// Worker `w`'s random stream is drawn from the settings' seed, the
/// number of records already in the file and `w`: a restart on a grown
/// file plays new games rather than repeating the ones it has, and one
/// worker on the same seed and file replays the same games.
pub fn generate(
    settings: &Settings,
    book: &[Position],
    file: &mut DataFile,
    options: &RunOptions<'_>,
    mut report: impl FnMut(&Progress),
) -> io::Result<Progress> {
    let start = Instant::now();
    let mut progress = Progress {
        in_file: file.records(),
        ..Progress::default()
    };
    let done = |p: &Progress| options.target.is_some_and(|t| p.in_file >= t);
    if done(&progress) {
        report(&progress);
        return Ok(progress);
    }
    // The workers stop on this, raised by the writer when it stops: at
    // the caller's stop, at the target, or when it cannot write.
    let quit = AtomicBool::new(false);
    let run_seed = SplitMix64::new(settings.seed ^ file.records().rotate_left(32)).next_u64();
    let outcome = std::thread::scope(|scope| {
        let (sender, games) = mpsc::sync_channel::<GameRecords>(options.threads.max(1) * 2);
        for worker in 0..options.threads.max(1) as u64 {
            let sender = sender.clone();
            let quit = &quit;
            let worker_seed = run_seed.wrapping_add(worker.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut self_play = SelfPlay::new(settings.clone(), book, worker_seed);
            scope.spawn(move || {
                while !quit.load(Ordering::Acquire) {
                    if let Some(game) = self_play.play_game(quit) {
                        if sender.send(game).is_err() {
                            return; // the writer has finished
                        }
                    }
                }
            });
        }
        drop(sender);
        let mut last_report = Instant::now();
        let result = loop {
            if options.stop.load(Ordering::Acquire) || done(&progress) {
                break Ok(());
            }
            match games.recv_timeout(Duration::from_millis(200)) {
                Ok(game) => {
                    if let Err(e) = file.append(&game.records) {
                        break Err(e);
                    }
                    progress.games += 1;
                    match game.result {
                        GameResult::WhiteWins => progress.white_wins += 1,
                        GameResult::Draw => progress.draws += 1,
                        GameResult::BlackWins => progress.black_wins += 1,
                    }
                    progress.written += game.records.len() as u64;
                    progress.in_file = file.records();
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                // Every worker has stopped (none could start).
                Err(mpsc::RecvTimeoutError::Disconnected) => break Ok(()),
            }
            if last_report.elapsed() >= options.report_every {
                progress.elapsed = start.elapsed();
                report(&progress);
                last_report = Instant::now();
            }
        };
        // Nothing more is written: the workers' searches abort on `quit`,
        // and a game finished meanwhile is dropped with the channel (its
        // worker's send fails, and it returns).
        quit.store(true, Ordering::Release);
        drop(games);
        result
    });
    progress.elapsed = start.elapsed();
    report(&progress);
    outcome.map(|()| progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Settings {
        Settings {
            nodes: 300,
            hash_mb: 1,
            max_plies: 60,
            ..Settings::default()
        }
    }

    #[test]
    fn kept_positions_pass_the_filters() {
        let (book, bad) = read_book(include_str!("../../tests/data/openings.epd"));
        assert_eq!((book.len(), bad.len()), (300, 0));
        let stop = AtomicBool::new(false);
        let settings = tiny();
        let mut self_play = SelfPlay::new(settings.clone(), &book, 3);
        let mut games = 0;
        let mut records = 0;
        // Some random openings are thrown away; 4 games come long before 40.
        for _ in 0..40 {
            let Some(game) = self_play.play_game(&stop) else {
                continue;
            };
            games += 1;
            assert!(game.plies <= settings.max_plies);
            for record in &game.records {
                let position = record.position().expect("a whole record");
                assert!(!position.is_check(), "{record:?}");
                assert_eq!(record.result(), Ok(game.result));
                assert!(i32::from(record.score()).abs() < crate::search::MATE_BOUND);
            }
            records += game.records.len();
            if games == 4 {
                break;
            }
        }
        assert_eq!(games, 4);
        assert!(records > 0);
    }

    #[test]
    fn the_same_seed_plays_the_same_games() {
        let stop = AtomicBool::new(false);
        let play = |seed| {
            let mut self_play = SelfPlay::new(tiny(), &[], seed);
            (0..3)
                .filter_map(|_| self_play.play_game(&stop))
                .flat_map(|g| g.records)
                .collect::<Vec<_>>()
        };
        assert_eq!(play(5), play(5));
        assert_ne!(play(5), play(6));
    }

    #[test]
    fn two_workers_fill_a_file_and_a_stop_ends_the_run() {
        let path = std::env::temp_dir().join(format!(
            "rookery-datagen-{}-workers.bin",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path); // left from an earlier run, or absent
        let (mut file, torn) = DataFile::open(&path).unwrap();
        assert_eq!((file.records(), torn), (0, 0));
        let stop = AtomicBool::new(false);
        let mut options = RunOptions {
            threads: 2,
            target: Some(150),
            stop: &stop,
            report_every: Duration::from_secs(3600),
        };
        let mut reports = 0;
        let progress = generate(&tiny(), &[], &mut file, &options, |_| reports += 1).unwrap();
        assert!(progress.in_file >= 150, "{progress:?}");
        assert_eq!(progress.written, progress.in_file);
        assert_eq!(
            progress.games,
            progress.white_wins + progress.draws + progress.black_wins
        );
        assert_eq!(reports, 1, "only the final report within an hour");
        let on_disk = read_records(File::open(&path).unwrap()).unwrap();
        assert_eq!(on_disk.len() as u64, progress.in_file);
        assert!(on_disk.iter().all(|r| r.position().is_ok()));

        // Without a target only the stop ends a run; raised, it ends at once.
        stop.store(true, Ordering::Release);
        options.target = None;
        let stopped = generate(&tiny(), &[], &mut file, &options, |_| {}).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            stopped.in_file * RECORD_BYTES as u64
        );
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_book_line_that_is_not_a_position_is_reported() {
        let (book, bad) = read_book("# comment\n\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - c0 \"x\";\nnonsense\n");
        assert_eq!(book, [Position::startpos()]);
        assert_eq!(bad, ["nonsense"]);
    }
}
