-- hits_version moves whenever a row that Store.Hits reads may have changed in place: a document's facts
-- (title, source, metadata, collection, permissions, version, deletion) or a chunk's row (a re-sealed
-- text). Together with chunks_deleted (a chunk removed) it says whether the passages the store keeps in
-- memory (hitcache.go) are still what the database holds; a new chunk has a new ID (AUTOINCREMENT) and
-- changes nothing cached. The counter only grows.
INSERT INTO store_meta (key, value) VALUES ('hits_version', 0);

CREATE TRIGGER hits_version_document_update AFTER UPDATE ON documents BEGIN
    UPDATE store_meta SET value = value + 1 WHERE key = 'hits_version';
END;

CREATE TRIGGER hits_version_document_delete AFTER DELETE ON documents BEGIN
    UPDATE store_meta SET value = value + 1 WHERE key = 'hits_version';
END;

CREATE TRIGGER hits_version_chunk_update AFTER UPDATE ON chunks BEGIN
    UPDATE store_meta SET value = value + 1 WHERE key = 'hits_version';
END;
