//! `rookery-engine datagen`: the command line of the training-data
//! generator ([`rookery_engine::datagen`]).
//!
//! A subcommand of the engine binary rather than a separate tool: the
//! generator is the engine's own search, so the binary that plays is the
//! binary that scores, it is built and shipped with it (one
//! `cargo build --release -p rookery-engine`), and the tests drive it from
//! outside as they drive UCI.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rookery_engine::datagen::provenance::{self, Identity, Run};
use rookery_engine::datagen::{self, DataFile, Progress, RunOptions, Settings};
use rookery_engine::nnue;
use rookery_engine::Position;

/// The repository's 300 balanced openings, the default book.
const OPENINGS: &str = include_str!("../tests/data/openings.epd");

pub const USAGE: &str =
    "usage: rookery-engine datagen (--out FILE | --dir DIR) [--positions N] [--nodes N] \
[--threads N] [--hash MB] [--book builtin|startpos|FILE] [--random-moves MIN-MAX] \
[--skip-plies N] [--max-opening-score CP] [--max-plies N] [--seed S] [--report-secs N] \
[--eval hand|built-in|NETFILE]
  Appends 32-byte records (layout: engine/src/datagen/record.rs) to FILE until it holds
  N positions (default: until killed); a restart continues the file. --eval: the evaluation
  that plays and scores (default hand: the hand-written one; built-in: the engine's network).
  FILE.meta records the engine commit, network hash and settings (a run that differs is
  refused) and each run's seed; --dir DIR names the file after them, so one command keeps
  adding to one file per engine.";

struct Command {
    out: PathBuf,
    identity: Identity,
    /// `--eval` as given, for the first log line.
    eval: String,
    settings: Settings,
    book: Vec<Position>,
    threads: usize,
    target: Option<u64>,
    report_every: Duration,
}

pub fn run(args: &[String]) -> ExitCode {
    let command = match parse(args) {
        Ok(command) => command,
        Err(problem) => {
            eprintln!("rookery-engine datagen: {problem}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = provenance::check_file(&command.out, &command.identity) {
        eprintln!("rookery-engine datagen: {}: {e}", command.out.display());
        return ExitCode::from(2);
    }
    let (mut file, torn) = match DataFile::open(&command.out) {
        Ok(opened) => opened,
        Err(e) => {
            eprintln!(
                "rookery-engine datagen: cannot open {}: {e}",
                command.out.display()
            );
            return ExitCode::FAILURE;
        }
    };
    let s = &command.settings;
    let run = Run {
        from_record: file.records(),
        seed: s.seed,
        threads: command.threads,
    };
    if let Err(e) = provenance::record_run(&command.out, file.records(), &command.identity, &run) {
        eprintln!(
            "rookery-engine datagen: {}: {e}",
            provenance::sidecar_path(&command.out).display()
        );
        return ExitCode::FAILURE;
    }
    eprintln!(
        "datagen: {} holds {} records{}; {} nodes a move, {} thread(s), {} book positions, \
         {}-{} random moves a side, seed {}, {} evaluation, engine {}",
        command.out.display(),
        file.records(),
        if torn > 0 {
            format!(" (cut {torn} bytes of a torn last record)")
        } else {
            String::new()
        },
        s.nodes,
        command.threads,
        command.book.len(),
        s.random_moves_min,
        s.random_moves_max,
        s.seed,
        command.eval,
        command.identity.engine
    );
    let stop = AtomicBool::new(false);
    let options = RunOptions {
        threads: command.threads,
        target: command.target,
        stop: &stop,
        report_every: command.report_every,
    };
    let line = |p: &Progress| {
        format!(
            "{} games (+{} ={} -{} for White), {} positions written, {} in the file, \
             {:.1} positions/s over {:.0} s",
            p.games,
            p.white_wins,
            p.draws,
            p.black_wins,
            p.written,
            p.in_file,
            p.rate(),
            p.elapsed.as_secs_f64()
        )
    };
    match datagen::generate(s, &command.book, &mut file, &options, |p| {
        eprintln!("datagen: {}", line(p))
    }) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!(
                "rookery-engine datagen: write to {} failed: {e}",
                command.out.display()
            );
            ExitCode::FAILURE
        }
    }
}

fn parse(args: &[String]) -> Result<Command, String> {
    let mut settings = Settings::default();
    let mut out = None;
    let mut dir = None;
    let mut book_source = "builtin".to_string();
    let mut threads = 1;
    let mut target = None;
    let mut report_secs = 30;
    let mut eval = "hand".to_string();
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |min: u64, max: u64| -> Result<u64, String> {
            value
                .parse::<u64>()
                .ok()
                .filter(|n| (min..=max).contains(n))
                .ok_or_else(|| format!("{flag}: {value:?} is not a number from {min} to {max}"))
        };
        match flag.as_str() {
            "--out" => out = Some(PathBuf::from(value)),
            "--dir" => dir = Some(PathBuf::from(value)),
            "--positions" => target = Some(number(1, u64::MAX)?),
            "--nodes" => settings.nodes = number(1, 100_000_000)?,
            "--threads" => threads = number(1, 256)? as usize,
            "--hash" => settings.hash_mb = number(1, 4096)? as usize,
            "--book" => book_source = value.clone(),
            "--random-moves" => {
                let (min, max) = match value.split_once('-') {
                    Some((min, max)) => (min, max),
                    None => (value.as_str(), value.as_str()),
                };
                match (min.parse::<usize>(), max.parse::<usize>()) {
                    (Ok(min), Ok(max)) if min <= max && max <= 100 => {
                        settings.random_moves_min = min;
                        settings.random_moves_max = max;
                    }
                    _ => {
                        return Err(format!(
                            "--random-moves: {value:?} is not N or MIN-MAX (at most 100)"
                        ))
                    }
                }
            }
            "--skip-plies" => settings.skip_plies = number(0, 1000)? as usize,
            "--max-opening-score" => settings.max_opening_score = number(0, 30_000)? as i32,
            "--max-plies" => settings.max_plies = number(1, 10_000)? as usize,
            "--seed" => settings.seed = number(0, u64::MAX)?,
            "--report-secs" => report_secs = number(1, 86_400)?,
            "--eval" => {
                settings.network = match value.as_str() {
                    "hand" => None,
                    name => Some(nnue::named(name).map_err(|e| format!("--eval {name}: {e}"))?),
                };
                eval = value.clone();
            }
            _ => return Err(format!("unknown argument {flag:?}")),
        }
    }
    let book_text = match book_source.as_str() {
        "builtin" => OPENINGS.to_string(),
        "startpos" => String::new(),
        path => {
            std::fs::read_to_string(path).map_err(|e| format!("--book: cannot read {path}: {e}"))?
        }
    };
    let book = match book_source.as_str() {
        "builtin" => datagen::read_book(OPENINGS).0,
        "startpos" => Vec::new(),
        path => {
            let text = &book_text;
            let (book, bad) = datagen::read_book(text);
            if let Some(line) = bad.first() {
                return Err(format!(
                    "--book: {} line(s) of {path} are not positions, the first: {line:?}",
                    bad.len()
                ));
            }
            if book.is_empty() {
                return Err(format!("--book: {path} holds no positions"));
            }
            book
        }
    };
    // A book file by its name (its contents are hashed), not its path,
    // which differs from machine to machine.
    let book_name = match book_source.as_str() {
        "builtin" | "startpos" => book_source.clone(),
        path => std::path::Path::new(path)
            .file_name()
            .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned()),
    };
    let identity = Identity::of_run(&settings, &book_name, book.len(), &book_text);
    let out = match (out, dir) {
        (Some(out), None) => out,
        (None, Some(dir)) => {
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("--dir: cannot create {}: {e}", dir.display()))?;
            dir.join(identity.file_name(settings.nodes))
        }
        (Some(_), Some(_)) => return Err("--out and --dir exclude each other".into()),
        (None, None) => return Err("--out FILE or --dir DIR is required".into()),
    };
    Ok(Command {
        out,
        identity,
        eval,
        settings,
        book,
        threads,
        target,
        report_every: Duration::from_secs(report_secs),
    })
}
