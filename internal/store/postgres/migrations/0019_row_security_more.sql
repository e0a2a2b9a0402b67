-- Row-level security on the rest of the tables that hold document-derived or per-principal data
-- (docs/security.md "PostgreSQL row-level security"), keyed on the transaction-local settings of 0014. As
-- there, a transaction that names no principal (ragd.readers unset) sees no row, and the owner is not bound.

-- A collection's graph, record tables and Q&A board: the rows of the collections the principal sees by
-- their owner and visibility (the same rule as visibleCollections in filter.go; a grant on one document
-- does not open its collection's graph or board).
DO $do$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['graph_meta', 'graph_sections', 'graph_entities', 'graph_relations', 'graph_chunks',
        'graph_terms', 'record_rows', 'questions'] LOOP
        EXECUTE format('ALTER TABLE %1$s.%2$s ENABLE ROW LEVEL SECURITY', $s${S}$s$, t);
        EXECUTE format($p$CREATE POLICY ragd_visible ON %1$s.%2$s FOR SELECT USING (
            %1$s.rls_text('ragd.readers') <> '' AND collection_id IN (SELECT c.id FROM %1$s.collections c
                WHERE c.visibility = 'public' OR c.owner = ANY(%1$s.rls_list('ragd.names'))
                OR (c.visibility = 'team' AND c.owner IN (SELECT 'user:' || m.user_name FROM %1$s.team_members m
                    WHERE m.team = ANY(%1$s.rls_list('ragd.groups'))))))$p$, $s${S}$s$, t);
    END LOOP;
END $do$;

-- Answers follow their question (read under its policy).
ALTER TABLE {S}.answers ENABLE ROW LEVEL SECURITY;
CREATE POLICY ragd_visible ON {S}.answers FOR SELECT
    USING (EXISTS (SELECT 1 FROM {S}.questions q WHERE q.id = answers.question_id));

-- A principal's own ratings and saved conversations.
ALTER TABLE {S}.feedback ENABLE ROW LEVEL SECURITY;
CREATE POLICY ragd_visible ON {S}.feedback FOR SELECT
    USING ({S}.rls_text('ragd.readers') <> '' AND principal = {S}.rls_text('ragd.principal'));
ALTER TABLE {S}.conversations ENABLE ROW LEVEL SECURITY;
CREATE POLICY ragd_visible ON {S}.conversations FOR SELECT
    USING ({S}.rls_text('ragd.readers') <> '' AND principal = {S}.rls_text('ragd.principal'));
ALTER TABLE {S}.conversation_messages ENABLE ROW LEVEL SECURITY;
CREATE POLICY ragd_visible ON {S}.conversation_messages FOR SELECT
    USING (EXISTS (SELECT 1 FROM {S}.conversations c WHERE c.id = conversation_messages.conversation_id));

-- Stored originals and extracted texts: a blob is visible when a document or version the principal may
-- read refers to it (read under their policies).
CREATE INDEX IF NOT EXISTS document_versions_content_hash_idx ON {S}.document_versions (content_hash);
CREATE INDEX IF NOT EXISTS document_versions_text_hash_idx ON {S}.document_versions (text_hash) WHERE text_hash <> '';
ALTER TABLE {S}.blobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY ragd_visible ON {S}.blobs FOR SELECT USING (
    EXISTS (SELECT 1 FROM {S}.document_versions v WHERE v.content_hash = blobs.hash)
    OR EXISTS (SELECT 1 FROM {S}.document_versions v WHERE v.text_hash = blobs.hash)
    OR EXISTS (SELECT 1 FROM {S}.documents d WHERE d.content_hash = blobs.hash OR d.pending_hash = blobs.hash
        OR d.failed_hash = blobs.hash));
