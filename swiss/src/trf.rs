//! FIDE's Tournament Report File (TRF-16), in the dialect JaVaFo and
//! bbpPairings read for pairing checks.
//!
//! Lines are fixed-column; columns are counted in characters, not bytes, so
//! accented names do not shift the fields. What is read and written:
//! - `012` the tournament name;
//! - `XXR n` the number of rounds (needed for the last-round topscorer rule);
//! - `XXC white1` / `XXC black1` the initial colour;
//! - `BBU p.p` the points of the pairing-allocated bye when not a win;
//! - `001` one line per player: pairing number (cols 5-8), sex (10), title
//!   (11-13), name (15-47), rating (49-52), federation (54-56), FIDE id
//!   (58-68), birth date (70-79), points (81-84), rank (86-89), then one
//!   10-column block per round from col 92: opponent (4), colour (`w`, `b`,
//!   `-`), result.
//!
//! Results: `1` `=` `0` played; `+` `-` forfeits; with opponent `0000`:
//! `U` pairing-allocated bye, `H` half-point bye, `F` full-point bye, `Z`
//! zero-point bye, `-` absent. A column after the last paired round holds
//! the next round's requested byes; there `-` marks a withdrawn player.
//! Other lines are ignored; the points column is recomputed, not trusted.

use crate::model::{
    Bye, ByeKind, Colour, Game, GameResult, Player, PlayerId, Round, Score, Tournament,
};
use crate::standings::standings;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TrfError {
    #[error("line {line}: {message}: {text:?}")]
    Line {
        line: usize,
        message: &'static str,
        text: String,
    },
    #[error("pairing numbers must run from 1 to {players} without gaps; {missing} is missing")]
    MissingPlayer { players: usize, missing: u32 },
    #[error("round {round}: players {a} and {b} disagree about their game")]
    Inconsistent { round: usize, a: u32, b: u32 },
    #[error("the file has no player lines")]
    NoPlayers,
}

/// One round block of a player line, as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cell {
    opponent: Option<u32>,
    colour: char,
    result: char,
}

fn cols(line: &[char], from: usize, to: usize) -> String {
    // 1-based inclusive columns; missing columns read as blanks.
    (from..=to)
        .map(|c| line.get(c - 1).copied().unwrap_or(' '))
        .collect()
}

fn line_error(line: usize, message: &'static str, text: &str) -> TrfError {
    TrfError::Line {
        line,
        message,
        text: text.to_string(),
    }
}

