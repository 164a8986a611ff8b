-- PostgreSQL edition of ../0013_variant.sql (which documents the columns).
ALTER TABLE games ADD COLUMN variant TEXT NOT NULL DEFAULT 'standard'
    CHECK (variant IN ('standard', 'chess960'));
ALTER TABLE challenges ADD COLUMN variant TEXT NOT NULL DEFAULT 'standard'
    CHECK (variant IN ('standard', 'chess960'));
ALTER TABLE challenges ADD COLUMN initial_fen TEXT;
