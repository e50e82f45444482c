-- +goose Up
-- Conversation review (docs/security.md): a workspace's opt-in, off
-- unless a row says otherwise, and the turns kept while it is on, each
-- until its expiry.
CREATE TABLE review_settings (
    workspace      TEXT PRIMARY KEY REFERENCES workspaces (id),
    enabled        INTEGER NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
    retention_days INTEGER NOT NULL DEFAULT 0 CHECK (retention_days BETWEEN 0 AND 365),
    updated_at     INTEGER NOT NULL
);

CREATE TABLE reviews (
    id         TEXT PRIMARY KEY,
    workspace  TEXT NOT NULL REFERENCES workspaces (id),
    at         INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    key_id     TEXT NOT NULL,
    mode       TEXT NOT NULL,
    level      TEXT NOT NULL,
    message    TEXT NOT NULL,
    answer     TEXT NOT NULL,
    trace      TEXT NOT NULL,   -- JSON: the reasoning trace
    verdicts   TEXT NOT NULL    -- JSON: the confidence object
);
CREATE INDEX reviews_by_workspace ON reviews (workspace, at DESC);
CREATE INDEX reviews_by_expiry ON reviews (expires_at);

-- +goose Down
DROP TABLE reviews;
DROP TABLE review_settings;