/// Read a TRF file into a tournament.
pub fn parse(text: &str) -> Result<Tournament, TrfError> {
    let mut name = String::new();
    let mut rounds_planned = 0u32;
    let mut initial: Option<Colour> = None;
    let mut pab_score = Score::ONE;
    let mut players: Vec<(Player, Vec<Cell>)> = Vec::new();

    // Some programs end lines with a bare CR.
    for (i, raw) in text.split(['\n', '\r']).enumerate() {
        let line_no = i + 1;
        let chars: Vec<char> = raw.chars().collect();
        let code = cols(&chars, 1, 3);
        let tail = || chars.iter().skip(4).collect::<String>().trim().to_string();
        match code.as_str() {
            "012" => name = tail(),
            "XXR" => {
                rounds_planned = tail()
                    .parse()
                    .map_err(|_| line_error(line_no, "bad number of rounds", raw))?
            }
            "XXC" => {
                for word in tail().split_whitespace() {
                    match word {
                        "white1" => initial = Some(Colour::White),
                        "black1" => initial = Some(Colour::Black),
                        _ => {}
                    }
                }
            }
            "BBU" => {
                let v: f64 = tail()
                    .parse()
                    .map_err(|_| line_error(line_no, "bad bye score", raw))?;
                if !(0.0..=1.0).contains(&v) {
                    return Err(line_error(line_no, "bye score out of range", raw));
                }
                pab_score = Score((v * 2.0).round() as u32);
            }
            "001" => players.push(parse_player(line_no, raw, &chars)?),
            _ => {}
        }
    }
    if players.is_empty() {
        return Err(TrfError::NoPlayers);
    }
    players.sort_by_key(|(p, _)| p.id);
    for (i, (p, _)) in players.iter().enumerate() {
        if p.id.0 != i as u32 + 1 {
            return Err(TrfError::MissingPlayer {
                players: players.len(),
                missing: i as u32 + 1,
            });
        }
    }
    let n = players.len() as u32;
    for (p, cells) in &players {
        for cell in cells {
            if let Some(o) = cell.opponent {
                if o == 0 || o > n || o == p.id.0 {
                    return Err(TrfError::Inconsistent {
                        round: 0,
                        a: p.id.0,
                        b: o,
                    });
                }
            }
        }
    }

    // Rounds paired so far: up to the last column with a game or a PAB.
    let width = players.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
    let paired = |r: usize| {
        players.iter().any(|(_, c)| {
            c.get(r)
                .is_some_and(|cell| cell.opponent.is_some() || cell.result == 'U')
        })
    };
    let played = (0..width).rev().find(|&r| paired(r)).map_or(0, |r| r + 1);

    let mut rounds = Vec::with_capacity(played);
    for r in 0..played {
        let mut round = Round::default();
        for (p, cells) in &players {
            let cell = cells.get(r).copied().unwrap_or(Cell {
                opponent: None,
                colour: ' ',
                result: ' ',
            });
            match cell.opponent {
                Some(o) => {
                    let other = players[(o - 1) as usize].1.get(r).copied();
                    let mirrored = other.is_some_and(|c| c.opponent == Some(p.id.0));
                    let Some(other) = other.filter(|_| mirrored) else {
                        return Err(TrfError::Inconsistent {
                            round: r + 1,
                            a: p.id.0,
                            b: o,
                        });
                    };
                    // Each game once: from white's side, or from the lower
                    // number when the colours are not given.
                    let i_am_white = match (cell.colour, other.colour) {
                        ('w', 'b') => true,
                        ('b', 'w') => false,
                        ('-', '-') | (' ', ' ') => p.id.0 < o,
                        _ => {
                            return Err(TrfError::Inconsistent {
                                round: r + 1,
                                a: p.id.0,
                                b: o,
                            })
                        }
                    };
                    if !i_am_white {
                        continue;
                    }
                    let result =
                        game_result(cell.result, other.result).ok_or(TrfError::Inconsistent {
                            round: r + 1,
                            a: p.id.0,
                            b: o,
                        })?;
                    round.games.push(Game {
                        white: p.id,
                        black: PlayerId(o),
                        result,
                    });
                }
                None => {
                    if let Some(kind) = bye_kind(cell.result) {
                        round.byes.push(Bye { player: p.id, kind });
                    }
                }
            }
        }
        rounds.push(round);
    }

    let mut next_round_byes = Vec::new();
    let mut out_players = Vec::with_capacity(players.len());
    for (mut p, cells) in players {
        if let Some(cell) = cells.get(played) {
            if cell.opponent.is_none() {
                match cell.result {
                    '-' => p.withdrawn = true,
                    c => {
                        if let Some(kind) = bye_kind(c) {
                            next_round_byes.push(Bye { player: p.id, kind });
                        }
                    }
                }
            }
        }
        out_players.push(p);
    }

    let mut t = Tournament::new(name, rounds_planned, out_players);
    t.rounds = rounds;
    t.next_round_byes = next_round_byes;
    t.pab_score = pab_score;
    t.initial_colour = initial.unwrap_or_else(|| infer_initial(&t));
    Ok(t)
}

/// Without `XXC`: the colour the lowest pairing number had in round 1,
/// flipped if that number is even (JaVaFo's and bbpPairings' inference).
fn infer_initial(t: &Tournament) -> Colour {
    let Some(first) = t.rounds.first() else {
        return Colour::White;
    };
    first
        .games
        .iter()
        .flat_map(|g| [(g.white, Colour::White), (g.black, Colour::Black)])
        .min_by_key(|(id, _)| *id)
        .map_or(
            Colour::White,
            |(id, c)| if id.0 % 2 == 1 { c } else { c.opposite() },
        )
}

