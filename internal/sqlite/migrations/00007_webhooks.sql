-- +goose Up
-- Webhooks (docs/webhooks.md): endpoints per workspace, the outbox of
-- events written in the transaction of what caused them, one delivery row
-- per (event, endpoint) that is also the delivery log, and asynchronous
-- chat turns.
CREATE TABLE webhook_endpoints (
    id          TEXT PRIMARY KEY,            -- "we_" + 24 base62 characters
    workspace   TEXT NOT NULL REFERENCES workspaces (id),
    url         TEXT NOT NULL,
    event_types TEXT NOT NULL,               -- JSON array of event types
    secret      BLOB NOT NULL,               -- the signing secret, sealed (AES-256-GCM); never the plaintext
    enabled     INTEGER NOT NULL DEFAULT 1,
    created_at  INTEGER NOT NULL,            -- Unix milliseconds
    created_by  TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace, created_at);

CREATE TABLE webhook_events (
    id         TEXT PRIMARY KEY,             -- "msg_...": the webhook-id header
    workspace  TEXT NOT NULL,
    type       TEXT NOT NULL,
    at         INTEGER NOT NULL,
    data       TEXT NOT NULL                 -- JSON
);

CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY,
    event_id        TEXT NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    workspace       TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    status          TEXT NOT NULL,           -- pending, delivered, failed
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_owner     TEXT NOT NULL DEFAULT '',
    lease_until     INTEGER,
    last_error      TEXT NOT NULL DEFAULT '',
    last_status     INTEGER NOT NULL DEFAULT 0,
    response_ms     INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    delivered_at    INTEGER,
    UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_workspace ON webhook_deliveries (workspace, id);

CREATE TABLE async_turns (
    id           TEXT PRIMARY KEY,           -- "turn_" + 24 base62 characters
    workspace    TEXT NOT NULL,
    key_id       TEXT NOT NULL,
    state        TEXT NOT NULL,              -- queued, running, succeeded, failed
    request      TEXT,                       -- the chat request (JSON); NULL once completed unless kept for review
    response     TEXT,
    problem      TEXT,
    submitted_at INTEGER NOT NULL,
    completed_at INTEGER,
    attempts     INTEGER NOT NULL DEFAULT 0,
    lease_owner  TEXT NOT NULL DEFAULT '',
    lease_until  INTEGER
);
CREATE INDEX async_turns_open ON async_turns (workspace, state) WHERE state IN ('queued', 'running');
CREATE INDEX async_turns_due ON async_turns (submitted_at) WHERE state IN ('queued', 'running');
CREATE INDEX async_turns_completed ON async_turns (completed_at) WHERE completed_at IS NOT NULL;

-- +goose Down
DROP TABLE async_turns;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
