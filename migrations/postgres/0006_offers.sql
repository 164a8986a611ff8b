-- PostgreSQL edition of ../0006_offers.sql (which documents each column):
-- takeback and rematch offers. `rematch_agreed` is a BOOLEAN here (0/1 in
-- SQLite).
ALTER TABLE games ADD COLUMN takeback_offer TEXT
    CHECK (takeback_offer IN ('white', 'black'));
ALTER TABLE games ADD COLUMN takebacks BIGINT NOT NULL DEFAULT 0
    CHECK (takebacks >= 0);
ALTER TABLE games ADD COLUMN rematch_id TEXT;
ALTER TABLE games ADD COLUMN rematch_offer TEXT
    CHECK (rematch_offer IN ('white', 'black'));
ALTER TABLE games ADD COLUMN rematch_token_hash TEXT;
ALTER TABLE games ADD COLUMN rematch_agreed BOOLEAN NOT NULL DEFAULT FALSE;