fn bye_kind(result: char) -> Option<ByeKind> {
    match result {
        'U' => Some(ByeKind::PairingAllocated),
        'H' | '=' | 'D' => Some(ByeKind::Half),
        'F' | '+' | '1' | 'W' => Some(ByeKind::Full),
        'Z' | '0' | 'L' => Some(ByeKind::Zero),
        _ => None,
    }
}

fn game_result(white: char, black: char) -> Option<GameResult> {
    let won = |c: char| matches!(c, '1' | 'W');
    let lost = |c: char| matches!(c, '0' | 'L');
    let drew = |c: char| matches!(c, '=' | 'D');
    Some(match (white, black) {
        (w, b) if won(w) && lost(b) => GameResult::WhiteWins,
        (w, b) if lost(w) && won(b) => GameResult::BlackWins,
        (w, b) if drew(w) && drew(b) => GameResult::Draw,
        ('+', '-') => GameResult::WhiteWinsByForfeit,
        ('-', '+') => GameResult::BlackWinsByForfeit,
        ('-', '-') => GameResult::DoubleForfeit,
        _ => return None,
    })
}

fn parse_player(
    line_no: usize,
    raw: &str,
    chars: &[char],
) -> Result<(Player, Vec<Cell>), TrfError> {
    let id: u32 = cols(chars, 5, 8)
        .trim()
        .parse()
        .map_err(|_| line_error(line_no, "bad pairing number", raw))?;
    if id == 0 {
        return Err(line_error(line_no, "pairing number 0", raw));
    }
    let rating_text = cols(chars, 49, 52);
    let rating: u16 = if rating_text.trim().is_empty() {
        0
    } else {
        rating_text
            .trim()
            .parse()
            .map_err(|_| line_error(line_no, "bad rating", raw))?
    };
    let opt = |s: String| {
        let t = s.trim().to_string();
        (!t.is_empty()).then_some(t)
    };
    let mut player = Player::new(id, cols(chars, 15, 47).trim(), rating);
    player.sex = chars.get(9).copied().filter(|c| *c != ' ');
    player.title = opt(cols(chars, 11, 13));
    player.federation = opt(cols(chars, 54, 56));
    player.fide_id = opt(cols(chars, 58, 68));
    player.birth_date = opt(cols(chars, 70, 79));

    let mut cells = Vec::new();
    let mut start = 92;
    while start <= chars.len() {
        let opp = cols(chars, start, start + 3);
        let colour = cols(chars, start + 5, start + 5)
            .chars()
            .next()
            .unwrap_or(' ');
        let result = cols(chars, start + 7, start + 7)
            .chars()
            .next()
            .unwrap_or(' ')
            .to_ascii_uppercase();
        let opponent = match opp.trim() {
            "" => None,
            t => {
                let o: u32 = t
                    .parse()
                    .map_err(|_| line_error(line_no, "bad opponent number", raw))?;
                (o != 0).then_some(o)
            }
        };
        if !matches!(colour, 'w' | 'b' | '-' | ' ') {
            return Err(line_error(line_no, "bad colour", raw));
        }
        if !matches!(
            result,
            '1' | '0' | '=' | '+' | '-' | 'W' | 'D' | 'L' | 'H' | 'F' | 'U' | 'Z' | ' '
        ) {
            return Err(line_error(line_no, "bad result", raw));
        }
        if opponent.is_some() && !matches!(result, '1' | '0' | '=' | '+' | '-' | 'W' | 'D' | 'L') {
            return Err(line_error(line_no, "a game needs a game result", raw));
        }
        cells.push(Cell {
            opponent,
            colour,
            result,
        });
        start += 10;
    }
    // Trailing blank blocks say nothing.
    while cells
        .last()
        .is_some_and(|c| c.opponent.is_none() && c.result == ' ')
    {
        cells.pop();
    }
    Ok((player, cells))
}

fn put(line: &mut Vec<char>, col: usize, text: &str) {
    for (k, ch) in text.chars().enumerate() {
        let at = col - 1 + k;
        if line.len() <= at {
            line.resize(at + 1, ' ');
        }
        line[at] = ch;
    }
}

