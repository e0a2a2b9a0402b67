-- Each change of a document's state, for its status history (docs/api.md "Documents", GET
-- /api/documents/{id}/history): its status and stage (queued, extract, chunk, embed, index, done; ready or
-- failed with the error), the version it is about (the pending one while one is pending), and "deleted" and
-- "restored" for the trash. Triggers record them in the transaction of the change, at the time the store
-- gave the row (updated_at, deleted_at); progress alone is no change. They go with the document.
CREATE TABLE document_events (
    id         INTEGER PRIMARY KEY,
    doc_seq    INTEGER NOT NULL REFERENCES documents (seq) ON DELETE CASCADE,
    at         INTEGER NOT NULL,
    status     TEXT NOT NULL,
    stage      TEXT NOT NULL,
    version    INTEGER NOT NULL,
    error_code TEXT NOT NULL DEFAULT '',
    error      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX document_events_doc ON document_events (doc_seq, id);

-- The documents stored before: their current state, as of their last change.
INSERT INTO document_events (doc_seq, at, status, stage, version, error_code, error)
SELECT seq, updated_at, status, stage, version + (pending_hash <> ''), error_code, error FROM documents;

CREATE TRIGGER document_events_insert AFTER INSERT ON documents BEGIN
    INSERT INTO document_events (doc_seq, at, status, stage, version, error_code, error)
    VALUES (NEW.seq, NEW.updated_at, NEW.status, NEW.stage, NEW.version + (NEW.pending_hash <> ''), NEW.error_code, NEW.error);
END;

CREATE TRIGGER document_events_update AFTER UPDATE OF status, stage, version, deleted_at ON documents
WHEN NEW.status IS NOT OLD.status OR NEW.stage IS NOT OLD.stage OR NEW.version IS NOT OLD.version
    OR (NEW.deleted_at IS NULL) IS NOT (OLD.deleted_at IS NULL)
BEGIN
    INSERT INTO document_events (doc_seq, at, status, stage, version, error_code, error)
    VALUES (NEW.seq, COALESCE(NEW.deleted_at, NEW.updated_at),
        CASE WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN 'deleted'
             WHEN OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS NULL THEN 'restored'
             ELSE NEW.status END,
        NEW.stage, NEW.version + (NEW.pending_hash <> ''), NEW.error_code, NEW.error);
END;
