//! The UCI shell: the engine as a program that chess GUIs and match tools
//! drive through stdin/stdout (the Universal Chess Interface).
//!
//! Reading and thinking are on different threads. The main loop reads
//! commands line by line; `go` hands a copy of the position to a search
//! thread that prints `bestmove` itself when done. So `stop`, `isready` and
//! `quit` are answered while the engine thinks, as UCI requires. Lines are
//! parsed into a typed [`Command`] first, so the protocol's grammar lives in
//! one place and the loop only deals with meanings.
//!
//! Options: `Level` (the difficulty table), `UCI_LimitStrength` with
//! `UCI_Elo` (a rating on the same ladder, between levels by
//! interpolation), `Hash`, `Threads` (Lazy SMP), `MultiPV` and `Ponder`
//! (`go ponder` thinks on the opponent's time until `ponderhit` starts the
//! clock or `stop` asks for the move), `Move Overhead` (milliseconds kept
//! back from every time budget for the move's trip to the arbiter),
//! `EvalFile` (an evaluation network's file, read at once; `<built-in>`,
//! the default, is the network built into the engine), `UCI_Chess960` (off
//! by default; on, castling moves are written king-takes-rook, `e1h1`, in
//! `bestmove`, `info pv` and `go perft`, as the UCI convention for Chess960
//! says, and the standard two-square spelling is read only where it is no
//! king step) and `UseNNUE` (on by
//! default: full strength searches with that network; off, with the
//! hand-written evaluation). Levels 1–7, and `UCI_Elo` ratings in the lower
//! half of the way to full strength, always use the hand-written
//! evaluation their settings were calibrated with ([`level::Level`]).
//!
//! Unknown commands and malformed arguments are ignored, as the UCI
//! specification asks; where a GUI would otherwise be left guessing (a bad
//! FEN, an illegal move in `position`), an `info string` line says why and
//! the previous position is kept.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::game::Game;
use crate::level;
use crate::nnue::{self, Network};
use crate::perft;
use crate::position::{CastlingMode, Position};
use crate::search::{self, ClockBudget, Info, Limits, Searcher, Signals};
use crate::types::Color;

pub const ENGINE_NAME: &str = "Rookery";
pub const ENGINE_AUTHOR: &str = "the Rookery developers";

/// `EvalFile`'s name for the network built into the engine.
const BUILT_IN: &str = "<built-in>";

/// Difficulty levels offered by the `Level` option: the bounds of the
/// level table (see [`crate::level`]).
pub const LEVEL_MIN: u8 = level::MIN_LEVEL;
pub const LEVEL_MAX: u8 = level::MAX_LEVEL;
/// Transposition-table size bounds for the `Hash` option, in MiB.
pub const HASH_DEFAULT_MB: usize = 16;
pub const HASH_MIN_MB: usize = 1;
pub const HASH_MAX_MB: usize = 4096;
/// Search threads for the `Threads` option.
pub const THREADS_MAX: usize = 256;
/// Lines for the `MultiPV` option.
pub const MULTIPV_MAX: usize = 64;
/// Milliseconds for the `Move Overhead` option: kept back from every time
/// budget for the move's trip to the arbiter. The default is the overhead
/// the engine's time management was measured with; the range is
/// Stockfish's.
pub const MOVE_OVERHEAD_DEFAULT_MS: u64 = search::time::DEFAULT_MOVE_OVERHEAD.as_millis() as u64;
pub const MOVE_OVERHEAD_MAX_MS: u64 = 5000;

/// How strong the shell plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strength {
    /// A level of the difficulty table (`Level`).
    Level(u8),
    /// A rating on the same ladder (`UCI_LimitStrength` and `UCI_Elo`).
    Elo(u32),
}

impl Strength {
    /// The level's settings; `seed` draws between two depth caps.
    pub fn level(self, seed: u64) -> level::Level {
        match self {
            Strength::Level(number) => *level::level(number).unwrap_or(level::strongest()),
            Strength::Elo(elo) => level::at_elo(elo, seed),
        }
    }
}

