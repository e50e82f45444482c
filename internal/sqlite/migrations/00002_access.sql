-- +goose Up
-- Workspaces, admin users, API keys (D16: id and SHA-256 only), the audit
-- log, usage rows (D5), the one-time setup token and admin sessions.
CREATE TABLE workspaces (
    id         TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL              -- Unix milliseconds
);

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    workspace     TEXT NOT NULL REFERENCES workspaces (id),
    email         TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT NOT NULL,             -- argon2id PHC string
    created_at    INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,           -- the public 12-character key id
    workspace    TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    hash         BLOB NOT NULL,              -- SHA-256 of the whole key; never the key
    created_at   INTEGER NOT NULL,
    created_by   TEXT NOT NULL,
    expires_at   INTEGER,
    revoked_at   INTEGER,
    last_used_at INTEGER
);
CREATE INDEX api_keys_workspace ON api_keys (workspace, created_at);
CREATE INDEX api_keys_revoked_at ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL;

CREATE TABLE audit_log (
    id        INTEGER PRIMARY KEY,
    at        INTEGER NOT NULL,
    workspace TEXT NOT NULL,
    actor     TEXT NOT NULL,
    action    TEXT NOT NULL,
    target    TEXT NOT NULL DEFAULT '',
    ip        TEXT NOT NULL DEFAULT '',
    detail    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_workspace ON audit_log (workspace, at);

CREATE TABLE usage (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,
    workspace  TEXT NOT NULL,
    key_id     TEXT NOT NULL,
    endpoint   TEXT NOT NULL,
    mode       TEXT NOT NULL DEFAULT '',
    source     TEXT NOT NULL DEFAULT '',
    status     INTEGER NOT NULL,
    latency_ms REAL NOT NULL
);
CREATE INDEX usage_key_at ON usage (workspace, key_id, at);

CREATE TABLE setup_tokens (
    hash       BLOB PRIMARY KEY,
    expires_at INTEGER NOT NULL
);

-- Admin sessions (github.com/alexedwards/scs/sqlite3store).
CREATE TABLE sessions (
    token  TEXT PRIMARY KEY,
    data   BLOB NOT NULL,
    expiry REAL NOT NULL
);
CREATE INDEX sessions_expiry_idx ON sessions (expiry);

-- +goose Down
DROP TABLE sessions;
DROP TABLE setup_tokens;
DROP TABLE usage;
DROP TABLE audit_log;
DROP TABLE api_keys;
DROP TABLE users;
DROP TABLE workspaces;
