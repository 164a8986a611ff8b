//! `rookery-engine`: the engine as a UCI program on stdin/stdout.

use std::io;
use std::process::ExitCode;

use rookery_engine::uci::{self, Output};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => {
            uci::run(io::stdin().lock(), Output::new(io::stdout()));
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("rookery-engine: unknown argument {other:?}\nusage: rookery-engine (speaks UCI on stdin/stdout)");
            ExitCode::from(2)
        }
    }
}
