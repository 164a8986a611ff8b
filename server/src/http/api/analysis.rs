//! Post-game analysis over HTTP (`/api/games/{id}/analysis`), the PGN
//! export with the analysis as comments, and reading a PGN for the web
//! client's import (`POST /api/pgn`).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use rookery_engine::{Game, MoveNote};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::http::client_ip::ClientIp;
use crate::http::error::ApiError;
use crate::http::extract::{game_id, ApiJson};
use crate::store::analysis::{AnalysisRow, PositionRow};
use crate::AppState;

/// A game's analysis as the API shows it.
#[derive(Debug, Serialize)]
pub struct AnalysisView {
    /// `none` (never asked for), `queued`, `running`, `done`, `failed`.
    pub status: &'static str,
    pub nodes_per_ply: u64,
    pub progress: Progress,
    /// One per evaluated position, by ply (0: the start position).
    pub positions: Vec<PositionView>,
    /// One per judged move: `ply` is the move's number in the game (1: the
    /// first move), the position it leads to.
    pub moves: Vec<MoveView>,
    /// Average centipawn loss per side, once done (null: no move).
    pub acpl: Option<Acpl>,
}

#[derive(Debug, Serialize)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
}

#[derive(Debug, Serialize)]
pub struct PositionView {
    pub ply: i64,
    /// Centipawns, White's point of view (null when `mate` is set).
    pub cp: Option<i64>,
    /// Mate in N, White's point of view (negative: Black mates; 0: the
    /// side to move is checkmated).
    pub mate: Option<i64>,
    /// The engine's best move here (null when the game is over here).
    pub best: Option<String>,
    pub best_san: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct MoveView {
    pub ply: i64,
    pub loss: i64,
    /// null, `inaccuracy`, `mistake` or `blunder`.
    pub judgement: Option<String>,
    /// The engine's move in the position before (what it would have played).
    pub best: Option<String>,
    pub best_san: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Acpl {
    pub white: Option<i64>,
    pub black: Option<i64>,
}

fn view(nodes: u64, stored: Option<(AnalysisRow, Vec<PositionRow>)>, moves: usize) -> AnalysisView {
    let Some((job, rows)) = stored else {
        return AnalysisView {
            status: "none",
            nodes_per_ply: nodes,
            progress: Progress {
                done: 0,
                total: moves + 1,
            },
            positions: Vec::new(),
            moves: Vec::new(),
            acpl: None,
        };
    };
    let status = match job.status.as_str() {
        "queued" => "queued",
        "running" => "running",
        "done" => "done",
        _ => "failed",
    };
    let judged = rows
        .iter()
        .filter(|row| row.loss.is_some())
        .map(|row| MoveView {
            ply: row.ply + 1,
            loss: row.loss.unwrap_or(0),
            judgement: row.judgement.clone(),
            best: row.best_uci.clone(),
            best_san: row.best_san.clone(),
        })
        .collect();
    AnalysisView {
        status,
        nodes_per_ply: u64::try_from(job.nodes_per_ply).unwrap_or(0),
        progress: Progress {
            done: rows.len(),
            total: usize::try_from(job.positions).unwrap_or(0),
        },
        positions: rows
            .into_iter()
            .map(|row| PositionView {
                ply: row.ply,
                cp: row.cp,
                mate: row.mate,
                best: row.best_uci,
                best_san: row.best_san,
            })
            .collect(),
        moves: judged,
        acpl: (status == "done").then_some(Acpl {
            white: job.acpl_white,
            black: job.acpl_black,
        }),
    }
}

async fn read(state: &AppState, id: Uuid, moves: usize) -> Result<AnalysisView, ApiError> {
    let stored = state.store().analysis(id).await?;
    Ok(view(state.analyses.nodes_per_ply(), stored, moves))
}

/// `GET /api/games/{id}/analysis`: status, progress and results so far.
pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<AnalysisView>, ApiError> {
    let id = game_id(&id)?;
    let game = state.registry.state(id).await?;
    Ok(Json(read(&state, id, game.moves.len()).await?))
}

/// `POST /api/games/{id}/analysis`: starts the job of a finished game, or
/// answers the one that exists. 202 while it is queued or running, 200
/// once done.
pub async fn start(
    State(state): State<AppState>,
    Extension(ClientIp(client)): Extension<ClientIp>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<AnalysisView>), ApiError> {
    let id = game_id(&id)?;
    let game = state.registry.state(id).await?;
    if !game.is_finished() {
        return Err(ApiError::NotFinished);
    }
    let moves = game.moves.len();
    let existing = read(&state, id, moves).await?;
    if existing.status != "done" {
        state.analyses.request(id, moves + 1, client).await?;
    }
    let answer = read(&state, id, moves).await?;
    let status = if answer.status == "done" {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, Json(answer)))
}

/// The comment of each move of an analysed game: its evaluation in the
/// `[%eval]` command lichess and ChessBase read, then, for a judged move,
/// the judgement and the engine's move.
pub fn pgn_notes(game: &Game, rows: &[PositionRow]) -> Vec<MoveNote> {
    (0..game.moves().len())
        .map(|index| {
            let after = rows.iter().find(|row| row.ply == index as i64 + 1);
            let before = rows.iter().find(|row| row.ply == index as i64);
            let Some(after) = after else {
                return MoveNote::default();
            };
            let eval = match (after.mate, after.cp) {
                (Some(0), _) => None,
                (Some(mate), _) => Some(format!("#{mate}")),
                (None, Some(cp)) => Some(format!("{:.2}", cp as f64 / 100.0)),
                (None, None) => None,
            };
            let mut comment = eval.map(|eval| format!("[%eval {eval}]"));
            let judgement = before.and_then(|row| row.judgement.as_deref());
            let suffix = match judgement {
                Some("blunder") => "??",
                Some("mistake") => "?",
                Some("inaccuracy") => "?!",
                _ => "",
            };
            if let (Some(judgement), Some(best)) =
                (judgement, before.and_then(|row| row.best_san.as_deref()))
            {
                let mut word = judgement.to_string();
                word[..1].make_ascii_uppercase();
                let text = format!("{word}. Best move was {best}.");
                comment = Some(match comment {
                    Some(eval) => format!("{eval} {text}"),
                    None => text,
                });
            }
            MoveNote { suffix, comment }
        })
        .collect()
}

/// `POST /api/pgn` `{"pgn": TEXT, "index"?: N}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgnRequest {
    pub pgn: String,
    /// Which game of a text of several to read (from 0; default the first).
    #[serde(default)]
    pub index: Option<usize>,
}

