-- Sources (docs/connectors.md): places outside ragd whose items a collection keeps in sync. settings is the
-- kind's JSON; credentials are sealed with the data key (credentials_key names it, '' in the clear). The
-- lease (lease_holder, lease_until) lets one sync per source run at a time across processes. source_items
-- maps each item at the source to its document, with the change marker and content hash of its last fetch.
CREATE TABLE {S}.sources (
    id               text PRIMARY KEY,
    collection_id    text NOT NULL REFERENCES {S}.collections (id) ON DELETE CASCADE,
    kind             text NOT NULL,
    settings         jsonb NOT NULL DEFAULT '{}',
    credentials      bytea,
    credentials_key  text NOT NULL DEFAULT '',
    schedule         text NOT NULL DEFAULT '',
    owner            text NOT NULL,
    cursor           text NOT NULL DEFAULT '',
    last_run_at      timestamptz,
    last_success_at  timestamptz,
    added            integer NOT NULL DEFAULT 0,
    updated          integer NOT NULL DEFAULT 0,
    deleted          integer NOT NULL DEFAULT 0,
    unchanged        integer NOT NULL DEFAULT 0,
    failed           integer NOT NULL DEFAULT 0,
    last_error       text NOT NULL DEFAULT '',
    failures         integer NOT NULL DEFAULT 0,
    paused           boolean NOT NULL DEFAULT false,
    pause_reason     text NOT NULL DEFAULT '',
    lease_holder     text NOT NULL DEFAULT '',
    lease_until      timestamptz NOT NULL DEFAULT 'epoch',
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);
CREATE INDEX sources_collection_idx ON {S}.sources (collection_id, created_at);
CREATE TABLE {S}.source_items (
    source_id     text NOT NULL REFERENCES {S}.sources (id) ON DELETE CASCADE,
    item_id       text NOT NULL,
    document_id   text NOT NULL DEFAULT '',
    version       text NOT NULL DEFAULT '',
    content_hash  text NOT NULL DEFAULT '',
    error         text NOT NULL DEFAULT '',
    attempts      integer NOT NULL DEFAULT 0,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (source_id, item_id)
);
