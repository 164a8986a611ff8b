//! PGN import: whatever reads must survive export and import unchanged.
//!
//! Invariants on every PGN that reads:
//! - writing it and reading the export back gives the same game (start
//!   position, moves) and the same result;
//! - exporting that again gives the same text (read → write → read → write
//!   is stable: the exporter's output is a fixed point of the pair);
//! - the export keeps its promises: every line fits the 80 columns of the
//!   standard (tag lines aside) and the movetext ends with the result.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rookery_engine::{read_pgn, write_pgn};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(read) = read_pgn(text) else {
        return;
    };
    let result = read.result().unwrap_or("*").to_string();
    let pgn = write_pgn(&read.tags, &read.game, &result, None);
    let again = read_pgn(&pgn).unwrap_or_else(|e| panic!("export does not read: {e}\n{pgn}"));
    assert_eq!(again.game, read.game, "game changed by export\n{pgn}");
    let written_result = match result.as_str() {
        "1-0" | "0-1" | "1/2-1/2" => result.as_str(),
        _ => "*",
    };
    assert_eq!(again.result(), Some(written_result), "result\n{pgn}");

    let pgn_again = write_pgn(&again.tags, &again.game, written_result, None);
    assert_eq!(pgn_again, pgn, "export is not stable");

    let movetext = pgn.split("\n\n").nth(1).unwrap_or_default();
    for line in movetext.lines() {
        assert!(line.len() <= 80, "movetext line over 80 columns: {line:?}");
    }
    assert!(
        movetext.trim_end().ends_with(written_result),
        "movetext does not end with the result\n{pgn}"
    );
});