/// A PGN read by the server, for replaying it in the browser.
#[derive(Debug, Serialize)]
pub struct PgnView {
    pub initial_fen: String,
    pub fen: String,
    pub moves: Vec<String>,
    /// Added (issue 40): `chess960` for a game tagged `[Variant "Chess960"]`
    /// (its castling in `moves` is then king takes rook).
    pub variant: crate::protocol::Variant,
    pub san: Vec<String>,
    /// The PGN's result (`1-0`, `0-1`, `1/2-1/2`, `*`), if it has one.
    pub result: Option<String>,
    /// Whether the last position is over by the rules (mate, stalemate,
    /// a draw by rule): then it cannot be continued.
    pub over: bool,
    pub white: Option<String>,
    pub black: Option<String>,
    /// Which game of the text this is (0 for a text of one game).
    pub index: usize,
    /// A text of several games: each of them, to pick one (absent for a
    /// text of one game).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub games: Option<Vec<PgnListed>>,
    /// More games followed the listed ones (only the first
    /// [`MAX_PGN_GAMES`](crate::protocol::pgn::MAX_PGN_GAMES) are read).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub more: bool,
    /// A later game of the text could not be read: why (`game 3: move 2.
    /// Ke3: ...`); the games before it are listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// One game of a text of several, as the pick list shows it.
#[derive(Debug, Serialize)]
pub struct PgnListed {
    pub index: usize,
    pub white: Option<String>,
    pub black: Option<String>,
    pub result: Option<String>,
    pub date: Option<String>,
    pub event: Option<String>,
    /// Plies in its main line.
    pub moves: usize,
}

/// `POST /api/pgn`: reads a PGN and answers one game's moves and positions
/// (the first, or `index`), with the list of its games when the text has
/// several; nothing is stored.
pub async fn read_pgn(ApiJson(request): ApiJson<PgnRequest>) -> Result<Json<PgnView>, ApiError> {
    // Bounded by the body limit and MAX_PGN_GAMES; replaying a few hundred
    // moves is quick.
    let read = crate::protocol::pgn::read_games(&request.pgn).map_err(ApiError::BadRequest)?;
    let index = request.index.unwrap_or(0);
    let Some(chosen) = read.games.get(index) else {
        let count = read.games.len();
        return Err(ApiError::BadRequest(format!(
            "index {index}: the PGN has {count} game{} (counted from 0{})",
            if count == 1 { "" } else { "s" },
            if read.more {
                ", and only the first ones are read"
            } else {
                ""
            },
        )));
    };
    let tag = |game: &rookery_engine::PgnGame, name: &str| game.tag(name).map(str::to_string);
    let games = (read.games.len() > 1 || read.more || read.unreadable.is_some()).then(|| {
        read.games
            .iter()
            .enumerate()
            .map(|(index, game)| PgnListed {
                index,
                white: tag(game, "White"),
                black: tag(game, "Black"),
                result: game.result().map(str::to_string),
                date: tag(game, "Date"),
                event: tag(game, "Event"),
                moves: game.game.moves().len(),
            })
            .collect()
    });
    let game = &chosen.game;
    Ok(Json(PgnView {
        initial_fen: game.initial_position().to_fen(),
        fen: game.position().to_fen(),
        moves: game.uci_moves(),
        variant: crate::protocol::Variant::of(game),
        san: game.san_moves().to_vec(),
        result: chosen.result().map(str::to_string),
        over: game.outcome().is_some(),
        white: tag(chosen, "White"),
        black: tag(chosen, "Black"),
        index,
        games,
        more: read.more,
        unreadable: read.unreadable.clone(),
    }))
}

/// The most moves a position request may replay from its start.
pub const MAX_BOARD_MOVES: usize = 1000;

/// `POST /api/position` and `POST /api/analysis` (issue 36): a position as
/// a start and the moves played from it, for the analysis board.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardRequest {
    /// The start (default: the standard one). Any legal position; with
    /// `variant` `chess960` its castling rights may name any rook
    /// (Shredder-FEN `HAha` or X-FEN).
    #[serde(default)]
    pub fen: Option<String>,
    /// Moves played from it, in UCI (castling as the variant spells it).
    #[serde(default)]
    pub moves: Vec<String>,
    /// `standard` (default) or `chess960`.
    #[serde(default)]
    pub variant: Option<String>,
}

