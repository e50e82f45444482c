-- +goose Up
-- SQLite's migration 00004 drops its FTS5 table: ranking moved into the
-- shared in-memory index (internal/retrieval). PostgreSQL never had a
-- full-text index, so there is nothing to do; the file keeps the two
-- stores' migration numbers in step.
SELECT 1;

-- +goose Down
SELECT 1;
