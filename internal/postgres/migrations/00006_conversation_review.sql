-- +goose Up
-- Conversation review (docs/security.md): a workspace's opt-in, off
-- unless a row says otherwise, and the turns kept while it is on, each
-- until its expiry.
CREATE TABLE review_settings (
    workspace      text PRIMARY KEY REFERENCES workspaces (id),
    enabled        boolean NOT NULL DEFAULT false,
    retention_days integer NOT NULL DEFAULT 0 CHECK (retention_days BETWEEN 0 AND 365),
    updated_at     timestamptz NOT NULL
);

CREATE TABLE reviews (
    id         text PRIMARY KEY,
    workspace  text NOT NULL REFERENCES workspaces (id),
    at         timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    key_id     text NOT NULL,
    mode       text NOT NULL,
    level      text NOT NULL,
    message    text NOT NULL,
    answer     text NOT NULL,
    trace      jsonb NOT NULL,
    verdicts   jsonb NOT NULL
);
CREATE INDEX reviews_by_workspace ON reviews (workspace, at DESC);
CREATE INDEX reviews_by_expiry ON reviews (expires_at);

-- +goose Down
DROP TABLE reviews;
DROP TABLE review_settings;
