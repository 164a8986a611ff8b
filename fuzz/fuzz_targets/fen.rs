//! FEN: whatever the reader accepts must be a position the rest of the
//! engine can trust.
//!
//! Invariants checked on every accepted FEN:
//! - it writes back to a FEN that reads to the same position, and writing
//!   that again gives the same text (the written form is canonical);
//! - the incremental hash equals the hash recomputed from scratch, also
//!   after each legal move;
//! - the position after each legal move writes a FEN that reads back to it
//!   (the writer and the reader agree on every position play can reach,
//!   not only on the ones typed in: castling rights, en passant, counters);
//! - every legal move's SAN and UCI spellings read back to that move;
//! - where shakmaty also accepts the position, both generators agree on the
//!   legal moves, on check, and on the number of replies to each move (a
//!   depth-2 cross-check, cheap enough to run on every input).
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use rookery_engine::Position;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position as _};

fuzz_target!(|data: &[u8]| {
    // The server reads FENs out of JSON strings, so only UTF-8 reaches the
    // parser.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(pos) = Position::from_fen(text) else {
        return;
    };

    let written = pos.to_fen();
    let reread = Position::from_fen(&written)
        .unwrap_or_else(|e| panic!("{text:?} wrote {written:?}, which does not read: {e}"));
    assert_eq!(reread, pos, "{text:?} -> {written:?} reads differently");
    assert_eq!(reread.to_fen(), written, "the written FEN is not canonical");
    assert_eq!(pos.hash(), pos.compute_hash(), "{text:?}: incremental hash");

    let moves = pos.legal_moves();
    for &mv in &moves {
        let san = pos.san(mv);
        assert_eq!(pos.parse_san(&san), Ok(mv), "{written}: SAN {san}");
        // The position's own spelling: a castle off the standard squares is
        // written king takes rook, since its two-square text may be a plain
        // king step too (a king on b8, a rook on a8: b8c8).
        assert_eq!(pos.parse_uci(&pos.uci(mv)), Ok(mv), "{written}: UCI {mv}");
        let next = pos
            .play(mv)
            .unwrap_or_else(|e| panic!("{written}: generated move {mv} is illegal: {e}"));
        assert_eq!(next.hash(), next.compute_hash(), "{written} {mv}: hash");
        let next_fen = next.to_fen();
        match Position::from_fen(&next_fen) {
            Ok(reread) => assert_eq!(reread, next, "{written} {mv}: {next_fen} reads differently"),
            Err(e) => panic!("{written} {mv}: the FEN after it, {next_fen}, does not read: {e}"),
        }
    }

    // Differential check against shakmaty, for the positions it accepts
    // too (it is stricter in places, laxer in others; where both accept,
    // the rules must agree).
    let Some(theirs) = written
        .parse::<Fen>()
        .ok()
        .and_then(|f| f.into_position::<Chess>(CastlingMode::Standard).ok())
    else {
        return;
    };
    assert_eq!(pos.is_check(), theirs.is_check(), "{written}: check");
    let ours: BTreeSet<String> = moves.iter().map(|m| m.to_uci()).collect();
    let their_moves: BTreeSet<String> = theirs
        .legal_moves()
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect();
    assert_eq!(ours, their_moves, "{written}: legal moves");
    for &mv in &moves {
        let Ok(next) = pos.play(mv) else { continue };
        let their_next = mv
            .to_uci()
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&theirs).ok())
            .and_then(|m| theirs.clone().play(&m).ok());
        let Some(their_next) = their_next else {
            panic!("{written}: shakmaty cannot play {mv}");
        };
        assert_eq!(
            next.legal_moves().len(),
            their_next.legal_moves().len(),
            "{written} {mv}: number of replies"
        );
    }
});