/// The parameters of `go`. Times are as the GUI sent them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoLimits {
    pub wtime: Option<Duration>,
    pub btime: Option<Duration>,
    pub winc: Option<Duration>,
    pub binc: Option<Duration>,
    pub movestogo: Option<u32>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub mate: Option<u32>,
    pub movetime: Option<Duration>,
    pub infinite: bool,
    pub ponder: bool,
    /// Root moves to restrict the search to, in UCI notation.
    pub searchmoves: Vec<String>,
    /// `go perft N`: count the move tree instead of searching.
    pub perft: Option<u32>,
}

impl GoLimits {
    /// The clock of the side to move, if the GUI sent one.
    pub fn clock_for(&self, color: Color) -> Option<ClockBudget> {
        let (time, inc) = match color {
            Color::White => (self.wtime, self.winc),
            Color::Black => (self.btime, self.binc),
        };
        time.map(|remaining| ClockBudget {
            remaining,
            increment: inc.unwrap_or_default(),
        })
    }
}

/// Where the position of a `position` command starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartPosition {
    Startpos,
    Fen(String),
}

/// One line of UCI input, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Uci,
    IsReady,
    UciNewGame,
    SetOption {
        name: String,
        value: Option<String>,
    },
    Position {
        start: StartPosition,
        moves: Vec<String>,
    },
    Go(GoLimits),
    Stop,
    PonderHit,
    Quit,
    /// Anything else, including commands we accept and ignore (`debug`,
    /// `register`) and malformed ones.
    Ignored,
}

impl Command {
    pub fn parse(line: &str) -> Command {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("uci") => Command::Uci,
            Some("isready") => Command::IsReady,
            Some("ucinewgame") => Command::UciNewGame,
            Some("setoption") => parse_setoption(words),
            Some("position") => parse_position(words),
            Some("go") => Command::Go(parse_go(words)),
            Some("stop") => Command::Stop,
            Some("ponderhit") => Command::PonderHit,
            Some("quit") => Command::Quit,
            _ => Command::Ignored,
        }
    }
}

/// `setoption name <words...> [value <words...>]`; names may hold spaces.
fn parse_setoption<'a>(mut words: impl Iterator<Item = &'a str>) -> Command {
    if words.next() != Some("name") {
        return Command::Ignored;
    }
    let mut name = Vec::new();
    let mut value: Option<Vec<&str>> = None;
    for word in words {
        match &mut value {
            None if word == "value" => value = Some(Vec::new()),
            None => name.push(word),
            Some(v) => v.push(word),
        }
    }
    if name.is_empty() {
        return Command::Ignored;
    }
    Command::SetOption {
        name: name.join(" "),
        value: value.map(|v| v.join(" ")),
    }
}

fn parse_position<'a>(mut words: impl Iterator<Item = &'a str>) -> Command {
    let start = match words.next() {
        Some("startpos") => StartPosition::Startpos,
        Some("fen") => {
            let fen: Vec<&str> = words.by_ref().take_while(|w| *w != "moves").collect();
            let moves = words.map(str::to_string).collect();
            return Command::Position {
                start: StartPosition::Fen(fen.join(" ")),
                moves,
            };
        }
        _ => return Command::Ignored,
    };
    match words.next() {
        None => Command::Position {
            start,
            moves: Vec::new(),
        },
        Some("moves") => Command::Position {
            start,
            moves: words.map(str::to_string).collect(),
        },
        Some(_) => Command::Ignored,
    }
}

