//! `rookery-engine`: the engine as a UCI program on stdin/stdout, plus the
//! `bench` and `datagen` subcommands.

mod datagen_command;

use std::io;
use std::process::ExitCode;

use rookery_engine::bench;
use rookery_engine::uci::{self, Output};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => {
            uci::run(io::stdin().lock(), Output::new(io::stdout()));
            ExitCode::SUCCESS
        }
        Some("bench") => {
            let depth = match args.get(1).map(|d| d.parse::<u32>()) {
                None => bench::BENCH_DEPTH,
                Some(Ok(depth)) if (1..=64).contains(&depth) => depth,
                Some(_) => {
                    eprintln!("rookery-engine bench: the depth must be a number from 1 to 64");
                    return ExitCode::from(2);
                }
            };
            let report = bench::run(depth, |i, fen, nodes| {
                println!("position {:>2}: {nodes:>10} nodes  {fen}", i + 1)
            });
            println!(
                "{} nodes {} nps ({} ms, depth {depth})",
                report.nodes,
                report.nps(),
                report.elapsed.as_millis()
            );
            // The contract's last line: `NODES nodes NPS nps`.
            println!("{} nodes {} nps", report.nodes, report.nps());
            ExitCode::SUCCESS
        }
        Some("datagen") => datagen_command::run(&args[1..]),
        Some(other) => {
            eprintln!("rookery-engine: unknown argument {other:?}\nusage: rookery-engine [bench [DEPTH]] (without arguments it speaks UCI on stdin/stdout)\n{}", datagen_command::USAGE);
            ExitCode::from(2)
        }
    }
}
