-- Each change of a document's state, for its status history (docs/api.md "Documents", GET
-- /api/documents/{id}/history): its status and stage (queued, extract, chunk, embed, index, done; ready or
-- failed with the error), the version it is about (the pending one while one is pending), and "deleted" and
-- "restored" for the trash. A trigger records them in the transaction of the change, at the time the store
-- gave the row (updated_at, deleted_at); progress alone is no change. They go with the document.
CREATE TABLE {S}.document_events (
    id          bigserial PRIMARY KEY,
    document_id text NOT NULL REFERENCES {S}.documents (id) ON DELETE CASCADE,
    at          timestamptz NOT NULL,
    status      text NOT NULL,
    stage       text NOT NULL,
    version     integer NOT NULL,
    error_code  text NOT NULL DEFAULT '',
    error       text NOT NULL DEFAULT ''
);
CREATE INDEX document_events_doc_idx ON {S}.document_events (document_id, id);

-- The documents stored before: their current state, as of their last change.
INSERT INTO {S}.document_events (document_id, at, status, stage, version, error_code, error)
SELECT id, updated_at, status, stage, version + (pending_hash <> '')::int, error_code, error FROM {S}.documents;

CREATE FUNCTION {S}.record_document_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.status IS NOT DISTINCT FROM OLD.status AND NEW.stage IS NOT DISTINCT FROM OLD.stage
        AND NEW.version IS NOT DISTINCT FROM OLD.version AND (NEW.deleted_at IS NULL) = (OLD.deleted_at IS NULL) THEN
        RETURN NULL;
    END IF;
    INSERT INTO {S}.document_events (document_id, at, status, stage, version, error_code, error)
    VALUES (NEW.id, COALESCE(NEW.deleted_at, NEW.updated_at),
        CASE WHEN TG_OP = 'UPDATE' AND OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN 'deleted'
             WHEN TG_OP = 'UPDATE' AND OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS NULL THEN 'restored'
             ELSE NEW.status END,
        NEW.stage, NEW.version + (NEW.pending_hash <> '')::int, NEW.error_code, NEW.error);
    RETURN NULL;
END $$;

CREATE TRIGGER document_events_change AFTER INSERT OR UPDATE OF status, stage, version, deleted_at ON {S}.documents
    FOR EACH ROW EXECUTE FUNCTION {S}.record_document_event();
