-- ragd embedded store, first schema. Timestamps are Unix microseconds (UTC); JSON columns hold objects
-- (metadata, settings) or arrays of strings (tags, readers).

CREATE TABLE collections (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    owner       TEXT NOT NULL DEFAULT '',
    settings    TEXT NOT NULL DEFAULT '{}',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- seq is the compact key chunks and the vector cache use; id is the public one.
CREATE TABLE documents (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    collection_id TEXT NOT NULL REFERENCES collections (id),
    external_id  TEXT, -- NULL when the caller gave none, so that several such documents can exist
    title        TEXT NOT NULL DEFAULT '',
    title_lower  TEXT NOT NULL DEFAULT '', -- Unicode lower case, for case-insensitive title search
    source       TEXT NOT NULL DEFAULT '',
    media_type   TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL DEFAULT '',
    pending_hash TEXT NOT NULL DEFAULT '',
    version      INTEGER NOT NULL DEFAULT 0,
    size         INTEGER NOT NULL DEFAULT 0,
    status       TEXT NOT NULL,
    stage        TEXT NOT NULL,
    progress     REAL NOT NULL DEFAULT 0,
    error_code   TEXT NOT NULL DEFAULT '',
    error        TEXT NOT NULL DEFAULT '',
    metadata     TEXT NOT NULL DEFAULT '{}',
    tags         TEXT NOT NULL DEFAULT '[]',
    owner        TEXT NOT NULL,
    readers      TEXT NOT NULL DEFAULT '[]',
    chunk_count  INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (collection_id, external_id)
);
CREATE INDEX documents_created ON documents (created_at);
CREATE INDEX documents_status ON documents (status, created_at);
CREATE INDEX documents_content_hash ON documents (content_hash);
CREATE INDEX documents_pending_hash ON documents (pending_hash);

CREATE TABLE document_versions (
    doc_seq      INTEGER NOT NULL REFERENCES documents (seq) ON DELETE CASCADE,
    version      INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    title        TEXT NOT NULL,
    source       TEXT NOT NULL,
    media_type   TEXT NOT NULL,
    size         INTEGER NOT NULL,
    chunk_count  INTEGER NOT NULL,
    metadata     TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (doc_seq, version)
);

-- Chunk IDs are never reused (AUTOINCREMENT): the vector cache and callers holding IDs rely on it.
CREATE TABLE chunks (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_seq      INTEGER NOT NULL REFERENCES documents (seq) ON DELETE CASCADE,
    version      INTEGER NOT NULL,
    idx          INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    text         TEXT NOT NULL,
    page_start   INTEGER NOT NULL,
    page_end     INTEGER NOT NULL,
    section      TEXT NOT NULL,
    start_offset INTEGER NOT NULL,
    end_offset   INTEGER NOT NULL
);
CREATE INDEX chunks_doc ON chunks (doc_seq, idx);

-- The keyword index holds the analyzer's terms (textproc.IndexTerms) joined by spaces, rowid = chunk id.
-- Terms are already normalised, so the tokenizer's only job is to split on spaces: every category but
-- separators and controls is a token character, which keeps 25-180-12, 0.7m3, 1000만원 and c++ whole.
CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    terms,
    content = '',
    contentless_delete = 1,
    tokenize = "unicode61 remove_diacritics 0 categories 'L* N* P* S* M* Co'"
);
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.id;
END;

CREATE TABLE spaces (
    id       INTEGER PRIMARY KEY,
    key      TEXT NOT NULL UNIQUE, -- rag.Space.ID()
    provider TEXT NOT NULL,
    model    TEXT NOT NULL,
    dim      INTEGER NOT NULL
);

-- One row per (chunk, space): a chunk may have vectors in several spaces while a re-embed runs. vec is
-- little-endian float32. seq grows with every insert, so a process can load only what is new.
CREATE TABLE chunk_vectors (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    space_id INTEGER NOT NULL REFERENCES spaces (id),
    chunk_id INTEGER NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    vec      BLOB NOT NULL,
    UNIQUE (chunk_id, space_id)
);
CREATE INDEX chunk_vectors_space ON chunk_vectors (space_id, seq);

-- Every removed vector leaves a tombstone so that in-memory vector caches (of this or another process)
-- can drop it without reloading; old tombstones are pruned and store_meta records how far.
CREATE TABLE vector_tombstones (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    space_id   INTEGER NOT NULL,
    chunk_id   INTEGER NOT NULL,
    vec_seq    INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TRIGGER chunk_vectors_delete AFTER DELETE ON chunk_vectors BEGIN
    INSERT INTO vector_tombstones (space_id, chunk_id, vec_seq, created_at)
    VALUES (old.space_id, old.chunk_id, old.seq, unixepoch());
END;

CREATE TABLE store_meta (
    key   TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO store_meta (key, value) VALUES ('tombstones_pruned_through', 0);

CREATE TABLE blobs (
    hash       TEXT PRIMARY KEY,
    data       BLOB NOT NULL,
    size       INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE embedding_cache (
    space_id   INTEGER NOT NULL REFERENCES spaces (id),
    text_hash  TEXT NOT NULL,
    vec        BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (space_id, text_hash)
);
