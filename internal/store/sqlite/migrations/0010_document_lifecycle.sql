-- Deletion after a window (docs/security.md "Deletion"): DELETE /api/documents/{id} marks a document deleted
-- (deleted_at) and takes its chunks, vectors and keyword entries out at once; the purge job removes the row,
-- its versions and its blobs once deleted_at is older than RAGD_PURGE_AFTER. While it waits the document's
-- external_id is moved to deleted_external_id, so that the key is free for a new document, and restoring puts
-- it back.
ALTER TABLE documents ADD COLUMN deleted_at INTEGER;
ALTER TABLE documents ADD COLUMN deleted_external_id TEXT;
CREATE INDEX documents_deleted ON documents (deleted_at) WHERE deleted_at IS NOT NULL;

-- Versions (docs/security.md "Versions"): the extracted text of each version committed from now on is kept as
-- a blob, text_hash its sha256 ('' for versions committed before).
ALTER TABLE document_versions ADD COLUMN text_hash TEXT NOT NULL DEFAULT '';

-- Encryption at rest (docs/security.md "Encryption at rest"): key_id names the data key that sealed a blob's
-- data or a chunk's text ('' for data stored in the clear); a rotation re-seals the rows of other keys.
ALTER TABLE blobs ADD COLUMN key_id TEXT NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN key_id TEXT NOT NULL DEFAULT '';
CREATE INDEX blobs_key ON blobs (key_id);
CREATE INDEX chunks_key ON chunks (key_id);

-- The audit log (docs/security.md "Audit log", internal/audit): append-only, removed only by the
-- retention (PruneAudit). documents is a JSON array of document IDs.
CREATE TABLE audit_log (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,
    principal TEXT NOT NULL,
    action    TEXT NOT NULL,
    target    TEXT NOT NULL DEFAULT '',
    documents TEXT NOT NULL DEFAULT '[]',
    client    TEXT NOT NULL DEFAULT '',
    outcome   TEXT NOT NULL,
    status    INTEGER NOT NULL DEFAULT 0,
    detail    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_principal ON audit_log (principal, id);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE TRIGGER audit_log_append_only BEFORE UPDATE ON audit_log BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
