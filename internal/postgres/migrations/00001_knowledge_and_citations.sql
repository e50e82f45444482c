-- +goose Up
-- Knowledge entities (docs/knowledge-format.md). List fields are text
-- arrays. Tokens sort byte by byte (COLLATE "C") whatever the database's
-- locale, so that "ordered by token" means the same as on SQLite.
CREATE TABLE entities (
    token        TEXT COLLATE "C" PRIMARY KEY,  -- type:slug
    type         TEXT NOT NULL CHECK (type IN ('framework', 'paper', 'blog')),
    slug         TEXT NOT NULL,
    title        TEXT NOT NULL,
    authors      TEXT[] NOT NULL DEFAULT '{}',
    year         INTEGER,                       -- NULL when unknown
    url          TEXT,                          -- NULL when there is none
    url_note     TEXT NOT NULL DEFAULT '',
    tags         TEXT[] NOT NULL DEFAULT '{}',
    archetypes   TEXT[] NOT NULL DEFAULT '{}',
    related      TEXT[] NOT NULL DEFAULT '{}',
    summary      TEXT NOT NULL,
    key_ideas    TEXT[] NOT NULL DEFAULT '{}',
    when_to_use  TEXT[] NOT NULL DEFAULT '{}',
    pitfalls     TEXT[] NOT NULL DEFAULT '{}',
    origin       TEXT NOT NULL CHECK (origin IN ('embedded', 'imported')),
    content_hash TEXT NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX entities_type ON entities (type);

-- One row per (chat response, cited entity): what the leaderboard counts (D12).
CREATE TABLE citation_events (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    response_id TEXT NOT NULL,
    workspace   TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL DEFAULT '',
    token       TEXT COLLATE "C" NOT NULL,
    cited_at    TIMESTAMPTZ NOT NULL,           -- to the millisecond
    UNIQUE (response_id, token)
);
CREATE INDEX citation_events_cited_at ON citation_events (cited_at, token);

-- +goose Down
DROP TABLE citation_events;
DROP TABLE entities;
