-- PostgreSQL edition of ../0018_move_owner.sql (which documents the columns).
ALTER TABLE moves ADD COLUMN owner TEXT;
ALTER TABLE moves ADD COLUMN epoch BIGINT;
