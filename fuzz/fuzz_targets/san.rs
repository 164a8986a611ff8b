//! SAN: the lenient reader against positions from the perft suite and from
//! playouts (see `positions.rs`; the input chooses both, then the rest of
//! it is the SAN text).
//!
//! Invariants:
//! - a SAN that reads gives a legal move whose written SAN reads back to the
//!   same move (reading is lenient, writing is exact, the two agree);
//! - the written SAN of every legal move reads back to it (so an `Illegal`
//!   or `Ambiguous` error never hits a move the engine itself wrote);
//! - `Game::play_san` changes the game exactly when the SAN reads, and then
//!   records that move and its written SAN;
//! - the UCI reader only accepts its own spelling of a legal move.
#![no_main]

mod positions;

use libfuzzer_sys::fuzz_target;
use rookery_engine::SanError;

fuzz_target!(|data: &[u8]| {
    let (game, rest) = positions::game_from(data);
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let pos = game.position();
    let fen = pos.to_fen();

    let moves = pos.legal_moves();
    for &mv in &moves {
        let san = pos.san(mv);
        assert_eq!(pos.parse_san(&san), Ok(mv), "{fen}: written SAN {san}");
    }

    let parsed = pos.parse_san(text);
    match &parsed {
        Ok(mv) => {
            assert!(pos.is_legal(*mv), "{fen}: {text:?} read as illegal {mv}");
            let san = pos.san(*mv);
            assert_eq!(pos.parse_san(&san), Ok(*mv), "{fen}: {text:?} -> {san}");
        }
        // The error keeps the offending text, cut short.
        Err(SanError::Syntax(t) | SanError::Illegal(t) | SanError::Ambiguous(t)) => {
            assert!(text.starts_with(t.as_str()), "{fen}: error text {t:?}");
            assert!(
                t.chars().count() <= rookery_engine::text::EXCERPT_CHARS,
                "{fen}: error text not cut short"
            );
        }
    }

    let mut played = game.clone();
    match (played.play_san(text), parsed) {
        (Ok(mv), Ok(expected)) => {
            assert_eq!(mv, expected, "{fen}: play_san and parse_san differ");
            assert_eq!(played.moves().last(), Some(&mv));
            assert_eq!(played.san_moves().last(), Some(&pos.san(mv)));
            assert_eq!(played.moves().len(), game.moves().len() + 1);
        }
        (Err(e), Err(expected)) => {
            assert_eq!(e, expected, "{fen}: play_san and parse_san differ");
            assert_eq!(played, game, "{fen}: a refused SAN changed the game");
        }
        (got, expected) => panic!("{fen}: {text:?}: play_san {got:?}, parse_san {expected:?}"),
    }

    if let Ok(mv) = pos.parse_uci(text) {
        assert!(pos.is_legal(mv), "{fen}: UCI {text:?} read as illegal {mv}");
        // Either spelling of a castle (the king's two squares, or king takes
        // rook, which `Position::uci` writes off the standard squares).
        assert!(
            mv.to_uci() == text || pos.uci(mv) == text,
            "{fen}: UCI {text:?} accepted loosely"
        );
    }
});
