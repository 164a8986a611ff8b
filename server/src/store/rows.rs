//! Typed rows: what the store writes ([`StoredGame`], [`StoredMove`]) and
//! reads ([`GameRow`], [`ListRow`], the scoreboard's rows). A new column is a
//! new field here and a name in the SQL next to it.

use rookery_engine::game::Termination;
use rookery_engine::{Game, Position};
use tokio::time::Instant;
use uuid::Uuid;

use super::backend::{on_conn, Conn, Dialect};
use super::error::StoreError;
use super::ratings::{DEFAULT_DEVIATION, DEFAULT_RATING};
use super::Store;
use crate::domain::{
    ClockSettings, Ending, GameRecord, GameSeat, PlayedMove, PlayerRef, Rematch, SavedClock,
    SavedGame, SeatRating, Side, Status, Variant, Visibility,
};
use crate::protocol::view::{view, GameSnapshot, LiveOnly};
use crate::protocol::{ClockView, GameState};
use crate::token::TokenHash;

/// One seat's columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSeat {
    pub kind: &'static str,
    pub level: Option<i64>,
    pub player_id: Option<String>,
    pub token_hash: Option<String>,
}

impl StoredSeat {
    fn of(seat: &GameSeat) -> StoredSeat {
        StoredSeat {
            kind: if seat.ai_level().is_some() {
                "ai"
            } else {
                "human"
            },
            level: seat.ai_level().map(i64::from),
            player_id: seat.player().map(|p| p.id.clone()),
            token_hash: seat.token().map(|t| t.0.clone()),
        }
    }
}

/// A game's row as it is written: the whole game in one value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredGame {
    pub id: String,
    pub white: StoredSeat,
    pub black: StoredSeat,
    pub initial_fen: String,
    pub fen: String,
    pub clock_initial_ms: Option<i64>,
    pub clock_increment_ms: Option<i64>,
    pub status: &'static str,
    pub result: Option<&'static str>,
    pub termination: Option<&'static str>,
    pub draw_offer: Option<&'static str>,
    pub created_at: i64,
    /// When this version was written (ms since the epoch).
    pub updated_at: i64,
    pub finished_at: Option<i64>,
    pub white_ms: Option<i64>,
    pub black_ms: Option<i64>,
    pub turn_started_at: Option<i64>,
    /// The terms fixed at creation (migration 0003).
    pub rated: bool,
    pub visibility: &'static str,
    pub invite_hash: Option<String>,
    /// Offers (migration 0006).
    pub takeback_offer: Option<&'static str>,
    pub takebacks: i64,
    pub rematch_id: Option<String>,
    pub rematch_offer: Option<&'static str>,
    pub rematch_token_hash: Option<String>,
    pub rematch_agreed: bool,
    /// Plies already played at creation (migration 0008).
    pub start_ply: i64,
    /// The rules (migration 0013).
    pub variant: &'static str,
    /// Berserk in an arena game: 1 white, 2 black, 3 both (migration 0016).
    pub berserk: i64,
}

