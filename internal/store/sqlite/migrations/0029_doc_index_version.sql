-- doc_index_version moves with every change of the document-level keyword index (doc_postings,
-- doc_lengths), in whatever process it is made, cascaded deletes included. A store's in-memory copy of
-- that index (docmem.go) answers a query only while the counter it was read at is the database's. The
-- counter only grows.
INSERT INTO store_meta (key, value) VALUES ('doc_index_version', 0);

CREATE TRIGGER doc_index_version_postings_insert AFTER INSERT ON doc_postings BEGIN
    UPDATE store_meta SET value = value + 1 WHERE key = 'doc_index_version';
END;

CREATE TRIGGER doc_index_version_postings_delete AFTER DELETE ON doc_postings BEGIN
    UPDATE store_meta SET value = value + 1 WHERE key = 'doc_index_version';
END;

CREATE TRIGGER doc_index_version_postings_update AFTER UPDATE ON doc_postings BEGIN
    UPDATE store_meta SET value = value + 1 WHERE key = 'doc_index_version';
END;

CREATE TRIGGER doc_index_version_lengths_insert AFTER INSERT ON doc_lengths BEGIN
    UPDATE store_meta SET value = value + 1 WHERE key = 'doc_index_version';
END;

CREATE TRIGGER doc_index_version_lengths_delete AFTER DELETE ON doc_lengths BEGIN
    UPDATE store_meta SET value = value + 1 WHERE key = 'doc_index_version';
END;

CREATE TRIGGER doc_index_version_lengths_update AFTER UPDATE ON doc_lengths BEGIN
    UPDATE store_meta SET value = value + 1 WHERE key = 'doc_index_version';
END;
