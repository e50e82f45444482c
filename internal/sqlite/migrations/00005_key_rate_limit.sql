-- +goose Up
-- A key may carry its own per-minute limit; 0 keeps the service's default
-- (ASSISTANT_CHAT_RATE_LIMIT).
ALTER TABLE api_keys ADD COLUMN rate_limit INTEGER NOT NULL DEFAULT 0 CHECK (rate_limit >= 0);

-- +goose Down
ALTER TABLE api_keys DROP COLUMN rate_limit;