fn ms(duration: std::time::Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl StoredGame {
    /// `game` as a row, written at `now` (`now_ms` on the wall clock).
    pub fn of(game: &GameRecord, now: Instant, now_ms: i64) -> StoredGame {
        let clock = game.clock_settings;
        let ending = game.ending;
        let remaining = game.clock.map(|c| c.remaining);
        // The instant the running side's turn began, on the wall clock.
        let turn_started_at = game
            .clock
            .and_then(|c| c.running_since)
            .map(|since| now_ms - ms(now.saturating_duration_since(since)));
        StoredGame {
            id: game.id.to_string(),
            white: StoredSeat::of(game.seat(Side::White)),
            black: StoredSeat::of(game.seat(Side::Black)),
            initial_fen: game.initial_fen.clone(),
            fen: game.fen.clone(),
            clock_initial_ms: clock.map(|c| c.initial_ms as i64),
            clock_increment_ms: clock.map(|c| c.increment_ms as i64),
            status: game.status.as_str(),
            result: ending.and_then(|e| e.result()),
            termination: ending.map(|e| e.termination.as_str()),
            draw_offer: game.draw_offer.map(Side::as_str),
            created_at: game.created_at,
            updated_at: now_ms,
            finished_at: ending.map(|_| now_ms),
            white_ms: remaining.map(|r| ms(r[0])),
            black_ms: remaining.map(|r| ms(r[1])),
            turn_started_at,
            rated: game.rated,
            visibility: game.visibility.as_str(),
            invite_hash: game.invite.as_ref().map(|t| t.0.clone()),
            takeback_offer: game.takeback_offer.map(Side::as_str),
            takebacks: i64::from(game.takebacks),
            rematch_id: game.rematch.as_ref().map(|r| r.game.to_string()),
            rematch_offer: game.rematch.as_ref().map(|r| r.offered_by.as_str()),
            rematch_token_hash: game.rematch.as_ref().map(|r| r.offerer_token.0.clone()),
            rematch_agreed: game.rematch.as_ref().is_some_and(|r| r.agreed),
            start_ply: i64::try_from(game.start_ply).unwrap_or(0),
            variant: game.variant.key(),
            berserk: berserk_bits(game.berserk),
        }
    }

    pub async fn insert(&self, conn: Conn<'_>) -> Result<(), sqlx::Error> {
        on_conn!(conn, conn => sqlx::query(
            "INSERT INTO games (id,
                 white_kind, white_level, white_player_id, white_token_hash,
                 black_kind, black_level, black_player_id, black_token_hash,
                 initial_fen, fen, clock_initial_ms, clock_increment_ms,
                 status, result, termination, draw_offer,
                 created_at, updated_at, finished_at, white_ms, black_ms, turn_started_at,
                 rated, visibility, invite_hash,
                 takeback_offer, takebacks, rematch_id, rematch_offer, rematch_token_hash,
                 rematch_agreed, start_ply, variant)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                     $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30,
                     $31, $32, $33, $34)",
        )
        .bind(&self.id)
        .bind(self.white.kind)
        .bind(self.white.level)
        .bind(&self.white.player_id)
        .bind(&self.white.token_hash)
        .bind(self.black.kind)
        .bind(self.black.level)
        .bind(&self.black.player_id)
        .bind(&self.black.token_hash)
        .bind(&self.initial_fen)
        .bind(&self.fen)
        .bind(self.clock_initial_ms)
        .bind(self.clock_increment_ms)
        .bind(self.status)
        .bind(self.result)
        .bind(self.termination)
        .bind(self.draw_offer)
        .bind(self.created_at)
        .bind(self.updated_at)
        .bind(self.finished_at)
        .bind(self.white_ms)
        .bind(self.black_ms)
        .bind(self.turn_started_at)
        .bind(self.rated)
        .bind(self.visibility)
        .bind(&self.invite_hash)
        .bind(self.takeback_offer)
        .bind(self.takebacks)
        .bind(&self.rematch_id)
        .bind(self.rematch_offer)
        .bind(&self.rematch_token_hash)
        .bind(self.rematch_agreed)
        .bind(self.start_ply)
        .bind(self.variant)
        .execute(conn)
        .await
        .map(|_| ()))
    }

    /// Berserk (migration 0016), written beside the rest of the row and
    /// only when someone went berserk, so other games' writes stay as
    /// they were.
    async fn write_berserk(&self, conn: Conn<'_>) -> Result<(), sqlx::Error> {
        if self.berserk == 0 {
            return Ok(());
        }
        on_conn!(conn, conn => sqlx::query("UPDATE games SET berserk = $1 WHERE id = $2")
            .bind(self.berserk)
            .bind(&self.id)
            .execute(conn)
            .await
            .map(|_| ()))
    }

    /// Writes what can change during a game.
    pub async fn update(&self, mut conn: Conn<'_>) -> Result<(), sqlx::Error> {
        let updated = on_conn!(conn.reborrow(), conn => sqlx::query(
            "UPDATE games SET
                 white_player_id = $1, white_token_hash = $2,
                 black_player_id = $3, black_token_hash = $4,
                 fen = $5, status = $6, result = $7, termination = $8, draw_offer = $9,
                 updated_at = $10, finished_at = COALESCE(finished_at, $11),
                 white_ms = $12, black_ms = $13, turn_started_at = $14,
                 rated = $15, takeback_offer = $16, takebacks = $17, rematch_id = $18,
                 rematch_offer = $19, rematch_token_hash = $20, rematch_agreed = $21
             WHERE id = $22",
        )
        .bind(&self.white.player_id)
        .bind(&self.white.token_hash)
        .bind(&self.black.player_id)
        .bind(&self.black.token_hash)
        .bind(&self.fen)
        .bind(self.status)
        .bind(self.result)
        .bind(self.termination)
        .bind(self.draw_offer)
        .bind(self.updated_at)
        .bind(self.finished_at)
        .bind(self.white_ms)
        .bind(self.black_ms)
        .bind(self.turn_started_at)
        .bind(self.rated)
        .bind(self.takeback_offer)
        .bind(self.takebacks)
        .bind(&self.rematch_id)
        .bind(self.rematch_offer)
        .bind(&self.rematch_token_hash)
        .bind(self.rematch_agreed)
        .bind(&self.id)
        .execute(conn)
        .await?
        .rows_affected());
        if updated == 0 {
            return Err(sqlx::Error::RowNotFound);
        }
        self.write_berserk(conn).await
    }
}