fn fit(text: &str, width: usize) -> String {
    text.chars().take(width).collect()
}

/// Write the tournament as a TRF file: every recorded round, and a column
/// for the next round's requested byes and withdrawals when there are any.
pub fn write(t: &Tournament) -> String {
    let mut out = String::new();
    out.push_str(&format!("012 {}\n", t.name));
    let ranks = standings(t);
    let mut rank_of = vec![0u32; t.players.len()];
    for s in &ranks {
        if let Some(r) = rank_of.get_mut(s.player.index()) {
            *r = s.rank;
        }
    }
    let pending_column = !t.next_round_byes.is_empty() || t.players.iter().any(|p| p.withdrawn);
    for p in &t.players {
        let mut line: Vec<char> = Vec::new();
        put(&mut line, 1, "001");
        put(&mut line, 5, &format!("{:>4}", p.id.0));
        if let Some(s) = p.sex {
            put(&mut line, 10, &s.to_string());
        }
        if let Some(title) = &p.title {
            put(&mut line, 11, &format!("{:>3}", fit(title, 3)));
        }
        put(&mut line, 15, &format!("{:<33}", fit(&p.name, 33)));
        if p.rating > 0 {
            put(&mut line, 49, &format!("{:>4}", p.rating));
        }
        if let Some(f) = &p.federation {
            put(&mut line, 54, &format!("{:<3}", fit(f, 3)));
        }
        if let Some(f) = &p.fide_id {
            put(&mut line, 58, &format!("{:>11}", fit(f, 11)));
        }
        if let Some(b) = &p.birth_date {
            put(&mut line, 70, &format!("{:<10}", fit(b, 10)));
        }
        put(
            &mut line,
            81,
            &format!("{:>4}", t.score_after(p.id, t.rounds.len()).to_string()),
        );
        put(&mut line, 86, &format!("{:>4}", rank_of[p.id.index()]));
        let mut col = 92;
        for round in &t.rounds {
            put(&mut line, col - 2, &cell_text(round, p.id));
            col += 10;
        }
        if pending_column {
            let pending = t.next_round_byes.iter().find(|b| b.player == p.id);
            let text = match (pending, p.withdrawn) {
                (Some(b), _) => format!("  0000 - {}", bye_char(b.kind)),
                (None, true) => "  0000 - -".to_string(),
                (None, false) => String::new(),
            };
            put(&mut line, col - 2, &text);
        }
        let text: String = line.into_iter().collect();
        out.push_str(text.trim_end());
        out.push('\n');
    }
    if t.rounds_planned > 0 {
        out.push_str(&format!("XXR {}\n", t.rounds_planned));
    }
    out.push_str(match t.initial_colour {
        Colour::White => "XXC white1\n",
        Colour::Black => "XXC black1\n",
    });
    if t.pab_score != Score::ONE {
        out.push_str(&format!("BBU {:>4}\n", t.pab_score.to_string()));
    }
    out
}

fn bye_char(kind: ByeKind) -> char {
    match kind {
        ByeKind::PairingAllocated => 'U',
        ByeKind::Half => 'H',
        ByeKind::Full => 'F',
        ByeKind::Zero => 'Z',
    }
}

fn cell_text(round: &Round, id: PlayerId) -> String {
    use crate::model::Entry;
    match round.entry(id) {
        Entry::Game {
            opponent,
            colour,
            result,
        } => {
            let white = colour == Colour::White;
            let c = if white { 'w' } else { 'b' };
            let r = match (result, white) {
                (GameResult::WhiteWins, true) | (GameResult::BlackWins, false) => '1',
                (GameResult::WhiteWins, false) | (GameResult::BlackWins, true) => '0',
                (GameResult::Draw, _) => '=',
                (GameResult::WhiteWinsByForfeit, true)
                | (GameResult::BlackWinsByForfeit, false) => '+',
                _ => '-',
            };
            format!("  {:>4} {} {}", opponent.0, c, r)
        }
        Entry::Bye(kind) => format!("  0000 - {}", bye_char(kind)),
        Entry::Absent => "  0000 - -".to_string(),
    }
}
