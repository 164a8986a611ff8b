-- PostgreSQL edition of ../0005_ratings_and_records.sql (which documents
-- each column): Glicko-2 ratings, rating history and records. REAL there is
-- DOUBLE PRECISION here.
ALTER TABLE players ADD COLUMN rating DOUBLE PRECISION NOT NULL DEFAULT 1500.0;
ALTER TABLE players ADD COLUMN rating_deviation DOUBLE PRECISION NOT NULL DEFAULT 350.0;
ALTER TABLE players ADD COLUMN rating_volatility DOUBLE PRECISION NOT NULL DEFAULT 0.06;
ALTER TABLE players ADD COLUMN win_streak BIGINT NOT NULL DEFAULT 0;
ALTER TABLE players ADD COLUMN best_win_streak BIGINT NOT NULL DEFAULT 0;

CREATE TABLE rating_history (
    game_id           TEXT    NOT NULL REFERENCES games(id),
    player_id         TEXT    NOT NULL REFERENCES players(id),
    opponent_id       TEXT    NOT NULL REFERENCES players(id),
    score             DOUBLE PRECISION NOT NULL CHECK (score IN (0.0, 0.5, 1.0)),
    rating_before     DOUBLE PRECISION NOT NULL,
    deviation_before  DOUBLE PRECISION NOT NULL,
    volatility_before DOUBLE PRECISION NOT NULL,
    rating_after      DOUBLE PRECISION NOT NULL,
    deviation_after   DOUBLE PRECISION NOT NULL,
    volatility_after  DOUBLE PRECISION NOT NULL,
    rated_at          BIGINT  NOT NULL,
    PRIMARY KEY (game_id, player_id)
);
CREATE INDEX rating_history_player ON rating_history (player_id, rated_at);

CREATE TABLE records (
    record      TEXT    NOT NULL CHECK (record IN
                    ('fastest_checkmate', 'fastest_checkmate_vs_ai', 'longest_game',
                     'biggest_upset', 'longest_win_streak')),
    level       BIGINT  NOT NULL DEFAULT 0,
    value       DOUBLE PRECISION NOT NULL,
    player_id   TEXT    NOT NULL REFERENCES players(id),
    game_id     TEXT    NOT NULL REFERENCES games(id),
    set_at      BIGINT  NOT NULL,
    PRIMARY KEY (record, level)
);

CREATE INDEX games_white_player ON games (white_player_id, created_at, id)
    WHERE white_player_id IS NOT NULL;
CREATE INDEX games_black_player ON games (black_player_id, created_at, id)
    WHERE black_player_id IS NOT NULL;
