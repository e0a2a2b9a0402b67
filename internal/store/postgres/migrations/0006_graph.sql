-- Knowledge graphs and record tables of collections (docs/graph.md). A bundle replaces a collection's whole
-- graph, so every table is keyed by collection; ord keeps the bundle's order (answers list facts in it).
-- generation counts a collection's graph replacements: readers cache what they derive from a graph (the
-- entity vectors) under it.
CREATE TABLE {S}.graph_meta (
    collection_id text PRIMARY KEY REFERENCES {S}.collections (id) ON DELETE CASCADE,
    generation    bigint NOT NULL
);

CREATE TABLE {S}.graph_sections (
    collection_id text NOT NULL REFERENCES {S}.collections (id) ON DELETE CASCADE,
    id            text NOT NULL,
    ord           integer NOT NULL,
    name          text NOT NULL,
    parent_id     text NOT NULL DEFAULT '',
    path          text NOT NULL,
    level         text NOT NULL DEFAULT '',
    PRIMARY KEY (collection_id, id)
);

CREATE TABLE {S}.graph_entities (
    collection_id  text NOT NULL REFERENCES {S}.collections (id) ON DELETE CASCADE,
    id             text NOT NULL,
    ord            integer NOT NULL,
    name           text NOT NULL,
    type           text NOT NULL,
    properties     jsonb NOT NULL DEFAULT '{}',
    source_section text NOT NULL DEFAULT '',
    text_hash      text NOT NULL DEFAULT '',
    space          text NOT NULL DEFAULT '', -- the space of vector; '' when not embedded
    vector         real[],                   -- the entity's embedding in space
    PRIMARY KEY (collection_id, id)
);

CREATE TABLE {S}.graph_relations (
    collection_id text NOT NULL REFERENCES {S}.collections (id) ON DELETE CASCADE,
    ord           integer NOT NULL,
    source        text NOT NULL,
    target        text NOT NULL,
    type          text NOT NULL,
    properties    jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (collection_id, ord)
);
CREATE INDEX graph_relations_source_idx ON {S}.graph_relations (collection_id, source);
CREATE INDEX graph_relations_target_idx ON {S}.graph_relations (collection_id, target);

CREATE TABLE {S}.graph_chunks (
    collection_id text NOT NULL REFERENCES {S}.collections (id) ON DELETE CASCADE,
    id            text NOT NULL,
    ord           integer NOT NULL,
    section_id    text NOT NULL,
    content       text NOT NULL,
    PRIMARY KEY (collection_id, id)
);
CREATE INDEX graph_chunks_section_idx ON {S}.graph_chunks (collection_id, section_id);

-- Keyword terms of entities (name, aliases, description) with their weights.
CREATE TABLE {S}.graph_terms (
    collection_id text NOT NULL REFERENCES {S}.collections (id) ON DELETE CASCADE,
    term          text NOT NULL,
    entity_id     text NOT NULL,
    weight        double precision NOT NULL,
    PRIMARY KEY (collection_id, term, entity_id)
);

-- Rows of record tables (e.g. a unit-price table): key links a row to an entity name, norm_key is what
-- lookups compare, variant is e.g. a spec, vals the typed columns as a JSON object.
CREATE TABLE {S}.record_rows (
    collection_id text NOT NULL REFERENCES {S}.collections (id) ON DELETE CASCADE,
    table_name    text NOT NULL,
    ord           integer NOT NULL,
    key           text NOT NULL,
    norm_key      text NOT NULL,
    variant       text NOT NULL DEFAULT '',
    vals          jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (collection_id, table_name, ord)
);
CREATE INDEX record_rows_key_idx ON {S}.record_rows (collection_id, table_name, norm_key);
