-- PostgreSQL edition of ../0008_start_ply.sql (which documents the column).
ALTER TABLE games ADD COLUMN start_ply BIGINT NOT NULL DEFAULT 0;
