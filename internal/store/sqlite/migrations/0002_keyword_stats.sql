-- Counters that let keyword search read the corpus size in O(1) and cache per-term document frequencies:
-- chunk_rows is the number of chunks (= rows of chunks_fts), chunks_deleted only grows and, together with
-- the chunks AUTOINCREMENT sequence, says whether the keyword index changed.
INSERT INTO store_meta (key, value) VALUES ('chunk_rows', (SELECT count(*) FROM chunks)), ('chunks_deleted', 0);

CREATE TRIGGER chunks_count_insert AFTER INSERT ON chunks BEGIN
    UPDATE store_meta SET value = value + 1 WHERE key = 'chunk_rows';
END;

CREATE TRIGGER chunks_count_delete AFTER DELETE ON chunks BEGIN
    UPDATE store_meta SET value = value - 1 WHERE key = 'chunk_rows';
    UPDATE store_meta SET value = value + 1 WHERE key = 'chunks_deleted';
END;
