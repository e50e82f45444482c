-- +goose Up
-- Ranking moved out of the database into the shared in-memory index
-- (internal/retrieval), so that every store ranks alike; the FTS5 table
-- is no longer read or written.
DROP TABLE entities_fts;

-- +goose Down
CREATE VIRTUAL TABLE entities_fts USING fts5(
    token UNINDEXED,
    title,
    tags,
    key_ideas,
    when_to_use,
    summary,
    extra,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