/// A position of the analysis board, as the rules see it.
#[derive(Debug, Serialize)]
pub struct BoardPosition {
    pub variant: crate::protocol::Variant,
    pub initial_fen: String,
    pub fen: String,
    pub turn: crate::domain::Side,
    /// The moves, in UCI as the server spells them, and in SAN.
    pub moves: Vec<String>,
    pub san: Vec<String>,
    /// Every legal move here (empty once the game is over).
    pub legal_moves: Vec<String>,
    pub check: bool,
    /// The game's end in this position, by the rules, if it has ended.
    pub outcome: Option<BoardOutcome>,
}

#[derive(Debug, Serialize)]
pub struct BoardOutcome {
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: &'static str,
    /// `checkmate`, `stalemate`, `insufficient_material`,
    /// `threefold_repetition`, `fifty_moves`.
    pub termination: String,
}

/// The engine's evaluation of the analysis board's position.
#[derive(Debug, Serialize)]
pub struct BoardEvalView {
    pub fen: String,
    /// Centipawns, White's point of view (null when `mate` is set).
    pub cp: Option<i64>,
    /// Mate in N, White's point of view (negative: Black mates; 0: the side
    /// to move is checkmated).
    pub mate: Option<i64>,
    /// The engine's move and the line it expects, in UCI and SAN (empty
    /// when the game is over here).
    pub best: Option<String>,
    pub best_san: Option<String>,
    pub line: Vec<String>,
    pub line_san: Vec<String>,
    pub depth: u32,
    pub nodes: u64,
    /// The node budget (`--analysis-nodes`).
    pub nodes_limit: u64,
}