fn parse_go<'a>(words: impl Iterator<Item = &'a str>) -> GoLimits {
    let mut limits = GoLimits::default();
    let mut words = words.peekable();
    let ms = |w: Option<&str>| {
        // Some GUIs send negative times when a clock has run out.
        w.and_then(|w| w.parse::<i64>().ok())
            .map(|ms| Duration::from_millis(ms.max(0) as u64))
    };
    let num = |w: Option<&str>| w.and_then(|w| w.parse::<u64>().ok());
    while let Some(word) = words.next() {
        match word {
            "wtime" => limits.wtime = ms(words.next()),
            "btime" => limits.btime = ms(words.next()),
            "winc" => limits.winc = ms(words.next()),
            "binc" => limits.binc = ms(words.next()),
            "movetime" => limits.movetime = ms(words.next()),
            "movestogo" => limits.movestogo = num(words.next()).map(|n| n as u32),
            "depth" => limits.depth = num(words.next()).map(|n| n.min(u32::MAX as u64) as u32),
            "mate" => limits.mate = num(words.next()).map(|n| n.min(u32::MAX as u64) as u32),
            "nodes" => limits.nodes = num(words.next()),
            "perft" => limits.perft = num(words.next()).map(|n| n.min(u32::MAX as u64) as u32),
            "infinite" => limits.infinite = true,
            "ponder" => limits.ponder = true,
            "searchmoves" => {
                while let Some(mv) = words.next_if(|w| looks_like_uci_move(w)) {
                    limits.searchmoves.push(mv.to_string());
                }
            }
            _ => {}
        }
    }
    limits
}

fn looks_like_uci_move(word: &str) -> bool {
    let b = word.as_bytes();
    (4..=5).contains(&b.len())
        && (b'a'..=b'h').contains(&b[0])
        && (b'1'..=b'8').contains(&b[1])
        && (b'a'..=b'h').contains(&b[2])
        && (b'1'..=b'8').contains(&b[3])
}

/// Where the shell writes. Shared with the search thread, which prints
/// `info` and `bestmove` itself; each line is written and flushed whole
/// under the lock, so lines from the two threads never interleave.
#[derive(Clone)]
pub struct Output(Arc<Mutex<Box<dyn Write + Send>>>);

impl Output {
    pub fn new(writer: impl Write + Send + 'static) -> Output {
        Output(Arc::new(Mutex::new(Box::new(writer))))
    }

    pub fn line(&self, text: &str) {
        // A poisoned lock only means another thread panicked mid-line; the
        // writer itself is still usable.
        let mut out = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // If the GUI closed our stdout there is nobody left to tell.
        let _ = writeln!(out, "{text}").and_then(|()| out.flush());
    }
}

/// Everything a search thread needs: its own copy of the game state and
/// settings, so the shell can take new commands while it runs.
#[derive(Debug, Clone)]
pub struct SearchJob {
    pub position: Position,
    /// Hashes of the positions before `position` in this game, oldest first.
    pub history: Vec<u64>,
    pub strength: Strength,
    /// Lines to report (`MultiPV`).
    pub multipv: usize,
    /// Kept back from every time budget (`Move Overhead`).
    pub move_overhead: Duration,
    pub limits: GoLimits,
}

impl SearchJob {
    /// The search limits for this `go`, restricted by the strength options.
    pub fn search_limits(&self, seed: u64) -> Limits {
        let turn = self.position.turn();
        let go = &self.limits;
        let limits = Limits {
            // `go mate N` is answered by searching deep enough to see it.
            depth: match (go.depth, go.mate) {
                (Some(d), _) => Some(d),
                (None, Some(m)) => Some(m.saturating_mul(2).saturating_add(1)),
                (None, None) => None,
            },
            nodes: go.nodes,
            movetime: go.movetime,
            clock: go.clock_for(turn),
            moves_to_go: go.movestogo,
            infinite: go.infinite,
            max_time: None,
            handicap: None,
            multipv: self.multipv,
            move_overhead: Some(self.move_overhead),
        };
        self.strength.level(seed).restrict(&limits, seed)
    }
}

/// One `info` line for a finished iteration, its moves spelled as
/// [`crate::moves::Move::to_uci`] does (castling `e1g1`).
pub fn info_line(info: &Info) -> String {
    let pv: Vec<String> = info.pv.iter().map(|m| m.to_string()).collect();
    info_text(info, &pv)
}

/// One `info` line for a finished iteration searched from `root`, its
/// moves spelled in `root`'s castling mode (king-takes-rook in Chess960).
pub fn info_line_from(root: &Position, info: &Info) -> String {
    info_text(info, &line_uci(root, &info.pv))
}

