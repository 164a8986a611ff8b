//! `rookery-engine`: the engine as a UCI program on stdin/stdout, plus the
//! `bench`, `bench960` (the same search on Chess960 positions) and
//! `datagen` subcommands.

mod datagen_command;

use std::io;
use std::process::ExitCode;

use rookery_engine::bench;
use rookery_engine::nnue;
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
            if let Some(path) = args.get(2) {
                return bench_with_network(depth, path);
            }
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
        // The bench's search on Chess960 positions, in Chess960 mode.
        Some("bench960") => {
            let depth = match args.get(1).map(|d| d.parse::<u32>()) {
                None => bench::BENCH_DEPTH,
                Some(Ok(depth)) if (1..=64).contains(&depth) => depth,
                Some(_) => {
                    eprintln!("rookery-engine bench960: the depth must be a number from 1 to 64");
                    return ExitCode::from(2);
                }
            };
            let report = bench::run_chess960(depth, |i, fen, nodes| {
                println!("position {:>2}: {nodes:>10} nodes  {fen}", i + 1)
            });
            println!("{} nodes {} nps", report.nodes, report.nps());
            ExitCode::SUCCESS
        }
        Some("datagen") => datagen_command::run(&args[1..]),
        Some(other) => {
            eprintln!("rookery-engine: unknown argument {other:?}\nusage: rookery-engine [bench [DEPTH [NETWORK|built-in]] | bench960 [DEPTH]] (without arguments it speaks UCI on stdin/stdout)\n{}", datagen_command::USAGE);
            ExitCode::from(2)
        }
    }
}

/// `bench DEPTH NETWORK`: the bench with the hand-written evaluation and
/// with the network (a file, or `built-in`), position by position, and
/// both speeds side by side.
fn bench_with_network(depth: u32, path: &str) -> ExitCode {
    let network = match nnue::named(path) {
        Ok(network) => network,
        Err(e) => {
            eprintln!("rookery-engine bench: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let kings = network.king_buckets();
    println!(
        "network {path}: {}x2, {} king bucket(s){}, {} output bucket(s), {}",
        network.hidden(),
        kings.count(),
        if kings.mirrored_files() {
            " mirrored"
        } else {
            ""
        },
        network.output_buckets(),
        if network.uses_avx2() {
            "AVX2"
        } else {
            "portable"
        }
    );
    println!("{:>11} {:>10} {:>10}", "", "hand", "network");
    let [hand, net] = bench::compare(depth, &network, |i, _, a, b| {
        println!("position {:>2}: {a:>10} {b:>10}", i + 1)
    });
    for (name, report) in [("hand-written", hand), ("network", net)] {
        println!(
            "{name:>12}: {} nodes {} nps ({} ms, depth {depth})",
            report.nodes,
            report.nps(),
            report.elapsed.as_millis()
        );
    }
    println!(
        "network / hand-written: {:.2} of the speed",
        net.nps() as f64 / hand.nps().max(1) as f64
    );
    ExitCode::SUCCESS
}
