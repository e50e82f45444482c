-- +goose Up
-- A counter that changes whenever any entity is inserted, updated or
-- deleted, by whichever instance writes it, in the same transaction.
-- Readers keep an in-memory view of the knowledge base and compare this one
-- number to know it is stale. The triggers run once per statement and look
-- at the statement's transition table, so a statement that changes no row
-- leaves the counter alone.
CREATE TABLE knowledge_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
);
INSERT INTO knowledge_version (id, version) VALUES (1, 1);

-- +goose StatementBegin
CREATE FUNCTION bump_knowledge_version() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed) THEN
        UPDATE knowledge_version SET version = version + 1 WHERE id = 1;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER entities_version_insert AFTER INSERT ON entities
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_knowledge_version();
CREATE TRIGGER entities_version_update AFTER UPDATE ON entities
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_knowledge_version();
CREATE TRIGGER entities_version_delete AFTER DELETE ON entities
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_knowledge_version();

-- +goose Down
DROP TRIGGER entities_version_delete ON entities;
DROP TRIGGER entities_version_update ON entities;
DROP TRIGGER entities_version_insert ON entities;
DROP FUNCTION bump_knowledge_version();
DROP TABLE knowledge_version;