/// The UCI spelling of each move of `line`, played one after the other
/// from `root`, in `root`'s castling mode.
pub fn line_uci(root: &Position, line: &[crate::moves::Move]) -> Vec<String> {
    let mut position = root.clone();
    line.iter()
        .map(|&mv| {
            let uci = position.uci(mv);
            position.play_unchecked(mv);
            uci
        })
        .collect()
}

fn info_text(info: &Info, pv: &[String]) -> String {
    format!(
        "info depth {} seldepth {} multipv {} score {} nodes {} nps {} hashfull {} time {} pv {}",
        info.depth,
        info.seldepth,
        info.multipv,
        info.score,
        info.nodes,
        info.nps(),
        info.hashfull,
        info.time.as_millis(),
        pv.join(" ")
    )
}

/// What runs on the search thread for `go`: think, printing an `info` line
/// per finished iteration and line, then print `bestmove`.
///
/// `pondering` is raised for `go ponder` and lowered by `ponderhit`: until
/// then the search has no time limit; from then on the clock of the `go`
/// command runs (the search goes on, it does not restart). UCI forbids
/// `bestmove` before `stop` after `go infinite`, and before `stop` or
/// `ponderhit` after `go ponder`, so a search that finishes early (a
/// depth limit, a mate found) waits for the word.
pub fn run_search(
    job: SearchJob,
    searcher: &Mutex<Searcher>,
    stop: &AtomicBool,
    pondering: &AtomicBool,
    out: &Output,
) {
    let seed = job.position.hash() ^ job.history.len() as u64;
    let limits = job.search_limits(seed);
    let signals = Signals {
        stop,
        pondering: job.limits.ponder.then_some(pondering),
    };
    // The shell only touches the searcher between searches; a poisoned
    // lock means an earlier search panicked, and its table is still usable.
    let mut searcher = searcher.lock().unwrap_or_else(|e| e.into_inner());
    let result = searcher.search_with(&job.position, &job.history, &limits, signals, |info| {
        out.line(&info_line_from(&job.position, info))
    });
    drop(searcher);
    while (job.limits.infinite || (job.limits.ponder && pondering.load(Ordering::Acquire)))
        && !stop.load(Ordering::Acquire)
    {
        std::thread::sleep(Duration::from_millis(2));
    }
    match (result.best_move, result.pv.get(1)) {
        (Some(mv), Some(&ponder)) => {
            let line = line_uci(&job.position, &[mv, ponder]);
            out.line(&format!("bestmove {} ponder {}", line[0], line[1]))
        }
        (Some(mv), None) => out.line(&format!("bestmove {}", job.position.uci(mv))),
        // No legal move (mate or stalemate): UCI's null move.
        (None, _) => out.line("bestmove 0000"),
    }
}

/// A search in progress on its own thread.
struct RunningSearch {
    stop: Arc<AtomicBool>,
    /// Raised while a `go ponder` search ponders; `ponderhit` lowers it.
    pondering: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl RunningSearch {
    fn stop_and_wait(self) {
        self.stop.store(true, Ordering::Release);
        // A panicking search already reported itself on stderr; the shell
        // carries on with the next command.
        let _ = self.thread.join();
    }
}

/// The shell's state between commands.
pub struct UciShell {
    out: Output,
    game: Game,
    level: u8,
    limit_strength: bool,
    elo: u32,
    multipv: usize,
    move_overhead: Duration,
    hash_mb: usize,
    /// The network read from `EvalFile` (`None`: the built-in one), and
    /// whether `UseNNUE` lets full strength use it.
    network: Option<Arc<Network>>,
    use_nnue: bool,
    /// `UCI_Chess960`: how castling moves are written and read.
    castling_mode: CastlingMode,
    /// Kept from move to move so the transposition table and history carry
    /// over; shared with the search thread, which holds it while thinking.
    searcher: Arc<Mutex<Searcher>>,
    search: Option<RunningSearch>,
}

impl UciShell {
    pub fn new(out: Output) -> UciShell {
        UciShell {
            out,
            game: Game::default(),
            level: LEVEL_MAX,
            limit_strength: false,
            elo: level::MAX_ELO,
            multipv: 1,
            move_overhead: Duration::from_millis(MOVE_OVERHEAD_DEFAULT_MS),
            hash_mb: HASH_DEFAULT_MB,
            network: None,
            use_nnue: true,
            castling_mode: CastlingMode::Standard,
            searcher: Arc::new(Mutex::new(Searcher::new(HASH_DEFAULT_MB))),
            search: None,
        }
    }

