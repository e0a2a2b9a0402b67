-- Row-level security on the tables that hold documents, their versions, passages, vectors and keyword
-- postings (docs/security.md "PostgreSQL row-level security"): a second wall behind the visibility predicate
-- that every read already has in its SQL. The policies bind roles that neither own these tables nor bypass
-- row security: ragd's reads for a non-admin principal run as such a role (Options.ReaderRole,
-- RAGD_PG_READER_ROLE) inside a transaction that names the principal in transaction-local settings:
--   ragd.principal  the principal's ID          ragd.readers  the grant entries that name it (text[])
--   ragd.names      the owner entries (text[])  ragd.groups   its teams (text[])
-- The owner (migrations, writes, background jobs) is not bound: without the reader role nothing changes.

CREATE FUNCTION {S}.rls_text(name text) RETURNS text LANGUAGE sql STABLE
    AS $$ SELECT coalesce(current_setting(name, true), '') $$;
CREATE FUNCTION {S}.rls_list(name text) RETURNS text[] LANGUAGE sql STABLE
    AS $$ SELECT coalesce(nullif(current_setting(name, true), ''), '{}')::text[] $$;

-- The same predicate as docConditions/visibleCollections (filter.go). ragd.readers is never empty when a
-- principal is named (it holds at least '*'), so a transaction that names none sees no row.
ALTER TABLE {S}.documents ENABLE ROW LEVEL SECURITY;
CREATE POLICY ragd_visible ON {S}.documents FOR SELECT USING (
    {S}.rls_text('ragd.readers') <> '' AND (
        owner = {S}.rls_text('ragd.principal')
        OR readers && {S}.rls_list('ragd.readers')
        OR writers && {S}.rls_list('ragd.readers')
        OR collection_id IN (SELECT c.id FROM {S}.collections c WHERE c.visibility = 'public'
            OR c.owner = ANY({S}.rls_list('ragd.names'))
            OR (c.visibility = 'team' AND c.owner IN (SELECT 'user:' || m.user_name FROM {S}.team_members m
                WHERE m.team = ANY({S}.rls_list('ragd.groups')))))));

-- Everything else follows its document: the subqueries read documents (and chunks) under their own policies.
ALTER TABLE {S}.document_versions ENABLE ROW LEVEL SECURITY;
CREATE POLICY ragd_visible ON {S}.document_versions FOR SELECT
    USING (EXISTS (SELECT 1 FROM {S}.documents d WHERE d.id = document_versions.document_id));
ALTER TABLE {S}.chunks ENABLE ROW LEVEL SECURITY;
CREATE POLICY ragd_visible ON {S}.chunks FOR SELECT
    USING (EXISTS (SELECT 1 FROM {S}.documents d WHERE d.id = chunks.document_id));
ALTER TABLE {S}.postings ENABLE ROW LEVEL SECURITY;
CREATE POLICY ragd_visible ON {S}.postings FOR SELECT
    USING (EXISTS (SELECT 1 FROM {S}.chunks c WHERE c.id = postings.chunk_id));
ALTER TABLE {S}.doc_postings ENABLE ROW LEVEL SECURITY;
CREATE POLICY ragd_visible ON {S}.doc_postings FOR SELECT
    USING (EXISTS (SELECT 1 FROM {S}.documents d WHERE d.id = doc_postings.document_id));
ALTER TABLE {S}.doc_lengths ENABLE ROW LEVEL SECURITY;
CREATE POLICY ragd_visible ON {S}.doc_lengths FOR SELECT
    USING (EXISTS (SELECT 1 FROM {S}.documents d WHERE d.id = doc_lengths.document_id));

-- The vector table of every existing embedding space (new ones get the same in createSpace, vectors.go).
DO $do$
DECLARE sp integer;
BEGIN
    FOR sp IN SELECT id FROM {S}.spaces LOOP
        IF to_regclass(format('%s.vectors_%s', $s${S}$s$, sp)) IS NOT NULL THEN
            EXECUTE format('ALTER TABLE %s.vectors_%s ENABLE ROW LEVEL SECURITY', $s${S}$s$, sp);
            EXECUTE format('CREATE POLICY ragd_visible ON %1$s.vectors_%2$s FOR SELECT
                USING (EXISTS (SELECT 1 FROM %1$s.chunks c WHERE c.id = vectors_%2$s.chunk_id))', $s${S}$s$, sp);
        END IF;
    END LOOP;
END $do$;

-- BM25's statistics are the whole corpus's, as without row security (the SQLite store's FTS5 counts every
-- document too): these functions count as the owner, and give only counts of terms and lengths.
CREATE FUNCTION {S}.term_df(terms text[]) RETURNS TABLE (term text, df float8)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp ROWS 10
    AS $$ SELECT p.term, count(*)::float8 FROM {S}.postings p WHERE p.term = ANY(terms) GROUP BY p.term $$;
CREATE FUNCTION {S}.doc_term_df(terms text[]) RETURNS TABLE (term text, df float8)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp ROWS 10
    AS $$ SELECT p.term, count(*)::float8 FROM {S}.doc_postings p WHERE p.term = ANY(terms) GROUP BY p.term $$;
CREATE FUNCTION {S}.doc_length_stats(OUT n float8, OUT avgdl float8)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$ SELECT count(*)::float8, GREATEST(COALESCE(avg(dl), 0), 1)::float8 FROM {S}.doc_lengths $$;
