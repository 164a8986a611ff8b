//! `rookery-swiss`: pair the next round of a TRF file.
//!
//! ```text
//! rookery-swiss FILE.trf            # pairings, in bbpPairings' `-p` format
//! rookery-swiss FILE.trf --standings
//! rookery-swiss FILE.trf --trf      # the file as this library writes it
//! ```
//!
//! The pairing output is the one JaVaFo and bbpPairings print with `-p`:
//! the number of pairs on the first line, then one `white black` line per
//! board by pairing number, the bye as `player 0`. Exit status 1 when no
//! legal pairing exists, 3 for an unreadable file or bad arguments.

use std::process::ExitCode;

use rookery_swiss::{pair_next_round, standings, trf};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, mode) = match args.as_slice() {
        [path] => (path, ""),
        [path, mode] if ["--standings", "--trf", "--pairings"].contains(&mode.as_str()) => {
            (path, mode.as_str())
        }
        _ => {
            eprintln!("usage: rookery-swiss FILE.trf [--pairings | --standings | --trf]");
            return ExitCode::from(3);
        }
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("{path}: {err}");
            return ExitCode::from(3);
        }
    };
    let tournament = match trf::parse(&text) {
        Ok(t) => t,
        Err(err) => {
            eprintln!("{path}: {err}");
            return ExitCode::from(3);
        }
    };
    match mode {
        "--trf" => print!("{}", trf::write(&tournament)),
        "--standings" => {
            println!("rank  no  points  bh-c1  bh  sb  wins  name");
            for s in standings(&tournament) {
                let name = tournament.player(s.player).map_or("", |p| p.name.as_str());
                println!(
                    "{:>4} {:>3} {:>7} {:>6.1} {:>5.1} {:>5.2} {:>4}  {}",
                    s.rank,
                    s.player,
                    s.points.to_string(),
                    f64::from(s.buchholz_cut1) / 2.0,
                    f64::from(s.buchholz) / 2.0,
                    f64::from(s.sonneborn_berger) / 4.0,
                    s.wins,
                    name
                );
            }
        }
        _ => match pair_next_round(&tournament, &tournament.present_next()) {
            Ok(pairing) => {
                println!(
                    "{}",
                    pairing.pairs.len() + usize::from(pairing.bye.is_some())
                );
                for (white, black) in &pairing.pairs {
                    println!("{white} {black}");
                }
                if let Some(bye) = pairing.bye {
                    println!("{bye} 0");
                }
            }
            Err(err) => {
                eprintln!("{path}: {err}");
                return ExitCode::from(1);
            }
        },
    }
    ExitCode::SUCCESS
}
