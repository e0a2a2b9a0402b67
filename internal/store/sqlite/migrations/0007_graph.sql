-- Knowledge graphs and record tables of collections (docs/graph.md). A bundle replaces a collection's whole
-- graph, so every table is keyed by collection; ord keeps the bundle's order (answers list facts in it).
-- generation counts a collection's graph replacements: readers cache what they derive from a graph (the
-- entity vectors) under it.
CREATE TABLE graph_meta (
    collection_id TEXT PRIMARY KEY REFERENCES collections (id) ON DELETE CASCADE,
    generation    INTEGER NOT NULL
);

CREATE TABLE graph_sections (
    collection_id TEXT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    id            TEXT NOT NULL,
    ord           INTEGER NOT NULL,
    name          TEXT NOT NULL,
    parent_id     TEXT NOT NULL DEFAULT '',
    path          TEXT NOT NULL,
    level         TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (collection_id, id)
);

CREATE TABLE graph_entities (
    collection_id  TEXT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    id             TEXT NOT NULL,
    ord            INTEGER NOT NULL,
    name           TEXT NOT NULL,
    type           TEXT NOT NULL,
    properties     TEXT NOT NULL DEFAULT '{}',
    source_section TEXT NOT NULL DEFAULT '',
    text_hash      TEXT NOT NULL DEFAULT '',
    space          TEXT NOT NULL DEFAULT '', -- the space of vector; '' when not embedded
    vector         BLOB,                     -- little-endian float32
    PRIMARY KEY (collection_id, id)
);

CREATE TABLE graph_relations (
    collection_id TEXT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    ord           INTEGER NOT NULL,
    source        TEXT NOT NULL,
    target        TEXT NOT NULL,
    type          TEXT NOT NULL,
    properties    TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (collection_id, ord)
);
CREATE INDEX graph_relations_source ON graph_relations (collection_id, source);
CREATE INDEX graph_relations_target ON graph_relations (collection_id, target);

CREATE TABLE graph_chunks (
    collection_id TEXT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    id            TEXT NOT NULL,
    ord           INTEGER NOT NULL,
    section_id    TEXT NOT NULL,
    content       TEXT NOT NULL,
    PRIMARY KEY (collection_id, id)
);
CREATE INDEX graph_chunks_section ON graph_chunks (collection_id, section_id);

-- Keyword terms of entities (name, aliases, description) with their weights.
CREATE TABLE graph_terms (
    collection_id TEXT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    term          TEXT NOT NULL,
    entity_id     TEXT NOT NULL,
    weight        REAL NOT NULL,
    PRIMARY KEY (collection_id, term, entity_id)
);

-- Rows of record tables (e.g. a unit-price table): key links a row to an entity name, norm_key is what
-- lookups compare, variant is e.g. a spec, vals the typed columns as a JSON object.
CREATE TABLE record_rows (
    collection_id TEXT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    table_name    TEXT NOT NULL,
    ord           INTEGER NOT NULL,
    key           TEXT NOT NULL,
    norm_key      TEXT NOT NULL,
    variant       TEXT NOT NULL DEFAULT '',
    vals          TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (collection_id, table_name, ord)
);
CREATE INDEX record_rows_key ON record_rows (collection_id, table_name, norm_key);
