-- Start-up reconciliation lists the documents with a pending version, oldest first (Store.PendingDocuments):
-- a partial index keeps that a short ordered scan however many documents are ready.
CREATE INDEX documents_pending_idx ON {S}.documents (created_at, id) WHERE pending_hash <> '';
