-- +goose Up
-- Conversation review, recorded (docs/security.md): what 00006's reviews
-- table lacked of a kept turn: where it ran, how many earlier turns the
-- request carried (their text is not kept) and the knowledge the answer
-- used. The table was empty until now.
ALTER TABLE reviews ADD COLUMN surface text NOT NULL DEFAULT '';
ALTER TABLE reviews ADD COLUMN history integer NOT NULL DEFAULT 0;
ALTER TABLE reviews ADD COLUMN knowledge jsonb NOT NULL DEFAULT '[]';
CREATE INDEX reviews_by_workspace_id ON reviews (workspace, at DESC, id DESC);
DROP INDEX reviews_by_workspace;

-- +goose Down
CREATE INDEX reviews_by_workspace ON reviews (workspace, at DESC);
DROP INDEX reviews_by_workspace_id;
ALTER TABLE reviews DROP COLUMN knowledge;
ALTER TABLE reviews DROP COLUMN history;
ALTER TABLE reviews DROP COLUMN surface;
