-- Sources (docs/connectors.md): places outside ragd whose items a collection keeps in sync. settings is the
-- kind's JSON; credentials are sealed with the data key (credentials_key names it, '' in the clear). The
-- lease (lease_holder, lease_until) lets one sync per source run at a time across processes. source_items
-- maps each item at the source to its document, with the change marker and content hash of its last fetch.
CREATE TABLE sources (
    id               TEXT PRIMARY KEY,
    collection_id    TEXT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    kind             TEXT NOT NULL,
    settings         TEXT NOT NULL DEFAULT '{}',
    credentials      BLOB,
    credentials_key  TEXT NOT NULL DEFAULT '',
    schedule         TEXT NOT NULL DEFAULT '',
    owner            TEXT NOT NULL,
    cursor           TEXT NOT NULL DEFAULT '',
    last_run_at      INTEGER,
    last_success_at  INTEGER,
    added            INTEGER NOT NULL DEFAULT 0,
    updated          INTEGER NOT NULL DEFAULT 0,
    deleted          INTEGER NOT NULL DEFAULT 0,
    unchanged        INTEGER NOT NULL DEFAULT 0,
    failed           INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT NOT NULL DEFAULT '',
    failures         INTEGER NOT NULL DEFAULT 0,
    paused           INTEGER NOT NULL DEFAULT 0,
    pause_reason     TEXT NOT NULL DEFAULT '',
    lease_holder     TEXT NOT NULL DEFAULT '',
    lease_until      INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX sources_collection ON sources (collection_id, created_at);
CREATE TABLE source_items (
    source_id     TEXT NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    item_id       TEXT NOT NULL,
    document_id   TEXT NOT NULL DEFAULT '',
    version       TEXT NOT NULL DEFAULT '',
    content_hash  TEXT NOT NULL DEFAULT '',
    error         TEXT NOT NULL DEFAULT '',
    attempts      INTEGER NOT NULL DEFAULT 0,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (source_id, item_id)
);
