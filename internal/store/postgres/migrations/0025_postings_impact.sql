-- postings_impact_idx lists each term's postings in impact order, best first, so that the keyword query can
-- read only the head of a term's postings and stop (internal/store/postgres/impact.go). A posting's impact is
-- its BM25 share without the term's weight, tf / (tf + k1(1-b) + k1·b·dl/avgdl0), at a fixed reference
-- average chunk length avgdl0 = k1·b·128 = 115.2 terms (k1 = 1.2, b = 0.75): an index cannot follow the
-- corpus's real average as it moves; the query turns an impact at avgdl0 into a bound at the real average
-- (docs/performance.md "PostgreSQL keyword search"). The expression must stay the one impact.go orders by.
-- chunk_id orders postings of equal impact, so that a term's list reads the same in every statement (the query
-- pages through it with OFFSET); INCLUDE makes the head of a term an index-only read. Written by the same statements as the postings, in
-- the same transaction.
CREATE INDEX postings_impact_idx ON {S}.postings
    (term, (tf::float8 / (tf::float8 + 0.3::float8 + dl::float8 * 0.0078125::float8)) DESC, chunk_id)
    INCLUDE (tf, dl);