    /// Handles one command; returns false after `quit`.
    pub fn handle(&mut self, command: Command) -> bool {
        match command {
            Command::Uci => {
                self.out.line(&format!("id name {ENGINE_NAME}"));
                self.out.line(&format!("id author {ENGINE_AUTHOR}"));
                self.out.line(&format!(
                    "option name Level type spin default {LEVEL_MAX} min {LEVEL_MIN} max {LEVEL_MAX}"
                ));
                self.out.line(&format!(
                    "option name Hash type spin default {HASH_DEFAULT_MB} min {HASH_MIN_MB} max {HASH_MAX_MB}"
                ));
                self.out.line(&format!(
                    "option name Threads type spin default 1 min 1 max {THREADS_MAX}"
                ));
                self.out.line(&format!(
                    "option name MultiPV type spin default 1 min 1 max {MULTIPV_MAX}"
                ));
                self.out.line(&format!(
                    "option name Move Overhead type spin default {MOVE_OVERHEAD_DEFAULT_MS} min 0 max {MOVE_OVERHEAD_MAX_MS}"
                ));
                self.out.line("option name Ponder type check default false");
                self.out
                    .line("option name UCI_LimitStrength type check default false");
                self.out.line(&format!(
                    "option name UCI_Elo type spin default {} min {} max {}",
                    level::MAX_ELO,
                    level::MIN_ELO,
                    level::MAX_ELO
                ));
                self.out.line(&format!(
                    "option name EvalFile type string default {BUILT_IN}"
                ));
                self.out.line("option name UseNNUE type check default true");
                self.out
                    .line("option name UCI_Chess960 type check default false");
                self.out.line("uciok");
            }
            Command::IsReady => self.out.line("readyok"),
            Command::UciNewGame => {
                self.finish_search();
                self.game = self.new_game(Position::startpos());
                self.lock_searcher().clear();
            }
            Command::SetOption { name, value } => self.set_option(&name, value.as_deref()),
            Command::Position { start, moves } => self.set_position(start, &moves),
            Command::Go(limits) => self.go(limits),
            Command::Stop => {
                if let Some(search) = &self.search {
                    search.stop.store(true, Ordering::Release);
                }
            }
            // The opponent played the expected move: the pondering search
            // goes on, now on our clock.
            Command::PonderHit => {
                if let Some(search) = &self.search {
                    search.pondering.store(false, Ordering::Release);
                }
            }
            Command::Quit => {
                self.finish_search();
                return false;
            }
            Command::Ignored => {}
        }
        true
    }

    /// Stops the running search, if any, and waits for its `bestmove`.
    pub fn finish_search(&mut self) {
        if let Some(search) = self.search.take() {
            search.stop_and_wait();
        }
    }

