-- PostgreSQL edition of ../0004_analysis.sql (which documents each column):
-- post-game analysis jobs and their evaluated positions.
CREATE TABLE analyses (
    game_id        TEXT    PRIMARY KEY NOT NULL REFERENCES games(id),
    status         TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    nodes_per_ply  BIGINT  NOT NULL,
    positions      BIGINT  NOT NULL,
    acpl_white     BIGINT,
    acpl_black     BIGINT,
    error          TEXT,
    requested_at   BIGINT  NOT NULL,
    finished_at    BIGINT
);

CREATE INDEX analyses_unfinished ON analyses (requested_at) WHERE status IN ('queued', 'running');

CREATE TABLE analysis_positions (
    game_id     TEXT    NOT NULL REFERENCES analyses(game_id),
    ply         BIGINT  NOT NULL,
    cp          BIGINT,
    mate        BIGINT,
    best_uci    TEXT,
    best_san    TEXT,
    loss        BIGINT,
    judgement   TEXT CHECK (judgement IN ('inaccuracy', 'mistake', 'blunder')),
    PRIMARY KEY (game_id, ply)
);
