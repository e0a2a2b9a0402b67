-- term_stats keeps, per keyword term, what BM25 and the keyword query's top-k pruning need without reading the
-- term's postings: df, the number of postings (chunks holding the term), and bounds for its share of a chunk's
-- score — the largest tf and the smallest chunk length (dl) among its postings. Triggers on postings keep it
-- in the same transaction as the postings themselves, whatever statement writes them.
--
-- Counters are spread over slots as corpus_stats' are: a transaction takes one slot (a transaction-level
-- advisory lock, tried from a place that depends on its connection), so concurrent commits never update the
-- same row and never wait on one another here. A term's df is the sum over its slots; a slot's df may be
-- negative (a chunk counted in one slot and removed in another). max_tf and min_dl only widen: after deletes
-- they are still bounds, merely looser (docs/performance.md "PostgreSQL keyword search").
CREATE TABLE {S}.term_stats (
    term   text NOT NULL,
    slot   integer NOT NULL,
    df     bigint NOT NULL,
    max_tf integer NOT NULL,
    min_dl integer NOT NULL,
    PRIMARY KEY (term, slot) INCLUDE (df, max_tf, min_dl)
);

CREATE FUNCTION {S}.postings_term_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    my_slot integer := nullif(current_setting('ragd.term_slot', true), '')::integer;
    key   integer := hashtext(TG_TABLE_SCHEMA || '.term_stats');
    start integer := pg_backend_pid() % 16;
BEGIN
    IF my_slot IS NULL THEN
        FOR i IN 0..15 LOOP
            IF pg_try_advisory_xact_lock(key, (start + i) % 16) THEN
                my_slot := (start + i) % 16;
                EXIT;
            END IF;
        END LOOP;
        IF my_slot IS NULL THEN
            my_slot := start;
            PERFORM pg_advisory_xact_lock(key, my_slot);
        END IF;
        PERFORM set_config('ragd.term_slot', my_slot::text, true);
    END IF;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO {S}.term_stats AS t (term, slot, df, max_tf, min_dl)
        SELECT n.term, my_slot, count(*), max(n.tf), min(n.dl) FROM added n GROUP BY n.term ORDER BY n.term
        ON CONFLICT (term, slot) DO UPDATE SET df = t.df + excluded.df,
            max_tf = GREATEST(t.max_tf, excluded.max_tf), min_dl = LEAST(t.min_dl, excluded.min_dl);
    ELSE
        INSERT INTO {S}.term_stats AS t (term, slot, df, max_tf, min_dl)
        SELECT o.term, my_slot, -count(*), 0, 2147483647 FROM removed o GROUP BY o.term ORDER BY o.term
        ON CONFLICT (term, slot) DO UPDATE SET df = t.df + excluded.df;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER term_stats_added AFTER INSERT ON {S}.postings REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION {S}.postings_term_stats();
CREATE TRIGGER term_stats_removed AFTER DELETE ON {S}.postings REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION {S}.postings_term_stats();

-- The postings already there (the triggers above hold writers off until this migration commits).
INSERT INTO {S}.term_stats (term, slot, df, max_tf, min_dl)
    SELECT term, 0, count(*), max(tf), min(dl) FROM {S}.postings GROUP BY term;

-- term_stats_for(terms) gives the query terms' statistics to every reader, as term_df (0014) does by counting
-- postings: BM25's statistics are the whole corpus's, with or without row security.
CREATE FUNCTION {S}.term_stats_for(terms text[]) RETURNS TABLE (term text, df float8, max_tf integer, min_dl integer)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp ROWS 10
    AS $$ SELECT t.term, sum(t.df)::float8, max(t.max_tf), min(t.min_dl) FROM {S}.term_stats t
        WHERE t.term = ANY(terms) GROUP BY t.term HAVING sum(t.df) > 0 $$;
