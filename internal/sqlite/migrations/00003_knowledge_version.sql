-- +goose Up
-- A counter that changes whenever any entity is inserted, updated or
-- deleted, by whichever process writes it. Readers keep an in-memory view
-- of the knowledge base and compare this one number to know it is stale.
CREATE TABLE knowledge_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO knowledge_version (id, version) VALUES (1, 1);

-- +goose StatementBegin
CREATE TRIGGER entities_version_insert AFTER INSERT ON entities
BEGIN
    UPDATE knowledge_version SET version = version + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER entities_version_update AFTER UPDATE ON entities
BEGIN
    UPDATE knowledge_version SET version = version + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER entities_version_delete AFTER DELETE ON entities
BEGIN
    UPDATE knowledge_version SET version = version + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER entities_version_delete;
DROP TRIGGER entities_version_update;
DROP TRIGGER entities_version_insert;
DROP TABLE knowledge_version;