    fn set_option(&mut self, name: &str, value: Option<&str>) {
        let number = value.and_then(|v| v.trim().parse::<i64>().ok());
        let check = value.and_then(|v| match v.trim().to_ascii_lowercase().as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        });
        let in_range = |min: usize, max: usize| {
            number
                .filter(|&n| (min as i64..=max as i64).contains(&n))
                .map(|n| n as usize)
        };
        match name.to_ascii_lowercase().as_str() {
            "level" => match number {
                Some(n) if (LEVEL_MIN as i64..=LEVEL_MAX as i64).contains(&n) => {
                    self.level = n as u8
                }
                _ => self.info(&format!("Level must be {LEVEL_MIN} to {LEVEL_MAX}")),
            },
            "hash" => match number {
                Some(n) if (HASH_MIN_MB as i64..=HASH_MAX_MB as i64).contains(&n) => {
                    self.finish_search();
                    self.hash_mb = n as usize;
                    self.lock_searcher().resize(self.hash_mb);
                }
                _ => self.info(&format!("Hash must be {HASH_MIN_MB} to {HASH_MAX_MB}")),
            },
            "threads" => match in_range(1, THREADS_MAX) {
                Some(threads) => {
                    self.finish_search();
                    self.lock_searcher().set_threads(threads);
                }
                None => self.info(&format!("Threads must be 1 to {THREADS_MAX}")),
            },
            "multipv" => match in_range(1, MULTIPV_MAX) {
                Some(lines) => self.multipv = lines,
                None => self.info(&format!("MultiPV must be 1 to {MULTIPV_MAX}")),
            },
            "move overhead" => match number {
                Some(ms) if (0..=MOVE_OVERHEAD_MAX_MS as i64).contains(&ms) => {
                    self.move_overhead = Duration::from_millis(ms as u64)
                }
                _ => self.info(&format!(
                    "Move Overhead must be 0 to {MOVE_OVERHEAD_MAX_MS}"
                )),
            },
            "uci_limitstrength" => match check {
                Some(on) => self.limit_strength = on,
                None => self.info("UCI_LimitStrength must be true or false"),
            },
            "uci_elo" => match in_range(level::MIN_ELO as usize, level::MAX_ELO as usize) {
                Some(elo) => self.elo = elo as u32,
                None => self.info(&format!(
                    "UCI_Elo must be {} to {}",
                    level::MIN_ELO,
                    level::MAX_ELO
                )),
            },
            // Only tells us that the GUI may send `go ponder`; pondering
            // itself needs no setting.
            "ponder" => {
                if check.is_none() {
                    self.info("Ponder must be true or false");
                }
            }
            "evalfile" => {
                let path = value.map(str::trim).unwrap_or("");
                if path.is_empty() || path == BUILT_IN || path == "<empty>" {
                    self.network = None;
                    self.info("EvalFile: the built-in network");
                } else {
                    match Network::from_file(path) {
                        Ok(network) => {
                            self.info(&format!(
                                "EvalFile {path}: a {}x2 network ({})",
                                network.hidden(),
                                if network.uses_avx2() {
                                    "AVX2"
                                } else {
                                    "portable"
                                }
                            ));
                            self.network = Some(Arc::new(network));
                        }
                        Err(e) => {
                            self.info(&format!("EvalFile {path} not read, kept as it was: {e}"))
                        }
                    }
                }
            }
            "usennue" => match check {
                Some(on) => self.use_nnue = on,
                None => self.info("UseNNUE must be true or false"),
            },
            "uci_chess960" => match check {
                Some(on) => {
                    self.finish_search();
                    self.castling_mode = if on {
                        CastlingMode::Chess960
                    } else {
                        CastlingMode::Standard
                    };
                    self.game.set_castling_mode(self.castling_mode);
                }
                None => self.info("UCI_Chess960 must be true or false"),
            },
            _ => self.info(&format!("unknown option {name}")),
        }
    }

    /// The evaluation a search at `strength` uses: the network (from
    /// `EvalFile`, or the built-in one) if `UseNNUE` is on and the level
    /// plays with one, else the hand-written evaluation.
    fn network_for(&self, strength: Strength) -> Option<Arc<Network>> {
        // Whether a level uses the network does not depend on the seed.
        (self.use_nnue && strength.level(0).network)
            .then(|| self.network.clone().unwrap_or_else(nnue::built_in))
    }

    fn set_position(&mut self, start: StartPosition, moves: &[String]) {
        // The FEN's castling field may be X-FEN or Shredder-FEN either way.
        let mut game = match start {
            StartPosition::Startpos => self.new_game(Position::startpos()),
            StartPosition::Fen(fen) => match Position::from_fen(&fen) {
                Ok(position) => self.new_game(position),
                Err(e) => return self.info(&format!("bad FEN, position unchanged: {e}")),
            },
        };
        for uci in moves {
            if let Err(e) = game.play_uci(uci) {
                return self.info(&format!("{e}, position unchanged"));
            }
        }
        self.game = game;
    }

    /// A game from `position` in the castling mode `UCI_Chess960` sets.
    fn new_game(&self, position: Position) -> Game {
        Game::new(position.with_castling_mode(self.castling_mode))
    }