/// Reads a board request into a game: 400 `bad_request` for a bad variant
/// or FEN (the engine's reason: one king each, no pawn on a back rank, the
/// side not to move not in check, castling rights with their rooks…) or too
/// many moves, 400 `illegal_move` naming the first move that is not legal.
pub fn board_game(request: &BoardRequest) -> Result<Game, ApiError> {
    let variant =
        crate::protocol::validate::parse_variant(request.variant.as_deref())?.unwrap_or_default();
    if request.moves.len() > MAX_BOARD_MOVES {
        return Err(ApiError::BadRequest(format!(
            "at most {MAX_BOARD_MOVES} moves, not {}",
            request.moves.len()
        )));
    }
    let fen = request
        .fen
        .as_deref()
        .map(str::trim)
        .filter(|fen| !fen.is_empty());
    let mut game = match fen {
        Some(fen) => {
            Game::from_fen(fen).map_err(|err| ApiError::BadRequest(format!("bad fen: {err}")))?
        }
        None if variant == crate::protocol::Variant::Chess960 => {
            return Err(ApiError::BadRequest(
                "a chess960 position needs its fen".into(),
            ))
        }
        None => Game::new(rookery_engine::Position::startpos()),
    };
    game.set_castling_mode(variant.castling_mode());
    for (index, uci) in request.moves.iter().enumerate() {
        if let Some(outcome) = game.outcome() {
            return Err(ApiError::IllegalMove(format!(
                "move {} {:?}: the game is over ({})",
                index + 1,
                rookery_engine::text::excerpt(uci),
                outcome.termination
            )));
        }
        game.play_uci(uci.trim()).map_err(|err| {
            ApiError::IllegalMove(format!(
                "move {} {:?}: {err}",
                index + 1,
                rookery_engine::text::excerpt(uci)
            ))
        })?;
    }
    Ok(game)
}

fn board_position(game: &Game) -> BoardPosition {
    let position = game.position();
    let outcome = game.outcome();
    BoardPosition {
        variant: crate::protocol::Variant::of(game),
        initial_fen: game.initial_position().to_fen(),
        fen: position.to_fen(),
        turn: position.turn().into(),
        moves: game.uci_moves(),
        san: game.san_moves().to_vec(),
        legal_moves: if outcome.is_some() {
            Vec::new()
        } else {
            crate::protocol::view::legal_uci(position)
        },
        check: position.is_check(),
        outcome: outcome.map(|outcome| BoardOutcome {
            result: match outcome.winner {
                Some(rookery_engine::types::Color::White) => "1-0",
                Some(rookery_engine::types::Color::Black) => "0-1",
                None => "1/2-1/2",
            },
            termination: outcome.termination.to_string(),
        }),
    }
}

/// `POST /api/position`: a position's rules (legal moves, SAN, the end of
/// the game) for the analysis board and its editor; nothing is searched
/// nor stored. Replaying at most [`MAX_BOARD_MOVES`] moves is quick.
pub async fn position(
    ApiJson(request): ApiJson<BoardRequest>,
) -> Result<Json<BoardPosition>, ApiError> {
    let game = board_game(&request)?;
    Ok(Json(board_position(&game)))
}

/// `POST /api/analysis`: the engine's evaluation and line for a position,
/// searched on a lent search thread within the analysis limits
/// (`ai/board.rs`); each request also takes a token from the client's
/// analysis-board bucket (`--board-analyses-per-minute`).
pub async fn evaluate(
    State(state): State<AppState>,
    Extension(ClientIp(client)): Extension<ClientIp>,
    ApiJson(request): ApiJson<BoardRequest>,
) -> Result<Json<BoardEvalView>, ApiError> {
    let game = board_game(&request)?;
    if !state
        .limits
        .board
        .try_take(client, tokio::time::Instant::now())
    {
        return Err(ApiError::Limited(format!(
            "at most {} analysis board evaluations a minute: wait a little",
            state.config.ai.board_analyses_per_minute
        )));
    }
    let fen = game.position().to_fen();
    let position = game.position().clone();
    let found = state.board.evaluate(game, client).await?;
    let (cp, mate) = match found.eval {
        crate::ai::analysis::Eval::Cp(cp) => (Some(i64::from(cp)), None),
        crate::ai::analysis::Eval::Mate(n) => (None, Some(i64::from(n))),
    };
    let mut line = Vec::new();
    let mut line_san = Vec::new();
    let mut walk = position;
    for &mv in &found.line {
        line.push(walk.uci(mv));
        line_san.push(walk.san(mv));
        match walk.play(mv) {
            Ok(next) => walk = next,
            Err(_) => break, // the line is the search's own: legal move by move
        }
    }
    Ok(Json(BoardEvalView {
        fen,
        cp,
        mate,
        best: line.first().cloned(),
        best_san: line_san.first().cloned(),
        line,
        line_san,
        depth: found.depth,
        nodes: found.nodes,
        nodes_limit: state.board.nodes(),
    }))
}
