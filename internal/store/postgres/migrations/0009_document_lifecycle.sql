-- Deletion after a window (docs/security.md "Deletion"): DELETE /api/documents/{id} marks a document deleted
-- (deleted_at) and takes its chunks, vectors and keyword entries out at once; the purge job removes the row,
-- its versions and its blobs once deleted_at is older than RAGD_PURGE_AFTER. While it waits the document's
-- external_id is moved to deleted_external_id ('' frees the key for a new document), and restoring puts it
-- back.
ALTER TABLE {S}.documents ADD COLUMN deleted_at timestamptz;
ALTER TABLE {S}.documents ADD COLUMN deleted_external_id text NOT NULL DEFAULT '';
CREATE INDEX documents_deleted_idx ON {S}.documents (deleted_at) WHERE deleted_at IS NOT NULL;

-- Versions (docs/security.md "Versions"): the extracted text of each version committed from now on is kept as
-- a blob, text_hash its sha256 ('' for versions committed before).
ALTER TABLE {S}.document_versions ADD COLUMN text_hash text NOT NULL DEFAULT '';

-- Encryption at rest (docs/security.md "Encryption at rest"): key_id names the data key that sealed a blob's
-- data or a chunk's text ('' for data stored in the clear); a rotation re-seals the rows of other keys.
ALTER TABLE {S}.blobs ADD COLUMN key_id text NOT NULL DEFAULT '';
ALTER TABLE {S}.chunks ADD COLUMN key_id text NOT NULL DEFAULT '';
CREATE INDEX blobs_key_idx ON {S}.blobs (key_id);
CREATE INDEX chunks_key_idx ON {S}.chunks (key_id);

-- The audit log (docs/security.md "Audit log", internal/audit): append-only, removed only by the
-- retention (PruneAudit).
CREATE TABLE {S}.audit_log (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        timestamptz NOT NULL,
    principal text NOT NULL,
    action    text NOT NULL,
    target    text NOT NULL DEFAULT '',
    documents text[] NOT NULL DEFAULT '{}',
    client    text NOT NULL DEFAULT '',
    outcome   text NOT NULL,
    status    integer NOT NULL DEFAULT 0,
    detail    text NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at_idx ON {S}.audit_log (at);
CREATE INDEX audit_log_principal_idx ON {S}.audit_log (principal, id);
CREATE INDEX audit_log_action_idx ON {S}.audit_log (action, id);
CREATE RULE audit_log_append_only AS ON UPDATE TO {S}.audit_log DO INSTEAD NOTHING;