    /// `go`: perft runs right here (it is a test of the move generator and
    /// prints its own result); everything else goes to a search thread.
    fn go(&mut self, limits: GoLimits) {
        self.finish_search();
        if let Some(depth) = limits.perft {
            return self.perft(depth);
        }
        let hashes = self.game.hashes();
        let strength = if self.limit_strength {
            Strength::Elo(self.elo)
        } else {
            Strength::Level(self.level)
        };
        let network = self.network_for(strength);
        self.lock_searcher().set_network(network);
        let job = SearchJob {
            position: self.game.position().clone(),
            history: hashes[..hashes.len() - 1].to_vec(),
            strength,
            multipv: self.multipv,
            move_overhead: self.move_overhead,
            limits,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let pondering = Arc::new(AtomicBool::new(job.limits.ponder));
        let out = self.out.clone();
        let (thread_stop, thread_pondering) = (Arc::clone(&stop), Arc::clone(&pondering));
        let searcher = Arc::clone(&self.searcher);
        let spawned = std::thread::Builder::new()
            .name("search".into())
            .spawn(move || run_search(job, &searcher, &thread_stop, &thread_pondering, &out));
        match spawned {
            Ok(thread) => {
                self.search = Some(RunningSearch {
                    stop,
                    pondering,
                    thread,
                })
            }
            Err(e) => self.info(&format!("cannot start a search thread: {e}")),
        }
    }

    /// Perft divided by root move, in Stockfish's format.
    fn perft(&self, depth: u32) {
        let position = self.game.position();
        let mut total = 0;
        for (mv, nodes) in perft::divide(position, depth) {
            self.out.line(&format!("{}: {nodes}", position.uci(mv)));
            total += nodes;
        }
        if depth == 0 {
            total = 1;
        }
        self.out.line("");
        self.out.line(&format!("Nodes searched: {total}"));
    }

    /// The searcher, once no search holds it.
    fn lock_searcher(&self) -> std::sync::MutexGuard<'_, Searcher> {
        // A poisoned lock means a search panicked; the searcher is still
        // in a usable state (at worst its table holds junk moves, which
        // are only ever tried if legal).
        self.searcher.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn info(&self, text: &str) {
        self.out.line(&format!("info string {text}"));
    }
}

/// Runs the shell until `quit` or the end of input.
pub fn run(input: impl BufRead, out: Output) {
    let mut shell = UciShell::new(out);
    for line in input.lines() {
        // A read error (not valid UTF-8, say) ends input like EOF would.
        let Ok(line) = line else { break };
        if !shell.handle(Command::parse(&line)) {
            return;
        }
    }
    shell.finish_search();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_parameters() {
        let Command::Go(limits) = Command::parse(
            "go wtime 1000 btime -5 winc 10 binc 20 movestogo 30 depth 7 nodes 5000 \
             movetime 250 infinite searchmoves e2e4 g1f3 ponder",
        ) else {
            panic!("not go");
        };
        assert_eq!(limits.wtime, Some(Duration::from_millis(1000)));
        assert_eq!(limits.btime, Some(Duration::ZERO));
        assert_eq!(limits.winc, Some(Duration::from_millis(10)));
        assert_eq!(limits.binc, Some(Duration::from_millis(20)));
        assert_eq!(limits.movestogo, Some(30));
        assert_eq!(limits.depth, Some(7));
        assert_eq!(limits.nodes, Some(5000));
        assert_eq!(limits.movetime, Some(Duration::from_millis(250)));
        assert!(limits.infinite && limits.ponder);
        assert_eq!(limits.searchmoves, ["e2e4", "g1f3"]);
        assert_eq!(
            limits.clock_for(Color::Black),
            Some(ClockBudget {
                remaining: Duration::ZERO,
                increment: Duration::from_millis(20)
            })
        );
        assert_eq!(
            Command::parse("go perft 4"),
            Command::Go(GoLimits {
                perft: Some(4),
                ..GoLimits::default()
            })
        );
    }

    #[test]
    fn parses_position_and_setoption() {
        assert_eq!(
            Command::parse("position startpos moves e2e4 e7e5"),
            Command::Position {
                start: StartPosition::Startpos,
                moves: vec!["e2e4".into(), "e7e5".into()]
            }
        );
        assert_eq!(
            Command::parse("position fen 4k3/8/8/8/8/8/8/4K3 w - - 0 1"),
            Command::Position {
                start: StartPosition::Fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1".into()),
                moves: vec![]
            }
        );
        assert_eq!(
            Command::parse("setoption name Clear Hash"),
            Command::SetOption {
                name: "Clear Hash".into(),
                value: None
            }
        );
        assert_eq!(
            Command::parse("setoption name Level value 3"),
            Command::SetOption {
                name: "Level".into(),
                value: Some("3".into())
            }
        );
        assert_eq!(Command::parse("position"), Command::Ignored);
        assert_eq!(Command::parse("xyzzy"), Command::Ignored);
        assert_eq!(Command::parse(""), Command::Ignored);
    }

    #[test]
    fn strength_and_multipv_shape_the_search_limits() {
        let job = |strength| SearchJob {
            position: Position::startpos(),
            history: Vec::new(),
            strength,
            multipv: 4,
            move_overhead: Duration::from_millis(MOVE_OVERHEAD_DEFAULT_MS),
            limits: GoLimits {
                depth: Some(12),
                ..GoLimits::default()
            },
        };
        let full = job(Strength::Level(LEVEL_MAX)).search_limits(1);
        assert_eq!(
            (full.depth, full.nodes, full.handicap),
            (Some(12), None, None)
        );
        assert_eq!(full.multipv, 4);
        // Halfway between levels 5 and 6 on the ladder.
        let elo = job(Strength::Elo(1760)).search_limits(1);
        assert_eq!(elo.nodes, level::at_elo(1760, 1).max_nodes);
        assert_eq!(elo.handicap.map(|h| h.temperature_cp), Some(14));
        assert_eq!(elo.multipv, 4);

        // Good values are taken, bad ones leave the setting as it was.
        let mut shell = UciShell::new(Output::new(std::io::sink()));
        for (multipv, elo, limit) in [("4", "1760", "true"), ("0", "100", "maybe")] {
            for (name, value) in [
                ("MultiPV", multipv),
                ("UCI_Elo", elo),
                ("UCI_LimitStrength", limit),
            ] {
                shell.handle(Command::parse(&format!(
                    "setoption name {name} value {value}"
                )));
            }
            let settings = (shell.multipv, shell.elo, shell.limit_strength);
            assert_eq!(settings, (4, 1760, true));
        }
        shell.handle(Command::parse("setoption name Threads value 2"));
        assert_eq!(shell.lock_searcher().threads(), 2);

        // `Move Overhead` reaches the search's limits, at any strength;
        // out of range leaves it as it was.
        for (value, kept) in [("250", 250), ("5001", 250), ("-1", 250), ("0", 0)] {
            shell.handle(Command::parse(&format!(
                "setoption name Move Overhead value {value}"
            )));
            assert_eq!(shell.move_overhead, Duration::from_millis(kept), "{value}");
        }
        let overhead = |strength| SearchJob {
            move_overhead: Duration::from_millis(300),
            ..job(strength)
        };
        for strength in [
            Strength::Level(LEVEL_MAX),
            Strength::Level(2),
            Strength::Elo(1760),
        ] {
            assert_eq!(
                overhead(strength).search_limits(1).move_overhead,
                Some(Duration::from_millis(300))
            );
        }
    }

    #[test]
    fn bad_position_keeps_the_old_one() {
        let mut shell = UciShell::new(Output::new(std::io::sink()));
        shell.handle(Command::parse("position startpos moves e2e4"));
        let before = shell.game.clone();
        shell.handle(Command::parse("position startpos moves e2e4 e2e4"));
        assert_eq!(shell.game, before);
        shell.handle(Command::parse("position fen 8/8/8 w - - 0 1"));
        assert_eq!(shell.game, before);
        shell.handle(Command::parse("setoption name Level value 9"));
        assert_eq!(shell.level, LEVEL_MAX);
        shell.handle(Command::parse("setoption name level value 2"));
        assert_eq!(shell.level, 2);
    }
}