/// The berserk column's bits: 1 white, 2 black.
fn berserk_bits(berserk: [bool; 2]) -> i64 {
    i64::from(berserk[0]) | (i64::from(berserk[1]) << 1)
}

/// A move's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMove {
    pub game_id: String,
    pub ply: i64,
    pub uci: String,
    pub san: String,
    pub white_ms: Option<i64>,
    pub black_ms: Option<i64>,
    pub played_at: i64,
}

impl StoredMove {
    pub fn of(game: Uuid, mv: &PlayedMove, now_ms: i64) -> StoredMove {
        StoredMove {
            game_id: game.to_string(),
            ply: mv.ply as i64,
            uci: mv.uci.clone(),
            san: mv.san.clone(),
            white_ms: mv.clock_ms.map(|(w, _)| w as i64),
            black_ms: mv.clock_ms.map(|(_, b)| b as i64),
            played_at: now_ms,
        }
    }

    pub async fn insert(&self, conn: Conn<'_>) -> Result<(), sqlx::Error> {
        on_conn!(conn, conn => sqlx::query(
            "INSERT INTO moves (game_id, ply, uci, san, white_ms, black_ms, played_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&self.game_id)
        .bind(self.ply)
        .bind(&self.uci)
        .bind(&self.san)
        .bind(self.white_ms)
        .bind(self.black_ms)
        .bind(self.played_at)
        .execute(conn)
        .await
        .map(|_| ()))
    }
}

/// A game's row as it is read, with its players' names and the clocks of
/// its last move (for games stored before migration 0002).
#[derive(Debug, sqlx::FromRow)]
pub struct GameRow {
    pub id: String,
    pub white_kind: String,
    pub white_level: Option<i64>,
    pub white_player_id: Option<String>,
    pub white_token_hash: Option<String>,
    pub white_name: Option<String>,
    /// The seat's rating (migration 0005): before the game once it has been
    /// rated, else the player's current one.
    pub white_rating: Option<f64>,
    pub white_deviation: Option<f64>,
    pub black_kind: String,
    pub black_level: Option<i64>,
    pub black_player_id: Option<String>,
    pub black_token_hash: Option<String>,
    pub black_name: Option<String>,
    pub black_rating: Option<f64>,
    pub black_deviation: Option<f64>,
    pub initial_fen: String,
    pub fen: Option<String>,
    pub clock_initial_ms: Option<i64>,
    pub clock_increment_ms: Option<i64>,
    pub status: String,
    pub result: Option<String>,
    pub termination: Option<String>,
    pub draw_offer: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub white_ms: Option<i64>,
    pub black_ms: Option<i64>,
    pub turn_started_at: Option<i64>,
    pub last_white_ms: Option<i64>,
    pub last_black_ms: Option<i64>,
    pub rated: bool,
    pub visibility: String,
    pub invite_hash: Option<String>,
    pub takeback_offer: Option<String>,
    pub takebacks: i64,
    pub rematch_id: Option<String>,
    pub rematch_offer: Option<String>,
    pub rematch_token_hash: Option<String>,
    pub rematch_agreed: bool,
    /// Plies already played when the game was created (migration 0008).
    pub start_ply: i64,
    /// The rules (migration 0013).
    pub variant: String,
    /// Berserk: 1 white, 2 black (migration 0016).
    pub berserk: i64,
}

const GAME_COLUMNS: &str = "g.*, wp.name AS white_name, bp.name AS black_name,
    lm.white_ms AS last_white_ms, lm.black_ms AS last_black_ms,
    COALESCE((SELECT rating_before FROM rating_history
              WHERE game_id = g.id AND player_id = g.white_player_id), wp.rating) AS white_rating,
    COALESCE((SELECT deviation_before FROM rating_history
              WHERE game_id = g.id AND player_id = g.white_player_id), wp.rating_deviation)
        AS white_deviation,
    COALESCE((SELECT rating_before FROM rating_history
              WHERE game_id = g.id AND player_id = g.black_player_id), bp.rating) AS black_rating,
    COALESCE((SELECT deviation_before FROM rating_history
              WHERE game_id = g.id AND player_id = g.black_player_id), bp.rating_deviation)
        AS black_deviation";

/// The players of `g`'s seats and its last move, joined to `g`.
const SEAT_JOINS: &str = "LEFT JOIN players wp ON wp.id = g.white_player_id
    LEFT JOIN players bp ON bp.id = g.black_player_id
    LEFT JOIN moves lm ON lm.game_id = g.id
        AND lm.ply = (SELECT MAX(ply) FROM moves WHERE game_id = g.id)";

fn non_negative(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl GameRow {
    /// The query of game rows, with `filter` (a `WHERE` clause).
    pub fn select(filter: &str) -> String {
        format!("SELECT {GAME_COLUMNS} FROM games g {SEAT_JOINS} {filter}")
    }

    fn bad(&self, what: &str) -> StoreError {
        StoreError::internal(format!("game {}: bad stored {what}", self.id))
    }

    fn seat(
        &self,
        side: Side,
        kind: &str,
        level: Option<i64>,
        token: &Option<String>,
        player: Option<PlayerRef>,
    ) -> Result<GameSeat, StoreError> {
        if kind == "ai" {
            let level = level
                .and_then(|l| u8::try_from(l).ok())
                .ok_or_else(|| self.bad(&format!("{} level", side.as_str())))?;
            return Ok(GameSeat::Ai { level });
        }
        Ok(GameSeat::Human {
            token: token.clone().map(TokenHash),
            player,
            connections: 0,
        })
    }

    fn seats(&self) -> Result<[GameSeat; 2], StoreError> {
        let player = |id: &Option<String>, name: &Option<String>, rating, deviation| {
            id.clone().zip(name.clone()).map(|(id, name)| PlayerRef {
                id,
                name,
                rating: SeatRating::of(
                    Option::unwrap_or(rating, DEFAULT_RATING),
                    Option::unwrap_or(deviation, DEFAULT_DEVIATION),
                ),
            })
        };
        Ok([
            self.seat(
                Side::White,
                &self.white_kind,
                self.white_level,
                &self.white_token_hash,
                player(
                    &self.white_player_id,
                    &self.white_name,
                    self.white_rating,
                    self.white_deviation,
                ),
            )?,
            self.seat(
                Side::Black,
                &self.black_kind,
                self.black_level,
                &self.black_token_hash,
                player(
                    &self.black_player_id,
                    &self.black_name,
                    self.black_rating,
                    self.black_deviation,
                ),
            )?,
        ])
    }

    fn visibility(&self) -> Result<Visibility, StoreError> {
        Visibility::parse(&self.visibility).ok_or_else(|| self.bad("visibility"))
    }

    fn variant(&self) -> Result<Variant, StoreError> {
        Variant::parse(&self.variant).ok_or_else(|| self.bad("variant"))
    }

    fn takebacks(&self) -> u32 {
        u32::try_from(self.takebacks).unwrap_or(0)
    }

    /// The stored rematch; an incomplete one (from a bad row) is none.
    fn rematch(&self) -> Option<Rematch> {
        Some(Rematch {
            game: Uuid::parse_str(self.rematch_id.as_deref()?).ok()?,
            offered_by: Side::parse(self.rematch_offer.as_deref()?)?,
            offerer_token: TokenHash(self.rematch_token_hash.clone()?),
            agreed: self.rematch_agreed,
        })
    }

    fn clock_settings(&self) -> Option<ClockSettings> {
        self.clock_initial_ms.map(|initial| ClockSettings {
            initial_ms: non_negative(initial),
            increment_ms: non_negative(self.clock_increment_ms.unwrap_or(0)),
        })
    }

    fn ending(&self) -> Result<Option<Ending>, StoreError> {
        let Some(name) = &self.termination else {
            return Ok(None);
        };
        let termination = Termination::parse(name).ok_or_else(|| self.bad("termination"))?;
        let winner = match self.result.as_deref() {
            Some("1-0") => Some(Side::White),
            Some("0-1") => Some(Side::Black),
            _ => None,
        };
        Ok(Some(Ending {
            winner,
            termination,
        }))
    }

    /// The stored clock: the turn-start times (and the thinking already
    /// done) since 0002, else the times after the last move.
    fn saved_clock(&self, store: &Store, now_ms: i64) -> Option<SavedClock> {
        match (self.white_ms, self.black_ms) {
            (Some(white), Some(black)) => Some(SavedClock {
                white_ms: non_negative(white),
                black_ms: non_negative(black),
                spent: self
                    .turn_started_at
                    .map_or(std::time::Duration::ZERO, |started| {
                        store.thinking_time(started, self.updated_at, now_ms)
                    }),
            }),
            _ => match (self.last_white_ms, self.last_black_ms) {
                (Some(white), Some(black)) => Some(SavedClock {
                    white_ms: non_negative(white),
                    black_ms: non_negative(black),
                    spent: std::time::Duration::ZERO,
                }),
                _ => None,
            },
        }
    }

    /// The game as stored, with its `moves` (UCI, in order), for a live
    /// game to be restored from.
    pub fn saved(
        &self,
        moves: Vec<String>,
        store: &Store,
        now_ms: i64,
    ) -> Result<SavedGame, StoreError> {
        let id = Uuid::parse_str(&self.id).map_err(|_| self.bad("id"))?;
        Ok(SavedGame {
            id,
            created_at: self.created_at,
            updated_at: self.updated_at,
            seats: self.seats()?,
            clock_settings: self.clock_settings(),
            variant: self.variant()?,
            initial_fen: self.initial_fen.clone(),
            moves,
            clock: self.saved_clock(store, now_ms),
            ending: self.ending()?,
            draw_offer: self.draw_offer.as_deref().and_then(Side::parse),
            takeback_offer: self.takeback_offer.as_deref().and_then(Side::parse),
            takebacks: self.takebacks(),
            rematch: self.rematch(),
            rated: self.rated,
            visibility: self.visibility()?,
            invite: self.invite_hash.clone().map(TokenHash),
            start_ply: usize::try_from(self.start_ply).unwrap_or(0),
            berserk: [self.berserk & 1 != 0, self.berserk & 2 != 0],
        })
    }
}

/// A game's row with its moves, for lists: a state without a replay.
#[derive(Debug, sqlx::FromRow)]
pub struct ListRow {
    #[sqlx(flatten)]
    pub game: GameRow,
    /// UCI moves separated by spaces, in order; NULL without moves.
    pub moves_uci: Option<String>,
    /// SAN moves, likewise.
    pub moves_san: Option<String>,
}

fn words(text: &Option<String>) -> Vec<String> {
    text.as_deref()
        .map(|text| text.split(' ').map(str::to_string).collect())
        .unwrap_or_default()
}

impl ListRow {
    /// The query of list rows: `filter` (a `WHERE` clause) then `tail`
    /// (`ORDER BY`, `LIMIT`).
    ///
    /// The moves are joined in `ply` order ([`Dialect::moves_joined`]).
    pub fn select(dialect: Dialect, filter: &str, tail: &str) -> String {
        Self::select_from(dialect, "games g", filter, tail)
    }

    /// [`ListRow::select`] from `from`, which names the games `g` (a page
    /// of rowids joined to `games g`, say).
    pub fn select_from(dialect: Dialect, from: &str, filter: &str, tail: &str) -> String {
        format!(
            "SELECT {GAME_COLUMNS},
                 {} AS moves_uci,
                 {} AS moves_san
             FROM {from} {SEAT_JOINS} {filter} {tail}",
            dialect.moves_joined("uci"),
            dialect.moves_joined("san"),
        )
    }

    /// The game's public state at `now_ms`, through the one view builder
    /// ([`view`]). Nobody is counted as connected: presence lives only in a
    /// live game's actor ([`LiveOnly::STORED`]).
    pub fn state(&self, store: &Store, now_ms: i64) -> Result<GameState, StoreError> {
        let row = &self.game;
        let variant = row.variant()?;
        let mut san = words(&self.moves_san);
        let (position, fen) = match &row.fen {
            Some(fen) => (
                Position::from_fen(fen)
                    .map_err(|_| row.bad("FEN"))?
                    .with_castling_mode(variant.castling_mode()),
                fen.clone(),
            ),
            None => {
                // Stored before 0002 (no position column): replay.
                let mut game = Game::from_fen(&row.initial_fen).map_err(|_| row.bad("FEN"))?;
                game.set_castling_mode(variant.castling_mode());
                for uci in words(&self.moves_uci) {
                    game.play_uci(&uci).map_err(|_| row.bad("moves"))?;
                }
                san = game.san_moves().to_vec();
                let position = game.position().clone();
                let fen = position.to_fen();
                (position, fen)
            }
        };
        let status = Status::parse(&row.status).ok_or_else(|| row.bad("status"))?;
        let turn = Side::from(position.turn());
        let [white, black] = row.seats()?;
        let clock = row.clock_settings().map(|settings| {
            let saved = row.saved_clock(store, now_ms);
            let running =
                (status == Status::Active && row.turn_started_at.is_some()).then_some(turn);
            let mut times = saved.map_or([settings.initial_ms; 2], |c| [c.white_ms, c.black_ms]);
            if let (Some(side), Some(saved)) = (running, saved) {
                let spent = u64::try_from(saved.spent.as_millis()).unwrap_or(u64::MAX);
                times[side.index()] = times[side.index()].saturating_sub(spent);
            }
            ClockView {
                white_ms: times[0],
                black_ms: times[1],
                increment_ms: settings.increment_ms,
                initial_ms: settings.initial_ms,
                running,
            }
        });
        let ending = row.ending()?;
        let rematch = row.rematch();
        Ok(view(GameSnapshot {
            id: row.id.clone(),
            status,
            seats: [&white, &black],
            initial_fen: row.initial_fen.clone(),
            position: &position,
            fen,
            moves: words(&self.moves_uci),
            san,
            ending,
            clock,
            draw_offer: row.draw_offer.as_deref().and_then(Side::parse),
            takeback_offer: row.takeback_offer.as_deref().and_then(Side::parse),
            takebacks: row.takebacks(),
            rematch: rematch.as_ref(),
            created_at: row.created_at,
            rated: row.rated,
            visibility: row.visibility()?,
            variant,
            berserk: [row.berserk & 1 != 0, row.berserk & 2 != 0],
            live: LiveOnly::STORED,
        }))
    }
}

#[derive(Debug, sqlx::FromRow)]
pub struct ColorRow {
    pub white: i64,
    pub black: i64,
    pub draws: i64,
    pub casual_white: i64,
    pub casual_black: i64,
    pub casual_draws: i64,
}

#[derive(Debug, sqlx::FromRow)]
pub struct PlayerScoreRow {
    pub name: String,
    pub games: i64,
    pub wins: i64,
    pub losses: i64,
    pub draws: i64,
    pub rating: f64,
    pub rating_deviation: f64,
}

#[derive(Debug, sqlx::FromRow)]
pub struct AiScoreRow {
    pub level: i64,
    pub games: i64,
    pub wins: i64,
    pub losses: i64,
    pub draws: i64,
}
