-- Webhooks (docs/integrations.md "Webhooks"): URLs a collection's events are POSTed to. events is a JSON
-- array of event names; secret is the HMAC key, sealed with the data key (secret_key names it, '' in the
-- clear). webhook_deliveries is the delivery log: one row per attempt, the newest kept per webhook.
CREATE TABLE webhooks (
    id             TEXT PRIMARY KEY,
    collection_id  TEXT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    url            TEXT NOT NULL,
    events         TEXT NOT NULL DEFAULT '[]',
    description    TEXT NOT NULL DEFAULT '',
    secret         BLOB NOT NULL,
    secret_key     TEXT NOT NULL DEFAULT '',
    owner          TEXT NOT NULL,
    created_at     INTEGER NOT NULL
);
CREATE INDEX webhooks_collection ON webhooks (collection_id, created_at);
CREATE TABLE webhook_deliveries (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id   TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id     TEXT NOT NULL,
    event        TEXT NOT NULL,
    attempt      INTEGER NOT NULL,
    status_code  INTEGER NOT NULL DEFAULT 0,
    error        TEXT NOT NULL DEFAULT '',
    duration_ms  INTEGER NOT NULL DEFAULT 0,
    outcome      TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, id);
