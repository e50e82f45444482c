-- +goose Up
-- Knowledge entities (docs/knowledge-format.md). List fields are JSON arrays.
CREATE TABLE entities (
    token        TEXT PRIMARY KEY,            -- type:slug
    type         TEXT NOT NULL CHECK (type IN ('framework', 'paper', 'blog')),
    slug         TEXT NOT NULL,
    title        TEXT NOT NULL,
    authors      TEXT NOT NULL DEFAULT '[]',
    year         INTEGER,                     -- NULL when unknown
    url          TEXT,                        -- NULL when there is none
    url_note     TEXT NOT NULL DEFAULT '',
    tags         TEXT NOT NULL DEFAULT '[]',
    archetypes   TEXT NOT NULL DEFAULT '[]',
    related      TEXT NOT NULL DEFAULT '[]',
    summary      TEXT NOT NULL,
    key_ideas    TEXT NOT NULL DEFAULT '[]',
    when_to_use  TEXT NOT NULL DEFAULT '[]',
    pitfalls     TEXT NOT NULL DEFAULT '[]',
    origin       TEXT NOT NULL CHECK (origin IN ('embedded', 'imported')),
    content_hash TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE INDEX entities_type ON entities (type);

-- Full-text index over the entity fields, weighted at query time with bm25().
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

-- One row per (chat response, cited entity): what the leaderboard counts (D12).
CREATE TABLE citation_events (
    id          INTEGER PRIMARY KEY,
    response_id TEXT NOT NULL,
    workspace   TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL DEFAULT '',
    token       TEXT NOT NULL,
    cited_at    INTEGER NOT NULL,             -- Unix milliseconds, UTC
    UNIQUE (response_id, token)
);
CREATE INDEX citation_events_cited_at ON citation_events (cited_at, token);

-- +goose Down
DROP TABLE citation_events;
DROP TABLE entities_fts;
DROP TABLE entities;
